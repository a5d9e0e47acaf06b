"""Logits over labels (or choices), shared by the classifier and
multiple-choice tasks: the training loss, the windows of an example combined
into one prediction, and softmax / cross-entropy in numpy for evaluation."""

import numpy as np
import tensorflow as tf

from bert_tf.text.packing import average_windows
from bert_tf.training.loop import Objective


class ClassificationObjective(Objective):
    """Cross-entropy over labels, or squared error for regression, averaged
    over the global batch.

    `class_weights` (classification; one per label): example i's
    cross-entropy counts `class_weights[y_i]` times, still divided by the
    number of examples: `sum_i w[y_i] * CE_i / N`.
    """

    def __init__(self, is_regression, class_weights=None):
        self.is_regression = is_regression
        self.class_weights = None
        if class_weights is not None:
            self.class_weights = tf.constant(class_weights, tf.float32)

    def totals(self, features):
        return {"examples": tf.shape(features["label_ids"])[0]}

    def loss(self, outputs, features, totals):
        if self.is_regression:
            errors = tf.square(outputs[:, 0] - tf.cast(features["label_ids"], tf.float32))
        else:
            errors = tf.nn.sparse_softmax_cross_entropy_with_logits(features["label_ids"], outputs)
            if self.class_weights is not None:
                errors *= tf.gather(self.class_weights, features["label_ids"])
        return {"loss": tf.reduce_sum(errors) / totals["examples"]}


class MultiLabelObjective(Objective):
    """Multi-label: binary cross-entropy of each label's sigmoid, averaged
    over the labels and the examples of the global batch:
    `sum_i mean_l BCE_il / N` (`label_ids` are multi-hot floats `[batch, labels]`)."""

    def totals(self, features):
        return {"examples": tf.shape(features["label_ids"])[0]}

    def loss(self, outputs, features, totals):
        errors = tf.nn.sigmoid_cross_entropy_with_logits(features["label_ids"], outputs)
        return {"loss": tf.reduce_sum(tf.reduce_mean(errors, axis=1)) / totals["examples"]}


def combine_windows(predictions):
    """Per-feature predictions -> per-example: real rows only, logits of the
    windows of one example averaged, examples in `example_index` order."""
    real = predictions["is_real_example"] == 1
    index = predictions["example_index"][real]
    logits = predictions["logits"][real]
    examples, position = np.unique(index, return_inverse=True)
    means = average_windows(logits.astype(np.float64), position, len(examples))
    label_ids = predictions["label_ids"]
    labels = np.zeros((len(examples), *label_ids.shape[1:]), label_ids.dtype)
    labels[position] = label_ids[real]
    return means.numpy().astype(np.float32), labels


def softmax(logits):
    """Row-wise softmax of numpy logits `[n, labels]`, in their dtype."""
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def cross_entropy(logits, labels):
    """Mean negative log-likelihood of `labels` `[n]` under `logits` `[n, labels]`
    (float64), as a Python float."""
    log_probs = np.log(softmax(logits.astype(np.float64)))
    return float(-np.mean(log_probs[np.arange(len(labels)), labels]))


def sigmoid(logits):
    """Element-wise logistic of numpy logits, in their dtype."""
    return 1 / (1 + np.exp(-logits))


def binary_cross_entropy(logits, labels):
    """Mean over examples and labels of the sigmoid cross-entropy of
    multi-hot `labels` under `logits` (both `[n, labels]`; float64), as a float."""
    x, z = logits.astype(np.float64), labels.astype(np.float64)
    return float(np.mean(np.maximum(x, 0) - x * z + np.log1p(np.exp(-np.abs(x)))))
