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
from bert_tf.metrics_ner import SCHEMES, detect_scheme, entity_scores, split_tag
from bert_tf.modeling.tagging import (
    COMBINE_MODES,
    BertFeatureTagger,
    BertTokenClassifier,
    decode_tags,
)
from bert_tf.tasks.common import parse_layers, run_task
from bert_tf.tasks.fine_tuning import FineTuningRunner, pass_name
from bert_tf.training.loop import Objective

PREDICTIONS_FILE = "test_predictions.txt"
CLUENER_PREDICTIONS_FILE = "cluener_predict.json"
_TEXT_FILES = {"train": ("train.txt",), "eval": ("dev.txt", "valid.txt"), "predict": ("test.txt",)}
_SPLIT_FILES = {
    "conll": _TEXT_FILES,
    "chars": _TEXT_FILES,
    "cluener": {"train": ("train.json",), "eval": ("dev.json",), "predict": ("test.json",)},
}


class TaggingObjective(Objective):
    """Token cross-entropy over the labelled positions (label id >= 0),
    normalised by the number of labelled tokens in the global batch. With
    `crf` (a `LinearChainCrf`), its NLL of each row's labelled positions
    instead, summed and normalised alike (the NLL per labelled word)."""

    def __init__(self, crf=None):
        self.crf = crf

    def totals(self, features):
        return {"labelled_tokens": tf.reduce_sum(tf.cast(features["label_ids"] >= 0, tf.int32))}

    def loss(self, outputs, features, totals):
        labels = features["label_ids"]
        if self.crf is not None:
            errors = self.crf.labelled_nll(outputs, labels)
            return {"loss": tf.reduce_sum(errors) / tf.maximum(totals["labelled_tokens"], 1.0)}
        errors = tf.nn.sparse_softmax_cross_entropy_with_logits(
            tf.maximum(labels, 0), tf.cast(outputs, tf.float32)
        )
        errors = tf.where(labels >= 0, errors, 0.0)
        return {"loss": tf.reduce_sum(errors) / tf.maximum(totals["labelled_tokens"], 1.0)}


def _log_softmax(logits):
    """float64 log-probabilities over the last axis."""
    logits = logits.astype(np.float64)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def eval_metrics(gold_tags, predicted_tags, losses, scheme="bio"):
    """eval_results.txt: conlleval's entity scores (fractions; chunks in
    `scheme`), per type `precision_<T>` / `recall_<T>` / `f1_<T>`, and
    `eval_loss` = `loss` (mean of `losses`, the cross-entropy of each word)."""
    overall, by_type = entity_scores(gold_tags, predicted_tags, scheme)
    metrics = {
        "precision": overall.precision,
        "recall": overall.recall,
        "f1": overall.f1,
        "eval_loss": float(np.mean(losses)),
        "loss": float(np.mean(losses)),
    }
    for name, scores in by_type.items():
        metrics.update(
            {
                f"precision_{name}": scores.precision,
                f"recall_{name}": scores.recall,
                f"f1_{name}": scores.f1,
            }
        )
    return metrics


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

    def split_features(self, split, pad_to, documents=None):
        options = self.options
        path = self.input_file(split)
        if documents is None:
            documents = self.read_split(split)
        return tagging.ensure_tagging_features(
            options.run.output_dir,
            split,
            path,
            documents,
            self.labels,
            self.tokenizer,
            vocab_file=options.model.vocab_file,
            do_lower_case=options.model.do_lower_case,
            max_seq_length=options.model.max_seq_length,
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
                if crf is None:
                    log_probs = _log_softmax(batch["logits"])
                    gold = np.take_along_axis(
                        log_probs, np.maximum(batch["label_ids"], 0)[..., None], axis=-1
                    )[..., 0]
                    losses.append(-gold[labelled])
                    yield {**batch, "predicted": batch["logits"].argmax(axis=-1)}
                    continue
                counts = labelled.sum(axis=1)
                errors = nll(batch["logits"], np.where(labelled, batch["label_ids"], -1)).numpy()
                losses.append(np.repeat(errors.astype(np.float64) / np.maximum(counts, 1), counts))
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


def run_ner(options):
    """Trains, evaluates, predicts and exports as `options` (a NerOptions)
    say; returns the eval metrics (empty without do_eval)."""
    return run_task(NerRunner(options))
