"""Pre-training throughput: bert_tf's train step against Model Garden's, same process.

For each config (a small one and BERT-Base at seq 128) and with / without XLA,
both models train on the same in-memory batch with AdamW; rounds alternate
between them so machine noise hits both alike. Prints examples/second, the
bert_tf / Model Garden ratio, and the achieved model FLOP/s as a fraction of
the best dense float32 matmul measured in the same run.

    python bench/train_throughput.py [--configs=small,base] [--steps=3] [--rounds=3]
"""

import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402
from absl import app, flags  # noqa: E402
from official.nlp.modeling import layers as mg_layers  # noqa: E402
from official.nlp.modeling import models as mg_models  # noqa: E402
from official.nlp.modeling import networks as mg_networks  # noqa: E402
from pretraining_step import bench_config, bert_tf_step, make_batch, training_flops  # noqa: E402

flags.DEFINE_list("configs", ["small", "base"], "Configs to run: small (L4 H512), base.")
flags.DEFINE_integer("batch_size", 8, "Batch size.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("steps", 3, "Timed steps per round.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds; the best round counts.")
flags.DEFINE_list("xla", ["off", "on"], "XLA settings to run.")
FLAGS = flags.FLAGS


def model_garden_step(config, batch, xla):
    def gelu(x):
        return tf_keras.activations.gelu(x, approximate=True)

    encoder = mg_networks.BertEncoder(
        vocab_size=config.vocab_size,
        hidden_size=config.hidden_size,
        num_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        inner_dim=config.intermediate_size,
        inner_activation=gelu,
        max_sequence_length=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        dict_outputs=True,
    )
    model = mg_models.BertPretrainerV2(
        encoder_network=encoder,
        mlm_activation=gelu,
        classification_heads=[
            mg_layers.ClassificationHead(
                inner_dim=config.hidden_size, num_classes=2, name="next_sentence"
            )
        ],
    )
    optimizer = tf_keras.optimizers.AdamW(
        learning_rate=1e-4, weight_decay=0.01, epsilon=1e-6, global_clipnorm=1.0
    )
    inputs = {
        k: batch[k]
        for k in ("input_word_ids", "input_mask", "input_type_ids", "masked_lm_positions")
    }

    @tf.function(jit_compile=xla)
    def compute():
        with tf.GradientTape() as tape:
            outputs = model(inputs, training=True)
            weights = batch["masked_lm_weights"]
            mlm = tf.nn.sparse_softmax_cross_entropy_with_logits(
                batch["masked_lm_ids"], outputs["mlm_logits"]
            )
            mlm = tf.reduce_sum(mlm * weights) / (tf.reduce_sum(weights) + 1e-5)
            nsp = tf.reduce_mean(
                tf.nn.sparse_softmax_cross_entropy_with_logits(
                    batch["next_sentence_labels"][:, 0], outputs["next_sentence"]
                )
            )
            loss = mlm + nsp
        return loss, tape.gradient(loss, model.trainable_variables)

    @tf.function
    def steps(n):
        loss = tf.constant(0.0)
        for _ in tf.range(n):
            loss, grads = compute()
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return lambda n: float(steps(tf.constant(n)))


def matmul_peak():
    a = tf.random.normal((2048, 2048))
    b = tf.random.normal((2048, 2048))
    product = tf.function(lambda: tf.reduce_sum(tf.matmul(a, b)))
    product()
    best = min(_timed(product) for _ in range(5))
    return 2 * 2048**3 / best


def _timed(fn, *args):
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main(argv):
    del argv
    peak = matmul_peak()
    print(f"dense float32 matmul 2048^3: {peak / 1e9:.1f} GFLOP/s")
    print(
        f"{'config':<8}{'xla':<5}{'bert_tf ex/s':>14}{'MG ex/s':>10}{'ratio':>8}"
        f"{'bert_tf %peak':>15}{'MG %peak':>10}"
    )
    for name in FLAGS.configs:
        config = bench_config(name, hidden_dropout_prob=0.1)
        batch = make_batch(config, FLAGS.batch_size, FLAGS.seq_length, FLAGS.predictions)
        flops = training_flops(config, FLAGS.batch_size, FLAGS.seq_length, FLAGS.predictions)
        for xla in FLAGS.xla:
            runners = {
                "bert_tf": bert_tf_step(config, batch, xla == "on"),
                "model_garden": model_garden_step(config, batch, xla == "on"),
            }
            for run in runners.values():
                run(1)  # trace and compile
            best = {k: float("inf") for k in runners}
            for _ in range(FLAGS.rounds):
                for key, run in runners.items():
                    best[key] = min(best[key], _timed(run, FLAGS.steps) / FLAGS.steps)
            ours, theirs = (FLAGS.batch_size / best[k] for k in ("bert_tf", "model_garden"))
            print(
                f"{name:<8}{xla:<5}{ours:>14.2f}{theirs:>10.2f}{ours / theirs:>8.2f}"
                f"{flops / best['bert_tf'] / peak:>15.1%}"
                f"{flops / best['model_garden'] / peak:>10.1%}",
                flush=True,
            )


if __name__ == "__main__":
    app.run(main)
