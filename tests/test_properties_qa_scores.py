"""Property tests: the SQuAD v1.1 / v2.0 and CMRC 2018 scorers
(bert_tf.metrics.squad, .cmrc2018) against references written here
from the official scripts' documented rules (evaluate-v1.1.py,
evaluate-v2.0.py, cmrc2018_evaluate.py)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_squad_eval import official_normalize

from bert_tf.metrics import cmrc2018
from bert_tf.metrics import squad as evaluation


def dataset(questions):
    """A `data` list of one paragraph; `questions`: [(id, [gold texts])]."""
    qas = [
        {"id": qas_id, "question": "?", "answers": [{"text": t, "answer_start": 0} for t in golds]}
        for qas_id, golds in questions
    ]
    return [{"paragraphs": [{"context": "c", "qas": qas}]}]


def bag_f1(prediction_tokens, gold_tokens):
    """F1 of the common tokens, each gold token matched at most once."""
    unmatched = list(gold_tokens)
    common = 0
    for token in prediction_tokens:
        if token in unmatched:
            unmatched.remove(token)
            common += 1
    if not common:
        return 0.0
    precision, recall = common / len(prediction_tokens), common / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


# -- SQuAD v1.1 ---------------------------------------------------------------------------------


def reference_v1(questions, predictions):
    exact = f1 = 0.0
    for qas_id, golds in questions:
        if qas_id in predictions:
            prediction = official_normalize(predictions[qas_id])
            exact += max(float(prediction == official_normalize(g)) for g in golds)
            f1 += max(bag_f1(prediction.split(), official_normalize(g).split()) for g in golds)
    return {"exact_match": 100 * exact / len(questions), "f1": 100 * f1 / len(questions)}


# Words that hit every normalisation rule: case, ASCII and other punctuation
# (which may join an article to a word), articles inside words, repeats.
WORDS = ["a", "an", "the", "The", "A", "cat", "Cat", "cats", "1", "x.y", "don't", "theme"]
WORDS += [".", ",", "-", "\u2014", "\u201ca\u201d", "(the)", "an-", "a\u2019b", "\u00e9t\u00e9"]
SEPARATORS = [" ", " ", " ", "", "  ", "\t", "\n"]


@st.composite
def answers(draw):
    words = draw(st.lists(st.sampled_from(WORDS), max_size=6))
    return "".join(w + draw(st.sampled_from(SEPARATORS)) for w in words)


question_ids = st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=8, unique=True)


@settings(max_examples=300)
@given(prediction=answers(), gold=answers())
def test_token_scores_are_the_official_rules(prediction, gold):
    normalized_prediction, normalized_gold = (
        official_normalize(prediction),
        official_normalize(gold),
    )
    assert evaluation.normalize_answer(prediction) == normalized_prediction
    assert evaluation.exact_match(prediction, gold) == (normalized_prediction == normalized_gold)
    f1 = bag_f1(normalized_prediction.split(), normalized_gold.split())
    assert evaluation.f1_v1(prediction, gold) == pytest.approx(f1)
    # v2.0: an answer that normalises to nothing agrees only with another such answer.
    if not normalized_prediction or not normalized_gold:
        f1 = float(normalized_prediction == normalized_gold)
    assert evaluation.f1_v2(prediction, gold) == pytest.approx(f1)


@settings(max_examples=100)
@given(data=st.data(), ids=question_ids)
def test_evaluate_v1_is_the_official_score(data, ids):
    questions = [(i, data.draw(st.lists(answers(), min_size=1, max_size=3))) for i in ids]
    answered = data.draw(st.lists(st.sampled_from(ids), unique=True))
    predictions = {i: data.draw(answers()) for i in answered}
    result = evaluation.evaluate_v1(dataset(questions), predictions)
    assert result == pytest.approx(reference_v1(questions, predictions))


# -- SQuAD v2.0 ---------------------------------------------------------------------------------


def reference_v2(questions, predictions, null_odds, threshold):
    """evaluate-v2.0.py's main() with every question answered; `null_odds`
    None as without --na-prob-file."""
    has_answer = {qas_id: bool(golds) for qas_id, golds in questions}
    exact_raw, f1_raw = {}, {}
    for qas_id, golds in questions:
        golds = [g for g in golds if official_normalize(g)] or [""]
        prediction = official_normalize(predictions[qas_id])
        exact_raw[qas_id] = max(int(prediction == official_normalize(g)) for g in golds)
        f1s = []
        for gold in map(official_normalize, golds):
            if not gold or not prediction:
                f1s.append(int(gold == prediction))
            else:
                f1s.append(bag_f1(prediction.split(), gold.split()))
        f1_raw[qas_id] = max(f1s)
    odds = null_odds if null_odds is not None else dict.fromkeys(predictions, 0.0)

    def thresholded(raw):
        return {k: float(not has_answer[k]) if odds[k] > threshold else v for k, v in raw.items()}

    exact, f1 = thresholded(exact_raw), thresholded(f1_raw)

    def averages(ids):
        return {
            "exact": 100 * sum(exact[k] for k in ids) / len(ids),
            "f1": 100 * sum(f1[k] for k in ids) / len(ids),
            "total": len(ids),
        }

    result = averages(list(exact))
    for name, wanted in (("HasAns", True), ("NoAns", False)):
        ids = [k for k, v in has_answer.items() if v == wanted]
        if ids:
            result.update({f"{name}_{key}": v for key, v in averages(ids).items()})
    if null_odds is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            # Answer "" where the null odds exceed a threshold; try each odds value.
            score = best = sum(not v for v in has_answer.values())
            best_thresh = 0.0
            for qas_id in sorted(odds, key=odds.get):
                if qas_id not in raw:
                    continue
                if has_answer[qas_id]:
                    score += raw[qas_id]
                elif predictions[qas_id]:
                    score -= 1
                if score > best:
                    best, best_thresh = score, odds[qas_id]
            result[f"best_{name}"] = 100 * best / len(raw)
            result[f"best_{name}_thresh"] = best_thresh
    return result


@settings(max_examples=150)
@given(
    data=st.data(),
    ids=question_ids,
    with_odds=st.booleans(),
    threshold=st.sampled_from([-1.0, 0.0, 0.5, 1.0]),
)
def test_evaluate_v2_is_the_official_score(data, ids, with_odds, threshold):
    questions = [(i, data.draw(st.lists(answers(), max_size=3))) for i in ids]
    predictions = {i: data.draw(st.one_of(st.just(""), answers())) for i in ids}
    null_odds = None
    if with_odds:  # a few values, so that questions tie; one id not in the dataset
        odds = st.sampled_from([-2.0, 0.0, 0.5, 1.0, 3.0])
        null_odds = {i: data.draw(odds) for i in [*ids, "z"]}
    result = evaluation.evaluate_v2(dataset(questions), predictions, null_odds, threshold)
    expected = reference_v2(questions, predictions, null_odds, threshold)
    assert list(result) == list(expected)
    assert result == pytest.approx(expected)


# -- CMRC 2018 ----------------------------------------------------------------------------------

# cmrc2018_evaluate.py's `sp_char` (its "……" never equals one character).
SP_CHAR = list("-:_*^/\\~`+=，。：？！“”；’《》") + ["……"] + list("·、「」（）－～『』")


def is_script_chinese(char):
    """The script's test for a Chinese character: U+4E00 to U+9FA5."""
    return "\u4e00" <= char <= "\u9fa5"


