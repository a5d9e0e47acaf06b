"""Per-label weights of the classification loss (`--class_weights`).

The weighted loss (`tasks.logits.ClassificationObjective`) is
`sum_i w[y_i] * CE_i / N` over the N examples of the global batch: the
unweighted loss's normalisation, so weights of 1 give it exactly, and
`balanced` weights (whose mean over the train examples is 1) keep its scale.
"""

import math

from bert_tf.errors import InputError

BALANCED = "balanced"


def balanced_class_weights(train_labels, labels):
    """scikit-learn's "balanced": `n_examples / (n_labels * count[label])` per
    label of `labels`, counted over `train_labels` (the train examples' labels)."""
    counts = dict.fromkeys(labels, 0)
    for label in train_labels:
        counts[label] += 1
    missing = [label for label, count in counts.items() if count == 0]
    if missing:
        raise InputError(
            f"--class_weights=balanced: no train example of label(s) "
            f"{', '.join(map(repr, missing))}; give the weights explicitly"
        )
    total = sum(counts.values())
    return [total / (len(labels) * counts[label]) for label in labels]


def parse_class_weights(text, labels):
    """`--class_weights=1,3,1`: one positive number per label, in label order."""
    try:
        weights = [float(w) for w in str(text).split(",")]
    except ValueError:
        raise InputError(
            f"--class_weights={text}: expected '{BALANCED}' or comma-separated numbers"
        ) from None
    if len(weights) != len(labels):
        raise InputError(
            f"--class_weights={text}: {len(weights)} weights for {len(labels)} labels "
            f"({', '.join(map(repr, labels))})"
        )
    if not all(math.isfinite(w) and w > 0 for w in weights):
        raise InputError(f"--class_weights={text}: weights must be positive numbers")
    return weights
