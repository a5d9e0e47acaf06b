"""Checkpoint interop through one canonical form: `{original TF1 name: ndarray}`.

Every foreign format (Google's TF1 `bert_model.ckpt`, a Model Garden TF2
`BertEncoder` checkpoint, a Hugging Face `config.json` + `model.safetensors`
folder) is read into that form, and every model is loaded from it through
`tf1_variable_map`, so there is a single name map to get right.

The package also holds `loading` (any checkpoint into a task model: config,
weights, vocab, casing) and `surgery` (a checkpoint's vocabulary extended).
"""

import contextlib
import dataclasses
import json
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import files, initializers
from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.files import atomic_output

# --------------------------------------------------------------------------
# The name map: TF1 names -> this package's Keras variables.


def _encoder_map(encoder):
    emb = encoder.embeddings
    names = {
        "bert/embeddings/word_embeddings": emb.word_embeddings,
        "bert/embeddings/token_type_embeddings": emb.token_type_embeddings,
        "bert/embeddings/position_embeddings": emb.position_embeddings,
        "bert/embeddings/LayerNorm/gamma": emb.layer_norm.gamma,
        "bert/embeddings/LayerNorm/beta": emb.layer_norm.beta,
        "bert/pooler/dense/kernel": encoder.pooler.kernel,
        "bert/pooler/dense/bias": encoder.pooler.bias,
    }
    for i, block in enumerate(encoder.transformer_layers):
        prefix = f"bert/encoder/layer_{i}/"
        parts = {
            "attention/self/query": block.attention.query,
            "attention/self/key": block.attention.key,
            "attention/self/value": block.attention.value,
            "attention/output/dense": block.attention_output,
            "intermediate/dense": block.intermediate,
            "output/dense": block.output_dense,
        }
        for scope, layer in parts.items():
            names[f"{prefix}{scope}/kernel"] = layer.kernel
            names[f"{prefix}{scope}/bias"] = layer.bias
        for scope, norm in (
            ("attention/output/LayerNorm", block.attention_layer_norm),
            ("output/LayerNorm", block.output_layer_norm),
        ):
            names[f"{prefix}{scope}/gamma"] = norm.gamma
            names[f"{prefix}{scope}/beta"] = norm.beta
    return names


def tf1_variable_map(model):
    """Returns `{original TF1 variable name: keras.Variable}` for a bert_tf model.

    Supports BertEncoder and every task model (the encoder's names plus the
    model's own `tf1_head_variables()`). Shapes are the original's, so values
    move between the two without any transposition.
    """
    if hasattr(model, "tf1_head_variables"):
        return {**_encoder_map(model.encoder), **model.tf1_head_variables()}
    if hasattr(model, "transformer_layers"):  # a BertEncoder
        return _encoder_map(model)
    raise TypeError(f"no TF1 name map for {type(model).__name__}")


# --------------------------------------------------------------------------
# Loading canonical weights into a model.

# Training state that the original's checkpoints carry besides the weights.
_TRAINING_STATE = re.compile(
    r"^(optimizer|model_state)/|(^|/)(global_step|adam_[mv]|Adam(_\d+)?|"
    r"beta[12]_power|loss_scale|good_steps)$"
)


def is_training_state(name):
    """Whether checkpoint variable `name` is optimizer or step state (an Adam
    slot, `global_step`, ...), not a model weight."""
    return bool(_TRAINING_STATE.search(name))


@dataclasses.dataclass
class LoadReport:
    """What `load_weights` did: the TF1 names loaded, left initialised (with
    the Keras paths of variables that have no TF1 name, e.g. a feature-based
    tagger's BiLSTM), and the checkpoint's names the model did not use."""

    loaded: list
    left_initialised: list
    unused: list


def _list(names, limit=8):
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f" ... and {len(names) - limit} more" if len(names) > limit else "")


