"""Evaluation metrics as the reference scripts compute them: GLUE and
multi-label classification (`classification`), conlleval's entity scores
(`entities`), the official SQuAD v1.1 / v2.0 scripts (`squad`) and CMRC
2018's (`cmrc2018`)."""

import warnings

from bert_tf.imports import moved

# The names of 0.1.0's module bert_tf/metrics.py, now bert_tf.metrics.classification.
_CLASSIFICATION = (
    "GLUE_METRIC_KEYS",
    "accuracy",
    "f1_score",
    "glue_metrics",
    "matthews_corrcoef",
    "multi_label_metrics",
    "pearson",
    "rankdata",
    "spearman",
    "tune_thresholds",
)


def __getattr__(name):
    """`bert_tf.metrics.accuracy` and the rest of `_CLASSIFICATION`, with a
    DeprecationWarning, for one more release."""
    if name not in _CLASSIFICATION:
        raise AttributeError(f"module 'bert_tf.metrics' has no attribute {name!r}")
    new = f"bert_tf.metrics.classification.{name}"
    warnings.warn(moved.message(f"bert_tf.metrics.{name}", [new]), DeprecationWarning, stacklevel=2)
    from bert_tf.metrics import classification

    return getattr(classification, name)
