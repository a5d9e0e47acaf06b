"""The distillation losses (`modeling.losses`) and `DistillationObjective`
against numpy formulas: the loss the scripts train with (a global batch split
between two replicas, each replica's share added up) and Keras's `__call__`."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.losses import (
    LabelledOnly,
    SigmoidCrossEntropy,
    SigmoidDistillation,
    SoftmaxCrossEntropy,
    SoftmaxDistillation,
    SquaredDistillation,
    SquaredError,
    TokenCrossEntropy,
)
from bert_tf.training.distillation import DistillationObjective
from bert_tf.training.objectives import HeadObjective

RNG = np.random.default_rng(11)
BATCH, SEQ, LABELS, T = 6, 5, 4, 2.5


def log_softmax(x):
    x = np.asarray(x, np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def softmax_kl(teacher, student, t):
    """T^2 * KL(softmax(teacher / T) || softmax(student / T)) over the last axis."""
    p, q = log_softmax(np.asarray(teacher) / t), log_softmax(np.asarray(student) / t)
    return t * t * np.sum(np.exp(p) * (p - q), axis=-1)


def binary_kl(teacher, student, t):
    """T^2 * mean over labels of the Bernoulli KL of the softened sigmoids."""
    p = 1 / (1 + np.exp(-np.asarray(teacher, np.float64) / t))
    q = 1 / (1 + np.exp(-np.asarray(student, np.float64) / t))
    kl = p * np.log(p / q) + (1 - p) * np.log((1 - p) / (1 - q))
    return t * t * kl.mean(axis=-1)


def cross_entropy(logits, labels):
    return -np.take_along_axis(log_softmax(logits), np.asarray(labels)[..., None], -1)[..., 0]


class FixedTeacher:
    """A teacher whose outputs are given: rows looked up by `row` feature."""

    def __init__(self, outputs):
        self.outputs = outputs

    def __call__(self, features, training=False):
        rows = features["row"]
        if isinstance(self.outputs, dict):
            return {k: tf.gather(tf.constant(v, tf.float32), rows) for k, v in self.outputs.items()}
        return tf.gather(tf.constant(self.outputs, tf.float32), rows)


def split_loss(objective, outputs, features):
    """The loop's loss for a global batch split over two replicas, and its parts."""
    halves = [slice(0, BATCH // 2), slice(BATCH // 2, BATCH)]

    def half(value, rows):
        if isinstance(value, dict):
            return {k: half(v, rows) for k, v in value.items()}
        return tf.constant(np.asarray(value)[rows])

    parts = [(half(outputs, rows), half(features, rows)) for rows in halves]
    totals = {}
    for _, features_half in parts:
        for name, value in objective.totals(features_half).items():
            totals[name] = totals.get(name, 0.0) + tf.cast(value, tf.float32)
    results = [objective.loss(out, feats, totals) for out, feats in parts]
    return {key: sum(float(r[key]) for r in results) for key in results[0]}


def features_of(**more):
    mask = np.ones((BATCH, SEQ), np.int32)
    mask[1, 3:] = mask[4, 2:] = 0
    return {
        "row": np.arange(BATCH, dtype=np.int32),
        "input_word_ids": RNG.integers(1, 50, (BATCH, SEQ)).astype(np.int32) * mask,
        "input_mask": mask,
        **more,
    }


def test_softmax_distillation_is_the_kl_times_t_squared():
    teacher, student = RNG.normal(size=(BATCH, LABELS)) * 3, RNG.normal(size=(BATCH, LABELS))
    loss = SoftmaxDistillation(T)(tf.constant(teacher), tf.constant(student))
    np.testing.assert_allclose(float(loss), softmax_kl(teacher, student, T).mean(), rtol=1e-5)
    # The same logits: nothing to learn; T = 1 is the plain KL.
    assert abs(float(SoftmaxDistillation(T)(tf.constant(teacher), tf.constant(teacher)))) < 1e-6
    plain = SoftmaxDistillation(1.0)(tf.constant(teacher), tf.constant(student))
    np.testing.assert_allclose(float(plain), softmax_kl(teacher, student, 1.0).mean(), rtol=1e-5)


def test_sigmoid_and_squared_distillation():
    teacher, student = RNG.normal(size=(BATCH, LABELS)) * 2, RNG.normal(size=(BATCH, LABELS))
    loss = SigmoidDistillation(T)(tf.constant(teacher), tf.constant(student))
    np.testing.assert_allclose(float(loss), binary_kl(teacher, student, T).mean(), rtol=1e-5)
    t1, s1 = teacher[:, :1], student[:, :1]
    loss = SquaredDistillation()(tf.constant(t1), tf.constant(s1))
    np.testing.assert_allclose(float(loss), np.mean((t1 - s1) ** 2), rtol=1e-5)


@pytest.mark.parametrize("temperature", [0.0, -1.0])
def test_a_temperature_not_above_zero_is_refused(temperature):
    for loss in (SoftmaxDistillation, SigmoidDistillation):
        with pytest.raises(ValueError, match="temperature must be > 0"):
            loss(temperature)


def test_classifier_objective_mixes_distillation_and_the_labelled_examples_loss():
    teacher, student = RNG.normal(size=(BATCH, LABELS)) * 3, RNG.normal(size=(BATCH, LABELS))
    labels = np.array([2, -1, 0, -1, -1, 3], np.int32)  # -1: unlabelled text
    objective = DistillationObjective(
        FixedTeacher(teacher),
        HeadObjective(SoftmaxCrossEntropy(), labels="label_ids"),
        T,
        0.3,
        labelled=lambda f: tf.cast(f["label_ids"] >= 0, tf.float32),
    )
    got = split_loss(objective, student, features_of(label_ids=labels))
    known = labels >= 0
    label_loss = cross_entropy(student[known], labels[known]).mean()
    distilled = softmax_kl(teacher, student, T).mean()
    np.testing.assert_allclose(got["distillation_loss"], distilled, rtol=1e-5)
    np.testing.assert_allclose(got["label_loss"], label_loss, rtol=1e-5)
    np.testing.assert_allclose(got["loss"], 0.3 * distilled + 0.7 * label_loss, rtol=1e-5)


def test_regression_and_multi_label_objectives_ignore_nan_labels_and_keep_gradients_finite():
    teacher, student = RNG.normal(size=(BATCH, 1)), RNG.normal(size=(BATCH, 1))
    targets = np.array([0.5, np.nan, -1.0, 2.0, np.nan, np.nan], np.float32)
    objective = DistillationObjective(
        FixedTeacher(teacher),
        HeadObjective(SquaredError(), labels="label_ids"),
        T,
        0.5,
        labelled=lambda f: tf.cast(tf.math.is_finite(f["label_ids"]), tf.float32),
    )
    features = features_of(label_ids=targets)
    got = split_loss(objective, student, features)
    known = np.isfinite(targets)
    label_loss = np.mean((student[known, 0] - targets[known]) ** 2)
    distilled = np.mean((student[:, 0] - teacher[:, 0]) ** 2)
    np.testing.assert_allclose(got["loss"], 0.5 * distilled + 0.5 * label_loss, rtol=1e-5)
    variable = tf.Variable(student, dtype=tf.float32)
    with tf.GradientTape() as tape:
        tensors = {k: tf.constant(v) for k, v in features.items()}
        loss = objective.loss(variable, tensors, objective.totals(tensors))["loss"]
    assert np.all(np.isfinite(tape.gradient(loss, variable).numpy()))

    teacher, student = RNG.normal(size=(BATCH, LABELS)), RNG.normal(size=(BATCH, LABELS))
    hot = (RNG.random((BATCH, LABELS)) < 0.5).astype(np.float32)
    hot[[0, 3]] = np.nan
    objective = DistillationObjective(
        FixedTeacher(teacher),
        HeadObjective(SigmoidCrossEntropy(), labels="label_ids"),
        T,
        0.25,
        labelled=lambda f: tf.cast(
            tf.reduce_all(tf.math.is_finite(f["label_ids"]), axis=1), tf.float32
        ),
    )
    got = split_loss(objective, student, features_of(label_ids=hot))
    known = np.isfinite(hot).all(axis=1)
    x, z = student[known].astype(np.float64), hot[known]
    label_loss = np.mean(np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x))))
    distilled = binary_kl(teacher, student, T).mean()
    np.testing.assert_allclose(got["loss"], 0.25 * distilled + 0.75 * label_loss, rtol=1e-5)


