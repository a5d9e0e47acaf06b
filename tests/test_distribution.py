"""Strategies, precision, seeds and training flags.

The multi-replica checks need two logical CPU devices, which can only be set
before TensorFlow initialises its devices, so they run in a fresh process
(this file run as a script).
"""

import dataclasses
import subprocess
import sys
import types
from unittest import mock

import keras
import numpy as np
import pytest
import tensorflow as tf
from absl import flags
from shared import HANG_TIMEOUT

from bert_tf import accelerators, cli
from bert_tf.config import preset
from bert_tf.errors import InputError
from bert_tf.initializers import deferred_draws
from bert_tf.modeling import BertEncoder
from bert_tf.optimization import OPTIMIZERS, BertAdam, create_optimizer
from bert_tf.options import group
from bert_tf.training import cpu_bfloat16, distribution
from bert_tf.training.options import OPTIMIZER_NAMES, RuntimeOptions, TrainingOptions

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

KINDS = ("bert_adam", "adamw", "lamb")


@pytest.fixture
def float32_policy_after():
    yield
    keras.mixed_precision.set_dtype_policy("float32")


def test_default_and_off_are_the_default_strategy():
    assert distribution.get_strategy("default") is tf.distribute.get_strategy()
    assert distribution.get_strategy("off") is tf.distribute.get_strategy()
    assert distribution.strategy_from_options(RuntimeOptions()) is tf.distribute.get_strategy()


def test_one_device_without_gpus_is_the_cpu():
    strategy = distribution.get_strategy("one_device", num_gpus=0)
    assert isinstance(strategy, tf.distribute.OneDeviceStrategy)
    assert strategy.extended.worker_devices[0].endswith("CPU:0")


def test_unknown_strategy_lists_the_valid_names():
    valid = "tpu, mirrored, multi_worker_mirrored, one_device, off, default"
    with pytest.raises(InputError, match=valid):
        distribution.get_strategy("horovod")


def test_more_gpus_than_visible_is_an_input_error():
    with pytest.raises(InputError, match="--num_gpus=2 but 0 GPU"):
        distribution.get_strategy("mirrored", num_gpus=2)


class FakeResolver:
    def __init__(self, tpu=None, zone=None, project=None):
        self.kwargs = {"tpu": tpu, "zone": zone, "project": project}


@pytest.fixture
def fake_tpu(monkeypatch):
    """Records what the TPU set-up is called with instead of reaching a TPU."""
    calls = {}
    monkeypatch.setattr(tf.distribute.cluster_resolver, "TPUClusterResolver", FakeResolver)
    monkeypatch.setattr(
        tf.config, "experimental_connect_to_cluster", lambda r: calls.setdefault("connected", r)
    )
    monkeypatch.setattr(
        tf.tpu.experimental, "initialize_tpu_system", lambda r: calls.setdefault("initialized", r)
    )

    def tpu_strategy(resolver):
        calls["strategy"] = resolver
        return types.SimpleNamespace(num_replicas_in_sync=8)

    monkeypatch.setattr(tf.distribute, "TPUStrategy", tpu_strategy)
    return calls


def test_use_tpu_flags_map_to_a_tpu_cluster_resolver(fake_tpu):
    options = RuntimeOptions(
        use_tpu=True,
        tpu_name="my-tpu",
        tpu_zone="us-central1-b",
        gcp_project="proj",
        num_tpu_cores=8,
    )
    assert distribution.strategy_from_options(options).num_replicas_in_sync == 8
    resolver = fake_tpu["strategy"]
    assert resolver.kwargs == {"tpu": "my-tpu", "zone": "us-central1-b", "project": "proj"}
    assert fake_tpu["connected"] is resolver and fake_tpu["initialized"] is resolver


def test_master_is_the_tpu_address_without_tpu_name(fake_tpu):
    distribution.strategy_from_options(RuntimeOptions(use_tpu=True, master="grpc://10.0.0.2:8470"))
    assert fake_tpu["strategy"].kwargs["tpu"] == "grpc://10.0.0.2:8470"


def test_local_tpu_is_not_connected_as_a_remote_cluster(fake_tpu):
    options = RuntimeOptions(distribution_strategy="tpu", tpu_name="local")
    distribution.strategy_from_options(options)
    assert fake_tpu["strategy"].kwargs["tpu"] == "local" and "connected" not in fake_tpu


def test_use_tpu_conflicts_with_another_strategy():
    with pytest.raises(InputError, match="--use_tpu"):
        RuntimeOptions(use_tpu=True, distribution_strategy="mirrored")


