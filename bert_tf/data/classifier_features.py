"""Classifier features: examples -> model inputs, their TFRecords, cache and tf.data reader.

`convert_example` is the original `convert_single_example`: `[CLS] A [SEP]`
or `[CLS] A [SEP] B [SEP]`, the pair truncated by `truncate_seq_pair` to
`max_seq_length - 3` (one token at a time from the end of the longer side,
from B on a tie), a single text cut to `max_seq_length - 2`, zero padding.
As in the original, a text_b that is empty or tokenizes to nothing makes a
single-text example (no second `[SEP]`).

Long texts (`long_text_stride=N`): an example whose A would be truncated
becomes several features ("windows"), all with the same `example_index`:

* B is truncated exactly as in the default mode (the original rule with A
  taken at full length), so it keeps `min(len(B), max(budget - len(A),
  budget // 2))` tokens, where budget = max_seq_length - 3 (- 2 without B);
* A is cut into windows of W = budget - len(B) tokens starting at 0, S, 2S,
  ... with S = min(N, W); the last window is the first that reaches the end
  of A (it may be shorter than W), so consecutive windows overlap by W - S
  tokens and every token of A is in a window (the original run_squad.py's
  doc_stride scheme);
* each window is packed as `[CLS] window [SEP] B [SEP]`. The first window is
  the default mode's feature, and an example that fits gives exactly one
  feature, identical to the default mode.

The model-side code combines the windows of an example (e.g. averages their
probabilities) by `example_index`.

TFRecords have the original's schema: int64 `input_ids`, `input_mask`,
`segment_ids` [max_seq_length], `label_ids` [1] (int64, or float for
regression), int64 `is_real_example` [1]; plus int64 `example_index` [1]
(the example's position in the list; -1 on padding records).
"""

import dataclasses
import json
import os

from absl import logging
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.preprocessing import pack_inputs, truncate_seq_pair

# Split -> the original's file names in output_dir.
RECORD_FILES = {"train": "train.tf_record", "eval": "eval.tf_record",
                "predict": "predict.tf_record"}
_SPLIT_ALIASES = {"dev": "eval", "test": "predict"}
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


def padding_features(max_seq_length, is_regression=False):
    """An all-zero feature with is_real_example=False and example_index -1, as
    the original's PaddingInputExample: it fills eval/predict batches."""
    zeros = [0] * max_seq_length
    return InputFeatures(list(zeros), list(zeros), list(zeros), 0.0 if is_regression else 0,
                         is_real_example=False, example_index=PADDING_EXAMPLE_INDEX)


def num_padding(count, multiple):
    """How many padding features make `count` a multiple of `multiple`."""
    if multiple is None or multiple <= 1:
        return 0
    return -count % multiple


def _label_id(example, label_map, is_regression):
    if is_regression:
        try:
            return float(example.label)
        except (TypeError, ValueError):
            raise InputError(f"example {example.guid}: label {example.label!r} is not a "
                             "number (regression task)") from None
    if example.label not in label_map:
        raise InputError(f"example {example.guid}: unknown label {example.label!r}; "
                         f"the labels are {', '.join(map(repr, label_map))}")
    return label_map[example.label]


def _features(packed, label_id, example_index):
    return InputFeatures(packed["input_word_ids"], packed["input_mask"],
                         packed["input_type_ids"], label_id, True, example_index)


