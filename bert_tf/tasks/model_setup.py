"""The model a run's options name (`tasks.options.ModelOptions`): its config
(beside `--init_checkpoint` unless `--bert_config_file`), vocab and casing,
the checks of those files against each other before any work, the batch
lengths under `--dynamic_padding`, and the warm start from `--init_checkpoint`.
Used by every task and by feature extraction."""

import dataclasses

from absl import logging

from bert_tf import checkpoints
from bert_tf.accelerators import is_tpu_strategy
from bert_tf.config import CONFIG_FILE_NAMES, BertConfig, config_file_beside
from bert_tf.errors import InputError
from bert_tf.options import PADDING_MULTIPLE, XLA_PAD_MULTIPLE
from bert_tf.text import model_text, tokenization


def config_file_of(options):
    """`--bert_config_file`, else the config beside `--init_checkpoint` (a
    release or Hugging Face folder, or the prefix of a checkpoint in one)."""
    if options.model.bert_config_file:
        return options.model.bert_config_file
    checkpoint = options.model.init_checkpoint
    if checkpoint:
        path = config_file_beside(checkpoint)
        if path is None:
            raise InputError(
                f"--bert_config_file is needed: --init_checkpoint={checkpoint} has "
                f"no {' or '.join(CONFIG_FILE_NAMES)} beside it"
            )
        return path
    raise InputError("--bert_config_file is needed (or an --init_checkpoint folder with one)")


def config_source(options):
    """How to name the config in a message: the flag when it was given."""
    if options.model.bert_config_file:
        return f"--bert_config_file {options.model.bert_config_file}"
    return config_file_of(options)


def with_model_text(options, default_lower_case=True):
    """`options` with `vocab_file` and `do_lower_case` resolved as
    `model_text.text_settings` does: the vocab beside `--init_checkpoint`
    unless given, the casing its folder says unless given (and checked
    against it when given), else `default_lower_case`."""
    vocab_file, do_lower_case = model_text.text_settings(
        options.model.vocab_file,
        options.model.do_lower_case,
        options.model.init_checkpoint,
        default_lower_case,
        options.model.allow_vocab_mismatch,
    )
    model = dataclasses.replace(options.model, vocab_file=vocab_file, do_lower_case=do_lower_case)
    return dataclasses.replace(options, model=model)


def text_settings(options):
    """The `TextSettings` of `options` whose text side `with_model_text`
    resolved: what every feature file and export of the run is made with."""
    model = options.model
    return model_text.TextSettings(model.vocab_file, model.do_lower_case, model.max_seq_length)


def load_bert_config(options):
    """Reads the model's config (`config_file_of`) and checks
    `--max_seq_length` against it."""
    config = BertConfig.from_json_file(config_file_of(options))
    _check_length_fits(options, config, config_source(options))
    return config


def _check_length_fits(options, config, source):
    if options.model.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={options.model.max_seq_length} is larger than "
            f"max_position_embeddings={config.max_position_embeddings} of {source}"
        )


def check_model_fits(options, config, source):
    """Checks `--max_seq_length` and `--vocab_file` against a `config` that
    did not come from `ModelOptions` (`source` names it in the message)."""
    _check_length_fits(options, config, source)
    _check_vocab_fits(options, config, source)


def load_model_config(options):
    """Reads the model's config and checks the files `ModelOptions` name
    against it: `--max_seq_length`, the vocab's size, the shapes in
    `--init_checkpoint`'s index. Returns the config."""
    config = load_bert_config(options)
    _check_vocab_fits(options, config, config_source(options))
    if options.model.init_checkpoint:
        checkpoints.check_complete(options.model.init_checkpoint)
        checkpoints.check_fits_config(options.model.init_checkpoint, config, config_source(options))
    return config


def _check_vocab_fits(options, config, source):
    """A vocab with more tokens than the model's embedding rows would fail deep
    in the model on the first unknown id; say so before any work."""
    if not options.model.vocab_file:
        return
    size = len(tokenization.load_vocab(options.model.vocab_file))
    if size > config.vocab_size:
        raise InputError(
            f"--vocab_file {options.model.vocab_file} has {size} tokens, more than "
            f"vocab_size={config.vocab_size} of {source}: "
            "they are not the same model's"
        )


def length_multiple(options, strategy, jit_compile):
    """--padding_multiple (or its default) under --dynamic_padding off TPUs, else None."""
    if not options.model.dynamic_padding:
        return None
    if is_tpu_strategy(strategy):
        logging.info("--dynamic_padding is off under TPUStrategy: static shapes")
        return None
    if options.model.padding_multiple is not None:
        return options.model.padding_multiple
    return XLA_PAD_MULTIPLE if jit_compile else PADDING_MULTIPLE


def parse_layers(value):
    """`--layers` "-1,-2" -> (-1, -2) (negative: from the top)."""
    try:
        return tuple(int(part) for part in value.split(","))
    except ValueError:
        raise InputError(f"--layers={value!r} must be comma-separated integers") from None


def warm_start(model, init_checkpoint):
    """Loads `--init_checkpoint` (original TF1, bert_tf, Model Garden or
    Hugging Face) into `model`; variables it lacks keep their initial values,
    as with the original's `init_from_checkpoint`."""
    report = checkpoints.load_checkpoint(model, init_checkpoint, strict=False)
    if not report.loaded:
        raise InputError(f"--init_checkpoint={init_checkpoint}: no variable matches the model")
    logging.info(
        "warm start from %s: %d variables loaded, %d left initialised%s",
        init_checkpoint,
        len(report.loaded),
        len(report.left_initialised),
        f" ({', '.join(report.left_initialised)})" if report.left_initialised else "",
    )
    return report
