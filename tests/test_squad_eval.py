"""SQuAD v1.1 / v2.0 metrics against scores worked out by hand from the official scripts' rules."""

import json
import re
import string

import pytest

from bert_tf.data.squad import reader
from bert_tf.errors import InputError
from bert_tf.metrics import squad as evaluation


def dataset(*questions):
    """A one-paragraph `data` list; each question is (id, [gold texts])."""
    qas = [
        {
            "id": qas_id,
            "question": "Q?",
            "is_impossible": not golds,
            "answers": [{"text": text, "answer_start": 0} for text in golds],
        }
        for qas_id, golds in questions
    ]
    return [{"title": "T", "paragraphs": [{"context": "unused", "qas": qas}]}]


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("The  Quick, brown-fox's A", "quick brownfoxs"),
        ("theory of an apple", "theory of apple"),  # "the" inside a word stays
        ("\u201cQuoted\u201d", "\u201cquoted\u201d"),  # only ASCII punctuation goes
        ("A.", ""),
    ],
)
def test_normalize_answer(text, normalized):
    assert evaluation.normalize_answer(text) == normalized


def official_normalize(text):
    """evaluate-v1.1.py's normalize_answer, step by step in its order: lower
    case, remove punctuation, remove articles, fix whitespace."""
    text = text.lower()
    text = "".join(char for char in text if char not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


@pytest.mark.parametrize(
    "text, normalized",
    [
        ("U.S.A", "usa"),  # not "us": the "a" is no word of its own once "." is gone
        ("The A.B", "ab"),  # "A.B" becomes "ab", not the article "a" and "b"
        ("the-end", "theend"),
        ("a-team", "ateam"),
        ("Th.e cat", "cat"),  # "th.e" becomes the article "the"
        ("l'a", "la"),
    ],
)
def test_normalize_answer_removes_punctuation_before_articles(text, normalized):
    # Punctuation that joins an article to a word makes it part of that
    # word; punctuation inside an article leaves an article.
    assert official_normalize(text) == normalized
    assert evaluation.normalize_answer(text) == normalized
    assert evaluation.exact_match(text, normalized) == 1


def test_token_scores_on_empty_answers_differ_between_versions():
    assert evaluation.exact_match("", "") == 1
    assert evaluation.f1_v1("", "") == 0  # v1.1: no common token
    assert evaluation.f1_v2("", "") == 1  # v2.0: both empty agree
    assert evaluation.f1_v2("the", "") == 1
    assert evaluation.f1_v2("Paris", "") == 0
    # "x y y" vs "y y z": 2 common, P = R = 2/3, F1 = 2/3; "a" is an article:
    # "a b b" -> "b b" vs "b b c": P 1, R 2/3, F1 0.8.
    assert evaluation.f1_v1("x y y", "y y z") == pytest.approx(2 / 3)
    assert evaluation.f1_v1("a b b", "b b c") == pytest.approx(0.8)


V1 = dataset(
    ("tower", ["the Eiffel Tower", "Eiffel Tower"]),
    ("team", ["Denver Broncos"]),
    ("year", ["1895", "in 1895"]),
    ("cat", ["a cat"]),
    ("missing", ["anything"]),
)
V1_PREDICTIONS = {
    "tower": "Eiffel tower!",  # EM 1, F1 1
    "team": "the Denver Broncos team",  # 2 common of 3 / 2: P 2/3, R 1 -> F1 0.8
    "year": "born in 1895",  # vs "1895" 0.5, vs "in 1895" 0.8 -> 0.8
    "cat": "an apple",  # "apple" vs "cat": 0
}  # "missing": no prediction -> 0


def test_evaluate_v1():
    result = evaluation.evaluate_v1(V1, V1_PREDICTIONS)
    assert list(result) == ["exact_match", "f1"]
    assert result["exact_match"] == pytest.approx(100 * 1 / 5)
    assert result["f1"] == pytest.approx(100 * (1 + 0.8 + 0.8) / 5)


def test_evaluate_v1_accepts_the_file_its_json_and_examples(tmp_path):
    path = tmp_path / "dev-v1.1.json"
    path.write_text(json.dumps({"version": "1.1", "data": V1}), encoding="utf-8")
    examples = reader.read_squad_examples(str(path), is_training=False).examples
    expected = {"exact_match": pytest.approx(20.0), "f1": pytest.approx(52.0)}
    for source in (str(path), path, {"data": V1}, examples):
        assert evaluation.evaluate_v1(source, V1_PREDICTIONS) == expected


def test_evaluate_v1_rejects_unanswerable_questions():
    with pytest.raises(InputError, match="question 'x' has no gold answer"):
        evaluation.evaluate_v1(dataset(("x", [])), {"x": ""})


V2 = dataset(
    ("paris", ["Paris"]),
    ("apple", ["red apple", "apple", "The"]),  # "The" normalises to "" and is ignored
    ("none", []),
    ("none2", []),
    ("rome", ["Rome"]),
)
V2_PREDICTIONS = {
    "paris": "Paris",
    "apple": "green apple",
    "none": "",
    "none2": "London",
    "rome": "Milan",
}
# Raw EM: 1, 0, 1, 0, 0. Raw F1: 1, max(0.5, 2/3) = 2/3, 1, 0, 0.
V2_NULL_ODDS = {
    "paris": -3.0,
    "rome": -1.0,
    "apple": 1.0,
    "none2": 1.5,
    "none": 2.0,
    "not-in-dataset": 0.0,
}


def test_evaluate_v2_without_null_odds():
    result = evaluation.evaluate_v2(V2, V2_PREDICTIONS)
    assert list(result) == [
        "exact",
        "f1",
        "total",
        "HasAns_exact",
        "HasAns_f1",
        "HasAns_total",
        "NoAns_exact",
        "NoAns_f1",
        "NoAns_total",
    ]
    assert result == pytest.approx(
        {
            "exact": 100 * 2 / 5,
            "f1": 100 * (2 + 2 / 3) / 5,
            "total": 5,
            "HasAns_exact": 100 * 1 / 3,
            "HasAns_f1": 100 * (1 + 2 / 3) / 3,
            "HasAns_total": 3,
            "NoAns_exact": 50.0,
            "NoAns_f1": 50.0,
            "NoAns_total": 2,
        }
    )


def test_evaluate_v2_with_null_odds_and_best_threshold():
    result = evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds=V2_NULL_ODDS, threshold=1.0)
    # Odds > 1.0 (none2 1.5, none 2.0) are scored as "" -> both unanswerable right.
    # Best threshold, from 2 (all ""), in increasing odds: paris +1 = 3 (-3.0),
    # rome +0, apple +0 (EM) / +2/3 (F1) = 3 2/3 (1.0), none2 answered -1, none +0.
    assert result == pytest.approx(
        {
            "exact": 100 * 3 / 5,
            "f1": 100 * (3 + 2 / 3) / 5,
            "total": 5,
            "HasAns_exact": 100 * 1 / 3,
            "HasAns_f1": 100 * (1 + 2 / 3) / 3,
            "HasAns_total": 3,
            "NoAns_exact": 100.0,
            "NoAns_f1": 100.0,
            "NoAns_total": 2,
            "best_exact": 100 * 3 / 5,
            "best_exact_thresh": -3.0,
            "best_f1": 100 * (3 + 2 / 3) / 5,
            "best_f1_thresh": 1.0,
        }
    )
    assert list(result)[-4:] == ["best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]
    # Threshold -2: all but paris are scored as "": apple 0, none 1, none2 1, rome 0.
    low = evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds=V2_NULL_ODDS, threshold=-2.0)
    assert (low["exact"], low["f1"]) == pytest.approx((60.0, 60.0))


