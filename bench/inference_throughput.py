"""Encoder forward pass: bert_tf against Model Garden, with and without XLA, same process.

Every runner computes the pooled output of the same in-memory batch
(BERT-Base by default, random weights, float32, `training=False`) inside a
tf.function: bert_tf as its classifiers run it in eval, predict and exports
(`skip_padding`, `pooled_only`) and as a plain call (every output, every
position); Model Garden plain and with `output_range=1` (its last layer for
the first token only). Rounds alternate between the runners so machine noise
hits all alike. Prints sequences/second (best round), each runner's ratio to
the fastest Model Garden runner, and how far bert_tf's pooled outputs are
from the plain call's.

    python bench/inference_throughput.py [--config=base] [--batch_size=32] [--rounds=5]
        [--no_padding]
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from absl import app, flags  # noqa: E402
from official.nlp.modeling import networks as mg_networks  # noqa: E402
from pretraining_step import PRESETS, bench_config, bert_tf_forward, make_inputs  # noqa: E402

from bert_tf.modeling import BertEncoder  # noqa: E402

flags.DEFINE_string("config", "base", f"Model: {', '.join(PRESETS)} (small: L4 H512).")
flags.DEFINE_integer("batch_size", 32, "Batch size.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("steps", 3, "Timed forward passes per round.")
flags.DEFINE_integer("rounds", 5, "Alternating rounds; the best round counts.")
flags.DEFINE_boolean(
    "no_padding",
    False,
    "Every sequence full length (default: half the batch has a quarter "
    "of padding, as pretraining_step.make_inputs makes it).",
)
FLAGS = flags.FLAGS


def model_garden_forward(config, inputs, xla, output_range=None):
    encoder = mg_networks.BertEncoder(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        inner_dim=config.intermediate_size,
        inner_activation=lambda x: tf_keras.activations.gelu(x, approximate=True),
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        output_range=output_range,
        dict_outputs=True,
    )
    return tf.function(lambda: encoder(inputs, training=False)["pooled_output"], jit_compile=xla)


def _timed(fn, steps):
    start = time.perf_counter()
    for _ in range(steps):
        fn().numpy()
    return (time.perf_counter() - start) / steps


def main(argv):
    del argv
    config = bench_config(FLAGS.config)
    batch = make_inputs(config, FLAGS.batch_size, FLAGS.seq_length, padded=not FLAGS.no_padding)
    inputs = {k: tf.constant(v) for k, v in batch.items()}
    encoder = BertEncoder(config)
    classifier_path = {"skip_padding": True, "pooled_only": True}
    runners = {
        "bert_tf": bert_tf_forward(encoder, inputs, False, **classifier_path),
        "bert_tf + XLA": bert_tf_forward(encoder, inputs, True, **classifier_path),
        "bert_tf, plain call": bert_tf_forward(encoder, inputs, False),
        "Model Garden": model_garden_forward(config, inputs, False),
        "Model Garden + XLA": model_garden_forward(config, inputs, True),
        "MG output_range=1": model_garden_forward(config, inputs, False, 1),
        "MG output_range=1 + XLA": model_garden_forward(config, inputs, True, 1),
    }
    first, outputs = {}, {}
    for name, run in runners.items():
        start = time.perf_counter()
        outputs[name] = run().numpy()
        first[name] = time.perf_counter() - start
    best = {name: float("inf") for name in runners}
    for _ in range(FLAGS.rounds):
        for name, run in runners.items():
            best[name] = min(best[name], _timed(run, FLAGS.steps))
    rates = {name: FLAGS.batch_size / seconds for name, seconds in best.items()}
    fastest_peer = max(v for k, v in rates.items() if k.startswith("M"))
    plain = outputs["bert_tf, plain call"]
    real = inputs["input_mask"].numpy().sum()
    print(
        f"{FLAGS.config} batch {FLAGS.batch_size} seq {FLAGS.seq_length}, forward, float32, "
        f"{real / inputs['input_mask'].shape.num_elements():.1%} real tokens"
    )
    print(
        f"{'runner':<26}{'seq/s':>8}{'x fastest MG':>14}{'first call s':>14}"
        f"{'max diff from plain':>21}"
    )
    for name, rate in rates.items():
        diff = f"{abs(outputs[name] - plain).max():.1e}" if name.startswith("bert_tf") else ""
        print(f"{name:<26}{rate:>8.1f}{rate / fastest_peer:>14.2f}{first[name]:>14.1f}{diff:>21}")


if __name__ == "__main__":
    app.run(main)
