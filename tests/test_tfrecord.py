"""TFRecord files and tf.train.Example bytes written without TensorFlow
(bert_tf.data.tfrecord, bert_tf.data.pretraining.records) against TensorFlow's own."""

import os
import random

import numpy as np
import tensorflow as tf

from bert_tf.data import tfrecord
from bert_tf.data.pretraining.instances import TrainingInstance, pack_token
from bert_tf.data.pretraining.records import InstanceEncoder
from bert_tf.data.pretraining.schema import pretraining_schema


def test_files_are_the_bytes_tensorflow_writes(tmp_path):
    rng = random.Random(0)
    records = [b"", b"x"] + [os.urandom(rng.randint(1, 70000)) for _ in range(30)]
    with tf.io.TFRecordWriter(str(tmp_path / "tf")) as writer:
        for record in records:
            writer.write(record)
    with tfrecord.TFRecordFile(str(tmp_path / "ours")) as ours:
        for k, record in enumerate(records):
            ours.write(record) if k % 2 else ours.write_framed(tfrecord.frame(record))
    assert (tmp_path / "ours").read_bytes() == (tmp_path / "tf").read_bytes()
    read = [r.numpy() for r in tf.data.TFRecordDataset(str(tmp_path / "ours"))]
    assert read == records


def test_examples_are_the_bytes_tensorflow_serializes():
    rng = random.Random(1)
    for _ in range(50):
        ints = {
            f"i{k}": [
                rng.choice(
                    [0, 1, 127, 128, 2**31, 2**63 - 1, -1, -(2**63), rng.randint(-(10**12), 10**12)]
                )
                for _ in range(rng.randint(0, 40))
            ]
            for k in range(rng.randint(0, 4))
        }
        floats = {
            f"f{k}": [rng.uniform(-1e6, 1e6) for _ in range(rng.randint(0, 9))]
            for k in range(rng.randint(0, 3))
        }
        expected = tf.train.Example(
            features=tf.train.Features(
                feature={
                    **{
                        n: tf.train.Feature(int64_list=tf.train.Int64List(value=v))
                        for n, v in ints.items()
                    },
                    **{
                        n: tf.train.Feature(float_list=tf.train.FloatList(value=v))
                        for n, v in floats.items()
                    },
                }
            )
        )
        ours = tfrecord.encode_example(
            {
                **{n: tfrecord.int64_feature(v) for n, v in ints.items()},
                **{n: tfrecord.float_feature(v) for n, v in floats.items()},
            }
        )
        assert ours == expected.SerializeToString(deterministic=True)


def test_instances_are_the_bytes_of_the_schema():
    rng = random.Random(2)
    for max_seq_length, max_predictions, vocab_size in (
        (128, 20, 30522),
        (512, 80, 250000),
        (9, 3, 12),
    ):
        encode = InstanceEncoder(max_seq_length, max_predictions)
        schema = pretraining_schema(max_seq_length, max_predictions)
        for _ in range(100):
            n = rng.randint(5, max_seq_length)
            m = rng.randint(1, min(n, max_predictions))
            input_ids = [rng.randrange(vocab_size) for _ in range(n)]
            masked_lm_ids = [rng.randrange(vocab_size) for _ in range(m)]
            instance = TrainingInstance(
                input_tokens=[pack_token(i, rng.random() < 0.3) for i in input_ids],
                segment_ids=sorted(rng.randint(0, 1) for _ in range(n)),
                masked_lm_positions=sorted(rng.sample(range(n), m)),
                masked_lm_tokens=[pack_token(i, rng.random() < 0.3) for i in masked_lm_ids],
                is_random_next=rng.random() < 0.5,
            )
            pad, prediction_pad = [0] * (max_seq_length - n), [0] * (max_predictions - m)
            expected = schema.serialize(
                {
                    "input_ids": input_ids + pad,
                    "input_mask": [1] * n + pad,
                    "segment_ids": instance.segment_ids + pad,
                    "masked_lm_positions": instance.masked_lm_positions + prediction_pad,
                    "masked_lm_ids": masked_lm_ids + prediction_pad,
                    "masked_lm_weights": [1.0] * m + prediction_pad,
                    "next_sentence_labels": [int(instance.is_random_next)],
                }
            )
            assert encode(instance) == expected
        parsed = schema.parse(tf.constant([encode(instance)]))
        np.testing.assert_array_equal(parsed["input_word_ids"][0, :n], input_ids)


def test_damage_is_found_where_tensorflows_reader_stops(tmp_path):
    """Every byte of a record changed in turn, and the file cut at every
    length: `find_damage` reports damage where TensorFlow's reader fails, at
    the record it stops before, and also where the file ends inside a
    record's 12-byte header, which TensorFlow's reader takes for the end of
    the file."""
    records = [b"first", b"second record", b"third"]
    with tfrecord.TFRecordFile(str(tmp_path / "good")) as f:
        for record in records:
            f.write(record)
    good = (tmp_path / "good").read_bytes()
    second = 16 + len(records[0])
    variants = [good[:cut] for cut in range(1, len(good))]
    for position in range(second, second + 16 + len(records[1])):
        changed = bytearray(good)
        changed[position] ^= 0x01
        variants.append(bytes(changed))
    path = str(tmp_path / "variant")
    for data in variants:
        with open(path, "wb") as f:
            f.write(data)
        read = []
        try:
            for record in tf.data.TFRecordDataset(path):
                read.append(record.numpy())
            failed = False
        except tf.errors.DataLossError:
            failed = True
        damage = tfrecord.find_damage(path)
        ends_in_a_header = 0 < len(data) - sum(16 + len(r) for r in read) < 12
        assert (damage is not None) == (failed or ends_in_a_header), len(data)
        if damage:
            assert damage.record == len(read)
            assert damage.offset == sum(16 + len(r) for r in read)
            assert damage.bytes_lost == len(data) - damage.offset
