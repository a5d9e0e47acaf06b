"""ONNX models from the scripts' SavedModels (token ids in).

`export_onnx` converts a SavedModel's `serving_ids` signature with tf2onnx.
The variables are frozen into the graph first (tf2onnx would otherwise take
the captured label names for an input), and then the weights are taken out
again: tf2onnx converts a graph whose weights are inputs, and they come back
as the ONNX model's initializers. tf2onnx copies every constant many times
while it optimises (60x the weights at its peak: BERT-Base did not fit in
24 GB); the patterns it fuses match the graph's small constants, which stay.
With `quantize`, onnxruntime's dynamic quantization makes the MatMuls'
weights int8, one scale per output column (activations uint8, quantized per
call). Inputs `input_word_ids`, `input_mask`, `input_type_ids` (int32
`[batch, max_seq_length]`); outputs named as the signature's. The raw-text
tokenizer stays outside: ONNX has no ops for tensorflow-text's.
"""

import collections
import contextlib
import logging as python_logging
import os
import tempfile

from absl import logging

from bert_tf.compat import frozen_graph_def
from bert_tf.errors import InputError
from bert_tf.export.deploy.litert import (
    IDS_SIGNATURE,
    INSTALL_HINT,
    load_saved_model,
    serving_functions,
)
from bert_tf.files import atomic_output

OPSET = 17
# Float constants with at least this many values are taken out of the graph
# tf2onnx converts: the weight matrices and embeddings, not the scalars and
# vectors its LayerNorm and GELU patterns match.
WEIGHT_MIN_SIZE = 1024
# The export's peak memory over what its imports take: 3.5x the weights for
# BERT-Base (bench/onnx_export_memory.py), of which tf2onnx's own is about
# 0.6 GB (BERT-Base's graph without its weights).
BYTES_PER_WEIGHT_BYTE = 4
BASE_BYTES = 1.5e9


def export_onnx(saved_model_dir, output_file, quantize=False):
    """Writes the SavedModel's `serving_ids` as ONNX to `output_file`,
    atomically; `quantize`: int8 weights (dynamic quantization)."""
    try:
        import tf2onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as error:
        raise InputError(
            f"--export_format=onnx needs tf2onnx and onnxruntime ({error.name} is missing): "
            f"{INSTALL_HINT}"
        ) from None
    loaded = load_saved_model(saved_model_dir)
    _check_memory(saved_model_dir)
    concrete = serving_functions(loaded, vocab_file=None)[IDS_SIGNATURE].get_concrete_function()
    inputs = concrete.inputs[: len(concrete.inputs) - len(concrete.captured_inputs)]
    # The outputs follow the flattened (sorted) structure.
    output_names = sorted(concrete.structured_outputs)
    renames = {tensor.name: name for tensor, name in zip(concrete.outputs, output_names)}
    renames |= {tensor.name: tensor.name.split(":")[0] for tensor in inputs}
    input_names = [tensor.name for tensor in inputs]
    output_tensors = [tensor.name for tensor in concrete.outputs]
    with (
        atomic_output(output_file) as tmp,
        tempfile.TemporaryDirectory() as work,
        _converters_quiet(),
    ):
        graph_def, weights = _weights_as_inputs(frozen_graph_def(concrete), work)
        del loaded, concrete
        float_file = os.path.join(work, "float.onnx") if quantize else tmp
        logging.info(
            "converting to ONNX with tf2onnx (silent; about a minute for a small BERT on 2 cores)"
        )
        model, _ = tf2onnx.convert.from_graph_def(
            graph_def,
            input_names=input_names + list(weights),
            output_names=output_tensors,
            opset=OPSET,
            tensors_to_rename=renames,
        )
        del graph_def
        _write_with_weights(model, weights, float_file)
        del model
        if quantize:
            logging.info("quantizing the ONNX model's weights to int8 (onnxruntime)")
            quantize_dynamic(float_file, tmp, per_channel=True, weight_type=QuantType.QInt8)
    return output_names


