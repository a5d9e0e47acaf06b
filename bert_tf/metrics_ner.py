"""Entity-level precision / recall / F1 as the CoNLL `conlleval` script computes them.

Tags are `O` or `<prefix>-<TYPE>` with prefix B or I (IOB1 and BIO / IOB2
alike). Chunks are found with
conlleval's `startOfChunk` / `endOfChunk` rules: B starts a chunk, and so does
an I after O or after a tag of another type (IOB1); a chunk ends before O, B,
or a tag of another type. Sentences are separate (conlleval's blank line
counts as an O). A chunk is correct when a predicted chunk has the same
type, start and end as a gold one. All scores are fractions in [0, 1]
(conlleval prints them times 100); a score with a zero denominator is 0.
"""

import collections
import dataclasses

from bert_tf.errors import InputError

OUTSIDE = "O"


def split_tag(tag):
    """`"B-PER"` -> `("B", "PER")`; `"O"` -> `("O", "")`."""
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, entity_type = tag.partition("-")
    if not sep or prefix not in ("B", "I") or not entity_type:
        raise InputError(f"tag {tag!r} is neither O nor B-<TYPE> / I-<TYPE>")
    return prefix, entity_type


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


def chunks(tags):
    """The entity chunks of one sentence's tags: a set of `(type, first, last)`
    word indices (inclusive)."""
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


def entity_scores(gold_sentences, predicted_sentences):
    """conlleval's scores of `predicted_sentences` against `gold_sentences`
    (lists of lists of tags, sentence by sentence, same lengths).

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
        gold_chunks, predicted_chunks = chunks(gold), chunks(predicted)
        for chunk in gold_chunks:
            counts[chunk[0]][0] += 1
        for chunk in predicted_chunks:
            counts[chunk[0]][1] += 1
        for chunk in gold_chunks & predicted_chunks:
            counts[chunk[0]][2] += 1
    totals = [sum(c[i] for c in counts.values()) for i in range(3)]
    return _scores(*totals), {t: _scores(*c) for t, c in sorted(counts.items())}
