"""What a `tf.distribute` strategy runs on: asked by the model (TPUs need
static shapes) and by training."""

import tensorflow as tf

_TPU_STRATEGIES = (tf.distribute.TPUStrategy, tf.distribute.experimental.TPUStrategy)


def is_tpu_strategy(strategy):
    """Whether `strategy` runs on TPUs (which need static shapes)."""
    return isinstance(strategy, _TPU_STRATEGIES)
