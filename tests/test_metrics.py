"""Metrics against scikit-learn / scipy, and the prediction output files."""

import math
import os

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics

from bert_tf.data.classification.outputs import (
    submission_path,
    write_glue_submission,
    write_test_results,
)
from bert_tf.data.classification.registry import get_processor
from bert_tf.errors import InputError
from bert_tf.metrics import classification as metrics


@pytest.mark.parametrize("seed", range(5))
def test_classification_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(5, 200)), int(rng.integers(2, 4))
    labels = rng.integers(0, k, n)
    predictions = np.where(rng.random(n) < 0.6, labels, rng.integers(0, k, n))
    assert metrics.accuracy(predictions, labels) == pytest.approx(
        sklearn.metrics.accuracy_score(labels, predictions)
    )
    assert metrics.matthews_corrcoef(predictions, labels) == pytest.approx(
        sklearn.metrics.matthews_corrcoef(labels, predictions), abs=1e-12
    )
    binary_p, binary_l = predictions % 2, labels % 2
    assert metrics.f1_score(binary_p, binary_l) == pytest.approx(
        sklearn.metrics.f1_score(binary_l, binary_p)
    )


@pytest.mark.parametrize("seed", range(5))
def test_correlations_match_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 300))
    labels = rng.integers(0, 11, n) / 2.0  # STS-B-like: many ties
    predictions = np.round(labels + rng.normal(0, 1.5, n), 1)
    assert metrics.pearson(predictions, labels) == pytest.approx(
        scipy.stats.pearsonr(predictions, labels)[0], abs=1e-12
    )
    assert metrics.spearman(predictions, labels) == pytest.approx(
        scipy.stats.spearmanr(predictions, labels)[0], abs=1e-12
    )
    np.testing.assert_array_equal(metrics.rankdata(labels), scipy.stats.rankdata(labels))


def test_degenerate_inputs():
    assert metrics.matthews_corrcoef([1, 1, 1], [0, 1, 0]) == 0.0
    assert metrics.matthews_corrcoef([0, 1, 0], [1, 1, 1]) == 0.0
    assert metrics.f1_score([0, 0], [0, 0]) == 0.0
    assert math.isnan(metrics.pearson([1.0, 1.0, 1.0], [0.0, 1.0, 2.0]))
    assert math.isnan(metrics.spearman([0.0, 1.0, 2.0], [3.0, 3.0, 3.0]))
    assert math.isnan(metrics.pearson([1.0], [2.0]))
    assert math.isnan(metrics.pearson([0.1, 0.1, 0.1], [0.0, 1.0, 2.0]))  # mean != 0.1
    assert math.isnan(metrics.accuracy([], []))
    assert metrics.pearson([1e200, 2e200, 3e200], [1, 2, 3]) == pytest.approx(1.0)
    assert math.isnan(metrics.f1_score([], []))
    assert math.isnan(metrics.matthews_corrcoef([], []))
    with pytest.raises(
        ValueError, match=r"\(2,\) and labels \(1,\) must be 1-D of the same length"
    ):
        metrics.accuracy([1, 2], [1])


def test_glue_metrics_keys_and_values():
    labels = np.array([0, 1, 1, 0, 1, 1])
    logits = np.array([[2, 1], [0, 3], [1, 0], [3, 0], [0, 1], [0, 2]], dtype=np.float32)
    ids = logits.argmax(-1)
    assert metrics.glue_metrics("accuracy", logits, labels) == {"eval_accuracy": 5 / 6}
    result = metrics.glue_metrics("matthews", ids, labels)
    assert set(result) == {"eval_accuracy", "matthews_corr"}
    assert result["matthews_corr"] == pytest.approx(sklearn.metrics.matthews_corrcoef(labels, ids))
    result = metrics.glue_metrics("f1_accuracy", logits, labels)
    f1 = sklearn.metrics.f1_score(labels, ids)
    assert result == pytest.approx(
        {"eval_accuracy": 5 / 6, "f1": f1, "acc_and_f1": (5 / 6 + f1) / 2}
    )
    values = np.array([[0.5], [2.0], [4.5], [3.0]])
    gold = [1.0, 2.5, 4.0, 4.0]
    result = metrics.glue_metrics("pearson_spearman", values, gold)
    p = scipy.stats.pearsonr(values[:, 0], gold)[0]
    s = scipy.stats.spearmanr(values[:, 0], gold)[0]
    assert result == pytest.approx({"pearson": p, "spearmanr": s, "corr": (p + s) / 2})
    assert all(type(v) is float for v in result.values())
    with pytest.raises(ValueError, match="unknown metric"):
        metrics.glue_metrics("bleu", [1], [1])


