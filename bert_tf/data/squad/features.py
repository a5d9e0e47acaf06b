"""SQuAD windows: examples -> packed windows over the context, their records and metadata.

As the original run_squad.py's `convert_examples_to_features`: the question
is cut to `max_query_length` WordPiece tokens, the context is sub-tokenized
word by word (`alignment`), and `[CLS] question [SEP] window [SEP]` windows
of the room left are taken `doc_stride` tokens apart
(`packing.pack_windows` with `window_over=1`). Training windows point at the
answer's first and last sub-token, or at `[CLS]` (0, 0) when the answer is
not wholly inside the window or the question is unanswerable.

Records: int64 `input_ids`, `input_mask`, `segment_ids` [max_seq_length]
and `unique_ids` [1] (the window's index in the file; -1 on the padding
windows that fill the last predict batch), plus for training int64
`start_positions`, `end_positions` [1]. Post-processing needs each window's
tokens and maps (`SquadWindow`), which stay in memory, not in the records.
"""

import dataclasses
import functools
import os

from bert_tf.data import features as feature_files
from bert_tf.data.features import Feature, FeatureSchema, file_stamp, input_features
from bert_tf.data.squad import alignment
from bert_tf.text.packing import pack_windows

PADDING_UNIQUE_ID = -1
_CACHE_VERSION = 1


@dataclasses.dataclass
class SquadWindow:
    """One packed window of one example (the original's `InputFeatures`).

    `tokens`: `[CLS] question [SEP] window [SEP]` (no padding);
    `token_to_orig_map` / `token_is_max_context`: {position in tokens: word
    index / whether this window gives that sub-token its best context}, for
    the window's context tokens; `inputs`: `input_word_ids`, `input_mask`,
    `input_type_ids` lists of max_seq_length; `start_position`,
    `end_position`: training targets (None when predicting).
    """

    example_index: int
    tokens: list
    token_to_orig_map: dict
    token_is_max_context: dict
    inputs: dict
    start_position: int | None = None
    end_position: int | None = None


def convert_example(
    example, example_index, tokenizer, max_seq_length, doc_stride, max_query_length, is_training
):
    """A `reader.SquadExample` -> its `SquadWindow`s, in window order."""
    query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]
    all_doc_tokens, tok_to_orig, orig_to_tok = alignment.tokenize_document(
        example.doc_tokens, tokenizer
    )
    if is_training:
        tok_start, tok_end = alignment.answer_token_span(
            example, all_doc_tokens, orig_to_tok, tokenizer
        )
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    packed_windows = pack_windows(
        tokenizer.convert_tokens_to_ids(query_tokens),
        tokenizer.convert_tokens_to_ids(all_doc_tokens),
        max_seq_length,
        cls_id,
        sep_id,
        stride=doc_stride,
        window_over=1,
        max_fixed_length=max_query_length,
    )
    doc_offset = len(query_tokens) + 2
    doc_spans = [
        (start, sum(packed["input_mask"]) - doc_offset - 1) for packed, start in packed_windows
    ]
    windows = []
    for span_index, ((packed, start), (_, length)) in enumerate(zip(packed_windows, doc_spans)):
        to_orig, max_context = alignment.window_token_maps(
            doc_spans, span_index, tok_to_orig, doc_offset
        )
        window = SquadWindow(
            example_index,
            ["[CLS]", *query_tokens, "[SEP]", *all_doc_tokens[start : start + length], "[SEP]"],
            to_orig,
            max_context,
            packed,
        )
        if is_training:
            window.start_position, window.end_position = alignment.window_answer_positions(
                tok_start, tok_end, (start, length), doc_offset
            )
        windows.append(window)
    return windows


def convert_examples(
    examples, tokenizer, max_seq_length, doc_stride, max_query_length, is_training
):
    """Yields the `SquadWindow`s of all examples in order."""
    for index, example in enumerate(examples):
        yield from convert_example(
            example, index, tokenizer, max_seq_length, doc_stride, max_query_length, is_training
        )


@functools.cache
def squad_schema(max_seq_length, is_training):
    """The `FeatureSchema` of SQuAD records (training adds the answer positions)."""
    features = [*input_features(max_seq_length), Feature("unique_ids", 1, scalar=True)]
    if is_training:
        features += [
            Feature("start_positions", 1, scalar=True),
            Feature("end_positions", 1, scalar=True),
        ]
    return FeatureSchema(features, description="SQuAD training" if is_training else "SQuAD")


def _serialize(window, unique_id, is_training, max_seq_length):
    values = {
        "input_ids": window.inputs["input_word_ids"],
        "input_mask": window.inputs["input_mask"],
        "segment_ids": window.inputs["input_type_ids"],
        "unique_ids": [unique_id],
    }
    if is_training:
        values.update(start_positions=[window.start_position], end_positions=[window.end_position])
    return squad_schema(max_seq_length, is_training).serialize(values)


def _padding_window(max_seq_length):
    zeros = [0] * max_seq_length
    return SquadWindow(
        -1,
        [],
        {},
        {},
        {"input_word_ids": zeros, "input_mask": zeros, "input_type_ids": zeros},
        0,
        0,
    )


def ensure_squad_features(
    output_dir,
    split,
    windows,
    *,
    input_file,
    text,
    doc_stride,
    max_query_length,
    is_training,
    pad_examples_to_multiple_of=None,
):
    """Writes `output_dir/{split}.tf_record` unless an up-to-date one is there.

    `windows`: an iterable of `SquadWindow`s, or a zero-argument callable
    returning one (called only when the file is written), made with `text` (a
    `model_text.TextSettings`, part of the fingerprint). Returns a
    `features.FeatureFile` (num_examples counts distinct examples).
    """
    fingerprint = {
        "version": _CACHE_VERSION,
        "input_file": file_stamp(input_file),
        **feature_files.text_fingerprint(text),
        "doc_stride": doc_stride,
        "max_query_length": max_query_length,
        "is_training": is_training,
        "pad_examples_to_multiple_of": pad_examples_to_multiple_of,
    }

    max_seq_length = text.max_seq_length

    def write_records(writer):
        examples, count = set(), 0
        for window in windows() if callable(windows) else windows:
            writer.write(_serialize(window, count, is_training, max_seq_length))
            examples.add(window.example_index)
            count += 1
        padding = -count % pad_examples_to_multiple_of if pad_examples_to_multiple_of else 0
        for _ in range(padding):
            writer.write(
                _serialize(
                    _padding_window(max_seq_length), PADDING_UNIQUE_ID, is_training, max_seq_length
                )
            )
        return len(examples), count, count + padding

    return feature_files.ensure_feature_file(
        os.path.join(output_dir, f"{split}.tf_record"), fingerprint, write_records
    )


def make_dataset(
    input_file, max_seq_length, batch_size, is_training, input_context=None, seed=None
):
    """Batches of SQuAD records (`features.make_dataset`, sharded by record):
    int32 `input_word_ids`, `input_mask`, `input_type_ids` [batch, seq],
    `unique_ids` [batch] and, for training, `start_positions`,
    `end_positions` [batch]."""
    return feature_files.make_dataset(
        input_file,
        squad_schema(max_seq_length, is_training),
        batch_size,
        is_training,
        input_context=input_context,
        seed=seed,
        shard_by="records",
    )


def has_answers(examples):
    """Whether every example has gold answers or is marked unanswerable
    (then the predictions can be scored)."""
    return bool(examples) and all(e.answers or e.is_impossible for e in examples)
