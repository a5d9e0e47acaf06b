"""Each head's loss (`bert_tf.modeling.losses`) against a numpy formula, both
as the scripts train with it (the task's objective, its totals summed over a
global batch split between two replicas, each replica's share added up) and
as Keras's `compile()` default (`evaluate` on the whole batch)."""

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf
from shared import random_inputs

import bert_tf
from bert_tf.modeling.losses import SoftmaxCrossEntropy
from bert_tf.tasks.logits import ClassificationObjective, MultiLabelObjective
from bert_tf.tasks.ner import TaggingObjective
from bert_tf.tasks.pretraining import PretrainingObjective
from bert_tf.tasks.squad import SquadObjective

BATCH, SEQ = 4, 8
RNG = np.random.default_rng(7)


def log_softmax(logits):
    x = np.asarray(logits, np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def cross_entropy(logits, labels):
    """-log p(label) of each row (float64)."""
    return -np.take_along_axis(log_softmax(logits), np.asarray(labels)[..., None], -1)[..., 0]


def inputs(config):
    return random_inputs(config, batch=BATCH, seq=SEQ, lengths=[8, 7, 5, 3])


def token_labels(num_labels):
    """Labels `[BATCH, SEQ]`, -1 where not labelled; the first half of the
    batch (one replica's) holds far more labelled tokens than the second."""
    labels = RNG.integers(0, num_labels, (BATCH, SEQ))
    labels[:, 0] = -1  # [CLS]
    labels[0, 3] = labels[1, [2, 6]] = -1  # second pieces
    labels[1, 7:] = labels[2, 3:] = labels[3, 2:] = -1  # [SEP], padding
    return labels


def _half(value, rows):
    if isinstance(value, dict):
        return {k: _half(v, rows) for k, v in value.items()}
    return tf.constant(np.asarray(value)[rows])


def scripts_loss(objective, outputs, features, key="loss"):
    """The training loop's loss on the batch split between two replicas:
    totals summed over both halves, each half's loss (its share) added."""
    halves = [slice(0, BATCH // 2), slice(BATCH // 2, BATCH)]
    parts = [(_half(outputs, rows), _half(features, rows)) for rows in halves]
    totals = {}
    for _, half in parts:
        for name, value in objective.totals(half).items():
            totals[name] = totals.get(name, 0.0) + tf.cast(value, tf.float32)
    return sum(float(objective.loss(out, half, totals)[key]) for out, half in parts)


def keras_loss(model, x, y, sample_weight=None, key="loss"):
    """`evaluate`'s loss on the whole batch with the model's default loss."""
    model.compile()
    logs = model.evaluate(
        x, y, sample_weight=sample_weight, batch_size=BATCH, verbose=0, return_dict=True
    )
    return logs[key]


def outputs_of(model, x):
    outputs = model(x, training=False)
    if isinstance(outputs, dict):
        return {k: v.numpy() for k, v in outputs.items()}
    return outputs.numpy()


def test_classification_cross_entropy_and_class_weights(tiny_config):
    model = bert_tf.BertClassifier(tiny_config, 3)
    x = inputs(tiny_config)
    logits = outputs_of(model, x)
    labels = np.array([0, 2, 2, 1], np.int32)
    class_weights = np.array([0.5, 3.0, 1.25])
    errors = cross_entropy(logits, labels)
    weighted = np.sum(class_weights[labels] * errors) / BATCH
    assert abs(weighted - errors.mean()) > 0.1  # the weights matter here
    features = {"label_ids": labels}
    for objective, expected in [
        (ClassificationObjective(False), errors.mean()),
        (ClassificationObjective(False, class_weights.tolist()), weighted),
    ]:
        assert scripts_loss(objective, logits, features) == pytest.approx(expected, rel=1e-5)
    assert keras_loss(model, x, labels) == pytest.approx(errors.mean(), rel=1e-5)
    # fit(class_weight=...) weighs each example so: the same loss as --class_weights.
    sample_weight = class_weights[labels].astype(np.float32)
    assert keras_loss(model, x, labels, sample_weight) == pytest.approx(weighted, rel=1e-5)


def test_regression_squared_error(tiny_config):
    model = bert_tf.BertClassifier(tiny_config, 1)
    x = inputs(tiny_config)
    predictions = outputs_of(model, x)
    targets = np.array([0.5, -1.0, 2.0, 0.25], np.float32)
    expected = np.mean((predictions[:, 0].astype(np.float64) - targets) ** 2)
    objective = ClassificationObjective(True)
    assert scripts_loss(objective, predictions, {"label_ids": targets}) == pytest.approx(
        expected, rel=1e-5
    )
    assert keras_loss(model, x, targets) == pytest.approx(expected, rel=1e-5)


def test_multi_label_binary_cross_entropy(tiny_config):
    model = bert_tf.BertClassifier(tiny_config, 3, multi_label=True)
    x = inputs(tiny_config)
    logits = outputs_of(model, x).astype(np.float64)
    labels = np.array([[1, 0, 1], [0, 0, 0], [1, 1, 1], [0, 1, 0]], np.float32)
    p = 1 / (1 + np.exp(-logits))
    expected = -np.mean(labels * np.log(p) + (1 - labels) * np.log(1 - p))
    features = {"label_ids": labels}
    assert scripts_loss(MultiLabelObjective(), logits.astype(np.float32), features) == (
        pytest.approx(expected, rel=1e-5)
    )
    assert keras_loss(model, x, labels) == pytest.approx(expected, rel=1e-5)


def test_span_loss_is_the_mean_of_the_start_and_end_cross_entropies(tiny_config):
    model = bert_tf.BertSpanLabeler(tiny_config)
    x = inputs(tiny_config)
    outputs = outputs_of(model, x)
    starts, ends = np.array([1, 0, 3, 2]), np.array([2, 0, 4, 2])
    start = cross_entropy(outputs["start_logits"], starts).mean()
    end = cross_entropy(outputs["end_logits"], ends).mean()
    expected = (start + end) / 2
    assert abs(start - end) > 1e-3  # a swapped or dropped end would show
    features = {"start_positions": starts, "end_positions": ends}
    assert scripts_loss(SquadObjective(), outputs, features) == pytest.approx(expected, rel=1e-5)
    y = {"start_logits": starts, "end_logits": ends}
    assert keras_loss(model, x, y) == pytest.approx(expected, rel=1e-5)


def test_token_cross_entropy_over_the_labelled_tokens(tiny_config):
    model = bert_tf.BertTokenClassifier(tiny_config, 5)
    x = inputs(tiny_config)
    logits = outputs_of(model, x)
    labels = token_labels(5)
    labelled = labels >= 0
    expected = cross_entropy(logits, np.maximum(labels, 0))[labelled].mean()
    objective = TaggingObjective()
    assert scripts_loss(objective, logits, {"label_ids": labels}) == pytest.approx(
        expected, rel=1e-5
    )
    assert keras_loss(model, x, labels) == pytest.approx(expected, rel=1e-5)
    weights = labelled.astype(np.float32)  # README's form: ids, 1 where labelled
    assert keras_loss(model, x, np.maximum(labels, 0), weights) == pytest.approx(expected, rel=1e-5)


def crf_nll(emissions, tags, transitions, start, end):
    """-log p(tags) by enumerating every tag path of the same length (float64)."""

    def score(path):
        moves = sum(transitions[a, b] for a, b in zip(path, path[1:]))
        return start[path[0]] + emissions[np.arange(len(path)), path].sum() + moves + end[path[-1]]

    paths = itertools.product(range(len(start)), repeat=len(tags))
    log_z = np.logaddexp.reduce([score(list(p)) for p in paths])
    return log_z - score(list(tags))


def test_crf_negative_log_likelihood_per_labelled_token(tiny_config):
    model = bert_tf.BertTokenClassifier(tiny_config, 3, use_crf=True)
    crf = model.crf
    crf.transitions.assign(RNG.normal(size=(3, 3)))
    crf.start_transitions.assign(RNG.normal(size=3))
    crf.end_transitions.assign(RNG.normal(size=3))
    x = inputs(tiny_config)
    emissions = outputs_of(model, x)
    labels = token_labels(3)
    labelled = labels >= 0
    weights = [np.asarray(w, np.float64) for w in (crf.transitions, crf.start_transitions)]
    end = np.asarray(crf.end_transitions, np.float64)
    nll = [
        crf_nll(emissions[i][labelled[i]].astype(np.float64), labels[i][labelled[i]], *weights, end)
        for i in range(BATCH)
    ]
    expected = np.sum(nll) / labelled.sum()
    objective = TaggingObjective(crf)
    assert scripts_loss(objective, emissions, {"label_ids": labels}) == pytest.approx(
        expected, rel=1e-5
    )
    assert keras_loss(model, x, labels) == pytest.approx(expected, rel=1e-5)
    sample_weight = labelled.astype(np.float32)
    assert keras_loss(model, x, np.maximum(labels, 0), sample_weight) == pytest.approx(
        expected, rel=1e-5
    )


def test_pretraining_masked_lm_and_next_sentence_losses(tiny_config):
    model = bert_tf.BertPretrainingModel(tiny_config)
    x = dict(inputs(tiny_config), masked_lm_positions=RNG.integers(1, 5, (BATCH, 3)))
    outputs = outputs_of(model, x)
    ids = RNG.integers(0, tiny_config.vocab_size, (BATCH, 3))
    weights = np.array([[1, 1, 1], [1, 1, 0], [1, 0, 0], [1, 0, 0]], np.float32)
    next_sentence = np.array([[0], [1], [1], [0]])
    masked_lm = np.sum(weights * cross_entropy(outputs["masked_lm_logits"], ids)) / (
        weights.sum() + 1e-5
    )
    nsp = cross_entropy(outputs["next_sentence_logits"], next_sentence[:, 0]).mean()
    features = {
        "masked_lm_ids": ids,
        "masked_lm_weights": weights,
        "next_sentence_labels": next_sentence,
    }
    for key, expected in [
        ("masked_lm_loss", masked_lm),
        ("next_sentence_loss", nsp),
        ("loss", masked_lm + nsp),
    ]:
        loss = scripts_loss(PretrainingObjective(), outputs, features, key)
        assert loss == pytest.approx(expected, rel=1e-5), key
    y = {"masked_lm_logits": ids, "next_sentence_logits": next_sentence}
    sample_weight = {"masked_lm_logits": weights, "next_sentence_logits": np.ones(BATCH)}
    assert keras_loss(model, x, y, sample_weight) == pytest.approx(masked_lm + nsp, rel=1e-5)
    masked_lm_logged = keras_loss(model, x, y, sample_weight, key="masked_lm_logits_loss")
    assert masked_lm_logged == pytest.approx(masked_lm, rel=1e-5)


def test_compiled_losses_survive_a_keras_file(tiny_config, tmp_path):
    """The default span losses (weighted) and a class-weighted loss come
    back from a `.keras` file as they were."""
    x = inputs(tiny_config)
    span = bert_tf.BertSpanLabeler(tiny_config)
    span.compile()
    classifier = bert_tf.BertClassifier(tiny_config, 3)
    classifier.compile(loss=SoftmaxCrossEntropy(class_weights=[0.5, 3.0, 1.25]))
    cases = [
        (span, {"start_logits": np.array([1, 0, 3, 2]), "end_logits": np.array([2, 0, 4, 2])}),
        (classifier, np.array([0, 2, 2, 1])),
    ]
    for model, y in cases:
        path = str(tmp_path / f"{model.name}.keras")
        model.save(path)
        loaded = keras.saving.load_model(path)
        losses = [float(m.compute_loss(x, y, m(x, training=False), training=False))
                  for m in (model, loaded)]  # fmt: skip
        assert losses[0] == losses[1], model.name
    assert loaded.loss.class_weights == [0.5, 3.0, 1.25]
