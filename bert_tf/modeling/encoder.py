"""`BertEncoder`: embeddings, the transformer stack and the pooler."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.accelerators import is_tpu_strategy
from bert_tf.checkpoints.loading import load_pretrained
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling.layers import RECOMPUTE_MODES, BertEmbeddings, TransformerBlock, dense
from bert_tf.modeling.token_layout import PADDED, RealTokens


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(keras.Model):
    """The BERT encoder (`bert/` in the original checkpoints).

    Call with a dict of int tensors `[batch, seq]`: `input_word_ids`, and
    optionally `input_mask` (1 = real token; default all ones) and
    `input_type_ids` (segment ids; default zeros). Returns a dict:
      - `sequence_output`: `[batch, seq, hidden]`, the last layer;
      - `pooled_output`: `[batch, hidden]`, tanh(dense(first token));
      - `encoder_outputs`: list of `[batch, seq, hidden]`, every layer;
      - `embedding_output`: `[batch, seq, hidden]`.
    Weights exist as soon as the encoder is constructed.

    `recompute` trades time for memory in training (gradient checkpointing):
    "layer" keeps each transformer layer's input alone and recomputes the
    rest of its activations in the backward pass, "attention" only the
    `[batch, heads, seq, seq]` attention scores and probabilities; "none"
    keeps everything. Losses and gradients are the same. Set it before the
    training step is first traced (`fit`, or the constructor).

    Args:
        config: The `BertConfig` (or its dict).
        recompute: "none", "layer" or "attention" (above).
        **kwargs: Keras model arguments (`name`, ...).

    Raises:
        ConfigError: `config` is a dict that is not a valid config.
        InputError: `recompute` is none of the modes.

    Examples:
        >>> import tensorflow as tf
        >>> import bert_tf
        >>> encoder = bert_tf.BertEncoder(bert_tf.preset("bert_tiny", vocab_size=100))
        >>> outputs = encoder({"input_word_ids": tf.constant([[2, 10, 11, 3]])})
        >>> tuple(outputs["sequence_output"].shape), tuple(outputs["pooled_output"].shape)
        ((1, 4, 128), (1, 128))
        >>> len(outputs["encoder_outputs"])
        2
    """

    def __init__(self, config, recompute="none", **kwargs):
        kwargs.setdefault("name", "bert_encoder")
        super().__init__(**kwargs)
        self.config = config if isinstance(config, BertConfig) else BertConfig.from_dict(config)
        c = self.config
        self.embeddings = BertEmbeddings(c, name="embeddings")
        self.transformer_layers = [
            TransformerBlock(c, name=f"layer_{i}") for i in range(c.num_hidden_layers)
        ]
        self.pooler = dense(c.hidden_size, c, "pooler", activation="tanh")
        self.recompute = recompute
        self.build()

    @property
    def recompute(self):
        return self._recompute

    @recompute.setter
    def recompute(self, mode):
        if mode not in RECOMPUTE_MODES:
            raise InputError(
                f"recompute={mode!r}: expected one of {', '.join(map(repr, RECOMPUTE_MODES))}"
            )
        self._recompute = mode
        for layer in self.transformer_layers:
            layer.recompute = mode

    @classmethod
    def from_pretrained(cls, path, **kwargs):
        """The encoder with the weights at `path` (see `bert_tf.checkpoints.loading.load_pretrained`).

        Args:
            path: Any checkpoint the scripts take: a Google release folder or
                `bert_model.ckpt` prefix, a run's output folder (its newest
                checkpoint), a Model Garden checkpoint or a Hugging Face folder.
            **kwargs: `bert_config_file` (the config to build the encoder as;
                by default the one beside the checkpoint), and the
                encoder's own arguments (`recompute`, `name`).

        Returns:
            The `BertEncoder`; `load_report` says what was loaded and what in
                the checkpoint was unused (e.g. its pre-training heads).

        Raises:
            CheckpointError: `path` holds no checkpoint, no config is beside it
                and none is given, or its `bert/` weights do not fit the config.
            ConfigError: The config file is invalid.

        Examples:
            >>> import os, tempfile
            >>> import bert_tf
            >>> from bert_tf import checkpoints
            >>> folder = tempfile.mkdtemp()
            >>> config = bert_tf.preset("bert_tiny", vocab_size=100)
            >>> config.to_json_file(os.path.join(folder, "bert_config.json"))
            >>> model = bert_tf.BertPretrainingModel(config)
            >>> _ = checkpoints.save_tf1_checkpoint(model, os.path.join(folder, "bert_model.ckpt"))
            >>> encoder = bert_tf.BertEncoder.from_pretrained(folder)
            >>> encoder.config == config
            True
            >>> encoder.load_report.unused[:2]
            ['cls/predictions/output_bias', 'cls/predictions/transform/LayerNorm/beta']
        """
        return load_pretrained(cls, path, **kwargs)

    def build(self, input_shape=None):
        self.embeddings.build()
        for layer in self.transformer_layers:
            layer.build()
        self.pooler.build((None, self.config.hidden_size))
        self.built = True

    def call(self, inputs, training=None, skip_padding=False, pooled_only=False):
        """Runs the encoder (the class docstring has its inputs and outputs).

        `skip_padding` and `pooled_only` speed up inference (they change
        nothing when training). Real tokens' outputs equal the plain call's
        up to float rounding.

        Args:
            inputs: A dict of int tensors `[batch, seq]`: `input_word_ids`,
                and optionally `input_mask` and `input_type_ids`.
            training: Whether dropout is on.
            skip_padding: The position-wise layers run on the real tokens
                alone; `sequence_output` and `encoder_outputs` are then zeros
                at padded positions (the original's values there mean
                nothing). Not under TPUStrategy, which needs static shapes.
            pooled_only: Returns `pooled_output` alone, and the last layer
                runs for each sequence's first token only (Model Garden's
                `output_range=1`).

        Returns:
            The dict of `sequence_output`, `pooled_output`, `encoder_outputs`
                and `embedding_output`; with `pooled_only`, of
                `pooled_output` alone.

        Examples:
            >>> import tensorflow as tf
            >>> import bert_tf
            >>> encoder = bert_tf.BertEncoder(bert_tf.preset("bert_tiny", vocab_size=100))
            >>> inputs = {
            ...     "input_word_ids": tf.constant([[2, 10, 11, 3], [2, 12, 3, 0]]),
            ...     "input_mask": tf.constant([[1, 1, 1, 1], [1, 1, 1, 0]]),
            ... }
            >>> outputs = encoder(inputs, pooled_only=True, skip_padding=True)
            >>> list(outputs), tuple(outputs["pooled_output"].shape)
            (['pooled_output'], (2, 128))
        """
        word_ids = inputs["input_word_ids"]
        mask = inputs.get("input_mask")
        if mask is None:
            mask = ops.ones_like(word_ids)
        type_ids = inputs.get("input_type_ids")
        if type_ids is None:
            type_ids = ops.zeros_like(word_ids)

        embedding_output = self.embeddings(word_ids, type_ids, training=training)
        skip_padding = (
            skip_padding and not training and not is_tpu_strategy(tf.distribute.get_strategy())
        )
        tokens = RealTokens(mask) if skip_padding else PADDED
        last_for_first_token = pooled_only and not training
        hidden = tokens.pack(embedding_output)
        encoder_outputs = []
        for i, layer in enumerate(self.transformer_layers):
            first_token_only = last_for_first_token and i == len(self.transformer_layers) - 1
            hidden = layer(
                hidden, mask, training=training, tokens=tokens, first_token_only=first_token_only
            )
            if not pooled_only:
                encoder_outputs.append(tokens.output(hidden))
        pooled_output = self.pooler(hidden if last_for_first_token else tokens.first(hidden))
        if pooled_only:
            return {"pooled_output": pooled_output}
        return {
            "sequence_output": encoder_outputs[-1],
            "pooled_output": pooled_output,
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }

    def get_config(self):
        config = {"name": self.name, "config": self.config.to_dict()}
        if self.recompute != "none":
            config["recompute"] = self.recompute
        return config