def test_best_threshold_keeps_empty_answers_to_unanswerable_questions():
    # From 1 (all ""): "n" answered "" stays right (+0), then "a" +1 = 2 at 1.0.
    result = evaluation.evaluate_v2(
        dataset(("n", []), ("a", ["x"])), {"n": "", "a": "x"}, null_odds={"n": 0.0, "a": 1.0}
    )
    assert (result["best_exact"], result["best_exact_thresh"]) == (100.0, 1.0)
    assert (result["best_f1"], result["best_f1_thresh"]) == (100.0, 1.0)


def test_evaluate_v2_on_examples_and_with_missing_predictions(tmp_path):
    path = tmp_path / "dev-v2.0.json"
    path.write_text(json.dumps({"version": "v2.0", "data": V2}), encoding="utf-8")
    examples = reader.read_squad_examples(
        str(path), is_training=False, version_2_with_negative=True
    ).examples
    assert evaluation.evaluate_v2(examples, V2_PREDICTIONS) == evaluation.evaluate_v2(
        V2, V2_PREDICTIONS
    )
    # Without "rome" and "none2": EM 1, 0, 1 over 3; no NoAns question is wrong.
    partial = {k: V2_PREDICTIONS[k] for k in ("paris", "apple", "none")}
    result = evaluation.evaluate_v2(V2, partial)
    assert (result["total"], result["HasAns_total"], result["NoAns_total"]) == (3, 2, 1)
    assert result["exact"] == pytest.approx(100 * 2 / 3)


