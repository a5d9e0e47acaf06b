"""Checkpoint surgery: new words and more token types for a trained BERT
(what `extend_checkpoint.py` runs).

New words get ids in one of two ways (`word_ids`):

* `unused`: they replace the vocab's `[unused0]`, `[unused1]`, ... lines in
  file order; the checkpoint is unchanged (those rows were trained as rarely
  seen tokens and are fine-tuned from there).
* `append`: they get ids after the last one; `bert/embeddings/word_embeddings`
  and the masked LM's `cls/predictions/output_bias` grow by a row each,
  initialised by `init`: `truncated_normal` as the original initialises a
  new model (stddev `initializer_range`, redrawn beyond 2 stddev, seeded;
  bias 0, the original's bias initialiser), or `mean`: the mean of the rows
  (and biases) of the WordPiece tokens the old vocab splits the word into
  (`[UNK]` for a word it cannot cover).

`type_vocab_size` grows `bert/embeddings/token_type_embeddings`; each new row
is a copy of row 0, so a new type starts out as segment A (inputs the model
has seen) and fine-tuning sets it apart.

Old ids keep their rows, so old inputs give the same outputs. The result is a
Google-release-style folder (`bert_model.ckpt` with the original's names,
`bert_config.json`, `vocab.txt`), written to a temporary folder and renamed.
"""

import dataclasses
import os
import re

import numpy as np
from absl import logging

from bert_tf import files
from bert_tf.checkpoints.formats import checkpoint_format
from bert_tf.checkpoints.loading import read_pretrained
from bert_tf.checkpoints.name_map import is_training_state
from bert_tf.checkpoints.tf1_files import resolve_checkpoint_prefix, write_checkpoint
from bert_tf.errors import CheckpointError, InputError
from bert_tf.text import tokenization
from bert_tf.text.model_text import VOCAB_FILE_NAME, text_settings

WORD_EMBEDDINGS = "bert/embeddings/word_embeddings"
MLM_OUTPUT_BIAS = "cls/predictions/output_bias"
TOKEN_TYPE_EMBEDDINGS = "bert/embeddings/token_type_embeddings"
CHECKPOINT_NAME = "bert_model.ckpt"
CONFIG_NAME = "bert_config.json"
WORD_IDS = ("unused", "append")
INITS = ("truncated_normal", "mean")
UNUSED_TOKEN = re.compile(r"\[unused\d+\]")


@dataclasses.dataclass
class ExtendReport:
    """What `extend_checkpoint` wrote: the ids of the added words, the words
    skipped as already in the vocab, the added words the tokenizer splits
    (reachable only by id: punctuation, or upper case in an uncased vocab),
    and the new sizes.

    Attributes:
        output_dir: The folder written.
        added: `{word: id}` of the words added.
        known: The words skipped as already in the vocab.
        split: The added words the tokenizer splits.
        vocab_size: The new vocabulary size.
        type_vocab_size: The new number of token types.
    """

    output_dir: str
    added: dict
    known: list
    split: list
    vocab_size: int
    type_vocab_size: int


def read_words(words_file=None, words=()):
    """The words of `words_file` (one a line, stripped, empty lines skipped)
    then `words`, each once, in order. A word with whitespace inside is an
    InputError: the tokenizer never sees one."""
    found = []
    if words_file:
        if not files.exists(words_file):
            raise InputError(f"--words_file: no such file {words_file!r}")
        found += [line.strip() for _, line in tokenization.iter_utf8_lines(words_file)]
    found += [word.strip() for word in words]
    for word in found:
        if len(word.split()) > 1:
            raise InputError(f"new word {word!r} contains whitespace; a token is one word")
    return list(dict.fromkeys(word for word in found if word))


def unused_slots(tokens):
    """The ids of the vocab's `[unused<n>]` tokens, in file order."""
    return [i for i, token in enumerate(tokens) if UNUSED_TOKEN.fullmatch(token)]


def truncated_normal(shape, stddev, seed):
    """Samples of normal(0, stddev), each beyond 2 stddev drawn again: the
    original's `tf.truncated_normal_initializer`, from a seeded numpy generator."""
    rng = np.random.default_rng(seed)
    values = rng.normal(0.0, stddev, shape)
    outside = np.abs(values) > 2 * stddev
    while outside.any():
        values[outside] = rng.normal(0.0, stddev, outside.sum())
        outside = np.abs(values) > 2 * stddev
    return values


def mean_rows(matrix, id_lists):
    """`[len(id_lists), ...]`: for each list of ids, the mean of `matrix`'s rows at them."""
    return np.stack([matrix[ids].mean(axis=0) for ids in id_lists]).astype(matrix.dtype)


