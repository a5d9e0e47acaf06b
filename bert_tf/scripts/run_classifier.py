"""Fine-tunes BERT on GLUE / XNLI / CLUE / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE or CLUE submission file; --export_dir writes a SavedModel for TF Serving.

Run it as (the same flags each way):
  bert-tf-run-classifier --flag=value ...
  python -m bert_tf.scripts.run_classifier --flag=value ...
  python run_classifier.py --flag=value ...   (in a checkout)
"""

from bert_tf.scripts import script

main, run = script("run_classifier", __doc__)

if __name__ == "__main__":
    run()
