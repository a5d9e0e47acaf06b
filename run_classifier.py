"""Fine-tunes BERT on GLUE / XNLI / CLUE / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE or CLUE submission file; --export_dir writes a SavedModel for TF Serving.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import ClassifierOptions

FLAGS = flags.FLAGS

define_flags(ClassifierOptions)


def main(argv):
    del argv
    options = options_from_flags(ClassifierOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.classifier import run_classifier

    run_classifier(options)


if __name__ == "__main__":
    run_main(main)
