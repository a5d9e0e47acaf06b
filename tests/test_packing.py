"""Packing ids into BERT inputs: the original truncation, the Python and graph
twins, and windows over either segment."""

import itertools
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.text import packing


def loop_lengths(len_a, len_b, budget):
    a, b = list(range(len_a)), list(range(len_b))
    packing.truncate_seq_pair(a, b, budget)
    return len(a), len(b)


def test_truncation_closed_form_equals_original_loop():
    grid = list(itertools.product(range(13), range(13), range(16)))
    new_a, new_b = packing.truncated_pair_lengths(
        tf.constant([g[0] for g in grid]),
        tf.constant([g[1] for g in grid]),
        tf.constant([g[2] for g in grid]),
    )
    assert list(zip(new_a.numpy().tolist(), new_b.numpy().tolist())) == [
        loop_lengths(*g) for g in grid
    ]


def test_truncate_seq_pair_order():
    # Longer side first, one token at a time, from the end; B on ties.
    a, b = [1, 2, 3, 4, 5, 6, 7], [8, 9]
    packing.truncate_seq_pair(a, b, 7)
    assert (a, b) == ([1, 2, 3, 4, 5], [8, 9])
    a, b = [1, 2, 3, 4], [5, 6, 7, 8]
    packing.truncate_seq_pair(a, b, 5)  # B, A, B -> 3 + 2
    assert (a, b) == ([1, 2, 3], [5, 6])
    a, b = [1, 2], [3, 4, 5, 6, 7, 8, 9]
    packing.truncate_seq_pair(a, b, 6)
    assert (a, b) == ([1, 2], [3, 4, 5, 6])


def test_pack_inputs_hand_written():
    out = packing.pack_inputs([1, 2, 3, 4], [5, 6, 7, 8], 8, cls_id=101, sep_id=102)
    assert out == {
        "input_word_ids": [101, 1, 2, 3, 102, 5, 6, 102],
        "input_mask": [1, 1, 1, 1, 1, 1, 1, 1],
        "input_type_ids": [0, 0, 0, 0, 0, 1, 1, 1],
    }
    out = packing.pack_inputs([1, 2], [3], 8, cls_id=101, sep_id=102, pad_id=7)
    assert out == {
        "input_word_ids": [101, 1, 2, 102, 3, 102, 7, 7],
        "input_mask": [1, 1, 1, 1, 1, 1, 0, 0],
        "input_type_ids": [0, 0, 0, 0, 1, 1, 0, 0],
    }
    out = packing.pack_inputs([1, 2, 3, 4, 5], None, 5, cls_id=101, sep_id=102)
    assert out == {
        "input_word_ids": [101, 1, 2, 3, 102],
        "input_mask": [1, 1, 1, 1, 1],
        "input_type_ids": [0, 0, 0, 0, 0],
    }


def graph_pack(segments, max_seq_length, pad_id=0):
    out = packing.BertPackInputs(max_seq_length, 101, 102, pad_id=pad_id)(
        [tf.ragged.constant(s, dtype=tf.int64, ragged_rank=1) for s in segments]
    )
    return {k: v.numpy().tolist() for k, v in out.items()}


@pytest.mark.parametrize("pair", [True, False], ids=["pair", "single"])
def test_graph_packing_equals_python(pair):
    rng = np.random.default_rng(0)
    a = [list(rng.integers(1000, 2000, rng.integers(0, 20))) for _ in range(200)]
    b = [list(rng.integers(1000, 2000, rng.integers(0, 20))) for _ in range(200)]
    for max_seq_length in (3, 4, 9, 16, 45):
        python = [
            packing.pack_inputs(x, y if pair else None, max_seq_length, 101, 102, 9)
            for x, y in zip(a, b)
        ]
        graph = graph_pack([a, b] if pair else [a], max_seq_length, pad_id=9)
        for key in ("input_word_ids", "input_mask", "input_type_ids"):
            assert graph[key] == [p[key] for p in python], (key, max_seq_length)


