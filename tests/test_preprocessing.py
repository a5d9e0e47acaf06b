"""In-graph tokenizer == Python tokenizer, and input packing (Python == in-graph)."""

import random
import shutil
import subprocess
import sys
import unicodedata

import keras
import pytest
import tensorflow as tf
import tensorflow_text as tf_text
from shared import HANG_TIMEOUT
from test_tokenization import TEXTS, uncased_vocab_file

from bert_tf.errors import InputError
from bert_tf.text import graph_tokenizer, packing, tokenization

# Upper-case letters whose lower-case mapping is new in Unicode 14 (Python 3.11's
# unicodedata has it, TensorFlow's ICU does not): Glagolitic, Latin Extended-D, Vithkuqi.
UNICODE_14_CASE_PAIRS = (
    [0x2C2F, 0xA7C0, 0xA7D0, 0xA7D6, 0xA7D8]
    + list(range(0x10570, 0x1057B))
    + list(range(0x1057C, 0x1058B))
    + list(range(0x1058C, 0x10593))
    + [0x10594, 0x10595]
)
# Unassigned in Python 3.11's Unicode 14 (category Cn) that tensorflow-text's
# newer ICU decomposes under NFD.
DECOMPOSED_UNASSIGNED = [
    0x105C9,
    0x105E4,
    0x11383,
    0x11385,
    0x1138E,
    0x11391,
    0x113C5,
    0x113C7,
    0x113C8,
    *range(0x16121, 0x16129),
    0x16D68,
    0x16D69,
    0x16D6A,
]
# The original's CJK ranges (google-research/bert tokenization.py).
CJK_RANGES = [
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
]


def sampled_code_points():
    """Every code point below U+3000 (Latin, Greek, Cyrillic, combining marks,
    punctuation, spaces, controls ...), the CJK range edges, the documented
    exceptions, and a fixed random sample of 6000 of the other ~185k."""
    chosen = set(range(0x3000)) | set(UNICODE_14_CASE_PAIRS) | set(DECOMPOSED_UNASSIGNED)
    chosen |= {c + d for lo, hi in CJK_RANGES for c in (lo, hi) for d in (-1, 0, 1)}
    rest = [c for c in range(0x3000, 0x110000) if not 0xD800 <= c <= 0xDFFF]
    chosen |= set(random.Random(0).sample(rest, 6000))
    return sorted(chosen)


def random_texts(n, seed):
    """Random strings over a pool that hits every rule of the basic tokenizer."""
    pool = list("abcdefXYZ019 .,'-#[]") + [
        "é",
        "e\u0301",
        "Σ",
        "ß",
        "İ",
        "\ufb01",
        "中",
        "東",
        "한",
        "が",
        "\u0627",
        "न\u094d",
        "€",
        "°",
        "\u2014",
        "\u201c",
        "\u200b",
        "\u00ad",
        "\x00",
        "\x07",
        "\x85",
        "\ufffd",
        "\t",
        "\n",
        "\r",
        "\u3000",
        "\u00a0",
        "\u2028",
        "\ue000",
        "\U0001f355",
        "\ufe0f",
        "Ω",
        "ab",
        "un",
        "##",
        "ing",
        "[CLS]",
        "ǅ",
        "Å",
    ]
    rng = random.Random(seed)
    return ["".join(rng.choice(pool) for _ in range(rng.randrange(0, 30))) for _ in range(n)]