def load_weights(model, weights, strict=True, source="checkpoint"):
    """Assigns canonical `{tf1_name: ndarray}` weights to a bert_tf model.

    Strict (default): any model variable missing from `weights`, any
    checkpoint variable the model does not have, and any shape mismatch is a
    CheckpointError naming each variable. `strict=False` allows partial
    loading (e.g. encoder weights into a classifier whose head is new); shape
    mismatches remain errors. Returns a LoadReport.
    """
    variables = tf1_variable_map(model)
    weights = {k: v for k, v in weights.items() if not is_training_state(k)}
    missing = sorted(set(variables) - set(weights))
    unused = sorted(set(weights) - set(variables))
    wrong = [
        f"{name} {list(np.shape(weights[name]))} (model {list(var.shape)})"
        for name, var in variables.items()
        if name in weights and tuple(np.shape(weights[name])) != tuple(var.shape)
    ]
    problems = []
    if wrong:
        problems.append(f"wrong shape: {_list(wrong)}")
    if strict and missing:
        problems.append(f"missing from the checkpoint: {_list(missing)}")
    if strict and unused:
        problems.append(f"not in the model: {_list(unused)}")
    if problems:
        hint = "" if wrong else " (strict=False loads what matches)"
        raise CheckpointError(f"{source} does not match the model: {'; '.join(problems)}{hint}")
    for name, var in variables.items():
        if name in weights:
            var.assign(np.asarray(weights[name], dtype=var.dtype))
    loaded = sorted(set(variables) & set(weights))
    initializers.mark_assigned(variables[name] for name in loaded)
    named = {id(var) for var in variables.values()}
    missing += [var.path for var in model.weights if id(var) not in named]
    if missing:
        logging.info("%s: left initialised: %s", source, ", ".join(missing))
    if unused:
        logging.info("%s: not used by the model: %s", source, ", ".join(unused))
    return LoadReport(loaded=loaded, left_initialised=missing, unused=unused)


# --------------------------------------------------------------------------
# Readers into the canonical form.


def resolve_checkpoint_prefix(path):
    """Maps a checkpoint prefix or a directory holding one to its prefix."""
    if files.exists(path + ".index"):
        return path
    if files.isdir(path):
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        prefix = os.path.join(path, "bert_model.ckpt")
        if files.exists(prefix + ".index"):
            return prefix
    elif files.exists(path):
        raise CheckpointError(_file_for_a_checkpoint(path))
    raise CheckpointError(
        f"no checkpoint at {path!r} (expected the prefix of "
        f"'{os.path.basename(path) or 'x'}.index', or a directory with one)"
    )


def _file_for_a_checkpoint(path):
    """What to pass instead of the file `path`, which is not a checkpoint prefix."""
    folder = os.path.dirname(path) or "."
    if path.endswith((".safetensors", ".bin", ".h5")):
        return (
            f"{path!r} is a weights file; pass its folder {folder!r} (a Hugging Face "
            "folder: config.json, model.safetensors, vocab.txt)"
        )
    if path.endswith(".keras"):
        return (
            f"{path!r} is a Keras model file; checkpoints are read by prefix: write one with "
            f"bert_tf.checkpoints.save_tf1_checkpoint(keras.saving.load_model({path!r}), "
            "'<folder>/model.ckpt') and pass '<folder>/model.ckpt'"
        )
    prefix = re.sub(r"\.(index|data-\d+-of-\d+)$", "", path)
    if prefix != path and files.exists(prefix + ".index"):
        return f"{path!r} is a file of the checkpoint {prefix!r}: pass that prefix"
    return f"{path!r} is a file, not a checkpoint (expected the prefix of '<prefix>.index')"


class UnreadableCheckpointError(CheckpointError):
    """The checkpoint's files are missing, truncated or corrupt."""


@contextlib.contextmanager
def _read_errors_name(prefix):
    """A checkpoint that does not read (truncated, corrupt) becomes a
    CheckpointError naming it and what is wrong."""
    try:
        yield
    except (tf.errors.OpError, IndexError, ValueError) as e:
        reason = getattr(e, "message", None) or str(e) or type(e).__name__
        raise UnreadableCheckpointError(
            f"checkpoint {prefix} does not read: {reason.splitlines()[0]}"
        ) from None


def variable_shapes(prefix):
    """`{name: shape}` of the checkpoint at `prefix` (read from its index)."""
    with _read_errors_name(prefix):
        return tf.train.load_checkpoint(prefix).get_variable_to_shape_map()


def read_tensors(prefix, names=None):
    """`{name: ndarray}` of the checkpoint at `prefix`: all of it, or `names`."""
    with _read_errors_name(prefix):
        reader = tf.train.load_checkpoint(prefix)
        names = reader.get_variable_to_shape_map() if names is None else names
        return {name: reader.get_tensor(name) for name in names}