def test_mixed_float16_on_tpu_is_an_input_error(float32_policy_after):
    tpu_strategy = mock.Mock(spec=tf.distribute.TPUStrategy)
    with pytest.raises(InputError, match="use mixed_bfloat16"):
        distribution.set_precision_policy("mixed_float16", tpu_strategy)
    assert distribution.set_precision_policy("mixed_bfloat16", tpu_strategy) is False
    assert keras.config.dtype_policy().name == "mixed_bfloat16"


SAPPHIRE_RAPIDS = "fpu avx2 avx512f avx512_vnni avx512_bf16 amx_bf16 amx_tile"
EPYC_GENOA = "fpu avx2 avx512f avx512_vnni avx512_bf16"
EPYC_ROME = "fpu avx2 fma sha_ni"
GRAVITON3 = "fp asimd bf16 i8mm sve"


NO_BF16 = "without bfloat16 instructions (AVX512_BF16 or AMX)"


@pytest.mark.parametrize(
    "flags_line, isa, slower",
    [
        (f"flags\t\t: {SAPPHIRE_RAPIDS}", "", None),
        (f"flags\t\t: {SAPPHIRE_RAPIDS}", "AVX512_CORE_AMX", None),
        (
            f"flags\t\t: {SAPPHIRE_RAPIDS}",
            "avx512_core_bf16",
            "whose AMX ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16 hides",
        ),
        (f"flags\t\t: {SAPPHIRE_RAPIDS}", "AVX512_CORE_VNNI", NO_BF16),
        (f"flags\t\t: {SAPPHIRE_RAPIDS}", "avx2", NO_BF16),
        (f"flags\t\t: {EPYC_GENOA}", "", None),
        (f"flags\t\t: {EPYC_GENOA}", "AVX512_CORE_BF16", None),
        (f"flags\t\t: {EPYC_GENOA}", "AVX512_CORE_VNNI", NO_BF16),
        (f"flags\t\t: {EPYC_ROME}", "", NO_BF16),
        (f"Features\t: {GRAVITON3}", "", None),
        ("processor\t: 0", "AVX2", None),
    ],
)
def test_bfloat16_is_called_slower_where_it_was_measured_slower(tmp_path, flags_line, isa, slower):
    """Measured (docs/performance.md): faster with AMX and with AVX512_BF16
    alone on a Zen 4; slower with neither, and with AMX hidden on a Xeon."""
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(
        f"processor\t: 0\nmodel name\t: amx_bf16 avx512_bf16 in a name\n{flags_line}\n"
    )
    environ = {"ONEDNN_MAX_CPU_ISA": isa} if isa else {}
    assert cpu_bfloat16.slower_bfloat16(str(cpuinfo), environ) == slower
    assert cpu_bfloat16.slower_bfloat16(str(tmp_path / "missing"), {}) is None


@pytest.mark.parametrize("slower, warned", [(NO_BF16, True), (None, False)])
def test_mixed_bfloat16_warns_where_measured_slower(float32_policy_after, slower, warned):
    strategy = tf.distribute.get_strategy()
    with (
        mock.patch.object(distribution, "slower_bfloat16", return_value=slower),
        mock.patch.object(distribution.logging, "warning") as warning,
    ):
        distribution.set_precision_policy("mixed_bfloat16", strategy)
        distribution.set_precision_policy("float32", strategy)
        tpu_strategy = mock.Mock(spec=tf.distribute.TPUStrategy)
        distribution.set_precision_policy("mixed_bfloat16", tpu_strategy)
    assert warning.call_count == warned
    if warned:
        assert warning.call_args[0][0] % warning.call_args[0][1:] == (
            f"--dtype=mixed_bfloat16 on a CPU {NO_BF16}: measured slower than float32 on "
            "such a CPU; see docs/performance.md, bfloat16 on the CPU"
        )


def test_runs_on_cpu_from_the_strategys_devices():
    assert accelerators.runs_on_cpu(tf.distribute.OneDeviceStrategy("/cpu:0"))
    default = tf.distribute.get_strategy()  # on a GPU wherever one is visible
    assert accelerators.runs_on_cpu(default) == (not tf.config.list_logical_devices("GPU"))
    assert not accelerators.runs_on_cpu(mock.Mock(spec=tf.distribute.TPUStrategy))
    on_gpus = mock.Mock(spec=tf.distribute.MirroredStrategy)
    on_gpus.extended.worker_devices = ("/job:localhost/replica:0/task:0/device:GPU:0",)
    assert not accelerators.runs_on_cpu(on_gpus)


