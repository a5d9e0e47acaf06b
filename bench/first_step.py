"""Time to the first pre-training step, phase by phase (wall and CPU seconds).

Same setup as bench/train_vs_pytorch.py's bert_tf side (random init, AdamW,
in-memory batch, MLM on the masked positions). Phases: building the model
(its truncated-normal init), the optimizer's slots, tracing the train loop,
its first call (graph instantiation and Grappler, then one step) and the next
steps. The peer is the steady step of the same run: the first call minus it
is the graph setup; the total is also given in steady steps. The digest of
the weights after the steps (seeded init) shows whether a change kept every
number. With --warm_start the model starts from a checkpoint (written first,
untimed) as a fine-tuning run does: built with its random draws deferred,
then loaded.

    python bench/first_step.py [--config=base] [--batch_size=8] [--steps=3] [--warm_start]
"""

import hashlib
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402
from pretraining_step import PRESETS, bench_config, bert_tf_trainer, make_batch  # noqa: E402

from bert_tf import checkpoints  # noqa: E402
from bert_tf.initializers import deferred_draws  # noqa: E402
from bert_tf.modeling import BertPretrainingModel  # noqa: E402
from bert_tf.training.loop import _gc_paused  # noqa: E402

flags.DEFINE_string("config", "base", f"Model: {', '.join(PRESETS)} (small: L4 H512).")
flags.DEFINE_integer("batch_size", 8, "Sequences per step.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("steps", 3, "Steady steps timed after the first.")
flags.DEFINE_bool("warm_start", False, "Start from a checkpoint of the model, as fine-tuning does.")
FLAGS = flags.FLAGS


class Phases:
    """Wall and process-CPU seconds of consecutive phases."""

    def __init__(self):
        self.rows = []
        self._last = (time.perf_counter(), time.process_time())

    def mark(self, name):
        now = (time.perf_counter(), time.process_time())
        self.rows.append((name, now[0] - self._last[0], now[1] - self._last[1]))
        self._last = now


def main(_):
    config = bench_config(FLAGS.config)
    keras.utils.set_random_seed(0)
    batch = make_batch(config, FLAGS.batch_size, FLAGS.seq_length, FLAGS.predictions)
    if FLAGS.warm_start:
        folder = tempfile.TemporaryDirectory()  # removed at exit, on an error too
        prefix = checkpoints.save_tf1_checkpoint(
            BertPretrainingModel(config), os.path.join(folder.name, "bert_model.ckpt")
        )
    phases = Phases()
    if FLAGS.warm_start:
        with deferred_draws() as draws:
            model = BertPretrainingModel(config)
        checkpoints.load_checkpoint(model, prefix)
        draws.finish()
        phases.mark("model (variables, checkpoint load)")
    else:
        model = BertPretrainingModel(config)
        phases.mark("model (variables, init)")
    trainer, iterator = bert_tf_trainer(model, batch, False)
    phases.mark("optimizer slots, iterator")
    with _gc_paused():  # as in the first train_steps call, which traces it otherwise
        trainer._train_loop.get_concrete_function(iterator, tf.constant(1))
    phases.mark("trace")
    trainer.train_steps(iterator, 1)
    phases.mark("first call")
    first_step = sum(wall for _, wall, _ in phases.rows)
    steady = []
    for _ in range(FLAGS.steps):
        trainer.train_steps(iterator, 1)
        phases.mark("step")
        steady.append(phases.rows.pop())
    step_wall = statistics.median(wall for _, wall, _ in steady)
    step_cpu = statistics.median(cpu for _, _, cpu in steady)
    print(
        f"{FLAGS.config} batch {FLAGS.batch_size} seq {FLAGS.seq_length}, "
        f"{os.cpu_count()} CPUs{'':9s}wall s    CPU s"
    )
    for name, wall, cpu in phases.rows:
        print(f"  {name:38s}{wall:8.2f}{cpu:9.2f}")
    _, first_wall, first_cpu = phases.rows[-1]
    print(
        f"  {'  of which graph setup (first - steady)':38s}{first_wall - step_wall:8.2f}"
        f"{first_cpu - step_cpu:9.2f}"
    )
    print(f"  {'steady step (median)':38s}{step_wall:8.2f}{step_cpu:9.2f}")
    print(f"time to first step {first_step:.1f} s = {first_step / step_wall:.1f} steady steps")
    digest = hashlib.sha256(b"".join(w.numpy().tobytes() for w in model.weights))
    print(f"weights after {1 + FLAGS.steps} steps: sha256 {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    app.run(main)
