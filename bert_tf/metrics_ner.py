"""Entity-level precision / recall / F1 as the CoNLL `conlleval` script computes them.

Tags are `O` or `<prefix>-<TYPE>`; the tagging scheme says which prefixes:
- "bio": B or I (IOB1 and BIO / IOB2 alike). Chunks are found with
  conlleval's `startOfChunk` / `endOfChunk` rules: B starts a chunk, and so
  does an I after O or after a tag of another type (IOB1); a chunk ends
  before O, B, or a tag of another type.
- "bioes": B, I, E, S, strictly (as seqeval's strict IOBES mode): a chunk
  is `B I* E` of one type or a single `S`; any other run is no chunk.
- "bmes": "bioes" with M for I (Chinese segmentation style).
Sentences are separate (conlleval's blank line
counts as an O). A chunk is correct when a predicted chunk has the same
type, start and end as a gold one. All scores are fractions in [0, 1]
(conlleval prints them times 100); a score with a zero denominator is 0.
"""

import collections
import dataclasses

import numpy as np

from bert_tf.errors import InputError

OUTSIDE = "O"
# The prefixes of each tagging scheme, in the order of an entity's tags.
SCHEMES = {"bio": ("B", "I"), "bioes": ("B", "I", "E", "S"), "bmes": ("B", "M", "E", "S")}


def split_tag(tag, scheme="bio"):
    """`"B-PER"` -> `("B", "PER")`; `"O"` -> `("O", "")`; InputError when the
    prefix is not one of `scheme`'s."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, entity_type = tag.partition("-")
    if not sep or prefix not in SCHEMES[scheme] or not entity_type:
        expected = " / ".join(f"{p}-<TYPE>" for p in SCHEMES[scheme])
        raise InputError(f"tag {tag!r} is neither O nor {expected}")
    return prefix, entity_type


def detect_scheme(labels):
    """The scheme of a label set: "bmes" with an M- tag, else "bioes" with an
    E- or S- tag, else "bio"."""
    prefixes = {label.partition("-")[0] for label in labels if label != OUTSIDE}
    if "M" in prefixes:
        return "bmes"
    if prefixes & {"E", "S"}:
        return "bioes"
    return "bio"


def span_tags(entity_type, length, scheme):
    """The tags of one entity of `length` words: `["B-T", "I-T", ...]` in
    "bio", `B I* E` or `S` in "bioes", `B M* E` or `S` in "bmes"."""
    if scheme == "bio":
        prefixes = ["B"] + ["I"] * (length - 1)
    elif length == 1:
        prefixes = ["S"]
    else:
        begin, inside, end, _ = SCHEMES[scheme]
        prefixes = [begin] + [inside] * (length - 2) + [end]
    return [f"{prefix}-{entity_type}" for prefix in prefixes]


def _ends(prev_prefix, prefix, prev_type, entity_type):
    """conlleval's endOfChunk: the previous token closes a chunk."""
    if prev_prefix == OUTSIDE:
        return False
    return prefix in ("B", OUTSIDE) or prev_type != entity_type


def _starts(prev_prefix, prefix, prev_type, entity_type):
    """conlleval's startOfChunk: this token opens a chunk."""
    if prefix == OUTSIDE:
        return False
    return prefix == "B" or prev_prefix == OUTSIDE or prev_type != entity_type


def _strict_chunks(tags, scheme):
    """The chunks of "bioes" / "bmes" tags: `B I* E` (`B M* E`) of one type, or `S`."""
    found = set()
    start = None  # the open chunk's first index
    open_type = ""
    for index, tag in enumerate(tags):
        prefix, entity_type = split_tag(tag, scheme)
        if start is not None and prefix in ("I", "M", "E") and entity_type == open_type:
            if prefix == "E":
                found.add((open_type, start, index))
                start = None
            continue
        start = None
        if prefix == "S":
            found.add((entity_type, index, index))
        elif prefix == "B":
            start, open_type = index, entity_type
    return found


def chunks(tags, scheme="bio"):
    """The entity chunks of one sentence's tags: a set of `(type, first, last)`
    word indices (inclusive)."""
    if scheme != "bio":
        return _strict_chunks(tags, scheme)
    found = set()
    prev_prefix, prev_type, start = OUTSIDE, "", None
    for index, tag in enumerate([*tags, OUTSIDE]):
        prefix, entity_type = split_tag(tag)
        if start is not None and _ends(prev_prefix, prefix, prev_type, entity_type):
            found.add((prev_type, start, index - 1))
            start = None
        if _starts(prev_prefix, prefix, prev_type, entity_type):
            start = index
        prev_prefix, prev_type = prefix, entity_type
    return found


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