def test_token_distillation_averages_over_the_real_tokens_of_the_global_batch():
    teacher = RNG.normal(size=(BATCH, SEQ, LABELS)) * 2
    student = RNG.normal(size=(BATCH, SEQ, LABELS))
    labels = RNG.integers(0, LABELS, (BATCH, SEQ)).astype(np.int32)
    labels[:, 0] = -1
    labels[[2, 5]] = -1  # unlabelled sentences
    features = features_of(label_ids=labels)
    labels[features["input_mask"] == 0] = -1
    objective = DistillationObjective(
        FixedTeacher(teacher), HeadObjective(TokenCrossEntropy(), labels="label_ids"), T, 0.6
    )
    got = split_loss(objective, student, features)
    mask = features["input_mask"].astype(bool)
    distilled = softmax_kl(teacher, student, T)[mask].mean()
    known = labels >= 0
    label_loss = cross_entropy(student, np.maximum(labels, 0))[known].mean()
    np.testing.assert_allclose(got["distillation_loss"], distilled, rtol=1e-5)
    np.testing.assert_allclose(got["loss"], 0.6 * distilled + 0.4 * label_loss, rtol=1e-5)


def test_span_distillation_weighs_start_and_end_by_half():
    teacher = {k: RNG.normal(size=(BATCH, SEQ)) * 2 for k in ("start_logits", "end_logits")}
    student = {k: RNG.normal(size=(BATCH, SEQ)) for k in ("start_logits", "end_logits")}
    starts = np.array([1, -1, 2, 0, -1, 4], np.int32)
    ends = np.array([2, -1, 3, 0, -1, 4], np.int32)
    objective = DistillationObjective(
        FixedTeacher(teacher),
        HeadObjective(
            {
                "start_logits": SoftmaxCrossEntropy(name="start"),
                "end_logits": SoftmaxCrossEntropy(name="end"),
            },
            labels={"start_logits": "start_positions", "end_logits": "end_positions"},
            loss_weights={"start_logits": 0.5, "end_logits": 0.5},
        ),
        T,
        0.5,
        labelled=lambda f: tf.cast(f["start_positions"] >= 0, tf.float32),
    )
    got = split_loss(objective, student, features_of(start_positions=starts, end_positions=ends))
    known = starts >= 0
    distilled = sum(0.5 * softmax_kl(teacher[k], student[k], T).mean() for k in teacher)
    label_loss = 0.5 * cross_entropy(student["start_logits"][known], starts[known]).mean()
    label_loss += 0.5 * cross_entropy(student["end_logits"][known], ends[known]).mean()
    np.testing.assert_allclose(got["distillation_loss"], distilled, rtol=1e-5)
    np.testing.assert_allclose(got["loss"], 0.5 * distilled + 0.5 * label_loss, rtol=1e-5)


def test_labelled_only_is_the_mean_over_the_labelled_examples_and_round_trips():
    logits = RNG.normal(size=(BATCH, LABELS))
    labels = np.array([1, 0, 3, 2, 1, 0])
    mask = np.array([1, 0, 1, 1, 0, 0], np.float32)
    loss = LabelledOnly(SoftmaxCrossEntropy())
    got = float(loss(tf.constant(labels), tf.constant(logits), tf.constant(mask)))
    np.testing.assert_allclose(got, cross_entropy(logits, labels)[mask > 0].mean(), rtol=1e-5)
    assert float(loss(tf.constant(labels), tf.constant(logits), tf.zeros(BATCH))) == 0.0
    again = LabelledOnly.from_config(loss.get_config())
    assert isinstance(again.loss, SoftmaxCrossEntropy)
