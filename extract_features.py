"""Extracts contextual token vectors from chosen layers, as the original extract_features.py.

The script lives in bert_tf/scripts/extract_features.py; installed, run it as
`bert-tf-extract-features` or `python -m bert_tf.scripts.extract_features`.
"""

from bert_tf.scripts.extract_features import run

if __name__ == "__main__":
    run()
