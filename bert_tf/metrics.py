"""GLUE metrics in plain numpy (equal to scikit-learn's / scipy's).

Degenerate inputs: `matthews_corrcoef` is 0.0 when the predictions or the
labels are constant (scikit-learn's convention); `f1_score` is 0.0 when
there is no positive label or prediction; `pearson` / `spearman` are nan
when either side is constant (scipy's result) or has fewer than 2 values;
every metric of empty inputs is nan.
"""

import numpy as np


def _pair(predictions, labels):
    predictions = np.asarray(predictions)
    labels = np.asarray(labels)
    if predictions.shape != labels.shape or predictions.ndim != 1:
        raise ValueError(
            f"predictions {predictions.shape} and labels {labels.shape} must be "
            "1-D of the same length"
        )
    return predictions, labels


def accuracy(predictions, labels):
    """Fraction of predictions equal to the labels."""
    predictions, labels = _pair(predictions, labels)
    if not len(labels):
        return float("nan")
    return float(np.mean(predictions == labels))


def f1_score(predictions, labels, positive_label=1):
    """Binary F1 of `positive_label`: 2 TP / (2 TP + FP + FN); 0.0 if undefined."""
    predictions, labels = _pair(predictions, labels)
    if not len(labels):
        return float("nan")
    predicted = predictions == positive_label
    actual = labels == positive_label
    tp = np.sum(predicted & actual)
    denominator = np.sum(predicted) + np.sum(actual)
    return float(2 * tp / denominator) if denominator else 0.0


def matthews_corrcoef(predictions, labels):
    """Matthews correlation (multi-class form, as scikit-learn); 0.0 if undefined."""
    predictions, labels = _pair(predictions, labels)
    n = len(labels)
    if not n:
        return float("nan")
    classes, encoded = np.unique(np.concatenate([labels, predictions]), return_inverse=True)
    true_counts = np.bincount(encoded[:n], minlength=len(classes)).astype(np.float64)
    pred_counts = np.bincount(encoded[n:], minlength=len(classes)).astype(np.float64)
    correct = float(np.sum(predictions == labels))
    cov_tp = correct * n - true_counts @ pred_counts
    cov_pp = float(n) * n - pred_counts @ pred_counts
    cov_tt = float(n) * n - true_counts @ true_counts
    if cov_pp * cov_tt == 0:
        return 0.0
    return float(cov_tp / np.sqrt(cov_tt * cov_pp))


def pearson(predictions, labels):
    """Pearson correlation; nan if a side is constant or has < 2 values."""
    x, y = _pair(predictions, labels)
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    x = x.astype(np.float64) - np.mean(x, dtype=np.float64)
    y = y.astype(np.float64) - np.mean(y, dtype=np.float64)
    x_max, y_max = np.max(np.abs(x)), np.max(np.abs(y))
    if x_max == 0 or y_max == 0:
        return float("nan")
    # Scaled, then normalized (as scipy), so large values do not overflow.
    x, y = x / x_max, y / y_max
    return float(np.clip(np.dot(x / np.linalg.norm(x), y / np.linalg.norm(y)), -1.0, 1.0))


def rankdata(values):
    """1-based ranks, ties given their average rank (scipy's "average")."""
    values = np.asarray(values)
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    # Start of each run of equal values in sorted order.
    starts = np.concatenate([[True], sorted_values[1:] != sorted_values[:-1]])
    run_ids = np.cumsum(starts) - 1
    run_starts = np.flatnonzero(starts)
    run_ends = np.concatenate([run_starts[1:], [len(values)]])
    average = (run_starts + run_ends + 1) / 2.0  # mean of ranks start+1 .. end
    ranks = np.empty(len(values), dtype=np.float64)
    ranks[order] = average[run_ids]
    return ranks


def spearman(predictions, labels):
    """Spearman rank correlation (average ranks for ties); nan if a side is constant."""
    x, y = _pair(predictions, labels)
    return pearson(rankdata(x), rankdata(y))


def _class_ids(predictions):
    predictions = np.asarray(predictions)
    return np.argmax(predictions, axis=-1) if predictions.ndim == 2 else predictions


def _values(predictions):
    predictions = np.asarray(predictions, dtype=np.float64)
    return predictions[:, 0] if predictions.ndim == 2 and predictions.shape[1] == 1 else predictions


GLUE_METRIC_KEYS = {
    "accuracy": ("eval_accuracy",),
    "matthews": ("eval_accuracy", "matthews_corr"),
    "f1_accuracy": ("eval_accuracy", "f1", "acc_and_f1"),
    "pearson_spearman": ("pearson", "spearmanr", "corr"),
}


def glue_metrics(metric_name, predictions, labels):
    """The metric set `metric_name` (a `DataProcessor.metric`) as a dict of floats.

    Args:
      metric_name: "accuracy" -> eval_accuracy; "matthews" -> eval_accuracy,
        matthews_corr; "f1_accuracy" -> eval_accuracy, f1 (label id 1 is the
        positive class), acc_and_f1 (their mean); "pearson_spearman" ->
        pearson, spearmanr, corr (their mean).
      predictions: class ids [n], or scores [n, num_labels] (argmax is taken);
        for regression, values [n] or [n, 1].
      labels: label ids / values [n] (of real examples only).
    """
    if metric_name not in GLUE_METRIC_KEYS:
        raise ValueError(
            f"unknown metric {metric_name!r}: use one of {', '.join(GLUE_METRIC_KEYS)}"
        )
    if metric_name == "pearson_spearman":
        values, labels = _values(predictions), np.asarray(labels, dtype=np.float64)
        p, s = pearson(values, labels), spearman(values, labels)
        return {"pearson": p, "spearmanr": s, "corr": (p + s) / 2}
    ids = _class_ids(predictions)
    result = {"eval_accuracy": accuracy(ids, labels)}
    if metric_name == "matthews":
        result["matthews_corr"] = matthews_corrcoef(ids, labels)
    elif metric_name == "f1_accuracy":
        result["f1"] = f1_score(ids, labels)
        result["acc_and_f1"] = (result["eval_accuracy"] + result["f1"]) / 2
    return result
