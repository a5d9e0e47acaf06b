"""The original's TFRecord schema for pre-training instances, written and checked.

Each record is a `tf.train.Example` with int64 `input_ids`, `input_mask`,
`segment_ids` [max_seq_length], int64 `masked_lm_positions`, `masked_lm_ids`
and float `masked_lm_weights` [max_predictions_per_seq], and int64
`next_sentence_labels` [1] (1 = B is a random next sentence), zero-padded.
"""

from google.protobuf.message import DecodeError
import tensorflow as tf

SEQUENCE_FEATURES = ("input_ids", "input_mask", "segment_ids")
PREDICTION_FEATURES = ("masked_lm_positions", "masked_lm_ids", "masked_lm_weights")
FLOAT_FEATURES = ("masked_lm_weights",)


def feature_spec(max_seq_length, max_predictions_per_seq):
    """`tf.io.FixedLenFeature`s of the schema, keyed by feature name."""
    spec = {name: tf.io.FixedLenFeature([max_seq_length], tf.int64) for name in SEQUENCE_FEATURES}
    for name in PREDICTION_FEATURES:
        dtype = tf.float32 if name in FLOAT_FEATURES else tf.int64
        spec[name] = tf.io.FixedLenFeature([max_predictions_per_seq], dtype)
    spec["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
    return spec


def serialize_instance(instance, max_seq_length, max_predictions_per_seq):
    """A `pretraining_instances.TrainingInstance` as serialized `tf.train.Example` bytes."""
    padding = [0] * (max_seq_length - len(instance.input_ids))
    prediction_padding = [0] * (max_predictions_per_seq - len(instance.masked_lm_positions))

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    features = {
        "input_ids": ints(instance.input_ids + padding),
        "input_mask": ints([1] * len(instance.input_ids) + padding),
        "segment_ids": ints(instance.segment_ids + padding),
        "masked_lm_positions": ints(instance.masked_lm_positions + prediction_padding),
        "masked_lm_ids": ints(instance.masked_lm_ids + prediction_padding),
        "masked_lm_weights": tf.train.Feature(float_list=tf.train.FloatList(
            value=[1.0] * len(instance.masked_lm_ids) + prediction_padding)),
        "next_sentence_labels": ints([1 if instance.is_random_next else 0]),
    }
    example = tf.train.Example(features=tf.train.Features(feature=features))
    return example.SerializeToString(deterministic=True)


def schema_mismatch(serialized, max_seq_length, max_predictions_per_seq):
    """Why a serialized record does not fit the schema at these sizes (a short
    phrase naming the feature and the flag), or None if it fits."""
    try:
        features = tf.train.Example.FromString(serialized).features.feature
    except DecodeError:
        return "not a tf.train.Example"
    for name, spec in feature_spec(max_seq_length, max_predictions_per_seq).items():
        if name not in features:
            return f"no feature {name}"
        kind = "float_list" if spec.dtype == tf.float32 else "int64_list"
        if features[name].WhichOneof("kind") != kind:
            return f"feature {name} is not a {kind}"
        length = len(getattr(features[name], kind).value)
        if length != spec.shape[0]:
            flag = ("max_seq_length" if name in SEQUENCE_FEATURES else
                    "max_predictions_per_seq" if name in PREDICTION_FEATURES else None)
            expected = f"--{flag}={spec.shape[0]}" if flag else str(spec.shape[0])
            return f"feature {name} has {length} values, expected {expected}"
    return None
