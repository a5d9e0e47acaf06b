"""Fewer Grappler passes for the train step's graph: a faster first step.

The first call of the compiled train loop optimizes its graph (~12k nodes at
BERT-Base) with Grappler before running it: 2-3 s of the ~10 s to the first
BERT-Base step on a 2-core CPU (bench/first_step.py). For the functions
called inside it, `lean_rewrites` skips what does little or nothing in that
graph on CPU:
- the MLIR (TFG) round trip;
- the memory optimizer (its AddN rescheduling only triggers near the
  device's memory limit);
- the layout optimizer (no convolutions);
- the meta-optimizer's second iteration (about 0.7 s). It only folds a few
  more constants: without it, 13 more products stay in BERT-Base's graph and
  round otherwise (the weights digest of bench/first_step.py changes; the
  tests' tiny model stays bitwise equal, tests/test_training_loop.py). The
  step keeps its kernels and fusions, and runs as fast.
Constant folding stays: without it, divisions by constants stay divisions
and the step is 5% slower.

TensorFlow has no public per-function Grappler setting: this sets the
calling thread's function-call options (`compat.function_call_config`).
"""

import contextlib

import tensorflow as tf
from tensorflow.core.protobuf import rewriter_config_pb2

from bert_tf.compat import function_call_config


def _lean(config):
    rewrites = config.graph_options.rewrite_options
    rewrites.disable_tfg_optimizer = True
    rewrites.memory_optimization = rewriter_config_pb2.RewriterConfig.NO_MEM_OPT
    rewrites.layout_optimizer = rewriter_config_pb2.RewriterConfig.OFF
    rewrites.meta_optimizer_iterations = rewriter_config_pb2.RewriterConfig.ONE


@contextlib.contextmanager
def lean_rewrites():
    """Within it, tf.function calls from this thread skip the passes above
    (on top of the thread's current options). Call a function under the same
    setting each time: a different one instantiates it anew. With a GPU it
    changes nothing: there the memory optimizer can keep a large model within
    the device's memory."""
    if tf.config.list_logical_devices("GPU"):
        yield
        return
    with function_call_config(_lean):
        yield
