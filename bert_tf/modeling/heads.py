"""Task heads that sit on the encoder's outputs."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.layers import ConfigLayer, dense, layer_norm

# The original's fixed keep_prob=0.9 before a classifier head: on the pooled
# output (classifier, multiple choice) or on every token (token classifier).
CLASSIFIER_DROPOUT = 0.1


def gather_positions(sequence, positions):
    """`[batch, seq, hidden]`, int `[batch, num]` -> `[batch, num, hidden]`."""
    return tf.gather(sequence, ops.cast(positions, "int32"), axis=1, batch_dims=1)


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLMHead(ConfigLayer):
    """The masked-LM head (`cls/predictions` in the original).

    Gathers the hidden states at `masked_lm_positions` first, then
    dense(hidden, act) + LayerNorm, then logits against the (tied) word
    embedding table plus an output bias.
    Call: `sequence_output [batch, seq, hidden]`, `positions [batch, num]`
    -> float32 logits `[batch, num, vocab]`.
    """

    def __init__(self, config, embedding_table, **kwargs):
        super().__init__(config, **kwargs)
        self.embedding_table = embedding_table
        c = self.config
        self.transform = dense(
            c.hidden_size, c, "transform", activation=get_activation(c.hidden_act)
        )
        self.layer_norm = layer_norm("layer_norm")

    def build(self, input_shape=None):
        c = self.config
        self.transform.build((None, None, c.hidden_size))
        self.layer_norm.build((None, None, c.hidden_size))
        self.output_bias = self.add_weight(
            shape=(c.vocab_size,), name="output_bias", initializer="zeros", autocast=False
        )

    def call(self, sequence_output, positions):
        hidden = self.layer_norm(self.transform(gather_positions(sequence_output, positions)))
        hidden = ops.cast(hidden, self.compute_dtype)
        table = ops.cast(self.embedding_table, self.compute_dtype)
        # A 2-D matmul against the [vocab, hidden] table (transpose_b): a
        # batched one would broadcast the table and, in the backward pass,
        # build one [vocab, hidden] gradient per example before summing.
        shape = ops.shape(hidden)
        logits = tf.matmul(ops.reshape(hidden, (-1, shape[-1])), table, transpose_b=True)
        logits = ops.reshape(logits, (shape[0], shape[1], -1))
        return ops.cast(logits, "float32") + self.output_bias

    def get_config(self):
        raise NotImplementedError(
            "MaskedLMHead shares the encoder's embedding table: serialise its task model"
        )
