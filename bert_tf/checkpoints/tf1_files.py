"""TensorFlow checkpoint files (`<prefix>.index` + `<prefix>.data-*`), the
original BERT's format: found by prefix or folder, read as `{name: ndarray}`,
checked for a copy cut short, and written atomically. Model Garden's
object-based checkpoints are read through the same files (`model_garden`)."""

import contextlib
import os
import re

import numpy as np
import tensorflow as tf

from bert_tf import files
from bert_tf.checkpoints.name_map import tf1_variable_map
from bert_tf.errors import CheckpointError
from bert_tf.files import atomic_output


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


def check_data_files(prefix):
    """Raises UnreadableCheckpointError when the data files of the checkpoint
    at `prefix` hold fewer bytes than the numbers its index lists: a copy cut
    short (a full disk, an interrupted download) that would otherwise fail
    only when loaded."""
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
