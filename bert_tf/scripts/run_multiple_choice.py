"""Fine-tunes BERT on SWAG-style multiple choice (train.csv, val.csv, test.csv in --data_dir).

Outputs in --output_dir: checkpoints, eval_results.txt and test_results.tsv;
--export_dir writes a SavedModel (context and endings as raw text) for TF Serving.
"""

from bert_tf.scripts import script

main, run = script("run_multiple_choice", __doc__)

if __name__ == "__main__":
    run()
