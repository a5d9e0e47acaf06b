"""Fine-tunes BERT on SQuAD v1.1 / v2.0 and predicts, as the original run_squad.py.

The script lives in bert_tf/scripts/run_squad.py; installed, run it as
`bert-tf-run-squad` or `python -m bert_tf.scripts.run_squad`.
"""

from bert_tf.scripts.run_squad import run

if __name__ == "__main__":
    run()
