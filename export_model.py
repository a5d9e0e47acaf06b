"""A SavedModel of a bert_tf script as LiteRT (TFLite) or ONNX, float32 or int8.

The script lives in bert_tf/scripts/export_model.py; installed, run it as
`bert-tf-export-model` or `python -m bert_tf.scripts.export_model`.
"""

from bert_tf.scripts.export_model import run

if __name__ == "__main__":
    run()
