"""Synthetic pre-training TFRecords in the original schema, written with
tf.train.Example directly (independently of bert_tf's writer)."""

import numpy as np
import tensorflow as tf

CLS, SEP, MASK = 2, 3, 4


def _int64s(values):
    return tf.train.Feature(int64_list=tf.train.Int64List(value=list(map(int, values))))


def _floats(values):
    return tf.train.Feature(float_list=tf.train.FloatList(value=list(map(float, values))))


def write_records(path, num_records, max_seq_length, max_predictions_per_seq, vocab_size, seed=0):
    """Writes learnable records: tokens follow a skewed distribution and
    sentence B continues A (label 0) or is reversed (label 1)."""
    rng = np.random.default_rng(seed)
    probabilities = 1.0 / np.arange(1, vocab_size - 4) ** 2
    probabilities /= probabilities.sum()
    with tf.io.TFRecordWriter(path) as writer:
        for _ in range(num_records):
            length = int(rng.integers(max_seq_length // 2, max_seq_length + 1))
            half = (length - 3) // 2
            a = rng.choice(np.arange(5, vocab_size), size=half, p=probabilities)
            label = int(rng.random() < 0.5)
            b = np.sort(a) if label == 0 else np.sort(a)[::-1]
            tokens = [CLS, *a, SEP, *b, SEP]
            segments = [0] * (half + 2) + [1] * (half + 1)
            candidates = [i for i, t in enumerate(tokens) if t not in (CLS, SEP)]
            count = min(max_predictions_per_seq, max(1, round(len(candidates) * 0.15)))
            positions = sorted(rng.choice(candidates, size=count, replace=False))
            ids = [tokens[p] for p in positions]
            inputs = list(tokens)
            for p in positions:
                inputs[p] = MASK
            pad = max_seq_length - len(tokens)
            pad_predictions = max_predictions_per_seq - count
            features = {
                "input_ids": _int64s(inputs + [0] * pad),
                "input_mask": _int64s([1] * len(tokens) + [0] * pad),
                "segment_ids": _int64s(segments + [0] * pad),
                "masked_lm_positions": _int64s(list(positions) + [0] * pad_predictions),
                "masked_lm_ids": _int64s(ids + [0] * pad_predictions),
                "masked_lm_weights": _floats([1.0] * count + [0.0] * pad_predictions),
                "next_sentence_labels": _int64s([label]),
            }
            example = tf.train.Example(features=tf.train.Features(feature=features))
            writer.write(example.SerializeToString())
    return path
