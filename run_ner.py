"""Fine-tunes BERT for named entity recognition (CoNLL-2003, Chinese, CLUENER).

The script lives in bert_tf/scripts/run_ner.py; installed, run it as
`bert-tf-run-ner` or `python -m bert_tf.scripts.run_ner`.
"""

from bert_tf.scripts.run_ner import run

if __name__ == "__main__":
    run()
