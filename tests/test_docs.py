"""The documentation: each script page's flag table is the one its options
make, the READMEs stay landing pages, and their links reach a page (and a
heading on it). `make docs` checks the site's own links (mkdocs --strict)."""

import os
import re
import unicodedata

import flag_tables
from readme_blocks import DOCS, READMES, REPO, script_flags


def read(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def test_every_script_page_has_the_flag_table_its_options_make():
    stale = [
        flag_tables.page_of(script)
        for script in flag_tables.SCRIPT_OPTIONS
        if flag_tables.page_table(read(flag_tables.page_of(script))) != flag_tables.table(script)
    ]
    assert not stale, f"out of date (python tests/flag_tables.py rewrites them): {stale}"


def test_flag_tables_hold_every_flag_of_their_script():
    """The options named in flag_tables.SCRIPT_OPTIONS are all that each
    script defines: a flag added outside them would miss its table."""
    defined = script_flags(flag_tables.SCRIPT_OPTIONS, own_only=True)
    for script, names in defined.items():
        tabled = {name for name, _, _, _ in flag_tables.flags_of(script)}
        tabled |= {alias for _, alias, _, _ in flag_tables.flags_of(script) if alias}
        assert tabled == names, (script, tabled ^ names)


def test_flag_table_cells_escape_markdown():
    row = flag_tables._markdown("a | b\n  with *stars*, <name> and [x]")
    assert row == r"a \| b with \*stars\*, \<name\> and \[x\]"


def test_every_script_page_is_in_the_site():
    nav = read("mkdocs.yml")
    for script in flag_tables.SCRIPT_OPTIONS:
        page = flag_tables.page_of(script)
        assert page in DOCS, page
        assert os.path.relpath(page, "docs") in nav, page


def test_readmes_are_landing_pages_that_start_with_make_test_and_demo():
    for readme in READMES:
        lines = read(readme).splitlines()
        assert len(lines) <= 250, f"{readme}: {len(lines)} lines"
        start = "\n".join(lines[:8])
        assert "make demo" in start and "make test" in start, readme


def slug(heading):
    """The anchor of a heading, as Python-Markdown's toc (and GitHub, for
    ASCII headings) make it."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def github_slug(heading):
    """The anchor GitHub gives a heading (it keeps repeated hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def anchors(path):
    """The anchors of `path`'s headings that the site and GitHub agree on."""
    text = re.sub(r"^```.*?^```", "", read(path), flags=re.S | re.M)
    headings = re.findall(r"^#+ (.+)$", text, re.M)
    return {slug(h) for h in headings if slug(h) == github_slug(h)}


def test_readme_links_reach_a_page_and_its_heading():
    broken = []
    for readme in READMES:
        for target in re.findall(r"\]\(([^)\s]+)\)", read(readme)):
            path, _, anchor = target.partition("#")
            if re.match(r"\w+://", path):
                continue
            if not os.path.exists(os.path.join(REPO, path)):
                broken.append(f"{readme}: {target}")
            elif anchor and anchor not in anchors(path):
                broken.append(f"{readme}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_slug_is_the_anchor_markdown_makes():
    assert slug("The demo: `make demo`") == "the-demo-make-demo"
    assert slug("Models: `--init_checkpoint`") == "models-init_checkpoint"
    assert github_slug("Models: `--init_checkpoint`") == "models---init_checkpoint"
    assert slug("Smaller and faster: LiteRT, ONNX, int8") == "smaller-and-faster-litert-onnx-int8"
