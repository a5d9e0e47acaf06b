"""Fine-tunes BERT for named entity recognition (or trains the paper's
feature-based BiLSTM): CoNLL-2003, per-character Chinese files
(--data_format=chars) or CLUENER2020 JSON lines (--data_format=cluener);
evaluates on the dev file and tags the test file.

Outputs in --output_dir: checkpoints, eval_results.txt (conlleval's entity
precision / recall / F1 as fractions, eval_loss) and test_predictions.txt
(test.txt with a predicted tag column, for conlleval) or, for CLUENER,
cluener_predict.json; --export_dir writes a SavedModel that tags raw
sentences.

Run it as (the same flags each way):
  bert-tf-run-ner --flag=value ...
  python -m bert_tf.scripts.run_ner --flag=value ...
  python run_ner.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import NerOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(NerOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.ner import run_ner

    results = run_ner(options)
    for key, value in sorted(results.items()):
        print(f"{key} = {value}")


def run():
    """The `bert-tf-run-ner` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, NerOptions)


if __name__ == "__main__":
    run()
