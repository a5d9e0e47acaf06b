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

import os

# TensorFlow's C++ start-up notices (CUDA, CPU features) hide the script's own
# lines; a TF_CPP_MIN_LOG_LEVEL you set wins.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import flags  # noqa: E402

from bert_tf.cli import define_flags, options_from_flags, run_main
from bert_tf.tasks.options import NerOptions

FLAGS = flags.FLAGS

define_flags(NerOptions)


def main(argv):
    del argv
    options = options_from_flags(NerOptions, FLAGS)
    # TensorFlow is imported here, once the flags are parsed and checked.
    from bert_tf.tasks.ner import run_ner

    results = run_ner(options)
    for key, value in sorted(results.items()):
        print(f"{key} = {value}")


if __name__ == "__main__":
    run_main(main)
