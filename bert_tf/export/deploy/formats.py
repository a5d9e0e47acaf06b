"""A script's SavedModel in other formats, and their dev accuracy.

`convert` writes LiteRT or ONNX models, float32 or int8 (`FORMATS`);
`load_runner` runs any of them on token ids; `text_classifier` on raw text;
`accuracy_check` compares a converted classifier's dev accuracy with the
SavedModel's. The runtimes (`ai-edge-litert`, `tf2onnx`, `onnxruntime`) are
the `deploy` extra, imported only when a format needs them.
"""

import importlib.util

import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.export.deploy.litert import (
    IDS_SIGNATURE,
    INSTALL_HINT,
    TEXT_SIGNATURE,
    check_saved_model_dir,
    export_litert,
    litert_interpreter,
    load_saved_model,
    max_seq_length_of,
    pack_dense,
    vocab_file_of,
)
from bert_tf.export.deploy.onnx_export import export_onnx
from bert_tf.text.graph_tokenizer import BertTokenizer

FORMATS = ("saved_model", "litert", "litert_int8", "onnx", "onnx_int8")


# The modules of the deploy extra that each --export_format converts and runs with.
RUNTIMES = {"litert": ("ai_edge_litert",), "onnx": ("tf2onnx", "onnx", "onnxruntime")}


def format_name(export_format, int8):
    """`FORMATS` entry of `--export_format` and `--int8`."""
    if export_format not in RUNTIMES:
        raise InputError(f"--export_format must be litert or onnx, got {export_format!r}")
    return f"{export_format}_int8" if int8 else export_format


def check_conversion(saved_model_dir, export_format):
    """Before any work: InputError unless `saved_model_dir` holds a SavedModel
    and the deploy extra's modules that `export_format` needs are installed
    (looked up, not imported)."""
    check_saved_model_dir(saved_model_dir)
    check_runtimes_installed(export_format)


def check_runtimes_installed(export_format):
    """InputError naming the deploy extra unless the modules `export_format`
    needs are installed."""
    missing = [m for m in RUNTIMES[export_format] if importlib.util.find_spec(m) is None]
    if missing:
        raise InputError(
            f"--export_format={export_format} needs {', '.join(missing)}, of the deploy "
            f"extra: {INSTALL_HINT}"
        )


def convert(saved_model_dir, output_file, fmt, do_lower_case=True):
    """Writes the SavedModel as `fmt` (one of `FORMATS` but the first) to
    `output_file`; returns `output_file`."""
    if fmt.startswith("litert"):
        export_litert(saved_model_dir, output_file, fmt.endswith("_int8"), do_lower_case)
    else:
        export_onnx(saved_model_dir, output_file, fmt.endswith("_int8"))
    return output_file


def onnx_session(path, threads=None):
    """An onnxruntime CPU session of `path`."""
    try:
        import onnxruntime
    except ImportError:
        raise InputError(f"ONNX models need onnxruntime: {INSTALL_HINT}") from None
    options = onnxruntime.SessionOptions()
    if threads:
        options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])


def load_runner(path, fmt, threads=None):
    """`inputs -> outputs` of the model at `path` on token ids: dicts of
    numpy arrays (the three int32 inputs; the signature's outputs)."""
    if fmt == "saved_model":
        signature = load_saved_model(path).signatures[IDS_SIGNATURE]
        return lambda inputs: {k: v.numpy() for k, v in signature(**inputs).items()}
    if fmt.startswith("litert"):
        runner = litert_interpreter(path, threads).get_signature_runner(IDS_SIGNATURE)
        return lambda inputs: runner(**inputs)
    session = onnx_session(path, threads)
    names = [output.name for output in session.get_outputs()]
    return lambda inputs: dict(zip(names, session.run(None, inputs)))


def text_classifier(path, fmt, saved_model_dir, do_lower_case=True):
    """`(texts_a, texts_b or None) -> label names` of a classifier at `path`:
    its own text signature (SavedModel, LiteRT), or for ONNX, bert_tf's
    tokenizer with the vocab of `saved_model_dir` and LiteRT's packing."""
    if fmt == "saved_model":
        signature = load_saved_model(path).signatures[TEXT_SIGNATURE]
        return lambda a, b: _names(signature(**_texts(a, b))["labels"].numpy())
    if fmt.startswith("litert"):
        runner = litert_interpreter(path).get_signature_runner(TEXT_SIGNATURE)
        return lambda a, b: _names(runner(**_texts(a, b, as_numpy=True))["labels"])
    loaded = load_saved_model(saved_model_dir)
    max_seq_length = max_seq_length_of(loaded.signatures[IDS_SIGNATURE])
    tokenizer = BertTokenizer(vocab_file_of(saved_model_dir), do_lower_case)
    run = load_runner(path, fmt)

    def classify(texts_a, texts_b):
        ids_b = None if texts_b is None else tokenizer(tf.constant(texts_b))
        packed = pack_dense(
            tokenizer(tf.constant(texts_a)),
            ids_b,
            max_seq_length,
            tokenizer.cls_id,
            tokenizer.sep_id,
        )
        return _names(run({k: v.numpy() for k, v in packed.items()})["labels"])

    return classify


def _texts(texts_a, texts_b, as_numpy=False):
    texts = {"text_a": texts_a} if texts_b is None else {"text_a": texts_a, "text_b": texts_b}
    if as_numpy:
        return {k: np.array([t.encode("utf-8") for t in v], dtype=object) for k, v in texts.items()}
    return {k: tf.constant(v) for k, v in texts.items()}


def _names(labels):
    return [label.decode("utf-8") if isinstance(label, bytes) else str(label) for label in labels]


def predict_labels(classify, examples, batch_size=32):
    """Label names `classify` gives `examples` (with text_a, text_b)."""
    labels = []
    for start in range(0, len(examples), batch_size):
        batch = examples[start : start + batch_size]
        texts_b = [e.text_b for e in batch] if batch[0].text_b is not None else None
        labels += classify([e.text_a for e in batch], texts_b)
    return labels


def accuracy_check(saved_model_dir, converted, fmt, examples, do_lower_case=True):
    """Dev accuracy of the SavedModel and of the `fmt` model at `converted`
    on `examples` (with labels): a report dict (accuracies, the count of
    examples whose label the two models give differently)."""
    gold = [str(e.label) for e in examples]
    reference = predict_labels(
        text_classifier(saved_model_dir, "saved_model", saved_model_dir), examples
    )
    predicted = predict_labels(
        text_classifier(converted, fmt, saved_model_dir, do_lower_case), examples
    )
    return {
        "examples": len(examples),
        "saved_model_accuracy": _accuracy(reference, gold),
        f"{fmt}_accuracy": _accuracy(predicted, gold),
        "format": fmt,
        "labels_changed": sum(r != p for r, p in zip(reference, predicted)),
    }


def _accuracy(predicted, gold):
    return float(np.mean([p == g for p, g in zip(predicted, gold)]))
