"""Pre-trains BERT (masked LM + next sentence) on TFRecords from create_pretraining_data.py.

The original google-research/bert flags, plus the shared training flags
(--distribution_strategy, --dtype, --jit_compile, --optimizer, ...).
"""

from bert_tf.scripts import script

main, run = script("run_pretraining", __doc__)

if __name__ == "__main__":
    run()
