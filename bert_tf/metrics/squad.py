"""Exact match and F1 of SQuAD predictions, as the official evaluation scripts compute them.

`evaluate_v1` follows evaluate-v1.1.py and `evaluate_v2` evaluate-v2.0.py
(with `null_odds` playing its `--na-prob-file`, `threshold` its
`--na-prob-thresh`). Both normalise answers the same way (lower case, ASCII
punctuation removed, the words a / an / the removed, whitespace collapsed)
and score a question by its best gold answer. They differ on empty answers:

* v1.1: the F1 of an empty prediction or an empty gold answer is 0; a
  question without a prediction scores 0 and counts in the total.
* v2.0: gold answers that normalise to "" are ignored, and a question
  without gold answers (unanswerable) has the single gold answer "", so its
  F1 is 1 exactly when the prediction normalises to "" ("", "the", "."); a
  question without a prediction is left out of every total (the official
  script prints "Missing prediction" and leaves it out of `total`, but
  crashes on its HasAns / NoAns split).

The dataset can be given as the official scripts take it (the JSON's `data`
list), as the whole JSON object, as a file path, or as `SquadExample`s read
from the file (their `answers`). Scores are percentages (0-100).
"""

import collections
import os
import re
import string

from absl import logging

from bert_tf.data.squad import reader
from bert_tf.errors import InputError

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_DATASET = "dataset"  # names an in-memory dataset in error messages


