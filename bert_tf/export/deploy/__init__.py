"""A script's SavedModel as LiteRT (TFLite, the tokenizer inside) or ONNX,
float32 or int8, and a check of the converted classifier's dev accuracy:
what `export_model.py` runs."""

from bert_tf.export.deploy.formats import (
    FORMATS,
    accuracy_check,
    check_conversion,
    convert,
    format_name,
    load_runner,
    text_classifier,
)

__all__ = [
    "FORMATS",
    "accuracy_check",
    "check_conversion",
    "convert",
    "format_name",
    "load_runner",
    "text_classifier",
]
