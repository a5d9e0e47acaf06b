"""Extracts contextual token vectors from chosen layers, as the original extract_features.py.

Input: one example per line, `text_a` or `text_a ||| text_b`. Output: the
original's JSON lines (`--output_format=jsonl`, the default) or arrays in an
.npz file (`--output_format=npz`, for large jobs).

Run it as (the same flags each way):
  bert-tf-extract-features --flag=value ...
  python -m bert_tf.scripts.extract_features --flag=value ...
  python extract_features.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import FeatureOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(FeatureOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.extract import extract_features

    extract_features(options)


def run():
    """The `bert-tf-extract-features` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, FeatureOptions)


if __name__ == "__main__":
    run()
