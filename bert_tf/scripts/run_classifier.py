"""Fine-tunes BERT on GLUE / XNLI / CLUE / your own TSV or CSV, as the original run_classifier.py.

Outputs in --output_dir: checkpoints, eval_results.txt, test_results.tsv and
the GLUE or CLUE submission file; --export_dir writes a SavedModel for TF Serving.
"""

from bert_tf.scripts import script

main, run = script("run_classifier", __doc__)

if __name__ == "__main__":
    run()
