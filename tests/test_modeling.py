import json
import math
import warnings
import zipfile

import keras
import numpy as np
import numpy_bert
import pytest
import tensorflow as tf
from model_garden import copy_to_model_garden, model_garden_encoder
from shared import random_inputs, with_random_weights

from bert_tf.modeling import (
    BertClassifier,
    BertEncoder,
    BertMultipleChoice,
    BertPretrainingModel,
    BertSpanLabeler,
    BertTokenClassifier,
    pretraining_losses,
)
from bert_tf.modeling.activations import gelu

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics


def max_diff(a, b):
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def test_encoder_matches_model_garden_with_padding(tiny_config):
    ours = BertEncoder(tiny_config)
    theirs = model_garden_encoder(tiny_config)
    copy_to_model_garden(ours, theirs)
    inputs = random_inputs(tiny_config, batch=3, seq=12, lengths=[12, 7, 3])
    a, b = ours(inputs), theirs(inputs)
    assert max_diff(a["sequence_output"], b["sequence_output"]) < 1e-5
    assert max_diff(a["pooled_output"], b["pooled_output"]) < 1e-5
    assert len(a["encoder_outputs"]) == tiny_config.num_hidden_layers
    for ours_layer, theirs_layer in zip(a["encoder_outputs"], b["encoder_outputs"]):
        assert max_diff(ours_layer, theirs_layer) < 1e-5


def test_gelu_is_the_original_tanh_approximation():
    x = np.linspace(-6, 6, 101).astype(np.float32)
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf_form = 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))
    assert max_diff(gelu(x), tanh_form) < 1e-6
    assert max_diff(tanh_form, erf_form) > 1e-4  # the two forms are distinguishable


def test_padding_never_leaks_into_real_tokens(tiny_config):
    encoder = BertEncoder(tiny_config)
    inputs = random_inputs(tiny_config, batch=2, seq=10, lengths=[6, 4])
    changed = dict(
        inputs, input_word_ids=np.where(inputs["input_mask"] == 1, inputs["input_word_ids"], 5)
    )
    a = encoder(inputs)["sequence_output"].numpy()
    b = encoder(changed)["sequence_output"].numpy()
    for row, n in enumerate([6, 4]):
        assert max_diff(a[row, :n], b[row, :n]) < 1e-6
    assert max_diff(a[1, 4:], b[1, 4:]) > 1e-3  # the padded positions themselves did change


def test_all_zero_mask_row_behaves_like_unmasked(tiny_config):
    encoder = BertEncoder(tiny_config)
    inputs = random_inputs(tiny_config, batch=2, seq=8, lengths=[8, 8])
    zero = dict(inputs, input_mask=np.array([[1] * 8, [0] * 8], np.int32))
    a = encoder(inputs)["sequence_output"].numpy()
    b = encoder(zero)["sequence_output"].numpy()
    assert np.isfinite(b).all()
    assert max_diff(a, b) < 1e-5


def rows_seen_by_feed_forward(model, monkeypatch):
    """Per transformer layer, the list of row counts its feed-forward input had."""
    seen = []
    for layer in model.transformer_layers:
        calls = []
        dense_call = layer.output_dense.call

        def spy(x, dense_call=dense_call, calls=calls, **kwargs):
            calls.append(int(np.prod(x.shape[:-1])))
            return dense_call(x, **kwargs)

        monkeypatch.setattr(layer.output_dense, "call", spy)
        seen.append(calls)
    return seen


