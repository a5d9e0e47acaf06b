"""Fine-tunes BERT on SWAG-style multiple choice (train.csv, val.csv, test.csv in --data_dir).

The script lives in bert_tf/scripts/run_multiple_choice.py; installed, run it as
`bert-tf-run-multiple-choice` or `python -m bert_tf.scripts.run_multiple_choice`.
"""

from bert_tf.scripts.run_multiple_choice import run

if __name__ == "__main__":
    run()
