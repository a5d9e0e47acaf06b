"""Fine-tunes BERT on GLUE / XNLI / CLUE / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE or CLUE submission file; --export_dir writes a SavedModel for TF Serving.

Run it as (the same flags each way):
  bert-tf-run-classifier --flag=value ...
  python -m bert_tf.scripts.run_classifier --flag=value ...
  python run_classifier.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import ClassifierOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(ClassifierOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.classifier import run_classifier

    run_classifier(options)


def run():
    """The `bert-tf-run-classifier` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, ClassifierOptions)


if __name__ == "__main__":
    run()
