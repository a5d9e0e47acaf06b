"""Every use of a private TensorFlow, Keras or CPython name, in one place.

Each is here because no public API does the job; each says why, what it
relies on and the versions it was checked with (TensorFlow 2.20, Keras
3.15.1: constraints.txt; setup.py allows TensorFlow <2.22 and Keras <4). An
upgrade checks this module: `tests/test_layers.py` fails on a private name
anywhere else in the package, and the tests named beside each use fail when
the name changes meaning. TensorFlow and Keras are imported inside the
functions, so that the TF-free modules (`cli`, the options) can use the rest.
"""

import contextlib
import sys


def calling_module_name(depth):
    """`__name__` of the module `depth` frames above the caller.

    CPython's `sys._getframe` (any 3.x): absl files a flag under the module
    that defines it, and `--help` lists only the main module's flags, so
    `cli.define_flags` names the script that called it. Guarded by
    tests/test_cli.py (a script's `--help` lists its flags)."""
    return sys._getframe(depth + 1).f_globals.get("__name__")


def kill_pool_workers(pool):
    """Ends the worker processes of a `concurrent.futures.ProcessPoolExecutor`
    now, instead of after their current task.

    The executor has no public way to stop a busy worker (Python 3.10-3.13:
    `_processes`, `_result_queue._writer`). A worker killed while it sends its
    result leaves the pool's reader thread waiting for the rest of the
    message, and `pool.shutdown` waiting for that thread: once the workers are
    gone, closing this process's end for writing results gives the reader the
    end of the pipe instead. Guarded by tests/test_pretraining_data.py (a
    worker killed mid-send)."""
    processes = list((pool._processes or {}).values())
    for process in processes:
        process.kill()
    for process in processes:
        process.join()
    pool._result_queue._writer.close()


def frozen_graph_def(concrete_function):
    """The function's graph, inlined, with its variables as constants.

    TensorFlow 2.x has no public freezing API; tf2onnx needs a frozen graph
    (`tensorflow.python.framework.convert_to_constants`, unchanged since 2.2).
    Its public `convert_variables_to_constants_v2` also imports the frozen
    graph into a new function, which for BERT-Base held about 9x the
    weights in memory at once; the GraphDef alone holds them once. Guarded by
    tests/test_export_deploy.py (ONNX outputs equal the SavedModel's)."""
    from tensorflow.python.framework import convert_to_constants

    converter_data = convert_to_constants._FunctionConverterDataInEager(
        func=concrete_function, lower_control_flow=True, aggressive_inlining=False
    )
    graph_def, _ = convert_to_constants._replace_variables_by_constants(converter_data)
    return graph_def


@contextlib.contextmanager
def function_call_config(edit):
    """Within it, `tf.function` calls from this thread run under the thread's
    `ConfigProto` as changed by `edit(config)` (which edits it in place).

    TensorFlow has no public per-function Grappler setting; this sets the
    eager context's function-call options (`tensorflow.python.eager.context`,
    2.20-2.21). Guarded by tests/test_training_loop.py."""
    from tensorflow.core.protobuf import config_pb2
    from tensorflow.python.eager import context

    ctx = context.context()
    saved = ctx.function_call_options
    config = config_pb2.ConfigProto.FromString(saved.config_proto_serialized)
    edit(config)
    ctx.function_call_options = context.FunctionCallOptions(
        executor_type=saved.executor_type, config_proto=config
    )
    try:
        yield
    finally:
        ctx.function_call_options = saved


def onednn_enabled():
    """Whether this TensorFlow build runs oneDNN kernels by default (the
    Makefile's portable tier asks: TensorFlow has no public query;
    `_pywrap_util_port.IsMklEnabled`, 2.9-2.21)."""
    from tensorflow.python.util import _pywrap_util_port

    return bool(_pywrap_util_port.IsMklEnabled())


def build_compiled_loss(model, batch):
    """Builds a compiled Keras model's loss and metrics from `batch` (x, y[, w]),
    unless built already.

    Keras has no public call for it (`_compile_loss`, `_symbolic_build`,
    Keras 3.6-3.15); it builds them from the first batch of `fit`, which under
    MirroredStrategy is a distributed batch whose per-replica values it reads
    as float32. Guarded by tests/test_keras_models.py (fit under
    MirroredStrategy)."""
    if not model._compile_loss.built:
        model._symbolic_build(data_batch=batch)


class KerasOptimizerHooks:
    """Mixin of a Keras 3 optimizer (TensorFlow backend) for what Keras has
    no public hook for:

    * `summed_gradients(grads_and_vars)`: called with the gradients summed
      over replicas, just before `update_step` (Keras's private
      `_all_reduce_sum_gradients`, Keras 3.0-3.15); `gradients_to_sum` sees
      them before the sum. Guarded by tests/test_distribution.py and
      test_optimization.py::test_sparse_gradients_with_repeated_rows_match_dense.
    * Keras's own weight decay (`_apply_weight_decay`) is off: the
      optimizer's `update_step` decays (checked against numpy in
      tests/test_optimization.py).
    * `decays(variable)`: whether `exclude_from_weight_decay` leaves the
      variable decayed (`_use_weight_decay`); `adam_slots(variable)`: the
      momentum and velocity slots of Keras's Adam layout (`_momentums`,
      `_velocities`, indexed by `_get_variable_index`; Keras 3 has no
      `get_slot`).
    """

    def gradients_to_sum(self, grads_and_vars):
        return grads_and_vars

    def summed_gradients(self, grads_and_vars):
        return grads_and_vars

    def _all_reduce_sum_gradients(self, grads_and_vars):
        summed = super()._all_reduce_sum_gradients(self.gradients_to_sum(grads_and_vars))
        return self.summed_gradients(summed)

    def _apply_weight_decay(self, variables):
        return

    def decays(self, variable):
        return self._use_weight_decay(variable)

    def adam_slots(self, variable):
        index = self._get_variable_index(variable)
        return self._momentums[index], self._velocities[index]
