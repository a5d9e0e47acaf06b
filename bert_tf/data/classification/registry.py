"""Every classification reader by name: `get_processor(task_name)` for
run_classifier.py's `--task_name` (GLUE and XNLI: glue.py; CLUE: clue.py;
the user's own files: generic.py)."""

from bert_tf.data.classification import clue, generic, glue
from bert_tf.errors import InputError

_PROCESSORS = {**glue.PROCESSORS, **clue.PROCESSORS, "generic": generic.GenericProcessor}
_ALIASES = {**glue.ALIASES, **clue.ALIASES}
# Options get_processor passes to the processors that take them.
_OPTIONS = {
    "xnli": {"language"},
    "generic": {
        "text_a_column",
        "text_b_column",
        "label_column",
        "id_column",
        "labels",
        "labels_file",
        "delimiter",
        "has_header",
        "train_file",
        "dev_file",
        "test_file",
        "is_regression",
        "test_has_labels",
        "metric",
        "multi_label",
        "label_delimiter",
    },
}
_ALL_OPTIONS = set().union(*_OPTIONS.values()) | {"skip_malformed"}
_OPTION_ALIASES = {"xnli_language": "language"}


def task_names():
    """The canonical task names `get_processor` accepts."""
    return sorted(_PROCESSORS)


def get_processor(task_name, **options):
    """The processor of `task_name` (case-insensitive; aliases such as "sst2",
    "stsb", "mnli_mismatched" / "mnli-mm", "wsc").

    `options` may hold the options of every task (e.g. all of run_classifier's
    flags): those of value None and those the task does not take are ignored.
    They are `language` (or `xnli_language`) for XNLI, `skip_malformed` for
    every task, and GenericProcessor's arguments for "generic".
    """
    key = str(task_name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in _PROCESSORS:
        raise InputError(
            f"unknown task_name {task_name!r}: use one of {', '.join(task_names())} "
            "(case-insensitive)"
        )
    kwargs = {}
    for name, value in options.items():
        name = _OPTION_ALIASES.get(name, name)
        if name not in _ALL_OPTIONS:
            raise TypeError(f"get_processor() got an unknown option {name!r}")
        if value is not None and (name == "skip_malformed" or name in _OPTIONS.get(key, ())):
            kwargs[name] = value
    return _PROCESSORS[key](**kwargs)
