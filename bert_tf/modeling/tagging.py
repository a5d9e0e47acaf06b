"""Token tagging models (NER): fine-tuned and feature-based (BERT paper, section 5.3)."""

import keras
import tensorflow as tf
from keras import ops

from bert_tf.errors import InputError
from bert_tf.modeling.crf import LinearChainCrf
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import CrfLoss, TokenCrossEntropy
from bert_tf.modeling.models import CLASSIFIER_DROPOUT
from bert_tf.modeling.task_model import TaskModel

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


def _crf_variables(crf):
    return {} if crf is None else crf.tf1_variables()


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenClassifier(TaskModel):
    """Encoder + dropout(0.1) + a dense layer on every token of the sequence output.

    Returns float32 logits `[batch, seq, num_labels]`. TF1 names: top-level
    `output_weights [num_labels, hidden]` and `output_bias`, as the
    classifier of the original run_classifier.py. With `use_crf`, the logits
    are a linear-chain CRF's emissions over each word's first piece
    (`self.crf`, TF1 names `crf/transitions`, `crf/start_transitions`,
    `crf/end_transitions`): tags come from `decode_tags`.
    """

    def __init__(self, config, num_labels, use_crf=False, **kwargs):
        kwargs.setdefault("name", "bert_token_classifier")
        super().__init__(config, **kwargs)
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
        return {
            "output_weights": self.classifier.output_weights,
            "output_bias": self.classifier.output_bias,
            **_crf_variables(self.crf),
        }

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        return self.classifier(self.dropout(sequence, training=training))

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

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels, "use_crf": self.use_crf}


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
        self.num_labels = num_labels
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
        """The combined hidden states `[batch, seq, width]` of the frozen encoder."""
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
