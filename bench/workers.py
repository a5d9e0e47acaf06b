"""Benchmark worker processes that time their steps on request (the protocol of
bench/torch_peer.py: `ready <first step seconds>`, then one line of seconds per
line `N` of steps read from stdin)."""

import subprocess


class Worker:
    """A benchmark process that times `steps` steps per request."""

    def __init__(self, command, env=None):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )
        line = self.process.stdout.readline().split()
        if not line or line[0] != "ready":
            raise RuntimeError(f"{command[0]} did not start: {line}")
        self.first_step = float(line[1])

    def time(self, steps):
        self.process.stdin.write(f"{steps}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait()
