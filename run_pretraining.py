"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The script lives in bert_tf/scripts/run_pretraining.py; installed, run it as
`bert-tf-run-pretraining` or `python -m bert_tf.scripts.run_pretraining`.
"""

from bert_tf.scripts.run_pretraining import run

if __name__ == "__main__":
    run()
