"""Hugging Face BERT folders (`config.json` + `model.safetensors`) read as a
`BertConfig` and TF1-named arrays."""

import json
import os
import re

from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError

WEIGHTS_FILE = "model.safetensors"


def is_hugging_face_folder(path):
    """Whether `path` is a folder holding Hugging Face weights (`model.safetensors`)."""
    return os.path.isfile(os.path.join(path, WEIGHTS_FILE))


_HF_RULES = [
    (r"embeddings\.(word|position|token_type)_embeddings\.weight", r"embeddings/\1_embeddings"),
    (r"(.*)\.LayerNorm\.(weight|gamma)", r"\1/LayerNorm/gamma"),
    (r"(.*)\.LayerNorm\.(bias|beta)", r"\1/LayerNorm/beta"),
    (r"cls\.predictions\.bias", r"cls/predictions/output_bias"),
    (r"cls\.seq_relationship\.weight", r"cls/seq_relationship/output_weights"),
    (r"cls\.seq_relationship\.bias", r"cls/seq_relationship/output_bias"),
    (r"(.*)\.weight", r"\1/kernel"),
    (r"(.*)\.bias", r"\1/bias"),
]
# Derived or duplicated tensors of a Hugging Face BERT (tied decoder, buffers).
_HF_SKIPPED = re.compile(r"(position_ids|cls\.predictions\.decoder\.(weight|bias))$")


def _hf_tf1_name(key):
    key = key[len("bert.") :] if key.startswith("bert.") else key
    for pattern, replacement in _HF_RULES:
        if re.fullmatch(pattern, key):
            name = re.sub(pattern, replacement, key).replace(".", "/")
            name = re.sub(r"/layer/(\d+)/", r"/layer_\1/", name)
            return name if name.startswith("cls/") else "bert/" + name
    return key


def read_hf_folder(folder):
    """Reads a Hugging Face BERT folder -> `(BertConfig, {tf1_name: ndarray})`."""
    from safetensors.numpy import load_file

    config_path = os.path.join(folder, "config.json")
    weights_path = os.path.join(folder, WEIGHTS_FILE)
    for path in (config_path, weights_path):
        if not os.path.isfile(path):
            raise CheckpointError(
                f"Hugging Face folder {folder!r}: missing {os.path.basename(path)}"
            )
    with open(config_path, encoding="utf-8") as f:
        config = BertConfig.from_hf_dict(json.load(f), source=config_path)
    weights = {}
    for key, value in load_file(weights_path).items():
        if _HF_SKIPPED.search(key):
            continue
        name = _hf_tf1_name(key)
        # torch Linear weights are [out, in]; TF1 dense kernels are [in, out].
        weights[name] = value.T if name.endswith("/kernel") else value
    return config, weights
