"""Task models: the encoder plus the heads of pre-training, classification, SQuAD and
multiple choice."""

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import MaskedLMHead
from bert_tf.modeling.layers import OutputProjection

CLASSIFIER_DROPOUT = 0.1  # the original's fixed keep_prob=0.9 on the pooled output


class TaskModel(keras.Model):
    """A keras.Model around one BertEncoder; serialises as its BertConfig."""

    def __init__(self, config, **kwargs):
        super().__init__(**kwargs)
        self.config = config if isinstance(config, BertConfig) else BertConfig.from_dict(config)
        self.encoder = BertEncoder(self.config)

    def get_config(self):
        return {"name": self.name, "config": self.config.to_dict()}

    def tf1_head_variables(self):
        """`{original TF1 name: variable}` of the head's weights (the encoder's
        are named by `checkpoints.tf1_variable_map`)."""
        raise NotImplementedError


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainingModel(TaskModel):
    """Encoder + masked LM + next sentence prediction (`bert/` + `cls/`).

    Inputs: the encoder's dict plus `masked_lm_positions` int `[batch, num]`.
    Outputs: `masked_lm_logits` float32 `[batch, num, vocab]`,
    `next_sentence_logits` float32 `[batch, 2]` (label 1 = random next).
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "bert_pretraining")
        super().__init__(config, **kwargs)
        c = self.config
        self.masked_lm = MaskedLMHead(c, self.encoder.embeddings.word_embeddings, name="masked_lm")
        self.next_sentence = OutputProjection(2, c.initializer_range, name="next_sentence")
        self.masked_lm.build()
        self.next_sentence.build((None, c.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        mlm = self.masked_lm
        return {
            "cls/predictions/transform/dense/kernel": mlm.transform.kernel,
            "cls/predictions/transform/dense/bias": mlm.transform.bias,
            "cls/predictions/transform/LayerNorm/gamma": mlm.layer_norm.gamma,
            "cls/predictions/transform/LayerNorm/beta": mlm.layer_norm.beta,
            "cls/predictions/output_bias": mlm.output_bias,
            "cls/seq_relationship/output_weights": self.next_sentence.output_weights,
            "cls/seq_relationship/output_bias": self.next_sentence.output_bias,
        }

    def call(self, inputs, training=None):
        outputs = self.encoder(inputs, training=training)
        return {
            "masked_lm_logits": self.masked_lm(
                outputs["sequence_output"], inputs["masked_lm_positions"]
            ),
            "next_sentence_logits": self.next_sentence(outputs["pooled_output"]),
        }


@keras.saving.register_keras_serializable(package="bert_tf")
class BertClassifier(TaskModel):
    """Encoder + dropout(0.1) + a dense layer on the pooled output.

    Returns float32 logits `[batch, num_labels]` (`num_labels=1` for
    regression). TF1 names: top-level `output_weights [num_labels, hidden]`
    and `output_bias`, as the original run_classifier.py.
    """

    def __init__(self, config, num_labels, **kwargs):
        kwargs.setdefault("name", "bert_classifier")
        super().__init__(config, **kwargs)
        self.num_labels = num_labels
        self.dropout = keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = OutputProjection(
            num_labels, self.config.initializer_range, name="classifier"
        )
        self.classifier.build((None, self.config.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        return {
            "output_weights": self.classifier.output_weights,
            "output_bias": self.classifier.output_bias,
        }

    def call(self, inputs, training=None):
        pooled = self.encoder(inputs, training=training, skip_padding=True, pooled_only=True)[
            "pooled_output"
        ]
        return self.classifier(self.dropout(pooled, training=training))

    def get_config(self):
        return {**super().get_config(), "num_labels": self.num_labels}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(TaskModel):
    """Encoder + start/end logits over the sequence (SQuAD; `cls/squad`).

    Returns `start_logits`, `end_logits`: float32 `[batch, seq]`.
    """

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "bert_span_labeler")
        super().__init__(config, **kwargs)
        self.span = OutputProjection(2, self.config.initializer_range, name="span")
        self.span.build((None, None, self.config.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        return {
            "cls/squad/output_weights": self.span.output_weights,
            "cls/squad/output_bias": self.span.output_bias,
        }

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        logits = self.span(sequence)
        return {"start_logits": logits[:, :, 0], "end_logits": logits[:, :, 1]}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(TaskModel):
    """Encoder + dropout(0.1) + a one-unit dense layer on each choice's pooled output.

    Inputs: a dict of int tensors `[batch, num_choices, seq]`:
    `input_word_ids`, `input_mask`, `input_type_ids` (each choice packed as
    `[CLS] context [SEP] choice [SEP]`). The encoder runs on
    `[batch * num_choices, seq]`. Returns float32 logits `[batch, num_choices]`.
    TF1 names: top-level `output_weights [1, hidden]` and `output_bias [1]`.
    """

    def __init__(self, config, num_choices=4, **kwargs):
        kwargs.setdefault("name", "bert_multiple_choice")
        super().__init__(config, **kwargs)
        self.num_choices = num_choices
        self.dropout = keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = OutputProjection(1, self.config.initializer_range, name="classifier")
        self.classifier.build((None, self.config.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        return {
            "output_weights": self.classifier.output_weights,
            "output_bias": self.classifier.output_bias,
        }

    def call(self, inputs, training=None):
        seq = ops.shape(inputs["input_word_ids"])[-1]
        flat = {
            name: ops.reshape(inputs[name], (-1, seq))
            for name in ("input_word_ids", "input_mask", "input_type_ids")
        }
        pooled = self.encoder(flat, training=training, skip_padding=True, pooled_only=True)[
            "pooled_output"
        ]
        logits = self.classifier(self.dropout(pooled, training=training))
        return ops.reshape(logits, (-1, self.num_choices))

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}


def pretraining_losses(outputs, features, masked_lm_weight_total=None, num_examples=None):
    """The original's pre-training losses, float32 scalars.

    masked LM: sum(weights * -log p(label)) / (sum(weights) + 1e-5);
    next sentence: mean cross-entropy. Returns a dict with `masked_lm_loss`,
    `next_sentence_loss` and their sum `loss`. Under a distribution strategy
    pass the global-batch `masked_lm_weight_total` and `num_examples`: each
    replica's losses are then its share, and they add up to the global loss.
    """
    log_probs = ops.log_softmax(outputs["masked_lm_logits"], axis=-1)
    labels = ops.cast(features["masked_lm_ids"], "int32")
    label_log_probs = ops.take_along_axis(log_probs, labels[:, :, None], axis=-1)[:, :, 0]
    weights = ops.cast(features["masked_lm_weights"], "float32")
    if masked_lm_weight_total is None:
        masked_lm_weight_total = ops.sum(weights)
    masked_lm_loss = -ops.sum(weights * label_log_probs) / (masked_lm_weight_total + 1e-5)

    ns_log_probs = ops.log_softmax(outputs["next_sentence_logits"], axis=-1)
    ns_labels = ops.reshape(ops.cast(features["next_sentence_labels"], "int32"), (-1, 1))
    ns_label_log_probs = ops.take_along_axis(ns_log_probs, ns_labels, axis=-1)
    if num_examples is None:
        num_examples = ops.cast(ops.shape(ns_labels)[0], "float32")
    next_sentence_loss = -ops.sum(ns_label_log_probs) / num_examples
    return {
        "masked_lm_loss": masked_lm_loss,
        "next_sentence_loss": next_sentence_loss,
        "loss": masked_lm_loss + next_sentence_loss,
    }
