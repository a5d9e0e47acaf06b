"""Fine-tunes BERT on GLUE / XNLI / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE submission file; --export_dir writes a SavedModel for TF Serving.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import (define_flags, define_training_flags, options_from_flags, run_main,
                         training_options_from_flags)
from bert_tf.tasks.classifier import ClassifierOptions, run_classifier

FLAGS = flags.FLAGS

define_flags(ClassifierOptions)
flags.DEFINE_string("xnli_language", None, "XNLI language (the original's default: zh).")
flags.DEFINE_bool("skip_malformed", None, "Skip rows with a wrong number of columns.")
flags.DEFINE_string("text_a_column", None, "generic task: column (name or index) of text a.")
flags.DEFINE_string("text_b_column", None, "generic task: column of text b (pairs).")
flags.DEFINE_string("label_column", None, "generic task: column of the label.")
flags.DEFINE_list("labels", None, "generic task: the labels, in output order.")
flags.DEFINE_string("delimiter", None, "generic task: field delimiter (default tab).")
define_training_flags()

_PROCESSOR_FLAGS = ("xnli_language", "skip_malformed", "text_a_column", "text_b_column",
                    "label_column", "labels", "delimiter")


def main(argv):
    del argv
    run_classifier(options_from_flags(
        ClassifierOptions, FLAGS,
        processor_options={name: getattr(FLAGS, name) for name in _PROCESSOR_FLAGS},
        training=training_options_from_flags(FLAGS)))


if __name__ == "__main__":
    run_main(main)