def _weights_as_inputs(graph_def, folder):
    """A copy of `graph_def` whose large float constants are placeholders,
    and their values by tensor name, as `.npy` files in `folder` until the
    model is written: tf2onnx's own peak (about 0.6 GB for BERT-Base) then
    comes on top of no copy of them. A copy, not an edit: the protobuf
    runtime frees a message's memory only with the whole message."""
    import numpy as np
    import tensorflow as tf

    light = tf.compat.v1.GraphDef(versions=graph_def.versions, library=graph_def.library)
    weights = {}
    for node in graph_def.node:
        tensor = node.attr["value"].tensor if node.op == "Const" else None
        shape = tf.TensorShape(tensor.tensor_shape) if tensor is not None else None
        if (
            tensor is None
            or tensor.dtype != tf.float32.as_datatype_enum
            or shape.num_elements() < WEIGHT_MIN_SIZE
        ):
            light.node.append(node)
            continue
        path = os.path.join(folder, f"{len(weights)}.npy")
        np.save(path, tf.make_ndarray(tensor))
        weights[node.name + ":0"] = path
        placeholder = light.node.add(name=node.name, op="Placeholder", device=node.device)
        placeholder.attr["dtype"].type = tf.float32.as_datatype_enum
        placeholder.attr["shape"].shape.CopyFrom(shape.as_proto())
    return light, weights


def _write_with_weights(model, weights, path):
    """Writes `model` to `path` with its weight inputs as initializers, read
    from `weights`' files. A weight only transposed (a `transpose_b` MatMul)
    is stored transposed, as tf2onnx stores its constants.

    Each initializer is serialized on its own and appended to the file: a
    protobuf message read from concatenated messages is their merge (repeated
    fields appended), so the file reads as one model with all of them, and no
    copy of all the weights is ever held at once."""
    import numpy as np
    from onnx import GraphProto, ModelProto, numpy_helper

    weights = {name: np.load(file, mmap_mode="r") for name, file in weights.items()}
    graph = model.graph
    kept = [tensor for tensor in graph.input if tensor.name not in weights]
    consumers = collections.Counter(name for node in graph.node for name in node.input)
    for node in list(graph.node):
        (source,) = node.input if node.op_type == "Transpose" else (None,)
        if source in weights and consumers[source] == 1:
            (perm,) = (a.ints for a in node.attribute if a.name == "perm")
            weights[node.output[0]] = weights.pop(source).transpose(perm)
            graph.node.remove(node)
    del graph.input[:]
    graph.input.extend(kept)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
        for name, value in weights.items():
            initializer = numpy_helper.from_array(np.asarray(value), name)
            f.write(ModelProto(graph=GraphProto(initializer=[initializer])).SerializeToString())


@contextlib.contextmanager
def _converters_quiet():
    """Hides tf2onnx's and onnxruntime's quantizer's INFO and WARNING lines
    (a line per tensor left in float, advice to pre-process the graph): they
    log through Python's root logger."""
    root = python_logging.getLogger()
    level = root.level
    root.setLevel(python_logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def _check_memory(saved_model_dir):
    """InputError when the export would need more memory than is available."""
    variables = os.path.join(saved_model_dir, "variables")
    weights = sum(os.path.getsize(os.path.join(variables, name)) for name in os.listdir(variables))
    need = BYTES_PER_WEIGHT_BYTE * weights + BASE_BYTES
    available = available_memory()
    if available is not None and need > available:
        raise InputError(
            f"--export_format=onnx: the export needs about {need / 1e9:.0f} GB of memory for "
            f"{saved_model_dir} ({weights / 1e6:.0f} MB of weights), "
            f"{available / 1e9:.1f} GB are available: use a machine with more memory"
        )


def available_memory():
    """Bytes of memory available to a new allocation (Linux), else None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
