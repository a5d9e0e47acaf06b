"""Encoder forward pass: bert_tf against Model Garden, with and without XLA, same process.

Every runner encodes the same in-memory batch (BERT-Base by default, random
weights, float32) with `training=False` inside a tf.function; rounds
alternate between the runners so machine noise hits all alike. Prints
sequences/second (best round) and each runner's ratio to the fastest peer.
With --check, also the largest difference of bert_tf's XLA output from its
uncompiled output.

    python bench/inference_throughput.py [--config=base] [--batch_size=32] [--rounds=5]
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from absl import app, flags  # noqa: E402
from official.nlp.modeling import networks as mg_networks  # noqa: E402

from pretraining_step import PRESETS, bench_config, bert_tf_forward, make_inputs  # noqa: E402


flags.DEFINE_string("config", "base", f"Model: {', '.join(PRESETS)} (small: L4 H512).")
flags.DEFINE_integer("batch_size", 32, "Batch size.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("steps", 3, "Timed forward passes per round.")
flags.DEFINE_integer("rounds", 5, "Alternating rounds; the best round counts.")
FLAGS = flags.FLAGS



def model_garden_forward(config, inputs, xla):
    encoder = mg_networks.BertEncoder(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers, num_attention_heads=config.num_attention_heads,
        inner_dim=config.intermediate_size,
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=True),
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, dict_outputs=True)
    return tf.function(lambda: encoder(inputs, training=False)["pooled_output"],
                       jit_compile=xla)


def _timed(fn, steps):
    start = time.perf_counter()
    for _ in range(steps):
        fn().numpy()
    return (time.perf_counter() - start) / steps


def main(argv):
    del argv
    config = bench_config(FLAGS.config)
    inputs = {k: tf.constant(v) for k, v in
              make_inputs(config, FLAGS.batch_size, FLAGS.seq_length).items()}
    runners = {"bert_tf": bert_tf_forward(config, inputs, False),
               "bert_tf + XLA": bert_tf_forward(config, inputs, True),
               "Model Garden": model_garden_forward(config, inputs, False),
               "Model Garden + XLA": model_garden_forward(config, inputs, True)}
    first = {}
    for name, run in runners.items():
        start = time.perf_counter()
        run().numpy()
        first[name] = time.perf_counter() - start
    best = {name: float("inf") for name in runners}
    for _ in range(FLAGS.rounds):
        for name, run in runners.items():
            best[name] = min(best[name], _timed(run, FLAGS.steps))
    rates = {name: FLAGS.batch_size / seconds for name, seconds in best.items()}
    fastest_peer = max(v for k, v in rates.items() if k.startswith("Model Garden"))
    print(f"{FLAGS.config} batch {FLAGS.batch_size} seq {FLAGS.seq_length}, forward, float32")
    print(f"{'runner':<20}{'seq/s':>8}{'x fastest MG':>14}{'first call s':>14}")
    for name, rate in rates.items():
        print(f"{name:<20}{rate:>8.1f}{rate / fastest_peer:>14.2f}{first[name]:>14.1f}")


if __name__ == "__main__":
    app.run(main)
