"""`from_pretrained`: one call from released files to ready Keras models."""

import dataclasses
import os

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.errors import CheckpointError
from bert_tf.modeling import BertEncoder, BertPretrainingModel


@dataclasses.dataclass
class PretrainedBert:
    """A loaded checkpoint: its config, the encoder, and the pre-training
    model (`None` when the checkpoint has no `cls/` heads). The pre-training
    model, when present, owns `encoder`."""

    config: BertConfig
    encoder: BertEncoder
    pretraining_model: BertPretrainingModel | None


def _find_config(path):
    directory = path if os.path.isdir(path) else os.path.dirname(path)
    candidate = os.path.join(directory, "bert_config.json")
    if not os.path.isfile(candidate):
        raise CheckpointError(
            f"no bert_config.json next to {path!r}; pass bert_config_file explicitly")
    return candidate


def from_pretrained(init_checkpoint, bert_config_file=None):
    """Loads a released BERT into Keras models.

    `init_checkpoint` is an original TF1 checkpoint prefix (e.g.
    `uncased_L-12_H-768_A-12/bert_model.ckpt`) or its directory, a Model
    Garden TF2 encoder checkpoint, or a Hugging Face folder (`config.json` +
    `model.safetensors`). `bert_config_file` defaults to the
    `bert_config.json` beside the checkpoint (not needed for Hugging Face).
    Loading is strict: every variable must match.
    """
    if checkpoints.checkpoint_format(init_checkpoint) == "huggingface":
        config, weights = checkpoints.read_hf_folder(init_checkpoint)
    else:
        config = BertConfig.from_json_file(bert_config_file or _find_config(init_checkpoint))
        weights = checkpoints.read_weights(init_checkpoint)
    if any(name.startswith("cls/predictions/") for name in weights):
        model = BertPretrainingModel(config)
        checkpoints.load_weights(model, weights, source=init_checkpoint)
        return PretrainedBert(config, model.encoder, model)
    encoder = BertEncoder(config)
    checkpoints.load_weights(encoder, weights, source=init_checkpoint)
    return PretrainedBert(config, encoder, None)
