r"""A SavedModel of a bert_tf script as LiteRT (TFLite) or ONNX, float32 or int8.

Usage:
  # LiteRT, int8 weights; classifiers take raw text (the tokenizer is inside)
  python export_model.py --saved_model_dir=out/export --export_format=litert --int8 \
      --output_file=out/model_int8.tflite
  # with the dev accuracy checked against the SavedModel's (not written if it
  # loses more than --max_accuracy_drop points)
  python export_model.py --saved_model_dir=out/export --export_format=onnx --int8 \
      --output_file=out/model_int8.onnx --task_name=MRPC --data_dir=glue/MRPC

Run it as (the same flags each way):
  bert-tf-export-model --flag=value ...
  python -m bert_tf.scripts.export_model --flag=value ...
  python export_model.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import ExportModelOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(ExportModelOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.export.deploy.conversion import accuracy_summary, convert_saved_model

    report = convert_saved_model(options)
    if report is not None:
        print(accuracy_summary(report))
    print(f"model: {options.output_file}")


def run():
    """The `bert-tf-export-model` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, ExportModelOptions)


if __name__ == "__main__":
    run()
