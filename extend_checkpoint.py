r"""Adds words and token types to a trained BERT: checkpoint surgery.

Usage:
  # new words into the vocab's [unused*] slots (the checkpoint unchanged)
  python extend_checkpoint.py --init_checkpoint=uncased_L-12_H-768_A-12 \
      --words_file=domain_words.txt --output_dir=uncased_plus_domain
  # new words appended: embedding rows added (--init=truncated_normal or mean)
  python extend_checkpoint.py --init_checkpoint=uncased_L-12_H-768_A-12 \
      --words_file=domain_words.txt --word_ids=append --init=mean --output_dir=out
  # more segment types
  python extend_checkpoint.py --init_checkpoint=uncased_L-12_H-768_A-12 \
      --type_vocab_size=4 --output_dir=out
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import ExtendOptions

FLAGS = flags.FLAGS

define_flags(ExtendOptions)


def main(argv):
    del argv
    options = options_from_flags(ExtendOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.checkpoints.surgery import extend_checkpoint

    report = extend_checkpoint(options)
    if report.known:
        print(f"already in the vocab, skipped: {' '.join(report.known)}")
    if report.added:
        ids = sorted(report.added.values())
        print(f"added {len(ids)} words as ids {ids[0]}..{ids[-1]}")
    if report.split:
        print(f"split by the tokenizer (reachable only by id): {' '.join(report.split)}")
    print(
        f"model: {report.output_dir} (vocab_size {report.vocab_size}, "
        f"type_vocab_size {report.type_vocab_size})"
    )


if __name__ == "__main__":
    run_main(main)
