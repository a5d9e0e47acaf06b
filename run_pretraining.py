"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The original google-research/bert flags, plus the shared training flags
(--distribution_strategy, --dtype, --jit_compile, --optimizer, ...).
"""

from absl import flags

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.pretraining import PretrainingOptions, run_pretraining
from bert_tf.training.distribution import define_training_flags, training_options_from_flags

FLAGS = flags.FLAGS

define_flags(PretrainingOptions)
define_training_flags()


def main(argv):
    del argv
    run_pretraining(options_from_flags(PretrainingOptions, FLAGS,
                                       training=training_options_from_flags(FLAGS)))


if __name__ == "__main__":
    run_main(main)
