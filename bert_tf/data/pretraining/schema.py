"""The original's TFRecord schema for pre-training instances.

Each record is a `tf.train.Example` with int64 `input_ids`, `input_mask`,
`segment_ids` [max_seq_length], int64 `masked_lm_positions`, `masked_lm_ids`
and float `masked_lm_weights` [max_predictions_per_seq], and int64
`next_sentence_labels` [1] (1 = B is a random next sentence), zero-padded.
The model reads `input_ids` as `input_word_ids` and `segment_ids` as
`input_type_ids`. `records.InstanceEncoder` writes such records without
TensorFlow.
"""

import functools

import tensorflow as tf

from bert_tf.data.features import Feature, FeatureSchema, input_features


@functools.cache
def pretraining_schema(max_seq_length, max_predictions_per_seq):
    """The `FeatureSchema` of pre-training records at these sizes."""

    def predictions(name, dtype=tf.int64):
        return Feature(name, max_predictions_per_seq, dtype, length_flag="max_predictions_per_seq")

    return FeatureSchema(
        [
            *input_features(max_seq_length),
            predictions("masked_lm_positions"),
            predictions("masked_lm_ids"),
            predictions("masked_lm_weights", tf.float32),
            Feature("next_sentence_labels", 1),
        ],
        description="pre-training",
    )
