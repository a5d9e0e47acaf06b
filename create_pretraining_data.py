"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

The original google-research/bert flags, defaults and output schema, plus
parallel workers and streaming (see bert_tf/data/pretraining/writer.py).
Neither this process nor its workers import TensorFlow for local files.

Usage:
  python create_pretraining_data.py --input_file='corpus/*.txt' \
      --output_file=out/train.tfrecord-0,out/train.tfrecord-1 \
      --vocab_file=vocab.txt --do_lower_case=true --num_workers=4

Besides the records, a summary of the run (instances, masking, lengths,
truncated sentences, skipped lines) is written beside the first output file,
named without its `.tfrecord...` part and shard number: here
`out/train.summary.json`, which `--input_file=out/train.tfrecord-*` of
run_pretraining.py does not match.

SIGTERM or Ctrl-C stops the workers too, removes the unfinished outputs
(earlier files of the same names stay as they were) and exits with 128 + the
signal's number.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import run_main
from bert_tf.data.pretraining import blocks as pretraining_blocks
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None,
                    "Input raw text file (or comma-separated list of files or globs).")
flags.DEFINE_string("output_file", None,
                    "Output TF example file (or comma-separated list of files).")
flags.DEFINE_string("vocab_file", None, "The vocabulary file that the BERT model was trained on.")
flags.DEFINE_bool("do_lower_case", True,
                  "Whether to lower case the input text. Should be True for uncased models "
                  "and False for cased models.")
flags.DEFINE_bool("do_whole_word_mask", False,
                  "Whether to use whole word masking rather than per-WordPiece masking.")
flags.DEFINE_integer("max_seq_length", 128, "Maximum sequence length.")
flags.DEFINE_integer("max_predictions_per_seq", 20,
                     "Maximum number of masked LM predictions per sequence.")
flags.DEFINE_integer("random_seed", 12345, "Random seed for data generation.")
flags.DEFINE_integer("dupe_factor", 10,
                     "Number of times to duplicate the input data (with different masks).")
flags.DEFINE_float("masked_lm_prob", 0.15, "Masked LM probability.")
flags.DEFINE_float("short_seq_prob", 0.1,
                   "Probability of creating sequences which are shorter than the maximum length.")
# Beyond the original.
flags.DEFINE_enum("word_segmenter", None, list(pretraining_blocks.WORD_SEGMENTERS),
                  "With --do_whole_word_mask: mask the pieces of each word of this segmenter "
                  "together (text without ## pieces, e.g. Chinese; needs the jieba extra).")
flags.DEFINE_integer("num_workers", 1,
                     "Processes that tokenize and make instances: this one and num_workers - 1 "
                     "spawned ones; the output does not depend on it.")
flags.DEFINE_integer("sentences_per_block", 10000,
                     "Documents are processed in blocks, each ending with the document that "
                     "brings it to this many lines; random next sentences come from the same "
                     "block. A corpus of one block gives exactly the original's output.")
flags.DEFINE_integer("interleave_blocks", 4,
                     "The instances of this many consecutive blocks are merged at random.")
flags.DEFINE_bool("skip_invalid_utf8", False,
                  "Skip (and count) lines that are not UTF-8 instead of stopping.")
flags.DEFINE_bool("show_progress", True,
                  "Show documents, instances and rate on stderr while running.")
flags.mark_flags_as_required(["input_file", "output_file", "vocab_file"])


def main(argv):
    del argv
    options = PretrainingDataOptions(
        input_patterns=tuple(p for p in FLAGS.input_file.split(",") if p),
        output_files=tuple(p for p in FLAGS.output_file.split(",") if p),
        vocab_file=FLAGS.vocab_file,
        do_lower_case=FLAGS.do_lower_case,
        do_whole_word_mask=FLAGS.do_whole_word_mask,
        max_seq_length=FLAGS.max_seq_length,
        max_predictions_per_seq=FLAGS.max_predictions_per_seq,
        random_seed=FLAGS.random_seed,
        dupe_factor=FLAGS.dupe_factor,
        masked_lm_prob=FLAGS.masked_lm_prob,
        short_seq_prob=FLAGS.short_seq_prob,
        word_segmenter=FLAGS.word_segmenter,
        num_workers=FLAGS.num_workers,
        sentences_per_block=FLAGS.sentences_per_block,
        interleave_blocks=FLAGS.interleave_blocks,
        skip_invalid_utf8=FLAGS.skip_invalid_utf8,
        show_progress=FLAGS.show_progress,
    )
    create_pretraining_data(options)
    for path in options.output_files:
        print(f"records: {path}")
    print(f"summary: {options.summary_file}")


if __name__ == "__main__":
    run_main(main)
