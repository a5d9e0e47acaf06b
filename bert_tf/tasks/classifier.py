"""Sentence (pair) classification and regression: what `run_classifier.py` runs."""

import os

import numpy as np
from absl import logging

from bert_tf.data.classification import class_weights as weights
from bert_tf.data.classification import features as classifier_features
from bert_tf.data.classification import outputs as classifier_outputs
from bert_tf.data.classification import registry, unlabeled
from bert_tf.data.classification.processor import SPLITS
from bert_tf.errors import InputError
from bert_tf.export import export_classifier
from bert_tf.metrics.classification import glue_metrics, multi_label_metrics, tune_thresholds
from bert_tf.modeling import BertClassifier
from bert_tf.tasks.fine_tuning import FineTuningRunner
from bert_tf.tasks.logits import (
    ClassificationObjective,
    MultiLabelObjective,
    binary_cross_entropy,
    combine_windows,
    cross_entropy,
    sigmoid,
    softmax,
)
from bert_tf.tasks.run import run_task

THRESHOLDS_FILE = "thresholds.json"
DEFAULT_THRESHOLD = 0.5
# A sweep's default dev metric by `DataProcessor.metric` where it is not
# eval_accuracy: what CoLA's and STS-B's results are compared by.
_MAIN_METRICS = {"matthews": "matthews_corr", "pearson_spearman": "pearson"}


def eval_metrics(processor, logits, labels):
    """eval_results.txt: the original's `eval_accuracy` / `eval_loss` plus the
    task's GLUE metrics (`loss` equals `eval_loss`: padding is left out)."""
    if processor.is_regression:
        eval_loss = float(np.mean((logits[:, 0] - labels) ** 2))
        metrics = glue_metrics(processor.metric, logits[:, 0], labels)
    else:
        eval_loss = cross_entropy(logits, labels)
        metrics = glue_metrics(processor.metric, logits, labels)
    return {**metrics, "eval_loss": eval_loss, "loss": eval_loss}


def multi_label_eval_metrics(processor, logits, labels, thresholds):
    """eval_results.txt of a multi-label task: `multi_label_metrics` at
    `thresholds` and `eval_loss` (binary cross-entropy, mean over labels and examples)."""
    eval_loss = binary_cross_entropy(logits, labels)
    metrics = multi_label_metrics(sigmoid(logits), labels, thresholds, processor.get_labels())
    return {**metrics, "eval_loss": eval_loss, "loss": eval_loss}


def _has_sentence_pairs(processor, data_dir):
    """Whether the task's examples have a text_b (from its first non-empty split on disk)."""
    for split in SPLITS:
        if all(os.path.exists(f) for f in processor.input_files(data_dir, split)):
            examples = processor.get_examples(data_dir, split)
            if examples:
                return any(e.text_b for e in examples)
    raise InputError(f"--data_dir {data_dir}: no examples of task {processor.name} to export for")


