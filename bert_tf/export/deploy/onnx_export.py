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
import logging
import os
import tempfile

from tensorflow.python.framework.convert_to_constants import convert_variables_to_constants_v2

from bert_tf.errors import InputError
from bert_tf.export.deploy.litert import (
    IDS_SIGNATURE,
    INSTALL_HINT,
    load_saved_model,
    serving_functions,
)
from bert_tf.files import atomic_output

OPSET = 17


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
    serve_ids = serving_functions(loaded, vocab_file=None)[IDS_SIGNATURE]
    concrete = serve_ids.get_concrete_function()
    frozen = convert_variables_to_constants_v2(concrete)
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
        tf2onnx.convert.from_graph_def(
            frozen.graph.as_graph_def(),
            input_names=[tensor.name for tensor in frozen.inputs],
            output_names=[tensor.name for tensor in frozen.outputs],
            opset=OPSET,
            tensors_to_rename=renames,
            output_path=float_file,
        )
        if quantize:
            quantize_dynamic(float_file, tmp, per_channel=True, weight_type=QuantType.QInt8)
    return output_names


@contextlib.contextmanager
def _converters_quiet():
    """Hides tf2onnx's and onnxruntime's quantizer's INFO and WARNING lines
    (a line per tensor left in float, advice to pre-process the graph): they
    log through Python's root logger."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)
