"""Set-up shared by the task entry points: strategy, precision, model warm start."""

import contextlib

import keras
from absl import logging

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.training import distribution


def load_bert_config(bert_config_file, max_seq_length):
    """Reads `--bert_config_file` and checks `--max_seq_length` against it."""
    config = BertConfig.from_json_file(bert_config_file)
    if max_seq_length > config.max_position_embeddings:
        raise InputError(f"--max_seq_length={max_seq_length} is larger than "
                         f"max_position_embeddings={config.max_position_embeddings} "
                         f"of {bert_config_file}")
    return config


@contextlib.contextmanager
def training_environment(options):
    """Seeds, builds the strategy and sets the dtype policy for `TrainingOptions`;
    yields the strategy and restores the float32 policy afterwards."""
    distribution.set_seed(options.seed, options.deterministic)
    strategy = distribution.strategy_from_options(options)
    distribution.set_precision_policy(options.dtype, strategy)
    try:
        yield strategy
    finally:
        keras.mixed_precision.set_dtype_policy("float32")


def warm_start(model, init_checkpoint):
    """Loads `--init_checkpoint` (original TF1, bert_tf, Model Garden or
    Hugging Face) into `model`; variables it lacks keep their initial values,
    as with the original's `init_from_checkpoint`."""
    report = checkpoints.load_checkpoint(model, init_checkpoint, strict=False)
    if not report.loaded:
        raise InputError(f"--init_checkpoint={init_checkpoint}: no variable matches the model")
    logging.info("warm start from %s: %d variables loaded, %d left initialised%s",
                 init_checkpoint, len(report.loaded), len(report.left_initialised),
                 f" ({', '.join(report.left_initialised)})" if report.left_initialised else "")
    return report
