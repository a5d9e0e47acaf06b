"""The flag table of each script's page (docs/scripts/<script>.md), made from
the options dataclasses the script passes to `cli.define_flags`.

`python tests/flag_tables.py` rewrites the tables; tests/test_docs.py fails
when a page's table differs from what this makes, or when a script defines
a flag that its options here do not hold."""

import importlib
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:  # run as `python tests/flag_tables.py`
    sys.path.insert(0, REPO)

from bert_tf.options import REQUIRED, flag_fields  # noqa: E402
from bert_tf.scripts import SCRIPTS  # noqa: E402

# The options classes each script defines its flags from, in its order
# ("module:Class"): the scripts' table, bert_tf/scripts/__init__.py.
SCRIPT_OPTIONS = {f"{name}.py": script.options for name, script in SCRIPTS.items()}

BEGIN = (
    "<!-- flags: made by tests/flag_tables.py from the options dataclasses; edit the help there -->"
)
END = "<!-- end of flags -->"


def page_of(script):
    """The docs page of `script`, relative to the repository."""
    return os.path.join("docs", "scripts", script.replace(".py", ".md"))


def options_classes(script):
    found = []
    for spec in SCRIPT_OPTIONS[script]:
        module, _, name = spec.partition(":")
        found.append(getattr(importlib.import_module(module), name))
    return found


def flags_of(script):
    """[(name, alias or None, default, help)] of the flags `script` defines."""
    return [
        (flag.name, flag.field.metadata.get("alias"), flag.default, flag.help)
        for options_class in options_classes(script)
        for flag in flag_fields(options_class)
    ]


def _default(value):
    if value is REQUIRED:
        return "required"
    if value is None or value == ():
        return ""
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, tuple):
        value = ",".join(map(str, value))
    return f"`{value}`"


def _markdown(text):
    """Help text as one table cell: one line, Markdown's special characters
    (and the table's `|`) escaped."""
    text = " ".join(text.split())
    return re.sub(r"([\\|*_<>\[\]])", r"\\\1", text)


def table(script):
    """The Markdown table of `script`'s flags, between the BEGIN and END markers."""
    rows = [BEGIN, "", "| flag | default | meaning |", "|---|---|---|"]
    for name, alias, default, help_text in flags_of(script):
        also = f" (or `--{alias}`)" if alias else ""
        rows.append(f"| `--{name}`{also} | {_default(default)} | {_markdown(help_text)} |")
    return "\n".join([*rows, "", END])


def with_table(text, script):
    """The page `text` with its flag table replaced by the current one."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[:start] + table(script) + text[end:]


def page_table(text):
    """The flag table part of the page `text`."""
    return text[text.index(BEGIN) : text.index(END) + len(END)]


def main():
    for script in SCRIPT_OPTIONS:
        path = os.path.join(REPO, page_of(script))
        with open(path, encoding="utf-8") as f:
            text = f.read()
        updated = with_table(text, script)
        if updated != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(updated)
            print(f"rewrote {page_of(script)}")


if __name__ == "__main__":
    main()
