"""`from_pretrained`: one call from released files to the encoder and, when
the checkpoint has them, the pre-training heads (each task model has its own
`from_pretrained`, `bert_tf.checkpoints.loading`)."""

import dataclasses

from bert_tf import checkpoints
from bert_tf.checkpoints.loading import read_pretrained
from bert_tf.config import BertConfig
from bert_tf.initializers import deferred_draws
from bert_tf.modeling import BertEncoder, BertPretrainingModel


@dataclasses.dataclass
class PretrainedBert:
    """A loaded checkpoint: its config, the encoder, and the pre-training
    model (`None` when the checkpoint has no `cls/` heads). The pre-training
    model, when present, owns `encoder`."""

    config: BertConfig
    encoder: BertEncoder
    pretraining_model: BertPretrainingModel | None


def from_pretrained(init_checkpoint, bert_config_file=None):
    """Loads a released BERT into Keras models.

    `init_checkpoint` is an original TF1 checkpoint prefix (e.g.
    `uncased_L-12_H-768_A-12/bert_model.ckpt`) or its directory, a Model
    Garden TF2 encoder checkpoint, or a Hugging Face folder (`config.json` +
    `model.safetensors`). `bert_config_file` defaults to the
    `bert_config.json` (or a Hugging Face folder's `config.json`) beside the
    checkpoint. Loading is strict: every variable must match.
    """
    config, weights = read_pretrained(init_checkpoint, bert_config_file)
    has_heads = any(name.startswith("cls/predictions/") for name in weights)
    with deferred_draws() as draws:
        model = BertPretrainingModel(config) if has_heads else BertEncoder(config)
    checkpoints.load_weights(model, weights, source=init_checkpoint)
    draws.finish()
    if has_heads:
        return PretrainedBert(config, model.encoder, model)
    return PretrainedBert(config, model, None)