def read_tf1_checkpoint(path):
    """Reads an original TF1 checkpoint (e.g. `bert_model.ckpt`) as `{name: ndarray}`."""
    return read_tensors(resolve_checkpoint_prefix(path))


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
    weights_path = os.path.join(folder, "model.safetensors")
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


def checkpoint_format(path):
    """Returns 'huggingface', 'model_garden' or 'tf1' for a checkpoint path."""
    if os.path.isfile(os.path.join(path, "model.safetensors")):
        return "huggingface"
    names = variable_shapes(resolve_checkpoint_prefix(path))
    if any(_MG_KEY.match(n) for n in names):
        return "model_garden"
    return "tf1"


def check_complete(path):
    """Raises UnreadableCheckpointError, before any work, when the data files
    of the checkpoint at `path` (not a Hugging Face folder) hold fewer bytes
    than the numbers its index lists: a copy cut short (a full disk, an
    interrupted download) that would otherwise fail only when loaded."""
    if checkpoint_format(path) == "huggingface":
        return
    prefix = resolve_checkpoint_prefix(path)
    with _read_errors_name(prefix):
        reader = tf.train.load_checkpoint(prefix)
        shapes, dtypes = reader.get_variable_to_shape_map(), reader.get_variable_to_dtype_map()
    listed = sum(
        int(np.prod(shape)) * dtypes[name].size
        for name, shape in shapes.items()
        if dtypes[name] != tf.string
    )
    held = sum(files.size_and_mtime(data)[0] for data in files.matching(prefix + ".data-*"))
    if held < listed:
        raise UnreadableCheckpointError(
            f"checkpoint {prefix} does not read: its data files hold {held} bytes of the "
            f"{listed} its index lists (a copy cut short?)"
        )


def check_fits_config(path, config, source):
    """Raises CheckpointError naming each mismatch unless the shapes of an
    original-format checkpoint's embeddings and first layer fit `config`
    (its vocab, hidden, intermediate, position and type sizes), read from
    its index before any work. Other formats are checked when loaded."""
    if checkpoint_format(path) != "tf1":
        return
    hidden = config.hidden_size
    expected = {
        "bert/embeddings/word_embeddings": [config.vocab_size, hidden],
        "bert/embeddings/position_embeddings": [config.max_position_embeddings, hidden],
        "bert/embeddings/token_type_embeddings": [config.type_vocab_size, hidden],
        "bert/encoder/layer_0/intermediate/dense/kernel": [hidden, config.intermediate_size],
    }
    shapes = variable_shapes(resolve_checkpoint_prefix(path))
    wrong = [
        f"{name} {list(shapes[name])} (config {shape})"
        for name, shape in expected.items()
        if name in shapes and list(shapes[name]) != shape
    ]
    if wrong:
        raise CheckpointError(f"{path} does not fit {source}: wrong shape: {', '.join(wrong)}")


def read_weights(path):
    """Reads any supported checkpoint into `{tf1_name: ndarray}`."""
    fmt = checkpoint_format(path)
    if fmt == "huggingface":
        return read_hf_folder(path)[1]
    if fmt == "model_garden":
        return read_model_garden_checkpoint(path)
    return read_tf1_checkpoint(path)


def load_checkpoint(model, path, strict=True):
    """Loads a checkpoint of any supported format into a bert_tf model."""
    return load_weights(model, read_weights(path), strict=strict, source=path)


# --------------------------------------------------------------------------
# Writing the original format.


def write_checkpoint(prefix, tensors):
    """Writes `{name: tensor}` as a TF checkpoint at `prefix`, atomically.

    Written to a temporary prefix first and renamed, index last: a crash never
    leaves a half-written checkpoint under `prefix`.
    """
    files.makedirs(os.path.dirname(prefix) or ".")
    names = sorted(tensors)
    with atomic_output(prefix, suffixes=(".data-00000-of-00001", ".index")) as tmp:
        tf.raw_ops.SaveV2(
            prefix=tmp,
            tensor_names=names,
            shape_and_slices=[""] * len(names),
            tensors=[tf.convert_to_tensor(tensors[n]) for n in names],
        )
    return prefix


def save_tf1_checkpoint(model, prefix):
    """Writes the model's weights as an original TF1 checkpoint at `prefix`.

    The names and shapes are the original's (`bert/...`, `cls/...`), so
    google-research/bert and other converters read it.
    """
    return write_checkpoint(prefix, tf1_variable_map(model))
