"""The documentation: each script page's flag table is the one its options
make, the READMEs stay landing pages, and their links reach a page (and a
heading on it); every name `import bert_tf` gives has an API reference
entry, the install lists name every extra, and the Python blocks import
what they use. `make docs` checks the site's own links (mkdocs --strict)."""

import ast
import glob
import os
import re
import subprocess
import sys
import unicodedata

import flag_tables
from readme_blocks import DOCS, DOCUMENTS, READMES, REPO, blocks, script_flags


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


def defining_module(name):
    """The module of bert_tf/ whose top level defines the class or function `name`."""
    found = []
    for path in sorted(glob.glob(os.path.join(REPO, "bert_tf", "**", "*.py"), recursive=True)):
        tree = ast.parse(read(path))
        if any(
            isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name
            for node in tree.body
        ):
            found.append(os.path.relpath(path, REPO)[: -len(".py")].replace(os.sep, "."))
    assert len(found) == 1, (name, found)
    return found[0].removesuffix(".__init__")


def api_entries():
    """What the API pages render: the `::: identifier` lines of docs/api/."""
    pages = [page for page in DOCS if page.startswith(os.path.join("docs", "api", ""))]
    return {entry for page in pages for entry in re.findall(r"^::: (\S+)$", read(page), re.M)}


def test_every_name_of_bert_tf_is_in_the_api_reference():
    import bert_tf

    entries = api_entries()
    missing = []
    for name in bert_tf.__all__:
        module = defining_module(name)
        if module not in entries and f"{module}.{name}" not in entries:
            missing.append(f"{name} ({module})")
    assert not missing, f"no ::: entry in docs/api/ renders {missing}"


def test_api_reference_heads_classes_with_their_constructor_signature():
    """mkdocstrings shows a class without its arguments unless `__init__`'s
    signature is merged into it; `__init__` itself is filtered out (`!^_`)."""
    options = read("mkdocs.yml")
    for option in ("merge_init_into_class: true", "show_signature: true"):
        assert re.search(rf"^ +{option}$", options, re.M), option


def setup_extras():
    """The names of setup.py's extras_require."""
    for node in ast.walk(ast.parse(read("setup.py"))):
        if isinstance(node, ast.keyword) and node.arg == "extras_require":
            return [key.value for key in node.value.keys]
    raise AssertionError("setup.py has no extras_require")


def test_install_lists_name_every_extra():
    extras = setup_extras()
    assert "plot" in extras
    for page in ("README.md", "README.zh.md", "docs/getting_started.md"):
        text = read(page)
        missing = [extra for extra in extras if f"[{extra}]" not in text]
        assert not missing, f"{page}'s install list lacks {missing}"


# Names a Python block may leave to the reader: their own data.
READERS_DATA = {"train_texts", "train_labels", "unlabelled_texts"}


def test_python_blocks_define_or_import_every_name_they_use():
    """Each page's Python blocks, read in order as one program, use no name
    they do not define or import (ruff's F821): a snippet that forgets
    `import numpy as np` fails here, run or not."""
    undefined = []
    for document in DOCUMENTS:
        code = "\n".join(b.code for b in blocks(document) if b.language in ("python", "py"))
        if not code:
            continue
        ruff = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--isolated", "--select", "F821"]
            + ["--output-format", "concise", "--stdin-filename", f"{document}.py", "-"],
            input=code,
            capture_output=True,
            text=True,
        )
        found = re.findall(r"^(\S+?):\d+:\d+: F821 Undefined name `(\w+)`", ruff.stdout, re.M)
        undefined += [f"{where}: {name}" for where, name in found if name not in READERS_DATA]
        assert ruff.returncode in (0, 1) and "invalid-syntax" not in ruff.stdout, ruff.stdout
    assert not undefined, undefined