def test_test_results_format(tmp_path):
    path = str(tmp_path / "test_results.tsv")
    probabilities = np.array([[0.1, 0.7, 0.2], [1 / 3, 1 / 3, 1 / 3]], dtype=np.float32)
    write_test_results(path, probabilities)
    # The original: "\t".join(str(class_probability) ...) over float32 values.
    expected = "".join("\t".join(str(p) for p in row) + "\n" for row in probabilities)
    assert open(path).read() == expected == "0.1\t0.7\t0.2\n0.33333334\t0.33333334\t0.33333334\n"
    write_test_results(path, np.array([2.5, 0.125]))
    assert open(path).read() == "2.5\n0.125\n"
    assert os.listdir(tmp_path) == ["test_results.tsv"]


def test_glue_submission_format(tmp_path):
    mnli = get_processor("mnli")
    path = submission_path(str(tmp_path), mnli)
    assert path == str(tmp_path / "MNLI-m.tsv")
    write_glue_submission(
        path, mnli, np.array([[0.1, 0.2, 0.7], [0.9, 0.0, 0.1]]), mnli.get_labels()
    )
    assert open(path).read() == "index\tprediction\n0\tneutral\n1\tcontradiction\n"
    cola = get_processor("cola")
    path = submission_path(str(tmp_path), cola)
    write_glue_submission(path, cola, [1, 0, 1], cola.get_labels())
    assert open(path).read() == "index\tprediction\n0\t1\n1\t0\n2\t1\n"
    stsb = get_processor("sts-b")
    path = submission_path(str(tmp_path), stsb)
    write_glue_submission(path, stsb, np.array([[4.12345], [0.5]]), [])
    assert open(path).read() == "index\tprediction\n0\t4.123\n1\t0.500\n"
    assert sorted(os.listdir(tmp_path)) == ["CoLA.tsv", "MNLI-m.tsv", "STS-B.tsv"]
    with pytest.raises(ValueError):
        write_glue_submission(path, cola, [2], cola.get_labels())
    with pytest.raises(InputError, match="not a GLUE or CLUE task"):
        submission_path(str(tmp_path), get_processor("xnli"))


def test_tuned_threshold_among_equal_f1_cuts_is_the_one_nearest_the_default():
    # Positives at 0.875 and 0.25, negatives at 0.625 and 0.5: the cuts 0.75 (1 TP)
    # and 0.125 (2 TP, 2 FP) both give F1 2/3, the others 0.5 and 0.4 (by hand).
    probabilities = np.array([[0.875], [0.625], [0.5], [0.25]])
    labels = np.array([[1], [0], [0], [1]])
    assert metrics.tune_thresholds(probabilities, labels, default=0.5) == [0.75]
    assert metrics.tune_thresholds(probabilities, labels, default=0.375) == [0.125]


def test_pearson_edge_cases_match_scipy():
    # Two points are enough: the correlation is +-1 (scipy's too).
    assert metrics.pearson([1.0, 2.0], [3.0, 5.0]) == pytest.approx(
        scipy.stats.pearsonr([1, 2], [3, 5])[0]
    )
    assert metrics.pearson([1.0, 2.0], [5.0, 3.0]) == pytest.approx(-1.0)
    # A constant side is nan, whichever side; a float mean is not exactly its values.
    assert math.isnan(metrics.pearson([0.0, 1.0, 2.0], [0.1, 0.1, 0.1]))
    # Each side is scaled on its own: huge labels do not overflow either.
    assert metrics.pearson([1, 2, 3], [1e200, 2e200, 3e200]) == pytest.approx(1.0)
    # float32 values far from 0 (model outputs): the means are taken in float64.
    rng = np.random.default_rng(0)
    x = (1e4 + rng.normal(size=200)).astype(np.float32)
    y = (x + rng.normal(size=200)).astype(np.float32)
    expected = scipy.stats.pearsonr(x.astype(np.float64), y.astype(np.float64))[0]
    assert metrics.pearson(x, y) == pytest.approx(expected, abs=1e-12)


def test_correlations_stay_within_minus_one_and_one():
    # x against itself, its negation and an affine map: exactly +-1 in theory,
    # a rounding error beyond it in floating point unless clipped (as scipy).
    rng = np.random.default_rng(1)
    for _ in range(30):
        x = rng.normal(size=int(rng.integers(3, 50)))
        for y, sign in ((x, 1.0), (-x, -1.0), (3 * x + 1, 1.0)):
            r = metrics.pearson(x, y)
            assert -1.0 <= r <= 1.0
            assert r == pytest.approx(sign, abs=1e-12)


