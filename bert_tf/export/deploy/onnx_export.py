"""ONNX models from the scripts' SavedModels (token ids in).

`export_onnx` converts a SavedModel's `serving_ids` signature with tf2onnx
(its variables frozen into the graph first: tf2onnx would otherwise take the
captured label names for an input); with `quantize`, onnxruntime's dynamic
quantization makes the MatMuls' weights int8, one scale per output column
(activations uint8, quantized per call). Inputs `input_word_ids`, `input_mask`, `input_type_ids` (int32
`[batch, max_seq_length]`); outputs named as the signature's. The raw-text
tokenizer stays outside: ONNX has no ops for tensorflow-text's.
"""

import contextlib
import logging as python_logging
import os
import tempfile

from absl import logging

from bert_tf.compat import frozen_function
from bert_tf.errors import InputError
from bert_tf.export.deploy.litert import (
    IDS_SIGNATURE,
    INSTALL_HINT,
    load_saved_model,
    serving_functions,
)
from bert_tf.files import atomic_output

OPSET = 17
# tf2onnx holds many copies of the weights while it converts: its peak was
# 7.1 GB for MiniLM's 91 MB of variables, and BERT-Base's 440 MB took over
# 24 GB (killed for memory).
TF2ONNX_BYTES_PER_WEIGHT_BYTE = 60
TF2ONNX_BASE_BYTES = 2e9


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
    serve_ids = serving_functions(loaded, vocab_file=None)[IDS_SIGNATURE]
    concrete = serve_ids.get_concrete_function()
    frozen = frozen_function(concrete)
    output_names = sorted(concrete.structured_outputs)
    # The frozen graph's outputs follow the flattened (sorted) structure.
    renames = {tensor.name: name for tensor, name in zip(frozen.outputs, output_names)}
    renames |= {tensor.name: tensor.name.split(":")[0] for tensor in frozen.inputs}
    with (
        atomic_output(output_file) as tmp,
        tempfile.TemporaryDirectory() as work,
        _converters_quiet(),
    ):
        float_file = os.path.join(work, "float.onnx") if quantize else tmp
        logging.info(
            "converting to ONNX with tf2onnx (silent; about a minute for a small BERT on 2 cores)"
        )
        tf2onnx.convert.from_graph_def(
            frozen.graph.as_graph_def(),
            input_names=[tensor.name for tensor in frozen.inputs],
            output_names=[tensor.name for tensor in frozen.outputs],
            opset=OPSET,
            tensors_to_rename=renames,
            output_path=float_file,
        )
        if quantize:
            logging.info("quantizing the ONNX model's weights to int8 (onnxruntime)")
            quantize_dynamic(float_file, tmp, per_channel=True, weight_type=QuantType.QInt8)
    return output_names


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
    """InputError when tf2onnx would need more memory than is available."""
    variables = os.path.join(saved_model_dir, "variables")
    weights = sum(os.path.getsize(os.path.join(variables, name)) for name in os.listdir(variables))
    need = TF2ONNX_BYTES_PER_WEIGHT_BYTE * weights + TF2ONNX_BASE_BYTES
    available = available_memory()
    if available is not None and need > available:
        raise InputError(
            f"--export_format=onnx: tf2onnx needs about {need / 1e9:.0f} GB of memory for "
            f"{saved_model_dir} ({weights / 1e6:.0f} MB of weights; it peaks at about "
            f"{TF2ONNX_BYTES_PER_WEIGHT_BYTE}x), {available / 1e9:.1f} GB are available: "
            "use --export_format=litert or a machine with more memory"
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
