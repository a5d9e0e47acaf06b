"""The building blocks of the BERT encoder, as Keras 3 layers.

Every layer keeps its weights in the original TF1 layout (dense kernels
`[in, out]`), so checkpoint conversion is a pure renaming.
"""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.initializers import TruncatedNormal
from bert_tf.modeling.activations import gelu, get_activation
from bert_tf.modeling.token_layout import PADDED

LAYER_NORM_EPSILON = 1e-12
MASK_ADDER = -10000.0
# What a training step recomputes in its backward pass instead of keeping:
# nothing, each transformer layer's activations, or the attention's
# [batch, heads, seq, seq] scores and probabilities.
RECOMPUTE_MODES = ("none", "layer", "attention")


def initializer(config):
    """The original's truncated normal (2 stddev cut-off) with `initializer_range`."""
    return TruncatedNormal(stddev=config.initializer_range)


def layer_norm(name):
    """LayerNorm over the last axis, always computed in float32."""
    return keras.layers.LayerNormalization(epsilon=LAYER_NORM_EPSILON, dtype="float32", name=name)


def dense(units, config, name, activation=None):
    return keras.layers.Dense(
        units, activation=activation, kernel_initializer=initializer(config), name=name
    )


def fused_gelu_dense(layer, x):
    """`layer(x)` for a Dense layer with the original gelu, written as
    MatMul + BiasAdd + tanh-gelu on rows `[n, in]`, the pattern Grappler's
    remapper fuses into one oneDNN op on CPU. Its rounding differs from
    `layer(x)` (by about 5e-7), so only inference uses it."""
    rows = tf.reshape(x, [-1, x.shape[-1]])
    kernel = ops.cast(layer.kernel, rows.dtype)
    bias = ops.cast(layer.bias, rows.dtype)
    expanded = tf.nn.gelu(tf.nn.bias_add(tf.matmul(rows, kernel), bias), approximate=True)
    return tf.reshape(expanded, tf.concat([tf.shape(x)[:-1], [layer.units]], 0))


def draw_dropout_seed(dropout, training):
    """The seed the Keras `dropout` layer would draw now (advancing its
    generator), or None where it would not drop. Drawn outside a recomputed
    function, so that its recomputation drops the same units."""
    if training and dropout.rate > 0:
        return dropout.seed_generator.next()
    return None


def seeded_dropout(x, rate, seed):
    """What `keras.layers.Dropout` computes in training, on a seed from
    `draw_dropout_seed` (None: `x` unchanged)."""
    if seed is None:
        return x
    if seed.dtype != tf.int32:  # Keras keeps seeds int64; stateless ops want int32
        seed = tf.cast(tf.math.floormod(seed, tf.int32.max - 1), tf.int32)
    return tf.nn.experimental.stateless_dropout(x, rate=rate, seed=seed)


def recomputed(function, recompute):
    """`function`, whose activations the backward pass recomputes (instead of
    keeping them) when `recompute`. Gradients flow to its tensor arguments
    and the variables it reads, not to tensors it captures."""
    return tf.recompute_grad(function) if recompute else function


class ConfigLayer(keras.layers.Layer):
    """A layer constructed from a BertConfig; serialises the config as a dict."""

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config if isinstance(config, BertConfig) else BertConfig.from_dict(config)

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEmbeddings(ConfigLayer):
    """Word + position + token-type embeddings, then LayerNorm and dropout.

    The rows are gathered and summed in float32 under mixed precision too
    (`autocast=False`: no bfloat16 copy of the tables each step).

    Call: `(input_word_ids, input_type_ids)`, both int `[batch, seq]` ->
    `[batch, seq, hidden]`. `seq` must not exceed `max_position_embeddings`.
    """

    def __init__(self, config, **kwargs):
        super().__init__(config, **kwargs)
        self.layer_norm = layer_norm("layer_norm")
        self.dropout = keras.layers.Dropout(self.config.hidden_dropout_prob)

    def build(self, input_shape=None):
        c = self.config
        self.word_embeddings = self.add_weight(
            shape=(c.vocab_size, c.hidden_size),
            initializer=initializer(c),
            name="word_embeddings",
            autocast=False,
        )
        self.token_type_embeddings = self.add_weight(
            shape=(c.type_vocab_size, c.hidden_size),
            initializer=initializer(c),
            name="token_type_embeddings",
            autocast=False,
        )
        self.position_embeddings = self.add_weight(
            shape=(c.max_position_embeddings, c.hidden_size),
            initializer=initializer(c),
            name="position_embeddings",
            autocast=False,
        )
        self.layer_norm.build((None, None, c.hidden_size))

    def call(self, input_word_ids, input_type_ids, training=None):
        seq_length = ops.shape(input_word_ids)[1]
        embeddings = (
            ops.take(self.word_embeddings, input_word_ids, axis=0)
            + ops.take(self.token_type_embeddings, input_type_ids, axis=0)
            + self.position_embeddings[None, :seq_length, :]
        )
        embeddings = self.layer_norm(embeddings)
        embeddings = self.dropout(embeddings, training=training)
        return ops.cast(embeddings, self.compute_dtype)


