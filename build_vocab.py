"""Builds a WordPiece vocab file from raw text files.

Usage:
  python build_vocab.py --input_file='corpus/*.txt' --vocab_size=30522 \
      --do_lower_case=true --output_file=vocab.txt
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf import vocab
from bert_tf.cli import define_flags, options_from_flags, run_main

FLAGS = flags.FLAGS

define_flags(vocab.VocabOptions)


def main(argv):
    del argv
    vocab.build_vocab(options_from_flags(vocab.VocabOptions, FLAGS))
    print(f"vocabulary: {FLAGS.output_file}")


if __name__ == "__main__":
    run_main(main)
