"""Exception types for bad user input.

Scripts catch `BertTfError` and print its one-line message (`error: ...`)
with exit status 2 and no traceback; library users catch them as usual.
"""


class BertTfError(Exception):
    """Base class: a user-facing error whose message is one line."""


class ConfigError(BertTfError, ValueError):
    """A `bert_config.json` or a BertConfig field is invalid."""


class CheckpointError(BertTfError, ValueError):
    """A checkpoint does not match the model (missing / unexpected / shape)."""


class InputError(BertTfError, ValueError):
    """A flag, an input file or its contents are not what was expected."""
