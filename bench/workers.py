"""Benchmark worker processes that time their steps on request: a worker
prints `ready <first step seconds>`, then for each line `N` read from stdin
runs N steps and prints their seconds. `Worker` starts one, `serve` is the
worker's side (bert_tf's in the benches, and bench/torch_peer.py's; stdlib
only, so the peers' virtualenv imports it too)."""

import subprocess
import sys
import time


def serve(build):
    """The worker's side: `build()` returns `run(steps)`; prints `ready` and the
    seconds of the first step (building included), then times each request."""
    start = time.perf_counter()
    run = build()
    run(1)
    print(f"ready {time.perf_counter() - start:.3f}", flush=True)
    for line in sys.stdin:
        start = time.perf_counter()
        run(int(line))
        print(f"{time.perf_counter() - start:.6f}", flush=True)


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
