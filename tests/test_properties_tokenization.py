"""Property tests: bert_tf's tokenizers against the original FullTokenizer
(tests/original_bert.py, a transcription of google-research/bert's
tokenization.py) on random text and random small vocabularies."""

import re
import unicodedata

import pytest
import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st
from original_bert import OriginalTokenizer

from bert_tf.text import tokenization
from bert_tf.text.graph_tokenizer import BertTokenizer

# Characters that exercise every rule of the basic tokenizer.
LETTERS = "abnAB019"
ASCII_PUNCTUATION = ".,'#[]-!"
PUNCTUATION = ASCII_PUNCTUATION + "\u00bf\u201c\u2014"
ACCENTED = "\u00e9\u00c5\u00f1\u00df\u0130\u03a3\u03c3\u0301\u0308\ufb01\u00bd"
# CJK ranges at both ends and the code points just outside them.
CJK = "\u4e00\u9fff\u3400\u4dbf\U00020000\U0002a6df\uf900\ufaff\U0002f800\U0002fa1f"
NEAR_CJK = "\u4dff\ua000\u33ff\u4dc0\uf8ff\ufb00\u3000\u3007"
OTHER_SCRIPTS = "\uac00\ud55c\u304c\u0627\u0928\u094d\u20ac\u00b0\ue000\U0001f355"
WHITESPACE = " \t\n\r\u00a0\u3000\u2028\u2029\u202f\u1680\x0b\x0c"
# Deleted: NUL, U+FFFD, Cc (incl. ones Python calls whitespace) and Cf (zero-width, BOM).
DELETED = "\x00\ufffd\x07\x7f\x85\x1c\x1f\u200b\u200c\u200d\u2060\ufeff\u00ad"
OTHERS = PUNCTUATION + ACCENTED + CJK + NEAR_CJK + OTHER_SCRIPTS + WHITESPACE + DELETED
ALPHABET = LETTERS + OTHERS

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def lower_stripped(text):
    """Lower-cased, NFD, without nonspacing marks: the forms pieces must match when uncased."""
    return "".join(
        c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn"
    )


def _char_pieces():
    """Every character a basic token can hold, alone and as a continuation."""
    chars = set(ALPHABET + lower_stripped(ALPHABET)) - set(DELETED)
    chars = sorted(c for c in chars if not c.isspace())
    return chars + ["##" + c for c in chars]


CHAR_PIECES = _char_pieces()

# Mostly letters, so that WordPiece has choices (st.text would weigh every character alike).
short_words = st.lists(
    st.sampled_from(LETTERS * 16 + ASCII_PUNCTUATION * 4 + OTHERS), max_size=12
).map("".join)
# Words of 198 to 201 characters, counted after lower-casing and accent
# stripping (one character of "e\u0301" uncased, two jamo of "\uac00", three of "\ud55c").
LONG_WORDS = ["b" * 199, "b" * 200, "b" * 201, "e\u0301" * 200, "e\u0301" * 201]
LONG_WORDS += ["\uac00" * 100, "\uac00" * 101, "\ud55c" * 66, "\ud55c" * 67]


@st.composite
def texts(draw):
    """Random words, a quarter of the texts with a long word."""
    words = draw(st.lists(short_words, max_size=6))
    if draw(st.sampled_from(range(4))) == 0:
        words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(LONG_WORDS)))
    return " ".join(words)


@st.composite
def texts_and_vocabs(draw):
    """A text, and a vocab of most single characters (a few dropped, so that
    some words become [UNK]) and pieces cut from the text's words (so that
    greedy longest-match has choices)."""
    text = draw(texts())
    words = re.split(r"[\W_]+", text + " " + lower_stripped(text))
    pieces = []
    for word in filter(None, words[:20]):
        for _ in range(draw(st.integers(1, 3))):
            start = draw(st.integers(0, len(word) - 1))
            end = draw(st.integers(start + 1, min(len(word), start + 6)))
            pieces.append(("##" if start else "") + word[start:end])
    dropped = draw(st.sets(st.sampled_from(CHAR_PIECES), max_size=8))
    vocab = [p for p in CHAR_PIECES if p not in dropped] + pieces
    return text, [p for p in dict.fromkeys(vocab) if p not in SPECIAL]


def write_vocab(path, pieces):
    path.write_text("".join(t + "\n" for t in SPECIAL + pieces), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module")
def vocab_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("vocab")


@settings(max_examples=200)
@given(text_and_vocab=texts_and_vocabs(), do_lower_case=st.booleans())
def test_full_tokenizer_gives_the_originals_tokens_and_ids(
    vocab_dir, text_and_vocab, do_lower_case
):
    text, pieces = text_and_vocab
    vocab_file = write_vocab(vocab_dir / "vocab.txt", pieces)
    original = OriginalTokenizer(vocab_file, do_lower_case)
    ours = tokenization.FullTokenizer(vocab_file, do_lower_case)
    expected = original.tokenize(text)
    assert ours.basic_tokenizer.tokenize(text) == original.basic_tokenize(text)
    for _ in range(2):  # the second time from the word cache
        tokens = ours.tokenize(text)
        assert tokens == expected
    assert ours.convert_tokens_to_ids(tokens) == original.convert_tokens_to_ids(expected)


# A fixed vocab for the in-graph tokenizer (a new lookup table per example is
# slow): every 5th single character missing, and a few longer pieces.
GRAPH_PIECES = [p for i, p in enumerate(CHAR_PIECES) if i % 5]
GRAPH_PIECES += ["ab", "##ab", "ba", "##ba", "nab", "##ban", "##01", "19"]


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizer_pair(request, vocab_dir):
    vocab_file = write_vocab(vocab_dir / "graph_vocab.txt", GRAPH_PIECES)
    return (
        OriginalTokenizer(vocab_file, request.param),
        BertTokenizer(vocabulary=SPECIAL + GRAPH_PIECES, do_lower_case=request.param),
    )


@settings(max_examples=25)
@given(batch=st.lists(texts(), min_size=1, max_size=8))
def test_in_graph_tokenizer_gives_the_originals_ids(tokenizer_pair, batch):
    original, layer = tokenizer_pair
    expected = [original.convert_tokens_to_ids(original.tokenize(t)) for t in batch]
    assert layer(tf.constant(batch)).to_list() == expected
