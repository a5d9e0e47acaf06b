"""Unlabelled text for distillation: lines of text -> classifier records
whose label says "none" (the teacher labels them during training).

A file holds one example a line: `text_a`, or `text_a<TAB>text_b` for
pairs; blank lines are skipped. The records have the classifier's schema
(`features.classifier_schema`), packed as the train set's, with the label
`UNLABELLED_ID` (classification) or NaN (regression, multi-label), which
`is_labelled` tells apart from a real one.
"""

import dataclasses
import math
import os

import tensorflow as tf

from bert_tf.data import features as feature_files
from bert_tf.data.classification import features as classifier_features
from bert_tf.data.classification.processor import InputExample
from bert_tf.errors import InputError
from bert_tf.files import exists
from bert_tf.text import tokenization

RECORD_FILE = "unlabeled.tf_record"
UNLABELLED_ID = -1
_CACHE_VERSION = 1


def split_paths(value):
    """`--unlabeled_file` "a.txt,b.txt" -> ["a.txt", "b.txt"]."""
    return [path.strip() for path in value.split(",") if path.strip()]


def read_unlabeled(paths):
    """The `InputExample`s of the files, in order (guid `<file>:<line>`)."""
    examples = []
    for path in paths:
        if not exists(path):
            raise InputError(f"--unlabeled_file: no such file {path!r}")
        for number, line in tokenization.iter_utf8_lines(path):
            text_a, _, text_b = line.rstrip("\r\n").partition("\t")
            if text_a.strip():
                examples.append(InputExample(f"{path}:{number}", text_a, text_b or None))
    if not examples:
        raise InputError(f"--unlabeled_file {','.join(paths)}: no text in it")
    return examples


def unlabelled_id(is_regression, num_multi_labels):
    """The label of a record without one."""
    if num_multi_labels:
        return [math.nan] * num_multi_labels
    return math.nan if is_regression else UNLABELLED_ID


def is_labelled(label_ids):
    """float32 `[batch]`: 1 where the batch's `label_ids` (`[batch]` or
    `[batch, labels]`) hold a label, 0 on unlabelled records."""
    if label_ids.dtype.is_floating:
        finite = tf.math.is_finite(label_ids)
        if label_ids.shape.rank > 1:
            finite = tf.reduce_all(finite, axis=list(range(1, label_ids.shape.rank)))
        return tf.cast(finite, tf.float32)
    return tf.cast(label_ids >= 0, tf.float32)


def ensure_unlabeled_features(
    paths,
    output_dir,
    text,
    *,
    is_regression=False,
    num_multi_labels=0,
    long_text_stride=None,
):
    """Writes `output_dir/unlabeled.tf_record` from the files `paths` unless an
    up-to-date one is there, packed with `text` (a `model_text.TextSettings`);
    returns its `FeatureFile`."""
    for path in paths:
        if not exists(path):
            raise InputError(f"--unlabeled_file: no such file {path!r}")
    fingerprint = {
        "version": _CACHE_VERSION,
        "input_files": [feature_files.file_stamp(path) for path in paths],
        **feature_files.text_fingerprint(text),
        "is_regression": bool(is_regression),
        "num_multi_labels": int(num_multi_labels),
        "long_text_stride": long_text_stride,
    }
    label = unlabelled_id(is_regression, num_multi_labels)

    def write_records(writer):
        examples = read_unlabeled(paths)
        num_features = 0
        for index, example in enumerate(examples):
            # Packed as a regression example (no label list to check), then
            # given the label that says none.
            for features in classifier_features.convert_example(
                dataclasses.replace(example, label=0.0),
                None,
                text.max_seq_length,
                text.tokenizer,
                is_regression=True,
                long_text_stride=long_text_stride,
                example_index=index,
            ):
                features = dataclasses.replace(features, label_id=label)
                writer.write(
                    classifier_features.serialize_features(
                        features, is_regression, num_multi_labels
                    )
                )
                num_features += 1
        return len(examples), num_features, num_features

    return feature_files.ensure_feature_file(
        os.path.join(output_dir, RECORD_FILE), fingerprint, write_records
    )