def test_packer_accepts_a_bare_tensor_and_word_level_ragged():
    packer = packing.BertPackInputs(6, 101, 102)
    words = tf.ragged.constant([[[1, 2], [3]], [[4], [5, 6, 7, 8, 9]]])  # [batch, words, pieces]
    out = packer(words)
    assert out["input_word_ids"].dtype == tf.int32
    assert out["input_word_ids"].numpy().tolist() == [
        [101, 1, 2, 3, 102, 0],
        [101, 4, 5, 6, 7, 102],
    ]


def test_packer_in_tf_function_has_static_width():
    packer = packing.BertPackInputs(10, 101, 102)
    spec = tf.RaggedTensorSpec([None, None], tf.int32)

    @tf.function(input_signature=[spec, spec])
    def pack(a, b):
        return packer([a, b])

    out = pack.get_concrete_function().structured_outputs
    assert {k: v.shape.as_list() for k, v in out.items()} == {
        "input_word_ids": [None, 10],
        "input_mask": [None, 10],
        "input_type_ids": [None, 10],
    }


def test_packer_pads_to_the_longest_example_on_request():
    rng = np.random.default_rng(1)
    a = [list(rng.integers(1000, 2000, rng.integers(0, 12))) for _ in range(30)]
    b = [list(rng.integers(1000, 2000, rng.integers(0, 12))) for _ in range(30)]
    segments = [tf.ragged.constant(s, dtype=tf.int64, ragged_rank=1) for s in (a, b)]
    full = packing.BertPackInputs(45, 101, 102)(segments)
    short = packing.BertPackInputs(45, 101, 102, pad_to_longest=True)(segments)
    longest = max(len(x) + len(y) + (3 if y else 2) for x, y in zip(a, b))
    for key in full:
        assert short[key].shape == (30, longest)
        np.testing.assert_array_equal(short[key], full[key][:, :longest])
    packer = packing.BertPackInputs(10, 101, 102, pad_to_longest=True)
    assert packer.get_config()["pad_to_longest"]
    cut = packer(segments)  # longer pairs are still truncated to max_seq_length
    assert cut["input_word_ids"].shape == (30, 10)


def test_longest_rounded_up_to_a_multiple_and_capped_at_max_seq_length():
    """What an XLA-compiled SavedModel is fed: few distinct widths."""
    segments = [tf.ragged.constant([[7] * 3, [8] * 9], tf.int32)]
    widths = {
        multiple: packing.pack_example_windows(
            segments, 13, 101, 102, pad_to_longest=True, length_multiple=multiple
        )[0]
        for multiple in (1, 4, 16)
    }
    assert [widths[m]["input_mask"].shape[1] for m in (1, 4, 16)] == [11, 12, 13]
    for key in widths[1]:
        np.testing.assert_array_equal(widths[4][key][:, :11], widths[1][key])
        assert not widths[4][key][:, 11:].numpy().any()
    empty = packing.pack_example_windows(
        [segments[0][:0]], 13, 101, 102, pad_to_longest=True, length_multiple=4
    )[0]
    assert empty["input_mask"].shape == (0, 0)


@pytest.mark.parametrize("segments,max_seq_length", [(1, 1), (2, 2)])
def test_max_seq_length_too_small(segments, max_seq_length):
    b = [3] if segments == 2 else None
    with pytest.raises(InputError, match=f"max_seq_length={max_seq_length}"):
        packing.pack_inputs([1], b, max_seq_length, 101, 102)
    with pytest.raises(InputError) as e:
        graph_pack([[[1]]] * segments, max_seq_length)
    assert str(e.value) == (
        f"max_seq_length={max_seq_length} leaves no room for [CLS] and "
        f"{segments} [SEP]: it must be at least {segments + 1}"
    )


