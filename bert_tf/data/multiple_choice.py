"""SWAG-style multiple choice: CSV reader, features, their cached TFRecords and reader.

Input: the SWAG CSV files (header `video-id,fold-ind,startphrase,sent1,
sent2,gold-source,ending0,ending1,ending2,ending3,label`; the test file has
no `label` column). An example's context is `sent1`; choice i is
`sent2 + " " + ending_i` (as the BERT paper and Hugging Face's run_swag).

Features: each choice is packed as a sentence pair `[CLS] context [SEP]
choice [SEP]` by `packing.pack_inputs` (the original truncation). Records
hold int64 `input_ids`, `input_mask`, `segment_ids` of
`num_choices * max_seq_length` values (the choices one after the other),
`label_ids` [1] and `is_real_example` [1] (0 on the padding records that
fill the last eval / predict batch). `make_dataset` gives them back as
`[batch, num_choices, max_seq_length]`.
"""

import csv
import dataclasses
import functools
import os

import tensorflow as tf

from bert_tf import files
from bert_tf.data import features as feature_files
from bert_tf.data.features import Feature, FeatureSchema, file_stamp, input_features
from bert_tf.errors import InputError
from bert_tf.text.packing import pack_inputs

NUM_CHOICES = 4
COLUMNS = (
    "video-id",
    "fold-ind",
    "startphrase",
    "sent1",
    "sent2",
    "gold-source",
    *(f"ending{i}" for i in range(NUM_CHOICES)),
)
LABEL_COLUMN = "label"
# Split -> SWAG's file name in --data_dir and the feature file in --output_dir.
DATA_FILES = {"train": "train.csv", "eval": "val.csv", "predict": "test.csv"}
RECORD_FILES = {
    "train": "train.tf_record",
    "eval": "eval.tf_record",
    "predict": "predict.tf_record",
}
_CACHE_VERSION = 1


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
    """One question: `context` (sent1), the `choices` (sent2 + " " + ending_i)
    and the index of the right one (0 for unlabelled test rows)."""

    guid: str
    context: str
    choices: tuple
    label: int = 0


def _check_header(path, header):
    """`(has_label, has_index)`: whether the file has the label column, and
    the unnamed row-index column first (swagaf's files as released, written
    by pandas); InputError unless `header` is SWAG's."""
    if header is None:
        raise InputError(f"{path}: empty file, expected a SWAG CSV header")
    names = tuple(name.strip() for name in header)
    has_index = len(names) > 1 and names[0] == ""
    columns = names[has_index:]
    if columns == COLUMNS + (LABEL_COLUMN,):
        return True, has_index
    if columns == COLUMNS:
        return False, has_index
    raise InputError(
        f"{path}: header {','.join(names)!r} is not SWAG's "
        f"{','.join(COLUMNS + (LABEL_COLUMN,))!r} (test files omit label; a first "
        "unnamed index column, as released, is allowed)"
    )


def _label(path, line, value):
    if value.strip() not in {str(i) for i in range(NUM_CHOICES)}:
        raise InputError(f"{path}:{line}: label {value!r} is not one of 0..{NUM_CHOICES - 1}")
    return int(value)


def read_swag_examples(path):
    """Reads a SWAG CSV file (with or without the label column) into a list
    of `MultipleChoiceExample`; a row with the wrong number of columns or a
    bad label raises InputError naming the file and line."""
    if not files.exists(path):
        raise InputError(f"input file {path} does not exist")
    with files.open_file(path) as f:
        rows = csv.reader(f)
        has_label, has_index = _check_header(path, next(rows, None))
        width = has_index + len(COLUMNS) + has_label
        examples = []
        for row in rows:
            if not row:
                continue
            if len(row) != width:
                raise InputError(f"{path}:{rows.line_num}: {len(row)} columns, expected {width}")
            values = dict(zip(COLUMNS, row[has_index:]))
            label = _label(path, rows.line_num, row[-1]) if has_label else 0
            choices = tuple(f"{values['sent2']} {values[f'ending{i}']}" for i in range(NUM_CHOICES))
            examples.append(
                MultipleChoiceExample(
                    f"{os.path.basename(path)}-{len(examples)}", values["sent1"], choices, label
                )
            )
    return examples


