"""Fine-tunes BERT on GLUE / XNLI / CLUE / your own TSV or CSV, as the original run_classifier.py.

The script lives in bert_tf/scripts/run_classifier.py; installed, run it as
`bert-tf-run-classifier` or `python -m bert_tf.scripts.run_classifier`.
"""

from bert_tf.scripts.run_classifier import run

if __name__ == "__main__":
    run()
