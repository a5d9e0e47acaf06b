r"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

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

With --runner, an Apache Beam pipeline makes the same records (any order)
into --num_output_shards shards named after the one --output_file; the flags
this script does not define are Beam's pipeline options:
  python create_pretraining_data.py --input_file='corpus/*.txt' \
      --output_file=out/train.tfrecord --num_output_shards=4 \
      --vocab_file=vocab.txt --runner=DirectRunner \
      --direct_num_workers=2 --direct_running_mode=multi_processing
writes out/train.tfrecord-00000-of-00004 ... and out/train.summary.json
(see bert_tf/data/pretraining/beam_pipeline.py).
"""

from absl import flags

from bert_tf.beam import beam_options
from bert_tf.cli import options_from_flags
from bert_tf.data.pretraining.beam_pipeline import create_pretraining_data_with_beam, shard_paths
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data
from bert_tf.scripts import script

FLAGS = flags.FLAGS


def main(argv):
    options = options_from_flags(PretrainingDataOptions, FLAGS)
    on_beam = beam_options(FLAGS.runner, argv)
    if on_beam.runner is None:
        create_pretraining_data(options)
        outputs = options.output_files
    else:
        shards = FLAGS.num_output_shards
        create_pretraining_data_with_beam(options, on_beam, shards)
        outputs = shard_paths(options.output_files[0], shards)
    for path in outputs:
        print(f"records: {path}")
    print(f"summary: {options.summary_file}")


main, run = script("create_pretraining_data", __doc__, main)


if __name__ == "__main__":
    run()
