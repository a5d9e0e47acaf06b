"""Which format a checkpoint path holds (original TF1, Model Garden TF2,
Hugging Face), and what works on any of them: reading it as canonical
`{tf1_name: ndarray}` weights, loading it into a model, and the checks that
run before any work."""

from bert_tf.checkpoints.assign import load_weights
from bert_tf.checkpoints.hugging_face import is_hugging_face_folder, read_hf_folder
from bert_tf.checkpoints.model_garden import is_model_garden, read_model_garden_checkpoint
from bert_tf.checkpoints.tf1_files import (
    check_data_files,
    read_tf1_checkpoint,
    resolve_checkpoint_prefix,
    variable_shapes,
)
from bert_tf.errors import CheckpointError


def checkpoint_format(path):
    """Returns 'huggingface', 'model_garden' or 'tf1' for a checkpoint path."""
    if is_hugging_face_folder(path):
        return "huggingface"
    if is_model_garden(variable_shapes(resolve_checkpoint_prefix(path))):
        return "model_garden"
    return "tf1"


def check_complete(path):
    """Raises UnreadableCheckpointError, before any work, when the data files
    of the checkpoint at `path` (not a Hugging Face folder) hold fewer bytes
    than the numbers its index lists: a copy cut short (a full disk, an
    interrupted download) that would otherwise fail only when loaded."""
    if checkpoint_format(path) == "huggingface":
        return
    check_data_files(resolve_checkpoint_prefix(path))


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
