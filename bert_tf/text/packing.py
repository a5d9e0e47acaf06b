"""Packing token ids into BERT's inputs, in Python and in the graph, with windows.

One rule set, twice (Python for feature files, TensorFlow for serving graphs),
tested to agree (tests/test_example_windows.py):

* `[CLS] A [SEP]` or `[CLS] A [SEP] B [SEP]`; type ids 0 for the first part,
  1 for `B [SEP]`; `input_mask` 1 on tokens; `pad_id` after them.
* An empty B makes a single-text example, as the original
  `convert_single_example` (`if tokens_b:`); so does a B that truncation
  leaves empty (`max_seq_length` 3 or 4): no second `[SEP]`.
* Truncation as the original `_truncate_seq_pair`: pop the last token of the
  longer segment (of B on a tie) until the pair fits `max_seq_length - 3`; a
  single segment keeps its first `max_seq_length - 2` tokens.

Windows (`stride`): one segment (`window_over`: 0 for A, as long-text
classification; 1 for B, as SQuAD's context) is split into windows of W
tokens starting at 0, S, 2S, ... with S = min(stride, W), up to the first
window that reaches its end (the original run_squad.py's doc_stride scheme):
consecutive windows overlap by W - S tokens and every token is in a window.
The other ("fixed") segment is cut as the original truncation would cut it
against the whole windowed segment, or, with `max_fixed_length`, to that
many tokens (SQuAD's `max_query_length`); W is whatever room is left. A
segment that fits gives exactly one window, identical to plain packing.
"""

import keras
import tensorflow as tf

from bert_tf.errors import InputError


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """The original `_truncate_seq_pair`: pops in place until len(a) + len(b) <= max_length.

    Each step removes the last element of the longer list, of `tokens_b` on a tie.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def _check_max_seq_length(max_seq_length, num_segments):
    if max_seq_length < num_segments + 1:
        raise InputError(
            f"max_seq_length={max_seq_length} leaves no room for [CLS] and "
            f"{num_segments} [SEP]: it must be at least {num_segments + 1}"
        )


def _check_window_over(window_over, num_segments):
    if window_over not in range(num_segments):
        raise InputError(
            f"window_over={window_over} must name one of the {num_segments} "
            "segments (0 for A, 1 for B)"
        )


def _kept_lengths(len_a, len_b, max_seq_length, window_over, max_fixed_length):
    """Python twin of the graph's segment budget: (kept A, kept B) before windowing."""
    if not len_b:
        return min(len_a, max_seq_length - 2), 0
    if max_fixed_length is not None:
        room = max_seq_length - 3
        if window_over == 0:
            kept_b = min(len_b, max_fixed_length)
            return min(len_a, room - kept_b), kept_b
        kept_a = min(len_a, max_fixed_length)
        return kept_a, min(len_b, room - kept_a)
    a, b = list(range(len_a)), list(range(len_b))
    truncate_seq_pair(a, b, max_seq_length - 3)
    return len(a), len(b)


def _packed(ids_a, ids_b, max_seq_length, cls_id, sep_id, pad_id):
    """An empty `ids_b` makes a single text: the original checks `if
    tokens_b:` after truncation."""
    word_ids = [cls_id, *ids_a, sep_id]
    type_ids = [0] * len(word_ids)
    if ids_b:
        word_ids += [*ids_b, sep_id]
        type_ids += [1] * (len(ids_b) + 1)
    padding = max_seq_length - len(word_ids)
    return {
        "input_word_ids": word_ids + [pad_id] * padding,
        "input_mask": [1] * len(word_ids) + [0] * padding,
        "input_type_ids": type_ids + [0] * padding,
    }


def window_starts(length, window, step):
    """Starts of the windows of `window` tokens, `step` apart, over `length` tokens:
    0, step, 2 * step, ... up to the first window that reaches the end."""
    starts = [0]
    while starts[-1] + window < length:
        starts.append(starts[-1] + step)
    return starts


