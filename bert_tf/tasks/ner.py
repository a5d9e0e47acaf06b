"""Named entity recognition (CoNLL-2003, Chinese NER): what `run_ner.py` runs.

Files in `--data_dir`: train.txt, dev.txt (or valid.txt) and test.txt
(`--data_format=conll` or `chars`), or CLUENER's train.json, dev.json and
test.json (`cluener`); see `data/tagging.py`. Outputs in `output_dir`:
checkpoints, the feature caches (`train.tf_record`, ...), `eval_results.txt`
(dev set: the entity `precision`, `recall`, `f1` as fractions in [0, 1], per
type as `f1_PER`, ..., chunks as conlleval or the `--tag_scheme` finds them;
`eval_loss` = `loss`, the mean cross-entropy per word; `global_step`) and
`test_predictions.txt` (test.txt with the predicted tag appended to each
row, for conlleval) or, for CLUENER, `cluener_predict.json` (CLUE's
submission format). `--feature_based` trains the paper's BiLSTM on the
frozen encoder's layers instead of fine-tuning. `--use_crf` puts a
linear-chain CRF over each window's labelled words (each word's first
piece): the loss is its NLL per labelled word, `eval_loss` the same on the
dev set, and tags its Viterbi path.
"""

import os
from functools import partial

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.data import tagging
from bert_tf.errors import InputError
from bert_tf.export.tagging import export_tagger
from bert_tf.files import exists
from bert_tf.metrics.entities import eval_metrics
from bert_tf.modeling.losses import CrfLoss, TokenCrossEntropy
from bert_tf.modeling.tagging import (
    COMBINE_MODES,
    BertFeatureTagger,
    BertTokenClassifier,
    decode_tags,
    word_losses,
)
from bert_tf.tasks.fine_tuning import FineTuningRunner, pass_name
from bert_tf.tasks.model_setup import parse_layers
from bert_tf.tasks.run import run_task
from bert_tf.text.tags import SCHEMES, detect_scheme, split_tag
from bert_tf.training.objectives import HeadObjective

PREDICTIONS_FILE = "test_predictions.txt"
CLUENER_PREDICTIONS_FILE = "cluener_predict.json"
_TEXT_FILES = {"train": ("train.txt",), "eval": ("dev.txt", "valid.txt"), "predict": ("test.txt",)}
_SPLIT_FILES = {
    "conll": _TEXT_FILES,
    "chars": _TEXT_FILES,
    "cluener": {"train": ("train.json",), "eval": ("dev.json",), "predict": ("test.json",)},
}


class TaggingObjective(HeadObjective):
    """run_ner.py's loss (`modeling.losses`, as `BertTokenClassifier`'s
    `default_loss`): token cross-entropy over the labelled positions (label
    id >= 0), normalised by the labelled tokens of the global batch; with
    `crf` (a `LinearChainCrf`), the CRF's NLL of each row's labelled
    positions, summed and normalised alike (the NLL per labelled word)."""

    def __init__(self, crf=None):
        super().__init__(TokenCrossEntropy() if crf is None else CrfLoss(crf), labels="label_ids")


