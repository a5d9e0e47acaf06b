"""Feature files shared by every task: schema, cached atomic writer, tf.data reader.

A task describes its TFRecords with a `FeatureSchema` (names, lengths,
dtypes, the names the model reads them under), converts its examples into
feature dicts, writes them with `ensure_feature_file` (atomically, with a
fingerprint sidecar so unchanged inputs are not converted again) and reads
them with `make_dataset`, which checks the first record of each file against
the schema and names the file and the flag when it does not fit.
"""

import dataclasses
import json
import os
import time

import tensorflow as tf
from absl import logging
from google.protobuf.message import DecodeError

from bert_tf.data.tfrecord import find_damage
from bert_tf.errors import InputError
from bert_tf.files import (
    atomic_output,
    exists,
    is_remote,
    makedirs,
    open_file,
    remove,
    size_and_mtime,
    write_text_atomically,
)

_MAX_PARALLEL_FILES = 16
# Seconds between the lines that say how far writing a feature file has got.
PROGRESS_SECONDS = 10.0
# group_by_length sorts records by length within windows of this many batches.
SORT_WINDOW_BATCHES = 32
_KINDS = {tf.int64: "int64_list", tf.float32: "float_list"}


@dataclasses.dataclass(frozen=True)
class Feature:
    """One fixed-length feature of a record.

    `model_name` is its key in the batches (default: `name`); `length_flag`
    names the flag that sets `length` in error messages; `scalar` features
    (length 1) come as `[batch]` instead of `[batch, 1]`; a feature with a
    `default` may be missing from a record, and with `default_is_position`
    a missing value becomes the record's position in its file. `per_token`
    features hold one value per position of the sequence (its last
    `length` axis): dynamic padding trims them with the inputs.
    """

    name: str
    length: int
    dtype: tf.DType = tf.int64
    model_name: str | None = None
    length_flag: str | None = None
    scalar: bool = False
    default: int | None = None
    default_is_position: bool = False
    per_token: bool = False


def input_features(length, length_flag="max_seq_length"):
    """The three features every task's records start with: int64 `input_ids`,
    `input_mask`, `segment_ids` `[length]`, read by the model as
    `input_word_ids`, `input_mask`, `input_type_ids`."""
    return [
        Feature(
            "input_ids",
            length,
            model_name="input_word_ids",
            length_flag=length_flag,
            per_token=True,
        ),
        Feature("input_mask", length, length_flag=length_flag, per_token=True),
        Feature(
            "segment_ids",
            length,
            model_name="input_type_ids",
            length_flag=length_flag,
            per_token=True,
        ),
    ]


class FeatureSchema:
    """The features of a kind of record (`description` is used in errors)."""

    def __init__(self, features, description):
        self.features = tuple(features)
        self.description = description

    def per_token_names(self):
        """The batch keys of the `per_token` features."""
        return tuple(f.model_name or f.name for f in self.features if f.per_token)

    def spec(self):
        """`{name: tf.io.FixedLenFeature}` for `tf.io.parse_example`."""
        return {
            f.name: tf.io.FixedLenFeature(
                [f.length], f.dtype, default_value=None if f.default is None else [f.default]
            )
            for f in self.features
        }

    def serialize(self, values):
        """`{name: list of numbers}` -> `tf.train.Example` bytes (deterministic:
        the same values always give the same bytes)."""
        feature = {}
        for f in self.features:
            if f.name not in values and f.default is not None:
                continue  # read back as its default
            if f.dtype == tf.float32:
                feature[f.name] = tf.train.Feature(
                    float_list=tf.train.FloatList(value=values[f.name])
                )
            else:
                feature[f.name] = tf.train.Feature(
                    int64_list=tf.train.Int64List(value=values[f.name])
                )
        example = tf.train.Example(features=tf.train.Features(feature=feature))
        return example.SerializeToString(deterministic=True)

    def mismatch(self, serialized):
        """Why a serialized record does not fit the schema (a short phrase
        naming the feature and the flag), or None if it fits."""
        try:
            features = tf.train.Example.FromString(serialized).features.feature
        except DecodeError:
            return "not a tf.train.Example"
        for f in self.features:
            if f.name not in features:
                if f.default is not None:
                    continue
                return f"no feature {f.name}: not {self.description} records"
            kind = features[f.name].WhichOneof("kind")
            if kind != _KINDS[f.dtype]:
                return (
                    f"feature {f.name} holds {kind}, expected {_KINDS[f.dtype]}: "
                    f"not {self.description} records"
                )
            length = len(getattr(features[f.name], kind).value)
            if length != f.length:
                expected = f"--{f.length_flag}={f.length}" if f.length_flag else str(f.length)
                return f"feature {f.name} has {length} values, expected {expected}"
        return None

    def check_file(self, path):
        """Raises InputError naming `path` unless its first record fits the
        schema; returns whether the file holds any record."""
        if not exists(path):
            raise InputError(f"{path} does not exist")
        try:
            first = [r.numpy() for r in tf.data.TFRecordDataset(path).take(1)]
        except tf.errors.OpError as e:
            damage = find_damage(path)
            why = damage.describe() if damage else type(e).__name__
            raise InputError(f"{path}: not a TFRecord file ({why})") from None
        if not first:
            return False
        problem = self.mismatch(first[0])
        if problem:
            raise InputError(f"{path}: {problem}")
        return True

    def parse(self, records, positions=None):
        """Serialized records `[batch]` -> the model's dict of `[batch, length]`
        tensors (int64 features as int32); `positions` int64 `[batch]` fill
        `default_is_position` features."""
        parsed = tf.io.parse_example(records, self.spec())
        batch = {}
        for f in self.features:
            value = parsed[f.name]
            if f.scalar:
                value = value[:, 0]
            if f.default_is_position:
                value = tf.where(value == f.default, positions, value)
            if value.dtype == tf.int64:
                value = tf.cast(value, tf.int32)
            batch[f.model_name or f.name] = value
        return batch


