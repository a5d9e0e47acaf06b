"""The truncated normal's distribution, and deferred random initialisation: a
model built inside `deferred_draws()` ends with the weights a plain build
draws, except where a checkpoint set them."""

import math

import keras
import numpy as np
import pytest

from bert_tf import checkpoints
from bert_tf.initializers import TruncatedNormal, deferred_draws
from bert_tf.modeling import BertClassifier, BertEncoder, BertPretrainingModel
from bert_tf.training.checkpoint_manager import CheckpointManager


def _values(model):
    return {v.path: v.numpy() for v in model.weights}


def _built(model_fn, seed, deferred):
    keras.utils.set_random_seed(seed)
    if not deferred:
        return model_fn(), None
    with deferred_draws() as draws:
        return model_fn(), draws


def test_finish_draws_exactly_what_the_build_draws(tiny_config):
    want = _values(_built(lambda: BertPretrainingModel(tiny_config), 3, deferred=False)[0])
    model, draws = _built(lambda: BertPretrainingModel(tiny_config), 3, deferred=True)
    before = _values(model)
    kernel = "bert_encoder/layer_0/intermediate/kernel"
    assert not before[kernel].any()  # not drawn yet
    draws.finish()
    got = _values(model)
    assert got.keys() == want.keys()
    for path in want:
        np.testing.assert_array_equal(got[path], want[path], err_msg=path)
    assert got[kernel].any()


def test_a_checkpoint_load_keeps_its_values_and_the_rest_is_drawn(tiny_config, tmp_path):
    keras.utils.set_random_seed(11)
    source = BertEncoder(tiny_config)
    prefix = checkpoints.save_tf1_checkpoint(source, str(tmp_path / "encoder.ckpt"))

    def classifier():
        return BertClassifier(tiny_config, num_labels=3)

    want = _values(_built(classifier, 5, deferred=False)[0])
    model, draws = _built(classifier, 5, deferred=True)
    checkpoints.load_checkpoint(model, prefix, strict=False)
    draws.finish()
    got = _values(model)
    encoder = {v.path.split("/", 1)[1]: v.numpy() for v in source.weights}
    head = [p for p in got if "classifier" in p and p.endswith("output_weights")]
    assert head
    for path, value in got.items():
        inner = path.split("/", 1)[1]
        if inner in encoder:
            np.testing.assert_array_equal(value, encoder[inner], err_msg=path)
        else:  # the new head (and pooler-free extras): as a plain build draws them
            np.testing.assert_array_equal(value, want[path], err_msg=path)
    assert got[head[0]].any()


def test_a_resume_takes_every_variable_off_the_draws(tiny_config, tmp_path):
    keras.utils.set_random_seed(2)
    trained = BertPretrainingModel(tiny_config)
    manager = CheckpointManager(str(tmp_path), trained, None, keras.Variable(7, dtype="int64"), 1)
    prefix = manager.save()
    model, draws = _built(lambda: BertPretrainingModel(tiny_config), 9, deferred=True)
    step = keras.Variable(0, dtype="int64")
    CheckpointManager(str(tmp_path), model, None, step, 1).restore(prefix)
    draws.finish()  # nothing is left to draw: the restored values stay
    for got, want in zip(model.weights, trained.weights):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=got.path)


def test_outside_deferred_draws_the_initializer_draws_at_once():
    values = TruncatedNormal(stddev=0.5, seed=4)((2000,))
    assert np.abs(values).max() <= 1.0
    assert values.numpy().std() == pytest.approx(0.5 * 0.8796, rel=0.05)


def test_draws_follow_the_normal_cut_at_two_stddev():
    """Kolmogorov-Smirnov against the analytic CDF of a normal truncated at
    2 stddev; the draw is seeded, so the test is deterministic."""
    mean, stddev, n = 0.1, 0.5, 100_000
    drawn = TruncatedNormal(mean=mean, stddev=stddev, seed=7)((n,)).numpy()
    z = np.sort((drawn.astype(np.float64) - mean) / stddev)
    # Cut at 2 stddev, not before: ~28 values lie within 0.005 of each edge.
    assert -2 <= z[0] < -1.995 and 1.995 < z[-1] <= 2
    phi = np.vectorize(lambda t: 0.5 * (1 + math.erf(t / math.sqrt(2))))
    cdf = (phi(z) - phi(-2.0)) / (phi(2.0) - phi(-2.0))
    distance = max((np.arange(1, n + 1) / n - cdf).max(), (cdf - np.arange(n) / n).max())
    assert distance < 1.63 / math.sqrt(n)  # the KS test's 1% critical value
    # Another seed, other values; the same seed, the same values (stateless).
    assert not np.array_equal(drawn, TruncatedNormal(mean=mean, stddev=stddev, seed=8)((n,)))
    np.testing.assert_array_equal(drawn, TruncatedNormal(mean=mean, stddev=stddev, seed=7)((n,)))


def test_each_embedding_table_is_drawn_on_its_own(tiny_config):
    # One seeded initializer shared by the three tables gave them the same
    # leading values (position i started equal to token i).
    keras.utils.set_random_seed(0)
    embeddings = BertEncoder(tiny_config).embeddings
    word = embeddings.word_embeddings.numpy()
    for table in (embeddings.token_type_embeddings, embeddings.position_embeddings):
        rows = table.numpy()
        assert not np.isclose(rows, word[: len(rows)]).any(), table.path
