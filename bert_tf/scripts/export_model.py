r"""A SavedModel of a bert_tf script as LiteRT (TFLite) or ONNX, float32 or int8.

Usage:
  # LiteRT, int8 weights; classifiers take raw text (the tokenizer is inside)
  python export_model.py --saved_model_dir=out/export --export_format=litert --int8 \
      --output_file=out/model_int8.tflite
  # with the dev accuracy checked against the SavedModel's (not written if it
  # loses more than --max_accuracy_drop points)
  python export_model.py --saved_model_dir=out/export --export_format=onnx --int8 \
      --output_file=out/model_int8.onnx --task_name=MRPC --data_dir=glue/MRPC
"""

from bert_tf.scripts import script

main, run = script("export_model", __doc__)

if __name__ == "__main__":
    run()