def test_glue_regression_metrics_take_flat_predictions():
    values = np.array([0.5, 2.0, 4.5, 3.0])
    gold = [1.0, 2.5, 4.0, 4.0]
    p = scipy.stats.pearsonr(values, gold)[0]
    s = scipy.stats.spearmanr(values, gold)[0]
    result = metrics.glue_metrics("pearson_spearman", values, gold)
    assert result == pytest.approx({"pearson": p, "spearmanr": s, "corr": (p + s) / 2})


@pytest.mark.parametrize(
    "predictions, labels",
    [([0, 1, 2, 2], [0, 1, 1, 0]), ([0, 1, 1, 0], [0, 1, 2, 2]), ([2, 0, 2], [1, 1, 0])],
    ids=["class only predicted", "class only in labels", "highest class only predicted"],
)
def test_matthews_with_a_class_on_one_side_only(predictions, labels):
    assert metrics.matthews_corrcoef(predictions, labels) == pytest.approx(
        sklearn.metrics.matthews_corrcoef(labels, predictions), abs=1e-12
    )


def test_multi_label_metrics_by_label_match_scikit_learn():
    # a: 0.5 sits on its threshold (predicted), TP 1, FP 1, FN 1 -> P = R = F1 = 0.5;
    # b: nothing predicted -> P = R = F1 = 0 (scikit-learn's zero_division=0); c: all
    # right; d: no positive label and no prediction -> 0 as well.
    probabilities = np.array(
        [[0.5, 0.1, 0.6, 0.1], [0.9, 0.2, 0.7, 0.2], [0.2, 0.3, 0.1, 0.3], [0.1, 0.4, 0.9, 0.4]]
    )
    labels = np.array([[1, 1, 1, 0], [0, 0, 1, 0], [1, 0, 0, 0], [0, 0, 1, 0]])
    names = ["a", "b", "c", "d"]
    result = metrics.multi_label_metrics(probabilities, labels, [0.5] * 4, names)
    predicted = (probabilities >= 0.5).astype(int)
    for i, name in enumerate(names):
        for key, score in (
            ("precision", sklearn.metrics.precision_score),
            ("recall", sklearn.metrics.recall_score),
            ("f1", sklearn.metrics.f1_score),
        ):
            expected = score(labels[:, i], predicted[:, i], zero_division=0)
            assert result[f"{key}_{name}"] == pytest.approx(expected), f"{key}_{name}"
    assert (result["precision_a"], result["recall_a"], result["f1_a"]) == (0.5, 0.5, 0.5)
    assert (result["precision_b"], result["recall_b"], result["f1_b"]) == (0.0, 0.0, 0.0)
    assert result["f1_d"] == 0.0
    for average in ("micro", "macro"):
        assert result[f"{average}_f1"] == pytest.approx(
            sklearn.metrics.f1_score(labels, predicted, average=average, zero_division=0)
        )
    assert result["exact_match"] == pytest.approx(0.25)  # the last row only


def test_tuned_thresholds_by_hand():
    probabilities = np.array(
        [
            [0.3, 0.2, 0.1, 0.2, 0.1, 0.1],
            [0.6, 0.4, 0.2, 0.4, 0.2, 0.3],
            [0.9, 0.6, 0.3, 0.6, 0.3, 0.7],
            [0.1, 0.8, 0.4, 0.8, 0.4, 0.9],
        ]
    )
    labels = np.array(
        [[0, 0, 1, 1, 0, 1], [0, 0, 0, 1, 1, 0], [0, 1, 0, 1, 0, 0], [0, 1, 0, 1, 0, 1]]
    )
    # 0: no positive example -> the default 0.5; 1: the cut between 0.4 and 0.6;
    # 2: the only positive has the lowest probability: predicting all (F1 0.4)
    # beats predicting none (F1 0), so the cut is below 0.1, midway to 0;
    # 3: all positive -> below 0.2, midway to 0; 4: F1 0.5 at 0.15, above 0.1
    # (F1 0.4) and below 0.2 (F1 0); 5: F1 2/3 below 0.1 and between 0.7 and
    # 0.9 (0.4 and 0.5 between): 0.8 is nearer the default.
    assert metrics.tune_thresholds(probabilities, labels) == pytest.approx(
        [0.5, 0.5, 0.05, 0.1, 0.15, 0.8]
    )
