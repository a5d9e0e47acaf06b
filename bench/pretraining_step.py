"""What the model benchmarks share: model names, a synthetic batch, the FLOP count and
bert_tf's compiled train step (the Trainer's, as run_pretraining.py runs it);
encoder inputs and bert_tf's forward pass."""

import numpy as np
import tensorflow as tf

from bert_tf.config import preset
from bert_tf.modeling import BertPretrainingModel
from bert_tf.optimization import create_optimizer
from bert_tf.tasks.pretraining import PretrainingObjective
from bert_tf.training.loop import LoopConfig, Trainer

# The benches' short model names: small is L4 H512.
PRESETS = {"tiny": "bert_tiny", "small": "bert_small", "base": "bert_base", "large": "bert_large"}


def bench_config(name, **overrides):
    """The BertConfig of a short model name (`PRESETS`)."""
    return preset(PRESETS[name], **overrides)


def make_batch(config, batch, seq, predictions):
    rng = np.random.default_rng(0)
    return {
        "input_word_ids": rng.integers(5, config.vocab_size, (batch, seq)).astype(np.int32),
        "input_mask": np.ones((batch, seq), np.int32),
        "input_type_ids": np.repeat([[0] * (seq // 2) + [1] * (seq - seq // 2)], batch, 0).astype(
            np.int32
        ),
        "masked_lm_positions": np.sort(
            rng.choice(np.arange(1, seq), (batch, predictions)), 1
        ).astype(np.int32),
        "masked_lm_ids": rng.integers(5, config.vocab_size, (batch, predictions)).astype(np.int32),
        "masked_lm_weights": np.ones((batch, predictions), np.float32),
        "next_sentence_labels": rng.integers(0, 2, (batch, 1)).astype(np.int32),
    }


def training_flops(config, batch, seq, predictions):
    """Matmul FLOPs of one training step (forward x 3)."""
    h, i, v = config.hidden_size, config.intermediate_size, config.vocab_size
    tokens = batch * seq
    per_layer = 2 * tokens * (4 * h * h + 2 * h * i) + 2 * 2 * batch * seq * seq * h
    head = 2 * batch * predictions * (h * h + h * v) + 2 * batch * h * h
    return 3 * (config.num_hidden_layers * per_layer + head)


def bert_tf_trainer(model, batch, xla):
    """The Trainer run_pretraining.py builds around `model` (AdamW), and an
    iterator over `batch` repeated."""
    optimizer = create_optimizer("adamw", 1e-4, 10_000, 100)
    trainer = Trainer(
        tf.distribute.get_strategy(),
        PretrainingObjective(),
        model,
        optimizer,
        LoopConfig(output_dir="/tmp/bench_unused", num_train_steps=10**9, jit_compile=xla),
    )
    return trainer, iter(trainer.distribute(lambda _: tf.data.Dataset.from_tensors(batch).repeat()))


def bert_tf_step(config, batch, xla):
    trainer, iterator = bert_tf_trainer(BertPretrainingModel(config), batch, xla)

    def run(steps):
        return trainer.train_steps(iterator, steps)["loss"]

    return run


def make_inputs(config, batch, seq, padded=True):
    """Encoder inputs `[batch, seq]`: the second half of the batch has a
    quarter of padding, as real batches have some (none if not `padded`)."""
    rng = np.random.default_rng(0)
    lengths = np.full(batch, seq)
    if padded:
        lengths[batch // 2 :] = seq * 3 // 4
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int32)
    return {
        "input_word_ids": rng.integers(5, config.vocab_size, (batch, seq)).astype(np.int32) * mask,
        "input_mask": mask,
        "input_type_ids": (np.arange(seq)[None, :] >= seq // 2).astype(np.int32) * mask,
    }


def bert_tf_forward(encoder, inputs, xla, **call_options):
    """A tf.function returning the pooled output of a BertEncoder on `inputs`
    (`call_options`: the encoder's `skip_padding`, `pooled_only`)."""
    return tf.function(
        lambda: encoder(inputs, training=False, **call_options)["pooled_output"], jit_compile=xla
    )
