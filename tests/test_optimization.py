"""Optimizers and schedule against numpy references written from the formulas."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.optimization import (
    OPTIMIZERS,
    AdamW,
    BertAdam,
    Lamb,
    WarmupLinearDecay,
    create_optimizer,
)
from bert_tf.training.loop import LoopConfig, Objective, Trainer

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

KINDS = ("bert_adam", "adamw", "lamb")
BETA_1, BETA_2, EPSILON = 0.9, 0.999, 1e-6
WEIGHT_DECAY = 0.1
# init_lr, num_train_steps, num_warmup_steps
SCHEDULE = (0.05, 10, 2)
PATHS = ["dense/kernel", "dense/bias", "output_layer_norm/gamma", "output_layer_norm/beta"]
DECAYS = [True, False, False, False]


def reference_lr(step, init_lr, num_train_steps, num_warmup_steps):
    if step < num_warmup_steps:
        return init_lr * step / num_warmup_steps
    return init_lr * (1.0 - min(step, num_train_steps) / num_train_steps)


def clip_by_global_norm(grads, clip_norm):
    norm = np.sqrt(sum(np.sum(g**2) for g in grads))
    return [g * clip_norm / max(norm, clip_norm) for g in grads]


def reference_run(kind, params, grad_batches, lrs, decays, clip_norm=1.0):
    """Applies `kind` in float64 numpy, one update per gradient batch."""
    params = [p.astype(np.float64) for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t, (grads, lr) in enumerate(zip(grad_batches, lrs), start=1):
        if clip_norm:
            grads = clip_by_global_norm(grads, clip_norm)
        for i, (p, g) in enumerate(zip(params, grads)):
            m[i] = BETA_1 * m[i] + (1 - BETA_1) * g
            v[i] = BETA_2 * v[i] + (1 - BETA_2) * g**2
            if kind == "bert_adam":
                update = m[i] / (np.sqrt(v[i]) + EPSILON)
                if decays[i]:
                    update = update + WEIGHT_DECAY * p
                params[i] = p - lr * update
            elif kind == "adamw":
                if decays[i]:
                    p = p - lr * WEIGHT_DECAY * p
                alpha = lr * np.sqrt(1 - BETA_2**t) / (1 - BETA_1**t)
                params[i] = p - alpha * m[i] / (np.sqrt(v[i]) + EPSILON)
            else:
                m_hat = m[i] / (1 - BETA_1**t)
                v_hat = v[i] / (1 - BETA_2**t)
                update = m_hat / (np.sqrt(v_hat) + EPSILON)
                if decays[i]:
                    update = update + WEIGHT_DECAY * p
                    p_norm, u_norm = np.linalg.norm(p), np.linalg.norm(update)
                    if p_norm > 0 and u_norm > 0:
                        update = update * p_norm / u_norm
                params[i] = p - lr * update
    return params


def make_variables(seed=0):
    """A Dense layer and a LayerNorm with random values: only the kernel decays."""
    dense = keras.layers.Dense(3, name="dense")
    dense.build((None, 4))
    norm = keras.layers.LayerNormalization(name="output_layer_norm")
    norm.build((None, 3))
    variables = dense.trainable_variables + norm.trainable_variables
    assert [v.path for v in variables] == PATHS
    rng = np.random.default_rng(seed)
    for variable in variables:
        variable.assign(rng.normal(size=variable.shape))
    return variables


def make_gradients(variables, scales, seed=1):
    """One gradient batch per scale, scaled to that global norm."""
    rng = np.random.default_rng(seed)
    batches = []
    for scale in scales:
        grads = [rng.normal(size=v.shape) for v in variables]
        norm = np.sqrt(sum(np.sum(g**2) for g in grads))
        batches.append([g * scale / norm for g in grads])
    return batches


def apply_all(optimizer, variables, grad_batches, jit=False):
    optimizer.build(variables)

    def step(grads):
        optimizer.apply(grads, variables)

    if jit:
        step = tf.function(step, jit_compile=True)
    for grads in grad_batches:
        step([tf.constant(g, tf.float32) for g in grads])


def values(variables):
    return [v.numpy() for v in variables]


def assert_all_close(actual, expected):
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(a, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "xla"])
@pytest.mark.parametrize("kind", KINDS)
def test_optimizer_matches_numpy_reference(kind, jit):
    variables = make_variables()
    start = values(variables)
    # Global norms above and below the clip norm 1.0.
    grad_batches = make_gradients(variables, [5.0, 0.3, 2.0, 0.5])
    optimizer = create_optimizer(kind, *SCHEDULE, weight_decay_rate=WEIGHT_DECAY)
    apply_all(optimizer, variables, grad_batches, jit=jit)

    lrs = [reference_lr(step, *SCHEDULE) for step in range(4)]
    assert lrs == pytest.approx([0.0, 0.025, 0.04, 0.035])
    assert_all_close(values(variables), reference_run(kind, start, grad_batches, lrs, DECAYS))
    assert int(optimizer.iterations) == 4


def test_bert_adam_has_no_bias_correction():
    variable = keras.Variable(np.zeros(2, np.float32), name="bias")
    gradient = np.array([0.5, -2.0])
    optimizer = BertAdam(learning_rate=0.01, weight_decay=0.0)
    optimizer.apply([tf.constant(gradient, tf.float32)], [variable])

    # Step 1: m = 0.1 g and v = 0.001 g^2, used as they are.
    no_correction = -0.01 * 0.1 * gradient / (np.sqrt(0.001) * np.abs(gradient) + EPSILON)
    bias_corrected = -0.01 * gradient / (np.abs(gradient) + EPSILON)
    np.testing.assert_allclose(variable.numpy(), no_correction, rtol=1e-5)
    assert not np.allclose(variable.numpy(), bias_corrected, rtol=0.1)


@pytest.mark.parametrize("kind", KINDS)
def test_gradients_are_clipped_by_global_norm(kind):
    start_variables = make_variables()
    start = values(start_variables)
    grad_batches = make_gradients(start_variables, [10.0, 0.5])
    lrs = [reference_lr(step, 0.05, 10, 0) for step in range(2)]
    clipped = reference_run(kind, start, grad_batches, lrs, DECAYS, clip_norm=1.0)
    unclipped = reference_run(kind, start, grad_batches, lrs, DECAYS, clip_norm=None)
    assert max(np.abs(c - u).max() for c, u in zip(clipped, unclipped)) > 1e-3

    for clip_norm, expected in [(1.0, clipped), (None, unclipped)]:
        variables = make_variables()
        optimizer = create_optimizer(
            kind, 0.05, 10, 0, weight_decay_rate=WEIGHT_DECAY, global_clipnorm=clip_norm
        )
        apply_all(optimizer, variables, grad_batches)
        assert_all_close(values(variables), expected)


@pytest.mark.parametrize("kind", KINDS)
def test_weight_decay_exclusions_match_variable_paths(kind):
    with keras.name_scope("bert"), keras.name_scope("encoder"), keras.name_scope("LayerNorm"):
        tf1_gamma = keras.Variable(np.ones(3, np.float32), name="gamma")
    variables = make_variables() + [tf1_gamma]
    start = values(variables)
    zero_grads = [[np.zeros(v.shape) for v in variables]]

    for exclusions, decays in [
        (("LayerNorm", "layer_norm", "bias"), DECAYS + [False]),
        (("kernel",), [False, True, True, True, True]),
    ]:
        for variable, value in zip(variables, start):
            variable.assign(value)
        optimizer = OPTIMIZERS[kind](
            learning_rate=0.1, weight_decay=WEIGHT_DECAY, weight_decay_exclusions=exclusions
        )
        apply_all(optimizer, variables, zero_grads)
        expected = reference_run(kind, start, zero_grads, [0.1], decays, clip_norm=None)
        assert_all_close(values(variables), expected)
        changed = [not np.array_equal(v, s) for v, s in zip(values(variables), start)]
        assert changed == decays


@pytest.mark.parametrize("kind", KINDS)
def test_sparse_gradients_with_repeated_rows_match_dense(kind):
    results = []
    for sparse in (True, False):
        embedding = keras.layers.Embedding(
            5, 3, name="word_embeddings", embeddings_initializer="ones"
        )
        embedding.build((None,))
        rows = tf.constant([[1.0, 2.0, 3.0], [0.5, 0.5, 0.5], [2.0, 0.0, 1.0]])
        optimizer = create_optimizer(kind, 0.05, 10, 0, weight_decay_rate=WEIGHT_DECAY)
        for scale in (1.0, 0.1):
            gradient = tf.IndexedSlices(rows * scale, tf.constant([1, 3, 1]), tf.constant([5, 3]))
            if not sparse:
                gradient = tf.convert_to_tensor(gradient)
            optimizer.apply([gradient], embedding.trainable_variables)
        results.append(embedding.embeddings.numpy())
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_schedule_values():
    schedule = WarmupLinearDecay(init_lr=0.1, num_train_steps=100, num_warmup_steps=10)
    steps = [0, 5, 9, 10, 55, 100, 150]
    expected = [0.0, 0.05, 0.09, 0.09, 0.045, 0.0, 0.0]
    np.testing.assert_allclose([float(schedule(s)) for s in steps], expected, rtol=1e-6, atol=1e-9)

    no_warmup = WarmupLinearDecay(init_lr=0.1, num_train_steps=100)
    np.testing.assert_allclose([float(no_warmup(s)) for s in (0, 25)], [0.1, 0.075], rtol=1e-6)


def test_schedule_serialises():
    schedule = WarmupLinearDecay(init_lr=2e-5, num_train_steps=1000, num_warmup_steps=100)
    schedules = keras.optimizers.schedules
    restored = schedules.deserialize(schedules.serialize(schedule))
    assert isinstance(restored, WarmupLinearDecay)
    assert restored.get_config() == {
        "init_lr": 2e-5,
        "num_train_steps": 1000,
        "num_warmup_steps": 100,
    }
    steps = (0, 50, 100, 550, 1000)
    assert [float(restored(s)) for s in steps] == [float(schedule(s)) for s in steps]


@pytest.mark.parametrize("kwargs", [{"num_train_steps": 0}, {"num_warmup_steps": -1}])
def test_schedule_rejects_bad_steps(kwargs):
    with pytest.raises(InputError):
        WarmupLinearDecay(**{"init_lr": 0.1, "num_train_steps": 10, **kwargs})


@pytest.mark.parametrize("kind, cls", [("bert_adam", BertAdam), ("adamw", AdamW), ("lamb", Lamb)])
def test_create_optimizer_settings_and_serialisation(kind, cls):
    optimizer = create_optimizer(kind, 1e-4, 1000, 100)
    assert type(optimizer) is cls
    config = optimizer.get_config()
    assert config["epsilon"] == EPSILON and config["weight_decay"] == 0.01
    assert config["global_clipnorm"] == 1.0 and config["gradient_accumulation_steps"] is None
    assert config["weight_decay_exclusions"] == ["LayerNorm", "layer_norm", "bias"]
    restored = keras.optimizers.deserialize(keras.optimizers.serialize(optimizer))
    assert type(restored) is cls and restored.get_config() == config


def test_create_optimizer_rejects_bad_arguments():
    with pytest.raises(InputError, match="adamw, bert_adam, lamb"):
        create_optimizer("sgd", 1e-4, 1000, 100)


# -- gradient accumulation (the Trainer's) -----------------------------------------------


class LinearModel(keras.Model):
    """`features["x"]` `[batch, 3]` -> `[batch, 2]`, one dense layer."""

    def __init__(self, kernel, bias):
        super().__init__()
        self.dense = keras.layers.Dense(
            2,
            kernel_initializer=keras.initializers.Constant(kernel),
            bias_initializer=keras.initializers.Constant(bias),
        )

    def call(self, features, training=None):
        return self.dense(features["x"])


class SquaredErrorObjective(Objective):
    """Squared error summed per example, averaged over the batch's examples."""

    def totals(self, features):
        return {"examples": tf.shape(features["x"])[0]}

    def loss(self, outputs, features, totals):
        return {"loss": tf.reduce_sum(tf.square(outputs - features["y"])) / totals["examples"]}