def convert_example(example, max_seq_length, tokenizer):
    """A `MultipleChoiceExample` -> `{record feature: list}`: `input_ids`,
    `input_mask`, `segment_ids` of `num_choices * max_seq_length` ints (the
    packed choices one after the other), `label_ids` and `is_real_example` [1].

    `tokenizer`: a `tokenization.FullTokenizer`.
    """
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    context = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(example.context))
    values = {"input_ids": [], "input_mask": [], "segment_ids": []}
    for choice in example.choices:
        ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(choice))
        packed = pack_inputs(context, ids, max_seq_length, cls_id, sep_id)
        values["input_ids"] += packed["input_word_ids"]
        values["input_mask"] += packed["input_mask"]
        values["segment_ids"] += packed["input_type_ids"]
    return {**values, "label_ids": [example.label], "is_real_example": [1]}


def padding_record(max_seq_length, num_choices=NUM_CHOICES):
    """The all-zero record with is_real_example 0 that fills the last batch."""
    zeros = [0] * (num_choices * max_seq_length)
    return {
        "input_ids": zeros,
        "input_mask": zeros,
        "segment_ids": zeros,
        "label_ids": [0],
        "is_real_example": [0],
    }


@functools.cache
def multiple_choice_schema(max_seq_length, num_choices=NUM_CHOICES):
    """The `FeatureSchema` of multiple-choice records (sequences flattened to
    `num_choices * max_seq_length`)."""
    return FeatureSchema(
        [
            *input_features(num_choices * max_seq_length, length_flag=None),
            Feature("label_ids", 1, scalar=True),
            Feature("is_real_example", 1, scalar=True),
            # Not written: each record's position, which puts grouped batches back in order.
            Feature("example_index", 1, scalar=True, default=-1, default_is_position=True),
        ],
        description=f"multiple-choice ({num_choices} x {max_seq_length} tokens)",
    )


def ensure_swag_features(
    data_dir,
    output_dir,
    split,
    text,
    *,
    pad_examples_to_multiple_of=None,
):
    """Writes `output_dir/{split}.tf_record` from SWAG's file of `split`
    ("train", "eval" or "predict") unless an up-to-date one is there, packed
    with `text` (a `model_text.TextSettings`; fingerprint: the CSV and vocab
    stamps and the settings); padding records
    make the record count a multiple of `pad_examples_to_multiple_of`. Returns a
    `FeatureFile`."""
    input_file = os.path.join(data_dir, DATA_FILES[split])
    max_seq_length = text.max_seq_length
    schema = multiple_choice_schema(max_seq_length)
    fingerprint = {
        "version": _CACHE_VERSION,
        "input_file": file_stamp(input_file),
        **feature_files.text_fingerprint(text),
        "num_choices": NUM_CHOICES,
        "pad_examples_to_multiple_of": pad_examples_to_multiple_of,
    }

    def write_records(writer):
        examples = read_swag_examples(input_file)
        for example in examples:
            writer.write(schema.serialize(convert_example(example, max_seq_length, text.tokenizer)))
        padding = -len(examples) % pad_examples_to_multiple_of if pad_examples_to_multiple_of else 0
        record = schema.serialize(padding_record(max_seq_length))
        for _ in range(padding):
            writer.write(record)
        return len(examples), len(examples), len(examples) + padding

    return feature_files.ensure_feature_file(
        os.path.join(output_dir, RECORD_FILES[split]), fingerprint, write_records
    )


def make_dataset(
    path,
    max_seq_length,
    batch_size,
    is_training,
    input_context=None,
    seed=None,
    length_multiple=None,
    group_by_length=False,
):
    """Batches of the records at `path` (`features.make_dataset` sharded by
    record): int32 `input_word_ids`, `input_mask`, `input_type_ids`
    `[batch, num_choices, max_seq_length]` (with `length_multiple`: the
    batch's longest pair rounded up to a multiple of it), `label_ids`,
    `is_real_example` and `example_index` (the record's position) `[batch]`.
    Pad eval / predict files to a multiple of the batch size.
    `group_by_length`: batches of examples whose longest pairs are alike
    (`features.make_dataset`); `example_index` restores the order."""
    schema = multiple_choice_schema(max_seq_length)

    def by_choice(value):
        return tf.reshape(value, [-1, NUM_CHOICES, max_seq_length])

    def longest_pairs(batch):
        return tf.reduce_max(feature_files.sequence_lengths(by_choice(batch["input_mask"])), axis=1)

    def unflatten(batch):
        batch = {
            name: by_choice(value) if value.shape.rank == 2 else value
            for name, value in batch.items()
        }
        if length_multiple:
            batch = feature_files.trim_to_longest(batch, length_multiple, schema.per_token_names())
        return batch

    dataset = feature_files.make_dataset(
        path,
        schema,
        batch_size,
        is_training,
        input_context=input_context,
        seed=seed,
        shard_by="records",
        group_by_length=group_by_length,
        lengths_of=longest_pairs,
    )
    return dataset.map(unflatten)