def append_words(weights, piece_ids, init, stddev, seed):
    """`weights` with a row per new word added to the word embeddings
    `[vocab, hidden]` and the masked LM output bias `[vocab]` (when there).

    `piece_ids`: per new word, the old ids of its WordPiece tokens (used by
    `init="mean"`). `init="truncated_normal"`: rows from `truncated_normal`
    with `stddev` and `seed`, biases 0.
    """
    embeddings = weights[WORD_EMBEDDINGS]
    grown = dict(weights)
    if init == "mean":
        rows = mean_rows(embeddings, piece_ids)
    else:
        shape = (len(piece_ids), embeddings.shape[1])
        rows = truncated_normal(shape, stddev, seed).astype(embeddings.dtype)
    grown[WORD_EMBEDDINGS] = np.concatenate([embeddings, rows])
    if MLM_OUTPUT_BIAS in weights:
        bias = weights[MLM_OUTPUT_BIAS]
        if init == "mean":
            new_bias = mean_rows(bias, piece_ids)
        else:
            new_bias = np.zeros(len(piece_ids), bias.dtype)
        grown[MLM_OUTPUT_BIAS] = np.concatenate([bias, new_bias])
    return grown


def grow_token_types(weights, type_vocab_size):
    """`weights` with the token type embeddings `[types, hidden]` grown to
    `type_vocab_size` rows, each new one a copy of row 0."""
    types = weights[TOKEN_TYPE_EMBEDDINGS]
    new_rows = np.repeat(types[:1], type_vocab_size - len(types), axis=0)
    return {**weights, TOKEN_TYPE_EMBEDDINGS: np.concatenate([types, new_rows])}


def _check_options(o):
    """The checks that need no model: the choices, the output folder, the type count."""
    if o.word_ids not in WORD_IDS:
        raise InputError(f"--word_ids={o.word_ids}: expected one of {', '.join(WORD_IDS)}")
    if o.init not in INITS:
        raise InputError(f"--init={o.init}: expected one of {', '.join(INITS)}")
    if files.exists(o.output_dir) and not o.overwrite:
        raise InputError(
            f"--output_dir {o.output_dir!r} already exists; pass --overwrite to replace it"
        )
    files.check_output_dir(o.output_dir, "--output_dir")
    if o.type_vocab_size is not None and o.type_vocab_size < 1:
        raise InputError(f"--type_vocab_size={o.type_vocab_size} must be at least 1")


def _checkpoint_format(path):
    """The format of `--init_checkpoint`; a path with no checkpoint is an
    InputError naming the flag."""
    try:
        return checkpoint_format(path)
    except CheckpointError as e:
        raise InputError(f"--init_checkpoint: {e}") from None


def _vocab_lines(vocab_file):
    """The tokens of `vocab_file` in id order."""
    tokenization.load_vocab(vocab_file)  # its checks: the file is there, not empty, UTF-8
    return [line.strip() for _, line in tokenization.iter_utf8_lines(vocab_file)]


def _words_source(o):
    return "--words_file" if o.words_file else "--words"


def _fill_unused(o, vocab_file, tokens, new):
    """Puts `new` into the `[unused*]` lines of `tokens`; returns `{word: id}`."""
    slots = unused_slots(tokens)
    if len(new) > len(slots):
        raise InputError(
            f"{_words_source(o)}: {len(new)} new words but {vocab_file} has only "
            f"{len(slots)} free [unused] slots (--word_ids=append adds rows instead)"
        )
    added = dict(zip(new, slots))
    for word, index in added.items():
        tokens[index] = word
    return added


def _piece_ids(vocab_file, do_lower_case, words):
    """Per word, the ids of its WordPiece tokens under the vocab (a `##`
    word: those of the word without `##`)."""
    tokenizer = tokenization.FullTokenizer(vocab_file, do_lower_case)
    ids = []
    for word in words:
        pieces = tokenizer.tokenize(word.removeprefix("##"))
        if not pieces:
            raise InputError(f"--init=mean: {word!r} has no WordPiece tokens to average")
        ids.append(tokenizer.convert_tokens_to_ids(pieces))
    return ids


def _append(o, vocab_file, do_lower_case, tokens, new, weights, config):
    """Appends `new` to `tokens` and their rows to `weights`; returns
    `(weights, {word: id})`."""
    rows = len(weights[WORD_EMBEDDINGS])
    if len(tokens) != rows:
        raise InputError(
            f"{vocab_file} has {len(tokens)} lines but {o.init_checkpoint} has {rows} word "
            "embedding rows: --word_ids=append needs them equal"
        )
    if o.init == "mean":
        piece_ids = _piece_ids(vocab_file, do_lower_case, new)
    else:
        piece_ids = [[] for _ in new]
    weights = append_words(weights, piece_ids, o.init, config.initializer_range, o.seed)
    tokens += new
    return weights, {word: rows + i for i, word in enumerate(new)}


def _read_model(o):
    """`(config, weights)` of `--init_checkpoint`, without training state."""
    config, weights = read_pretrained(o.init_checkpoint, o.bert_config_file)
    for name in (WORD_EMBEDDINGS, TOKEN_TYPE_EMBEDDINGS):
        if name not in weights:
            raise CheckpointError(f"{o.init_checkpoint} has no {name}")
    return config, {k: v for k, v in weights.items() if not is_training_state(k)}


