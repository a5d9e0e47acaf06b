"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The original google-research/bert flags, plus the shared training flags
(--distribution_strategy, --dtype, --jit_compile, --optimizer, ...).
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import PretrainingOptions

FLAGS = flags.FLAGS

define_flags(PretrainingOptions)


def main(argv):
    del argv
    options = options_from_flags(PretrainingOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.pretraining import run_pretraining

    run_pretraining(options)


if __name__ == "__main__":
    run_main(main)
