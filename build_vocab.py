"""Builds a WordPiece vocab file from raw text files.

Usage:
  python build_vocab.py --input_file='corpus/*.txt' --vocab_size=30522 \
      --do_lower_case=true --output_file=vocab.txt

With --runner, the words are counted by an Apache Beam pipeline (the same
vocabulary); the flags this script does not define are Beam's pipeline
options, e.g. --runner=DirectRunner --direct_num_workers=2.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.beam import BeamOptions, beam_options
from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.text import vocab
from bert_tf.text.vocab_beam import build_vocab_with_beam

FLAGS = flags.FLAGS

define_flags(vocab.VocabOptions)
define_flags(BeamOptions)


def main(argv):
    options = options_from_flags(vocab.VocabOptions, FLAGS)
    on_beam = beam_options(FLAGS.runner, argv)
    if on_beam.runner is None:
        vocab.build_vocab(options)
    else:
        build_vocab_with_beam(options, on_beam)
    print(f"vocabulary: {FLAGS.output_file}")


if __name__ == "__main__":
    run_main(main, known_only=True)
