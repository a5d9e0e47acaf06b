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


# -- multi-label -------------------------------------------------------------------


def _f1_of_counts(tp, fp, fn):
    """F1 from counts (arrays or numbers); 0.0 where there is no positive label or prediction."""
    denominator = 2 * tp + fp + fn
    return np.where(denominator > 0, 2 * tp / np.maximum(denominator, 1), 0.0)


def multi_label_metrics(probabilities, labels, thresholds, label_names):
    """Metrics of multi-label predictions `probabilities >= thresholds`.

    Args:
      probabilities: `[n, num_labels]` sigmoid outputs.
      labels: `[n, num_labels]` 0/1 (multi-hot).
      thresholds: `[num_labels]` (or one number).
      label_names: the labels' names, for the per-label keys.
    Returns:
      `micro_f1` (F1 of the counts summed over labels), `macro_f1` (the mean
      of the labels' F1), `exact_match` (examples with every label right) and
      per label `precision_<name>`, `recall_<name>`, `f1_<name>` (0.0 where
      undefined, as scikit-learn's default).
    """
    predicted = np.asarray(probabilities) >= np.asarray(thresholds)
    truth = np.asarray(labels) > 0.5
    tp = np.sum(predicted & truth, axis=0)
    fp = np.sum(predicted & ~truth, axis=0)
    fn = np.sum(~predicted & truth, axis=0)
    f1 = _f1_of_counts(tp, fp, fn)
    metrics = {
        "micro_f1": float(_f1_of_counts(tp.sum(), fp.sum(), fn.sum())),
        "macro_f1": float(np.mean(f1)),
        "exact_match": float(np.mean(np.all(predicted == truth, axis=1))),
    }
    for i, name in enumerate(label_names):
        metrics[f"precision_{name}"] = float(tp[i] / (tp[i] + fp[i])) if tp[i] + fp[i] else 0.0
        metrics[f"recall_{name}"] = float(tp[i] / (tp[i] + fn[i])) if tp[i] + fn[i] else 0.0
        metrics[f"f1_{name}"] = float(f1[i])
    return metrics


def tune_thresholds(probabilities, labels, default=0.5):
    """Per label, the threshold that maximises the label's F1 of
    `probabilities >= threshold` on these examples (`[n, num_labels]` each).

    Among the F1-maximising cuts between consecutive distinct probabilities,
    the one nearest `default` is taken, and the threshold is the midpoint of
    its gap (so it does not sit on one example's probability). A label with
    no positive example keeps `default`. Returns a list of floats.
    """
    probabilities = np.asarray(probabilities, np.float64)
    truth = np.asarray(labels) > 0.5
    thresholds = []
    for p, positive in zip(probabilities.T, truth.T):
        if not positive.any():
            thresholds.append(float(default))
            continue
        values = np.unique(p)  # ascending; candidate t = values[k]: predict p >= t
        cuts = np.concatenate([[values[0] / 2], (values[1:] + values[:-1]) / 2])
        predicted = p[None, :] >= cuts[:, None]
        tp = np.sum(predicted & positive, axis=1)
        fp = np.sum(predicted & ~positive, axis=1)
        fn = np.sum(~predicted & positive, axis=1)
        f1 = _f1_of_counts(tp, fp, fn)
        best = np.flatnonzero(f1 == f1.max())
        thresholds.append(float(cuts[best[np.argmin(np.abs(cuts[best] - default))]]))
    return thresholds
