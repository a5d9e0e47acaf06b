"""Where a pre-training step's time goes: the TensorFlow profiler's op events, summed.

Runs bert_tf's train step (the Trainer's) under `tf.profiler`, then reads the
trace (`*.xplane.pb`) and prints the op types and the single ops that took
the most time per step, with their share of all op time. (Nested control
flow ops such as While are left out, so each op counts once.)

    python bench/profile_step.py [--config=base] [--batch_size=8] [--steps=3] [--top=15] \
        [--dtype=mixed_bfloat16]
"""

import collections
import glob
import os
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402
from pretraining_step import PRESETS, bench_config, bert_tf_step, make_batch  # noqa: E402
from tensorflow.tsl.profiler.protobuf import xplane_pb2  # noqa: E402

flags.DEFINE_string("config", "base", f"Model: {', '.join(PRESETS)} (small: L4 H512).")
flags.DEFINE_integer("batch_size", 8, "Batch size.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("steps", 3, "Profiled steps (after two warm-up steps).")
flags.DEFINE_integer("top", 15, "Rows printed per table.")
flags.DEFINE_boolean("jit_compile", False, "Compile the step with XLA.")
flags.DEFINE_enum("dtype", "float32", ["float32", "mixed_bfloat16"], "The Keras dtype policy.")
FLAGS = flags.FLAGS

# Ops that only call other ops: their events contain those of the ops they run.
CONTAINERS = {
    "While",
    "StatelessWhile",
    "If",
    "StatelessIf",
    "PartitionedCall",
    "StatefulPartitionedCall",
}


def _short(op_name):
    """The op's name without the loop and function-call scopes around it."""
    parts = [
        p
        for p in op_name.split("/")
        if p not in ("while", "body", "_1") and "PartitionedCall" not in p
    ]
    return "/".join(parts)


def op_times(trace_dir):
    """{(op name, op type): total picoseconds} over the host's op events."""
    [path] = glob.glob(os.path.join(trace_dir, "**", "*.xplane.pb"), recursive=True)
    space = xplane_pb2.XSpace.FromString(open(path, "rb").read())
    times = collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if ":" not in name or "::" in name or " " in name:
                    continue  # runtime bookkeeping, not an op
                op_name, op_type = name.rsplit(":", 1)
                if op_type in CONTAINERS or op_type.startswith("__inference"):
                    continue
                times[_short(op_name), op_type] += event.duration_ps
    return times


def print_table(title, totals, all_ps, steps):
    print(f"{title:<60}{'ms/step':>10}{'share':>8}")
    for key, ps in totals.most_common(FLAGS.top):
        print(f"{key[:59]:<60}{ps / 1e9 / steps:>10.1f}{ps / all_ps:>8.1%}")


def main(argv):
    del argv
    keras.mixed_precision.set_global_policy(FLAGS.dtype)
    config = bench_config(FLAGS.config)
    run = bert_tf_step(
        config,
        make_batch(config, FLAGS.batch_size, FLAGS.seq_length, FLAGS.predictions),
        FLAGS.jit_compile,
    )
    run(1)
    run(1)
    with tempfile.TemporaryDirectory() as trace_dir:
        tf.profiler.experimental.start(trace_dir)
        run(FLAGS.steps)
        tf.profiler.experimental.stop()
        times = op_times(trace_dir)
    all_ps = sum(times.values())
    by_type = collections.Counter()
    for (_, op_type), ps in times.items():
        by_type[op_type] += ps
    print(
        f"{FLAGS.config} batch {FLAGS.batch_size} seq {FLAGS.seq_length}, {FLAGS.dtype}, XLA "
        f"{FLAGS.jit_compile}: {all_ps / 1e9 / FLAGS.steps:.0f} ms of op time per step "
        "(summed over threads)"
    )
    print_table("op type", by_type, all_ps, FLAGS.steps)
    print_table(
        "op",
        collections.Counter({name: ps for (name, _), ps in times.items()}),
        all_ps,
        FLAGS.steps,
    )


if __name__ == "__main__":
    app.run(main)
