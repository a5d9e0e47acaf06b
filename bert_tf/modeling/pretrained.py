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
    model, when present, owns `encoder`.

    Attributes:
        config: The checkpoint's `BertConfig`.
        encoder: The `BertEncoder` with the checkpoint's `bert/` weights.
        pretraining_model: The `BertPretrainingModel` around `encoder`, with
            the masked LM and next sentence heads, or `None`.

    Examples:
        >>> import os, tempfile
        >>> import bert_tf
        >>> from bert_tf import checkpoints
        >>> folder = tempfile.mkdtemp()
        >>> config = bert_tf.preset("bert_tiny", vocab_size=100)
        >>> config.to_json_file(os.path.join(folder, "bert_config.json"))
        >>> encoder = bert_tf.BertEncoder(config)
        >>> _ = checkpoints.save_tf1_checkpoint(encoder, os.path.join(folder, "bert_model.ckpt"))
        >>> bert = bert_tf.from_pretrained(folder)
        >>> bert.config == config, bert.pretraining_model is None
        (True, True)
    """

    config: BertConfig
    encoder: BertEncoder
    pretraining_model: BertPretrainingModel | None


def from_pretrained(init_checkpoint, bert_config_file=None):
    """Loads a released BERT into Keras models.

    Loading is strict: every variable must match.

    Args:
        init_checkpoint: An original TF1 checkpoint prefix (e.g.
            `uncased_L-12_H-768_A-12/bert_model.ckpt`) or its directory, a
            Model Garden TF2 encoder checkpoint, or a Hugging Face folder
            (`config.json` + `model.safetensors`).
        bert_config_file: The model's config; by default the
            `bert_config.json` (or a Hugging Face folder's `config.json`)
            beside the checkpoint.

    Returns:
        A `PretrainedBert`: the config, the `BertEncoder` and, when the
            checkpoint has the `cls/` heads, the `BertPretrainingModel`.

    Raises:
        CheckpointError: `init_checkpoint` holds no checkpoint, no config is
            beside it and none is given, or its variables do not match the
            config's model (missing, unexpected or of another shape).
        ConfigError: The config file is missing or invalid.

    Examples:
        >>> import os, tempfile
        >>> import bert_tf
        >>> from bert_tf import checkpoints
        >>> folder = tempfile.mkdtemp()  # a release folder, as Google's
        >>> config = bert_tf.preset("bert_tiny", vocab_size=100)
        >>> config.to_json_file(os.path.join(folder, "bert_config.json"))
        >>> model = bert_tf.BertPretrainingModel(config)
        >>> _ = checkpoints.save_tf1_checkpoint(model, os.path.join(folder, "bert_model.ckpt"))
        >>> bert = bert_tf.from_pretrained(os.path.join(folder, "bert_model.ckpt"))
        >>> type(bert.encoder).__name__, type(bert.pretraining_model).__name__
        ('BertEncoder', 'BertPretrainingModel')
        >>> bert.encoder is bert.pretraining_model.encoder
        True
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
