r"""Builds a WordPiece vocab file from raw text files.

Usage:
  python build_vocab.py --input_file='corpus/*.txt' --vocab_size=30522 \
      --do_lower_case=true --output_file=vocab.txt

With --runner, the words are counted by an Apache Beam pipeline (the same
vocabulary); the flags this script does not define are Beam's pipeline
options, e.g. --runner=DirectRunner --direct_num_workers=2.
"""

from absl import flags

from bert_tf.beam import beam_options
from bert_tf.cli import options_from_flags
from bert_tf.scripts import script
from bert_tf.text import vocab
from bert_tf.text.vocab_beam import build_vocab_with_beam

FLAGS = flags.FLAGS


def main(argv):
    options = options_from_flags(vocab.VocabOptions, FLAGS)
    on_beam = beam_options(FLAGS.runner, argv)
    if on_beam.runner is None:
        vocab.build_vocab(options)
    else:
        build_vocab_with_beam(options, on_beam)
    print(f"vocabulary: {FLAGS.output_file}")


main, run = script("build_vocab", __doc__, main)


if __name__ == "__main__":
    run()