def make_cased_vocab(path):
    """The uncased vocab plus cased words and every character of the test texts (+ ## forms)."""
    tokens = [line.rstrip("\n") for line in open(uncased_vocab_file(), encoding="utf-8")]
    extra = ["Hello", "World", "##ORLD", "Straße", "ΟΔΟΣ", "##ΟΣ", "C", "##++", "Mr", "O"]
    basic = tokenization.BasicTokenizer(do_lower_case=False)
    for text in TEXTS + random_texts(300, seed=1):
        for char in "".join(basic.tokenize(text)):
            extra += [char, "##" + char]
    seen = set(tokens)
    for t in extra:
        if t not in seen:
            seen.add(t)
            tokens.append(t)
    path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def tokenizers(request, tmp_path_factory):
    """(FullTokenizer, BertTokenizer layer) on the same vocab and casing."""
    if request.param:
        vocab_file = uncased_vocab_file()
    else:
        vocab_file = make_cased_vocab(tmp_path_factory.mktemp("cased") / "vocab.txt")
    return (
        tokenization.FullTokenizer(vocab_file, do_lower_case=request.param),
        graph_tokenizer.BertTokenizer(vocab_file, do_lower_case=request.param),
    )


def python_ids(tokenizer, texts):
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)) for t in texts]


def graph_words(layer, texts):
    return [[w.decode() for w in row] for row in layer.tokenize_words(tf.constant(texts)).to_list()]


def test_graph_equals_python_on_text_set(tokenizers):
    full, layer = tokenizers
    assert graph_words(layer, TEXTS) == [full.basic_tokenizer.tokenize(t) for t in TEXTS]
    ids = layer(tf.constant(TEXTS))
    assert ids.dtype == tf.int32 and ids.shape.rank == 2
    assert ids.to_list() == python_ids(full, TEXTS)


def test_graph_equals_python_on_random_texts(tokenizers):
    full, layer = tokenizers
    texts = random_texts(1500, seed=0)
    expected = python_ids(full, texts)
    assert layer(tf.constant(texts)).to_list() == expected
    # The comparison is not vacuous: most tokens are real pieces, not [UNK].
    flat = [i for row in expected for i in row]
    assert flat.count(layer.unk_id) < 0.2 * len(flat)


def test_graph_drops_invalid_utf8_like_python(tokenizers):
    full, layer = tokenizers
    raw = [b"caf\xe9 ok", b"a\xff\xfeb", b"\xe2\x82 x", b"\xed\xa0\x80z", b"\xc0\xafq \xf0\x9f\x8d"]
    assert layer(tf.constant(raw)).to_list() == python_ids(full, raw)


def test_long_word_limit_counts_characters_after_normalisation(tokenizers):
    full, layer = tokenizers
    texts = [
        "ab" * 100,
        "ab" * 100 + "a",
        "é" * 200,
        "é" * 201,
        "e\u0301" * 100,
        "한" * 66,
        "한" * 67,
        "€" * 200,
        "€" * 201,
    ]
    ids = layer(tf.constant(texts)).to_list()
    assert ids == python_ids(full, texts)
    unk = [row == [layer.unk_id] for row in ids]
    if full.do_lower_case:  # e + U+0301 -> e; 한 -> 3 jamo
        assert unk == [False, True, False, True, False, False, True, False, True]
    else:  # e + U+0301 is 2 characters; 한 stays 1
        assert unk == [False, True, False, True, False, False, False, False, True]


@pytest.mark.parametrize("do_lower_case", [True, False])
def test_sampled_code_points_classified_like_python(do_lower_case):
    """Each code point in context: graph basic tokens == Python's, except the documented ones."""
    code_points = sampled_code_points()
    texts = [f"A{chr(c)}b {chr(c)}" for c in code_points]
    basic = tokenization.BasicTokenizer(do_lower_case)
    graph = graph_tokenizer.basic_tokenize(tf.constant([t.encode() for t in texts]), do_lower_case)
    differing = {
        c
        for c, text, row in zip(code_points, texts, graph.to_list())
        if [w.decode() for w in row] != basic.tokenize(text)
    }
    if not do_lower_case:
        assert differing == set()
        return
    # Lower-casing: ICU lacks the Unicode 14 case pairs; NFD: tensorflow-text
    # decomposes 20 code points that Unicode 14 has not assigned yet.
    assert differing == set(UNICODE_14_CASE_PAIRS) | set(DECOMPOSED_UNASSIGNED)
    rest = DECOMPOSED_UNASSIGNED
    assert all(unicodedata.category(chr(c)) == "Cn" for c in rest)
    assert all(tf_text.normalize_utf8(chr(c), "NFD").numpy().decode() != chr(c) for c in rest)


