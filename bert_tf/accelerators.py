"""What a `tf.distribute` strategy runs on: asked by the model (TPUs need
static shapes) and by training."""

import tensorflow as tf

_TPU_STRATEGIES = (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy)


def is_tpu_strategy(strategy):
    """Whether `strategy` runs on TPUs (which need static shapes)."""
    return isinstance(strategy, _TPU_STRATEGIES)


def runs_on_cpu(strategy):
    """Whether `strategy` computes on CPUs: its devices are CPUs or, for the
    default strategy (which uses a GPU wherever one is visible), no GPU is."""
    if is_tpu_strategy(strategy):
        return False
    try:
        devices = strategy.extended.worker_devices
    except RuntimeError:  # the default strategy has no device list
        return not tf.config.list_logical_devices("GPU")
    return all(tf.DeviceSpec.from_string(device).device_type == "CPU" for device in devices)
