"""Intermediate-layer distillation (`modeling.layer_distillation`): each
loss against numpy written from the papers' definitions (TinyBERT's hidden
and embedding MSE through a projection, DistilBERT's cosine, MiniLM's
attention and value-relation KL), the layer map, the task models' states,
and the Keras `Distiller` with them."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from shared import random_inputs

import bert_tf
from bert_tf.errors import InputError
from bert_tf.modeling.layer_distillation import (
    LOSSES,
    LayerDistillation,
    cosine_errors,
    masked_mean,
    parse_layer_map,
    relation_kl,
    relation_log_probs,
    squared_errors,
)


def np_log_softmax(x):
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def np_relations(left, right, heads, mask):
    """`[batch, heads, seq, seq]` log-probabilities of MiniLM's relations."""
    batch, seq, width = left.shape
    d = width // heads
    left = left.reshape(batch, seq, heads, d).transpose(0, 2, 1, 3)
    right = right.reshape(batch, seq, heads, d).transpose(0, 2, 1, 3)
    scores = left @ right.transpose(0, 1, 3, 2) / np.sqrt(d)
    scores = scores + (1.0 - mask[:, None, None, :]) * -10000.0
    return np_log_softmax(scores)


def np_kl(teacher, student):
    return (np.exp(teacher) * (teacher - student)).sum(-1).mean(1)


def np_mse(student, teacher):
    return ((student - teacher) ** 2).mean(-1)


def np_cosine(student, teacher):
    """1 - cosine; nan where a vector is zero (padding of a model that skips it)."""
    dot = (student * teacher).sum(-1)
    with np.errstate(invalid="ignore"):
        return 1.0 - dot / np.linalg.norm(student, axis=-1) / np.linalg.norm(teacher, axis=-1)


def dense(layer, x):
    return x @ layer.kernel.numpy() + layer.bias.numpy()