def test_documented_differences_are_real():
    full_words = tokenization.BasicTokenizer(True).tokenize
    graph = graph_tokenizer.basic_tokenize(tf.constant(["X\u2c2fY", "X\U000105c9Y"]), True)
    assert full_words("X\u2c2fY") == ["x\u2c5fy"]
    assert graph.to_list()[0] == ["x\u2c2fy".encode()]
    assert full_words("X\U000105c9Y") == ["x\U000105c9y"]
    assert graph.to_list()[1] == ["x\U000105d2y".encode()]


def test_tf_text_bert_tokenizer_is_not_the_original(tmp_path):
    """Why the basic tokenization is rebuilt: tensorflow-text's diverges on these."""
    vocab_file = write(
        tmp_path,
        "".join(
            t + "\n"
            for t in [
                "[UNK]",
                "[CLS]",
                "[SEP]",
                "strasse",
                "straße",
                "fine",
                "\ufb01",
                "##ne",
                "οδος",
                "οδοσ",
                "1",
                "½",
                "a",
                "b",
                "a\u2028b",
            ]
        ),
    )
    theirs = tf_text.BertTokenizer(vocab_file, lower_case=True, token_out_type=tf.string)
    texts = ["Straße", "\ufb01ne", "ΟΔΟΣ", "½", "a\u2028b"]
    theirs_out = [[p.decode() for w in row for p in w] for row in theirs.tokenize(texts).to_list()]
    ours = tokenization.FullTokenizer(vocab_file, do_lower_case=True)
    assert [ours.tokenize(t) for t in texts] == [
        ["straße"],
        ["\ufb01", "##ne"],
        ["οδος"],
        ["½"],
        ["a", "b"],
    ]
    # NFKC case folding: ß -> ss, ﬁ -> fi, Σ -> σ everywhere, ½ -> "1⁄2" (one word, not
    # covered by the vocab); and U+2028 does not separate words.
    assert theirs_out == [["strasse"], ["fine"], ["οδοσ"], ["[UNK]"], ["a\u2028b"]]


def write(tmp_path, text):
    path = tmp_path / "vocab.txt"
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    "text,message",
    [
        ("[UNK]\n[CLS]\n[SEP]\nab\nab\n", "vocab.txt:5: duplicate token 'ab' (first on line 4)"),
        ("[UNK]\n[CLS]\n[SEP]\n ab\n", "vocab.txt:4: token ' ab' has surrounding whitespace"),
        ("[UNK]\n[SEP]\n", "lacks [CLS]"),
        ("", "is empty"),
    ],
)
def test_layer_rejects_bad_vocab(tmp_path, text, message):
    with pytest.raises(InputError) as e:
        graph_tokenizer.BertTokenizer(write(tmp_path, text))
    assert message in str(e.value)


def test_layer_takes_a_vocabulary_list_and_carries_it_as_an_asset(tmp_path):
    """A `.keras` file brings the vocabulary where the vocab file is gone."""
    vocab_file = uncased_vocab_file()
    from_file = graph_tokenizer.BertTokenizer(vocab_file)
    tokens = from_file.vocabulary
    from_list = graph_tokenizer.BertTokenizer(vocabulary=tokens)
    text = tf.constant(["Héllo, WORLD! unaffable", "[MASK] 北京"])
    assert from_list(text).to_list() == from_file(text).to_list()
    assert (from_list.vocab_size, from_list.mask_id) == (30522, 103)
    from_file.save_assets(str(tmp_path))
    moved = graph_tokenizer.BertTokenizer.from_config(
        {**from_file.get_config(), "vocab_file": str(tmp_path / "gone.txt")}
    )
    with pytest.raises(InputError, match="has no vocabulary"):
        moved(text)
    moved.load_assets(str(tmp_path))
    assert moved(text).to_list() == from_file(text).to_list()
    with pytest.raises(InputError, match="vocabulary:5: duplicate token 'ab'"):
        graph_tokenizer.BertTokenizer(vocabulary=["[UNK]", "[CLS]", "[SEP]", "ab", "ab"])
    with pytest.raises(InputError, match="lacks \\[SEP\\]"):
        graph_tokenizer.BertTokenizer(vocabulary=["[UNK]", "[CLS]"])