def test_precision_policy_and_loss_scaling(float32_policy_after):
    strategy = tf.distribute.get_strategy()
    assert distribution.set_precision_policy("mixed_float16", strategy) is True
    assert keras.config.dtype_policy().name == "mixed_float16"
    assert distribution.set_precision_policy("float32", strategy) is False
    assert keras.config.dtype_policy().name == "float32"
    with pytest.raises(InputError, match="--dtype"):
        distribution.set_precision_policy("float16", strategy)


def test_loss_scale_optimizer_unscales_gradients():
    optimizer = BertAdam(learning_rate=0.1)
    assert distribution.with_loss_scaling(optimizer, "float32") is optimizer
    wrapped = distribution.with_loss_scaling(optimizer, "mixed_float16")
    assert isinstance(wrapped, keras.optimizers.LossScaleOptimizer)
    assert wrapped.inner_optimizer is optimizer

    gradient = np.array([0.3, -0.2, 0.1], np.float32)
    scaled_var = keras.Variable(np.ones(3, np.float32), name="kernel")
    plain_var = keras.Variable(np.ones(3, np.float32), name="kernel")
    wrapped.build([scaled_var])
    wrapped.apply([tf.constant(gradient) * wrapped.dynamic_scale], [scaled_var])
    BertAdam(learning_rate=0.1).apply([tf.constant(gradient)], [plain_var])
    np.testing.assert_allclose(scaled_var.numpy(), plain_var.numpy(), rtol=1e-6)
    assert not np.allclose(plain_var.numpy(), 1.0)


def test_check_batch_divisible():
    default = tf.distribute.get_strategy()
    assert distribution.check_batch_divisible(32, default, "train_batch_size") == 32
    eight_replicas = types.SimpleNamespace(num_replicas_in_sync=8)
    assert distribution.check_batch_divisible(16, eight_replicas, "train_batch_size") == 2
    with pytest.raises(InputError, match="--eval_batch_size=12 is not divisible by the 8 replicas"):
        distribution.check_batch_divisible(12, eight_replicas, "eval_batch_size")


def test_set_seed_reproduces_draws_and_enables_determinism(monkeypatch):
    enabled = []
    monkeypatch.setattr(
        tf.config.experimental, "enable_op_determinism", lambda: enabled.append(True)
    )

    def draws(seed):
        distribution.set_seed(seed)
        return np.random.rand(), float(tf.random.uniform([])), float(keras.random.uniform(()))

    assert draws(3) == draws(3)
    assert all(a != b for a, b in zip(draws(3), draws(4)))
    assert not enabled
    distribution.set_seed(3, deterministic=True)
    assert enabled == [True]
    with pytest.raises(InputError, match="--seed"):
        distribution.set_seed(None, deterministic=True)


@dataclasses.dataclass
class _Run:
    training: TrainingOptions = group(TrainingOptions)
    runtime: RuntimeOptions = group(RuntimeOptions)


def _parse_run(*argv):
    flag_values = flags.FlagValues()
    cli.define_flags(_Run, flag_values)
    flag_values(["prog", *argv])
    return cli.options_from_flags(_Run, flag_values)


def test_training_flags_parse_into_options():
    options = _parse_run(
        "--iterations_per_loop=5",
        "--optimizer=lamb",
        "--use_tpu",
        "--tpu_name=my-tpu",
        "--num_tpu_cores=32",
        "--dtype=mixed_bfloat16",
        "--gradient_accumulation_steps=4",
        "--seed=7",
        "--deterministic",
        "--weight_decay_rate=0.02",
    )
    assert options.training == TrainingOptions(
        steps_per_loop=5, optimizer="lamb", gradient_accumulation_steps=4, weight_decay_rate=0.02
    )
    assert options.runtime == RuntimeOptions(
        use_tpu=True,
        tpu_name="my-tpu",
        num_tpu_cores=32,
        dtype="mixed_bfloat16",
        seed=7,
        deterministic=True,
    )


def test_training_flag_defaults_and_validation():
    options = _parse_run()
    assert options == _Run(TrainingOptions(), RuntimeOptions())
    assert (options.training.optimizer, options.runtime.dtype) == ("adamw", "float32")
    assert options.training.steps_per_loop == 1000

    with pytest.raises(InputError, match="--dtype 'float16'"):
        _parse_run("--dtype=float16")
    with pytest.raises(InputError, match="--gradient_accumulation_steps"):
        _parse_run("--dtype=float32", "--gradient_accumulation_steps=0")


def test_the_optimizer_flag_offers_exactly_the_optimizers_there_are():
    """`training.options` names them without importing `optimization` (TensorFlow)."""
    for name in OPTIMIZERS:
        assert TrainingOptions(optimizer=name).optimizer == name
    assert OPTIMIZER_NAMES == tuple(OPTIMIZERS)
    with pytest.raises(InputError, match="unknown --optimizer 'adam'; expected one of: adamw, "):
        TrainingOptions(optimizer="adam")


