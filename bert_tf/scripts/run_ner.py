"""Fine-tunes BERT for named entity recognition (or trains the paper's
feature-based BiLSTM): CoNLL-2003, per-character Chinese files
(--data_format=chars) or CLUENER2020 JSON lines (--data_format=cluener);
evaluates on the dev file and tags the test file.

Outputs in --output_dir: checkpoints, eval_results.txt (conlleval's entity
precision / recall / F1 as fractions, eval_loss) and test_predictions.txt
(test.txt with a predicted tag column, for conlleval) or, for CLUENER,
cluener_predict.json; --export_dir writes a SavedModel that tags raw
sentences.
"""

from bert_tf.scripts import script

main, run = script("run_ner", __doc__)

if __name__ == "__main__":
    run()
