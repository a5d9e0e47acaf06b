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

Run it as (the same flags each way):
  bert-tf-extend-checkpoint --flag=value ...
  python -m bert_tf.scripts.extend_checkpoint --flag=value ...
  python extend_checkpoint.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import ExtendOptions

FLAGS = flags.FLAGS


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


def run():
    """The `bert-tf-extend-checkpoint` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, ExtendOptions)


if __name__ == "__main__":
    run()
