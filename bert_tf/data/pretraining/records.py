"""Pre-training instances as `tf.train.Example` bytes, without TensorFlow.

The same bytes as `schema.pretraining_schema(...).serialize(...)` (the
original's features, deterministic map order), built from precomputed
varints: one instance takes a few microseconds instead of a protobuf
object per feature.
"""

from bert_tf.data.tfrecord import varint
from bert_tf.text.tokenization import WordCache

_ONE_FLOAT = b"\x00\x00\x80\x3f"  # 1.0 as little-endian float32
_ZERO_FLOAT = b"\x00\x00\x00\x00"


class InstanceEncoder:
    """`TrainingInstance` (tokens: the varints of their ids) -> serialized
    `tf.train.Example` with features padded to `max_seq_length` and
    `max_predictions_per_seq`."""

    def __init__(self, max_seq_length, max_predictions_per_seq):
        self.max_seq_length = max_seq_length
        self.max_predictions_per_seq = max_predictions_per_seq
        # The varint of every position.
        self._varints = [varint(i) for i in range(max_seq_length)]
        # Positions below 128 are their own one-byte varints.
        self._positions_are_bytes = max_seq_length <= 128
        # The bytes before each feature's packed list, by the list's length in bytes.
        self._input_ids_prefixes = WordCache(lambda length: _entry_prefix("input_ids", length))
        self._masked_lm_ids_prefixes = WordCache(
            lambda length: _entry_prefix("masked_lm_ids", length)
        )
        self._positions_prefixes = WordCache(
            lambda length: _entry_prefix("masked_lm_positions", length)
        )
        self._example_prefixes = WordCache(lambda length: b"\x0a" + varint(length))
        # Everything that depends only on the length n or the count m of masked
        # positions, by n or m: padding, input_mask, masked_lm_weights.
        self._pads = [b"\x00" * (max_seq_length - n) for n in range(max_seq_length + 1)]
        self._prediction_pads = [
            b"\x00" * (max_predictions_per_seq - m) for m in range(max_predictions_per_seq + 1)
        ]
        self._input_masks = [
            _entry_prefix("input_mask", max_seq_length) + b"\x01" * n + pad
            for n, pad in enumerate(self._pads)
        ]
        self._weights = [
            _entry_prefix("masked_lm_weights", 4 * max_predictions_per_seq)
            + _ONE_FLOAT * m
            + _ZERO_FLOAT * (max_predictions_per_seq - m)
            for m in range(max_predictions_per_seq + 1)
        ]
        label_prefix = _entry_prefix("next_sentence_labels", 1)
        self._labels = (label_prefix + b"\x00", label_prefix + b"\x01")
        self._segment_ids_prefix = _entry_prefix("segment_ids", max_seq_length)

    def __call__(self, instance):
        tokens = instance.input_tokens
        n = len(tokens)
        pad = self._pads[n]
        positions = instance.masked_lm_positions
        m = len(positions)
        prediction_pad = self._prediction_pads[m]
        input_ids = b"".join(tokens) + pad
        masked_lm_ids = b"".join(instance.masked_lm_tokens) + prediction_pad
        if self._positions_are_bytes:
            positions = bytes(positions) + prediction_pad
        else:
            positions = b"".join(map(self._varints.__getitem__, positions)) + prediction_pad
        entries = b"".join(
            (
                self._input_ids_prefixes[len(input_ids)],
                input_ids,
                self._input_masks[n],
                self._masked_lm_ids_prefixes[len(masked_lm_ids)],
                masked_lm_ids,
                self._positions_prefixes[len(positions)],
                positions,
                self._weights[m],
                self._labels[instance.is_random_next],
                self._segment_ids_prefix,
                bytes(instance.segment_ids),
                pad,
            )
        )
        return self._example_prefixes[len(entries)] + entries


def _entry_prefix(name, packed_length):
    """The bytes of the `Features.feature` map entry `name` before its packed
    list of `packed_length` bytes."""
    kind_tag = b"\x12" if name == "masked_lm_weights" else b"\x1a"  # float_list, int64_list
    list_header = b"\x0a" + varint(packed_length)
    feature = kind_tag + varint(len(list_header) + packed_length) + list_header
    value = b"\x12" + varint(len(feature) + packed_length) + feature
    entry = b"\x0a" + varint(len(name)) + name.encode() + value
    return b"\x0a" + varint(len(entry) + packed_length) + entry
