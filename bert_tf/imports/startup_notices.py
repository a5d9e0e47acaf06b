"""TensorFlow's start-up notices kept off stderr, as TF_CPP_MIN_LOG_LEVEL asks.

From TensorFlow 2.21 on, its shared libraries log through Abseil while they
load, before TF_CPP_MIN_LOG_LEVEL applies, and Abseil, not yet initialized,
writes every message to stderr after `WARNING: All log messages before
absl::InitializeLog() is called are written to STDERR`. So `import
tensorflow` prints oneDNN's `oneDNN custom operations are on` (port.cc) and
`Could not find cuda drivers` (cudart_stub.cc) at info level, twice
(libtensorflow_framework and the profiler plugin each carry an Abseil). No
environment variable hides them: Abseil reads none, and TF_ENABLE_ONEDNN_OPTS=0
would hide the oneDNN one only by changing the kernels.

`hidden()` holds what is written to file descriptor 2 during the import and
writes it back without the lines TensorFlow would have hidden; everything
else (Python's output, errors, fatal lines) comes back, in order.
"""

import contextlib
import os
import re
import sys
import tempfile

# Abseil's prefix: severity, date and time (zeros before it is initialized),
# thread, file:line.
_LOG_LINE = re.compile(rb"([IWE])\d{4} [\d:.]+ +\d+ [^ ]+:\d+\] ")
_SEVERITIES = b"IWE"
_NOT_INITIALIZED = (
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
)


def min_log_level():
    """TF_CPP_MIN_LOG_LEVEL as TensorFlow reads it: an integer, else 0 (show all)."""
    try:
        return int(os.environ.get("TF_CPP_MIN_LOG_LEVEL", "0"))
    except ValueError:
        return 0


def is_hidden(line, level):
    """Whether TF_CPP_MIN_LOG_LEVEL=`level` hides `line` (bytes): an Abseil log
    line of a lower severity (0 info, 1 warning, 2 error; fatal ones never),
    or, at level 1 and up, Abseil's warning that it logs to stderr until
    initialized."""
    if line.rstrip(b"\r\n") == _NOT_INITIALIZED:
        return level >= 1
    match = _LOG_LINE.match(line)
    return match is not None and _SEVERITIES.index(match[1]) < level


@contextlib.contextmanager
def hidden():
    """Within it, what is written to file descriptor 2 reaches it at the end,
    less the lines `is_hidden` at TF_CPP_MIN_LOG_LEVEL. At level 0 (every
    notice asked for), or without a file descriptor 2, it holds nothing. A
    process that dies within it (TensorFlow aborting while it loads) loses
    what it held: TF_CPP_MIN_LOG_LEVEL=0 shows it."""
    level = min_log_level()
    try:
        saved = os.dup(2) if level >= 1 else None
    except OSError:
        saved = None
    if saved is None:
        yield
        return
    with tempfile.TemporaryFile() as held:
        _flush_stderr()
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            _flush_stderr()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            with open(2, "wb", closefd=False) as stderr:
                stderr.writelines(line for line in held if not is_hidden(line, level))


def _flush_stderr():
    if sys.stderr is not None:
        sys.stderr.flush()
