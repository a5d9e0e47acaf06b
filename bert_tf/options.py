"""Options that are also command-line flags: a dataclass field declares the
flag's name, type, default and help text once (`bert_tf.cli` defines the
flags). Library code reads the typed fields and never sees the flags."""

import dataclasses


def option(default=dataclasses.MISSING, help=""):  # noqa: A002  (absl's word for it)
    """A dataclass field that is also a command-line flag with this help text;
    without a default the flag is required."""
    return dataclasses.field(default=default, metadata={"help": help})
