"""The max-context rule of overlapping windows, in Python and in the exported
graphs (SQuAD answer starts, NER word tags), against the original BERT's
`_check_is_max_context` for every token of every window.

The cases are the original run_squad.py's windows (`doc_stride` apart, the
last one cut at the document's end) at odd and even strides, over window
lengths and document lengths where counting the right context one token
too many or too few changes which window wins.
"""

import numpy as np
import tensorflow as tf

from bert_tf.export import squad as squad_export
from bert_tf.export import tagging as tagging_export
from bert_tf.text import packing

# (document length, window length, stride)
CASES = [
    (n, length, stride)
    for length in (3, 4, 5, 6, 7, 8)
    for stride in range(1, length + 1)
    for n in (length + 1, 2 * length + 1, 19)
]


def doc_spans(num_tokens, length, stride):
    """The original run_squad.py's `(start, length)` windows over a document."""
    spans = []
    start = 0
    while start < num_tokens:
        spans.append((start, min(length, num_tokens - start)))
        if start + spans[-1][1] == num_tokens:
            break
        start += min(spans[-1][1], stride)
    return spans


def check_is_max_context(spans, span_index, position, right_extra=0):
    """The original `_check_is_max_context`: the window with the highest
    min(left context, right context) + 0.01 * length, the first on ties.
    `right_extra` shifts the right context (to show the cases catch that)."""
    best_score = None
    best_index = None
    for index, (start, length) in enumerate(spans):
        end = start + length - 1
        if position < start or position > end:
            continue
        num_left_context = position - start
        num_right_context = end - position + right_extra
        score = min(num_left_context, num_right_context) + 0.01 * length
        if best_score is None or score > best_score:
            best_score = score
            best_index = index
    return span_index == best_index


def all_spans():
    return [doc_spans(*case) for case in CASES]


def test_cases_tell_an_off_by_one_right_context_apart():
    for extra in (1, -1):
        changed = sum(
            check_is_max_context(spans, i, position)
            != check_is_max_context(spans, i, position, right_extra=extra)
            for spans in all_spans()
            for i, (start, length) in enumerate(spans)
            for position in range(start, start + length)
        )
        assert changed > 50


def test_python_rule_matches_the_original():
    for spans in all_spans():
        for i, (start, length) in enumerate(spans):
            for position in range(start, start + length):
                assert packing.is_max_context(spans, i, position) == check_is_max_context(
                    spans, i, position
                ), (spans, i, position)


def batched_windows(spans_per_example, leading):
    """The windows of all examples in one batch as the exports pack them:
    `leading[e]` positions before each window's tokens of example e, one
    [SEP] after. Returns (input_mask, example_ids, starts, row_starts)."""
    windows = [
        (e, start, length) for e, spans in enumerate(spans_per_example) for start, length in spans
    ]
    seq = max(leading[e] + length + 1 for e, _, length in windows) + 2  # and some padding
    input_mask = np.zeros((len(windows), seq), np.int32)
    for w, (e, _, length) in enumerate(windows):
        input_mask[w, : leading[e] + length + 1] = 1
    num_tokens = [spans[-1][0] + spans[-1][1] for spans in spans_per_example]
    row_starts = np.cumsum([0] + num_tokens[:-1]).astype(np.int32)
    return (
        input_mask,
        np.array([e for e, _, _ in windows], np.int32),
        np.array([start for _, start, _ in windows], np.int32),
        row_starts,
    )


def expected_choice(spans_per_example, example_ids, starts, leading, seq):
    """bool [windows, seq]: the position holds a document token whose max-context
    window (the original rule) is this one."""
    expected = np.zeros((len(example_ids), seq), bool)
    local = 0
    for w, (e, start) in enumerate(zip(example_ids, starts)):
        local = 0 if w == 0 or example_ids[w - 1] != e else local + 1
        spans = spans_per_example[e]
        assert spans[local][0] == start
        for i in range(spans[local][1]):
            expected[w, leading[e] + i] = check_is_max_context(spans, local, start + i)
    return expected


def test_squad_export_max_context_matches_the_original_rule():
    """The served span labeler takes answer starts only where offline
    prediction does (`token_is_max_context`)."""
    spans = all_spans()
    question_lengths = np.array([i % 4 for i in range(len(spans))], np.int32)
    leading = question_lengths + 2  # [CLS] question [SEP]
    input_mask, example_ids, starts, context_starts = batched_windows(spans, leading)
    in_context, offset, token, length = squad_export._window_layout(
        tf.constant(input_mask),
        tf.constant(example_ids),
        tf.constant(starts),
        tf.constant(question_lengths),
        tf.constant(context_starts),
    )
    num_tokens = sum(s[-1][0] + s[-1][1] for s in spans)
    chosen = squad_export._max_context(in_context, offset, token, length, num_tokens).numpy()
    expected = expected_choice(spans, example_ids, starts, leading, input_mask.shape[1])
    assert chosen.sum() == num_tokens  # each token in exactly one window
    for w in range(len(example_ids)):
        assert chosen[w].tolist() == expected[w].tolist(), (spans[example_ids[w]], starts[w])


def test_ner_export_labelled_positions_match_the_original_rule():
    """The served tagger tags each word at its first sub-token in the window
    the feature files label it in (`data.tagging.pack_targets`)."""
    spans = all_spans()
    leading = np.ones(len(spans), np.int32)  # [CLS]
    input_mask, example_ids, starts, row_starts = batched_windows(spans, leading)
    num_tokens = sum(s[-1][0] + s[-1][1] for s in spans)
    is_first = np.random.default_rng(0).random(num_tokens) < 0.7  # others: ## pieces
    chosen, token = tagging_export.labelled_positions(
        tf.constant(input_mask),
        tf.constant(example_ids),
        tf.constant(starts),
        tf.constant(row_starts),
        tf.constant(is_first),
    )
    chosen, token = chosen.numpy(), token.numpy()
    expected = expected_choice(spans, example_ids, starts, leading, input_mask.shape[1])
    expected &= is_first[np.clip(token, 0, num_tokens - 1)]
    assert chosen.sum() == is_first.sum()  # each word once
    for w in range(len(example_ids)):
        assert chosen[w].tolist() == expected[w].tolist(), (spans[example_ids[w]], starts[w])
