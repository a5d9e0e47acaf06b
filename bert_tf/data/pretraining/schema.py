"""The original's TFRecord schema for pre-training instances.

Each record is a `tf.train.Example` with int64 `input_ids`, `input_mask`,
`segment_ids` [max_seq_length], int64 `masked_lm_positions`, `masked_lm_ids`
and float `masked_lm_weights` [max_predictions_per_seq], and int64
`next_sentence_labels` [1] (1 = B is a random next sentence), zero-padded.
The model reads `input_ids` as `input_word_ids` and `segment_ids` as
`input_type_ids`.
"""

import functools

import tensorflow as tf

from bert_tf.data.features import Feature, FeatureSchema, input_features


@functools.lru_cache(maxsize=None)
def pretraining_schema(max_seq_length, max_predictions_per_seq):
    """The `FeatureSchema` of pre-training records at these sizes."""
    def predictions(name, dtype=tf.int64):
        return Feature(name, max_predictions_per_seq, dtype,
                       length_flag="max_predictions_per_seq")

    return FeatureSchema([
        *input_features(max_seq_length),
        predictions("masked_lm_positions"),
        predictions("masked_lm_ids"),
        predictions("masked_lm_weights", tf.float32),
        Feature("next_sentence_labels", 1),
    ], description="pre-training")


def serialize_instance(instance, max_seq_length, max_predictions_per_seq):
    """A `pretraining.instances.TrainingInstance` as serialized `tf.train.Example` bytes."""
    padding = [0] * (max_seq_length - len(instance.input_ids))
    prediction_padding = [0] * (max_predictions_per_seq - len(instance.masked_lm_positions))
    return pretraining_schema(max_seq_length, max_predictions_per_seq).serialize({
        "input_ids": instance.input_ids + padding,
        "input_mask": [1] * len(instance.input_ids) + padding,
        "segment_ids": instance.segment_ids + padding,
        "masked_lm_positions": instance.masked_lm_positions + prediction_padding,
        "masked_lm_ids": instance.masked_lm_ids + prediction_padding,
        "masked_lm_weights": [1.0] * len(instance.masked_lm_ids) + prediction_padding,
        "next_sentence_labels": [1 if instance.is_random_next else 0],
    })