def reference_segments(text, remove_punctuation):
    """mixed_segmentation, with whitespace splitting for nltk.word_tokenize
    (the same on the letters, digits and spaces the texts here put between
    Chinese characters and punctuation)."""
    segments, pending = [], ""
    for char in text.lower().strip():
        if remove_punctuation and char in SP_CHAR:
            continue
        if is_script_chinese(char) or char in SP_CHAR:
            segments += pending.split() + [char]
            pending = ""
        else:
            pending += char
    return segments + pending.split()


def longest_common_run(first, second):
    """Length of the longest common substring, by trying every pair of starts."""
    best = 0
    for i in range(len(first)):
        for j in range(len(second)):
            k = 0
            while i + k < len(first) and j + k < len(second) and first[i + k] == second[j + k]:
                k += 1
            best = max(best, k)
    return best


def reference_cmrc_f1(prediction, gold):
    prediction_segments = reference_segments(prediction, True)
    gold_segments = reference_segments(gold, True)
    common = longest_common_run(gold_segments, prediction_segments)
    if not common:
        return 0.0
    precision, recall = common / len(prediction_segments), common / len(gold_segments)
    return 2 * precision * recall / (precision + recall)


def reference_cmrc_em(prediction, gold):
    def bare(text):
        return "".join(c for c in text.lower().strip() if c not in SP_CHAR)

    return int(bare(prediction) == bare(gold))


# Chinese characters at and just past the script's range ends (U+9FA6 and
# U+3400 are letters of a word to it), its punctuation, words, spaces, and
# "\u2026" (half of its "……", so no punctuation) between spaces.
CHINESE = "\u4e00\u4e01\u5317\u4eac\u5927\u5b66\u9fa5"
NOT_SCRIPT_CHINESE = "\u9fa6\u9fff\u3400\u4dbf"
CMRC_CHARS = list(CHINESE * 3 + NOT_SCRIPT_CHINESE + "aB1\u00e9\u00df" * 3)
CMRC_CHARS += [c for c in SP_CHAR if len(c) == 1] + [" ", " ", "\t", "\u3000", "\u00a0", " \u2026 "]
cmrc_texts = st.lists(st.sampled_from(CMRC_CHARS), max_size=12).map("".join)


@settings(max_examples=300)
@given(prediction=cmrc_texts, gold=cmrc_texts)
def test_cmrc_segments_and_scores_are_the_scripts(prediction, gold):
    for text in (prediction, gold):
        for remove in (False, True):
            assert cmrc2018.mixed_segmentation(text, remove) == reference_segments(text, remove)
    assert cmrc2018.f1_score(prediction, gold) == pytest.approx(reference_cmrc_f1(prediction, gold))
    assert cmrc2018.exact_match(prediction, gold) == reference_cmrc_em(prediction, gold)


@settings(max_examples=100)
@given(data=st.data(), ids=question_ids)
def test_evaluate_cmrc2018_is_the_scripts_score(data, ids):
    questions = [(i, data.draw(st.lists(cmrc_texts, min_size=1, max_size=3))) for i in ids]
    answered = data.draw(st.lists(st.sampled_from(ids), unique=True))
    predictions = {i: data.draw(cmrc_texts) for i in answered}
    f1 = exact = 0.0
    for qas_id, golds in questions:
        if qas_id in predictions:
            f1 += max(reference_cmrc_f1(predictions[qas_id], g) for g in golds)
            exact += max(reference_cmrc_em(predictions[qas_id], g) for g in golds)
    f1, exact = 100 * f1 / len(questions), 100 * exact / len(questions)
    expected = {
        "AVERAGE": (f1 + exact) / 2,
        "F1": f1,
        "EM": exact,
        "TOTAL": len(questions),
        "SKIP": len(questions) - len(predictions),
    }
    result = cmrc2018.evaluate_cmrc2018(dataset(questions), predictions)
    assert list(result) == list(expected)
    assert result == pytest.approx(expected)