def convert_example(example, label_list, max_seq_length, tokenizer, is_regression=False,
                    long_text_stride=None, example_index=0):
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
    """
    label_map = {label: i for i, label in enumerate(label_list or ())}
    label_id = _label_id(example, label_map, is_regression)
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_a))
    ids_b = None
    if example.text_b:
        ids_b = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.text_b)) or None
    if long_text_stride is None:
        packed = pack_inputs(ids_a, ids_b, max_seq_length, cls_id, sep_id)
        return [_features(packed, label_id, example_index)]

    if not isinstance(long_text_stride, int) or long_text_stride < 1:
        raise InputError(f"long_text_stride={long_text_stride!r} must be a positive integer")
    # The default mode's truncation, which decides how much of B is kept.
    kept_a, kept_b = list(ids_a), None if ids_b is None else list(ids_b)
    if ids_b is None:
        budget = max_seq_length - 2
        kept_a = kept_a[:max(budget, 0)]
    else:
        budget = max_seq_length - 3
        truncate_seq_pair(kept_a, kept_b, max(budget, 0))
    if len(kept_a) == len(ids_a):
        packed = pack_inputs(ids_a, ids_b, max_seq_length, cls_id, sep_id)
        return [_features(packed, label_id, example_index)]
    window = len(kept_a)
    if window < 1:
        raise InputError(f"max_seq_length={max_seq_length} leaves no room for windows "
                         f"of text_a (example {example.guid})")
    step = min(long_text_stride, window)
    features = []
    start = 0
    while True:
        packed = pack_inputs(ids_a[start:start + window], kept_b, max_seq_length,
                             cls_id, sep_id)
        features.append(_features(packed, label_id, example_index))
        if start + window >= len(ids_a):
            return features
        start += step


def convert_examples(examples, label_list, max_seq_length, tokenizer, is_regression=False,
                     long_text_stride=None):
    """Yields the `InputFeatures` of all examples in order (example_index = position)."""
    for index, example in enumerate(examples):
        yield from convert_example(example, label_list, max_seq_length, tokenizer,
                                   is_regression, long_text_stride, example_index=index)


def serialize_features(features, is_regression=False):
    """`InputFeatures` -> serialized `tf.train.Example` bytes."""

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    label = (tf.train.Feature(float_list=tf.train.FloatList(value=[float(features.label_id)]))
             if is_regression else ints([int(features.label_id)]))
    example = tf.train.Example(features=tf.train.Features(feature={
        "input_ids": ints(features.input_ids),
        "input_mask": ints(features.input_mask),
        "segment_ids": ints(features.segment_ids),
        "label_ids": label,
        "is_real_example": ints([int(features.is_real_example)]),
        "example_index": ints([int(features.example_index)]),
    }))
    return example.SerializeToString()


def _log_example(example, features, tokenizer):
    tokens = tokenizer.convert_ids_to_tokens(
        [i for i, m in zip(features.input_ids, features.input_mask) if m])
    logging.info("*** Example ***\nguid: %s\ntokens: %s\nexample_index: %d\nlabel: %s (id = %s)",
                 example.guid, " ".join(tokens), features.example_index, example.label,
                 features.label_id)


@dataclasses.dataclass(frozen=True)
class FeatureCounts:
    """What a features file holds: examples, their (real) features and records
    (features plus padding)."""

    num_examples: int
    num_features: int
    num_records: int


def _write_records(examples, label_list, max_seq_length, tokenizer, output_file,
                   is_regression, long_text_stride, pad_to_multiple_of):
    tmp = f"{output_file}.tmp-{os.getpid()}"
    num_examples = num_features = 0
    try:
        with tf.io.TFRecordWriter(tmp) as writer:
            for index, example in enumerate(examples):
                for features in convert_example(example, label_list, max_seq_length, tokenizer,
                                                 is_regression, long_text_stride, index):
                    if num_features < _NUM_LOGGED_EXAMPLES:
                        _log_example(example, features, tokenizer)
                    writer.write(serialize_features(features, is_regression))
                    num_features += 1
                num_examples += 1
            padding = num_padding(num_features, pad_to_multiple_of)
            record = serialize_features(padding_features(max_seq_length, is_regression),
                                        is_regression)
            for _ in range(padding):
                writer.write(record)
        tf.io.gfile.rename(tmp, output_file, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)
    return FeatureCounts(num_examples, num_features, num_features + padding)


def write_features_tfrecord(examples, label_list, max_seq_length, tokenizer, output_file,
                            is_regression=False, long_text_stride=None, pad_to_multiple_of=None):
    """Writes the features of `examples` to `output_file` (a tmp file renamed at the end).

    `pad_to_multiple_of` (the eval/predict batch size) appends padding records
    (is_real_example=0, example_index=-1) so the record count is a multiple of
    it. Returns the number of records written (features plus padding).
    """
    return _write_records(examples, label_list, max_seq_length, tokenizer, output_file,
                          is_regression, long_text_stride, pad_to_multiple_of).num_records


def cached_features_file(output_dir, split):
    """`output_dir/{train,eval,predict}.tf_record` ("dev" / "test" name eval / predict)."""
    split = _SPLIT_ALIASES.get(split, split)
    if split not in RECORD_FILES:
        raise InputError(f"unknown features split {split!r}: use train, eval or predict")
    return os.path.join(output_dir, RECORD_FILES[split])


def _file_stamp(path):
    try:
        stat = tf.io.gfile.stat(path)
    except tf.errors.NotFoundError:
        raise InputError(f"input file {path} does not exist") from None
    return [os.path.abspath(path) if "://" not in path else path, stat.length, stat.mtime_nsec]


def features_fingerprint(input_files, vocab_file, do_lower_case, max_seq_length, label_list,
                         is_regression=False, long_text_stride=None, pad_to_multiple_of=None,
                         extra=None):
    """The JSON-able description of what a features file is made from."""
    return {
        "version": _CACHE_VERSION,
        "input_files": [_file_stamp(path) for path in input_files],
        "vocab_file": _file_stamp(vocab_file),
        "do_lower_case": bool(do_lower_case),
        "max_seq_length": int(max_seq_length),
        "labels": list(label_list or ()),
        "is_regression": bool(is_regression),
        "long_text_stride": long_text_stride,
        "pad_to_multiple_of": pad_to_multiple_of if num_padding(1, pad_to_multiple_of) else None,
        "extra": extra,
    }


@dataclasses.dataclass(frozen=True)
class FeatureFile:
    """A features TFRecord file and its counts; `reused` when the cache was valid."""

    path: str
    num_examples: int
    num_features: int
    num_records: int
    reused: bool


def _read_sidecar(path):
    try:
        with tf.io.gfile.GFile(path, "r") as f:
            return json.load(f)
    except (tf.errors.OpError, ValueError):
        return None


def ensure_features(output_dir, split, examples, label_list, max_seq_length, tokenizer, *,
                    input_files, vocab_file, do_lower_case, is_regression=False,
                    long_text_stride=None, pad_to_multiple_of=None, extra=None):
    """Writes `output_dir/{split}.tf_record` unless an up-to-date one is there.

    A JSON sidecar (`<record file>.json`) stores the fingerprint of the inputs
    (`features_fingerprint`: sizes and modification times of `input_files`
    and `vocab_file`, do_lower_case, max_seq_length, labels, stride, padding
    and `extra`, e.g. `processor.config()`) and the file's size and counts;
    the records are reused when all match, rebuilt otherwise.

    Args:
      examples: a list of examples, or a zero-argument callable returning one
        (called only when the file is (re)built).
      split: "train", "eval" / "dev" or "predict" / "test".
      input_files: the files the examples come from (`processor.input_files`).
    Returns:
      a `FeatureFile`.
    """
    path = cached_features_file(output_dir, split)
    sidecar = path + ".json"
    fingerprint = features_fingerprint(input_files, vocab_file, do_lower_case, max_seq_length,
                                       label_list, is_regression, long_text_stride,
                                       pad_to_multiple_of, extra)
    # Round-trip through JSON so tuples compare equal to the stored lists.
    fingerprint = json.loads(json.dumps(fingerprint))
    stored = _read_sidecar(sidecar) if tf.io.gfile.exists(path) else None
    if (stored and stored.get("fingerprint") == fingerprint
            and stored.get("record_file_size") == tf.io.gfile.stat(path).length):
        logging.info("Reusing %s (%d examples, %d features)", path, stored["num_examples"],
                     stored["num_features"])
        return FeatureFile(path, stored["num_examples"], stored["num_features"],
                           stored["num_records"], reused=True)
    if tf.io.gfile.exists(sidecar):
        tf.io.gfile.remove(sidecar)
    tf.io.gfile.makedirs(output_dir)
    if callable(examples):
        examples = examples()
    logging.info("Writing %s", path)
    counts = _write_records(examples, label_list, max_seq_length, tokenizer, path,
                            is_regression, long_text_stride, pad_to_multiple_of)
    tmp = f"{sidecar}.tmp-{os.getpid()}"
    with tf.io.gfile.GFile(tmp, "w") as f:
        json.dump({"fingerprint": fingerprint, "record_file_size": tf.io.gfile.stat(path).length,
                   **dataclasses.asdict(counts)}, f, indent=1)
    tf.io.gfile.rename(tmp, sidecar, overwrite=True)
    return FeatureFile(path, counts.num_examples, counts.num_features, counts.num_records,
                       reused=False)


def ensure_split_features(processor, data_dir, split, output_dir, max_seq_length, tokenizer, *,
                          vocab_file, do_lower_case, long_text_stride=None,
                          pad_to_multiple_of=None):
    """`ensure_features` for a processor's split ("train", "dev" or "test");
    examples are read only when the cache is stale."""
    data_split = {"eval": "dev", "predict": "test"}.get(split, split)
    reader = {"train": processor.get_train_examples, "dev": processor.get_dev_examples,
              "test": processor.get_test_examples}.get(data_split)
    if reader is None:
        raise InputError(f"unknown split {split!r}: use train, dev or test")
    return ensure_features(
        output_dir, data_split, lambda: reader(data_dir), processor.get_labels(),
        max_seq_length, tokenizer, input_files=processor.input_files(data_dir, data_split),
        vocab_file=vocab_file, do_lower_case=do_lower_case,
        is_regression=processor.is_regression, long_text_stride=long_text_stride,
        pad_to_multiple_of=pad_to_multiple_of, extra=processor.config())


# -- reader ----------------------------------------------------------------------


def feature_spec(max_seq_length, is_regression=False):
    """`tf.io.FixedLenFeature`s of the records (example_index is optional:
    the original's records lack it)."""
    return {
        "input_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "input_mask": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([max_seq_length], tf.int64),
        "label_ids": tf.io.FixedLenFeature([1], tf.float32 if is_regression else tf.int64),
        "is_real_example": tf.io.FixedLenFeature([1], tf.int64),
        "example_index": tf.io.FixedLenFeature([1], tf.int64,
                                               default_value=[_MISSING_EXAMPLE_INDEX]),
    }


def check_features_file(input_file, max_seq_length, is_regression=False):
    """InputError unless `input_file` is a features TFRecord of these sizes and
    label type (checked on its first record). Returns False for an empty file."""
    if not tf.io.gfile.exists(input_file):
        raise InputError(f"features file {input_file} does not exist")
    try:
        first = [r.numpy() for r in tf.data.TFRecordDataset(input_file).take(1)]
    except tf.errors.OpError as e:
        raise InputError(f"{input_file}: not a TFRecord file ({type(e).__name__})") from None
    if not first:
        return False
    try:
        feature = tf.train.Example.FromString(first[0]).features.feature
    except Exception:  # noqa: BLE001  (protobuf DecodeError)
        raise InputError(f"{input_file}: not a file of tf.train.Example records") from None
    for name in ("input_ids", "input_mask", "segment_ids", "label_ids", "is_real_example"):
        if name not in feature:
            raise InputError(f"{input_file}: records have no {name!r}: not classifier features")
    length = len(feature["input_ids"].int64_list.value)
    if length != max_seq_length:
        raise InputError(f"{input_file} was written with max_seq_length={length}, "
                         f"not {max_seq_length}: delete it to rebuild it")
    kind = feature["label_ids"].WhichOneof("kind")
    if kind != ("float_list" if is_regression else "int64_list"):
        written = "regression (float)" if kind == "float_list" else "classification (int)"
        raise InputError(f"{input_file} holds {written} labels, which does not match the task")
    return True


def _parse_batch(positions, records, spec, is_regression):
    parsed = tf.io.parse_example(records, spec)
    index = parsed["example_index"][:, 0]
    # Records written without example_index: their position in the file.
    index = tf.where(index == _MISSING_EXAMPLE_INDEX, positions, index)
    label = parsed["label_ids"][:, 0]
    return {
        "input_word_ids": tf.cast(parsed["input_ids"], tf.int32),
        "input_mask": tf.cast(parsed["input_mask"], tf.int32),
        "input_type_ids": tf.cast(parsed["segment_ids"], tf.int32),
        "label_ids": label if is_regression else tf.cast(label, tf.int32),
        "is_real_example": tf.cast(parsed["is_real_example"][:, 0], tf.int32),
        "example_index": tf.cast(index, tf.int32),
    }


def make_dataset(input_file, max_seq_length, batch_size, is_training, is_regression=False,
                 input_context=None, seed=None, shuffle_buffer_size=10000, check_file=True):
    """A `tf.data.Dataset` of classifier batches from one features file.

    Batches are dicts of static-shape tensors: int32 `input_word_ids`,
    `input_mask`, `input_type_ids` [batch, max_seq_length], `label_ids`
    [batch] (int32, float32 for regression), int32 `is_real_example` and
    `example_index` [batch]. `batch_size` is global; with a
    `tf.distribute.InputContext` each input pipeline reads every
    num_input_pipelines-th record and yields per-replica batches. Training
    shuffles (buffer `shuffle_buffer_size`, reshuffled each epoch) and
    repeats; eval/predict read the file once in order. The remainder is always
    dropped, so pad eval/predict files to a multiple of the batch size.
    """
    has_records = (check_features_file(input_file, max_seq_length, is_regression)
                   if check_file else True)
    if is_training and not has_records:
        raise InputError(f"{input_file} holds no records: nothing to train on")
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    dataset = tf.data.TFRecordDataset(input_file).enumerate()
    if input_context is not None and input_context.num_input_pipelines > 1:
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed,
                                  reshuffle_each_iteration=True).repeat()
    spec = feature_spec(max_seq_length, is_regression)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda positions, records: _parse_batch(positions, records, spec,
                                                                  is_regression),
                          num_parallel_calls=tf.data.AUTOTUNE,
                          deterministic=True)
    return dataset.prefetch(tf.data.AUTOTUNE)
