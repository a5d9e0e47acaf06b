"""Recomputation (`recompute=`, `--recompute`): the same losses, gradients and
training as keeping the activations, and really recomputed where asked."""

import keras
import numpy as np
import pytest
import shared
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling import BertClassifier, BertPretrainingModel, layers
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.training import options as training_options

CONFIG = BertConfig(
    vocab_size=50,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=16,
    hidden_dropout_prob=0.2,
    attention_probs_dropout_prob=0.2,
)


def batch(seed=0, size=3, seq=12):
    rng = np.random.default_rng(seed)
    mask = (np.arange(seq)[None, :] < [[seq], [seq - 3], [5]][:size]).astype(np.int32)
    return {
        "input_word_ids": rng.integers(1, CONFIG.vocab_size, (size, seq)).astype(np.int32) * mask,
        "input_mask": mask,
        "input_type_ids": (np.arange(seq)[None, :] >= seq // 2).astype(np.int32) * mask,
        "masked_lm_positions": rng.integers(0, 5, (size, 4)).astype(np.int32),
    }


@pytest.fixture
def counted_recomputations(monkeypatch):
    return shared.counted_recomputations(monkeypatch)


def loss_and_gradients(mode, policy="float32", jit_compile=False, eager=False):
    keras.mixed_precision.set_global_policy(policy)
    try:
        keras.utils.set_random_seed(7)
        model = BertPretrainingModel(CONFIG, recompute=mode)
        inputs = batch()

        def step():
            with tf.GradientTape() as tape:
                outputs = model(inputs, training=True)
                loss = tf.reduce_mean(
                    tf.nn.sparse_softmax_cross_entropy_with_logits(
                        inputs["input_word_ids"][:, :4] % CONFIG.vocab_size,
                        outputs["masked_lm_logits"],
                    )
                ) + tf.reduce_mean(outputs["next_sentence_logits"] ** 2)
            gradients = tape.gradient(loss, model.trainable_variables)
            return loss, [tf.convert_to_tensor(g) for g in gradients]

        if not eager:
            step = tf.function(step, jit_compile=jit_compile)
        # Two steps: the second one's dropout seeds come from advanced generators.
        results = [step(), step()]
        return [(float(loss), [g.numpy() for g in grads]) for loss, grads in results]
    finally:
        keras.mixed_precision.set_global_policy("float32")


@pytest.mark.numerics
@pytest.mark.parametrize(
    "setting",
    [
        pytest.param({}, id="graph"),
        pytest.param({"eager": True}, id="eager"),
        pytest.param({"jit_compile": True}, id="xla"),
        pytest.param({"policy": "mixed_bfloat16"}, id="bfloat16", marks=pytest.mark.half_precision),
    ],
)
def test_recomputed_losses_and_gradients_equal_the_kept_ones(setting, counted_recomputations):
    kept = loss_and_gradients("none", **setting)
    assert counted_recomputations == []
    # Dropout is on: the two steps draw other units.
    assert kept[0][0] != kept[1][0]
    tolerance = (
        {"rtol": 2e-2, "atol": 1e-3} if "policy" in setting else {"rtol": 1e-5, "atol": 1e-7}
    )
    for mode, recomputed_name in (("layer", "transform"), ("attention", "attend")):
        del counted_recomputations[:]
        again = loss_and_gradients(mode, **setting)
        traced = 2 if setting.get("eager") else 1  # runs of the Python step
        assert counted_recomputations == [recomputed_name] * CONFIG.num_hidden_layers * traced
        for (loss, grads), (kept_loss, kept_grads) in zip(again, kept):
            np.testing.assert_allclose(loss, kept_loss, **tolerance)
            assert len(grads) == len(kept_grads)
            for grad, kept_grad in zip(grads, kept_grads):
                np.testing.assert_allclose(grad, kept_grad, **tolerance)


def test_dropout_drawn_once_per_step_as_keras_dropout_draws():
    """The seeds are drawn outside the recomputed function, in the order the
    Keras Dropout layers would draw them: each generator advances once per
    drop, and a recomputing layer drops the units `keras.layers.Dropout`
    drops with the same generator state."""
    keras.utils.set_random_seed(3)
    dropout = keras.layers.Dropout(0.3)
    x = tf.ones((4, 50))
    start = dropout.seed_generator.state.numpy().copy()
    expected = dropout(x, training=True).numpy()
    dropout.seed_generator.state.assign(start)
    seed = layers.draw_dropout_seed(dropout, training=True)
    np.testing.assert_array_equal(layers.seeded_dropout(x, 0.3, seed).numpy(), expected)
    assert layers.draw_dropout_seed(dropout, training=False) is None
    np.testing.assert_array_equal(
        dropout.seed_generator.state.numpy(), start + [0, 1], "one draw, as Keras"
    )


@pytest.mark.numerics
def test_keras_fit_recomputes_and_trains_as_without(counted_recomputations):
    inputs = batch(seed=1)
    del inputs["masked_lm_positions"]
    labels = np.array([0, 1, 1])
    weights = {}
    for mode in ("none", "layer"):
        keras.utils.set_random_seed(5)
        model = BertClassifier(CONFIG, 2, recompute=mode)
        model.compile(learning_rate=1e-3)
        model.fit(inputs, labels, batch_size=3, epochs=3, verbose=0)
        weights[mode] = model.get_weights()
    assert set(counted_recomputations) == {"transform"}
    for layer_weight, kept_weight in zip(weights["layer"], weights["none"]):
        np.testing.assert_allclose(layer_weight, kept_weight, rtol=1e-5, atol=1e-6)


def test_recompute_is_part_of_the_models_config(tmp_path):
    model = BertClassifier(CONFIG, 2, recompute="attention")
    path = str(tmp_path / "model.keras")
    model.save(path)
    assert keras.saving.load_model(path).encoder.recompute == "attention"
    assert "recompute" not in BertClassifier(CONFIG, 2).get_config()
    encoder = BertEncoder(CONFIG)
    encoder.recompute = "layer"
    assert [layer.recompute for layer in encoder.transformer_layers] == ["layer", "layer"]


def test_unknown_mode_is_one_line_naming_the_choices():
    with pytest.raises(InputError, match=r"recompute='full': expected one of 'none', 'layer'"):
        BertEncoder(CONFIG, recompute="full")
    with pytest.raises(InputError, match=r"unknown --recompute 'full'"):
        training_options.TrainingOptions(recompute="full")


def test_modes_are_the_same_in_the_flags_and_the_layers():
    assert training_options.RECOMPUTE_MODES == layers.RECOMPUTE_MODES
