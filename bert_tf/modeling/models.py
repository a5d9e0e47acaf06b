"""Task models: the encoder plus the heads of pre-training, classification, SQuAD and
multiple choice."""

import dataclasses

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.errors import InputError
from bert_tf.modeling import span_text
from bert_tf.modeling.heads import MaskedLMHead
from bert_tf.modeling.layers import OutputProjection
from bert_tf.modeling.losses import (
    SPAN_LOSS_WEIGHTS,
    SigmoidCrossEntropy,
    classification_loss,
    pretraining_head_losses,
    span_losses,
)
from bert_tf.modeling.task_model import TaskModel, accuracy, label_count, positive_count
from bert_tf.text.preprocessor import CHOICES, DEFAULT_BATCH_SIZE, TEXTS
from bert_tf.text.tokenization import MASK_TOKEN

CLASSIFIER_DROPOUT = 0.1  # the original's fixed keep_prob=0.9 on the pooled output


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainingModel(TaskModel):
    """Encoder + masked LM + next sentence prediction (`bert/` + `cls/`).

    Inputs: the encoder's dict plus `masked_lm_positions` int `[batch, num]`.
    Outputs: `masked_lm_logits` float32 `[batch, num, vocab]`,
    `next_sentence_logits` float32 `[batch, 2]` (label 1 = random next).
    """

    # What `from_pretrained` refuses to start without.
    required_heads = ("cls/predictions/",)

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

    def fill_mask(self, texts, top_k=5):
        """The `top_k` tokens for each `[MASK]` of each text, best first.

        `texts`: strings in which `[MASK]` stands for a masked token (the
        rest is tokenized as the original does). Needs a preprocessor
        (`from_pretrained` finds the vocab). Returns, per text, per `[MASK]`
        (in order; those past `max_seq_length` dropped), a list of
        `(token, probability)`.
        """
        preprocessor = self._preprocessor_for("fill_mask")
        tokenizer = preprocessor.tokenizer
        if tokenizer.mask_id is None:
            raise InputError(f"the vocabulary of {self.name} has no {MASK_TOKEN}")
        texts = [texts] if isinstance(texts, str) else list(texts)
        pieces = [text.split(MASK_TOKEN) for text in texts]
        piece_ids = iter(tokenizer(tf.constant([p for text in pieces for p in text])).to_list())
        rows = []
        for text in pieces:
            ids = next(piece_ids)
            for _ in text[1:]:
                ids += [tokenizer.mask_id] + next(piece_ids)
            ids = ids[: preprocessor.max_seq_length - 2]
            rows.append([tokenizer.cls_id] + ids + [tokenizer.sep_id])
        results = []
        for begin in range(0, len(rows), DEFAULT_BATCH_SIZE):
            results += self._top_masked_tokens(rows[begin : begin + DEFAULT_BATCH_SIZE], top_k)
        return results

    def _top_masked_tokens(self, rows, top_k):
        """`fill_mask` for a batch of token id lists."""
        tokenizer = self.preprocessor.tokenizer
        lengths = np.array([len(row) for row in rows])
        word_ids = np.full((len(rows), lengths.max()), tokenizer.pad_id, np.int32)
        for ids, row in zip(word_ids, rows):
            ids[: len(row)] = row
        masks = [np.flatnonzero(ids == tokenizer.mask_id) for ids in word_ids]
        positions = np.zeros((len(rows), max(1, max(map(len, masks)))), np.int32)
        for row, found in zip(positions, masks):
            row[: len(found)] = found
        inputs = {
            "input_word_ids": word_ids,
            "input_mask": (np.arange(lengths.max()) < lengths[:, None]).astype(np.int32),
            "input_type_ids": np.zeros_like(word_ids),
            "masked_lm_positions": positions,
        }
        probabilities = tf.nn.softmax(self(inputs, training=False)["masked_lm_logits"], axis=-1)
        best = tf.math.top_k(probabilities, k=top_k)
        vocabulary = tokenizer.vocabulary
        return [
            [
                [(vocabulary[i], float(p)) for i, p in zip(ids, probs)]
                for ids, probs in zip(best.indices[n, : len(found)].numpy(), best.values[n].numpy())
            ]
            for n, found in enumerate(masks)
        ]

    def call(self, inputs, training=None):
        outputs = self.encoder(inputs, training=training)
        return {
            "masked_lm_logits": self.masked_lm(
                outputs["sequence_output"], inputs["masked_lm_positions"]
            ),
            "next_sentence_logits": self.next_sentence(outputs["pooled_output"]),
        }

    def default_loss(self):
        """run_pretraining.py's masked LM + next sentence losses; `y` is
        `{"masked_lm_logits": masked_lm_ids, "next_sentence_logits":
        next_sentence_labels}`, `sample_weight` `{"masked_lm_logits":
        masked_lm_weights, "next_sentence_logits": ones}`."""
        return pretraining_head_losses()


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
        return {
            "output_weights": self.classifier.output_weights,
            "output_bias": self.classifier.output_bias,
        }

    def call(self, inputs, training=None):
        pooled = self.encoder(inputs, training=training, skip_padding=True, pooled_only=True)[
            "pooled_output"
        ]
        return self.classifier(self.dropout(pooled, training=training))

    def label_ids(self, y):
        """Label names (a list or 1-D array of str) -> int32 ids `[n]`; the
        first names seen, sorted, become `label_names` if it is None. Other
        `y` as it is."""
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
        probability reaches 0.5; no texts, no names."""
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
        return {
            "cls/squad/output_weights": self.span.output_weights,
            "cls/squad/output_bias": self.span.output_bias,
        }

    def call(self, inputs, training=None):
        sequence = self.encoder(inputs, training=training)["sequence_output"]
        logits = self.span(sequence)
        return {"start_logits": logits[:, :, 0], "end_logits": logits[:, :, 1]}

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
        answer dict per question (`span_text.answers`)."""
        if not span_text.is_raw(x):
            return super().predict(x, batch_size=batch_size, **kwargs)
        self._preprocessor_for("raw text")
        examples, outputs = span_text.predicted_answers(
            self, self.settings, x, None, batch_size, **kwargs
        )
        return span_text.answers(outputs, examples)

    def get_config(self):
        return {**super().get_config(), **dataclasses.asdict(self.settings)}


@keras.saving.register_keras_serializable(package="bert_tf")
class BertMultipleChoice(TaskModel):
    """Encoder + dropout(0.1) + a one-unit dense layer on each choice's pooled output.

    Inputs: a dict of int tensors `[batch, num_choices, seq]`:
    `input_word_ids`, `input_mask`, `input_type_ids` (each choice packed as
    `[CLS] context [SEP] choice [SEP]`), or with a preprocessor, raw text
    `(contexts [batch], choices [batch, num_choices])`. The encoder runs on
    `[batch * num_choices, seq]`. Returns float32 logits `[batch, num_choices]`.
    TF1 names: top-level `output_weights [1, hidden]` and `output_bias [1]`.
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

    def default_loss(self):
        return classification_loss(self.num_choices)

    def default_metrics(self):
        return [accuracy()]

    def get_config(self):
        return {**super().get_config(), "num_choices": self.num_choices}
