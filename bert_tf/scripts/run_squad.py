"""Fine-tunes BERT on SQuAD v1.1 / v2.0 and predicts, as the original run_squad.py.

Outputs in --output_dir: checkpoints, predictions.json, nbest_predictions.json,
null_odds.json (v2.0) and, when --predict_file has answers, eval_results.json
(the official evaluation's EM / F1); --export_dir writes a SavedModel that
answers questions from raw text.

Run it as (the same flags each way):
  bert-tf-run-squad --flag=value ...
  python -m bert_tf.scripts.run_squad --flag=value ...
  python run_squad.py --flag=value ...   (in a checkout)
"""

from absl import flags

from bert_tf.cli import options_from_flags, run_script
from bert_tf.tasks.options import SquadOptions

FLAGS = flags.FLAGS


def main(argv):
    del argv
    options = options_from_flags(SquadOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.squad import run_squad

    results = run_squad(options)
    for key, value in results.items():
        print(f"{key} = {value}")


def run():
    """The `bert-tf-run-squad` command: parses the flags, then runs `main`."""
    run_script(main, __doc__, SquadOptions)


if __name__ == "__main__":
    run()