def make_dataset(
    files,
    schema,
    batch_size,
    is_training,
    input_context=None,
    seed=None,
    shuffle_buffer_size=10000,
    shard_by="files",
    check_files=True,
    length_multiple=None,
    group_by_length=False,
    lengths_of=None,
    skip_damaged=False,
):
    """A `tf.data.Dataset` of batches (dicts of tensors, see
    `FeatureSchema.parse`) from TFRecord `files`.

    `batch_size` is global; with a `tf.distribute.InputContext` each input
    pipeline reads its share and yields per-replica batches. Training
    shuffles and repeats; eval/predict read every record once, in order. The
    remainder is dropped so every batch is full (pad eval files to a
    multiple of the batch).

    `shard_by="files"` (many large files, e.g. pre-training): each pipeline
    reads its own files (at least one each), several at once (interleave);
    training shuffles the files, repeats them and shuffles records in a buffer
    of `shuffle_buffer_size`. `shard_by="records"` (one feature file of a
    fine-tuning task): each pipeline reads every n-th record; training
    shuffles each epoch anew, then repeats. Several such files (a distilled
    run's train set and unlabelled text) are each shuffled and repeated on
    their own, and training draws from them in proportion to their sizes.

    Dynamic padding: with `length_multiple=m` the `per_token` features of
    each batch are cut to its longest example rounded up to a multiple of `m`
    (`trim_to_longest`), so the sequence axis varies (at most
    `length / m` shapes); None keeps every shape static (TPUs).
    `group_by_length` (with `shard_by="records"`) sorts the records by length
    within windows of `SORT_WINDOW_BATCHES` batches before batching, so
    batches hold similar lengths; in training the window's batches are then
    shuffled. Eval/predict batches are then no longer in file order: carry
    an example index to restore it. `lengths_of(batch)` gives the lengths
    sorted on (default: `sequence_lengths` of `input_mask`).

    `skip_damaged` (with `shard_by="files"`): a file's records from its first
    damaged one on are skipped instead of stopping the run with a
    `tf.errors.DataLossError` (see `damaged_file_error`).
    """
    files = [files] if isinstance(files, str) else list(files)
    if check_files:
        has_records = [schema.check_file(path) for path in files]
        if is_training and not any(has_records):
            raise InputError(f"{', '.join(files)} holds no records: nothing to train on")
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    if shard_by == "files":
        if group_by_length:
            raise ValueError("group_by_length needs shard_by='records'")
        dataset = _records_by_file(files, is_training, input_context, seed, shuffle_buffer_size)
        if skip_damaged:
            dataset = dataset.ignore_errors()
        dataset = dataset.batch(batch_size, drop_remainder=True)
        dataset = dataset.map(schema.parse, num_parallel_calls=tf.data.AUTOTUNE)
    elif shard_by == "records":
        if skip_damaged:
            raise ValueError("skip_damaged needs shard_by='files'")
        if is_training and len(files) > 1:
            dataset = _mixed_records(files, input_context, seed, shuffle_buffer_size)
        else:
            dataset = _sharded(tf.data.TFRecordDataset(files).enumerate(), input_context)
            if is_training:
                dataset = dataset.shuffle(
                    shuffle_buffer_size, seed=seed, reshuffle_each_iteration=True
                ).repeat()
        chunk = batch_size * SORT_WINDOW_BATCHES if group_by_length else batch_size
        dataset = dataset.batch(chunk, drop_remainder=not group_by_length)
        dataset = dataset.map(
            lambda positions, records: schema.parse(records, positions),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
        if group_by_length:
            lengths_of = lengths_of or (lambda batch: sequence_lengths(batch["input_mask"]))
            dataset = dataset.map(lambda batch: _sort_by_length(batch, lengths_of)).unbatch()
            dataset = dataset.batch(batch_size, drop_remainder=True)
            if is_training:
                dataset = dataset.shuffle(SORT_WINDOW_BATCHES, seed=seed)
    else:
        raise ValueError(f"shard_by must be 'files' or 'records', got {shard_by!r}")
    if length_multiple:
        names = schema.per_token_names()
        dataset = dataset.map(
            lambda batch: trim_to_longest(batch, length_multiple, names),
            num_parallel_calls=tf.data.AUTOTUNE,
            deterministic=True,
        )
    return dataset.prefetch(tf.data.AUTOTUNE)


def damaged_file_error(paths, remedy):
    """An InputError naming the first of the TFRecord files `paths` with a
    damaged record (where and what, see `tfrecord.find_damage`) and `remedy`,
    or None if all of them read back: what a `tf.errors.DataLossError` of
    their reader means."""
    for path in paths:
        damage = find_damage(path)
        if damage:
            return InputError(f"{path}: {damage.describe()}; {remedy}")
    return None


def sequence_lengths(input_mask):
    """Positions up to and including the last non-zero of `input_mask`
    `[..., seq]` -> int32 `[...]`."""
    positions = tf.range(1, tf.shape(input_mask)[-1] + 1, dtype=tf.int32)
    return tf.reduce_max(tf.where(input_mask != 0, positions, 0), axis=-1)


def trim_to_longest(batch, multiple, names):
    """Cuts the last axis of the batch's features `names` to the batch's
    longest `input_mask` rounded up to a multiple of `multiple` (at least
    `multiple`, at most their length). Positions cut are padding, which the
    attention mask makes inert."""
    full = tf.shape(batch["input_mask"])[-1]
    longest = tf.reduce_max(sequence_lengths(batch["input_mask"]))
    length = tf.minimum(tf.maximum((longest + multiple - 1) // multiple * multiple, multiple), full)
    return {name: value[..., :length] if name in names else value for name, value in batch.items()}


def _sort_by_length(batch, lengths_of):
    """The batch's rows ordered by `lengths_of(batch)` (stable)."""
    order = tf.argsort(lengths_of(batch), stable=True)
    return {name: tf.gather(value, order) for name, value in batch.items()}


def _sharded(dataset, input_context):
    if input_context is not None and input_context.num_input_pipelines > 1:
        return dataset.shard(input_context.num_input_pipelines, input_context.input_pipeline_id)
    return dataset


def _mixed_records(files, input_context, seed, shuffle_buffer_size):
    """Training records of several feature files (a distilled run's train
    set and unlabelled text), each file shuffled and repeated on its own and
    drawn in proportion to its size: a small file is spread over the whole
    epoch however large the others are, which one shuffle buffer over the
    files read one after the other does not do."""
    counts = [int(tf.data.TFRecordDataset(path).reduce(0, lambda n, _: n + 1)) for path in files]
    parts, weights = [], []
    for index, (path, count) in enumerate(zip(files, counts)):
        if count:
            part = _sharded(tf.data.TFRecordDataset(path).enumerate(), input_context)
            part_seed = None if seed is None else seed + index
            part = part.shuffle(
                min(shuffle_buffer_size, count), seed=part_seed, reshuffle_each_iteration=True
            )
            parts.append(part.repeat())
            weights.append(count / sum(counts))
    return tf.data.Dataset.sample_from_datasets(parts, weights, seed=seed)


def _records_by_file(files, is_training, input_context, seed, shuffle_buffer_size):
    if input_context is not None:
        num_pipelines = input_context.num_input_pipelines
        if len(files) < num_pipelines:
            raise InputError(
                f"{len(files)} input files for {num_pipelines} input pipelines: "
                "write at least one file per pipeline (--output_file=a,b,...)"
            )
        files = files[input_context.input_pipeline_id :: num_pipelines]
    dataset = tf.data.Dataset.from_tensor_slices(files)
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()
    dataset = dataset.interleave(
        tf.data.TFRecordDataset,
        cycle_length=min(len(files), _MAX_PARALLEL_FILES),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not is_training or seed is not None,
    )
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    return dataset


# -- cached, atomically written feature files --------------------------------------


@dataclasses.dataclass(frozen=True)
class FeatureFile:
    """A feature TFRecord file and its counts: examples, their features
    (windows) and records (features plus padding); `reused` when the cache
    was valid."""

    path: str
    num_examples: int
    num_features: int
    num_records: int
    reused: bool = False


def file_stamp(path):
    """`[absolute path, size, mtime_ns]` of an input file, for fingerprints."""
    if not exists(path):
        raise InputError(f"input file {path} does not exist")
    size, mtime = size_and_mtime(path)
    return [path if is_remote(path) else os.path.abspath(path), size, mtime]


def text_fingerprint(text):
    """The part of a feature file's fingerprint that `text` (a
    `model_text.TextSettings`) decides: its vocab file's stamp, casing and length."""
    return {
        "vocab_file": file_stamp(text.vocab_file),
        "do_lower_case": bool(text.do_lower_case),
        "max_seq_length": int(text.max_seq_length),
    }


def _read_sidecar(path):
    if not exists(path):
        return None
    try:
        with open_file(path) as f:
            return json.load(f)
    except ValueError:  # not JSON: rewritten
        return None


class _ProgressWriter:
    """A record writer that logs how many records it has written to `path`
    about every PROGRESS_SECONDS, so that a long feature file is not a silence."""

    def __init__(self, writer, path):
        self._writer = writer
        self._path = path
        self._start = time.monotonic()
        self._next_line = self._start + PROGRESS_SECONDS
        self.count = 0

    def write(self, record):
        self._writer.write(record)
        self.count += 1
        now = time.monotonic()
        if now >= self._next_line:
            logging.info(
                "writing %s: %d records in %.0f s", self._path, self.count, now - self._start
            )
            self._next_line = now + PROGRESS_SECONDS


def write_record_file(path, write_records):
    """Calls `write_records(writer)` with a record writer on a temporary file
    that replaces `path` when it returns (progress lines while it writes);
    returns its result."""
    with atomic_output(path) as tmp:
        with tf.io.TFRecordWriter(tmp) as writer:
            result = write_records(_ProgressWriter(writer, path))
    return result


def ensure_feature_file(path, fingerprint, write_records):
    """Writes the feature file `path` unless an up-to-date one is there.

    `fingerprint` is a JSON-able description of everything the records are
    made from (e.g. `file_stamp`s of the inputs and vocab, the settings); a
    sidecar `<path>.json` stores it with the file's size and counts, and the
    file is reused when both still match. Otherwise `write_records(writer)`
    writes the records and returns `(num_examples, num_features,
    num_records)`. Returns a `FeatureFile`.
    """
    sidecar = path + ".json"
    # Round-trip through JSON so tuples compare equal to the stored lists.
    fingerprint = json.loads(json.dumps(fingerprint))
    stored = _read_sidecar(sidecar) if exists(path) else None
    if (
        stored
        and stored.get("fingerprint") == fingerprint
        and stored.get("record_file_size") == size_and_mtime(path)[0]
    ):
        logging.info(
            "Reusing %s (%d examples, %d features)",
            path,
            stored["num_examples"],
            stored["num_features"],
        )
        return FeatureFile(
            path, stored["num_examples"], stored["num_features"], stored["num_records"], reused=True
        )
    remove(sidecar)
    makedirs(os.path.dirname(path) or ".")
    logging.info("Writing %s", path)
    start = time.monotonic()
    num_examples, num_features, num_records = write_record_file(path, write_records)
    logging.info(
        "wrote %s: %d features of %d examples in %.1f s",
        path,
        num_features,
        num_examples,
        time.monotonic() - start,
    )
    write_text_atomically(
        sidecar,
        json.dumps(
            {
                "fingerprint": fingerprint,
                "record_file_size": size_and_mtime(path)[0],
                "num_examples": num_examples,
                "num_features": num_features,
                "num_records": num_records,
            },
            indent=1,
        ),
    )
    return FeatureFile(path, num_examples, num_features, num_records)
