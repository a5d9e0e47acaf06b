"""Builds a WordPiece vocab file from raw text files.

The script lives in bert_tf/scripts/build_vocab.py; installed, run it as
`bert-tf-build-vocab` or `python -m bert_tf.scripts.build_vocab`.
"""

from bert_tf.scripts.build_vocab import run

if __name__ == "__main__":
    run()
