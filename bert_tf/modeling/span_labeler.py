"""`BertSpanLabeler`: the encoder plus run_squad.py's start and end logits
(`cls/squad`), raw questions and contexts in through `modeling.span_text`."""

import dataclasses

import keras

from bert_tf.errors import InputError
from bert_tf.modeling import span_text
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import SPAN_LOSS_WEIGHTS, span_losses
from bert_tf.modeling.task_model import TaskModel, with_states


@keras.saving.register_keras_serializable(package="bert_tf")
class BertSpanLabeler(TaskModel):
    """Encoder + start/end logits over the sequence (SQuAD; `cls/squad`).

    Returns `start_logits`, `end_logits`: float32 `[batch, seq]`. With a
    preprocessor, `fit` and `evaluate` take raw `(questions, contexts)` and
    `y` the answers' texts and character offsets, `predict` the questions
    and returns their answers, as run_squad.py makes windows and answers
    (see `modeling.span_text`; `settings` are `span_text.SpanSettings`,
    run_squad.py's flags of the same names). `evaluate` on raw text returns
    the loss and eval_results.json's scores.

    Args:
        config: The `BertConfig` (or its dict).
        **kwargs: The `settings`, by name (`doc_stride`, `max_query_length`,
            `max_answer_length`, `n_best_size`, `version_2_with_negative`,
            `null_score_diff_threshold`, `eval_metric`); `preprocessor` (a
            `BertPreprocessor`, for raw text), `recompute` (the encoder's),
            and Keras model arguments (`name`).

    Raises:
        InputError: A setting is invalid.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertSpanLabeler(config, max_answer_length=10, preprocessor=preprocessor)
        >>> logits = model(preprocessor((["was the movie good"], ["the movie was bad"])))
        >>> {name: tuple(value.shape) for name, value in logits.items()}
        {'start_logits': (1, 16), 'end_logits': (1, 16)}
    """

    text_layout = span_text.RAW_TEXT

    def __init__(self, config, **kwargs):
        kwargs.setdefault("name", "bert_span_labeler")
        fields = {f.name for f in dataclasses.fields(span_text.SpanSettings)}
        self.settings = span_text.SpanSettings(
            **{name: kwargs.pop(name) for name in fields if name in kwargs}
        )
        super().__init__(config, **kwargs)
        self.span = OutputProjection(2, self.config.initializer_range, name="span")
        self.span.build((None, None, self.config.hidden_size))
        self.freeze_unused_pooler()
        self.built = True

    def tf1_head_variables(self):
        return self.span.tf1_variables("cls/squad/")

    def call(self, inputs, training=None, return_states=False):
        encoded = self.encoder(inputs, training=training)
        logits = self.span(encoded["sequence_output"])
        outputs = {"start_logits": logits[:, :, 0], "end_logits": logits[:, :, 1]}
        return with_states(outputs, encoded, inputs, return_states)

    def default_loss(self):
        """The original's (start + end) / 2 softmax cross-entropy; `y` is
        `{"start_logits": start positions, "end_logits": end positions}`."""
        return span_losses()

    def default_loss_weights(self):
        return dict(SPAN_LOSS_WEIGHTS)

    def label_ids(self, y):
        """Answers (`span_text.answer_columns`) as one list per question."""
        return span_text.answer_columns(y)

    def takes_raw_text(self, x):
        return span_text.is_raw(x)

    def _text_data(self, x, y, sample_weight, batch_size, shuffle):
        if not span_text.is_raw(x):
            return super()._text_data(x, y, sample_weight, batch_size, shuffle)
        preprocessor = self._preprocessor_for("raw text")
        if y is None:
            raise InputError(f"raw {span_text.RAW_TEXT} need y: the answers to train on")
        dataset = span_text.training_dataset(preprocessor, self.settings, x, y, batch_size, shuffle)
        return dataset, None, None, None

    def evaluate(self, x=None, y=None, batch_size=None, **kwargs):
        if not span_text.is_raw(x):
            return super().evaluate(x, y, batch_size=batch_size, **kwargs)
        return_dict = kwargs.pop("return_dict", False)
        y = self.label_ids(y)
        loss = super().evaluate(x, y, batch_size=batch_size, return_dict=True, **kwargs)
        examples, outputs = span_text.predicted_answers(
            self, self.settings, x, y, batch_size, verbose=kwargs.get("verbose", "auto")
        )
        results = {**loss, **span_text.scores(examples, outputs, self.settings)}
        return results if return_dict else list(results.values())

    def predict(self, x, batch_size=None, **kwargs):
        """Packed inputs -> logits; raw `(questions, contexts)` -> one
        answer dict per question (`span_text.answers`).

        Args:
            x: Packed inputs, or raw `(questions, contexts)`, two lists of str.
            batch_size: As Keras `predict`'s.
            **kwargs: Keras `predict` arguments (`verbose`, ...).

        Returns:
            For packed inputs, `start_logits` and `end_logits`, float32
                `[batch, seq]`; for raw text, per question a dict: `answer`
                (predictions.json's text), its `probability` and `score`
                (start + end logit), `nbest` and, for SQuAD 2.0, `null_odds`.

        Raises:
            InputError: Raw text without a preprocessor.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> model = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
            >>> answers = model.predict((["was the movie good"], ["the movie was bad"]), verbose=0)
            >>> sorted(answers[0])
            ['answer', 'nbest', 'probability', 'score']
            >>> type(answers[0]["answer"]).__name__, type(answers[0]["score"]).__name__
            ('str', 'float')
        """
        if not span_text.is_raw(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        self._preprocessor_for("raw text")
        examples, outputs = span_text.predicted_answers(
            self, self.settings, x, None, batch_size, **kwargs
        )
        return span_text.answers(outputs, examples)

    def get_config(self):
        return {**super().get_config(), **dataclasses.asdict(self.settings)}
