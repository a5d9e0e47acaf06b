"""Client of `script_server.py`: run a repository script as a user does and
get its exit status, stdout and stderr (see that module for why a server)."""

import dataclasses
import json
import os
import subprocess
import sys

from shared import HANG_TIMEOUT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclasses.dataclass
class Finished:
    status: int
    stdout: str
    stderr: str

    @property
    def error_lines(self):
        return [line for line in self.stderr.splitlines() if line.startswith("error:")]


class ScriptServer:
    def __init__(self, log_dir):
        self.log_dir = log_dir
        self.count = 0
        # A user's environment: the scripts' own TensorFlow log level, not the tests'.
        env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(REPO, "tests", "script_server.py")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env=env,
        )

    def _ask(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def start(self, script, *args, cwd=None, pause=None):
        """Starts `python <script> args...`; returns a `Running`. With `pause=(step,
        marker)` its training pauses past `step` (see `step_pause`)."""
        self.count += 1
        out = os.path.join(self.log_dir, f"{self.count}.out")
        err = os.path.join(self.log_dir, f"{self.count}.err")
        for path in (out, err):
            open(path, "w").close()
        pid = self._ask(
            {
                "run": {
                    "script": os.path.join(REPO, script),
                    "args": list(args),
                    "cwd": cwd or self.log_dir,
                    "stdout": out,
                    "stderr": err,
                    "pause": pause,
                }
            }
        )
        return Running(self, pid["pid"], out, err)

    def run(self, script, *args, cwd=None):
        """Runs the script to its end; returns `Finished`."""
        return self.start(script, *args, cwd=cwd).wait()

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=HANG_TIMEOUT)


@dataclasses.dataclass
class Running:
    server: ScriptServer
    pid: int
    stdout_path: str
    stderr_path: str

    def stderr(self):
        with open(self.stderr_path, errors="replace") as f:
            return f.read()

    def ended(self):
        """Whether the process has exited (the server reaps it only in `wait`)."""
        try:
            with open(f"/proc/{self.pid}/stat") as f:
                return f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except FileNotFoundError:
            return True

    def wait(self):
        status = self.server._ask({"wait": self.pid})["status"]
        with open(self.stdout_path, errors="replace") as f:
            stdout = f.read()
        return Finished(status, stdout, self.stderr())
