"""Fewer Grappler passes for the train step's graph: a faster first step.

The first call of the compiled train loop optimizes its graph (~9k nodes at
BERT-Base) with Grappler before running it. Three of the default passes
change nothing in that graph on CPU yet cost about 1.5 s CPU there: the MLIR
(TFG) round trip, the memory optimizer (its AddN rescheduling only triggers
near the device's memory limit) and the layout optimizer (no convolutions).
`lean_rewrites` turns them off for the functions called inside it; results
stay bitwise equal (tests/test_training_loop.py, test_output_pins.py, and the
weights digest of bench/first_step.py at BERT-Base). Not among them: a
single meta-optimizer iteration and no constant folding, which change
BERT-Base's numbers.

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
