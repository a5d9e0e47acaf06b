"""extract_features: the original's JSON lines format, values equal to the
encoder's layer outputs, and the npz arrays."""

import json

import numpy as np
import pytest

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError, InputError
from bert_tf.modeling import BertClassifier, BertEncoder
from bert_tf.options import build
from bert_tf.tasks.extract import extract_features
from bert_tf.tasks.extract_options import FeatureOptions
from bert_tf.text import tokenization

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "##s", "."]
LINES = ["The cat sat on the mat.", "a dog ||| the cats ran", "", "dog " * 30]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("features")
    vocab = root / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS]) + "\n")
    config = BertConfig(
        vocab_size=len(WORDS) + 4,
        hidden_size=16,
        num_hidden_layers=4,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
        type_vocab_size=2,
    )
    config.to_json_file(str(root / "bert_config.json"))
    encoder = BertEncoder(config)
    checkpoints.save_tf1_checkpoint(encoder, str(root / "bert_model.ckpt"))
    (root / "input.txt").write_text("\n".join(LINES) + "\n")
    return root, encoder


def options(setup, output_file, **kwargs):
    root, _ = setup
    kwargs.setdefault("init_checkpoint", str(root / "bert_model.ckpt"))
    return build(
        FeatureOptions,
        input_file=str(root / "input.txt"),
        output_file=str(output_file),
        vocab_file=str(root / "vocab.txt"),
        bert_config_file=str(root / "bert_config.json"),
        max_seq_length=12,
        batch_size=3,
        **kwargs,
    )


def expected_tokens(tokenizer, line):
    """[CLS] A [SEP] (B [SEP]) as the original packs it, truncated to 12."""
    a, _, b = line.partition(" ||| ")
    tokens_a, tokens_b = tokenizer.tokenize(a), tokenizer.tokenize(b) if b else None
    if tokens_b is None:
        return ["[CLS]", *tokens_a[:10], "[SEP]"], [0] * (len(tokens_a[:10]) + 2)
    return (
        ["[CLS]", *tokens_a, "[SEP]", *tokens_b, "[SEP]"],
        [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1),
    )


def test_jsonl_is_the_original_format_with_the_encoder_values(setup, tmp_path):
    root, encoder = setup
    output = tmp_path / "out" / "features.jsonl"
    extract_features(options(setup, output, layers="-1,0"))
    lines = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["linex_index"] for line in lines] == [0, 1, 2, 3]
    assert list(lines[0]) == ["linex_index", "features"]
    assert list(lines[0]["features"][0]) == ["token", "layers"]
    assert list(lines[0]["features"][0]["layers"][0]) == ["index", "values"]
    tokenizer = tokenization.FullTokenizer(str(root / "vocab.txt"))
    for line, text in zip(lines, LINES):
        tokens, types = expected_tokens(tokenizer, text)
        assert [f["token"] for f in line["features"]] == tokens
        ids = np.array([tokenizer.convert_tokens_to_ids(tokens)], np.int32)
        layers = encoder(
            {
                "input_word_ids": ids,
                "input_mask": np.ones_like(ids),
                "input_type_ids": np.array([types], np.int32),
            }
        )["encoder_outputs"]
        for position, feature in enumerate(line["features"]):
            assert [layer["index"] for layer in feature["layers"]] == [-1, 0]
            for layer in feature["layers"]:
                want = np.asarray(layers[layer["index"]])[0, position]
                got = np.array(layer["values"])
                assert len(got) == 16
                np.testing.assert_allclose(got, want, atol=5e-6)
                assert all(v == round(v, 6) for v in layer["values"])


def encoder_layers(encoder, tokenizer, text):
    """The encoder's outputs of every layer `[layers, tokens, hidden]` on a line."""
    tokens, types = expected_tokens(tokenizer, text)
    ids = np.array([tokenizer.convert_tokens_to_ids(tokens)], np.int32)
    layers = encoder(
        {
            "input_word_ids": ids,
            "input_mask": np.ones_like(ids),
            "input_type_ids": np.array([types], np.int32),
        }
    )["encoder_outputs"]
    return np.stack([np.asarray(layer)[0] for layer in layers])


