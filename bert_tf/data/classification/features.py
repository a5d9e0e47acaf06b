"""Classifier features: examples -> model inputs, their cached TFRecords and reader.

`convert_example` is the original `convert_single_example`: `[CLS] A [SEP]`
or `[CLS] A [SEP] B [SEP]`, the pair truncated by the original
`_truncate_seq_pair`, a single text cut to `max_seq_length - 2`, zero
padding; a text_b that is empty or tokenizes to nothing makes a single-text
example. All of it is `bert_tf.text.packing`, which also describes the windows.

Long texts (`long_text_stride=N`): an example whose A would be truncated
becomes several features ("windows" over A, `packing.pack_windows` with
`window_over=0`), all with the same `example_index`. B is truncated exactly
as in the default mode, the first window is the default mode's feature, and
an example that fits gives exactly one feature. Eval, predict and the export
average the logits of an example's windows (`packing.average_windows`).

TFRecords have the original's schema: int64 `input_ids`, `input_mask`,
`segment_ids` [max_seq_length], `label_ids` [1] (int64, or float for
regression; multi-label: float [num_labels], 1.0 for each of the example's
labels), int64 `is_real_example` [1]; plus int64 `example_index` [1]
(the example's position in the list; -1 on padding records; records of the
original, which lack it, read as their position in the file).
"""

import dataclasses
import functools
import os

import tensorflow as tf
from absl import logging

from bert_tf.data import EXAMPLES_VERBOSITY
from bert_tf.data import features as feature_files
from bert_tf.data.features import Feature, FeatureSchema, file_stamp, input_features
from bert_tf.errors import InputError
from bert_tf.text.packing import pack_windows

# Split -> the original's file names in output_dir.
RECORD_FILES = {
    "train": "train.tf_record",
    "eval": "eval.tf_record",
    "predict": "predict.tf_record",
}
_SPLIT_ALIASES = {"dev": "eval", "test": "predict"}
_PURPOSES = {"train": "train on", "eval": "evaluate", "predict": "predict"}
PADDING_EXAMPLE_INDEX = -1
_MISSING_EXAMPLE_INDEX = -2  # parse default for records without example_index
_CACHE_VERSION = 1
_NUM_LOGGED_EXAMPLES = 5


@dataclasses.dataclass
class InputFeatures:
    """One model input: lists of length max_seq_length, the label id (int, or
    float for regression), whether it is a real example (not padding) and the
    index of the example it comes from (windows share it)."""

    input_ids: list
    input_mask: list
    segment_ids: list
    label_id: object
    is_real_example: bool = True
    example_index: int = 0


def padding_features(max_seq_length, is_regression=False, num_multi_labels=0):
    """An all-zero feature with is_real_example=False and example_index -1, as
    the original's PaddingInputExample: it fills eval/predict batches."""
    zeros = [0] * max_seq_length
    label = [0.0] * num_multi_labels if num_multi_labels else 0.0 if is_regression else 0
    return InputFeatures(
        list(zeros),
        list(zeros),
        list(zeros),
        label,
        is_real_example=False,
        example_index=PADDING_EXAMPLE_INDEX,
    )


def num_padding(count, multiple):
    """How many padding features make `count` a multiple of `multiple`."""
    if multiple is None or multiple <= 1:
        return 0
    return -count % multiple


def _label_id(example, label_map, is_regression, multi_label=False):
    if multi_label:
        hot = [0.0] * len(label_map)
        for label in example.label:
            hot[_label_id(dataclasses.replace(example, label=label), label_map, False)] = 1.0
        return hot
    if is_regression:
        try:
            return float(example.label)
        except (TypeError, ValueError):
            raise InputError(
                f"example {example.guid}: label {example.label!r} is not a number (regression task)"
            ) from None
    if example.label not in label_map:
        raise InputError(
            f"example {example.guid}: unknown label {example.label!r}; "
            f"the labels are {', '.join(map(repr, label_map))}"
        )
    return label_map[example.label]


def _features(packed, label_id, example_index):
    return InputFeatures(
        packed["input_word_ids"],
        packed["input_mask"],
        packed["input_type_ids"],
        label_id,
        True,
        example_index,
    )


