"""Token tagging models (NER): fine-tuned and feature-based (BERT paper, section 5.3)."""

import math
from functools import partial

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.errors import InputError
from bert_tf.metrics.entities import eval_metrics
from bert_tf.modeling import tagging_text
from bert_tf.modeling.crf import LinearChainCrf
from bert_tf.modeling.heads import CLASSIFIER_DROPOUT
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import CrfLoss, TokenCrossEntropy
from bert_tf.modeling.task_model import TaskModel, label_count, positive_count, with_states

COMBINE_MODES = ("concat", "sum")


def decode_tags(crf, logits, mask):
    """A tagger's tag ids int32 `[batch, seq]` at the positions where `mask`
    (bool `[batch, seq]`, each word's first piece), -1 elsewhere: the
    argmax of `logits` `[batch, seq, num_labels]`, or with `crf` (the
    tagger's `LinearChainCrf`, None without `use_crf`) its Viterbi path over
    the masked positions of each row."""
    mask = tf.cast(mask, tf.bool)
    if crf is not None:
        return crf.labelled_decode(logits, mask)
    return tf.where(mask, tf.argmax(logits, axis=-1, output_type=tf.int32), -1)


def word_losses(logits, label_ids, labelled, nll=None):
    """run_ner.py's eval loss of each labelled word, float64 `[labelled
    words]` in row order: the cross-entropy of its gold tag, from logits
    `[windows, seq, num_labels]` and label ids `[windows, seq]` at the
    positions where `labelled` (bool `[windows, seq]`); with `nll` (a CRF's
    `labelled_nll`), each window's NLL shared equally by its words."""
    if nll is None:
        logits = np.asarray(logits, np.float64)
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        gold = np.take_along_axis(log_probs, np.maximum(label_ids, 0)[..., None], axis=-1)
        return -gold[..., 0][labelled]
    counts = labelled.sum(axis=1)
    errors = np.asarray(nll(logits, np.where(labelled, label_ids, -1)), np.float64)
    return np.repeat(errors / np.maximum(counts, 1), counts)