def test_empty_second_text_makes_a_single_text_example():
    # The original convert_single_example: `if tokens_b:` decides pair or single.
    single = packing.pack_inputs([1, 2, 3, 4], None, 5, 101, 102)
    assert packing.pack_inputs([1, 2, 3, 4], [], 5, 101, 102) == single
    assert single["input_word_ids"] == [101, 1, 2, 3, 102]
    assert graph_pack([[[1, 2, 3, 4]], [[]]], 5) == {k: [v] for k, v in single.items()}


def test_windows_over_the_second_text_hand_written():
    # SQuAD's layout: [CLS] question [SEP] context window [SEP]; 10 - 3 - 2 = 5
    # context tokens per window, 2 apart: starts 0, 2, 4 (the first reaching the end).
    windows = packing.pack_windows(
        [7, 8], list(range(20, 29)), 10, 101, 102, stride=2, window_over=1, max_fixed_length=4
    )
    assert [start for _, start in windows] == [0, 2, 4]
    assert [w["input_word_ids"] for w, _ in windows] == [
        [101, 7, 8, 102, 20, 21, 22, 23, 24, 102],
        [101, 7, 8, 102, 22, 23, 24, 25, 26, 102],
        [101, 7, 8, 102, 24, 25, 26, 27, 28, 102],
    ]
    assert windows[0][0]["input_type_ids"] == [0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    # A question longer than max_fixed_length is cut to it; the context gets the rest.
    windows = packing.pack_windows(
        [7, 8, 9], [20, 21, 22, 23], 8, 101, 102, stride=1, window_over=1, max_fixed_length=2
    )
    assert [w["input_word_ids"] for w, _ in windows] == [
        [101, 7, 8, 102, 20, 21, 22, 102],
        [101, 7, 8, 102, 21, 22, 23, 102],
    ]


def test_window_starts_follow_the_original_doc_stride_loop():
    def original(length, window, stride):  # run_squad.py's doc_spans loop
        spans, start = [], 0
        while start < length:
            size = min(length - start, window)
            spans.append(start)
            if start + size == length:
                break
            start += min(size, stride)
        return spans

    for length, window, stride in itertools.product(range(1, 30), range(1, 9), range(1, 12)):
        assert packing.window_starts(length, window, min(stride, window)) == original(
            length, window, stride
        ), (length, window, stride)


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1, inner_shape=())


@pytest.mark.parametrize("window_over,max_fixed_length", [(0, None), (1, None), (0, 3), (1, 4)])
def test_graph_windows_equal_python_windows(window_over, max_fixed_length):
    rng = random.Random(window_over * 10 + (max_fixed_length or 0))
    for _ in range(25):
        max_seq_length = rng.randint(8, 20)
        stride = rng.choice([None, 1, 2, 5])
        a = [[rng.randint(10, 99) for _ in range(rng.randint(0, 30))] for _ in range(4)]
        b = [
            [rng.randint(10, 99) for _ in range(rng.choice([0, rng.randint(1, 30)]))]
            for _ in range(4)
        ]
        expected = [
            (i, start, packed["input_word_ids"], packed["input_type_ids"], packed["input_mask"])
            for i, (x, y) in enumerate(zip(a, b))
            for packed, start in packing.pack_windows(
                x, y, max_seq_length, 1, 2, stride, window_over, max_fixed_length
            )
        ]
        inputs, example_ids, starts = packing.pack_example_windows(
            [ragged(a), ragged(b)], max_seq_length, 1, 2, stride, window_over, max_fixed_length
        )
        got = list(
            zip(
                example_ids.numpy().tolist(),
                starts.numpy().tolist(),
                inputs["input_word_ids"].numpy().tolist(),
                inputs["input_type_ids"].numpy().tolist(),
                inputs["input_mask"].numpy().tolist(),
            )
        )
        assert got == expected, (max_seq_length, stride)


def test_average_windows_is_the_mean_per_example():
    logits = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, 0.0], [-1.0, 1.0]], np.float32)
    means = packing.average_windows(logits, np.array([0, 0, 0, 1]), 2).numpy()
    np.testing.assert_array_equal(means, np.array([[3.0, 8.0 / 3.0], [-1.0, 1.0]], np.float32))
