"""Metrics against scikit-learn / scipy, and the prediction output files."""

import math
import os

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics

from bert_tf import metrics
from bert_tf.data.classification.glue import get_processor
from bert_tf.data.classification.outputs import (
    submission_path,
    write_glue_submission,
    write_test_results,
)
from bert_tf.errors import InputError


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
    with pytest.raises(ValueError):
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
