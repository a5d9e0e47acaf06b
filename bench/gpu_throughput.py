"""Pre-training throughput on one accelerator: sequences/s and model FLOP utilisation.

Runs bert_tf's train step (the Trainer's, XLA-compiled, bf16 mixed precision by
default) for BERT-Base and BERT-Large at sequence lengths 128 and 512, one
model at a time, and prints sequences/second and the model FLOP utilisation
(matmul FLOPs of forward + backward, over the device's dense bf16 peak from
the table below, or `--peak_tflops`). Then, for each config, the encoder's
forward pass as the classifiers infer (`skip_padding`, `pooled_only`) with
and without XLA, to show where XLA pays.
Meant to finish within about five minutes on one H100/H200-class GPU:

    python bench/gpu_throughput.py [--configs=base:128:128,...] [--steps=20]

`--smoke` runs a tiny config for two steps (on CPU too) to check the script.
"""

import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags  # noqa: E402
from pretraining_step import (
    bench_config,
    bert_tf_forward,
    bert_tf_step,  # noqa: E402
    make_batch,
    make_inputs,
    training_flops,
)

from bert_tf.modeling import BertEncoder  # noqa: E402

flags.DEFINE_list(
    "configs",
    ["base:128:128", "base:512:32", "large:128:128", "large:512:32"],
    "model:seq_length:batch_size triples (model: tiny, base, large).",
)
flags.DEFINE_string("dtype", "mixed_bfloat16", "float32, mixed_float16 or mixed_bfloat16.")
flags.DEFINE_boolean("jit_compile", True, "Compile the train step with XLA.")
flags.DEFINE_integer("steps", 20, "Timed steps per round (one host call).")
flags.DEFINE_integer("rounds", 3, "Timed rounds per config; the best counts.")
flags.DEFINE_float("peak_tflops", None, "Dense peak TFLOP/s of the dtype (default: table).")
flags.DEFINE_string("output_json", None, "Also write the results here.")
flags.DEFINE_boolean("smoke", False, "A tiny config, two steps, one round: checks the script.")
FLAGS = flags.FLAGS

# Dense (no sparsity) bf16/fp16 tensor-core peaks in TFLOP/s, by a substring of
# the device name as TensorFlow reports it; the first match counts.
PEAK_TFLOPS = (
    ("H200", 989.0),
    ("H100 PCIe", 756.0),
    ("H100", 989.0),
    ("GH200", 989.0),
    ("A100", 312.0),
    ("A10G", 70.0),
    ("A10", 125.0),
    ("L40S", 362.0),
    ("L4", 121.0),
    ("V100", 125.0),
    ("T4", 65.0),
)
# max_predictions_per_seq of the original's recipes at each sequence length.
PREDICTIONS = {128: 20, 512: 80}


def device_name():
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return "CPU"
    return tf.config.experimental.get_device_details(gpus[0]).get("device_name", "GPU")


def peak_flops(name):
    if FLAGS.peak_tflops:
        return FLAGS.peak_tflops * 1e12
    for key, tflops in PEAK_TFLOPS:
        if key in name:
            return tflops * 1e12
    return None


def measure(model, seq, batch_size, steps, rounds):
    """Returns (first step seconds, best seconds per step) for one config."""
    config = bench_config(model, hidden_dropout_prob=0.1)
    predictions = PREDICTIONS.get(seq, max(1, round(seq * 0.15)))
    batch = make_batch(config, batch_size, seq, predictions)
    start = time.perf_counter()
    run = bert_tf_step(config, batch, FLAGS.jit_compile)
    run(1)
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run(steps)
        best = min(best, (time.perf_counter() - start) / steps)
    return first, best, training_flops(config, batch_size, seq, predictions)


def measure_forward(model, seq, batch_size, steps, rounds):
    """Best sequences/s of the encoder's forward pass, without and with XLA."""
    config = bench_config(model)
    inputs = {k: tf.constant(v) for k, v in make_inputs(config, batch_size, seq).items()}
    encoder = BertEncoder(config)
    rates = {}
    for xla in (False, True):
        forward = bert_tf_forward(encoder, inputs, xla, skip_padding=True, pooled_only=True)
        forward().numpy()
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            for _ in range(steps):
                output = forward()
            output.numpy()
            best = min(best, (time.perf_counter() - start) / steps)
        rates["xla" if xla else "plain"] = batch_size / best
    return rates


def main(argv):
    del argv
    configs = ["tiny:32:2"] if FLAGS.smoke else FLAGS.configs
    steps, rounds = (2, 1) if FLAGS.smoke else (FLAGS.steps, FLAGS.rounds)
    keras.mixed_precision.set_dtype_policy(FLAGS.dtype)
    name = device_name()
    peak = peak_flops(name)
    peak_text = f"{peak / 1e12:g} TFLOP/s" if peak else "unknown (--peak_tflops)"
    print(
        f"device: {name}; dtype {FLAGS.dtype}; XLA {FLAGS.jit_compile}; peak {peak_text}",
        flush=True,
    )
    print(
        f"{'model':<7}{'seq':>5}{'batch':>7}{'seq/s':>10}{'TFLOP/s':>10}{'MFU':>8}"
        f"{'1st step s':>12}",
        flush=True,
    )
    results = []
    for spec in configs:
        model, seq, batch_size = spec.split(":")
        seq, batch_size = int(seq), int(batch_size)
        first, seconds, flops = measure(model, seq, batch_size, steps, rounds)
        achieved = flops / seconds
        mfu = f"{achieved / peak:.1%}" if peak else "n/a"
        print(
            f"{model:<7}{seq:>5}{batch_size:>7}{batch_size / seconds:>10.1f}"
            f"{achieved / 1e12:>10.1f}{mfu:>8}{first:>12.1f}",
            flush=True,
        )
        results.append(
            {
                "model": model,
                "seq_length": seq,
                "batch_size": batch_size,
                "sequences_per_second": batch_size / seconds,
                "tflops": achieved / 1e12,
                "mfu": achieved / peak if peak else None,
                "first_step_seconds": first,
            }
        )
        keras.backend.clear_session()
    print(f"forward pass (inference), {FLAGS.dtype}:")
    print(
        f"{'model':<7}{'seq':>5}{'batch':>7}{'seq/s':>10}{'XLA seq/s':>11}{'XLA gain':>10}",
        flush=True,
    )
    for spec, result in zip(configs, results):
        model, seq, batch_size = spec.split(":")
        rates = measure_forward(model, int(seq), int(batch_size), steps, rounds)
        print(
            f"{model:<7}{seq:>5}{batch_size:>7}{rates['plain']:>10.1f}{rates['xla']:>11.1f}"
            f"{rates['xla'] / rates['plain']:>9.2f}x",
            flush=True,
        )
        result["forward_sequences_per_second"] = rates
        keras.backend.clear_session()
    if FLAGS.output_json:
        with open(FLAGS.output_json, "w") as f:
            json.dump(
                {
                    "device": name,
                    "dtype": FLAGS.dtype,
                    "jit_compile": FLAGS.jit_compile,
                    "results": results,
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    app.run(main)
