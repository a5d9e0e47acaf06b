"""Multi-label pieces against independent references: the metrics and the
threshold tuning (scikit-learn, brute force), the loss (numpy), the records
(multi-hot, read back), the Keras default loss and the option checks."""

import numpy as np
import pytest
import tensorflow as tf
from sklearn.metrics import f1_score, precision_score, recall_score

from bert_tf.config import BertConfig
from bert_tf.data.classification import features
from bert_tf.data.classification.processor import InputExample
from bert_tf.errors import InputError
from bert_tf.metrics.classification import multi_label_metrics, tune_thresholds
from bert_tf.modeling import BertClassifier
from bert_tf.modeling.losses import SigmoidCrossEntropy
from bert_tf.options import build
from bert_tf.tasks.classifier import ClassifierRunner
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.tasks.logits import MultiLabelObjective, binary_cross_entropy
from bert_tf.text.model_text import TextSettings

RNG = np.random.default_rng(0)
PROBABILITIES = RNG.random((40, 3))
LABELS = (RNG.random((40, 3)) < PROBABILITIES * 0.8 + 0.1).astype(np.float32)
LABELS[:, 2] = 0  # a label without positive examples


def test_metrics_are_scikit_learns():
    thresholds = np.array([0.3, 0.5, 0.7])
    predicted = (PROBABILITIES >= thresholds).astype(int)
    metrics = multi_label_metrics(PROBABILITIES, LABELS, thresholds, ["a", "b", "c"])
    truth = LABELS.astype(int)
    assert metrics["micro_f1"] == pytest.approx(f1_score(truth, predicted, average="micro"))
    macro = f1_score(truth, predicted, average="macro", zero_division=0)
    assert metrics["macro_f1"] == pytest.approx(macro)
    assert metrics["exact_match"] == pytest.approx(np.mean(np.all(predicted == truth, axis=1)))
    for i, name in enumerate("abc"):
        kwargs = {"zero_division": 0}
        precision = precision_score(truth[:, i], predicted[:, i], **kwargs)
        assert metrics[f"precision_{name}"] == pytest.approx(precision)
        assert metrics[f"recall_{name}"] == pytest.approx(
            recall_score(truth[:, i], predicted[:, i], **kwargs)
        )


def test_tuned_thresholds_reach_each_labels_best_f1():
    thresholds = tune_thresholds(PROBABILITIES, LABELS, default=0.5)
    assert thresholds[2] == 0.5  # no positive example: the default
    grid = np.linspace(0, 1, 2001)
    for i in range(2):
        truth = LABELS[:, i].astype(int)
        best = max(f1_score(truth, PROBABILITIES[:, i] >= t, zero_division=0) for t in grid)
        tuned = f1_score(truth, PROBABILITIES[:, i] >= thresholds[i])
        assert tuned == pytest.approx(best) and tuned > 0.5
        assert not np.any(PROBABILITIES[:, i] == thresholds[i])  # between two examples


def test_loss_is_the_mean_binary_cross_entropy_over_labels_and_examples():
    logits = RNG.normal(size=(5, 3)).astype(np.float32)
    labels = LABELS[:5]
    p = 1 / (1 + np.exp(-logits.astype(np.float64)))
    expected = -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p))
    objective = MultiLabelObjective()
    batch = {"label_ids": tf.constant(labels)}
    totals = {k: tf.cast(v, tf.float32) for k, v in objective.totals(batch).items()}
    loss = float(objective.loss(tf.constant(logits), batch, totals)["loss"])
    assert loss == pytest.approx(expected, rel=1e-6)
    assert binary_cross_entropy(logits, labels) == pytest.approx(expected, rel=1e-9)


def test_records_hold_multi_hot_labels(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    examples = [InputExample("0", "hello", None, ["z", "x"]), InputExample("1", "hi", None, [])]
    written = features.ensure_features(
        str(tmp_path),
        "eval",
        examples,
        ["x", "y", "z"],
        TextSettings(str(vocab), True, 8),
        input_files=[],
        pad_examples_to_multiple_of=4,
        multi_label=True,
    )
    dataset = features.make_dataset(written.path, 8, 4, False, num_multi_labels=3)
    batch = next(iter(dataset))
    np.testing.assert_array_equal(
        batch["label_ids"].numpy(), [[1, 0, 1], [0, 0, 0], [0, 0, 0], [0, 0, 0]]
    )
    assert batch["label_ids"].dtype == tf.float32
    assert batch["is_real_example"].numpy().tolist() == [1, 1, 0, 0]


def test_keras_classifier_multi_label_defaults_to_binary_cross_entropy():
    config = BertConfig(
        vocab_size=10,
        hidden_size=8,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=16,
    )
    model = BertClassifier(config, 3, multi_label=True)
    loss = model.default_loss()
    assert isinstance(loss, SigmoidCrossEntropy)
    assert "multi_label" not in BertClassifier(config, 3).get_config()  # unchanged configs


@pytest.mark.parametrize(
    "task, extra, message",
    [
        ("mrpc", {"multi_label": True}, "--multi_label needs --task_name=generic"),
        ("generic", {"tune_thresholds": True}, "--tune_thresholds is for --multi_label"),
        (
            "generic",
            {"multi_label": True, "tune_thresholds": True},
            "--tune_thresholds chooses the thresholds on dev: add --do_eval",
        ),
        (
            "generic",
            {"multi_label": True, "class_weights": "balanced"},
            "--class_weights is for single-label classification",
        ),
    ],
)
def test_option_checks(tmp_path, task, extra, message):
    options = build(
        ClassifierOptions,
        task_name=task,
        data_dir=str(tmp_path),
        vocab_file="vocab.txt",
        bert_config_file="bert_config.json",
        output_dir=str(tmp_path / "out"),
        do_train=True,
        text_a_column="text",
        label_column="tags",
        **extra,
    )
    with pytest.raises(InputError, match=message):
        ClassifierRunner(options).validate()
