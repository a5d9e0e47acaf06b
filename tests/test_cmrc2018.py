"""CMRC 2018's scores (cmrc2018_evaluate.py) against values worked out by hand from its rules."""

import json

import pytest

from bert_tf.errors import InputError
from bert_tf.metrics import cmrc2018


@pytest.mark.parametrize(
    "text, segments",
    [
        ("北京大学", ["北", "京", "大", "学"]),
        # English between Chinese characters is cut into words; punctuation of
        # the script's list is a segment of its own, or removed.
        ("2018年Peking University，北大", ["2018", "年", "peking", "university", "，", "北", "大"]),
        ("  The U.S. (3.5%)  ", ["the", "u.s", ".", "(", "3.5", "%", ")"]),
        ("《星光》", ["《", "星", "光", "》"]),
    ],
)
def test_mixed_segmentation(text, segments):
    assert cmrc2018.mixed_segmentation(text) == segments


def test_punctuation_removed_before_segmenting():
    assert cmrc2018.mixed_segmentation("《星光》-A:b", remove_punctuation=True) == [
        "星",
        "光",
        "ab",
    ]
    # Only the script's list: ASCII "." and "," stay.
    assert cmrc2018.without_punctuation(" 《星光》，Hello, World. ") == "星光hello, world."


@pytest.mark.parametrize(
    "prediction, gold, f1",
    [
        ("北川省的东部", "北川省", 2 * 0.5 * 1.0 / 1.5),  # 3 of 6 predicted, all 3 gold
        ("北京大学的校长", "清华大学的校长", 5 / 7),  # common run 大学的校长
        # Longest common substring, not subsequence: 北京 (2 of 5, 2 of 4).
        ("北京的大学", "北京大学", 2 * 0.4 * 0.5 / 0.9),
        ("《星光》", "星光", 1.0),
        # The gold answer loses the script's punctuation too before segmenting.
        ("星光", "《星光》", 1.0),
        # Reversed: the common runs are one segment long (the gold's first
        # segment is the prediction's last).
        ("京北", "北京", 0.5),
        ("上海", "北京", 0.0),
        ("Peking University", "Peking University Library", 2 * 1.0 * (2 / 3) / (1 + 2 / 3)),
    ],
)
def test_f1_is_the_longest_common_substring_of_segments(prediction, gold, f1):
    assert cmrc2018.f1_score(prediction, gold) == pytest.approx(f1)


def test_exact_match_ignores_the_scripts_punctuation_and_case():
    assert cmrc2018.exact_match("《星光》", "星光") == 1
    assert cmrc2018.exact_match("Hello World", "hello world") == 1
    assert cmrc2018.exact_match("星光。", "星光") == 1
    assert cmrc2018.exact_match("星光.", "星光") == 0  # "." is not in the list
    assert cmrc2018.exact_match("星光", "星") == 0


def squad_file(tmp_path, questions):
    qas = [
        {"id": qas_id, "question": "?", "answers": [{"text": t, "answer_start": 0} for t in golds]}
        for qas_id, golds in questions
    ]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": "c", "qas": qas}]}]}))
    return str(path)


def test_evaluate_takes_the_best_gold_answer_and_counts_missing_predictions(tmp_path):
    path = squad_file(
        tmp_path,
        [("a", ["北川省", "北川省的东部"]), ("b", ["星光"]), ("c", ["长安"]), ("d", ["李白"])],
    )
    predictions = {"a": "北川省的东部", "b": "星光的", "c": "洛阳"}
    results = cmrc2018.evaluate_cmrc2018(path, predictions)
    # a: EM 1, F1 1 (second gold); b: EM 0, F1 2*(2/3)*1/(5/3) = 0.8; c: 0, 0; d: missing.
    assert list(results) == ["AVERAGE", "F1", "EM", "TOTAL", "SKIP"]
    assert results["EM"] == pytest.approx(25.0)
    assert results["F1"] == pytest.approx(100 * 1.8 / 4)
    assert results["AVERAGE"] == pytest.approx((25.0 + 45.0) / 2)
    assert (results["TOTAL"], results["SKIP"]) == (4, 1)


def test_question_without_gold_answer_is_refused(tmp_path):
    with pytest.raises(InputError, match="question 'x' has no gold answer"):
        cmrc2018.evaluate_cmrc2018(squad_file(tmp_path, [("x", [])]), {"x": "a"})


def test_missing_predictions_anywhere_count_in_skip_and_score_zero(tmp_path):
    path = squad_file(
        tmp_path,
        [
            ("a", ["北京"]),
            ("b", ["上海"]),
            ("c", ["《星光》"]),
            ("d", ["北京大学"]),
            ("e", ["长安"]),
        ],
    )
    predictions = {"a": "北京", "c": "星光", "d": "北京的大学"}
    # a: EM 1, F1 1; b: missing; c: EM 1, F1 1 (punctuation gone from both);
    # d: EM 0, F1 of the run 北京 (2 of 5 predicted, 2 of 4 gold); e: missing.
    d_f1 = 2 * 0.4 * 0.5 / 0.9
    results = cmrc2018.evaluate_cmrc2018(path, predictions)
    assert results["EM"] == pytest.approx(100 * 2 / 5)
    assert results["F1"] == pytest.approx(100 * (2 + d_f1) / 5)
    assert results["AVERAGE"] == pytest.approx(100 * (2 + (2 + d_f1)) / 10)
    assert (results["TOTAL"], results["SKIP"]) == (5, 2)
