"""The model call inside an exported SavedModel: plain, or compiled with XLA."""

import tensorflow as tf

# Under XLA, text requests are padded to a multiple of this many tokens, so a
# server compiles at most max_seq_length / 16 sequence lengths per batch size.
XLA_PAD_MULTIPLE = 16


def model_call(model, jit_compile=False):
    """`inputs -> model(inputs, training=False)`.

    With `jit_compile`, a tf.function that XLA compiles for each input shape
    it meets; the SavedModel keeps that. TF Serving then needs XLA for the
    device it serves on (on CPU: `--xla_cpu_compilation_enabled`).
    """
    def call(inputs):
        return model(inputs, training=False)
    return tf.function(call, jit_compile=True) if jit_compile else call


def pad_multiple(jit_compile):
    """What text requests' lengths are rounded up to (`pack_example_windows`)."""
    return XLA_PAD_MULTIPLE if jit_compile else 1
