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

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main  # noqa: E402
from bert_tf.tasks.options import ExportModelOptions  # noqa: E402

FLAGS = flags.FLAGS

define_flags(ExportModelOptions)


def main(argv):
    del argv
    options = options_from_flags(ExportModelOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.export.deploy.conversion import accuracy_summary, convert_saved_model

    report = convert_saved_model(options)
    if report is not None:
        print(accuracy_summary(report))
    print(f"model: {options.output_file}")


if __name__ == "__main__":
    run_main(main)