def attention_mask_adder(input_mask):
    """`[batch, seq]` 0/1 mask -> float32 `[batch, 1, 1, seq]` of 0 / -10000.

    Only keys are masked, as in the original; a row whose mask is all zeros
    gets the same adder on every key and so behaves like an unmasked row.
    """
    mask = ops.cast(input_mask, "float32")
    return (1.0 - mask[:, None, None, :]) * MASK_ADDER


@keras.saving.register_keras_serializable(package="bert_tf")
class SelfAttention(ConfigLayer):
    """Multi-head self-attention (`attention/self` in the original).

    Call: `hidden`, int `input_mask [batch, seq]` -> the context (before the
    output projection) in `hidden`'s layout: `[batch, seq, hidden]` by
    default, or `tokens`' layout (`token_layout`). With `first_token_only`,
    only each sequence's first token attends: `[batch, hidden]`.
    Scores, mask and softmax are float32 under mixed precision.
    """

    def __init__(self, config, **kwargs):
        super().__init__(config, **kwargs)
        c = self.config
        self.query = dense(c.hidden_size, c, "query")
        self.key = dense(c.hidden_size, c, "key")
        self.value = dense(c.hidden_size, c, "value")
        self.dropout = keras.layers.Dropout(c.attention_probs_dropout_prob)

    def build(self, input_shape=None):
        for layer in (self.query, self.key, self.value):
            layer.build((None, None, self.config.hidden_size))

    def _split_heads(self, x):
        c = self.config
        shape = ops.shape(x)
        return ops.reshape(x, (shape[0], shape[1], c.num_attention_heads, c.attention_head_size))

    def call(
        self,
        hidden,
        input_mask,
        training=None,
        tokens=PADDED,
        first_token_only=False,
        dropout_seed=None,
        recompute=False,
    ):
        """`dropout_seed`: the probabilities' dropout seed when drawn by the
        caller (`draw_dropout_seed`); `recompute`: scores, mask, softmax and
        dropout recomputed in the backward pass (only the seed and the
        query, key and value projections are kept)."""
        c = self.config
        if training and dropout_seed is None:
            dropout_seed = draw_dropout_seed(self.dropout, training)
        if first_token_only:
            query = self._split_heads(self.query(tokens.first(hidden))[:, None, :])
        else:
            query = self._split_heads(tokens.unpack(self.query(hidden)))
        key = self._split_heads(tokens.unpack(self.key(hidden)))
        value = self._split_heads(tokens.unpack(self.value(hidden)))
        mask_adder = attention_mask_adder(input_mask)

        def attend(query, key, value):
            scores = ops.einsum("bfnd,btnd->bnft", query, key)
            scores = ops.cast(scores, "float32") * (1.0 / float(c.attention_head_size) ** 0.5)
            probs = ops.softmax(scores + mask_adder, axis=-1)
            probs = seeded_dropout(probs, self.dropout.rate, dropout_seed)
            return ops.einsum("bnft,btnd->bfnd", ops.cast(probs, self.compute_dtype), value)

        context = recomputed(attend, recompute and training)(query, key, value)
        shape = ops.shape(context)
        context = ops.reshape(context, (shape[0], shape[1], c.hidden_size))
        return context[:, 0] if first_token_only else tokens.pack(context)


