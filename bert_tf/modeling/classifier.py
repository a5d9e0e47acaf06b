"""`BertClassifier`: the encoder plus run_classifier.py's head on the pooled
output (single-label, regression or multi-label), with label names."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.modeling.heads import CLASSIFIER_DROPOUT
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import SigmoidCrossEntropy, classification_loss
from bert_tf.modeling.task_model import TaskModel, accuracy, label_count, with_states
from bert_tf.text.preprocessor import TEXTS


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(TaskModel):
    """Encoder + dropout(0.1) + a dense layer on the pooled output.

    Inputs: a dict of int tensors `[batch, seq]` (`input_word_ids`,
    `input_mask`, `input_type_ids`), or with a preprocessor, raw text: texts,
    or pairs `(text_a, text_b)`. Returns float32 logits `[batch, num_labels]`
    (`num_labels=1` for regression; `num_classes`, keras-hub's word, is the
    same; without either, one per `label_names`). TF1 names: top-level `output_weights
    [num_labels, hidden]` and `output_bias`, as the original run_classifier.py.
    `multi_label=True`: independent labels (one sigmoid each); the default
    loss is then binary cross-entropy from the logits, its targets multi-hot
    float `[batch, num_labels]`. `label_names` (one per label, in id order),
    or else the sorted names `fit` first meets as labels, travel with the
    model: `.keras` files, `predict_labels`, `export_classifier`'s `labels`.

    Args:
        config: The `BertConfig` (or its dict).
        num_labels: Number of labels (1: regression).
        multi_label: Whether the labels are independent (above).
        label_names: The labels' names, one per label, in id order.
        num_classes: Keras-hub's name of `num_labels`.
        **kwargs: `preprocessor` (a `BertPreprocessor`, for raw text),
            `recompute` (the encoder's), and Keras model arguments (`name`).

    Raises:
        InputError: No number of labels is given (`num_labels`,
            `num_classes` or `label_names`), they differ, or one is not a
            positive integer.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> model = bert_tf.BertClassifier(
        ...     bert_tf.preset("bert_tiny", vocab_size=len(vocab)),
        ...     label_names=["negative", "positive"],
        ...     preprocessor=preprocessor,
        ... )
        >>> logits = model(preprocessor(["the movie was good", "bad"]))
        >>> tuple(logits.shape), logits.dtype.name
        ((2, 2), 'float32')
    """

    text_layout = TEXTS

    def __init__(
        self,
        config,
        num_labels=None,
        multi_label=False,
        label_names=None,
        *,
        num_classes=None,
        **kwargs,
    ):
        kwargs.setdefault("name", "bert_classifier")
        super().__init__(config, **kwargs)
        num_labels = label_count(num_labels, num_classes, label_names)
        self.num_labels = num_labels
        self.multi_label = bool(multi_label)
        self.label_names = None if label_names is None else tuple(map(str, label_names))
        self.dropout = keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = OutputProjection(
            num_labels, self.config.initializer_range, name="classifier"
        )
        self.classifier.build((None, self.config.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        return self.classifier.tf1_variables()

    def call(self, inputs, training=None, return_states=False):
        encoded = self.encode(inputs, training, return_states, skip_padding=True, pooled_only=True)
        logits = self.classifier(self.dropout(encoded["pooled_output"], training=training))
        return with_states(logits, encoded, inputs, return_states)

    def label_ids(self, y):
        """Label names (a list or 1-D array of str) -> int32 ids `[n]`; the
        first names seen, sorted, become `label_names` if it is None. Other
        `y` as it is.

        Args:
            y: The labels, as `fit` takes them.

        Returns:
            The ids, or `y` itself when it is not label names (or the model
                is multi-label).

        Raises:
            InputError: `y` has a name not in `label_names`, or, to set them,
                not `num_labels` distinct names.

        Examples:
            >>> import bert_tf
            >>> model = bert_tf.BertClassifier(bert_tf.preset("bert_tiny", vocab_size=100), num_labels=2)
            >>> model.label_ids(["pos", "neg", "pos"]).tolist(), model.label_names
            ([1, 0, 1], ('neg', 'pos'))
        """
        names = _label_strings(y)
        if names is None or self.multi_label:
            return y
        if self.label_names is None:
            distinct = sorted(set(names))
            if len(distinct) != self.num_labels:
                raise InputError(
                    f"y has {len(distinct)} distinct labels for num_labels={self.num_labels}: "
                    "pass label_names=[...] to the model"
                )
            self.label_names = tuple(distinct)
        ids = {name: i for i, name in enumerate(self.label_names)}
        unknown = [name for name in names if name not in ids]
        if unknown:
            raise InputError(
                f"y: unknown label {unknown[0]!r}; the labels are {', '.join(self.label_names)}"
            )
        return np.array([ids[name] for name in names], np.int32)

    def predict_labels(self, x, batch_size=None, **kwargs):
        """The label names predicted for `x` (what `predict` takes): one per
        example, or for a multi-label model a list of those whose
        probability reaches 0.5; no texts, no names.

        Args:
            x: Raw text (texts, or pairs `(texts_a, texts_b)`, with a
                preprocessor) or packed inputs.
            batch_size: As `predict`'s.
            **kwargs: Keras `predict` arguments (`verbose` defaults to 0).

        Returns:
            A list of label names, one per example (multi-label: a list of
                names per example).

        Raises:
            InputError: The model has no `label_names`, or takes raw text
                without a preprocessor.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> model = bert_tf.BertClassifier(
            ...     bert_tf.preset("bert_tiny", vocab_size=len(vocab)),
            ...     label_names=["negative", "positive"],
            ...     preprocessor=preprocessor,
            ... )
            >>> labels = model.predict_labels(["the movie was good", "bad"])
            >>> len(labels), set(labels) <= {"negative", "positive"}
            (2, True)
        """
        if self.label_names is None:
            raise InputError(
                f"{self.name} has no label_names: pass them to the model or fit it on label names"
            )
        if _no_examples(x):
            return []  # Keras's predict fails on no data
        logits = self.predict(x, batch_size=batch_size, **{"verbose": 0, **kwargs})
        if self.multi_label:
            return [[n for n, on in zip(self.label_names, row) if on] for row in logits >= 0.0]
        return [self.label_names[i] for i in np.argmax(logits, axis=-1)]

    def default_loss(self):
        """run_classifier.py's loss (`bert_tf.modeling.losses`): softmax
        cross-entropy, squared error for `num_labels=1`, or with
        `multi_label` binary cross-entropy of each label. Keras's
        `fit(class_weight=...)` weighs each example's cross-entropy as
        run_classifier.py's `--class_weights` does."""
        if self.multi_label:
            return SigmoidCrossEntropy()
        return classification_loss(self.num_labels)

    def default_metrics(self):
        if self.multi_label:
            return [keras.metrics.BinaryAccuracy(name="binary_accuracy", threshold=0.0)]
        return [accuracy() if self.num_labels > 1 else keras.metrics.MeanSquaredError(name="mse")]

    def get_config(self):
        config = {**super().get_config(), "num_labels": self.num_labels}
        if self.multi_label:
            config["multi_label"] = True
        if self.label_names is not None:
            config["label_names"] = list(self.label_names)
        return config


def _label_strings(y):
    """`y` as a list of str when it is a list or 1-D array of strings, else None."""
    if y is None or isinstance(y, (dict, tf.Tensor, tf.data.Dataset)):
        return None
    values = np.asarray(y)
    if values.ndim != 1 or not all(isinstance(v, (str, bytes)) for v in values.tolist()):
        return None
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values.tolist()]


def _no_examples(x):
    """Whether `x` is texts, or a pair of them, with no example: `[]`, `([], [])`."""
    parts = x if isinstance(x, tuple) and len(x) == 2 else (x,)
    return all(isinstance(part, (list, tuple, np.ndarray)) and not len(part) for part in parts)
