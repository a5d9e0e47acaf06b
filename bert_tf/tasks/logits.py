"""Logits over labels (or choices), shared by the classifier and
multiple-choice tasks: the training loss, the windows of an example combined
into one prediction, and softmax / cross-entropy in numpy for evaluation."""

import numpy as np

from bert_tf.modeling.losses import SigmoidCrossEntropy, SoftmaxCrossEntropy, SquaredError
from bert_tf.text.packing import average_windows
from bert_tf.training.objectives import HeadObjective


class ClassificationObjective(HeadObjective):
    """run_classifier.py's loss (`modeling.losses`, as `BertClassifier`'s
    `default_loss`): cross-entropy over labels, or squared error for regression, averaged
    over the global batch; `class_weights` (one per label) weigh each
    example's cross-entropy by its label's weight."""

    def __init__(self, is_regression, class_weights=None):
        loss = SquaredError() if is_regression else SoftmaxCrossEntropy(class_weights)
        super().__init__(loss, labels="label_ids")


class MultiLabelObjective(HeadObjective):
    """Multi-label (`modeling.losses.SigmoidCrossEntropy`): each label's
    binary cross-entropy, averaged over the labels and the global batch
    (`label_ids` multi-hot floats `[batch, labels]`)."""

    def __init__(self):
        super().__init__(SigmoidCrossEntropy(), labels="label_ids")


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
