"""Fine-tunes BERT on SQuAD v1.1 / v2.0 and predicts, as the original run_squad.py.

Outputs in --output_dir: checkpoints, predictions.json, nbest_predictions.json,
null_odds.json (v2.0) and, when --predict_file has answers, eval_results.json
(the official evaluation's EM / F1); --export_dir writes a SavedModel that
answers questions from raw text.
"""

from bert_tf.scripts import script

main, run = script("run_squad", __doc__)

if __name__ == "__main__":
    run()
