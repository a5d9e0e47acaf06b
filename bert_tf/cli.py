"""Shared plumbing for the flag-driven scripts."""

import errno
import fnmatch
import functools
import os
import signal
import sys
import types

from absl import app, flags

from bert_tf.compat import calling_module_name
from bert_tf.errors import BertTfError
from bert_tf.options import REQUIRED, build, flag_fields

_DEFINERS = {
    bool: flags.DEFINE_bool,
    int: flags.DEFINE_integer,
    float: flags.DEFINE_float,
    str: flags.DEFINE_string,
    tuple: flags.DEFINE_list,
}


class Interrupted(KeyboardInterrupt):
    """Raised in the main thread when the process gets SIGTERM or SIGINT.

    A KeyboardInterrupt, so `finally` blocks and worker pools clean up as for
    Ctrl-C; training catches it to save a checkpoint before it stops."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_interrupted(signum, frame):
    del frame
    raise Interrupted(signum)


def handle_stop_signals():
    """SIGTERM (what schedulers and preemptible VMs send) and SIGINT both
    raise `Interrupted` in the main thread from here on."""
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, _raise_interrupted)


def _parse_flags(argv, known_only=False):
    """absl's parser, with its message as one `error:` line and exit 2; with
    `known_only`, the arguments that are not this script's flags are left
    in the argv it returns (for Beam's pipeline options). `--help` and
    `--helpfull` exit 0 after the usage."""
    try:
        return flags.FLAGS(argv, known_only=known_only)
    except SystemExit as e:
        # Only absl's help flags exit while parsing: they print the usage and
        # exit 1, which a shell or a CI step reads as a failure.
        sys.exit(0 if e.code == 1 else e.code)
    except flags.Error as e:
        message = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
        print(f"error: {message} (see {_command(argv[0])} --help)", file=sys.stderr)
        sys.exit(2)


def _command(program):
    """How the user started this process: `python -m bert_tf.scripts.run_classifier`
    for a module run with -m (whose `program`, sys.argv[0], is its file), else
    `program`."""
    spec = getattr(sys.modules["__main__"], "__spec__", None)
    return f"python -m {spec.name}" if spec is not None else program


def run_main(main, known_only=False):
    """Runs an absl `main(argv)` as a script: a bad flag, a BertTfError or an
    OSError on a path a flag names (`file_error_message`) becomes one line
    on stderr and exit 2; SIGTERM / SIGINT one line and
    exit 128 + the signal's number, after `finally` blocks cleaned up. With
    `known_only`, flags the script does not define reach `main` in `argv`."""

    def wrapped(argv):
        handle_stop_signals()
        try:
            return main(argv)
        except BertTfError as e:
            print(f"error: {e}", file=sys.stderr)
            sys.exit(2)
        except OSError as e:
            message = file_error_message(e, flags.FLAGS.flag_values_dict())
            if message is None:
                raise
            print(f"error: {message}", file=sys.stderr)
            sys.exit(2)
        except KeyboardInterrupt as e:
            signum = getattr(e, "signum", signal.SIGINT)
            print(
                f"interrupted: {signal.Signals(signum).name} stopped {argv[0]}; "
                "finished outputs and checkpoints are kept",
                file=sys.stderr,
            )
            sys.exit(128 + signum)

    app.run(wrapped, flags_parser=functools.partial(_parse_flags, known_only=known_only))


def run_script(main, doc, *options_classes, known_only=False):
    """Runs a bert_tf script, whichever way it was started (`python
    run_classifier.py` in a checkout, `python -m bert_tf.scripts.run_classifier`,
    the `bert-tf-run-classifier` command): defines the flags of
    `options_classes` and runs `main` under `run_main`. `--help` shows `doc`
    and lists the flags, which absl takes from the `__main__` module's
    docstring and the flags filed under `sys.argv[0]`; a console script's
    `__main__` is a stub without either."""
    sys.modules["__main__"].__doc__ = doc
    for options_class in options_classes:
        define_flags(options_class, module_name=sys.argv[0])
    run_main(main, known_only=known_only)


def file_error_message(error, flag_values):
    """An OSError on a file (a folder given for a file, permission denied, ...)
    as one line naming the flag whose path holds the file, from
    `flag_values` ({name: value}); None when no flag's path holds it."""
    if error.filename is None:
        return None
    flag = _flag_holding(str(error.filename), flag_values)
    if flag is None:
        return None
    name, given = flag
    if error.errno == errno.EISDIR:
        problem = f"{error.filename} is a folder; expected a file"
    else:
        problem = f"{error.filename}: {error.strerror or error}"
    if os.path.abspath(given) == os.path.abspath(error.filename):
        return f"--{name}={problem}"
    return f"--{name}={given}: {problem}"


def _flag_holding(filename, flag_values):
    """`(flag name, path)` of the flag whose path (a comma-separated part of
    its value, a glob) is `filename`, a folder above it or a pattern it
    matches; the longest such path wins. None if there is none."""
    target = os.path.abspath(filename)
    best, best_length = None, -1
    for name, value in flag_values.items():
        values = value if isinstance(value, list) else [value]
        for given in (p for v in values if isinstance(v, str) for p in v.split(",")):
            if not given.strip():
                continue
            path = os.path.abspath(given)
            holds = (
                target == path
                or target.startswith(path.rstrip(os.sep) + os.sep)
                or fnmatch.fnmatch(target, path)
            )
            if holds and len(path) > best_length:
                best, best_length = (name, given), len(path)
    return best


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
    name = calling_module_name(depth)
    return sys.argv[0] if name == "__main__" else name


def define_flags(options_class, flag_values=flags.FLAGS, module_name=None):
    """Defines the flags of the dataclass `options_class` (`options.flag_fields`:
    its own and its groups'); flags without a default are required. `--help`
    lists them as the calling script's own (or `module_name`'s)."""
    module_name = module_name or calling_script()
    required = []
    for flag in flag_fields(options_class):
        definer = _DEFINERS[_flag_type(flag.field.type)]
        has_default = flag.default is not REQUIRED
        default = flag.default if has_default else None
        definer(
            flag.name,
            list(default) if isinstance(default, tuple) else default,
            flag.help,
            flag_values=flag_values,
            module_name=module_name,
        )
        if not has_default:
            required.append(flag.name)
        if "alias" in flag.field.metadata:
            flags.DEFINE_alias(
                flag.field.metadata["alias"],
                flag.name,
                flag_values=flag_values,
                module_name=module_name,
            )
    flags.mark_flags_as_required(required, flag_values=flag_values)


def options_from_flags(options_class, flag_values, **explicit):
    """Builds the dataclass `options_class` from the flags `define_flags`
    defined for it (`options.build`); fields given in `explicit` take those
    values instead."""
    values = {}
    for flag in flag_fields(options_class):
        value = getattr(flag_values, flag.name)
        if _flag_type(flag.field.type) is tuple and value is not None:
            value = tuple(value)
        values[flag.name] = value
    return build(options_class, **(values | explicit))
