"""Exact match and F1 as CMRC 2018's official `cmrc2018_evaluate.py` computes them.

CMRC 2018 (Simplified Chinese) and DRCD (Traditional Chinese) are scored
with this script instead of SQuAD's, which splits answers on whitespace and
so gives no partial credit on Chinese (F1 = EM). Per question, the best
over its gold answers of:

* EM: 1 when the texts are equal after lower-casing, stripping and removing
  the script's punctuation list (`PUNCTUATION`);
* F1: both texts cut by `mixed_segmentation` (each Chinese character
  U+4E00..U+9FA5 and each punctuation mark alone, the other text as words;
  punctuation removed), precision and recall of their longest common
  substring of segments.

Scores are percentages over all questions of the dataset; a question
without a prediction scores 0 and counts in `SKIP`. `AVERAGE` is the mean
of EM and F1. Differences from the script: English words inside the text
are split by `_words` (runs of letters and digits, joined by inner `.`
`,` `'` as in "3.5", "1,000"; every other character alone) instead of
nltk's `word_tokenize` (which needs a download; it also splits "don't" into
"do n't"); scores are floats, not strings rounded to 3 decimals; a question
without gold answers is an InputError (the script crashes).
"""

import re

from bert_tf.errors import InputError
from bert_tf.metrics.squad import gold_answers

# The script's `sp_char` list (its "……" is two characters and never matches one).
PUNCTUATION = frozenset("-:_*^/\\~`+=，。：？！“”；’《》·、「」（）－～『』")
_CHINESE = re.compile("[\u4e00-\u9fa5]")
_WORDS = re.compile(r"\w+(?:[.,']\w+)*|\S")


def _words(text):
    """English (non-Chinese) text -> words, standing in for nltk.word_tokenize."""
    return _WORDS.findall(text)


def mixed_segmentation(text, remove_punctuation=False):
    """Lower-cased, stripped `text` cut into Chinese characters, punctuation
    marks and the words of the text between them."""
    segments = []
    pending = ""
    for char in text.lower().strip():
        if remove_punctuation and char in PUNCTUATION:
            continue
        if _CHINESE.match(char) or char in PUNCTUATION:
            segments.extend(_words(pending))
            pending = ""
            segments.append(char)
        else:
            pending += char
    segments.extend(_words(pending))
    return segments


def without_punctuation(text):
    """Lower-cased, stripped `text` without the characters of `PUNCTUATION`."""
    return "".join(char for char in text.lower().strip() if char not in PUNCTUATION)


def longest_common_substring(first, second):
    """Length of the longest run of equal consecutive items of two sequences."""
    best = 0
    previous = [0] * (len(second) + 1)
    for item in first:
        current = [0] * (len(second) + 1)
        for j, other in enumerate(second):
            if item == other:
                current[j + 1] = previous[j] + 1
                best = max(best, current[j + 1])
        previous = current
    return best


def f1_score(prediction, gold):
    """F1 of one prediction against one gold answer (0 to 1)."""
    gold_segments = mixed_segmentation(gold, remove_punctuation=True)
    prediction_segments = mixed_segmentation(prediction, remove_punctuation=True)
    common = longest_common_substring(gold_segments, prediction_segments)
    if common == 0:
        return 0.0
    precision = common / len(prediction_segments)
    recall = common / len(gold_segments)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction, gold):
    """1 if the texts are equal without punctuation, else 0."""
    return int(without_punctuation(prediction) == without_punctuation(gold))


def evaluate_cmrc2018(examples_or_dataset, predictions):
    """CMRC 2018 / DRCD scores: `{"AVERAGE", "F1", "EM", "TOTAL", "SKIP"}`
    (percentages, then question counts), in the script's key order.

    `examples_or_dataset` as `evaluation.evaluate_v1` takes it;
    `predictions`: {qas_id: answer text}.
    """
    f1 = exact = 0.0
    total = skipped = 0
    for qas_id, answers in gold_answers(examples_or_dataset):
        total += 1
        if not answers:
            raise InputError(f"question {qas_id!r} has no gold answer; CMRC 2018 needs one")
        if qas_id not in predictions:
            skipped += 1
            continue
        prediction = str(predictions[qas_id])
        f1 += max(f1_score(prediction, gold) for gold in answers)
        exact += max(exact_match(prediction, gold) for gold in answers)
    f1, exact = 100.0 * f1 / total, 100.0 * exact / total
    return {"AVERAGE": (exact + f1) / 2, "F1": f1, "EM": exact, "TOTAL": total, "SKIP": skipped}
