"""TensorFlow's C++ log lines that tell a bert_tf user nothing."""

import ctypes
import os
import sys
import tempfile

import tensorflow as tf

# Logged at error level, once per process, by TensorFlow's CUDA build on a
# machine without an NVIDIA driver (where no GPU could be used anyway), by
# oneDNN's graph rewrite at the first bool or int64 op it leaves to Eigen, and
# by the one-op session below that triggers that rewrite.
_NOISE = (
    b"failed call to cuInit",
    b"only on platforms with AVX-512. Falling back to the default Eigen",
    b"before absl::InitializeLog() is called",
    b"MLIR V1 optimization pass is not enabled",
)


def _has_cuda_driver():
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


def _log_start_up_notices():
    """Has TensorFlow log what it logs once per process: the devices' (found
    now rather than at the first op) and oneDNN's fallback notice, from a
    one-op graph in a session of its own, which leaves the eager context
    (and so `tf.config`'s device settings) untouched."""
    tf.config.list_physical_devices()
    with tf.Graph().as_default():
        flags = tf.compat.v1.placeholder(tf.bool, [1, 1])
        with tf.compat.v1.Session() as session:
            session.run(tf.transpose(flags), {flags: [[True]]})


def hide_start_up_noise():
    """On a Linux machine without a CUDA driver, has TensorFlow log its
    once-per-process notices now, with stderr captured, and passes on every
    line but those of `_NOISE`. With a driver, nothing is hidden: a GPU's
    errors are real, and its devices are not set up before the user's
    `tf.config` calls."""
    if not sys.platform.startswith("linux") or _has_cuda_driver():
        return
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            _log_start_up_notices()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        captured.seek(0)
        lines = captured.read().splitlines(keepends=True)
    os.write(2, b"".join(line for line in lines if not any(noise in line for noise in _NOISE)))