def test_layer_special_ids_and_config():
    layer = graph_tokenizer.BertTokenizer(uncased_vocab_file(), do_lower_case=True, name="tok")
    assert (
        layer.vocab_size,
        layer.pad_id,
        layer.unk_id,
        layer.cls_id,
        layer.sep_id,
        layer.mask_id,
    ) == (30522, 0, 100, 101, 102, 103)
    clone = graph_tokenizer.BertTokenizer.from_config(layer.get_config())
    assert (clone.vocab_file, clone.do_lower_case, clone.name) == (layer.vocab_file, True, "tok")
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(layer))
    assert isinstance(restored, graph_tokenizer.BertTokenizer)
    text = tf.constant(["Héllo, WORLD! unaffable"])
    for tokenizer in (clone, restored):
        assert tokenizer(text).to_list() == layer(text).to_list()
    packer = packing.BertPackInputs(16, 101, 102, pad_id=5)
    assert packing.BertPackInputs.from_config(packer.get_config()).get_config() == (
        packer.get_config()
    )


SAVED_MODEL_CHECK = """
import sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops)
assert "bert_tf" not in sys.modules
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
out = serve(a=tf.constant(["Hello, World! ΟΔΟΣ"]), b=tf.constant(["café 東京"]))
print(out["input_word_ids"].numpy()[0].tolist())
print(out["input_type_ids"].numpy()[0].tolist())
"""


@pytest.mark.large
def test_saved_model_loads_with_only_tensorflow_and_tensorflow_text(tmp_path):
    vocab_copy = tmp_path / "vocab.txt"
    shutil.copy(uncased_vocab_file(), vocab_copy)
    module = tf.Module()
    module.tokenizer = graph_tokenizer.BertTokenizer(str(vocab_copy), do_lower_case=True)
    module.packer = packing.BertPackInputs(12, 101, 102)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
    def serve(a, b):
        return module.packer([module.tokenizer(a), module.tokenizer(b)])

    tf.saved_model.save(module, str(tmp_path / "model"), signatures={"serving_default": serve})
    vocab_copy.unlink()  # the SavedModel must carry its own copy as an asset
    assert (tmp_path / "model" / "assets" / "vocab.txt").exists()
    result = subprocess.run(
        [sys.executable, "-c", SAVED_MODEL_CHECK, str(tmp_path / "model")],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    full = tokenization.FullTokenizer(uncased_vocab_file())
    expected = packing.pack_inputs(
        full.convert_tokens_to_ids(full.tokenize("Hello, World! ΟΔΟΣ")),
        full.convert_tokens_to_ids(full.tokenize("café 東京")),
        12,
        101,
        102,
    )
    assert result.stdout.split("\n")[:2] == [
        str(expected["input_word_ids"]),
        str(expected["input_type_ids"]),
    ]


def test_layers_reject_wrong_input_kinds():
    layer = graph_tokenizer.BertTokenizer(uncased_vocab_file(), name="tok")
    packer = packing.BertPackInputs(8, 101, 102, name="pack")
    cases = [
        (
            lambda: layer(tf.constant([["a", "b"]])),
            "tok expects a tf.string Tensor of shape [batch], got shape (1, 2)",
        ),
        (
            lambda: packer([tf.constant([[1, 2]])]),
            "pack expects int RaggedTensors [batch, (tokens)]",
        ),
        (lambda: packer([tf.ragged.constant([[1]])] * 3), "pack takes 1 or 2 segments, got 3"),
    ]
    for call, message in cases:
        with pytest.raises(InputError) as e:
            call()
        assert str(e.value) == message
