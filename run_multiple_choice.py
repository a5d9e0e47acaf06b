"""Fine-tunes BERT on SWAG-style multiple choice (train.csv, val.csv, test.csv in --data_dir).

Outputs in --output_dir: checkpoints, eval_results.txt and test_results.tsv;
--export_dir writes a SavedModel (context and endings as raw text) for TF Serving.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import MultipleChoiceOptions

FLAGS = flags.FLAGS

define_flags(MultipleChoiceOptions)


def main(argv):
    del argv
    options = options_from_flags(MultipleChoiceOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.multiple_choice import run_multiple_choice

    run_multiple_choice(options)


if __name__ == "__main__":
    run_main(main)
