"""The linear-chain CRF (bert_tf/modeling/crf.py) against brute-force
enumeration of every tag path, in numpy."""

import itertools

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.crf import LinearChainCrf, compact, expand

NUM_TAGS = 3


def random_crf(seed):
    rng = np.random.default_rng(seed)
    crf = LinearChainCrf(NUM_TAGS)
    crf.transitions.assign(rng.normal(size=(NUM_TAGS, NUM_TAGS)))
    crf.start_transitions.assign(rng.normal(size=NUM_TAGS))
    crf.end_transitions.assign(rng.normal(size=NUM_TAGS))
    return crf


def brute_force(crf, emissions, length):
    """(log Z, {path: score}) of one row, enumerating every path in float64."""
    transitions, start, end = (
        np.asarray(v, np.float64)
        for v in (crf.transitions, crf.start_transitions, crf.end_transitions)
    )
    scores = {}
    for path in itertools.product(range(NUM_TAGS), repeat=length):
        score = start[path[0]] + end[path[-1]]
        score += sum(emissions[t, tag] for t, tag in enumerate(path))
        score += sum(transitions[a, b] for a, b in zip(path, path[1:]))
        scores[path] = score
    values = np.array(list(scores.values()))
    return values.max() + np.log(np.exp(values - values.max()).sum()), scores


@pytest.fixture
def batch():
    """Rows of lengths 1..4 and 0 in one batch of 5 steps, junk past each length."""
    rng = np.random.default_rng(7)
    lengths = np.array([1, 2, 3, 4, 0, 3], np.int32)
    emissions = (3 * rng.normal(size=(len(lengths), 5, NUM_TAGS))).astype(np.float32)
    tags = rng.integers(0, NUM_TAGS, (len(lengths), 5)).astype(np.int32)
    return emissions, tags, lengths


@pytest.mark.parametrize("seed", [0, 1])
def test_nll_is_the_brute_force_negative_log_likelihood(batch, seed):
    emissions, tags, lengths = batch
    crf = random_crf(seed)
    nll = crf.nll(emissions, tags, lengths).numpy()
    for row, length in enumerate(lengths):
        if length == 0:
            assert nll[row] == 0
            continue
        log_z, scores = brute_force(crf, emissions[row].astype(np.float64), length)
        expected = log_z - scores[tuple(tags[row, :length])]
        np.testing.assert_allclose(nll[row], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_viterbi_is_the_brute_force_best_path(batch, seed):
    emissions, _, lengths = batch
    crf = random_crf(seed)
    decoded = crf.decode(emissions, lengths).numpy()
    for row, length in enumerate(lengths):
        assert (decoded[row, length:] == 0).all()
        if length == 0:
            continue
        _, scores = brute_force(crf, emissions[row].astype(np.float64), length)
        assert tuple(decoded[row, :length]) == max(scores, key=scores.get)


def test_float16_emissions_compute_in_float32(batch):
    emissions, tags, lengths = batch
    crf = random_crf(0)
    half = tf.constant(emissions, tf.float16)
    nll = crf.nll(half, tags, lengths)
    assert nll.dtype == tf.float32
    expected = crf.nll(tf.cast(half, tf.float32), tags, lengths)
    np.testing.assert_allclose(nll, expected)


def test_zero_transitions_decode_the_argmax_and_nll_is_the_cross_entropy(batch):
    emissions, tags, lengths = batch
    crf = LinearChainCrf(NUM_TAGS)
    real = np.arange(5)[None, :] < lengths[:, None]
    decoded = crf.decode(emissions, lengths).numpy()
    np.testing.assert_array_equal(decoded, np.where(real, emissions.argmax(-1), 0))
    entropy = tf.nn.sparse_softmax_cross_entropy_with_logits(tags, emissions).numpy()
    np.testing.assert_allclose(
        crf.nll(emissions, tags, lengths), (entropy * real).sum(1), rtol=1e-5
    )


def test_labelled_decode_and_nll_compile_with_xla(batch):
    """The training step's and the export's calls, labelled positions scattered."""
    emissions, tags, _ = batch
    labels = np.where(np.random.default_rng(2).random(tags.shape) < 0.6, tags, -1)
    crf = random_crf(3)
    decode = tf.function(crf.labelled_decode, jit_compile=True)
    nll = tf.function(crf.labelled_nll, jit_compile=True)
    np.testing.assert_array_equal(
        decode(emissions, labels >= 0), crf.labelled_decode(emissions, labels >= 0)
    )
    np.testing.assert_allclose(
        nll(emissions, labels), crf.labelled_nll(emissions, labels), rtol=1e-5
    )


def test_labelled_nll_is_the_nll_of_the_labelled_positions(batch):
    emissions, tags, _ = batch
    labels = tags.copy()
    labels[0, [0, 2]] = -1
    crf = random_crf(4)
    keep = [1, 3, 4]
    expected = crf.nll(emissions[:1, keep], tags[:1, keep], [3])
    np.testing.assert_allclose(crf.labelled_nll(emissions, labels)[:1], expected, rtol=1e-6)
    decoded = crf.labelled_decode(emissions, labels >= 0).numpy()[0]
    assert (decoded[[0, 2]] == -1).all()
    np.testing.assert_array_equal(decoded[keep], crf.decode(emissions[:1, keep], [3])[0])


def test_compact_and_expand_are_inverse():
    values = np.array([[5, 6, 7, 8], [1, 2, 3, 4]], np.int32)
    mask = np.array([[False, True, False, True], [False, False, False, False]])
    moved, lengths = compact(values, mask)
    np.testing.assert_array_equal(lengths, [2, 0])
    np.testing.assert_array_equal(moved[:, :2][0], [6, 8])
    np.testing.assert_array_equal(expand(moved, mask), [[-1, 6, -1, 8], [-1, -1, -1, -1]])


def test_gradients_reach_the_transitions(batch):
    emissions, tags, lengths = batch
    crf = LinearChainCrf(NUM_TAGS)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(crf.nll(emissions, tags, lengths))
    grads = tape.gradient(loss, crf.trainable_variables)
    assert all(g is not None and np.abs(g).sum() > 0 for g in grads)
    assert keras.saving.deserialize_keras_object(
        keras.saving.serialize_keras_object(crf)
    ).num_tags == (NUM_TAGS)