def convert_example(
    example,
    label_list,
    max_seq_length,
    tokenizer,
    is_regression=False,
    long_text_stride=None,
    example_index=0,
    multi_label=False,
):
    """An `InputExample` -> list of `InputFeatures` (one, or one per window).

    Args:
      example: a `glue.InputExample`.
      label_list: the labels in output order (ignored for regression).
      max_seq_length: length of every feature.
      tokenizer: a `tokenization.FullTokenizer` (`tokenize`, `convert_tokens_to_ids`).
      is_regression: label_id is float(label).
      long_text_stride: None for the original truncation, or the step between
        windows of a long text_a (see the module docstring).
      example_index: stored in every feature of the example.
      multi_label: `example.label` is a list of labels; label_id their multi-hot vector.
    """
    label_map = {label: i for i, label in enumerate(label_list or ())}
    label_id = _label_id(example, label_map, is_regression, multi_label)
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_a))
    ids_b = None
    if example.text_b:
        ids_b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_b))
    if long_text_stride is not None and (
        not isinstance(long_text_stride, int) or long_text_stride < 1
    ):
        raise InputError(f"long_text_stride={long_text_stride!r} must be a positive integer")
    try:
        windows = pack_windows(
            ids_a, ids_b, max_seq_length, cls_id, sep_id, stride=long_text_stride
        )
    except InputError as e:
        raise InputError(f"example {example.guid}: {e}") from None
    return [_features(packed, label_id, example_index) for packed, _ in windows]


def convert_examples(
    examples, label_list, max_seq_length, tokenizer, is_regression=False, long_text_stride=None
):
    """Yields the `InputFeatures` of all examples in order (example_index = position)."""
    for index, example in enumerate(examples):
        yield from convert_example(
            example,
            label_list,
            max_seq_length,
            tokenizer,
            is_regression,
            long_text_stride,
            example_index=index,
        )


def _label_feature(is_regression, num_multi_labels):
    if num_multi_labels:
        return Feature("label_ids", num_multi_labels, tf.float32)
    return Feature("label_ids", 1, tf.float32 if is_regression else tf.int64, scalar=True)


@functools.cache
def classifier_schema(max_seq_length, is_regression=False, num_multi_labels=0):
    """The `FeatureSchema` of classifier records (example_index optional:
    the original's records lack it); `num_multi_labels`: multi-hot labels."""
    return FeatureSchema(
        [
            *input_features(max_seq_length),
            _label_feature(is_regression, num_multi_labels),
            Feature("is_real_example", 1, scalar=True),
            Feature(
                "example_index",
                1,
                scalar=True,
                default=_MISSING_EXAMPLE_INDEX,
                default_is_position=True,
            ),
        ],
        description="multi-label"
        if num_multi_labels
        else "regression"
        if is_regression
        else "classification",
    )


def serialize_features(features, is_regression=False, num_multi_labels=0):
    """`InputFeatures` -> serialized `tf.train.Example` bytes."""
    if num_multi_labels:
        label = [float(value) for value in features.label_id]
    else:
        label = [float(features.label_id) if is_regression else int(features.label_id)]
    schema = classifier_schema(len(features.input_ids), is_regression, num_multi_labels)
    return schema.serialize(
        {
            "input_ids": features.input_ids,
            "input_mask": features.input_mask,
            "segment_ids": features.segment_ids,
            "label_ids": label,
            "is_real_example": [int(features.is_real_example)],
            "example_index": [int(features.example_index)],
        }
    )


def _log_example(example, features, tokenizer, has_labels):
    tokens = tokenizer.convert_ids_to_tokens(
        [i for i, m in zip(features.input_ids, features.input_mask) if m]
    )
    label = (
        f"{example.label} (id = {features.label_id})"
        if has_labels
        else "none (the file has no labels)"
    )
    logging.vlog(
        EXAMPLES_VERBOSITY,
        "*** Example ***\nguid: %s\ntokens: %s\nexample_index: %d\nlabel: %s",
        example.guid,
        " ".join(tokens),
        features.example_index,
        label,
    )