@keras.saving.register_keras_serializable(package="bert_tf")
class TransformerBlock(ConfigLayer):
    """One post-LayerNorm transformer layer (`encoder/layer_N` in the original).

    Call: `hidden [batch, seq, hidden]` (or in `tokens`' layout), int
    `input_mask [batch, seq]` -> the same layout. With `first_token_only`,
    the layer's output for each sequence's first token alone, `[batch, hidden]`.
    `recompute` (one of `RECOMPUTE_MODES`): what training recomputes in the
    backward pass instead of keeping; the results are the same.
    """

    def __init__(self, config, recompute="none", **kwargs):
        super().__init__(config, **kwargs)
        c = self.config
        self.recompute = recompute
        self.attention = SelfAttention(c, name="attention")
        self.attention_output = dense(c.hidden_size, c, "attention_output")
        self.attention_layer_norm = layer_norm("attention_layer_norm")
        self.intermediate = dense(
            c.intermediate_size, c, "intermediate", activation=get_activation(c.hidden_act)
        )
        self.output_dense = dense(c.hidden_size, c, "output")
        self.output_layer_norm = layer_norm("output_layer_norm")
        self.dropout = keras.layers.Dropout(c.hidden_dropout_prob)

    def build(self, input_shape=None):
        c = self.config
        self.attention.build()
        self.attention_output.build((None, None, c.hidden_size))
        self.attention_layer_norm.build((None, None, c.hidden_size))
        self.intermediate.build((None, None, c.hidden_size))
        self.output_dense.build((None, None, c.intermediate_size))
        self.output_layer_norm.build((None, None, c.hidden_size))

    def call(self, hidden, input_mask, training=None, tokens=PADDED, first_token_only=False):
        # Drawn here, outside what may be recomputed, in the order the layers drop.
        seeds = [draw_dropout_seed(self.attention.dropout, training)]
        seeds += [draw_dropout_seed(self.dropout, training) for _ in range(2)]

        def transform(hidden):
            context = self.attention(
                hidden,
                input_mask,
                training=training,
                tokens=tokens,
                first_token_only=first_token_only,
                dropout_seed=seeds[0],
                recompute=self.recompute == "attention",
            )
            if first_token_only:
                hidden = tokens.first(hidden)
            attended = seeded_dropout(self.attention_output(context), self.dropout.rate, seeds[1])
            attended = ops.cast(self.attention_layer_norm(attended + hidden), self.compute_dtype)
            if self.intermediate.activation is gelu and not training:
                expanded = self.output_dense(fused_gelu_dense(self.intermediate, attended))
            else:
                expanded = self.output_dense(self.intermediate(attended))
            expanded = seeded_dropout(expanded, self.dropout.rate, seeds[2])
            return ops.cast(self.output_layer_norm(expanded + attended), self.compute_dtype)

        return recomputed(transform, training and self.recompute == "layer")(hidden)

    def get_config(self):
        return {**super().get_config(), "recompute": self.recompute}


@keras.saving.register_keras_serializable(package="bert_tf")
class OutputProjection(keras.layers.Layer):
    """`logits = x @ output_weights^T + output_bias`, weights stored `[units, hidden]`.

    The layout of the original's classifier, next-sentence and SQuAD heads.
    Call: `[..., hidden]` -> float32 `[..., units]`; computed in float32 even
    under mixed precision (it is small).
    """

    def __init__(self, units, initializer_range=0.02, **kwargs):
        kwargs.setdefault("dtype", "float32")
        super().__init__(**kwargs)
        self.units = units
        self.initializer_range = initializer_range

    def build(self, input_shape):
        self.output_weights = self.add_weight(
            shape=(self.units, input_shape[-1]),
            name="output_weights",
            initializer=TruncatedNormal(stddev=self.initializer_range),
        )
        self.output_bias = self.add_weight(
            shape=(self.units,), name="output_bias", initializer="zeros"
        )

    def call(self, x):
        x = ops.cast(x, "float32")
        return ops.matmul(x, ops.transpose(self.output_weights)) + self.output_bias

    def tf1_variables(self, scope=""):
        """`{TF1 name: variable}` of the two weights: `<scope>output_weights`
        and `<scope>output_bias` (`scope` "" for the original classifier's
        top-level names, "cls/squad/" for its SQuAD head's)."""
        return {
            f"{scope}output_weights": self.output_weights,
            f"{scope}output_bias": self.output_bias,
        }

    def get_config(self):
        return {
            **super().get_config(),
            "units": self.units,
            "initializer_range": self.initializer_range,
        }
