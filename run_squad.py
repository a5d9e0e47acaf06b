"""Fine-tunes BERT on SQuAD v1.1 / v2.0 and predicts, as the original run_squad.py.

Outputs in --output_dir: checkpoints, predictions.json, nbest_predictions.json,
null_odds.json (v2.0) and, when --predict_file has answers, eval_results.json
(the official evaluation's EM / F1); --export_dir writes a SavedModel that
answers questions from raw text.
"""

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import SquadOptions

FLAGS = flags.FLAGS

define_flags(SquadOptions)


def main(argv):
    del argv
    options = options_from_flags(SquadOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.squad import run_squad

    results = run_squad(options)
    for key, value in results.items():
        print(f"{key} = {value}")


if __name__ == "__main__":
    run_main(main)
