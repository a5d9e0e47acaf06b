"""The loss of each head, defined once for the scripts and for Keras.

A `HeadLoss` gives each example's (or token's) `errors` and the `counts`
they are normalised by; the loss is `normalise(sum(errors), sum(counts))`.
The scripts' training loop sums both over the global batch, across replicas
(`training.objectives.HeadObjective`); Keras's `compile()` calls the loss
on each replica's batch (`HeadLoss.__call__`, scaled by 1 / replicas as
Keras's own losses are, since Keras adds up the replicas' gradients).
A model of several outputs has one loss per output, weighted
(`TaskModel.default_loss_weights`, 1 when None) and added.

`y_true` is what Keras's `fit` takes for the output; `sample_weight`, where
given, scales each example's error (per-example heads: the normaliser stays
the number of examples, as Keras's `class_weight` in `fit` does) or each
token's error and count (per-token heads).
"""

import keras
import tensorflow as tf
from keras import ops


class HeadLoss(keras.losses.Loss):
    """A head's loss: `normalise(sum(errors), sum(counts))`, float32.

    Subclasses define `errors` (per example or token) and, where not one per
    example, `counts` and `normalise`."""

    def __init__(self, name=None, **kwargs):
        kwargs.pop("reduction", None)  # normalised by `normalise`, never by Keras
        super().__init__(name=name, reduction="sum", **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        """float32 errors, `[batch]` or `[batch, seq]`."""
        raise NotImplementedError

    def counts(self, y_true, sample_weight=None):
        """What `errors` are normalised by, summed: one per example by default."""
        return tf.ones(tf.shape(y_true)[:1], tf.float32)

    def normalise(self, error_sum, count):
        """The loss from the summed errors and counts."""
        return error_sum / count

    def __call__(self, y_true, y_pred, sample_weight=None):
        with tf.name_scope(self.name):
            loss = self.normalise(
                tf.reduce_sum(self.errors(y_true, y_pred, sample_weight)),
                tf.reduce_sum(self.counts(y_true, sample_weight)),
            )
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            return loss if replicas == 1 else loss * (1.0 / replicas)

    def get_config(self):
        return {"name": self.name}


def _scaled(errors, sample_weight):
    if sample_weight is None:
        return errors
    return errors * tf.reshape(tf.cast(sample_weight, tf.float32), tf.shape(errors))


@keras.saving.register_keras_serializable(package="bert_tf")
class SoftmaxCrossEntropy(HeadLoss):
    """Softmax cross-entropy of int labels `[batch]` under logits `[batch,
    labels]`, averaged over the examples (classification, multiple choice,
    each end of a span). `class_weights` (one per label): example i's error
    counts `class_weights[y_i]` times, still divided by the number of
    examples, `sum_i w[y_i] * CE_i / N`, which is what Keras makes of
    `fit(class_weight=...)` with the unweighted loss."""

    def __init__(self, class_weights=None, name="cross_entropy", **kwargs):
        super().__init__(name=name, **kwargs)
        self.class_weights = None if class_weights is None else [float(w) for w in class_weights]

    def errors(self, y_true, y_pred, sample_weight=None):
        logits = tf.cast(y_pred, tf.float32)
        labels = tf.reshape(tf.cast(y_true, tf.int32), tf.shape(logits)[:-1])
        errors = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
        if self.class_weights is not None:
            errors *= tf.gather(tf.constant(self.class_weights, tf.float32), labels)
        return _scaled(errors, sample_weight)

    def get_config(self):
        return {**super().get_config(), "class_weights": self.class_weights}


@keras.saving.register_keras_serializable(package="bert_tf")
class SquaredError(HeadLoss):
    """Regression: `(y_pred[:, 0] - y)^2` averaged over the examples; `y_true`
    float `[batch]`, `y_pred` `[batch, 1]`."""

    def __init__(self, name="mean_squared_error", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        targets = tf.reshape(tf.cast(y_true, tf.float32), [-1])
        return _scaled(tf.square(tf.cast(y_pred, tf.float32)[:, 0] - targets), sample_weight)


@keras.saving.register_keras_serializable(package="bert_tf")
class SigmoidCrossEntropy(HeadLoss):
    """Multi-label: each label's sigmoid cross-entropy, averaged over the
    labels and then the examples; `y_true` multi-hot `[batch, labels]`."""

    def __init__(self, name="binary_cross_entropy", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        errors = tf.nn.sigmoid_cross_entropy_with_logits(
            tf.cast(y_true, tf.float32), tf.cast(y_pred, tf.float32)
        )
        return _scaled(tf.reduce_mean(errors, axis=1), sample_weight)


def _labelled(labels, sample_weight):
    """The weight of each token `[batch, seq]`: 0 where the label is -1 or
    the sample weight 0, else the sample weight (1 without)."""
    weights = tf.cast(labels >= 0, tf.float32)
    if sample_weight is not None:
        weights *= tf.cast(sample_weight, tf.float32)
    return weights


@keras.saving.register_keras_serializable(package="bert_tf")
class TokenCrossEntropy(HeadLoss):
    """Token tagging: softmax cross-entropy of each labelled token, averaged
    over the labelled tokens. `y_true` int `[batch, seq]`, -1 where not
    labelled; a `sample_weight` `[batch, seq]` (1 on each word's first
    piece) weighs each token's error and count."""

    def __init__(self, name="token_cross_entropy", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        labels = tf.cast(y_true, tf.int32)
        errors = tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.maximum(labels, 0), tf.cast(y_pred, tf.float32)
        )
        errors = tf.where(labels >= 0, errors, 0.0)
        return errors if sample_weight is None else errors * _labelled(labels, sample_weight)

    def counts(self, y_true, sample_weight=None):
        return _labelled(tf.cast(y_true, tf.int32), sample_weight)

    def normalise(self, error_sum, count):
        return error_sum / tf.maximum(count, 1.0)


@keras.saving.register_keras_serializable(package="bert_tf")
class CrfLoss(HeadLoss):
    """A CRF tagger's loss: the negative log-likelihood of each row's
    labelled tokens (taken in order as one tag sequence), summed and divided
    by the labelled tokens. `y_true` int `[batch, seq]`, -1 where not
    labelled; a `sample_weight` `[batch, seq]` marks the labelled tokens
    (0: not labelled). `crf` is the model's `LinearChainCrf` (not
    serialised: a loaded `.keras` model sets it again)."""

    def __init__(self, crf=None, name="crf_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.crf = crf

    def _labels(self, y_true, sample_weight):
        labels = tf.cast(y_true, tf.int32)
        if sample_weight is None:
            return labels
        return tf.where(tf.cast(sample_weight, tf.float32) > 0, labels, -1)

    def errors(self, y_true, y_pred, sample_weight=None):
        return self.crf.labelled_nll(y_pred, self._labels(y_true, sample_weight))

    def counts(self, y_true, sample_weight=None):
        labels = self._labels(y_true, sample_weight)
        return tf.reduce_sum(tf.cast(labels >= 0, tf.float32), axis=1)

    def normalise(self, error_sum, count):
        return error_sum / tf.maximum(count, 1.0)


def _label_log_probs(logits, labels):
    """The original pre-training's log p(label): log_softmax, gathered."""
    log_probs = ops.log_softmax(tf.cast(logits, tf.float32), axis=-1)
    return ops.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]


@keras.saving.register_keras_serializable(package="bert_tf")
class MaskedLmLoss(HeadLoss):
    """The original's masked LM loss: `sum(w * -log p(id)) / (sum(w) + 1e-5)`
    over the predicted positions. `y_true` the `masked_lm_ids` `[batch,
    num]`, `sample_weight` the `masked_lm_weights` (all 1 without)."""

    def __init__(self, name="masked_lm", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        weights = self.counts(y_true, sample_weight)
        return -(weights * _label_log_probs(y_pred, tf.cast(y_true, tf.int32)))

    def counts(self, y_true, sample_weight=None):
        if sample_weight is None:
            return tf.ones(tf.shape(y_true), tf.float32)
        return tf.cast(sample_weight, tf.float32)

    def normalise(self, error_sum, count):
        return error_sum / (count + 1e-5)


@keras.saving.register_keras_serializable(package="bert_tf")
class NextSentenceLoss(HeadLoss):
    """The original's next sentence loss: `-log p(label)` averaged over the
    examples; `y_true` the `next_sentence_labels` `[batch]` or `[batch, 1]`
    (1 = random next), `y_pred` the logits `[batch, 2]`."""

    def __init__(self, name="next_sentence", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        labels = tf.reshape(tf.cast(y_true, tf.int32), [-1])
        return _scaled(-_label_log_probs(y_pred, labels), sample_weight)


def _check_temperature(temperature):
    if not temperature > 0:
        raise ValueError(f"the temperature must be > 0, got {temperature}")
    return float(temperature)


@keras.saving.register_keras_serializable(package="bert_tf")
class SoftmaxDistillation(HeadLoss):
    """Knowledge distillation (Hinton et al. 2015): `T^2 * KL(softmax(t / T)
    || softmax(s / T))` over the last axis, the teacher's logits `t` as
    `y_true`, the student's `s` as `y_pred`, both `[batch, n]` (averaged
    over the examples) or, `per_token`, `[batch, seq, n]` (averaged over the
    tokens a `sample_weight` `[batch, seq]` marks with 1; all without one)."""

    def __init__(self, temperature=1.0, per_token=False, name="distillation", **kwargs):
        super().__init__(name=name, **kwargs)
        self.temperature = _check_temperature(temperature)
        self.per_token = bool(per_token)

    def errors(self, y_true, y_pred, sample_weight=None):
        t = self.temperature
        teacher = tf.nn.log_softmax(tf.cast(y_true, tf.float32) / t, axis=-1)
        student = tf.nn.log_softmax(tf.cast(y_pred, tf.float32) / t, axis=-1)
        kl = tf.reduce_sum(tf.exp(teacher) * (teacher - student), axis=-1) * (t * t)
        if self.per_token and sample_weight is not None:
            return kl * tf.cast(sample_weight, tf.float32)
        return kl if self.per_token else _scaled(kl, sample_weight)

    def counts(self, y_true, sample_weight=None):
        if not self.per_token:
            return super().counts(y_true, sample_weight)
        if sample_weight is None:
            return tf.ones(tf.shape(y_true)[:2], tf.float32)
        return tf.cast(sample_weight, tf.float32)

    def normalise(self, error_sum, count):
        return error_sum / tf.maximum(count, 1.0) if self.per_token else error_sum / count

    def get_config(self):
        return {
            **super().get_config(),
            "temperature": self.temperature,
            "per_token": self.per_token,
        }


@keras.saving.register_keras_serializable(package="bert_tf")
class SigmoidDistillation(HeadLoss):
    """Multi-label distillation: each label's binary `T^2 * KL(sigmoid(t / T)
    || sigmoid(s / T))`, averaged over the labels, then the examples;
    teacher logits `t` (`y_true`) and student logits `s` `[batch, labels]`."""

    def __init__(self, temperature=1.0, name="distillation", **kwargs):
        super().__init__(name=name, **kwargs)
        self.temperature = _check_temperature(temperature)

    def errors(self, y_true, y_pred, sample_weight=None):
        t = self.temperature
        teacher, student = tf.cast(y_true, tf.float32) / t, tf.cast(y_pred, tf.float32) / t
        # KL = CE(p_t, student) - CE(p_t, teacher): both from logits, stable.
        p = tf.sigmoid(teacher)
        kl = tf.nn.sigmoid_cross_entropy_with_logits(
            p, student
        ) - tf.nn.sigmoid_cross_entropy_with_logits(p, teacher)
        return _scaled(tf.reduce_mean(kl, axis=1) * (t * t), sample_weight)

    def get_config(self):
        return {**super().get_config(), "temperature": self.temperature}


@keras.saving.register_keras_serializable(package="bert_tf")
class SquaredDistillation(HeadLoss):
    """Regression distillation: `(s - t)^2` of the student's output `s`
    (`y_pred`) to the teacher's `t` (`y_true`), both `[batch, 1]`, averaged
    over the examples (no temperature: there is no distribution to soften)."""

    def __init__(self, name="distillation", **kwargs):
        super().__init__(name=name, **kwargs)

    def errors(self, y_true, y_pred, sample_weight=None):
        difference = tf.cast(y_pred, tf.float32) - tf.cast(y_true, tf.float32)
        return _scaled(tf.reduce_mean(tf.square(difference), axis=-1), sample_weight)


@keras.saving.register_keras_serializable(package="bert_tf")
class LabelledOnly(HeadLoss):
    """A per-example loss over the labelled examples only: `sample_weight`
    `[batch]` is 1 on an example with a label and 0 on one without (text the
    teacher labels), whose `y_true` is then ignored; the loss is the
    labelled examples' mean (0 in a batch without any)."""

    def __init__(self, loss=None, name=None, **kwargs):
        loss = keras.losses.deserialize(loss) if isinstance(loss, dict) else loss
        super().__init__(name=name or loss.name, **kwargs)
        self.loss = loss

    def _mask(self, sample_weight):
        return tf.cast(tf.reshape(sample_weight, [-1]), tf.float32)

    def errors(self, y_true, y_pred, sample_weight=None):
        labelled = self._mask(sample_weight)
        shape = tf.concat([tf.shape(labelled), tf.ones([tf.rank(y_true) - 1], tf.int32)], 0)
        present = tf.reshape(labelled, shape) > 0
        y_true = tf.where(present, y_true, tf.zeros_like(y_true))
        return tf.where(labelled > 0, self.loss.errors(y_true, y_pred), 0.0)

    def counts(self, y_true, sample_weight=None):
        return self._mask(sample_weight)

    def normalise(self, error_sum, count):
        return error_sum / tf.maximum(count, 1.0)

    def get_config(self):
        return {**super().get_config(), "loss": keras.losses.serialize(self.loss)}


def distillation_loss(label_loss, temperature):
    """The distillation loss that goes with a head's `label_loss`: softmax
    (per token for token tagging), sigmoid (multi-label) or squared error
    (regression)."""
    if isinstance(label_loss, SquaredError):
        return SquaredDistillation()
    if isinstance(label_loss, SigmoidCrossEntropy):
        return SigmoidDistillation(temperature)
    if isinstance(label_loss, TokenCrossEntropy):
        return SoftmaxDistillation(temperature, per_token=True)
    if isinstance(label_loss, SoftmaxCrossEntropy):
        return SoftmaxDistillation(temperature, name=f"{label_loss.name}_distillation")
    raise ValueError(f"no distillation loss for {type(label_loss).__name__}")


def classification_loss(num_labels, class_weights=None):
    """run_classifier.py's loss: softmax cross-entropy; `num_labels=1`:
    squared error (regression)."""
    if num_labels == 1:
        return SquaredError()
    return SoftmaxCrossEntropy(class_weights)


def span_losses():
    """run_squad.py's loss of each end (weighed 1/2 each, `SPAN_LOSS_WEIGHTS`)."""
    return {
        "start_logits": SoftmaxCrossEntropy(name="start"),
        "end_logits": SoftmaxCrossEntropy(name="end"),
    }


SPAN_LOSS_WEIGHTS = {"start_logits": 0.5, "end_logits": 0.5}


def pretraining_head_losses():
    """run_pretraining.py's loss of each output (added)."""
    return {"masked_lm_logits": MaskedLmLoss(), "next_sentence_logits": NextSentenceLoss()}


# The pre-training features each output's loss takes: (labels, sample weights).
PRETRAINING_TARGETS = {
    "masked_lm_logits": ("masked_lm_ids", "masked_lm_weights"),
    "next_sentence_logits": ("next_sentence_labels", None),
}


# The key of a single-output model's output (as `Predictor` names it).
SINGLE_OUTPUT = "logits"


def keyed(value):
    """`value` as a dict of outputs: itself, or `{SINGLE_OUTPUT: value}`."""
    return value if isinstance(value, dict) else {SINGLE_OUTPUT: value}


def summed_counts(losses, y_true, sample_weight):
    """`{output: sum of its loss's counts}` (dicts keyed like `losses`;
    `sample_weight` may lack outputs)."""
    return {
        key: tf.reduce_sum(loss.counts(y_true[key], sample_weight.get(key)))
        for key, loss in losses.items()
    }


def model_loss(losses, y_true, y_pred, sample_weight, counts, loss_weights=None):
    """A model's loss: each output's summed errors `normalise`d by its
    summed `counts`, weighted by `loss_weights` (None: 1), added up. All
    dicts keyed like `losses` (`sample_weight` may lack outputs). Returns
    `{"loss": total}` and, with several outputs, `<loss name>_loss` for each
    (the names Keras logs)."""
    results, total = {}, None
    for key, loss in losses.items():
        errors = tf.reduce_sum(loss.errors(y_true[key], y_pred[key], sample_weight.get(key)))
        value = loss.normalise(errors, counts[key])
        if len(losses) > 1:
            results[f"{loss.name}_loss"] = value
        if loss_weights is not None:
            value = value * loss_weights[key]
        total = value if total is None else total + value
    results["loss"] = total
    return results


def pretraining_losses(outputs, features, masked_lm_weight_total=None, num_examples=None):
    """The original's pre-training losses, float32 scalars.

    masked LM: sum(weights * -log p(label)) / (sum(weights) + 1e-5);
    next sentence: mean cross-entropy. Returns a dict with `masked_lm_loss`,
    `next_sentence_loss` and their sum `loss`. Under a distribution strategy
    pass the global-batch `masked_lm_weight_total` and `num_examples`: each
    replica's losses are then its share, and they add up to the global loss.
    """
    losses = pretraining_head_losses()
    y_true = {key: features[label] for key, (label, _) in PRETRAINING_TARGETS.items()}
    weights = {key: features[w] for key, (_, w) in PRETRAINING_TARGETS.items() if w}
    counts = summed_counts(losses, y_true, weights)
    if masked_lm_weight_total is not None:
        counts["masked_lm_logits"] = masked_lm_weight_total
    if num_examples is not None:
        counts["next_sentence_logits"] = num_examples
    return model_loss(losses, y_true, outputs, weights, counts)