def test_skip_padding_and_pooled_only_compute_less_with_the_same_outputs(tiny_config, monkeypatch):
    """Real tokens (and a fully padded row's first position) alone go through the
    position-wise layers, and only first tokens through the last layer with
    pooled_only; the outputs equal the plain call's, zeros at padding."""
    encoder = BertEncoder(tiny_config)
    inputs = random_inputs(tiny_config, batch=4, seq=10, lengths=[10, 6, 3, 0])
    plain = encoder(inputs)
    seen = rows_seen_by_feed_forward(encoder, monkeypatch)

    skipped = encoder(inputs, skip_padding=True)
    assert [calls.pop() for calls in seen] == [10 + 6 + 3 + 1] * 2
    real = inputs["input_mask"].astype(bool)
    layers = [
        (plain["sequence_output"], skipped["sequence_output"]),
        *zip(plain["encoder_outputs"], skipped["encoder_outputs"]),
    ]
    for a, b in layers:
        a, b = np.asarray(a), np.asarray(b)
        assert max_diff(a[real], b[real]) < 1e-6
        assert not b[~real].any()
    # A row without real tokens has no meaningful output, only a finite one.
    assert max_diff(plain["pooled_output"][:3], skipped["pooled_output"][:3]) < 1e-6
    assert np.isfinite(skipped["pooled_output"]).all()

    for skip_padding, rows in ((True, 20), (False, 40)):
        pooled = encoder(inputs, skip_padding=skip_padding, pooled_only=True)
        assert list(pooled) == ["pooled_output"]
        assert [calls.pop() for calls in seen] == [rows, 4]
        assert max_diff(plain["pooled_output"][:3], pooled["pooled_output"][:3]) < 1e-6

    encoder(inputs, training=True, skip_padding=True, pooled_only=True)
    assert [calls.pop() for calls in seen] == [40, 40]  # training: the plain layout
    monkeypatch.setattr("bert_tf.modeling.encoder.is_tpu_strategy", lambda strategy: True)
    encoder(inputs, skip_padding=True)
    assert [calls.pop() for calls in seen] == [40, 40]  # TPUs need static shapes

    monkeypatch.undo()
    compiled = tf.function(
        lambda x: encoder(x, skip_padding=True, pooled_only=True), jit_compile=True
    )
    assert max_diff(plain["pooled_output"][:3], compiled(inputs)["pooled_output"][:3]) < 1e-5


def test_classifier_and_multiple_choice_skip_padding_when_not_training(tiny_config, monkeypatch):
    inputs = random_inputs(tiny_config, batch=4, seq=10, lengths=[10, 6, 3, 5])
    for model, batch in (
        (BertClassifier(tiny_config, num_labels=3), inputs),
        (
            BertMultipleChoice(tiny_config, num_choices=2),
            {k: v.reshape(2, 2, 10) for k, v in inputs.items()},
        ),
    ):
        seen = rows_seen_by_feed_forward(model.encoder, monkeypatch)
        model(batch)
        assert [calls.pop() for calls in seen] == [24, 4]
        model(batch, training=True)
        assert [calls.pop() for calls in seen] == [40, 40]


def test_initializers_are_truncated_normal_with_initializer_range(tiny_config):
    config = tiny_config.replace(initializer_range=0.05, intermediate_size=512)
    encoder = BertEncoder(config)
    kernel = encoder.transformer_layers[0].intermediate.kernel.numpy()
    assert np.abs(kernel).max() <= 2 * 0.05 + 1e-7
    # A normal truncated at 2 stddev has stddev 0.8796 of the untruncated one.
    assert abs(kernel.std() / (0.05 * 0.8796) - 1) < 0.05
    block = encoder.transformer_layers[0]
    assert np.all(block.output_layer_norm.gamma.numpy() == 1)
    assert np.all(block.intermediate.bias.numpy() == 0)
    assert block.output_layer_norm.epsilon == 1e-12


def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def test_masked_lm_head_gathers_and_ties_the_word_embeddings(tiny_config):
    model = BertPretrainingModel(tiny_config)
    model.masked_lm.output_bias.assign(np.linspace(-1, 1, tiny_config.vocab_size))
    inputs = random_inputs(tiny_config, batch=2, seq=10)
    positions = np.array([[1, 4, 0], [2, 2, 9]], np.int32)
    logits = model(dict(inputs, masked_lm_positions=positions))["masked_lm_logits"].numpy()

    sequence = model.encoder(inputs)["sequence_output"].numpy()
    gathered = np.stack([sequence[b, positions[b]] for b in range(2)])
    mlm = model.masked_lm
    hidden = gelu(gathered @ mlm.transform.kernel.numpy() + mlm.transform.bias.numpy())
    hidden = layer_norm(
        np.asarray(hidden), mlm.layer_norm.gamma.numpy(), mlm.layer_norm.beta.numpy()
    )
    table = model.encoder.embeddings.word_embeddings.numpy()
    expected = hidden @ table.T + mlm.output_bias.numpy()
    assert logits.shape == (2, 3, tiny_config.vocab_size)
    assert max_diff(logits, expected) < 1e-5
    assert mlm.embedding_table is model.encoder.embeddings.word_embeddings


