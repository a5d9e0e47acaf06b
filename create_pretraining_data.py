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

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data

FLAGS = flags.FLAGS

define_flags(PretrainingDataOptions)


def main(argv):
    del argv
    options = options_from_flags(PretrainingDataOptions, FLAGS)
    create_pretraining_data(options)
    for path in options.output_files:
        print(f"records: {path}")
    print(f"summary: {options.summary_file}")


if __name__ == "__main__":
    run_main(main)
