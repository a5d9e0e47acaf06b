"""Creates masked-LM / next-sentence pre-training TFRecords from raw text.

The script lives in bert_tf/scripts/create_pretraining_data.py; installed, run it as
`bert-tf-create-pretraining-data` or `python -m bert_tf.scripts.create_pretraining_data`.
"""

from bert_tf.scripts.create_pretraining_data import run

if __name__ == "__main__":
    run()