def test_the_token_losses_equal_numpy():
    rng = np.random.default_rng(0)
    s, t = rng.normal(size=(2, 5, 8)), rng.normal(size=(2, 5, 8))
    np.testing.assert_allclose(squared_errors(s, t), np_mse(s, t), rtol=1e-5)
    np.testing.assert_allclose(cosine_errors(s, t), np_cosine(s, t), rtol=1e-5, atol=1e-6)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    errors = rng.uniform(size=(2, 5))
    np.testing.assert_allclose(masked_mean(errors, mask), (errors * mask).sum() / 8, rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(
    heads=st.sampled_from([1, 2, 4]),
    lengths=st.lists(st.integers(1, 6), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
)
def test_relation_kl_equals_numpy_and_ignores_padded_keys(heads, lengths, seed):
    rng = np.random.default_rng(seed)
    batch, seq, width = len(lengths), 6, 8
    mask = (np.arange(seq)[None, :] < np.array(lengths)[:, None]).astype(np.float32)
    a, b, c, d = (rng.normal(size=(batch, seq, width)).astype(np.float32) for _ in range(4))
    teacher, student = relation_log_probs(a, b, heads, mask), relation_log_probs(c, d, heads, mask)
    np.testing.assert_allclose(teacher, np_relations(a, b, heads, mask), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(
        relation_kl(teacher, student),
        np_kl(np_relations(a, b, heads, mask), np_relations(c, d, heads, mask)),
        rtol=1e-4,
        atol=1e-5,
    )
    # What stands at padded keys changes nothing; a model's own relations: 0.
    noisy = np.where(mask[..., None] > 0, d, 100.0 * rng.normal(size=d.shape)).astype(np.float32)
    np.testing.assert_allclose(
        relation_kl(teacher, relation_log_probs(c, noisy, heads, mask)) * mask,
        relation_kl(teacher, student) * mask,
        rtol=1e-4,
        atol=1e-5,
    )
    np.testing.assert_allclose(relation_kl(teacher, teacher), 0.0, atol=1e-6)


def test_the_layer_map_defaults_to_evenly_spaced_layers_and_checks_a_given_one():
    assert parse_layer_map(None, 3, 6) == [(0, 1), (1, 3), (2, 5)]
    assert parse_layer_map("", 2, 2) == [(0, 0), (1, 1)]
    assert parse_layer_map(" 0:5, 2:2 ", 3, 6) == [(0, 5), (2, 2)]
    for text, words in [
        ("0:6", "0:6 does not fit a student of 3 layers and a teacher of 6"),
        ("3:1", "3:1 does not fit"),
        ("0-1", "expected student:teacher layer pairs"),
        ("0:1,0:2", "a student layer is mapped twice"),
        ("a:b", "expected student:teacher"),
    ]:
        with pytest.raises(InputError, match=words):
            parse_layer_map(text, 3, 6)


def models(config, student_config):
    keras.utils.set_random_seed(3)
    teacher = bert_tf.BertClassifier(config, num_labels=3)
    student = bert_tf.BertClassifier(student_config, num_labels=3)
    return teacher, student


@pytest.mark.parametrize("widths", ["equal", "narrower"])
def test_every_loss_equals_numpy_on_the_models_states(tiny_config, widths):
    """Teacher 2 layers x 32 (4 heads); student 1 layer of 32 (4 heads) or
    16 (2 heads, through the projections), layer 0 mapped to the teacher's 1."""
    student_config = dataclasses.replace(tiny_config, num_hidden_layers=1)
    if widths == "narrower":
        student_config = dataclasses.replace(
            student_config, hidden_size=16, num_attention_heads=2, intermediate_size=32
        )
    teacher, student = models(tiny_config, student_config)
    for model in (teacher, student):  # peaked attention: new layers' is near uniform
        for layer in model.encoder.transformer_layers:
            for dense_layer in (layer.attention.query, layer.attention.key, layer.attention.value):
                dense_layer.kernel.assign(dense_layer.kernel * 20.0)
    x = random_inputs(tiny_config, batch=3, seq=9, lengths=[9, 6, 2])
    weights = dict.fromkeys(LOSSES, 1.0)
    losses = LayerDistillation(student_config, tiny_config, weights)
    variables = losses.create_variables()
    assert losses.layers == [(0, 1)]
    _, s_states = student(x, training=False, return_states=True)
    _, t_states = teacher(x, training=False, return_states=True)
    got = losses.errors(s_states, t_states, student.encoder, teacher.encoder)

    mask = x["input_mask"].astype(np.float32)
    s_h = [h.numpy() for h in s_states["hidden_states"]]
    t_h = [h.numpy() for h in t_states["hidden_states"]]
    if widths == "narrower":
        assert sorted(variables) == [
            "distillation/embedding_projection/bias",
            "distillation/embedding_projection/kernel",
            "distillation/hidden_projection/bias",
            "distillation/hidden_projection/kernel",
        ]
        hidden = dense(losses.projections["hidden_projection"], s_h[1])
        embedded = dense(losses.projections["embedding_projection"], s_h[0])
    else:
        assert variables == {}
        hidden, embedded = s_h[1], s_h[0]
    s_att = student.encoder.transformer_layers[0].attention
    t_att = teacher.encoder.transformer_layers[1].attention
    heads = student_config.num_attention_heads

    def relations(attention, inputs, left, right):
        return np_relations(
            dense(getattr(attention, left), inputs),
            dense(getattr(attention, right), inputs),
            heads,
            mask,
        )

    expected = {
        "hidden": np_mse(hidden, t_h[2]),
        "cosine": np_cosine(hidden, t_h[2]),
        "embedding": np_mse(embedded, t_h[0]),
        "attention": np_kl(
            relations(t_att, t_h[1], "query", "key"), relations(s_att, s_h[0], "query", "key")
        ),
        "value_relation": np_kl(
            relations(t_att, t_h[1], "value", "value"), relations(s_att, s_h[0], "value", "value")
        ),
    }
    assert set(got) == set(expected)
    for name in LOSSES:
        assert masked_mean(got[name], mask) > 0.01, name
        np.testing.assert_allclose(
            masked_mean(got[name], mask),
            (np.nan_to_num(expected[name]) * mask).sum() / mask.sum(),
            rtol=2e-4,
            err_msg=name,
        )
    # The weights scale each loss.
    weighted = LayerDistillation(student_config, tiny_config, {"hidden": 2.0, "cosine": 0.5})
    weighted.projections = losses.projections
    combined = weighted.weighted_errors(
        weighted.errors(s_states, t_states, student.encoder, teacher.encoder)
    )
    np.testing.assert_allclose(combined, 2.0 * got["hidden"] + 0.5 * got["cosine"], rtol=1e-5)


def test_the_task_models_states_are_their_encoders_layers(tiny_config):
    x = random_inputs(tiny_config, batch=2, seq=8, lengths=[8, 5])
    real = x["input_mask"][..., None] > 0
    keras.utils.set_random_seed(1)
    for model in (
        bert_tf.BertClassifier(tiny_config, num_labels=2),
        bert_tf.BertSpanLabeler(tiny_config),
        bert_tf.BertTokenClassifier(tiny_config, num_labels=3),
    ):
        outputs, states = model(x, training=False, return_states=True)
        plain = model(x, training=False)
        tf.nest.map_structure(
            lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6), outputs, plain
        )
        encoded = model.encoder(x, training=False)
        expected = [encoded["embedding_output"], *encoded["encoder_outputs"]]
        assert len(states["hidden_states"]) == tiny_config.num_hidden_layers + 1
        for got, want in zip(states["hidden_states"], expected):
            np.testing.assert_allclose(got * real, want * real, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(states["input_mask"], x["input_mask"])
    choices = bert_tf.BertMultipleChoice(tiny_config, num_choices=2)
    paired = {k: np.stack([v, v[::-1]], axis=1) for k, v in x.items()}
    _, states = choices(paired, training=False, return_states=True)
    assert states["hidden_states"][0].shape[:2] == (4, 8)
    assert states["input_mask"].shape == (4, 8)


def test_losses_that_do_not_fit_the_models_are_refused(tiny_config):
    student_config = dataclasses.replace(
        tiny_config,
        num_hidden_layers=1,
        hidden_size=24,
        num_attention_heads=3,
        intermediate_size=32,
    )
    with pytest.raises(InputError, match="teacher's hidden size 32 does not divide into 3"):
        LayerDistillation(student_config, tiny_config, {"attention": 1.0})
    with pytest.raises(InputError, match="unknown intermediate losses"):
        LayerDistillation(student_config, tiny_config, {"hiden": 1.0})
    with pytest.raises(InputError, match=r"layer_map=\[\(0, 2\)\]: 0:2 does not fit"):
        LayerDistillation(student_config, tiny_config, {"hidden": 1.0}, layers=[(0, 2)])
    with pytest.raises(InputError, match="layer_map=\\[\\]: no layers mapped"):
        LayerDistillation(student_config, tiny_config, {"hidden": 1.0}, layers=[])
    assert not LayerDistillation(student_config, tiny_config, {"hidden": 0.0})


def keras_models(config, student_config):
    teacher, student = models(config, student_config)
    weights = teacher.classifier.output_weights
    weights.assign(weights * 100.0)
    return teacher, student


def test_the_distiller_adds_the_intermediate_losses_and_trains_the_projection(tiny_config):
    student_config = dataclasses.replace(
        tiny_config,
        num_hidden_layers=1,
        hidden_size=16,
        num_attention_heads=2,
        intermediate_size=32,
    )
    teacher, student = keras_models(tiny_config, student_config)
    weights = {"hidden": 3.0, "attention": 0.5}
    distiller = bert_tf.Distiller(
        student, teacher, distillation_weight=0.4, intermediate_weights=weights, layer_map="0:0"
    )
    distiller.compile(learning_rate=1e-2)
    x = random_inputs(tiny_config, batch=4, seq=10, lengths=[10, 8, 5, 3])
    y = np.array([0, 2, 1, 2])
    plain = bert_tf.Distiller(student, teacher, distillation_weight=0.4)
    plain.compile()
    # The training call's loss: the prediction loss plus the weighted intermediate ones.
    outputs = distiller(x, training=True)  # tiny_config has no dropout; the head's is after
    _, s_states = student(x, training=True, return_states=True)
    _, t_states = teacher(x, training=False, return_states=True)
    layers = distiller.layer_losses
    assert layers.layers == [(0, 0)]
    intermediate = masked_mean(
        layers.weighted_errors(layers.errors(s_states, t_states, student.encoder, teacher.encoder)),
        x["input_mask"],
    )
    loss = distiller.compute_loss(x, y, outputs)
    np.testing.assert_allclose(
        loss, plain.compute_loss(x, y, outputs["student"]) + intermediate, rtol=1e-5
    )
    projection = distiller.projections[0]
    before = projection.kernel.numpy().copy()
    teacher_before = [w.numpy().copy() for w in teacher.weights]
    history = distiller.fit(x, y, batch_size=4, epochs=3, verbose=0).history
    assert history["loss"][-1] < history["loss"][0]
    assert not np.allclose(projection.kernel.numpy(), before)
    for w, old in zip(teacher.weights, teacher_before):
        np.testing.assert_array_equal(w.numpy(), old)
    # Alone: the intermediate losses only, labels or not.
    alone = bert_tf.Distiller(
        student, teacher, intermediate_weights=weights, intermediate_only=True
    )
    outputs = alone(x, training=True)
    np.testing.assert_allclose(
        alone.compute_loss(x, y, outputs), alone.compute_loss(x, None, outputs)
    )
    with pytest.raises(InputError, match="intermediate_only needs intermediate_weights"):
        bert_tf.Distiller(student, teacher, intermediate_only=True)
    with pytest.raises(InputError, match="layer_map=0:1,0:0: a student layer is mapped twice"):
        bert_tf.Distiller(student, teacher, intermediate_weights=weights, layer_map="0:1,0:0")
