"""SWAG-style multiple choice: what `run_multiple_choice.py` runs.

Reads train.csv / val.csv / test.csv (SWAG's names and format) from
`data_dir`; writes to `output_dir` checkpoints, the feature caches
(`train.tf_record`, ...), `eval_results.txt` (`eval_accuracy`, `eval_loss`,
`loss`, `global_step`) and `test_results.tsv` (per test example the
probabilities of its choices, tab-separated); `export_dir` gets a SavedModel
that takes the raw texts.
"""

import os

import numpy as np

from bert_tf.data import multiple_choice as mc_data
from bert_tf.data.classification.outputs import write_test_results
from bert_tf.export.multiple_choice import export_multiple_choice
from bert_tf.modeling import BertMultipleChoice
from bert_tf.tasks.fine_tuning import FineTuningRunner
from bert_tf.tasks.logits import ClassificationObjective, combine_windows, cross_entropy, softmax
from bert_tf.tasks.run import run_task


def eval_metrics(logits, labels):
    """Logits `[n, choices]` and labels `[n]` of the real examples ->
    `eval_accuracy`, `eval_loss` and `loss` (equal to eval_loss)."""
    eval_loss = cross_entropy(logits, labels)
    accuracy = float(np.mean(np.argmax(logits, axis=1) == labels))
    return {"eval_accuracy": accuracy, "eval_loss": eval_loss, "loss": eval_loss}


class MultipleChoiceRunner(FineTuningRunner):
    """SWAG-style multiple choice on the run skeleton."""

    make_dataset = staticmethod(mc_data.make_dataset)

    def split_features(self, split, pad_to):
        options = self.options
        return mc_data.ensure_swag_features(
            options.data_dir,
            self.features_dir,
            split,
            self.text,
            pad_examples_to_multiple_of=pad_to,
        )

    def build_model(self, config):
        return BertMultipleChoice(config, mc_data.NUM_CHOICES)

    def objective(self):
        # Cross-entropy over the choices: the classifier's loss on [batch, choices] logits.
        return ClassificationObjective(is_regression=False)

    # One window per example: combine_windows only puts them in file order.
    def score(self, predictions):
        return eval_metrics(*combine_windows(predictions))

    def write_predictions(self, predictions):
        logits, _ = combine_windows(predictions)
        path = os.path.join(self.options.run.output_dir, "test_results.tsv")
        write_test_results(path, softmax(logits.astype(np.float64)))
        self.wrote("predictions", path)

    def export(self, model):
        options = self.options
        return export_multiple_choice(
            model,
            options.export.export_dir,
            options.model.vocab_file,
            options.model.do_lower_case,
            options.model.max_seq_length,
            overwrite=options.export.overwrite,
            jit_compile=options.runtime.jit_compile,
        )


def run_multiple_choice(options):
    """Fine-tunes, evaluates, predicts and exports as the options say; returns
    the eval metrics (empty without do_eval)."""
    return run_task(MultipleChoiceRunner(options))