def test_evaluate_v2_answerable_only_data_has_no_noans_keys():
    result = evaluation.evaluate_v2(dataset(("a", ["x"])), {"a": "x"})
    assert result == {
        "exact": 100.0,
        "f1": 100.0,
        "total": 1,
        "HasAns_exact": 100.0,
        "HasAns_f1": 100.0,
        "HasAns_total": 1,
    }


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds={"paris": 0.0}),
            "null_odds has no value for question 'apple'",
        ),
        (lambda: evaluation.evaluate_v2(V2, {}), "no prediction for any question"),
        (
            lambda: evaluation.evaluate_v1([{"paragraphs": [{"qas": [{"id": "q"}]}]}], {}),
            r"^dataset: data\[0\]\.paragraphs\[0\]\.qas\[0\]: no 'answers'$",
        ),
        (
            lambda: evaluation.evaluate_v1([{"paragraphs": [{"qas": [{"answers": []}]}]}], {}),
            r"^dataset: data\[0\]\.paragraphs\[0\]\.qas\[0\]: no 'id'$",
        ),
        (
            lambda: evaluation.evaluate_v1([{"paragraphs": [{"context": "c"}]}], {}),
            r"^dataset: data\[0\]\.paragraphs\[0\]: no 'qas'$",
        ),
        (lambda: evaluation.evaluate_v1({"version": "1.1"}, {}), "dataset: no 'data' list"),
        (lambda: evaluation.evaluate_v1([], {}), "dataset has no questions"),
    ],
)
def test_bad_evaluation_input(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_threshold_without_null_odds_scores_every_answer():
    # Without null_odds every question's odds are 0.0 (the script without
    # --na-prob-file): only a negative threshold makes them exceed it.
    raw = evaluation.evaluate_v2(V2, V2_PREDICTIONS)
    assert evaluation.evaluate_v2(V2, V2_PREDICTIONS, threshold=0.5) == raw
    all_empty = evaluation.evaluate_v2(V2, V2_PREDICTIONS, threshold=-0.5)
    assert (all_empty["exact"], all_empty["f1"]) == (40.0, 40.0)  # the two NoAns of five


def test_best_threshold_is_zero_when_answering_never_helps():
    # From 1 (all ""): answering "n" with "x" loses it (0): the best stays 1 at 0.0.
    result = evaluation.evaluate_v2(dataset(("n", [])), {"n": "x"}, null_odds={"n": 0.7})
    assert (result["best_exact"], result["best_exact_thresh"]) == (100.0, 0.0)
    assert (result["best_f1"], result["best_f1_thresh"]) == (100.0, 0.0)
    assert (result["exact"], result["f1"]) == (0.0, 0.0)


def test_evaluate_v1_scores_the_questions_after_a_missing_one():
    data = dataset(("a", ["Paris"]), ("gone", ["Rome"]), ("b", ["the Nile"]), ("c", ["blue whale"]))
    # a: EM 1, F1 1; gone: 0; b: EM 1 ("the" goes), F1 1; c: EM 0, P 1, R 1/2 -> F1 2/3.
    result = evaluation.evaluate_v1(data, {"a": "paris", "b": "Nile", "c": "whale"})
    assert result == pytest.approx({"exact_match": 100 * 2 / 4, "f1": 100 * (2 + 2 / 3) / 4})


def test_default_null_threshold_is_one():
    # evaluate-v2.0.py's --na-prob-thresh defaults to 1.0: none2's 1.5 exceeds it.
    assert evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds=V2_NULL_ODDS) == (
        evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds=V2_NULL_ODDS, threshold=1.0)
    )
    result = evaluation.evaluate_v2(V2, V2_PREDICTIONS, null_odds={**V2_NULL_ODDS, "none": 0.0})
    assert result["NoAns_exact"] == 100.0  # none answered "", none2 scored as ""


def test_best_threshold_after_a_wrong_answer_to_an_unanswerable_question():
    # From 1 (all ""): n answered "x" -> 0 (-1) at 0.1; a right -> 1 at 0.5;
    # b right -> 2 at 0.9: the best, 2 of 3.
    data = dataset(("n", []), ("a", ["x"]), ("b", ["y"]))
    result = evaluation.evaluate_v2(
        data, {"n": "x", "a": "x", "b": "y"}, null_odds={"n": 0.1, "a": 0.5, "b": 0.9}
    )
    assert (result["best_exact"], result["best_exact_thresh"]) == (pytest.approx(200 / 3), 0.9)
    assert (result["best_f1"], result["best_f1_thresh"]) == (pytest.approx(200 / 3), 0.9)
