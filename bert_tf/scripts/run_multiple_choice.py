"""Fine-tunes BERT on SWAG-style multiple choice (train.csv, val.csv, test.csv in --data_dir).

Outputs in --output_dir: checkpoints, eval_results.txt and test_results.tsv;
--export_dir writes a SavedModel (context and endings as raw text) for TF Serving.

Run it as (the same flags each way):
  bert-tf-run-multiple-choice --flag=value ...
  python -m bert_tf.scripts.run_multiple_choice --flag=value ...
  python run_multiple_choice.py --flag=value ...   (in a checkout)
"""

from bert_tf.scripts import script

main, run = script("run_multiple_choice", __doc__)

if __name__ == "__main__":
    run()