@pytest.mark.parametrize("output_format", ["jsonl", "npz"])
def test_each_layer_index_labels_that_layers_values(setup, tmp_path, output_format):
    """Indexes out of order, from the top and from the bottom: the values
    under each index are the encoder's output of that layer (of 4: -1 is
    layer 3, 1 the second)."""
    root, encoder = setup
    chosen = [-2, -4, -1, 1]
    output = tmp_path / f"features.{output_format}"
    extract_features(
        options(setup, output, layers=",".join(map(str, chosen)), output_format=output_format)
    )
    if output_format == "jsonl":
        lines = [json.loads(line) for line in output.read_text().splitlines()]
        for line in lines:
            for feature in line["features"]:
                assert [layer["index"] for layer in feature["layers"]] == chosen
        values = [
            np.array([[layer["values"] for layer in f["layers"]] for f in line["features"]])
            for line in lines
        ]
    else:
        arrays = np.load(output)
        assert arrays["layers"].tolist() == chosen
        offsets = arrays["offsets"]
        values = [arrays["values"][offsets[i] : offsets[i + 1]] for i in range(len(LINES))]
    tokenizer = tokenization.FullTokenizer(str(root / "vocab.txt"))
    for text, got in zip(LINES, values):
        layers = encoder_layers(encoder, tokenizer, text)
        assert got.shape == (layers.shape[1], len(chosen), 16)
        for k, index in enumerate(chosen):
            np.testing.assert_allclose(
                got[:, k], layers[index], atol=1e-5, err_msg=f"layer {index}"
            )
        # Any two layers differ by 100 times that: a mix-up shows.
        assert min(np.abs(layers[i] - layers[j]).max() for i in range(4) for j in range(i)) > 1e-3


def test_npz_holds_the_same_values_as_jsonl(setup, tmp_path):
    extract_features(options(setup, tmp_path / "f.jsonl"))
    extract_features(options(setup, tmp_path / "f.npz", output_format="npz"))
    lines = [json.loads(line) for line in (tmp_path / "f.jsonl").read_text().splitlines()]
    arrays = np.load(tmp_path / "f.npz")
    assert arrays["layers"].tolist() == [-1, -2, -3, -4]
    offsets = arrays["offsets"]
    assert offsets.tolist() == np.cumsum([0] + [len(line["features"]) for line in lines]).tolist()
    for i, line in enumerate(lines):
        rows = slice(offsets[i], offsets[i + 1])
        assert arrays["tokens"][rows].tolist() == [f["token"] for f in line["features"]]
        want = [[layer["values"] for layer in f["layers"]] for f in line["features"]]
        np.testing.assert_allclose(arrays["values"][rows], want, atol=5e-7)
    assert not list(tmp_path.glob("*tmp*")) and not list(tmp_path.glob("*.tf_record"))


def test_bad_inputs(setup, tmp_path):
    root, _ = setup
    with pytest.raises(InputError, match="--layers: 4 is not a layer of a 4-layer model"):
        extract_features(options(setup, tmp_path / "x.jsonl", layers="4"))
    with pytest.raises(InputError, match="--output_format must be one of jsonl, npz"):
        extract_features(options(setup, tmp_path / "x.jsonl", output_format="csv"))
    config = BertConfig.from_json_file(str(root / "bert_config.json"))
    head_only = BertClassifier(config, 2)
    weights = {
        name: np.asarray(v)
        for name, v in checkpoints.tf1_variable_map(head_only).items()
        if not name.startswith("bert/encoder/layer_3")
    }
    checkpoints.write_checkpoint(str(tmp_path / "partial.ckpt"), weights)
    with pytest.raises(CheckpointError, match="lacks encoder variables: bert/encoder/layer_3"):
        extract_features(
            options(setup, tmp_path / "x.jsonl", init_checkpoint=str(tmp_path / "partial.ckpt"))
        )
