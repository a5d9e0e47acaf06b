"""Distribution strategy, numeric precision and seeding: what the
`training.options.RuntimeOptions` of a run set up::

    set_seed(options.seed, options.deterministic)
    strategy = strategy_from_options(options)
    loss_scaling = set_precision_policy(options.dtype, strategy)
"""

import contextlib

import keras
import tensorflow as tf
from absl import logging

from bert_tf.accelerators import is_tpu_strategy, runs_on_cpu
from bert_tf.errors import InputError
from bert_tf.training.cpu_bfloat16 import slower_bfloat16
from bert_tf.training.options import DTYPES, STRATEGY_NAMES, check_choice


def get_strategy(
    distribution_strategy="default", num_gpus=0, tpu_address=None, tpu_zone=None, gcp_project=None
):
    """Returns the named `tf.distribute.Strategy`.

    ``off``/``default``: the default strategy; ``one_device``: the first GPU,
    or the CPU when ``num_gpus`` is 0; ``mirrored``: the first ``num_gpus``
    GPUs, or all logical CPU devices when ``num_gpus`` is 0;
    ``multi_worker_mirrored``: all local GPUs of each worker in ``TF_CONFIG``;
    ``tpu``: the TPU at ``tpu_address`` (a name, a grpc:// address, "local",
    or None to detect it).
    """
    check_choice("distribution_strategy", distribution_strategy, STRATEGY_NAMES)
    if distribution_strategy in ("off", "default"):
        return tf.distribute.get_strategy()
    if distribution_strategy == "tpu":
        return _tpu_strategy(tpu_address, tpu_zone, gcp_project)
    if distribution_strategy == "multi_worker_mirrored":
        return tf.distribute.MultiWorkerMirroredStrategy()
    devices = _local_devices(num_gpus)
    if distribution_strategy == "mirrored":
        return tf.distribute.MirroredStrategy(devices)
    if num_gpus > 1:
        raise InputError(
            f"--distribution_strategy=one_device uses one GPU, got --num_gpus={num_gpus}"
        )
    return tf.distribute.OneDeviceStrategy(devices[0])


def _local_devices(num_gpus):
    if num_gpus == 0:
        return [device.name for device in tf.config.list_logical_devices("CPU")]
    gpus = tf.config.list_logical_devices("GPU")
    if num_gpus > len(gpus):
        raise InputError(f"--num_gpus={num_gpus} but {len(gpus)} GPU(s) are visible")
    return [device.name for device in gpus[:num_gpus]]


def _tpu_strategy(tpu_address, tpu_zone, gcp_project):
    try:
        resolver = tf.distribute.cluster_resolver.TPUClusterResolver(
            tpu=tpu_address, zone=tpu_zone, project=gcp_project
        )
    except ValueError as error:
        raise InputError(f"cannot find TPU {tpu_address!r}: {error}") from error
    if tpu_address != "local":
        tf.config.experimental_connect_to_cluster(resolver)
    tf.tpu.experimental.initialize_tpu_system(resolver)
    return tf.distribute.TPUStrategy(resolver)


def strategy_from_options(options):
    """Returns the strategy for `RuntimeOptions`, honouring the original TF1 flags.

    ``--use_tpu`` selects ``tpu`` on ``--tpu_name`` (else ``--master``) in
    ``--tpu_zone`` / ``--gcp_project``; ``--num_tpu_cores`` is only checked.
    """
    name = "tpu" if options.use_tpu else options.distribution_strategy
    strategy = get_strategy(
        name,
        num_gpus=options.num_gpus,
        tpu_address=options.tpu_name or options.master,
        tpu_zone=options.tpu_zone,
        gcp_project=options.gcp_project,
    )
    replicas = strategy.num_replicas_in_sync
    if name == "tpu" and options.num_tpu_cores not in (None, replicas):
        logging.warning(
            "--num_tpu_cores=%d ignored: TPUStrategy uses all %d replicas",
            options.num_tpu_cores,
            replicas,
        )
    return strategy


def set_precision_policy(dtype, strategy):
    """Sets the global Keras dtype policy; returns whether loss scaling is needed."""
    check_choice("dtype", dtype, DTYPES)
    if dtype == "mixed_float16" and is_tpu_strategy(strategy):
        raise InputError("--dtype mixed_float16 is not supported on TPU; use mixed_bfloat16")
    keras.mixed_precision.set_dtype_policy(dtype)
    slower = dtype == "mixed_bfloat16" and runs_on_cpu(strategy) and slower_bfloat16()
    if slower:
        logging.warning(
            "--dtype=mixed_bfloat16 on a CPU %s: measured slower than float32 on such "
            "a CPU; see docs/performance.md, bfloat16 on the CPU",
            slower,
        )
    return dtype == "mixed_float16"


def with_loss_scaling(optimizer, dtype):
    """Wraps `optimizer` in a dynamic `LossScaleOptimizer` for mixed_float16.

    Other dtypes return `optimizer` itself. Create it inside ``strategy.scope()``.
    """
    if dtype == "mixed_float16":
        return keras.optimizers.LossScaleOptimizer(optimizer)
    return optimizer


def check_batch_divisible(global_batch_size, strategy, flag_name):
    """Returns the per-replica batch size.

    Raises InputError naming ``--flag_name`` (given without dashes, e.g.
    "train_batch_size") unless the strategy's replicas divide the batch.
    """
    replicas = strategy.num_replicas_in_sync
    if global_batch_size % replicas:
        raise InputError(
            f"--{flag_name}={global_batch_size} is not divisible by the {replicas} replicas"
        )
    return global_batch_size // replicas


def set_seed(seed, deterministic=False):
    """Seeds Python, NumPy, TensorFlow and Keras; optionally makes TF ops deterministic."""
    if deterministic and seed is None:
        raise InputError("--deterministic needs --seed")
    if seed is not None:
        keras.utils.set_random_seed(seed)
    if deterministic:
        tf.config.experimental.enable_op_determinism()


@contextlib.contextmanager
def runtime_environment(options):
    """Seeds, builds the strategy and sets the dtype policy for `RuntimeOptions`;
    yields the strategy and restores the float32 policy afterwards."""
    set_seed(options.seed, options.deterministic)
    strategy = strategy_from_options(options)
    set_precision_policy(options.dtype, strategy)
    try:
        yield strategy
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
