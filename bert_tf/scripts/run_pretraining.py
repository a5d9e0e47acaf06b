"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The original google-research/bert flags, plus the shared training flags
(--distribution_strategy, --dtype, --jit_compile, --optimizer, ...).

Run it as (the same flags each way):
  bert-tf-run-pretraining --flag=value ...
  python -m bert_tf.scripts.run_pretraining --flag=value ...
  python run_pretraining.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import PretrainingOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(PretrainingOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.pretraining import run_pretraining

    run_pretraining(options)


def run():
    """The `bert-tf-run-pretraining` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, PretrainingOptions)


if __name__ == "__main__":
    run()
