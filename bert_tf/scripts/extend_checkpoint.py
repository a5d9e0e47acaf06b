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

from bert_tf.scripts import script

main, run = script("extend_checkpoint", __doc__)

if __name__ == "__main__":
    run()
