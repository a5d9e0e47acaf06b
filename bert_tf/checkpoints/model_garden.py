"""Model Garden's TF2 `BertEncoder` checkpoints (object-based: `BertEncoder`
and `BertEncoderV2` layouts) read into TF1-named arrays."""

import re

from bert_tf.checkpoints.tf1_files import read_tensors, resolve_checkpoint_prefix
from bert_tf.errors import CheckpointError

# Model Garden transformer-layer attributes -> TF1 scope under layer_N.
_MG_BLOCK = {
    "_attention_layer/_query_dense": "attention/self/query",
    "_attention_layer/_key_dense": "attention/self/key",
    "_attention_layer/_value_dense": "attention/self/value",
    "_attention_layer/_output_dense": "attention/output/dense",
    "_attention_layer_norm": "attention/output/LayerNorm",
    "_intermediate_dense": "intermediate/dense",
    "_output_dense": "output/dense",
    "_output_layer_norm": "output/LayerNorm",
}
_MG_KEY = re.compile(
    r"^(?P<root>.*?)(?P<owner>layer_with_weights-\d+|_\w+_layer|"
    r"_transformer_layers/\d+)/(?P<rest>.+)/\.ATTRIBUTES/VARIABLE_VALUE$"
)


def is_model_garden(names):
    """Whether any of `names` (a checkpoint's variable names) is a Model
    Garden encoder variable's (object-based: `.../.ATTRIBUTES/VARIABLE_VALUE`)."""
    return any(_MG_KEY.match(name) for name in names)


def _model_garden_name(owner, rest, num_layers):
    """Maps one Model Garden encoder variable to its TF1 name, or None."""
    index = int(owner.split("-")[1]) if owner.startswith("layer_with_weights-") else None
    embeddings = {
        "_embedding_layer": 0,
        "_position_embedding_layer": 1,
        "_type_embedding_layer": 2,
        "_embedding_norm_layer": 3,
        "_pooler_layer": 4 + num_layers,
    }
    if index is None:
        if owner.startswith("_transformer_layers/"):
            index = 4 + int(owner.split("/")[1])
        else:
            index = embeddings.get(owner)
    if index is None:
        return None
    top = {
        0: ("bert/embeddings/word_embeddings", {"embeddings": ""}),
        1: ("bert/embeddings/position_embeddings", {"embeddings": ""}),
        2: ("bert/embeddings/token_type_embeddings", {"embeddings": ""}),
        3: ("bert/embeddings/LayerNorm", {"gamma": "/gamma", "beta": "/beta"}),
        4 + num_layers: ("bert/pooler/dense", {"kernel": "/kernel", "bias": "/bias"}),
    }
    if index in top:
        scope, leaves = top[index]
        return scope + leaves[rest] if rest in leaves else None
    scope, leaf = rest.rsplit("/", 1)
    if scope not in _MG_BLOCK:
        return None
    return f"bert/encoder/layer_{index - 4}/{_MG_BLOCK[scope]}/{leaf}"


def read_model_garden_checkpoint(path):
    """Reads a Model Garden TF2 `BertEncoder` checkpoint as TF1-named arrays.

    Both the functional `BertEncoder` and `BertEncoderV2` layouts are read,
    saved as `tf.train.Checkpoint(encoder=...)` (any root attribute name).
    Only encoder weights are returned.
    """
    raw = read_tensors(resolve_checkpoint_prefix(path))
    matches = {key: _MG_KEY.match(key) for key in raw}
    roots = {
        m["root"]
        for m in matches.values()
        if m
        and m["owner"] in ("layer_with_weights-0", "_embedding_layer")
        and m["rest"] == "embeddings"
    }
    if len(roots) != 1:
        raise CheckpointError(f"{path}: expected one Model Garden BertEncoder, found {len(roots)}")
    root = roots.pop()
    matches = {key: m for key, m in matches.items() if m and m["root"] == root}
    blocks = {
        m["owner"]
        for m in matches.values()
        if m["owner"].startswith(("layer_with_weights-", "_transformer_layers/"))
    }
    functional = any(b.startswith("layer_with_weights-") for b in blocks)
    num_layers = len(blocks) - 5 if functional else len(blocks)
    weights = {}
    for key, m in matches.items():
        name = _model_garden_name(m["owner"], m["rest"], num_layers)
        if name is None:
            continue
        value = raw[key]
        if value.ndim == 3:  # [hidden, heads, head_size] or [heads, head_size, hidden]
            value = (
                value.reshape(value.shape[0], -1)
                if "/self/" in name
                else value.reshape(-1, value.shape[-1])
            )
        elif value.ndim == 2 and name.endswith("/bias"):  # [heads, head_size]
            value = value.reshape(-1)
        weights[name] = value
    return weights
