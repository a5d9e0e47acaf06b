"""Runs repository scripts as `python script.py args...` would, to see what
their start-up imports: a child forked per run from this process, which has
imported absl and nothing of TensorFlow, runs the script as `__main__`.

    cd REPO && python tests/startup_probe.py '[["run_classifier.py", ["--help"]], ...]'

A script named `-m bert_tf.scripts.run_classifier` runs as `python -m` runs it.

prints one JSON object per run: `status` (the exit status), `stdout`,
`stderr` and `imported`, which of tensorflow and keras were imported when
the script exited.
"""

import json
import os
import runpy
import sys
import tempfile
import traceback

import absl.app  # noqa: F401  (the children's start-up before the script: absl only)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WATCHED = ("tensorflow", "keras")


def exit_status_of(script):
    """Runs `script` (a path, or `-m module`) as `__main__` (with the current
    sys.argv; for a module, its file as sys.argv[0]) and returns
    the exit status `python script` would have, stdout and stderr flushed."""
    code = 0
    try:
        if script.startswith("-m "):  # python -m module
            runpy.run_module(script[3:], run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # what the interpreter would print and exit 1 for
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def _child(script, args, folder):
    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = [script, *args]
    sys.path.insert(0, REPO)  # as `python REPO/script.py` does
    code = exit_status_of(script)  # argv[0] as typed: `script`
    with open(os.path.join(folder, "imported"), "w") as f:
        json.dump([name for name in WATCHED if name in sys.modules], f)
    os._exit(code)


def run(script, args):
    """Runs `script` with `args` in a forked child; returns its result."""
    with tempfile.TemporaryDirectory() as folder:
        pid = os.fork()
        if pid == 0:
            _child(script, args, folder)
        _, status = os.waitpid(pid, 0)
        result = {"status": os.waitstatus_to_exitcode(status)}
        for name in ("stdout", "stderr", "imported"):
            with open(os.path.join(folder, name), errors="replace") as f:
                result[name] = f.read()
        result["imported"] = json.loads(result["imported"])
        return result


if __name__ == "__main__":
    for script, args in json.loads(sys.argv[1]):
        print(json.dumps(run(script, args)), flush=True)
