"""Vocabulary building (bert_tf.text.vocab and build_vocab.py)."""

import collections
import os
import random
import subprocess
import sys

import pytest
import tensorflow as tf
from hypothesis import example, given, settings
from hypothesis import strategies as st
from shared import HANG_TIMEOUT
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib

from bert_tf.errors import InputError
from bert_tf.text import graph_tokenizer, tokenization, vocab, wordpiece_learner
from bert_tf.text.vocab import VocabOptions

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESERVED = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

STEMS = [
    "token",
    "play",
    "walk",
    "talk",
    "read",
    "work",
    "think",
    "build",
    "learn",
    "teach",
    "model",
    "train",
    "test",
    "vocab",
    "word",
    "piece",
    "split",
    "merge",
    "count",
    "sort",
]
SUFFIXES = ["", "", "s", "ed", "ing", "er", "ers", "able", "ization"]
EXTRAS = [
    "The",
    "the",
    "a",
    "of",
    "and",
    "Café",
    "naïve",
    "東京",
    "中文",
    "ΟΔΟΣ",
    "€5",
    "3.14",
    "don't",
    "e-mail",
    "(x)",
    "한국어",
    "Straße",
]


def make_corpus(directory, lines=400, seed=0):
    """Two UTF-8 files of random sentences from STEMS x SUFFIXES and EXTRAS."""
    rng = random.Random(seed)
    directory.mkdir(exist_ok=True)
    paths = []
    for name in ("part-0.txt", "part-1.txt"):
        sentences = []
        for _ in range(lines // 2):
            words = [
                rng.choice(STEMS) + rng.choice(SUFFIXES)
                if rng.random() < 0.8
                else rng.choice(EXTRAS)
                for _ in range(rng.randrange(3, 15))
            ]
            sentences.append(" ".join(words) + rng.choice([".", "!", "?", ""]))
        (directory / name).write_text("\n".join(sentences) + "\n", encoding="utf-8")
        paths.append(str(directory / name))
    return paths


def corpus_lines(paths):
    return [line for p in paths for line in open(p, encoding="utf-8").read().splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(corpus paths, vocab file, tokens) for an uncased vocab of target size 300."""
    root = tmp_path_factory.mktemp("vocab")
    paths = make_corpus(root / "corpus")
    output = str(root / "vocab.txt")
    tokens = vocab.build_vocab(VocabOptions(str(root / "corpus" / "*.txt"), output, 300, True))
    return paths, output, tokens


def test_reserved_tokens_on_top_and_size(built):
    _, output, tokens = built
    assert tokens[:5] == RESERVED
    assert [t for t in RESERVED if t in tokens[5:]] == []
    assert 0.5 * 300 <= len(tokens) <= 300
    assert len(set(tokens)) == len(tokens)
    assert list(tokenization.load_vocab(output)) == tokens


def test_vocab_round_trips_the_corpus(built):
    paths, output, tokens = built
    full = tokenization.FullTokenizer(output, do_lower_case=True)
    lines = corpus_lines(paths)
    pieces = [p for line in lines for p in full.tokenize(line)]
    assert pieces.count("[UNK]") <= 0.01 * len(pieces)
    # Every character seen is in the vocab, alone and as a continuation.
    words = [w for line in lines for w in full.basic_tokenizer.tokenize(line)]
    chars = {c for w in words for c in w}
    assert [c for c in sorted(chars) if c not in full.vocab or "##" + c not in full.vocab] == []
    # Frequent words became whole tokens, so tokens are longer than characters.
    counts = collections.Counter(words)
    assert [w for w, _ in counts.most_common(10) if w not in full.vocab] == []
    assert len(pieces) < 0.5 * sum(len(w) for w in words)
    # Lower-cased and accent-stripped: no upper case, "cafe" not "café".
    assert not any(t != t.lower() for t in tokens[5:])
    assert "é" not in chars and "e" in chars


def test_built_vocab_works_in_graph(built):
    paths, output, _ = built
    lines = corpus_lines(paths)[:100]
    full = tokenization.FullTokenizer(output, do_lower_case=True)
    layer = graph_tokenizer.BertTokenizer(output, do_lower_case=True)
    assert layer(tf.constant(lines)).to_list() == [
        full.convert_tokens_to_ids(full.tokenize(line)) for line in lines
    ]


def test_deterministic(built, tmp_path):
    paths, _, tokens = built
    assert (
        vocab.build_vocab(VocabOptions(",".join(paths), str(tmp_path / "v.txt"), 300, True))
        == tokens
    )


def test_cased_vocab_keeps_case_and_accents(tmp_path):
    paths = make_corpus(tmp_path / "corpus", lines=200)
    tokens = vocab.build_vocab(VocabOptions(paths, str(tmp_path / "v.txt"), 400, False))
    assert {"T", "C", "é", "##é", "Σ"} <= set(tokens)
    words = [
        w for line in corpus_lines(paths) for w in tokenization.BasicTokenizer(False).tokenize(line)
    ]
    full = tokenization.FullTokenizer(str(tmp_path / "v.txt"), do_lower_case=False)
    assert [p for w in words for p in full.tokenize(w)].count("[UNK]") == 0


def test_max_unique_chars_drops_rare_characters(tmp_path):
    paths = make_corpus(tmp_path / "corpus", lines=200)
    counts = vocab.count_words(paths, do_lower_case=True)
    tokens = vocab.learn_vocab(counts, 300, max_unique_chars=20)
    chars = collections.Counter()
    for w, n in counts.items():
        for c in w:
            chars[c] += n
    kept = [t for t in tokens[5:] if len(t) == 1]
    assert sorted(kept) == sorted(c for c, _ in chars.most_common(20))
    assert "東" not in tokens


def tf_text_vocab(word_counts, vocab_size, max_unique_chars, reserved=RESERVED):
    """What build_vocab learnt before `wordpiece_learner`: tensorflow-text's learner."""
    return wordpiece_tokenizer_learner_lib.learn(
        dict(word_counts),
        vocab_size=vocab_size,
        reserved_tokens=list(reserved),
        lower_thresh=1,
        max_unique_chars=max_unique_chars,
    )


@pytest.mark.parametrize("do_lower_case", [True, False])
@pytest.mark.parametrize("vocab_size,max_unique_chars", [(60, 1000), (300, 1000), (2000, 25)])
def test_learner_equals_tensorflow_text_on_the_corpus(
    tmp_path, do_lower_case, vocab_size, max_unique_chars
):
    counts = vocab.count_words(make_corpus(tmp_path, lines=300), do_lower_case)
    assert wordpiece_learner.learn(counts, vocab_size, RESERVED, max_unique_chars) == tf_text_vocab(
        counts, vocab_size, max_unique_chars
    )


# Letters of several scripts, accents (precomposed and combining), CJK, digits
# and punctuation; or a tiny alphabet with "#", for ties and words that start
# with the "##" joiner; or words at the 50-character limit and just over it.
_LETTERS = "abcdeéeÉ\u0301ΑΒγ東京中文한국ßø19.#-"
_WORDS = st.one_of(
    st.text(st.sampled_from(_LETTERS), max_size=9),
    st.text(st.sampled_from("ab#"), max_size=7),
    st.sampled_from(["ab" * 25, "ab" * 25 + "a", "b" * 50]),
)


@settings(max_examples=300)
@given(
    word_counts=st.dictionaries(_WORDS, st.integers(1, 40), min_size=1, max_size=40),
    vocab_size=st.integers(6, 120),
    max_unique_chars=st.integers(1, 30),
    reserved=st.sampled_from([RESERVED, ["[UNK]", "[CLS]", "[SEP]", "a", "##b"]]),
)
# "##ab" is a word and the joined suffix of "bab" and "abab", counted 8 and 10
# times: the joined count ranks it.
@example({"##aab": 8, "abab": 6, "##ab": 8, "bab": 4}, 9, 30, RESERVED)
def test_learner_equals_tensorflow_text(word_counts, vocab_size, max_unique_chars, reserved):
    assert wordpiece_learner.learn(
        word_counts, vocab_size, reserved, max_unique_chars
    ) == tf_text_vocab(word_counts, vocab_size, max_unique_chars, reserved)


def test_invalid_utf8_stop_or_skip(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good words here\nbad \xff line\nmore good words\n")
    with pytest.raises(InputError, match=r"bad.txt:2: not valid UTF-8"):
        vocab.count_words([str(path)], do_lower_case=True)
    counts = vocab.count_words([str(path)], do_lower_case=True, skip_invalid_utf8=True)
    assert counts == {"good": 2, "words": 2, "here": 1, "more": 1}


def mixed_corpus(directory):
    """The corpus plus a file of non-ASCII lines, one not UTF-8, one without a final newline."""
    paths = make_corpus(directory, lines=300)
    odd = directory / "odd.txt"
    odd.write_bytes("Ünïcode wörds 東京\r\n\n".encode() + b"bad \xff line\n" + "tail ΟΔΟΣ".encode())
    return [paths[0], str(odd), paths[1]]


@settings(max_examples=40)
@given(piece_bytes=st.integers(1, 5000), do_lower_case=st.booleans())
def test_counting_in_pieces_equals_counting_files(tmp_path_factory, piece_bytes, do_lower_case):
    paths = mixed_corpus(tmp_path_factory.mktemp("pieces"))
    pieces = [piece for path in paths for piece in vocab._pieces(path, piece_bytes)]
    merged = vocab._merge(vocab._count_piece(do_lower_case, True, piece) for piece in pieces)
    serial = vocab.count_words(paths, do_lower_case, skip_invalid_utf8=True)
    assert list(merged.items()) == list(serial.items())
    assert "tail" in serial and "bad" not in serial


@pytest.mark.parametrize("num_workers", [2, 3])
def test_parallel_counting_equals_serial(tmp_path, monkeypatch, num_workers):
    paths = mixed_corpus(tmp_path)
    monkeypatch.setattr(vocab, "_PIECE_BYTES", 500)
    serial = vocab.count_words(paths, True, skip_invalid_utf8=True)
    parallel = vocab.count_words(paths, True, skip_invalid_utf8=True, num_workers=num_workers)
    assert list(parallel.items()) == list(serial.items())
    monkeypatch.setattr(vocab, "_PIECE_BYTES", 10)  # the bad line in the 3rd piece
    with pytest.raises(InputError, match=r"odd.txt:3: not valid UTF-8"):
        vocab.count_words(paths[1:2], True, num_workers=num_workers)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(input_file="{d}/nothing-*.txt"), "--input_file: no file matches {d}/nothing-*.txt"),
        (dict(input_file=" , "), "--input_file names no file"),
        (dict(reserved_tokens=["[PAD]", "[CLS]", "[SEP]"]), "--reserved_tokens lacks [UNK]"),
        (
            dict(reserved_tokens=["[UNK]", "[CLS]", "[SEP]", "[UNK]"]),
            "--reserved_tokens repeats [UNK]",
        ),
        (dict(vocab_size=5), "--vocab_size=5 must exceed the 5 reserved tokens"),
        (dict(input_file="{d}/empty.txt"), "the input files contain no words"),
        (dict(max_unique_chars=0), "--max_unique_chars=0: expected a whole number >= 1"),
    ],
)
def test_bad_arguments(tmp_path, kwargs, message):
    make_corpus(tmp_path, lines=20)
    (tmp_path / "empty.txt").write_text(" \n\t\n", encoding="utf-8")
    args = dict(
        input_file=str(tmp_path / "part-*.txt"),
        vocab_size=100,
        do_lower_case=True,
        output_file=str(tmp_path / "v.txt"),
    )
    args.update({k: v.format(d=tmp_path) if isinstance(v, str) else v for k, v in kwargs.items()})
    with pytest.raises(InputError) as e:
        vocab.build_vocab(VocabOptions(**args))
    assert str(e.value) == message.format(d=tmp_path)
    assert not (tmp_path / "v.txt").exists()


def run_script(*args):
    return subprocess.run(
        [sys.executable, os.path.join(REPO, "build_vocab.py"), *args],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        cwd=REPO,
    )


def test_script_builds_a_vocab(tmp_path):
    paths = make_corpus(tmp_path / "corpus", lines=100)
    output = tmp_path / "vocab.txt"
    result = run_script(
        f"--input_file={tmp_path}/corpus/*.txt",
        "--vocab_size=200",
        "--do_lower_case=false",
        f"--output_file={output}",
    )
    assert result.returncode == 0, result.stderr[-2000:]
    tokens = output.read_text(encoding="utf-8").splitlines()
    assert tokens == vocab.build_vocab(VocabOptions(paths, str(tmp_path / "again.txt"), 200, False))
    assert tokens[:5] == RESERVED


def test_script_reports_bad_input_in_one_line(tmp_path):
    (tmp_path / "bad.txt").write_bytes(b"fine\n\xc3\x28 broken\n")
    result = run_script(f"--input_file={tmp_path}/bad.txt", f"--output_file={tmp_path}/v.txt")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/bad.txt:2: not valid UTF-8 (byte 0)"
    )