def extend_checkpoint(options):
    """Adds `options.words_file`'s and `options.words`' words to a model's
    vocab and grows its token types (see the module docstring), writing the
    model to `options.output_dir`.

    Args:
        options: An `ExtendOptions` (extend_checkpoint.py's flags): the
            model, the new words, where their ids come from, the new number
            of token types and the output folder.

    Returns:
        An `ExtendReport`.

    Raises:
        InputError: An option is invalid; `output_dir` exists without
            `overwrite`; there is nothing to do; a new word has whitespace
            inside; the vocab has too few `[unused]` lines for the new words;
            the vocab's length differs from the checkpoint's rows (`append`);
            or `type_vocab_size` is smaller than the model's.
        CheckpointError: `init_checkpoint` holds no checkpoint, or one without
            the word or token type embeddings.

    Examples:
        >>> import os, tempfile
        >>> import bert_tf
        >>> from bert_tf import checkpoints
        >>> folder = tempfile.mkdtemp()
        >>> vocab = ["[PAD]", "[unused0]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie"]
        >>> with open(os.path.join(folder, "vocab.txt"), "w") as f:
        ...     _ = f.write("".join(token + "\\n" for token in vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> config.to_json_file(os.path.join(folder, "bert_config.json"))
        >>> encoder = bert_tf.BertEncoder(config)
        >>> _ = checkpoints.save_tf1_checkpoint(encoder, os.path.join(folder, "bert_model.ckpt"))
        >>> options = bert_tf.ExtendOptions(
        ...     init_checkpoint=folder,
        ...     output_dir=os.path.join(folder, "extended"),
        ...     words=("film", "movie"),
        ...     type_vocab_size=3,
        ... )
        >>> report = bert_tf.extend_checkpoint(options)
        >>> report.added, report.known, report.vocab_size, report.type_vocab_size
        ({'film': 1}, ['movie'], 8, 3)
        >>> sorted(os.listdir(report.output_dir))
        ['bert_config.json', 'bert_model.ckpt.data-00000-of-00001', 'bert_model.ckpt.index', 'vocab.txt']
    """
    o = options
    _check_options(o)
    fmt = _checkpoint_format(o.init_checkpoint)
    # --vocab_file and --do_lower_case, else the model's (True when it says nothing).
    vocab_file, do_lower_case = text_settings(
        o.vocab_file,
        o.do_lower_case,
        o.init_checkpoint,
        allow_vocab_mismatch=o.allow_vocab_mismatch,
    )
    tokens = _vocab_lines(vocab_file)
    words = read_words(o.words_file, o.words)
    if not words and o.type_vocab_size is None:
        raise InputError("nothing to do: pass --words_file, --words or --type_vocab_size")
    in_vocab = set(tokens)
    known = [word for word in words if word in in_vocab]
    new = [word for word in words if word not in in_vocab]
    if known:
        logging.info("already in %s, skipped: %s", vocab_file, " ".join(known))
    added = {}
    if new and o.word_ids == "unused":  # before reading the checkpoint
        added = _fill_unused(o, vocab_file, tokens, new)

    config, weights = _read_model(o)
    if new and o.word_ids == "append":
        weights, added = _append(o, vocab_file, do_lower_case, tokens, new, weights, config)
        config = config.replace(vocab_size=len(tokens))
    old_types = len(weights[TOKEN_TYPE_EMBEDDINGS])
    types = o.type_vocab_size or old_types
    if types < old_types:
        raise InputError(
            f"--type_vocab_size={types} is smaller than the {old_types} token types of "
            f"{o.init_checkpoint}"
        )
    if types > old_types:
        weights = grow_token_types(weights, types)
        config = config.replace(type_vocab_size=types)

    basic = tokenization.BasicTokenizer(do_lower_case)
    split = [w for w in added if not w.startswith("##") and basic.tokenize(w) != [w]]
    if split:
        logging.info(
            "the tokenizer splits %s (punctuation, or case): reachable only by id", " ".join(split)
        )
    unchanged = fmt == "tf1" and o.word_ids == "unused" and types == old_types
    _write_folder(o, config, tokens, weights, copy_checkpoint=unchanged)
    return ExtendReport(o.output_dir, added, known, split, config.vocab_size, types)


def _write_folder(o, config, tokens, weights, copy_checkpoint):
    """Writes the model folder through a temporary one. `copy_checkpoint`:
    the checkpoint did not change, so its files are copied as they are."""
    with files.atomic_output(o.output_dir) as tmp:
        files.makedirs(tmp)
        prefix = os.path.join(tmp, CHECKPOINT_NAME)
        if copy_checkpoint:
            source = resolve_checkpoint_prefix(o.init_checkpoint)
            for path in [*files.matching(source + ".data-*"), source + ".index"]:
                files.copy_file(path, prefix + path[len(source) :])
        else:
            write_checkpoint(prefix, weights)
        config.to_json_file(os.path.join(tmp, CONFIG_NAME))
        files.write_text_atomically(
            os.path.join(tmp, VOCAB_FILE_NAME), "".join(f"{t}\n" for t in tokens)
        )
    logging.info("wrote %s", o.output_dir)
