"""Checkpoint surgery (bert_tf.checkpoints.surgery and extend_checkpoint.py):
new words in [unused] slots or appended, more token types; old tokens'
outputs unchanged, new rows as documented, the result loads and trains."""

import os

import numpy as np
import pytest
import tensorflow as tf
from pretraining_records import write_records
from script_runs import ScriptServer
from shared import assert_one_error

import bert_tf
from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.modeling import BertPretrainingModel
from bert_tf.text.tokenization import FullTokenizer

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[unused0]", "[unused1]",
    "the", "dog", "cat", "run", "##s", "##cat", "##ning", "[unused2]",
    "a", "b", "c", "##a", "##b", "##c", "[unused3]",
]  # fmt: skip
V = len(VOCAB)
WORDS = "bert/embeddings/word_embeddings"
BIAS = "cls/predictions/output_bias"
TYPES = "bert/embeddings/token_type_embeddings"


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A Google-release-style folder of a tiny random pre-training model (its
    masked LM bias random too, so that averaging it is seen)."""
    root = tmp_path_factory.mktemp("release")
    config = BertConfig(
        vocab_size=V,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        type_vocab_size=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    config.to_json_file(str(root / "bert_config.json"))
    (root / "vocab.txt").write_text("".join(f"{t}\n" for t in VOCAB))
    model = BertPretrainingModel(config)
    model.masked_lm.output_bias.assign(np.random.default_rng(0).normal(size=V))
    checkpoints.save_tf1_checkpoint(model, str(root / "bert_model.ckpt"))
    return str(root)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


def extend(release, output_dir, **options):
    """The Python API, as README shows it."""
    return bert_tf.extend_checkpoint(
        bert_tf.ExtendOptions(init_checkpoint=release, output_dir=str(output_dir), **options)
    )


def weights(folder):
    return checkpoints.read_tf1_checkpoint(os.path.join(folder, "bert_model.ckpt"))


def sequence_output(folder, word_ids, type_ids):
    encoder = bert_tf.from_pretrained(folder).encoder
    inputs = {
        "input_word_ids": word_ids,
        "input_mask": np.ones_like(word_ids),
        "input_type_ids": type_ids,
    }
    return encoder(inputs)["sequence_output"].numpy()


def old_inputs(types=2):
    rng = np.random.default_rng(1)
    return rng.integers(0, V, (2, 12)).astype(np.int32), rng.integers(0, types, (2, 12)).astype(
        np.int32
    )


@pytest.fixture(scope="module")
def appended(release, tmp_path_factory):
    """`release` with words appended by --init=mean."""
    out = str(tmp_path_factory.mktemp("appended") / "model")
    words_file = os.path.join(os.path.dirname(out), "words.txt")
    with open(words_file, "w") as f:
        f.write("dogcat\nthe\n\nruns\ndogcat\n")
    report = extend(release, out, words_file=words_file, word_ids="append", init="mean")
    return out, report


def test_appended_words_are_mean_rows_and_old_outputs_stay(release, appended):
    out, report = appended
    assert report.added == {"dogcat": V, "runs": V + 1}
    assert report.known == ["the"]
    with open(os.path.join(out, "vocab.txt")) as f:
        assert f.read().split("\n")[:-1] == VOCAB + ["dogcat", "runs"]
    assert BertConfig.from_json_file(os.path.join(out, "bert_config.json")).vocab_size == V + 2
    old, new = weights(release), weights(out)
    ids = {t: i for i, t in enumerate(VOCAB)}
    for name in (WORDS, BIAS):
        np.testing.assert_array_equal(new[name][:V], old[name])
    for row, pieces in ((V, ["dog", "##cat"]), (V + 1, ["run", "##s"])):
        rows = [ids[p] for p in pieces]
        np.testing.assert_array_equal(new[WORDS][row], np.mean(old[WORDS][rows], axis=0))
        np.testing.assert_array_equal(new[BIAS][row], np.mean(old[BIAS][rows]))
    tokenizer = FullTokenizer(os.path.join(out, "vocab.txt"))
    assert tokenizer.tokenize("the dogcat runs") == ["the", "dogcat", "runs"]
    word_ids, type_ids = old_inputs()
    np.testing.assert_allclose(
        sequence_output(out, word_ids, type_ids),
        sequence_output(release, word_ids, type_ids),
        atol=1e-6,
    )


def test_an_appended_suffix_piece_is_the_mean_of_its_word_without_the_hashes(release, tmp_path):
    """`##dogcat` averages dog and ##cat (the pieces of "dogcat"), not `#`, `#`, ..."""
    out = str(tmp_path / "model")
    report = extend(release, out, words=("##dogcat",), word_ids="append", init="mean")
    assert report.added == {"##dogcat": V}
    old, new = weights(release), weights(out)
    rows = [VOCAB.index("dog"), VOCAB.index("##cat")]
    np.testing.assert_array_equal(new[WORDS][V], np.mean(old[WORDS][rows], axis=0))
    np.testing.assert_array_equal(new[BIAS][V], np.mean(old[BIAS][rows]))


