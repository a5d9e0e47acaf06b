"""--class_weights: the weighted cross-entropy against numpy, the balanced
weights against scikit-learn, and the refusals."""

import numpy as np
import pytest
import tensorflow as tf
from sklearn.utils.class_weight import compute_class_weight

from bert_tf.data.classification.class_weights import (
    balanced_class_weights,
    parse_class_weights,
)
from bert_tf.errors import InputError
from bert_tf.options import build
from bert_tf.tasks.classifier import ClassifierRunner
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.tasks.logits import ClassificationObjective


def objective_loss(logits, labels, class_weights):
    return loss_of(ClassificationObjective(False, class_weights), logits, labels)


def loss_of(objective, logits, labels):
    features = {"label_ids": tf.constant(labels)}
    totals = {k: tf.cast(v, tf.float32) for k, v in objective.totals(features).items()}
    return float(objective.loss(tf.constant(logits), features, totals)["loss"])


def test_weighted_loss_is_the_weighted_sum_of_cross_entropies_over_the_examples():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(7, 3)).astype(np.float32)
    labels = np.array([0, 2, 1, 1, 0, 2, 2], np.int32)
    weights = [0.5, 3.0, 1.25]
    shifted = logits.astype(np.float64) - logits.max(1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    cross_entropy = -log_probs[np.arange(7), labels]
    expected = np.sum(np.array(weights)[labels] * cross_entropy) / len(labels)
    assert objective_loss(logits, labels, weights) == pytest.approx(expected, rel=1e-6)
    assert objective_loss(logits, labels, None) == pytest.approx(cross_entropy.mean(), rel=1e-6)
    assert objective_loss(logits, labels, [1.0, 1.0, 1.0]) == objective_loss(logits, labels, None)
    assert abs(expected - cross_entropy.mean()) > 0.1  # the weights matter here


def test_balanced_weights_are_scikit_learns():
    labels = ["neg", "neutral", "pos"]
    train = ["pos"] * 6 + ["neg"] * 3 + ["neutral"]
    expected = compute_class_weight("balanced", classes=np.array(labels), y=np.array(train))
    np.testing.assert_allclose(balanced_class_weights(train, labels), expected, rtol=1e-12)
    assert balanced_class_weights(train, labels) == [10 / 9, 10 / 3, 10 / 18]
    with pytest.raises(InputError, match=r"no train example of label\(s\) 'other'"):
        balanced_class_weights(train, [*labels, "other"])


def test_explicit_weights_and_refusals(tmp_path):
    assert parse_class_weights("1, 3,0.5", ["a", "b", "c"]) == [1.0, 3.0, 0.5]
    with pytest.raises(InputError, match=r"2 weights for 3 labels \('a', 'b', 'c'\)"):
        parse_class_weights("1,3", ["a", "b", "c"])
    with pytest.raises(InputError, match="positive"):
        parse_class_weights("1,0", ["a", "b"])
    with pytest.raises(InputError, match="'balanced' or comma-separated numbers"):
        parse_class_weights("1,x", ["a", "b"])
    options = build(
        ClassifierOptions,
        task_name="sts-b",
        data_dir=str(tmp_path),
        vocab_file="vocab.txt",
        bert_config_file="bert_config.json",
        output_dir=str(tmp_path / "out"),
        class_weights="balanced",
    )
    with pytest.raises(InputError, match="^--class_weights is for classification; task sts-b"):
        ClassifierRunner(options).validate()


def test_the_classifier_runners_objective_weighs_the_loss_by_class_weights(tmp_path):
    """--class_weights=1,3 reaches the training objective run_classifier builds."""
    options = build(
        ClassifierOptions,
        task_name="mrpc",
        data_dir=str(tmp_path),
        vocab_file="vocab.txt",
        bert_config_file="bert_config.json",
        output_dir=str(tmp_path / "out"),
        do_train=True,
        class_weights="1,3",
    )
    runner = ClassifierRunner(options)
    runner.validate()
    runner.read_inputs()
    logits = np.array([[2.0, -1.0], [0.5, 0.25], [-1.0, 1.5], [0.0, 3.0]], np.float32)
    labels = np.array([0, 1, 1, 0], np.int32)
    p = np.exp(logits.astype(np.float64))
    cross_entropy = -np.log(p[np.arange(4), labels] / p.sum(1))
    expected = np.sum(np.array([1.0, 3.0])[labels] * cross_entropy) / 4
    assert loss_of(runner.objective(), logits, labels) == pytest.approx(expected, rel=1e-6)
    assert abs(expected - cross_entropy.mean()) > 0.3
