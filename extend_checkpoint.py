"""Adds words and token types to a trained BERT: checkpoint surgery.

The script lives in bert_tf/scripts/extend_checkpoint.py; installed, run it as
`bert-tf-extend-checkpoint` or `python -m bert_tf.scripts.extend_checkpoint`.
"""

from bert_tf.scripts.extend_checkpoint import run

if __name__ == "__main__":
    run()