@pytest.mark.parametrize("accumulation_steps", [1, 4])
def test_gradient_accumulation_averages_the_micro_batch_gradients(tmp_path, accumulation_steps):
    """Plain SGD shows the gradient's scale in the update (AdamW normalises it
    away and clipping at 1.0 hides it): N micro-batches of 8 / N examples must
    update as one batch of 8, i.e. with their gradients averaged, not summed."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(16, 3)).astype(np.float32)
    y = rng.normal(size=(16, 2)).astype(np.float32)
    kernel = rng.normal(size=(3, 2)).astype(np.float32)
    bias = rng.normal(size=2).astype(np.float32)
    model = LinearModel(kernel, bias)
    model({"x": x[:1]})
    optimizer = keras.optimizers.SGD(learning_rate=0.1)
    trainer = Trainer(
        tf.distribute.get_strategy(),
        SquaredErrorObjective(),
        model,
        optimizer,
        LoopConfig(
            output_dir=str(tmp_path),
            num_train_steps=2,
            gradient_accumulation_steps=accumulation_steps,
        ),
    )
    micro_batch = 8 // accumulation_steps
    iterator = iter(
        trainer.distribute(
            lambda context: tf.data.Dataset.from_tensor_slices({"x": x, "y": y}).batch(micro_batch)
        )
    )
    losses = trainer.train_steps(iterator, 2)

    # Two SGD steps on x[:8] and x[8:]: d/dW of mean ||xW + b - y||^2 is 2 x^T error / 8.
    w, b = kernel.astype(np.float64), bias.astype(np.float64)
    batch_losses = []
    for rows in (slice(0, 8), slice(8, 16)):
        error = x[rows] @ w + b - y[rows]
        batch_losses.append(np.square(error).sum() / 8)
        w, b = w - 0.1 * 2 * x[rows].T @ error / 8, b - 0.1 * 2 * error.sum(axis=0) / 8
    np.testing.assert_allclose(model.dense.kernel.numpy(), w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model.dense.bias.numpy(), b, rtol=1e-5, atol=1e-6)
    assert losses["loss"] == pytest.approx(np.mean(batch_losses), rel=1e-5)
    assert int(trainer.global_step.numpy()) == 2 and int(optimizer.iterations.numpy()) == 2
