"""Holds a training run still at a known step for the tests that signal it,
so that what the run did before the signal does not depend on the machine's
speed or load.

`pause_after(step, marker)` makes this process's Trainer stop after the first
call to `train_steps` that takes it past `step`: it writes the step it reached
to the file `marker` and waits there for a signal, where a signal sent during
a call would be handled too (right after the call). SIGTERM raises out of the
wait as out of a running step; SIGKILL ends the process there. Calls take at
most `steps_per_loop` steps and never cross a checkpoint step: with `step` a
checkpoint step and `steps_per_loop` below the checkpoint interval, the run
pauses between that checkpoint and the next, whatever the machine's speed.

`python step_pause.py STEP MARKER SCRIPT ARGS...` runs SCRIPT as
`python SCRIPT ARGS...` would, with the pause.
"""

import os
import runpy
import sys
import time

from bert_tf.training import loop

# Only a test that never sends its signal leaves a run waiting this long.
HANG_SECONDS = 3600


def pause_after(step, marker):
    train_steps = loop.Trainer.train_steps
    paused = []

    def pausing(self, iterator, num_steps):
        losses = train_steps(self, iterator, num_steps)
        reached = int(self.global_step.numpy())
        if reached > step and not paused:
            paused.append(reached)
            with open(marker + ".tmp", "w") as f:
                f.write(str(reached))
            os.replace(marker + ".tmp", marker)  # read whole or not at all
            time.sleep(HANG_SECONDS)
            raise RuntimeError(f"paused at step {reached} and never signalled")
        return losses

    loop.Trainer.train_steps = pausing


def paused_step(marker):
    """The step a paused run reached, or None while it has not paused."""
    try:
        with open(marker) as f:
            return int(f.read())
    except FileNotFoundError:
        return None


def wait_for_pause(marker, ended, output, timeout):
    """The step at which a run paused; fails if it ends first (`ended()`),
    showing `output()`, or if `timeout` seconds pass (a hang)."""
    deadline = time.monotonic() + timeout
    while (step := paused_step(marker)) is None:
        assert not ended() and time.monotonic() < deadline, output()[-3000:]
        time.sleep(0.05)
    return step


if __name__ == "__main__":
    pause_after(int(sys.argv[1]), sys.argv[2])
    sys.argv = sys.argv[3:]
    sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))  # as python SCRIPT sets it
    runpy.run_path(sys.argv[0], run_name="__main__")