def _crf_variables(crf):
    return {} if crf is None else crf.tf1_variables()


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(TaskModel):
    """Encoder + dropout(0.1) + a dense layer on every token of the sequence output.

    Returns float32 logits `[batch, seq, num_labels]` (`num_classes`,
    keras-hub's word, is the same; without either, one per `label_names`).
    TF1 names: top-level
    `output_weights [num_labels, hidden]` and `output_bias`, as the
    classifier of the original run_classifier.py. With `use_crf`, the logits
    are a linear-chain CRF's emissions over each word's first piece
    (`self.crf`, TF1 names `crf/transitions`, `crf/start_transitions`,
    `crf/end_transitions`): tags come from `decode_tags`.

    With a preprocessor, `fit`, `evaluate` and `predict` take raw sentences
    and `y` their tags (or CLUENER spans), as run_ner.py makes its windows
    (`modeling.tagging_text`): `predict` returns the tags of each word,
    `evaluate` run_ner.py's eval_results.txt scores, named with
    `return_dict=True`, else a list as Keras gives it, the loss first (the
    classifier's `[loss, accuracy]`). `label_names` (the
    tags in id order), or else run_ner.py's label list of the tags `fit`
    first meets ("O" first, then sorted), travel with the model.

    Args:
        config: The `BertConfig` (or its dict).
        num_labels: Number of tags.
        use_crf: Whether a linear-chain CRF decodes the tags (above).
        label_names: The tags' names in id order.
        num_classes: Keras-hub's name of `num_labels`.
        **kwargs: `preprocessor` (a `BertPreprocessor`, for raw text),
            `recompute` (the encoder's), and Keras model arguments (`name`).

    Raises:
        InputError: No number of tags is given (`num_labels`, `num_classes`
            or `label_names`), they differ, or one is not a positive integer.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertTokenClassifier(
        ...     config, label_names=["O", "B-X", "I-X"], preprocessor=preprocessor
        ... )
        >>> logits = model(preprocessor(["the movie was good", "bad"]))
        >>> tuple(logits.shape)
        (2, 8, 3)
    """

    text_layout = tagging_text.RAW_TEXT

    def __init__(
        self,
        config,
        num_labels=None,
        use_crf=False,
        label_names=None,
        *,
        num_classes=None,
        **kwargs,
    ):
        kwargs.setdefault("name", "bert_token_classifier")
        super().__init__(config, **kwargs)
        num_labels = label_count(num_labels, num_classes, label_names)
        self.label_names = None if label_names is None else tuple(map(str, label_names))
        self.num_labels = num_labels
        self.use_crf = use_crf
        self.crf = LinearChainCrf(num_labels, name="crf") if use_crf else None
        self.dropout = keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = OutputProjection(
            num_labels, self.config.initializer_range, name="classifier"
        )
        self.classifier.build((None, None, self.config.hidden_size))
        self.freeze_unused_pooler()
        self.built = True

    def tf1_head_variables(self):
        return {**self.classifier.tf1_variables(), **_crf_variables(self.crf)}

    def call(self, inputs, training=None, return_states=False):
        encoded = self.encoder(inputs, training=training)
        logits = self.classifier(self.dropout(encoded["sequence_output"], training=training))
        return with_states(logits, encoded, inputs, return_states)

    def default_loss(self):
        """run_ner.py's (`bert_tf.modeling.losses`): cross-entropy averaged
        over the labelled tokens, or with `use_crf` the CRF's NLL per
        labelled token (`CrfLoss`). `y` is the label ids `[batch, seq]`, -1
        where not labelled, or label ids with a `sample_weight` 1 where
        labelled (each word's first piece)."""
        if self.crf is not None:
            return CrfLoss(self.crf)
        return TokenCrossEntropy()

    def compile_from_config(self, config):
        super().compile_from_config(config)
        if isinstance(self.loss, CrfLoss):
            self.loss.crf = self.crf

    def _sentences(self, x, y):
        return tagging_text.sentences(x, y, tagging_text.label_scheme(self.label_names))

    def _names_for(self, what):
        if self.label_names is None:
            raise InputError(f"{what} needs label_names: pass them to the model or fit it on tags")
        return self.label_names

    def takes_raw_text(self, x):
        return tagging_text.is_raw(x)

    def split_raw_text(self, x, y, sample_weight, validation_split):
        # A list of sentences (each a str or a word list): cut the list.
        at = int(math.floor(len(x) * (1.0 - validation_split)))
        parts = [(v, v) if v is None else (v[:at], v[at:]) for v in (x, y, sample_weight)]
        return tuple(tuple(part[i] for part in parts) for i in (0, 1))

    def _text_data(self, x, y, sample_weight, batch_size, shuffle):
        if not tagging_text.is_raw(x):
            return super()._text_data(x, y, sample_weight, batch_size, shuffle)
        preprocessor = self._preprocessor_for("raw text")
        if y is None:
            raise InputError(f"raw {tagging_text.RAW_TEXT} need y: their tags")
        found = self._sentences(x, y)
        if self.label_names is None:
            names = tagging_text.label_list(found)
            if len(names) != self.num_labels:
                raise InputError(
                    f"y has {len(names)} distinct tags for num_labels={self.num_labels}: "
                    "pass label_names=[...] to the model"
                )
            self.label_names = tuple(names)
        dataset = tagging_text.training_dataset(
            preprocessor, found, self.label_names, self.use_crf, batch_size, shuffle
        )
        return dataset, None, None, None

    def predict(self, x, batch_size=None, **kwargs):
        """Packed inputs -> logits; raw sentences -> per sentence the tag
        names of its words.

        Args:
            x: Packed inputs, or raw sentences: each a str (split into words
                on whitespace and around CJK ideographs) or a list of words.
            batch_size: As Keras `predict`'s.
            **kwargs: Keras `predict` arguments (`verbose`, ...).

        Returns:
            For packed inputs, the logits `[batch, seq, num_labels]`; for raw
                sentences, per sentence a list of tag names, one per word.

        Raises:
            InputError: Raw sentences without a preprocessor or `label_names`.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> model = bert_tf.BertTokenClassifier(
            ...     config, label_names=["O", "B-X", "I-X"], preprocessor=preprocessor
            ... )
            >>> tags = model.predict(["the movie was good", ["bad", "movie"]], verbose=0)
            >>> [len(sentence) for sentence in tags]
            [4, 2]
            >>> {tag for sentence in tags for tag in sentence} <= {"O", "B-X", "I-X"}
            True
        """
        if not tagging_text.is_raw(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        self._preprocessor_for("raw text")
        self._names_for("predict on raw text")
        found = self._sentences(x, None)
        records, logits = tagging_text.predict_windows(self, found, False, batch_size, **kwargs)
        return tagging_text.word_tags(self, found, records, logits, partial(decode_tags, self.crf))

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        if not tagging_text.is_raw(x):
            return super().evaluate(x, y, batch_size=batch_size, **kwargs)
        self._preprocessor_for("raw text")
        names = self._names_for("evaluate on raw text")
        return_dict = kwargs.pop("return_dict", False)
        found = self._sentences(x, y)
        records, logits = tagging_text.predict_windows(
            self, found, True, batch_size, verbose=kwargs.get("verbose", "auto")
        )
        labels = records["label_ids"]
        nll = None if self.crf is None else self.crf.labelled_nll
        losses = word_losses(logits, labels, labels >= 0, nll)
        tags = tagging_text.word_tags(self, found, records, logits, partial(decode_tags, self.crf))
        scheme = tagging_text.label_scheme(names)
        scores = eval_metrics([s.tags for s in found], tags, losses, scheme)
        results = {"loss": scores.pop("loss"), **scores}  # first, as Keras lists it
        return results if return_dict else list(results.values())

    def get_config(self):
        config = {**super().get_config(), "num_labels": self.num_labels, "use_crf": self.use_crf}
        if self.label_names is not None:
            config["label_names"] = list(self.label_names)
        return config


def check_layers(layers, num_hidden_layers):
    """Validates layer indices (negative: from the top) against the encoder depth."""
    if not layers or any(not -num_hidden_layers <= i < num_hidden_layers for i in layers):
        raise InputError(
            f"--layers={','.join(map(str, layers))}: each must be in "
            f"[-{num_hidden_layers}, {num_hidden_layers - 1}] for "
            f"{num_hidden_layers} hidden layers"
        )
    return tuple(layers)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertFeatureTagger(TaskModel):
    """The paper's feature-based NER: a frozen encoder (not trainable, run
    without dropout), the hidden states of `layers` concatenated
    (`[batch, seq, hidden * len(layers)]`) or summed (`[batch, seq, hidden]`),
    a 2-layer BiLSTM of `lstm_units` per direction over the real tokens and
    a linear tagger. Returns float32 logits `[batch, seq, num_labels]`; with
    `use_crf`, a CRF's emissions, as BertTokenClassifier's.

    Args:
        config: The `BertConfig` (or its dict).
        num_labels: Number of tags.
        layers: The encoder layers whose hidden states are used (negative:
            from the top).
        combine: "concat" or "sum" (above).
        lstm_units: Units of each LSTM direction.
        use_crf: Whether a linear-chain CRF decodes the tags.
        **kwargs: `preprocessor` (a `BertPreprocessor`), `recompute` (the
            encoder's), and Keras model arguments (`name`).

    Raises:
        InputError: `combine` is neither mode, `num_labels` is not a positive
            integer, or a layer index is out of the encoder's range.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> from bert_tf.modeling import BertFeatureTagger
        >>> model = BertFeatureTagger(config, num_labels=3, layers=(-1, -2), lstm_units=16)
        >>> logits = model(preprocessor(["the movie was good", "bad"]))
        >>> tuple(logits.shape)
        (2, 8, 3)
    """

    def __init__(
        self,
        config,
        num_labels,
        layers=(-1, -2, -3, -4),
        combine="concat",
        lstm_units=768,
        use_crf=False,
        **kwargs,
    ):
        kwargs.setdefault("name", "bert_feature_tagger")
        super().__init__(config, **kwargs)
        if combine not in COMBINE_MODES:
            raise InputError(f"combine={combine!r} must be one of {', '.join(COMBINE_MODES)}")
        self.num_labels = positive_count("num_labels", num_labels)
        self.layers_used = check_layers(tuple(layers), self.config.num_hidden_layers)
        self.combine = combine
        self.lstm_units = lstm_units
        self.use_crf = use_crf
        self.crf = LinearChainCrf(num_labels, name="crf") if use_crf else None
        self.encoder.trainable = False
        hidden = self.config.hidden_size
        width = hidden * len(self.layers_used) if combine == "concat" else hidden
        self.lstms = [
            keras.layers.Bidirectional(
                keras.layers.LSTM(lstm_units, return_sequences=True), name=f"bilstm_{i}"
            )
            for i in range(2)
        ]
        self.lstms[0].build((None, None, width))
        self.lstms[1].build((None, None, 2 * lstm_units))
        self.classifier = OutputProjection(
            num_labels, self.config.initializer_range, name="classifier"
        )
        self.classifier.supports_masking = True  # per token: the LSTMs' mask passes through
        self.classifier.build((None, None, 2 * lstm_units))
        self.built = True

    def tf1_head_variables(self):
        return _crf_variables(self.crf)  # the original has no feature-based tagger

    def features(self, inputs):
        """The combined hidden states `[batch, seq, width]` of the frozen encoder.

        Args:
            inputs: The encoder's dict of int tensors `[batch, seq]`.

        Returns:
            The features, `[batch, seq, hidden * len(layers)]` concatenated
                or `[batch, seq, hidden]` summed.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> from bert_tf.modeling import BertFeatureTagger
            >>> model = BertFeatureTagger(config, num_labels=3, layers=(-1, -2), lstm_units=16)
            >>> tuple(model.features(preprocessor(["the movie was good"])).shape)
            (1, 8, 256)
        """
        states = self.encoder(inputs, training=False, skip_padding=True)["encoder_outputs"]
        chosen = [ops.stop_gradient(states[i]) for i in self.layers_used]
        if self.combine == "concat":
            return ops.concatenate(chosen, axis=-1)
        return sum(chosen[1:], chosen[0])

    def call(self, inputs, training=None):
        mask = ops.cast(inputs["input_mask"], "bool")
        hidden = self.features(inputs)
        for lstm in self.lstms:
            hidden = lstm(hidden, mask=mask, training=training)
        return self.classifier(hidden)

    def get_config(self):
        return {
            **super().get_config(),
            "num_labels": self.num_labels,
            "layers": list(self.layers_used),
            "combine": self.combine,
            "lstm_units": self.lstm_units,
            "use_crf": self.use_crf,
        }