MODELS = {
    "pretraining": (lambda c: BertPretrainingModel(c), numpy_bert.pretraining),
    "classifier": (lambda c: BertClassifier(c, 3), numpy_bert.classifier),
    "regression": (lambda c: BertClassifier(c, 1), numpy_bert.classifier),
    "span": (lambda c: BertSpanLabeler(c), numpy_bert.span_labeler),
    "multiple_choice": (lambda c: BertMultipleChoice(c, num_choices=2), numpy_bert.multiple_choice),
    "token_classifier": (lambda c: BertTokenClassifier(c, 5), numpy_bert.token_classifier),
}


def reference_inputs(config, name):
    """Padded inputs with both token types; [batch, choices, seq] for multiple choice."""
    inputs = random_inputs(config, batch=4, seq=10, seed=3, lengths=[10, 7, 4, 9])
    if name == "multiple_choice":
        return {k: v.reshape(2, 2, 10) for k, v in inputs.items()}
    if name == "pretraining":
        inputs["masked_lm_positions"] = np.array(
            [[1, 4, 0], [2, 2, 6], [3, 0, 0], [8, 5, 1]], np.int32
        )
    return inputs


@pytest.mark.parametrize(
    "name,act",
    [(name, "gelu") for name in MODELS]
    + [("pretraining", act) for act in ("gelu_exact", "relu", "tanh")],
)
def test_models_match_the_float64_numpy_reference(tiny_config, name, act):
    """Every head (and every activation, in the encoder and the masked LM
    head), with padding, both token types and every weight random and taken
    by its TF1 name: a weight under the wrong name, a wrong activation or
    mask breaks it. Measured float32 error: <= 5e-6 on outputs up to ~7
    (tanh vs erf gelu differ by ~1e-3 here)."""
    config = tiny_config.replace(hidden_act=act)
    make, reference = MODELS[name]
    model = make(config)
    inputs = reference_inputs(config, name)
    model(inputs)
    weights = with_random_weights(model, seed=len(name))
    expected = tf.nest.flatten(reference(weights, config, inputs))
    got = tf.nest.flatten(model(inputs))
    for e, g in zip(expected, got):
        assert g.dtype == tf.float32 and g.shape == e.shape
        assert max_diff(g, e) < 2e-5


def test_encoder_outputs_every_layer_like_the_numpy_reference(tiny_config):
    encoder = BertEncoder(tiny_config)
    inputs = reference_inputs(tiny_config, "encoder")
    weights = with_random_weights(encoder)
    expected = numpy_bert.encoder(weights, tiny_config, inputs)
    got = encoder(inputs)
    assert len(got["encoder_outputs"]) == tiny_config.num_hidden_layers
    for e, g in zip(expected["encoder_outputs"], got["encoder_outputs"]):
        assert max_diff(g, e) < 2e-5
    assert max_diff(got["pooled_output"], expected["pooled_output"]) < 2e-5


def test_pretraining_losses_match_the_original_formula(tiny_config):
    rng = np.random.default_rng(1)
    outputs = {
        "masked_lm_logits": rng.normal(size=(2, 3, 7)).astype(np.float32),
        "next_sentence_logits": rng.normal(size=(2, 2)).astype(np.float32),
    }
    features = {
        "masked_lm_ids": np.array([[1, 2, 0], [6, 0, 0]]),
        "masked_lm_weights": np.array([[1, 1, 0], [1, 0, 0]], np.float32),
        "next_sentence_labels": np.array([[0], [1]]),
    }
    losses = pretraining_losses(outputs, features)

    def log_softmax(x):
        return x - np.log(np.exp(x).sum(-1, keepdims=True))

    lp = log_softmax(outputs["masked_lm_logits"])
    per_position = -np.take_along_axis(lp, features["masked_lm_ids"][..., None], -1)[..., 0]
    mlm = (per_position * features["masked_lm_weights"]).sum() / (3 + 1e-5)
    nsp = -log_softmax(outputs["next_sentence_logits"])[[0, 1], [0, 1]].mean()
    assert abs(float(losses["masked_lm_loss"]) - mlm) < 1e-5
    assert abs(float(losses["next_sentence_loss"]) - nsp) < 1e-5
    assert abs(float(losses["loss"]) - mlm - nsp) < 1e-5