@pytest.mark.large
def test_multi_replica_strategies_in_a_fresh_process():
    result = subprocess.run(
        [sys.executable, __file__], capture_output=True, text=True, timeout=HANG_TIMEOUT
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "multi-replica checks passed" in result.stdout


def _make_variables():
    dense = keras.layers.Dense(3, name="dense")
    dense.build((None, 4))
    norm = keras.layers.LayerNormalization(name="output_layer_norm")
    norm.build((None, 3))
    variables = dense.trainable_variables + norm.trainable_variables
    rng = np.random.default_rng(0)
    for variable in variables:
        variable.assign(rng.normal(size=variable.shape))
    return variables


def _replica_gradients(variables, steps):
    """Per step, two replicas' gradients of norm 0.8 each: only their sum exceeds 1."""
    rng = np.random.default_rng(1)
    batches = []
    for _ in range(steps):
        base = [rng.normal(size=v.shape) for v in variables]
        replicas = [[b + 0.3 * rng.normal(size=b.shape) for b in base] for _ in range(2)]
        for grads in replicas:
            norm = np.sqrt(sum(np.sum(g**2) for g in grads))
            grads[:] = [g * 0.8 / norm for g in grads]
        batches.append([np.stack(pair).astype(np.float32) for pair in zip(*replicas)])
    return batches


def _run_mirrored(strategy, kind, batches, loss_scaling):
    with strategy.scope():
        variables = _make_variables()
        optimizer = create_optimizer(kind, 0.05, 10, 0)
        if loss_scaling:
            optimizer = distribution.with_loss_scaling(optimizer, "mixed_float16")
        optimizer.build(variables)

    @tf.function
    def step(stacked):
        def replica_fn(stacked):
            replica = tf.distribute.get_replica_context().replica_id_in_sync_group
            grads = [tf.gather(g, replica) for g in stacked]
            if loss_scaling:
                grads = [g * optimizer.dynamic_scale for g in grads]
            optimizer.apply(grads, variables)

        strategy.run(replica_fn, args=(stacked,))

    for stacked in batches:
        step([tf.constant(g) for g in stacked])
    return [v.numpy() for v in variables], int(keras.ops.convert_to_numpy(optimizer.iterations))


def _run_single_device(kind, batches):
    variables = _make_variables()
    optimizer = create_optimizer(kind, 0.05, 10, 0)
    for stacked in batches:
        optimizer.apply([tf.constant(g.sum(axis=0)) for g in stacked], variables)
    return [v.numpy() for v in variables], int(keras.ops.convert_to_numpy(optimizer.iterations))


def _multi_replica_checks():
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)

    strategy = distribution.get_strategy("mirrored", num_gpus=0)
    assert isinstance(strategy, tf.distribute.MirroredStrategy)
    assert strategy.num_replicas_in_sync == 2
    assert distribution.check_batch_divisible(4, strategy, "train_batch_size") == 2
    with pytest.raises(InputError, match="--train_batch_size=3"):
        distribution.check_batch_divisible(3, strategy, "train_batch_size")

    # Gradients are summed over replicas and clipped after the sum, exactly as
    # one device given the summed gradients (also under loss scaling).
    variables = _make_variables()
    for kind in KINDS:
        for loss_scaling in (False, True):
            batches = _replica_gradients(variables, steps=4)
            got, got_updates = _run_mirrored(strategy, kind, batches, loss_scaling)
            want, want_updates = _run_single_device(kind, batches)
            assert got_updates == want_updates == 4
            for g, w in zip(got, want):
                message = f"{kind}, loss scaling {loss_scaling}"
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=message)

    # Deferred random init under the strategy: every replica's copy gets the
    # values a plain build draws.
    def tiny_model():
        keras.utils.set_random_seed(4)
        return BertEncoder(preset("bert_tiny", vocab_size=50, max_position_embeddings=16))

    with strategy.scope():
        want = tiny_model()
        with deferred_draws() as draws:
            model = tiny_model()
    draws.finish()
    for got, plain in zip(model.weights, want.weights):
        for copy in strategy.experimental_local_results(got.value):
            np.testing.assert_array_equal(copy.numpy(), plain.numpy(), err_msg=got.path)

    worker_strategy = distribution.get_strategy("multi_worker_mirrored")
    assert isinstance(worker_strategy, tf.distribute.MultiWorkerMirroredStrategy)
    print("multi-replica checks passed")


if __name__ == "__main__":
    _multi_replica_checks()