def pack_windows(
    ids_a,
    ids_b,
    max_seq_length,
    cls_id,
    sep_id,
    stride=None,
    window_over=0,
    max_fixed_length=None,
    pad_id=0,
):
    """Packs one example into one or more windows (see the module docstring).

    Args:
      ids_a: list of ids of segment A (not modified).
      ids_b: list of ids of segment B; None or empty for a single segment.
      max_seq_length: output length (>= 2 for one segment, >= 3 for a pair).
      cls_id, sep_id, pad_id: ids of [CLS], [SEP] and padding.
      stride: None to truncate (one window), else the step between windows.
      window_over: 0 to window A, 1 to window B.
      max_fixed_length: None for the original truncation of the other
        segment, else its length limit.
    Returns:
      a list of `(packed, start)`: `packed` a dict of lists of length
      max_seq_length (`input_word_ids`, `input_mask`, `input_type_ids`),
      `start` the position of the window's first token in its segment.
    """
    ids_b = list(ids_b) if ids_b else []
    _check_max_seq_length(max_seq_length, 2 if ids_b else 1)
    _check_window_over(window_over, 2)
    kept_a, kept_b = _kept_lengths(
        len(ids_a), len(ids_b), max_seq_length, window_over, max_fixed_length
    )
    if window_over == 1 and not ids_b:
        stride = None  # nothing to window: a single text is truncated
    long_ids, window = (ids_a, kept_a) if window_over == 0 else (ids_b, kept_b)
    if stride is None or window >= len(long_ids):
        starts = [0]
    else:
        if not isinstance(stride, int) or stride < 1:
            raise InputError(f"stride={stride!r} must be a positive integer")
        if window < 1:
            raise InputError(
                f"max_seq_length={max_seq_length} leaves no room for windows "
                f"of segment {'AB'[window_over]}"
            )
        starts = window_starts(len(long_ids), window, min(stride, window))
    windows = []
    for start in starts:
        if window_over == 0:
            a, b = ids_a[start : start + window], ids_b[:kept_b]
        else:
            a, b = ids_a[:kept_a], ids_b[start : start + window]
        windows.append((_packed(a, b, max_seq_length, cls_id, sep_id, pad_id), start))
    return windows


def is_max_context(doc_spans, span_index, position):
    """Whether window `span_index` gives sub-token `position` its best context.

    `doc_spans`: list of `(start, length)` windows over the document's
    sub-tokens. A window containing `position` scores
    `min(tokens left of it, tokens right of it) + 0.01 * length`; the
    highest score wins, the first window on ties.
    """
    best_score = None
    best_index = None
    for index, (start, length) in enumerate(doc_spans):
        end = start + length - 1
        if not start <= position <= end:
            continue
        score = min(position - start, end - position) + 0.01 * length
        if best_score is None or score > best_score:
            best_score = score
            best_index = index
    return best_index == span_index


def pack_inputs(tokens_a_ids, tokens_b_ids, max_seq_length, cls_id, sep_id, pad_id=0):
    """Packs one example as the original `convert_single_example` does: one
    window of `pack_windows` (B None or empty for a single text).

    Returns a dict of lists of length max_seq_length: `input_word_ids`,
    `input_mask`, `input_type_ids`.
    """
    return pack_windows(tokens_a_ids, tokens_b_ids, max_seq_length, cls_id, sep_id, pad_id=pad_id)[
        0
    ][0]


