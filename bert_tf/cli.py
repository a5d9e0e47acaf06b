"""Shared plumbing for the flag-driven scripts."""

import dataclasses
import sys
import types

from absl import app, flags

from bert_tf.errors import BertTfError

_DEFINERS = {bool: flags.DEFINE_bool, int: flags.DEFINE_integer, float: flags.DEFINE_float,
             str: flags.DEFINE_string}


def run_main(main):
    """Runs an absl `main(argv)`; a BertTfError becomes one line on stderr and exit 2."""

    def wrapped(argv):
        try:
            return main(argv)
        except BertTfError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)

    app.run(wrapped)


def _flag_type(annotation):
    """`int`, `str | None`, ... -> the Python type of the flag's value."""
    if isinstance(annotation, types.UnionType):
        kinds = [a for a in annotation.__args__ if a is not type(None)]
        if len(kinds) == 1:
            return kinds[0]
    return annotation


def calling_script(depth=2):
    """The module name absl files a flag under when the caller of the caller
    defines it: the script's path for `__main__`, so `--help` lists it."""
    name = sys._getframe(depth).f_globals.get("__name__")
    return sys.argv[0] if name == "__main__" else name


def define_flags(options_class, flag_values=flags.FLAGS):
    """Defines one flag per field of the dataclass `options_class` that has
    help text (`tasks.common.option`), with the field's default; fields
    without a default become required flags. `--help` lists them as the
    calling script's own."""
    module_name = calling_script()
    required = []
    for field in dataclasses.fields(options_class):
        if "help" not in field.metadata:
            continue
        definer = _DEFINERS[_flag_type(field.type)]
        has_default = field.default is not dataclasses.MISSING
        definer(field.name, field.default if has_default else None, field.metadata["help"],
                flag_values=flag_values, module_name=module_name)
        if not has_default:
            required.append(field.name)
    flags.mark_flags_as_required(required, flag_values=flag_values)


def options_from_flags(options_class, flag_values, **explicit):
    """Builds the dataclass `options_class` from the flags `define_flags`
    defined for it; fields given in `explicit` take those values instead,
    the others keep their defaults."""
    names = [f.name for f in dataclasses.fields(options_class)
             if "help" in f.metadata and f.name not in explicit]
    return options_class(**{name: getattr(flag_values, name) for name in names}, **explicit)
