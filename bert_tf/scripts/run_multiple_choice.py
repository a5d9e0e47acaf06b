"""Fine-tunes BERT on SWAG-style multiple choice (train.csv, val.csv, test.csv in --data_dir).

Outputs in --output_dir: checkpoints, eval_results.txt and test_results.tsv;
--export_dir writes a SavedModel (context and endings as raw text) for TF Serving.

Run it as (the same flags each way):
  bert-tf-run-multiple-choice --flag=value ...
  python -m bert_tf.scripts.run_multiple_choice --flag=value ...
  python run_multiple_choice.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import MultipleChoiceOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(MultipleChoiceOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.multiple_choice import run_multiple_choice

    run_multiple_choice(options)


def run():
    """The `bert-tf-run-multiple-choice` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, MultipleChoiceOptions)


if __name__ == "__main__":
    run()
