"""The fenced code blocks of the READMEs and of the documentation pages
(docs/), with the marker line that says how each is checked, the commands
of the shell blocks, and the flags each script defines."""

import dataclasses
import glob
import os
import re
import shlex
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ElementTree

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
READMES = ("README.md", "README.zh.md")
# Every page of the site, relative to the repository, in a stable order.
DOCS = tuple(
    sorted(
        os.path.relpath(path, REPO)
        for path in glob.glob(os.path.join(REPO, "docs", "**", "*.md"), recursive=True)
    )
)
# examples/README.md: the examples folder's page (not on the site).
DOCUMENTS = READMES + DOCS + ("examples/README.md",)
NOT_RUN = "<!-- not run here: "
RUN_BY = "<!-- run by "


@dataclasses.dataclass
class Block:
    readme: str
    line: int  # 1-based line of the opening fence
    language: str
    section: str  # the nearest "## " heading above
    marker: str  # the line before the fence
    code: str

    @property
    def where(self):
        return f"{self.readme}:{self.line}"


def blocks(readme):
    """Every fenced block of `readme` (a path relative to the repository),
    indented ones (in a list item) too."""
    with open(os.path.join(REPO, readme), encoding="utf-8") as f:
        lines = f.read().splitlines()
    found, section, index = [], "", 0
    while index < len(lines):
        line = lines[index]
        if line.startswith("## "):
            section = line[3:].strip()
        fence = re.match(r"( *)```(.*)$", line)
        if fence:
            indent = fence.group(1)
            end = lines.index(indent + "```", index + 1)
            marker = lines[index - 1].strip() if index else ""
            code = textwrap.dedent("\n".join(lines[index + 1 : end]) + "\n")
            found.append(Block(readme, index + 1, fence.group(2).strip(), section, marker, code))
            index = end
        index += 1
    return found


def block_in(readme, section, containing):
    """The one block of `readme` under `section` whose code contains `containing`."""
    matches = [b for b in blocks(readme) if b.section == section and containing in b.code]
    assert len(matches) == 1, f"{readme} [{section}]: {len(matches)} blocks contain {containing!r}"
    return matches[0]


def commands(code):
    """The commands of a shell block as argument lists: continuation lines
    joined, comments and `[optional]` parts dropped, environment assignments
    before a command removed; lines that are not whole commands (a quoted
    argument over several lines) are left out."""
    joined = re.sub(r"\\\n\s*", " ", code)
    result = []
    for line in joined.splitlines():
        line = re.sub(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]", "", line)
        try:
            argv = shlex.split(line, comments=True)
        except ValueError:
            continue
        while argv and re.fullmatch(r"[A-Z_]+=.*", argv[0]):
            argv = argv[1:]
        if argv:
            result.append(argv)
    return result


def optional_flags(code):
    """The flags inside `[...]` of a block: documented, so they must exist."""
    joined = re.sub(r"\\\n\s*", " ", code)
    optional = " ".join(re.findall(r"\[([^\n]*?)\](?=\s|$)", joined))
    return re.findall(r"--(\w+)", optional)


def script_flags(scripts, own_only=False):
    """{script: its flag names} from absl's --helpxml, one process each, in
    parallel; `own_only`: without absl's own flags (--helpfull, --v, ...)."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    running = {
        script: subprocess.Popen(
            [sys.executable, script, "--helpxml"],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for script in scripts
    }
    found = {}
    for script, process in running.items():
        stdout, stderr = process.communicate(timeout=120)
        assert stdout.startswith("<?xml"), f"{script} --helpxml: {stderr[-2000:]}"
        found[script] = {
            flag.findtext("name")
            for flag in ElementTree.fromstring(stdout).iter("flag")
            if not (own_only and flag.findtext("file").startswith("absl."))
        }
    return found