def _record_writer(
    examples,
    label_list,
    max_seq_length,
    tokenizer,
    is_regression,
    long_text_stride,
    pad_examples_to_multiple_of,
    has_labels=True,
    multi_label=False,
):
    """`write_records(writer)` for `feature_files`: writes the features of
    `examples` and the padding; returns (examples, features, records).
    Without `has_labels` the examples' labels are placeholders (not logged)."""
    num_multi_labels = len(label_list) if multi_label else 0

    def write_records(writer):
        num_examples = num_features = 0
        for index, example in enumerate(examples):
            for features in convert_example(
                example,
                label_list,
                max_seq_length,
                tokenizer,
                is_regression,
                long_text_stride,
                index,
                multi_label,
            ):
                if num_features < _NUM_LOGGED_EXAMPLES and logging.vlog_is_on(EXAMPLES_VERBOSITY):
                    _log_example(example, features, tokenizer, has_labels)
                writer.write(serialize_features(features, is_regression, num_multi_labels))
                num_features += 1
            num_examples += 1
        padding = num_padding(num_features, pad_examples_to_multiple_of)
        record = serialize_features(
            padding_features(max_seq_length, is_regression, num_multi_labels),
            is_regression,
            num_multi_labels,
        )
        for _ in range(padding):
            writer.write(record)
        return num_examples, num_features, num_features + padding

    return write_records


def write_features_tfrecord(
    examples,
    label_list,
    max_seq_length,
    tokenizer,
    output_file,
    is_regression=False,
    long_text_stride=None,
    pad_examples_to_multiple_of=None,
):
    """Writes the features of `examples` to `output_file` (a tmp file renamed at the end).

    `pad_examples_to_multiple_of` (the eval/predict batch size) appends padding records
    (is_real_example=0, example_index=-1) so the record count is a multiple of
    it. Returns the number of records written (features plus padding).
    """
    return feature_files.write_record_file(
        output_file,
        _record_writer(
            examples,
            label_list,
            max_seq_length,
            tokenizer,
            is_regression,
            long_text_stride,
            pad_examples_to_multiple_of,
        ),
    )[2]


def cached_features_file(output_dir, split):
    """`output_dir/{train,eval,predict}.tf_record` ("dev" / "test" name eval / predict)."""
    split = _SPLIT_ALIASES.get(split, split)
    if split not in RECORD_FILES:
        raise InputError(f"unknown features split {split!r}: use train, eval or predict")
    return os.path.join(output_dir, RECORD_FILES[split])


def features_fingerprint(
    input_files,
    text,
    label_list,
    is_regression=False,
    long_text_stride=None,
    pad_examples_to_multiple_of=None,
    extra=None,
):
    """The JSON-able description of what a features file is made from."""
    return {
        "version": _CACHE_VERSION,
        "input_files": [file_stamp(path) for path in input_files],
        **feature_files.text_fingerprint(text),
        "labels": list(label_list or ()),
        "is_regression": bool(is_regression),
        "long_text_stride": long_text_stride,
        "pad_examples_to_multiple_of": pad_examples_to_multiple_of
        if num_padding(1, pad_examples_to_multiple_of)
        else None,
        "extra": extra,
    }


