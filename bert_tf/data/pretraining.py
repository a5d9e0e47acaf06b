"""The tf.data reader of pre-training TFRecords (the original's schema) for the model.

Batches are dicts of `[batch, ...]` tensors with static shapes: int32
`input_word_ids`, `input_mask`, `input_type_ids` [max_seq_length] (the
records' `input_ids`, `input_mask`, `segment_ids`), int32
`masked_lm_positions`, `masked_lm_ids` and float32 `masked_lm_weights`
[max_predictions_per_seq], and int32 `next_sentence_labels` [1].
"""

import tensorflow as tf

from bert_tf.data.pretraining_schema import feature_spec, schema_mismatch
from bert_tf.errors import InputError
from bert_tf.files import expand_input_patterns

# Record feature -> model input name; the others keep their names.
_MODEL_NAMES = {"input_ids": "input_word_ids", "segment_ids": "input_type_ids"}
_MAX_PARALLEL_FILES = 16


def check_record_files(files, max_seq_length, max_predictions_per_seq):
    """Reads the first record of each file now and raises InputError naming the
    file if it is not a TFRecord of the schema at these sizes (empty files pass)."""
    for path in files:
        try:
            first = [r.numpy() for r in tf.data.TFRecordDataset(path).take(1)]
        except tf.errors.OpError as e:
            raise InputError(f"{path}: not a TFRecord file ({type(e).__name__})") from None
        if not first:
            continue
        problem = schema_mismatch(first[0], max_seq_length, max_predictions_per_seq)
        if problem:
            raise InputError(f"{path}: {problem}")


def make_dataset(input_patterns, max_seq_length, max_predictions_per_seq, batch_size,
                 is_training, input_context=None, seed=None, shuffle_buffer_size=10000,
                 check_files=True):
    """A `tf.data.Dataset` of pre-training batches.

    `batch_size` is the global batch size; with a `tf.distribute.InputContext`
    each input pipeline reads its own share of the files (at least one each)
    and yields the per-replica batch size. Training shuffles the files, repeats
    them, reads several at once (interleave) and shuffles records in a buffer of
    `shuffle_buffer_size`; evaluation reads each record once, in a fixed order. Batches
    drop the remainder so every shape is static. `seed` makes training order
    reproducible. `check_files` checks the first record of every file first
    (`check_record_files`).
    """
    files = expand_input_patterns(input_patterns)
    if check_files:
        check_record_files(files, max_seq_length, max_predictions_per_seq)
    if input_context is not None:
        num_pipelines = input_context.num_input_pipelines
        if len(files) < num_pipelines:
            raise InputError(f"{len(files)} input files for {num_pipelines} input pipelines: "
                             "write at least one file per pipeline (--output_file=a,b,...)")
        files = files[input_context.input_pipeline_id::num_pipelines]
        batch_size = input_context.get_per_replica_batch_size(batch_size)

    dataset = tf.data.Dataset.from_tensor_slices(files)
    if is_training:
        dataset = dataset.shuffle(len(files), seed=seed).repeat()
    dataset = dataset.interleave(
        tf.data.TFRecordDataset, cycle_length=min(len(files), _MAX_PARALLEL_FILES),
        num_parallel_calls=tf.data.AUTOTUNE,
        deterministic=not is_training or seed is not None)
    if is_training:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=seed)
    spec = feature_spec(max_seq_length, max_predictions_per_seq)
    dataset = dataset.batch(batch_size, drop_remainder=True)
    dataset = dataset.map(lambda records: _parse_batch(records, spec),
                          num_parallel_calls=tf.data.AUTOTUNE)
    return dataset.prefetch(tf.data.AUTOTUNE)


def _parse_batch(records, spec):
    parsed = tf.io.parse_example(records, spec)
    return {_MODEL_NAMES.get(name, name): tf.cast(value, tf.int32) if value.dtype == tf.int64
            else value for name, value in parsed.items()}
