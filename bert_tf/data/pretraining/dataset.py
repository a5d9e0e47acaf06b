"""The tf.data reader of pre-training TFRecords (the original's schema) for the model.

Batches are dicts of `[batch, ...]` tensors with static shapes: int32
`input_word_ids`, `input_mask`, `input_type_ids` [max_seq_length] (the
records' `input_ids`, `input_mask`, `segment_ids`), int32
`masked_lm_positions`, `masked_lm_ids` and float32 `masked_lm_weights`
[max_predictions_per_seq], and int32 `next_sentence_labels` [1].
"""

import tensorflow as tf

from bert_tf.data import features
from bert_tf.data.pretraining.schema import pretraining_schema
from bert_tf.errors import InputError
from bert_tf.files import expand_input_patterns

# Records of each file whose token ids are compared with the model's vocab.
_RECORDS_CHECKED = 100


def check_record_files(files, max_seq_length, max_predictions_per_seq, vocab_size=None):
    """Reads the first record of each file now and raises InputError naming the
    file if it is not a TFRecord of the schema at these sizes (empty files
    pass), or, with `vocab_size`, if a token id of its first records is past
    it: records made with another (larger) vocab than the model's, whose
    lookups would fail mid-run on CPU and read zeros on GPU."""
    schema = pretraining_schema(max_seq_length, max_predictions_per_seq)
    for path in files:
        schema.check_file(path)
        if vocab_size is not None:
            _check_token_ids(path, vocab_size)


def _check_token_ids(path, vocab_size):
    largest = 0
    try:
        for record in tf.data.TFRecordDataset(path).take(_RECORDS_CHECKED):
            features = tf.train.Example.FromString(record.numpy()).features.feature
            for name in ("input_ids", "masked_lm_ids"):
                largest = max(largest, max(features[name].int64_list.value, default=0))
    except tf.errors.DataLossError:
        pass  # a damaged record: named by the reader (--skip_corrupt_records)
    if largest >= vocab_size:
        raise InputError(
            f"{path}: token id {largest} is past the model's vocab_size {vocab_size}: the "
            "records were made with another vocab.txt than the model's (make them with "
            "create_pretraining_data.py --vocab_file=<the model's>)"
        )


def make_dataset(
    input_patterns,
    max_seq_length,
    max_predictions_per_seq,
    batch_size,
    is_training,
    input_context=None,
    seed=None,
    shuffle_buffer_size=10000,
    check_files=True,
    skip_damaged=False,
):
    """A `tf.data.Dataset` of pre-training batches from comma-separated globs
    (or a list of them): `features.make_dataset` sharded by file. `seed`
    makes the training order reproducible; `check_files` checks the first
    record of every file first; `skip_damaged` reads each file up to its
    first damaged record."""
    return features.make_dataset(
        expand_input_patterns(input_patterns),
        pretraining_schema(max_seq_length, max_predictions_per_seq),
        batch_size,
        is_training,
        input_context=input_context,
        seed=seed,
        shuffle_buffer_size=shuffle_buffer_size,
        shard_by="files",
        check_files=check_files,
        skip_damaged=skip_damaged,
    )
