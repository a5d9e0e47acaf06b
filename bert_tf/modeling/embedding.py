"""Sentence embeddings: one vector per text from the encoder's hidden states."""

import keras
from keras import ops

from bert_tf.errors import InputError
from bert_tf.modeling.tagging import check_layers
from bert_tf.modeling.task_model import TaskModel
from bert_tf.text.preprocessor import TEXTS

POOLINGS = ("mean", "first", "pooled")


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSentenceEmbedder(TaskModel):
    """The encoder pooled to one float32 vector per text.

    `pooling`: "mean" over the real tokens (`[CLS]` and `[SEP]` included,
    as sentence-transformers pools), "first" (the `[CLS]` token's hidden
    state) or "pooled" (the encoder's `pooled_output`, tanh(dense(first
    token)); `layers` is then unused). `layers` (negative: from the top)
    are concatenated: `[batch, hidden * len(layers)]`. `normalize` scales
    each vector to unit L2 norm. No weights besides the encoder's (with
    "mean" or "first" its pooler, which nothing then reaches, is not
    trained); with a preprocessor, `predict` takes raw text.

    Args:
        config: The `BertConfig` (or its dict).
        pooling: "mean", "first" or "pooled" (above).
        layers: The encoder layers whose hidden states are pooled.
        normalize: Whether to scale each vector to unit L2 norm.
        **kwargs: `preprocessor` (a `BertPreprocessor`, for raw text),
            `recompute` (the encoder's), and Keras model arguments (`name`).

    Raises:
        InputError: `pooling` is none of the modes, or a layer index is out
            of the encoder's range.

    Examples:
        >>> import numpy as np
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertSentenceEmbedder(
        ...     config, layers=(-1, -2), normalize=True, preprocessor=preprocessor
        ... )
        >>> vectors = model(preprocessor(["the movie was good", "bad"])).numpy()
        >>> vectors.shape, np.linalg.norm(vectors, axis=-1).round(3).tolist()
        ((2, 256), [1.0, 1.0])
    """

    text_layout = TEXTS

    def __init__(self, config, pooling="mean", layers=(-1,), normalize=False, **kwargs):
        kwargs.setdefault("name", "bert_sentence_embedder")
        super().__init__(config, **kwargs)
        if pooling not in POOLINGS:
            raise InputError(f"pooling={pooling!r}: expected one of {', '.join(POOLINGS)}")
        self.pooling = pooling
        if pooling != "pooled":
            self.freeze_unused_pooler()
        self.layers_used = check_layers(list(layers), self.config.num_hidden_layers)
        self.normalize = normalize
        self.built = True

    def tf1_head_variables(self):
        return {}

    def call(self, inputs, training=None):
        outputs = self.encoder(inputs, training=training, skip_padding=True)
        if self.pooling == "pooled":
            vectors = ops.cast(outputs["pooled_output"], "float32")
        else:
            states = [outputs["encoder_outputs"][i] for i in self.layers_used]
            hidden = ops.cast(ops.concatenate(states, axis=-1), "float32")
            if self.pooling == "first":
                vectors = hidden[:, 0]
            else:
                mask = inputs.get("input_mask")
                mask = ops.ones_like(inputs["input_word_ids"]) if mask is None else mask
                mask = ops.cast(mask, "float32")[:, :, None]
                vectors = ops.sum(hidden * mask, axis=1) / ops.maximum(ops.sum(mask, axis=1), 1.0)
        if self.normalize:
            vectors = vectors / ops.maximum(ops.norm(vectors, axis=-1, keepdims=True), 1e-12)
        return vectors

    def get_config(self):
        return {
            **super().get_config(),
            "pooling": self.pooling,
            "layers": list(self.layers_used),
            "normalize": self.normalize,
        }
