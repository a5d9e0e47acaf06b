"""`BertMultipleChoice`: the encoder run on each choice, plus a one-unit head
on each choice's pooled output (SWAG)."""

import keras
from keras import ops

from bert_tf.modeling.heads import CLASSIFIER_DROPOUT
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import classification_loss
from bert_tf.modeling.task_model import TaskModel, accuracy, positive_count, with_states
from bert_tf.text.preprocessor import CHOICES


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(TaskModel):
    """Encoder + dropout(0.1) + a one-unit dense layer on each choice's pooled output.

    Inputs: a dict of int tensors `[batch, num_choices, seq]`:
    `input_word_ids`, `input_mask`, `input_type_ids` (each choice packed as
    `[CLS] context [SEP] choice [SEP]`), or with a preprocessor, raw text
    `(contexts [batch], choices [batch, num_choices])`. The encoder runs on
    `[batch * num_choices, seq]`. Returns float32 logits `[batch, num_choices]`.
    TF1 names: top-level `output_weights [1, hidden]` and `output_bias [1]`.

    Args:
        config: The `BertConfig` (or its dict).
        num_choices: Number of choices per example.
        **kwargs: `preprocessor` (a `BertPreprocessor`, for raw text),
            `recompute` (the encoder's), and Keras model arguments (`name`).

    Raises:
        InputError: `num_choices` is not a positive integer.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertMultipleChoice(config, num_choices=2, preprocessor=preprocessor)
        >>> inputs = preprocessor((["the movie was", "the movie was"], [["good", "bad"], ["bad", "good"]]))
        >>> tuple(inputs["input_word_ids"].shape)
        (2, 2, 8)
        >>> tuple(model(inputs).shape)
        (2, 2)
    """

    text_layout = CHOICES

    def __init__(self, config, num_choices=4, **kwargs):
        kwargs.setdefault("name", "bert_multiple_choice")
        super().__init__(config, **kwargs)
        self.num_choices = positive_count("num_choices", num_choices)
        self.dropout = keras.layers.Dropout(CLASSIFIER_DROPOUT)
        self.classifier = OutputProjection(1, self.config.initializer_range, name="classifier")
        self.classifier.build((None, self.config.hidden_size))
        self.built = True

    def tf1_head_variables(self):
        return self.classifier.tf1_variables()

    def call(self, inputs, training=None, return_states=False):
        seq = ops.shape(inputs["input_word_ids"])[-1]
        flat = {
            name: ops.reshape(inputs[name], (-1, seq))
            for name in ("input_word_ids", "input_mask", "input_type_ids")
        }
        encoded = self.encode(flat, training, return_states, skip_padding=True, pooled_only=True)
        logits = self.classifier(self.dropout(encoded["pooled_output"], training=training))
        return with_states(
            ops.reshape(logits, (-1, self.num_choices)), encoded, flat, return_states
        )

    def default_loss(self):
        return classification_loss(self.num_choices)

    def default_metrics(self):
        return [accuracy()]

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}
