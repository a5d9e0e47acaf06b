"""Shared plumbing for the flag-driven scripts."""

import dataclasses
import sys

from absl import app

from bert_tf.errors import BertTfError


def run_main(main):
    """Runs an absl `main(argv)`; a BertTfError becomes one line on stderr and exit 2."""

    def wrapped(argv):
        try:
            return main(argv)
        except BertTfError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)

    app.run(wrapped)


def options_from_flags(options_class, flag_values, **explicit):
    """Builds the dataclass `options_class` from the flags named like its
    fields; fields given in `explicit` take those values instead."""
    names = [f.name for f in dataclasses.fields(options_class) if f.name not in explicit]
    return options_class(**{name: getattr(flag_values, name) for name in names}, **explicit)