@pytest.mark.learning
def test_tiny_pretraining_model_loss_falls(tiny_config, calibration):
    keras.utils.set_random_seed(calibration.seed(0))
    model = BertPretrainingModel(tiny_config)
    inputs = random_inputs(tiny_config, batch=4, seq=12, lengths=[12, 10, 8, 12])
    rng = np.random.default_rng(0)
    features = dict(
        inputs,
        masked_lm_positions=rng.integers(1, 8, (4, 3)).astype(np.int32),
        masked_lm_ids=rng.integers(0, tiny_config.vocab_size, (4, 3)),
        masked_lm_weights=np.ones((4, 3), np.float32),
        next_sentence_labels=np.array([[0], [1], [1], [0]]),
    )
    optimizer = keras.optimizers.Adam(1e-2)

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            loss = pretraining_losses(model(features, training=True), features)["loss"]
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    losses = [float(step()) for _ in range(30)]
    calibration.record(loss_ratio=losses[-1] / losses[0])
    assert losses[-1] < 0.5 * losses[0]  # 0.025 to 0.026 over 5 seeds and CPU settings


def test_keras_files_that_name_the_old_models_module_load(tiny_config, tmp_path):
    """A `.keras` file saved before `modeling/models.py` was split records
    `"module": "bert_tf.modeling.models"`; Keras finds the class by its
    registered name (`bert_tf>BertClassifier`), which did not change, and
    never imports the old path."""
    for cls in (BertPretrainingModel, BertClassifier, BertSpanLabeler, BertMultipleChoice):
        assert keras.saving.get_registered_name(cls) == f"bert_tf>{cls.__name__}"
    model = BertClassifier(tiny_config, 3)
    path, old = str(tmp_path / "model.keras"), str(tmp_path / "old.keras")
    model.save(path)
    with zipfile.ZipFile(path) as new_file, zipfile.ZipFile(old, "w") as old_file:
        for item in new_file.infolist():
            data = new_file.read(item)
            if item.filename == "config.json":
                config = json.loads(data)
                assert config["module"] == "bert_tf.modeling.classifier"
                data = json.dumps({**config, "module": "bert_tf.modeling.models"})
            old_file.writestr(item, data)
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        loaded = keras.saving.load_model(old)
    assert not [w for w in warned if "bert_tf.modeling.models" in str(w.message)]
    assert type(loaded) is BertClassifier
    inputs = random_inputs(tiny_config)
    assert max_diff(model(inputs), loaded(inputs)) == 0


# Largest differences from the float64 reference measured over 4 seeds of
# random weights (logits up to ~9; another random model is 1.9-10 away):
# masked LM / next sentence bf16 0.154 / 0.074, fp16 0.017 / 0.006, float32
# 4e-6. Tolerances are ~2x those.
MIXED_TOLERANCE = {"mixed_bfloat16": (0.3, 0.15), "mixed_float16": (0.04, 0.015)}


@pytest.mark.half_precision
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_keeps_float32_variables_and_logits(tiny_config, policy):
    inputs = reference_inputs(tiny_config, "pretraining")
    keras.mixed_precision.set_dtype_policy(policy)
    try:
        model = BertPretrainingModel(tiny_config)
        model(inputs)
        weights = with_random_weights(model)
        outputs = model(inputs)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    reference = numpy_bert.pretraining(weights, tiny_config, inputs)
    assert all(v.dtype == "float32" for v in model.weights)
    assert outputs["masked_lm_logits"].dtype == tf.float32
    assert outputs["next_sentence_logits"].dtype == tf.float32
    mlm_tolerance, nsp_tolerance = MIXED_TOLERANCE[policy]
    assert max_diff(outputs["masked_lm_logits"], reference["masked_lm_logits"]) < mlm_tolerance
    assert (
        max_diff(outputs["next_sentence_logits"], reference["next_sentence_logits"]) < nsp_tolerance
    )
    plain = model.encoder(inputs)
    assert plain["sequence_output"].dtype == tf.as_dtype(policy.split("_")[1])
    fast = model.encoder(inputs, skip_padding=True, pooled_only=True)["pooled_output"]
    assert fast.dtype == plain["pooled_output"].dtype
    assert (
        max_diff(tf.cast(fast, tf.float32), tf.cast(plain["pooled_output"], tf.float32))
        < nsp_tolerance
    )
