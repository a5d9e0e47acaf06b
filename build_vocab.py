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
from bert_tf.cli import run_main

FLAGS = flags.FLAGS

flags.DEFINE_string(
    "input_file", None,
    "Comma-separated globs of UTF-8 text files (one sentence or paragraph per line).")
flags.DEFINE_string("output_file", None, "Where to write the vocab (one token per line).")
flags.DEFINE_integer(
    "vocab_size", 30522, "Target vocabulary size: the result aims at 95-100% of it (fewer on a small corpus).")
flags.DEFINE_bool(
    "do_lower_case", True,
    "Lower-case and strip accents, as the tokenizer that will use the vocab must.")
flags.DEFINE_list(
    "reserved_tokens", list(vocab.RESERVED_TOKENS),
    "Tokens placed first, in this order; must include [UNK], [CLS] and [SEP].")
flags.DEFINE_integer(
    "max_unique_chars", None, "Keep only this many most frequent characters (default: all).")
flags.DEFINE_bool(
    "skip_invalid_utf8", False,
    "Skip (with a warning) lines that are not UTF-8 instead of stopping at the first one.")
flags.mark_flags_as_required(["input_file", "output_file"])


def main(argv):
    del argv
    vocab.build_vocab(
        input_file=FLAGS.input_file,
        vocab_size=FLAGS.vocab_size,
        do_lower_case=FLAGS.do_lower_case,
        output_file=FLAGS.output_file,
        reserved_tokens=FLAGS.reserved_tokens,
        max_unique_chars=FLAGS.max_unique_chars,
        skip_invalid_utf8=FLAGS.skip_invalid_utf8,
    )
    print(f"vocabulary: {FLAGS.output_file}")


if __name__ == "__main__":
    run_main(main)