class ClassifierRunner(FineTuningRunner):
    """Classification on the run skeleton: GLUE-style files in, the original's
    output files (and a raw-text SavedModel) out."""

    make_dataset = staticmethod(classifier_features.make_dataset)
    epoch_of = "num_features"  # with --long_text_stride, every window

    def __init__(self, options):
        super().__init__(options)
        self.processor = None
        self.class_weights = None  # per label, with --class_weights and --do_train
        self._thresholds = None  # multi-label, see thresholds()

    def validate(self):
        options = self.options
        self.processor = registry.get_processor(
            options.data.task_name, **options.data.processor_options
        )
        if options.class_weights is not None and self.processor.is_regression:
            raise InputError(
                f"--class_weights is for classification; task {self.processor.name} is a regression"
            )
        if options.data.multi_label and not self.processor.multi_label:
            raise InputError("--multi_label needs --task_name=generic")
        if not options.data.multi_label:
            for name, value in (
                ("label_delimiter", options.data.label_delimiter),
                ("threshold", options.threshold),
            ):
                if value is not None:
                    raise InputError(f"--{name} is for --multi_label")
            if options.tune_thresholds:
                raise InputError("--tune_thresholds is for --multi_label")
        if options.data.multi_label and options.class_weights is not None:
            raise InputError("--class_weights is for single-label classification")
        if options.tune_thresholds and not options.run.do_eval:
            raise InputError("--tune_thresholds chooses the thresholds on dev: add --do_eval")

    def dev_metric(self):
        if self.processor.multi_label:
            return "micro_f1"
        return _MAIN_METRICS.get(self.processor.metric, "eval_accuracy")

    def read_inputs(self):
        options, processor = self.options, self.processor
        labels = processor.read_labels(options.data.data_dir)
        if options.class_weights is None:
            return
        if options.class_weights.strip().lower() == weights.BALANCED:
            if not options.run.do_train:
                return  # the weights only change the training loss
            train = processor.get_train_examples(options.data.data_dir)
            self.class_weights = weights.balanced_class_weights([e.label for e in train], labels)
        else:
            self.class_weights = weights.parse_class_weights(options.class_weights, labels)
        logging.info(
            "Class weights (--class_weights=%s): %s",
            options.class_weights,
            ", ".join(f"{label}={w:.6g}" for label, w in zip(labels, self.class_weights)),
        )

    def split_features(self, split, pad_to):
        options = self.options
        return classifier_features.ensure_split_features(
            self.processor,
            options.data.data_dir,
            split,
            self.features_dir,
            self.text,
            long_text_stride=options.long_text_stride,
            pad_examples_to_multiple_of=pad_to,
        )

    def dataset_arguments(self):
        processor = self.processor
        if processor.multi_label:
            return {"num_multi_labels": len(processor.get_labels())}
        return {"is_regression": processor.is_regression}

    def build_model(self, config):
        processor = self.processor
        if processor.multi_label:
            return BertClassifier(config, len(processor.get_labels()), multi_label=True)
        return BertClassifier(config, 1 if processor.is_regression else len(processor.get_labels()))

    def objective(self):
        if self.processor.multi_label:
            return MultiLabelObjective()
        return ClassificationObjective(self.processor.is_regression, self.class_weights)

    def thresholds(self):
        """Multi-label decision thresholds, one per label: tuned on dev in this
        run (`score`), else --threshold, else output_dir/thresholds.json, else 0.5."""
        if self._thresholds is None:
            options, labels = self.options, self.processor.get_labels()
            path = os.path.join(options.run.output_dir, THRESHOLDS_FILE)
            if options.threshold is not None:
                self._thresholds = [options.threshold] * len(labels)
                self._save_thresholds()
            elif os.path.exists(path):
                self._thresholds = classifier_outputs.read_thresholds(path, labels)
            else:
                self._thresholds = [DEFAULT_THRESHOLD] * len(labels)
            logging.info("Thresholds: %s", self._thresholds)
        return self._thresholds

    def _save_thresholds(self):
        path = os.path.join(self.options.run.output_dir, THRESHOLDS_FILE)
        classifier_outputs.write_thresholds(path, self.processor.get_labels(), self._thresholds)
        self.wrote("thresholds", path)

    def score(self, predictions):
        logits, labels = combine_windows(predictions)
        if not self.processor.multi_label:
            return eval_metrics(self.processor, logits, labels)
        if self.options.tune_thresholds:
            self._thresholds = tune_thresholds(sigmoid(logits), labels, DEFAULT_THRESHOLD)
            logging.info("Thresholds tuned on dev: %s", self._thresholds)
            self._save_thresholds()
        return multi_label_eval_metrics(self.processor, logits, labels, self.thresholds())

    def write_predictions(self, predictions):
        options, processor = self.options, self.processor
        logits, _ = combine_windows(predictions)
        if processor.multi_label:
            outputs = sigmoid(logits)
        else:
            outputs = logits[:, 0] if processor.is_regression else softmax(logits)
        path = os.path.join(options.run.output_dir, "test_results.tsv")
        classifier_outputs.write_test_results(path, outputs)
        self.wrote("predictions", path)
        if processor.id_column is not None:
            path = os.path.join(options.run.output_dir, "test_predictions.tsv")
            ids = [example.guid for example in processor.get_test_examples(options.data.data_dir)]
            thresholds = self.thresholds() if processor.multi_label else None
            classifier_outputs.write_id_predictions(path, processor, ids, outputs, thresholds)
            self.wrote("predictions by id", path)
        if processor.submission_file:
            path = classifier_outputs.submission_path(options.run.output_dir, processor)
            classifier_outputs.write_submission(path, processor, outputs, options.data.data_dir)
            self.wrote(f"{processor.submission_format.upper()} submission", path)

    def export(self, model):
        options = self.options
        return export_classifier(
            model,
            options.export.export_dir,
            options.model.vocab_file,
            options.model.do_lower_case,
            options.model.max_seq_length,
            _has_sentence_pairs(self.processor, options.data.data_dir),
            is_regression=self.processor.is_regression,
            long_text_stride=options.long_text_stride,
            overwrite=options.export.overwrite,
            jit_compile=options.runtime.jit_compile,
            label_names=self.processor.get_labels(),
            thresholds=self.thresholds() if self.processor.multi_label else None,
        )

    # What distillation (`tasks.distillation`) asks of the task.

    @staticmethod
    def labelled(features):
        return unlabeled.is_labelled(features["label_ids"])

    def fingerprint_labels(self):
        return [] if self.processor.is_regression else list(self.processor.get_labels())

    def unlabeled_features(self, paths):
        options, processor = self.options, self.processor
        return unlabeled.ensure_unlabeled_features(
            paths,
            self.features_dir,
            self.text,
            is_regression=processor.is_regression,
            num_multi_labels=len(processor.get_labels()) if processor.multi_label else 0,
            long_text_stride=options.long_text_stride,
        )


def run_classifier(options):
    """Fine-tunes, evaluates, predicts and exports as the flags say.

    Returns the eval metrics (empty without do_eval). Writes to `output_dir`:
    checkpoints, cached features (`train.tf_record`, ...), multi-label `thresholds.json`,
    `eval_results.txt`, `test_results.tsv` and the GLUE or CLUE submission file.
    """
    return run_task(ClassifierRunner(options))
