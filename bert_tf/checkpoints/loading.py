"""Loading any checkpoint the scripts take into a model class: its config,
weights, vocab and casing (behind every model's `from_pretrained`)."""

from absl import logging

from bert_tf.checkpoints.assign import load_weights
from bert_tf.checkpoints.formats import checkpoint_format, read_weights
from bert_tf.config import CONFIG_FILE_NAMES, BertConfig, config_file_beside
from bert_tf.errors import CheckpointError
from bert_tf.initializers import deferred_draws
from bert_tf.text.graph_tokenizer import BertTokenizer
from bert_tf.text.model_text import resolve_lower_case, vocab_file_beside
from bert_tf.text.preprocessor import BertPreprocessor, check_max_seq_length

DEFAULT_MAX_SEQ_LENGTH = 128  # the scripts' --max_seq_length


def pretrained_config(path, bert_config_file=None):
    """The `BertConfig` a model of the checkpoint at `path` is built as:
    `bert_config_file` when given (the weights it does not use are then left
    out), else the config beside the checkpoint (a Hugging Face folder's
    `config.json`), as the scripts' `--bert_config_file`. A `path` that holds
    no checkpoint is a CheckpointError saying what it is instead."""
    checkpoint_format(path)  # finds the checkpoint, or says why not
    bert_config_file = bert_config_file or config_file_beside(path)
    if bert_config_file is None:
        raise CheckpointError(
            f"no {' or '.join(CONFIG_FILE_NAMES)} next to {path!r}; pass bert_config_file"
        )
    return BertConfig.from_json_file(bert_config_file)


def read_pretrained(path, bert_config_file=None):
    """`(BertConfig, {tf1_name: ndarray})` of any checkpoint the scripts take:
    a Google release folder or checkpoint prefix, a run's output folder (its
    newest `model.ckpt-N`), a Model Garden checkpoint or a Hugging Face folder;
    the config is `pretrained_config`'s."""
    return pretrained_config(path, bert_config_file), read_weights(path)


def load_pretrained(
    model_class,
    path,
    *,
    bert_config_file=None,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    **model_arguments,
):
    """`model_class(config, **model_arguments)` with the weights at `path`
    (any checkpoint the scripts take, see `read_pretrained`).

    The encoder must load whole; a head the checkpoint lacks (a new
    classifier) starts initialised as the original initialises it, except the
    pre-training model's, which must be there. `model.load_report` says what
    was loaded, left initialised and unused. With a vocab (`vocab_file`, else
    the `vocab.txt` beside the checkpoint) a task model (not the bare
    encoder) gets a `BertPreprocessor` of `max_seq_length`: 2 to the config's
    `max_position_embeddings` (checked first), by default 128 or the
    positions when fewer. `bert_config_file` is the config the model is
    built as (`pretrained_config`). `do_lower_case`
    defaults to what the folder says (Hugging Face's tokenizer config, a
    Google release's name), else True; given, it must not contradict them
    (as the scripts' flag, `model_text.resolve_lower_case`).
    """
    config = pretrained_config(path, bert_config_file)
    if max_seq_length is None:
        max_seq_length = min(DEFAULT_MAX_SEQ_LENGTH, config.max_position_embeddings)
    check_max_seq_length(max_seq_length, config.max_position_embeddings)
    weights = read_weights(path)
    with deferred_draws() as draws:
        model = model_class(config, **model_arguments)
    report = load_weights(model, weights, strict=False, source=path)
    draws.finish()
    required = ("bert/", *getattr(model_class, "required_heads", ()))
    missing = [name for name in report.left_initialised if name.startswith(required)]
    if missing:
        raise CheckpointError(
            f"{path} lacks {len(missing)} variables that {model_class.__name__} needs: "
            f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''}"
        )
    logging.info(
        "%s: loaded %d variables into %s; newly initialised: %s",
        path,
        len(report.loaded),
        model_class.__name__,
        ", ".join(report.left_initialised) or "none",
    )
    model.load_report = report
    vocab_file = vocab_file or vocab_file_beside(path)
    if hasattr(model, "preprocessor") and vocab_file:
        do_lower_case = resolve_lower_case(do_lower_case, path)
        tokenizer = BertTokenizer(vocab_file, do_lower_case, name="tokenizer")
        model.preprocessor = BertPreprocessor(tokenizer, max_seq_length, name="preprocessor")
    return model