def test_truncated_normal_rows_are_bounded_and_seeded(release, tmp_path):
    words = tuple(f"w{i}" for i in range(8))
    for name, seed in (("one", 7), ("again", 7), ("other", 8)):
        extend(release, tmp_path / name, words=words, word_ids="append", seed=seed)
    one, again, other = (weights(str(tmp_path / n)) for n in ("one", "again", "other"))
    rows = one[WORDS][V:]
    assert rows.shape == (8, 32)
    stddev = BertConfig.from_json_file(os.path.join(release, "bert_config.json")).initializer_range
    assert np.abs(rows).max() <= 2 * stddev
    # A normal truncated at 2 stddev has 0.88 of its stddev.
    assert 0.75 * stddev < rows.std() < stddev
    np.testing.assert_array_equal(one[BIAS][V:], np.zeros(8))
    np.testing.assert_array_equal(again[WORDS], one[WORDS])
    assert not np.array_equal(other[WORDS][V:], rows)


def test_unused_slots_take_the_words_and_the_checkpoint_is_copied(release, tmp_path):
    out = str(tmp_path / "model")
    report = extend(release, out, words=("dogcat", "cat", "runs"))
    assert report.added == {"dogcat": 5, "runs": 6}
    expected = list(VOCAB)
    expected[5:7] = ["dogcat", "runs"]
    with open(os.path.join(out, "vocab.txt")) as f:
        assert f.read().split("\n")[:-1] == expected
    for suffix in (".index", ".data-00000-of-00001"):
        with open(os.path.join(release, "bert_model.ckpt" + suffix), "rb") as a:
            with open(os.path.join(out, "bert_model.ckpt" + suffix), "rb") as b:
                assert a.read() == b.read(), suffix
    assert FullTokenizer(os.path.join(release, "vocab.txt")).tokenize("dogcat") == ["dog", "##cat"]
    assert FullTokenizer(os.path.join(out, "vocab.txt")).tokenize("dogcat") == ["dogcat"]
    with pytest.raises(InputError, match="5 new words .* only 4 free"):
        extend(release, tmp_path / "more", words=("v", "w", "x", "y", "z"))


def test_token_types_grow_as_copies_of_type_0(release, tmp_path):
    out = str(tmp_path / "model")
    assert extend(release, out, type_vocab_size=4).type_vocab_size == 4
    assert BertConfig.from_json_file(os.path.join(out, "bert_config.json")).type_vocab_size == 4
    old, new = weights(release)[TYPES], weights(out)[TYPES]
    np.testing.assert_array_equal(new[:2], old)
    np.testing.assert_array_equal(new[2:], old[[0, 0]])
    word_ids, type_ids = old_inputs()
    np.testing.assert_allclose(
        sequence_output(out, word_ids, type_ids),
        sequence_output(release, word_ids, type_ids),
        atol=1e-6,
    )
    zeros = np.zeros_like(word_ids)
    as_type_3 = sequence_output(out, word_ids, zeros + 3)
    np.testing.assert_allclose(as_type_3, sequence_output(out, word_ids, zeros), atol=1e-6)
    assert not np.allclose(as_type_3, sequence_output(out, word_ids, zeros + 1), atol=1e-3)


@pytest.mark.large
def test_the_script_extends_and_run_pretraining_continues(release, server, tmp_path):
    out = str(tmp_path / "model")
    finished = server.run(
        "extend_checkpoint.py",
        f"--init_checkpoint={release}/bert_model.ckpt",
        "--words=dogcat,runs",
        "--word_ids=append",
        "--type_vocab_size=3",
        f"--output_dir={out}",
    )
    assert finished.status == 0, finished.stderr[-3000:]
    assert "added 2 words as ids 22..23" in finished.stdout
    records = write_records(str(tmp_path / "data.tfrecord"), 8, 16, 3, V + 2)
    finished = server.run(
        "run_pretraining.py",
        f"--init_checkpoint={out}",
        f"--input_file={records}",
        f"--output_dir={tmp_path / 'pretraining'}",
        "--do_train",
        "--num_train_steps=2",
        "--num_warmup_steps=1",
        "--train_batch_size=4",
        "--max_seq_length=16",
        "--max_predictions_per_seq=3",
    )
    assert finished.status == 0, finished.stderr[-3000:]
    reader = tf.train.load_checkpoint(str(tmp_path / "pretraining" / "model.ckpt-2"))
    assert reader.get_variable_to_shape_map()[WORDS] == [V + 2, 32]
    assert reader.get_variable_to_shape_map()[TYPES] == [3, 32]


@pytest.mark.parametrize(
    "case, flags, words",
    [
        (
            "too many words",
            ["--words=v,w,x,y,z"],
            ["--words", "5 new words", "only 4 free [unused] slots"],
        ),
        ("output exists", ["--words=v", "--output_dir=__release__"], ["--output_dir", "exists"]),
        (
            "no checkpoint",
            ["--words=v", "--init_checkpoint=__tmp__/nothing/bert_model.ckpt"],
            ["--init_checkpoint", "nothing/bert_model.ckpt"],
        ),
    ],
)
def test_bad_input_is_one_error_line(case, flags, words, release, server, tmp_path):
    out = str(tmp_path / "out")
    flags = [f"--init_checkpoint={release}", f"--output_dir={out}"] + [
        f.replace("__release__", release).replace("__tmp__", str(tmp_path)) for f in flags
    ]
    finished = server.run("extend_checkpoint.py", *flags)
    assert_one_error(finished, *words)
    assert not os.path.exists(out)
