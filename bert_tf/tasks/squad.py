"""SQuAD v1.1 / v2.0 fine-tuning and prediction: what `run_squad.py` runs.

Outputs in `output_dir`, as the original: checkpoints, `predictions.json`,
`nbest_predictions.json` and (v2.0) `null_odds.json`; plus the window
caches (`train.tf_record`, `predict.tf_record`) and, when the predict file
has answers, `eval_results.json` with the official evaluation scripts'
scores (for v2.0 also the best null threshold found from null_odds.json;
with `--eval_metric=cmrc2018` CMRC 2018's, for CMRC 2018 and DRCD).
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf.data.squad import features as squad_features
from bert_tf.data.squad import postprocess, reader
from bert_tf.errors import InputError
from bert_tf.export.squad import export_span_labeler
from bert_tf.files import write_text_atomically
from bert_tf.metrics import squad_scoring as scoring
from bert_tf.modeling import BertSpanLabeler
from bert_tf.modeling.losses import SPAN_LOSS_WEIGHTS, span_losses
from bert_tf.tasks.fine_tuning import FineTuningRunner
from bert_tf.tasks.model_setup import text_settings
from bert_tf.tasks.run import run_task
from bert_tf.training.objectives import HeadObjective

EVAL_RESULTS_FILE = "eval_results.json"


# The answer positions of a question without an answer read (the teacher gives it).
UNLABELLED_POSITION = -1


class SquadObjective(HeadObjective):
    """The original's loss (`modeling.losses.span_losses`, as
    `BertSpanLabeler`'s `default_loss`): the mean of the start and end
    cross-entropies, each averaged over the global batch."""

    def __init__(self):
        super().__init__(
            span_losses(),
            labels={"start_logits": "start_positions", "end_logits": "end_positions"},
            loss_weights=SPAN_LOSS_WEIGHTS,
        )


class SquadRunner(FineTuningRunner):
    """SQuAD on the run skeleton: its one split to predict is --predict_file,
    scored when it has answers."""

    make_dataset = staticmethod(squad_features.make_dataset)
    pads_dynamically = False
    batch_size_options = ("train_batch_size", "predict_batch_size")
    # --predict_file is the dev set: its scores are what a sweep compares.
    dev_results = ("do_predict", EVAL_RESULTS_FILE)

    def __init__(self, options):
        super().__init__(options)
        self.eval_results = {}

    def validate(self):
        options = self.options
        if options.run.do_train and not options.train_file:
            raise InputError("--do_train needs --train_file")
        if options.run.do_predict and not options.predict_file:
            raise InputError("--do_predict needs --predict_file")
        if options.model.max_seq_length <= options.max_query_length + 3:
            raise InputError(
                f"--max_seq_length={options.model.max_seq_length} leaves no room for the "
                f"context after --max_query_length={options.max_query_length} "
                "question tokens, [CLS] and two [SEP]"
            )
        if options.eval_metric not in scoring.EVAL_METRICS:
            raise InputError(
                f"--eval_metric={options.eval_metric!r} must be one of {', '.join(scoring.EVAL_METRICS)}"
            )
        if options.eval_metric == "cmrc2018" and options.version_2_with_negative:
            raise InputError(
                "--eval_metric=cmrc2018 scores answerable questions only; "
                "it does not go with --version_2_with_negative"
            )

    def dev_metric(self):
        return "F1" if self.options.eval_metric == "cmrc2018" else "f1"

    def prepare(self, config):
        # The predict file's windows are made when predicting: post-processing
        # needs them then, and holding them during training costs memory.
        options = self.options
        self.text = text_settings(options)
        if options.run.do_train:
            self.train_file = self.split_features("train", None)
        self.text.tokenizer.check_unknown_share()

    def split_features(self, split, pad_to):
        # Only "train": the predict split is written by `predict_split`.
        return self._features(self.options.train_file, split, is_training=True)

    def _read(self, path, is_training):
        result = reader.read_squad_examples(path, is_training, self.options.version_2_with_negative)
        if not result.examples:
            raise InputError(f"{path}: no questions to {'train on' if is_training else 'predict'}")
        return result.examples

    def _windows(self, examples, is_training):
        options = self.options
        return squad_features.convert_examples(
            examples,
            self.text.tokenizer,
            self.text.max_seq_length,
            options.doc_stride,
            options.max_query_length,
            is_training,
        )

    def _features(self, path, split, is_training, windows=None, pad_to=None):
        options = self.options
        if windows is None:

            def windows():
                return self._windows(self._read(path, is_training), is_training)

        return squad_features.ensure_squad_features(
            self.features_dir,
            split,
            windows,
            input_file=path,
            text=self.text,
            doc_stride=options.doc_stride,
            max_query_length=options.max_query_length,
            is_training=is_training,
            pad_examples_to_multiple_of=pad_to,
        )

    def build_model(self, config):
        return BertSpanLabeler(config)

    def objective(self):
        return SquadObjective()

    def predict_split(self, trainer, split, batch_size):
        """`(examples, outputs)`: the questions of --predict_file and their
        post-processed answers (`postprocess.SquadPostprocessor.finish`)."""
        options = self.options
        examples = self._read(options.predict_file, is_training=False)
        windows = list(self._windows(examples, is_training=False))
        self.text.tokenizer.check_unknown_share()
        feature_file = self._features(
            options.predict_file, split, False, windows=windows, pad_to=batch_size
        )
        processor = postprocess.SquadPostprocessor(
            examples,
            n_best_size=options.n_best_size,
            max_answer_length=options.max_answer_length,
            do_lower_case=options.model.do_lower_case,
            version_2_with_negative=options.version_2_with_negative,
            null_score_diff_threshold=options.null_score_diff_threshold,
            verbose_logging=options.verbose_logging,
        )
        for unique_id, start_logits, end_logits in self.window_logits(trainer, feature_file.path):
            processor.add(windows[unique_id], start_logits, end_logits)
        return examples, processor.finish()

    def write_predictions(self, predictions):
        examples, outputs = predictions
        for path in postprocess.write_prediction_files(self.options.run.output_dir, outputs):
            self.wrote("predictions", path)
        if squad_features.has_answers(examples):
            self.eval_results = self._score(examples, outputs)

    def window_logits(self, trainer, path):
        """Yields `(unique_id, start_logits, end_logits)` of each real window of
        the records at `path`, batch by batch (never all of them at once)."""
        dataset_fn = self.split_dataset_fn(path, self.options.training.predict_batch_size, False)
        for batch in trainer.predict_batches(dataset_fn, passthrough=("unique_ids",)):
            for unique_id, start, end in zip(
                batch["unique_ids"], batch["start_logits"], batch["end_logits"]
            ):
                if unique_id != squad_features.PADDING_UNIQUE_ID:
                    yield unique_id, start, end

    def _score(self, examples, outputs):
        if self.options.eval_metric != "cmrc2018":
            _warn_if_chinese(examples)
        results = scoring.score_predictions(examples, outputs, self.options.eval_metric)
        path = os.path.join(self.options.run.output_dir, EVAL_RESULTS_FILE)
        write_text_atomically(path, json.dumps(results, indent=2) + "\n")
        logging.info("%s: %s", path, json.dumps(results))
        self.wrote("scores", path)
        return results

    def export(self, model):
        options = self.options
        return export_span_labeler(
            model,
            options.export.export_dir,
            options.model.vocab_file,
            options.model.do_lower_case,
            max_seq_length=options.model.max_seq_length,
            doc_stride=options.doc_stride,
            max_query_length=options.max_query_length,
            max_answer_length=options.max_answer_length,
            n_best_size=options.n_best_size,
            version_2_with_negative=options.version_2_with_negative,
            null_score_diff_threshold=options.null_score_diff_threshold,
            overwrite=options.export.overwrite,
            jit_compile=options.runtime.jit_compile,
        )

    # What distillation (`tasks.distillation`) asks of the task.

    @staticmethod
    def labelled(features):
        return tf.cast(features["start_positions"] >= 0, tf.float32)

    def unlabeled_features(self, paths):
        if len(paths) > 1:
            raise InputError("--unlabeled_file: run_squad.py reads one SQuAD JSON file")

        def windows():
            examples = self._read(paths[0], is_training=False)
            for window in self._windows(examples, is_training=False):
                window.start_position = window.end_position = UNLABELLED_POSITION
                yield window

        return self._features(paths[0], "unlabeled", is_training=True, windows=windows)


def _warn_if_chinese(examples):
    """Warns when most contexts hold CJK ideographs: SQuAD's scripts split
    answers on whitespace, so on Chinese their F1 is their exact match."""
    chinese = sum(len(e.doc_tokens) > len(e.context_text.split()) for e in examples)
    if chinese > len(examples) / 2:
        logging.warning(
            "%d of %d contexts are Chinese, where the SQuAD scores give no partial credit "
            "(F1 = exact match): pass --eval_metric=cmrc2018 for CMRC 2018's scores",
            chinese,
            len(examples),
        )


def run_squad(options):
    """Fine-tunes and/or predicts as the flags say; returns the scores of the
    predictions (empty unless the predict file has answers)."""
    runner = SquadRunner(options)
    # A sweep returns its chosen run's scores.
    return run_task(runner) or runner.eval_results
