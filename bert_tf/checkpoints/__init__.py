"""Checkpoint interop through one canonical form: `{original TF1 name: ndarray}`.

Every foreign format (Google's TF1 `bert_model.ckpt`, a Model Garden TF2
`BertEncoder` checkpoint, a Hugging Face `config.json` + `model.safetensors`
folder) is read into that form, and every model is loaded from it through
`tf1_variable_map`, so there is a single name map to get right.

Its modules: `name_map` (a model's variables by TF1 name), `assign`
(canonical weights into a model: `load_weights`), `tf1_files` (TensorFlow
checkpoint files: read, checked, written), `model_garden` and
`hugging_face` (their formats read), `formats` (which format a path holds;
`read_weights`, `load_checkpoint` for any), `loading` (any checkpoint into a
task model: config, weights, vocab, casing) and `surgery` (a checkpoint's
vocabulary extended). The names below are importable from the package
itself (`checkpoints.load_checkpoint`).
"""

from bert_tf.checkpoints.assign import LoadReport, load_weights
from bert_tf.checkpoints.formats import (
    check_complete,
    check_fits_config,
    checkpoint_format,
    load_checkpoint,
    read_weights,
)
from bert_tf.checkpoints.hugging_face import read_hf_folder
from bert_tf.checkpoints.model_garden import read_model_garden_checkpoint
from bert_tf.checkpoints.name_map import is_training_state, tf1_variable_map
from bert_tf.checkpoints.tf1_files import (
    UnreadableCheckpointError,
    read_tensors,
    read_tf1_checkpoint,
    resolve_checkpoint_prefix,
    save_tf1_checkpoint,
    variable_shapes,
    write_checkpoint,
)

__all__ = [
    "LoadReport",
    "UnreadableCheckpointError",
    "check_complete",
    "check_fits_config",
    "checkpoint_format",
    "is_training_state",
    "load_checkpoint",
    "load_weights",
    "read_hf_folder",
    "read_model_garden_checkpoint",
    "read_tensors",
    "read_tf1_checkpoint",
    "read_weights",
    "resolve_checkpoint_prefix",
    "save_tf1_checkpoint",
    "tf1_variable_map",
    "variable_shapes",
    "write_checkpoint",
]
