"""Runs the repository's scripts as a user's `python script.py --flags` would,
without paying the TensorFlow import for each run: this process imports
TensorFlow and bert_tf once (running no TensorFlow op, so forking is safe),
then forks one child per request, which runs the script as `__main__` with
its own argv, working folder and stdout/stderr files.

Protocol (JSON lines): `{"run": {script, args, cwd, stdout, stderr}}` ->
`{"pid": N}`; `{"wait": N}` -> `{"status": exit code, or -signal}`. A run
with `"pause": [step, marker]` pauses its training past `step` (`step_pause`).
"""

import json
import os
import sys

# TensorFlow reads its C++ log level once, at import: set it as every script
# does first (test_user_errors checks the scripts in a plain process).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The repository's bert_tf, which `python REPO/script.py` imports first (its
# folder is sys.path[0]), not one installed elsewhere.
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import step_pause  # noqa: E402
import tensorflow  # noqa: E402,F401
from startup_probe import exit_status_of  # noqa: E402

import bert_tf.tasks.classifier  # noqa: E402,F401
import bert_tf.tasks.pretraining  # noqa: E402,F401


def _child(request):
    os.chdir(request["cwd"])
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(target, fd)
        os.close(target)
    sys.argv = [request["script"], *request["args"]]
    if request.get("pause"):
        step_pause.pause_after(*request["pause"])
    os._exit(exit_status_of(request["script"]))


def main():
    for line in sys.stdin:
        request = json.loads(line)
        if "run" in request:
            pid = os.fork()
            if pid == 0:
                sys.stdin.close()
                _child(request["run"])
            reply = {"pid": pid}
        else:
            _, status = os.waitpid(request["wait"], 0)
            reply = {"status": os.waitstatus_to_exitcode(status)}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