class NerRunner(FineTuningRunner):
    """CoNLL-2003 NER on the run skeleton."""

    make_dataset = staticmethod(tagging.make_dataset)
    passthrough = ("label_ids", "word_ids", "sentence_index", "is_real_example")
    default_lower_case = False  # CoNLL models are usually cased

    def __init__(self, options):
        super().__init__(options)
        self.labels = None
        self.scheme = None
        self.model = None

    def validate(self):
        options = self.options
        if options.model.max_seq_length < 3:
            raise InputError(
                f"--max_seq_length={options.model.max_seq_length} leaves no room for "
                "words after [CLS] and [SEP]"
            )
        if options.combine not in COMBINE_MODES:
            raise InputError(
                f"--combine={options.combine!r} must be one of {', '.join(COMBINE_MODES)}"
            )
        parse_layers(options.layers)
        if options.data_format not in tagging.DATA_FORMATS:
            raise InputError(
                f"--data_format={options.data_format!r} must be one of "
                f"{', '.join(tagging.DATA_FORMATS)}"
            )
        if options.tag_scheme not in ("auto", *SCHEMES):
            raise InputError(
                f"--tag_scheme={options.tag_scheme!r} must be auto or one of {', '.join(SCHEMES)}"
            )

    def input_file(self, split):
        """The data file of a split in --data_dir (dev.txt or valid.txt for eval)."""
        names = _SPLIT_FILES[self.options.data_format][split]
        for name in names:
            path = os.path.join(self.options.data_dir, name)
            if exists(path):
                return path
        raise InputError(f"--data_dir {self.options.data_dir} has no {' or '.join(names)}")

    def read_inputs(self):
        options = self.options
        scheme = None if options.tag_scheme == "auto" else options.tag_scheme
        if options.labels:
            self.labels = tagging.parse_labels(options.labels)
        else:
            name = _SPLIT_FILES[options.data_format]["train"][0]
            train = os.path.join(options.data_dir, name)
            if not exists(train):
                raise InputError(
                    f"--data_dir {options.data_dir} has no {name} to take the "
                    "labels from: pass --labels"
                )
            documents = tagging.read_data(train, options.data_format, scheme or "bio")
            self.labels = tagging.label_list(documents)
        self.scheme = scheme or detect_scheme(self.labels)
        for label in self.labels:
            try:
                split_tag(label, self.scheme)
            except InputError as error:
                raise InputError(f"--tag_scheme={self.scheme}: {error}") from None
        logging.info("labels (%s): %s", self.scheme, ", ".join(self.labels))

    def read_split(self, split):
        """The documents of a split's file."""
        return tagging.read_data(self.input_file(split), self.options.data_format, self.scheme)

    def dev_metric(self):
        return "f1"

    def split_features(self, split, pad_to, documents=None):
        options = self.options
        path = self.input_file(split)
        if documents is None:
            documents = self.read_split(split)
        return tagging.ensure_tagging_features(
            self.features_dir,
            split,
            path,
            documents,
            self.labels,
            self.text,
            document_context=options.document_context,
            tag_scheme=self.scheme,
            pad_examples_to_multiple_of=pad_to,
        )

    def build_model(self, config):
        options = self.options
        if options.feature_based:
            self.model = BertFeatureTagger(
                config,
                len(self.labels),
                layers=parse_layers(options.layers),
                combine=options.combine,
                lstm_units=options.lstm_units,
                use_crf=options.use_crf,
            )
        else:
            self.model = BertTokenClassifier(config, len(self.labels), use_crf=options.use_crf)
        return self.model

    def objective(self):
        return TaggingObjective(self.model.crf)

    def predict_split(self, trainer, split, batch_size):
        """Tags a split's sentences, batch by batch; returns `(sentences,
        predicted tags, word losses)`: tags one list of strings per sentence,
        losses float64 `[words]` the cross-entropy of each word's gold tag
        (with a CRF, each window's NLL shared equally by its words)."""
        documents = self.read_split(split)
        sentences = tagging.sentences_of(documents)
        feature_file = self.split_features(split, batch_size, documents)
        losses = []
        crf = self.model.crf
        if crf is not None:
            logits = tf.TensorSpec([None, None, len(self.labels)], tf.float32)
            rows = [None, None]
            decode = tf.function(partial(decode_tags, crf), [logits, tf.TensorSpec(rows, tf.bool)])
            nll = tf.function(crf.labelled_nll, [logits, tf.TensorSpec(rows, tf.int32)])

        def batches():
            dataset_fn = self.split_dataset_fn(feature_file.path, batch_size, False)
            for batch in trainer.predict_batches(dataset_fn, self.passthrough, pass_name(split)):
                labelled = (batch["label_ids"] >= 0) & (batch["is_real_example"] == 1)[:, None]
                losses.append(
                    word_losses(
                        batch["logits"], batch["label_ids"], labelled, None if crf is None else nll
                    )
                )
                if crf is None:
                    yield {**batch, "predicted": batch["logits"].argmax(axis=-1)}
                else:
                    yield {
                        **batch,
                        "predicted": decode(batch["logits"], batch["word_ids"] >= 0).numpy(),
                    }

        predicted = tagging.word_predictions(sentences, batches())
        tags = [[self.labels[i] for i in ids] for ids in predicted]
        return sentences, tags, np.concatenate(losses)

    def score(self, predictions):
        sentences, tags, losses = predictions
        return eval_metrics([s.tags for s in sentences], tags, losses, self.scheme)

    def write_predictions(self, predictions):
        sentences, tags, _ = predictions
        if self.options.data_format == "cluener":
            path = os.path.join(self.options.run.output_dir, CLUENER_PREDICTIONS_FILE)
            tagging.write_cluener_predictions(path, sentences, tags, self.scheme)
        else:
            path = os.path.join(self.options.run.output_dir, PREDICTIONS_FILE)
            tagging.write_predictions(path, self.input_file("predict"), sentences, tags)
        self.wrote("predictions", path)

    def export(self, model):
        options = self.options
        return export_tagger(
            model,
            options.export.export_dir,
            options.model.vocab_file,
            options.model.do_lower_case,
            options.model.max_seq_length,
            self.labels,
            overwrite=options.export.overwrite,
            jit_compile=options.runtime.jit_compile,
        )

    # What distillation (`tasks.distillation`) asks of the task.

    def fingerprint_labels(self):
        return list(self.labels)

    def unlabeled_features(self, paths):
        options = self.options
        return tagging.ensure_unlabeled_features(
            self.features_dir,
            paths,
            options.data_format,
            self.text,
            document_context=options.document_context,
        )


def run_ner(options):
    """Trains, evaluates, predicts and exports as `options` (a NerOptions)
    say; returns the eval metrics (empty without do_eval)."""
    return run_task(NerRunner(options))