def ensure_features(
    output_dir,
    split,
    examples,
    label_list,
    text,
    *,
    input_files,
    is_regression=False,
    long_text_stride=None,
    pad_examples_to_multiple_of=None,
    extra=None,
    has_labels=True,
    multi_label=False,
):
    """Writes `output_dir/{split}.tf_record` unless an up-to-date one is there.

    A JSON sidecar (`<record file>.json`) stores the fingerprint of the inputs
    (`features_fingerprint`: sizes and modification times of `input_files`
    and of `text`'s vocab file, its casing and length, labels, stride, padding
    and `extra`, e.g. `processor.config()`) and the file's size and counts;
    the records are reused when all match, rebuilt otherwise.

    Args:
      text: a `model_text.TextSettings`: what the examples are tokenized with.
      examples: a list of examples, or a zero-argument callable returning one
        (called only when the file is (re)built).
      split: "train", "eval" / "dev" or "predict" / "test".
      input_files: the files the examples come from (`processor.input_files`);
        none of them holding an example is an InputError naming them.
      has_labels: False when the examples' labels are placeholders (a test
        set without labels): the logged examples then show none.
    Returns:
      a `FeatureFile`.
    """
    path = cached_features_file(output_dir, split)
    fingerprint = features_fingerprint(
        input_files,
        text,
        label_list,
        is_regression,
        long_text_stride,
        pad_examples_to_multiple_of,
        extra,
    )

    def write_records(writer):
        read = examples() if callable(examples) else examples
        if not read:
            # Raised before the record file replaces anything: none is written.
            purpose = _PURPOSES[_SPLIT_ALIASES.get(split, split)]
            raise InputError(f"{', '.join(input_files)}: no examples in it, nothing to {purpose}")
        return _record_writer(
            read,
            label_list,
            text.max_seq_length,
            text.tokenizer,
            is_regression,
            long_text_stride,
            pad_examples_to_multiple_of,
            has_labels,
            multi_label,
        )(writer)

    return feature_files.ensure_feature_file(path, fingerprint, write_records)


def ensure_split_features(
    processor,
    data_dir,
    split,
    output_dir,
    text,
    *,
    long_text_stride=None,
    pad_examples_to_multiple_of=None,
):
    """`ensure_features` for a processor's split ("train", "dev" or "test");
    examples are read only when the cache is stale."""
    data_split = {"eval": "dev", "predict": "test"}.get(split, split)
    reader = {
        "train": processor.get_train_examples,
        "dev": processor.get_dev_examples,
        "test": processor.get_test_examples,
    }.get(data_split)
    if reader is None:
        raise InputError(f"unknown split {split!r}: use train, dev or test")
    return ensure_features(
        output_dir,
        data_split,
        lambda: reader(data_dir),
        processor.get_labels(),
        text,
        input_files=processor.input_files(data_dir, data_split),
        is_regression=processor.is_regression,
        long_text_stride=long_text_stride,
        pad_examples_to_multiple_of=pad_examples_to_multiple_of,
        extra=processor.config(),
        has_labels=data_split != "test" or processor.has_test_labels,
        multi_label=processor.multi_label,
    )


# -- reader ----------------------------------------------------------------------


def check_features_file(input_file, max_seq_length, is_regression=False, num_multi_labels=0):
    """InputError unless `input_file` is a features TFRecord of these sizes and
    label type (checked on its first record). Returns False for an empty file."""
    schema = classifier_schema(max_seq_length, is_regression, num_multi_labels)
    return schema.check_file(input_file)


def make_dataset(
    input_file,
    max_seq_length,
    batch_size,
    is_training,
    is_regression=False,
    input_context=None,
    seed=None,
    shuffle_buffer_size=10000,
    check_file=True,
    length_multiple=None,
    group_by_length=False,
    num_multi_labels=0,
):
    """A `tf.data.Dataset` of classifier batches from one features file
    (`features.make_dataset` sharded by record).

    Batches are dicts of tensors: int32 `input_word_ids`, `input_mask`,
    `input_type_ids` [batch, max_seq_length] (with `length_multiple`: the
    batch's longest example rounded up to a multiple of it), `label_ids`
    [batch] (int32, float32 for regression; float32 [batch, num_multi_labels]
    for multi-label), int32 `is_real_example` and
    `example_index` [batch]. Pad eval/predict files to a multiple of the
    batch size: the remainder is dropped. `group_by_length` reorders the
    records (see `features.make_dataset`): `example_index` restores the order.
    """
    return feature_files.make_dataset(
        input_file,
        classifier_schema(max_seq_length, is_regression, num_multi_labels),
        batch_size,
        is_training,
        input_context=input_context,
        seed=seed,
        shuffle_buffer_size=shuffle_buffer_size,
        shard_by="records",
        check_files=check_file,
        length_multiple=length_multiple,
        group_by_length=group_by_length,
    )