def truncated_pair_lengths(len_a, len_b, max_length):
    """Final segment lengths after `truncate_seq_pair`, in closed form (tensors).

    Args:
      len_a, len_b: int Tensors [batch] of segment lengths.
      max_length: int >= 0 (or int Tensor [batch]), the budget for both segments.

    Returns:
      (new_len_a, new_len_b), int Tensors [batch]. Once both segments are cut
      they end at ceil(max_length / 2) and floor(max_length / 2) (ties pop B);
      a segment shorter than its half is kept and the other gets the rest.
    """
    new_a = tf.minimum(len_a, tf.maximum(max_length - len_b, (max_length + 1) // 2))
    new_b = tf.minimum(len_b, tf.maximum(max_length - len_a, max_length // 2))
    return new_a, new_b


def _take_rows(ragged, rows, lengths, offsets=None):
    """Row `rows[i]` of `ragged`, from `offsets[i]` (default 0), `lengths[i]` values."""
    starts = tf.gather(tf.cast(ragged.row_starts(), tf.int32), rows)
    if offsets is not None:
        starts += offsets
    return tf.gather(ragged.flat_values, tf.ragged.range(starts, starts + lengths))


def _graph_kept_lengths(len_a, len_b, max_seq_length, window_over, max_fixed_length):
    """The graph twin of `_kept_lengths`, on int32 Tensors [batch]."""
    has_b = len_b > 0
    if max_fixed_length is None:
        pair_a, pair_b = truncated_pair_lengths(len_a, len_b, max_seq_length - 3)
    elif window_over == 0:
        pair_b = tf.minimum(len_b, max_fixed_length)
        pair_a = tf.minimum(len_a, max_seq_length - 3 - pair_b)
    else:
        pair_a = tf.minimum(len_a, max_fixed_length)
        pair_b = tf.minimum(len_b, max_seq_length - 3 - pair_a)
    kept_a = tf.where(has_b, pair_a, tf.minimum(len_a, max_seq_length - 2))
    return kept_a, tf.where(has_b, pair_b, 0)


def pack_example_windows(
    segments,
    max_seq_length,
    cls_id,
    sep_id,
    stride=None,
    window_over=0,
    max_fixed_length=None,
    pad_id=0,
    pad_to_longest=False,
    length_multiple=1,
):
    """In-graph `pack_windows` for a batch of examples.

    Args:
      segments: `[A]` or `[A, B]`, int RaggedTensors `[batch, (tokens)]`.
      pad_to_longest: pad to the longest window of the batch instead of
        `max_seq_length` (the model's results are the same: padding is
        masked; the cost follows the real lengths).
      length_multiple: with `pad_to_longest`, round that length up to a
        multiple of this (at most `max_seq_length`), so that a compiled
        model sees few shapes.
      Others: as `pack_windows`.
    Returns:
      (inputs, example_ids, starts): a dict of int32 `[windows,
      max_seq_length]` (`input_word_ids`, `input_mask`, `input_type_ids`;
      `[windows, longest]` with `pad_to_longest`),
      int32 `[windows]` the example each window comes from, and int32
      `[windows]` the position of each window's first token in its segment.
    """
    _check_window_over(window_over, len(segments))
    a = tf.cast(segments[0], tf.int32)
    len_a = tf.cast(a.row_lengths(), tf.int32)
    if len(segments) > 1:
        b = tf.cast(segments[1], tf.int32)
        len_b = tf.cast(b.row_lengths(), tf.int32)
    else:
        b, len_b = a, tf.zeros_like(len_a)
    kept_a, kept_b = _graph_kept_lengths(
        len_a, len_b, max_seq_length, window_over, max_fixed_length
    )
    long_len, window = (len_a, kept_a) if window_over == 0 else (len_b, kept_b)
    if stride is None:
        num_windows = tf.ones_like(len_a)
        step = window
    else:
        step = tf.maximum(tf.minimum(stride, window), 1)
        num_windows = 1 + tf.maximum(0, (long_len - window + step - 1) // step)
    example_ids = tf.repeat(tf.range(tf.size(len_a)), num_windows)
    starts = tf.ragged.range(num_windows).flat_values * tf.gather(step, example_ids)
    window_lengths = tf.minimum(
        tf.gather(window, example_ids), tf.gather(long_len, example_ids) - starts
    )
    if window_over == 0:
        a_lengths, b_lengths = window_lengths, tf.gather(kept_b, example_ids)
        a_ids = _take_rows(a, example_ids, a_lengths, starts)
        b_ids = _take_rows(b, example_ids, b_lengths)
    else:
        a_lengths, b_lengths = tf.gather(kept_a, example_ids), window_lengths
        a_ids = _take_rows(a, example_ids, a_lengths)
        b_ids = _take_rows(b, example_ids, b_lengths, starts)
    count = tf.size(example_ids)

    def column(value, width=None):
        width = tf.ones([count], tf.int32) if width is None else width
        return tf.ragged.range(width) * 0 + value

    second_sep = tf.cast(b_lengths > 0, tf.int32)
    word_ids = tf.concat(
        [column(cls_id), a_ids, column(sep_id), b_ids, column(sep_id, second_sep)], axis=1
    )
    type_ids = tf.concat([column(0, a_lengths + 2), column(1, b_lengths + second_sep)], axis=1)
    if pad_to_longest:
        longest = tf.reduce_max(tf.concat([word_ids.row_lengths(), [0]], 0))
        width = tf.minimum(
            (longest + length_multiple - 1) // length_multiple * length_multiple, max_seq_length
        )
        shape = tf.stack([tf.cast(count, tf.int64), width])
    else:
        shape = [None, max_seq_length]
    inputs = {
        "input_word_ids": word_ids.to_tensor(pad_id, shape=shape),
        "input_mask": tf.ones_like(word_ids).to_tensor(0, shape=shape),
        "input_type_ids": type_ids.to_tensor(0, shape=shape),
    }
    return inputs, example_ids, starts


def average_windows(logits, example_ids, num_examples):
    """Per-window logits `[windows, n]` -> per-example means `[num_examples, n]`
    (`example_ids` int `[windows]` in [0, num_examples)); works eagerly on
    numpy arrays and in graphs, in the dtype of `logits`."""
    return tf.math.unsorted_segment_mean(logits, example_ids, num_examples)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPackInputs(keras.layers.Layer):
    """Builds BERT's model inputs from token ids, exactly like `pack_inputs`.

    Call on an int RaggedTensor [batch, (tokens)] (segment A) or a list of one
    or two of them ([A] or [A, B]); 3-D [batch, (words), (pieces)] inputs are
    flattened to [batch, (tokens)]. Returns a dict of int32 Tensors
    [batch, max_seq_length] (with `pad_to_longest`: [batch, the batch's
    longest]): `input_word_ids`, `input_mask`, `input_type_ids`.
    """

    # Not mutated: mutmut's wrapper of a mutated __init__ hides its arguments from
    # the argument inspection of Keras's Layer.__new__ (tests/mutation.py).
    def __init__(
        self, max_seq_length, cls_id, sep_id, pad_id=0, pad_to_longest=False, **kwargs
    ):  # pragma: no mutate block
        super().__init__(**kwargs)
        # Private Keras flags, with no public switch: take ragged tensors (and
        # lists of them) as they are, not converted to dense tensors.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.max_seq_length = max_seq_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.pad_id = pad_id
        self.pad_to_longest = pad_to_longest

    def __call__(self, inputs, **kwargs):
        # Checked here, not in call(): Keras rewrites errors raised in call() to many lines.
        segments = [inputs] if isinstance(inputs, tf.RaggedTensor) else list(inputs)
        if len(segments) not in (1, 2):
            raise InputError(f"{self.name} takes 1 or 2 segments, got {len(segments)}")
        if not all(isinstance(s, tf.RaggedTensor) for s in segments):
            raise InputError(f"{self.name} expects int RaggedTensors [batch, (tokens)]")
        _check_max_seq_length(self.max_seq_length, len(segments))
        return super().__call__(segments, **kwargs)

    def call(self, inputs):
        """[A] or [A, B] (int RaggedTensors [batch, (tokens)]) -> dict of int32 Tensors."""
        segments = [s.merge_dims(1, -1) if s.ragged_rank > 1 else s for s in inputs]
        packed, _, _ = pack_example_windows(
            segments,
            self.max_seq_length,
            self.cls_id,
            self.sep_id,
            pad_id=self.pad_id,
            pad_to_longest=self.pad_to_longest,
        )
        return packed

    def get_config(self):
        config = super().get_config()
        config.update(
            max_seq_length=self.max_seq_length,
            cls_id=self.cls_id,
            sep_id=self.sep_id,
            pad_id=self.pad_id,
            pad_to_longest=self.pad_to_longest,
        )
        return config