def normalize_answer(text):
    """Lower-cases `text` and removes ASCII punctuation, the articles a / an /
    the, and extra whitespace (in that order, as the official scripts)."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction, gold):
    """1 if the normalised texts are equal, else 0 (both scripts)."""
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_v1(prediction, gold):
    """Token F1 of the normalised texts as evaluate-v1.1.py (0 when either is empty)."""
    return _token_f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def f1_v2(prediction, gold):
    """Token F1 as evaluate-v2.0.py: when either text normalises to nothing,
    1 if both do, else 0."""
    prediction_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not prediction_tokens or not gold_tokens:
        return int(prediction_tokens == gold_tokens)
    return _token_f1(prediction_tokens, gold_tokens)


def _token_f1(prediction_tokens, gold_tokens):
    """F1 of the multiset overlap of two token lists (0 without overlap)."""
    num_same = sum(
        (collections.Counter(prediction_tokens) & collections.Counter(gold_tokens)).values()
    )
    if num_same == 0:
        return 0
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def evaluate_v1(examples_or_dataset, predictions):
    """SQuAD v1.1 metrics: `{"exact_match": ..., "f1": ...}` in percent.

    `predictions`: {qas_id: answer text}. Every question needs a gold answer
    (InputError otherwise: that is SQuAD 2.0 data).
    """
    golds = gold_answers(examples_or_dataset)
    exact = f1 = 0.0
    missing = 0
    for qas_id, answers in golds:
        if qas_id not in predictions:
            missing += 1
            continue
        if not answers:
            raise InputError(
                f"question {qas_id!r} has no gold answer; evaluate SQuAD 2.0 data with evaluate_v2"
            )
        prediction = predictions[qas_id]
        exact += max(exact_match(prediction, gold) for gold in answers)
        f1 += max(f1_v1(prediction, gold) for gold in answers)
    if missing:
        logging.warning("%d of %d questions have no prediction and score 0", missing, len(golds))
    return {"exact_match": 100.0 * exact / len(golds), "f1": 100.0 * f1 / len(golds)}


def evaluate_v2(examples_or_dataset, predictions, null_odds=None, threshold=1.0):
    """SQuAD v2.0 metrics, in the official script's key order.

    `predictions`: {qas_id: answer text, "" for no answer}. `null_odds`:
    {qas_id: float}, e.g. null_odds.json; a question whose value exceeds
    `threshold` is scored as answered "" (with the default None every value
    is 0.0, as the script without --na-prob-file). Returns exact, f1, total;
    HasAns_exact/_f1/_total and NoAns_exact/_f1/_total when there are such
    questions; best_exact, best_exact_thresh, best_f1, best_f1_thresh (the
    null_odds threshold that maximises each score on this data) only when
    `null_odds` is given.
    """
    all_golds = gold_answers(examples_or_dataset)
    golds = {qas_id: answers for qas_id, answers in all_golds if qas_id in predictions}
    missing = sum(1 for qas_id, _ in all_golds if qas_id not in predictions)
    if missing:
        logging.warning("%d questions have no prediction and are not scored", missing)
    if not golds:
        raise InputError("no prediction for any question of the dataset")
    has_answer = {qas_id: bool(answers) for qas_id, answers in golds.items()}
    exact_raw, f1_raw = _raw_scores_v2(golds, predictions)
    na_probs = null_odds if null_odds is not None else {qas_id: 0.0 for qas_id in golds}
    exact = _apply_null_threshold(exact_raw, na_probs, has_answer, threshold)
    f1 = _apply_null_threshold(f1_raw, na_probs, has_answer, threshold)
    result = _averages(exact, f1, list(golds))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qas_ids = [qas_id for qas_id, value in has_answer.items() if value == wanted]
        if qas_ids:
            for key, value in _averages(exact, f1, qas_ids).items():
                result[f"{prefix}_{key}"] = value
    if null_odds is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            best, best_thresh = _best_threshold(predictions, raw, null_odds, has_answer)
            result[f"best_{name}"] = best
            result[f"best_{name}_thresh"] = best_thresh
    return result


def _raw_scores_v2(golds, predictions):
    """({qas_id: EM}, {qas_id: F1}) before any null threshold."""
    exact_raw = {}
    f1_raw = {}
    for qas_id, answers in golds.items():
        answers = [text for text in answers if normalize_answer(text)] or [""]
        prediction = predictions[qas_id]
        exact_raw[qas_id] = max(exact_match(prediction, gold) for gold in answers)
        f1_raw[qas_id] = max(f1_v2(prediction, gold) for gold in answers)
    return exact_raw, f1_raw


def _apply_null_threshold(scores, na_probs, has_answer, threshold):
    """Scores with each question whose null odds exceed `threshold` scored as
    answered "" (1.0 if unanswerable, else 0.0)."""
    thresholded = {}
    for qas_id, score in scores.items():
        if qas_id not in na_probs:
            raise InputError(f"null_odds has no value for question {qas_id!r}")
        if na_probs[qas_id] > threshold:
            score = float(not has_answer[qas_id])
        thresholded[qas_id] = score
    return thresholded


def _averages(exact, f1, qas_ids):
    """{"exact", "f1", "total"} over `qas_ids` (percentages)."""
    total = len(qas_ids)
    return {
        "exact": 100.0 * sum(exact[k] for k in qas_ids) / total,
        "f1": 100.0 * sum(f1[k] for k in qas_ids) / total,
        "total": total,
    }


def _best_threshold(predictions, scores, na_probs, has_answer):
    """(best score in percent, null odds threshold giving it), as the official
    `find_best_thresh`.

    Starts from answering "" everywhere (every unanswerable question right),
    then, in increasing null odds, switches each question to its prediction
    (an answerable one gains its raw score, an unanswerable one answered
    non-empty loses 1) and keeps the best running total.
    """
    score = sum(1 for value in has_answer.values() if not value)
    best_score = score
    best_thresh = 0.0
    for qas_id in sorted(na_probs, key=na_probs.get):
        if qas_id not in scores:
            continue
        if has_answer[qas_id]:
            score += scores[qas_id]
        elif predictions[qas_id]:
            score -= 1
        if score > best_score:
            best_score = score
            best_thresh = na_probs[qas_id]
    return 100.0 * best_score / len(scores), best_thresh


def gold_answers(examples_or_dataset):
    """[(qas_id, [gold answer texts])] in dataset order.

    Accepts a SQuAD file path, its JSON object, its `data` list, or a list of
    `SquadExample`s. InputError if the dataset is malformed or has no question.
    """
    source = examples_or_dataset
    name = _DATASET
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)
        source = reader.load_squad_json(name)
    elif isinstance(source, dict):
        if not isinstance(source.get("data"), list):
            raise InputError(f"{_DATASET}: no 'data' list")
        source = source["data"]
    if source and not isinstance(source[0], dict):
        golds = [(str(example.qas_id), list(example.answers)) for example in source]
    else:
        golds = [
            (
                reader.question_id(qa, name, where),
                reader.answer_texts(qa, name, where, required=True),
            )
            for where, qa in reader.iter_questions(source, name)
        ]
    if not golds:
        raise InputError(f"{name} has no questions")
    return golds
