"""Options that are also command-line flags: a dataclass field declares the
flag's name, type, default and help text once (`bert_tf.cli` defines the
flags). Library code reads the typed fields and never sees the flags.

A field typed `tuple` is a comma-separated list on the command line; `flag=`
names the flag when the field's name says more (the original's `--input_file`
is `input_patterns`, a tuple of globs).
"""

import dataclasses


def option(default=dataclasses.MISSING, help="", flag=None):  # noqa: A002  (absl's word for it)
    """A dataclass field that is also a command-line flag with this help text;
    without a default the flag is required."""
    metadata = {"help": help}
    if flag:
        metadata["flag"] = flag
    return dataclasses.field(default=default, metadata=metadata)


def flag_fields(options_class):
    """The fields of the dataclass `options_class` that are flags, as
    `(flag name, field)` pairs."""
    return [
        (field.metadata.get("flag", field.name), field)
        for field in dataclasses.fields(options_class)
        if "help" in field.metadata
    ]
