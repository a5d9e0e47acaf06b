"""Entity-level precision / recall / F1 as the CoNLL `conlleval` script computes them.

Chunks are read from the tags by `bert_tf.text.tags.chunks` (schemes "bio",
"bioes", "bmes"). Sentences are separate (conlleval's blank line
counts as an O). A chunk is correct when a predicted chunk has the same
type, start and end as a gold one. All scores are fractions in [0, 1]
(conlleval prints them times 100); a score with a zero denominator is 0.
"""

import collections
import dataclasses

import numpy as np

from bert_tf.errors import InputError
from bert_tf.text.tags import chunks


@dataclasses.dataclass(frozen=True)
class Scores:
    """Entity precision, recall, F1 (fractions) and the chunk counts behind them."""

    precision: float
    recall: float
    f1: float
    num_gold: int
    num_predicted: int
    num_correct: int


def _scores(num_gold, num_predicted, num_correct):
    precision = num_correct / num_predicted if num_predicted else 0.0
    recall = num_correct / num_gold if num_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return Scores(precision, recall, f1, num_gold, num_predicted, num_correct)


def entity_scores(gold_sentences, predicted_sentences, scheme="bio"):
    """conlleval's scores of `predicted_sentences` against `gold_sentences`
    (lists of lists of tags, sentence by sentence, same lengths), chunks as
    `scheme` finds them.

    Returns `(overall, by_type)`: a `Scores` and `{type: Scores}` for every
    type seen in the gold or predicted chunks.
    """
    if len(gold_sentences) != len(predicted_sentences):
        raise InputError(
            f"{len(gold_sentences)} gold sentences but {len(predicted_sentences)} predicted"
        )
    counts = collections.defaultdict(lambda: [0, 0, 0])  # gold, predicted, correct
    for index, (gold, predicted) in enumerate(zip(gold_sentences, predicted_sentences)):
        if len(gold) != len(predicted):
            raise InputError(
                f"sentence {index}: {len(gold)} gold tags but {len(predicted)} predicted"
            )
        gold_chunks, predicted_chunks = chunks(gold, scheme), chunks(predicted, scheme)
        for chunk in gold_chunks:
            counts[chunk[0]][0] += 1
        for chunk in predicted_chunks:
            counts[chunk[0]][1] += 1
        for chunk in gold_chunks & predicted_chunks:
            counts[chunk[0]][2] += 1
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    return _scores(*totals), {t: _scores(*c) for t, c in sorted(counts.items())}


def eval_metrics(gold_tags, predicted_tags, losses, scheme="bio"):
    """run_ner.py's eval_results.txt: conlleval's entity scores (fractions; chunks in
    `scheme`), per type `precision_<T>` / `recall_<T>` / `f1_<T>`, and
    `eval_loss` = `loss` (mean of `losses`, the cross-entropy of each word)."""
    overall, by_type = entity_scores(gold_tags, predicted_tags, scheme)
    metrics = {
        "precision": overall.precision,
        "recall": overall.recall,
        "f1": overall.f1,
        "eval_loss": float(np.mean(losses)),
        "loss": float(np.mean(losses)),
    }
    for name, scores in by_type.items():
        metrics.update(
            {
                f"precision_{name}": scores.precision,
                f"recall_{name}": scores.recall,
                f"f1_{name}": scores.f1,
            }
        )
    return metrics
