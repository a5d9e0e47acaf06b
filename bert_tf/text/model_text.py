"""What a model's folder says about the text it reads: its vocab and its casing.

A Google release holds `vocab.txt` beside `bert_model.ckpt` and is named for
its casing (`uncased_L-12_H-768_A-12`, `cased_L-12_H-768_A-12`,
`chinese_L-12_H-768_A-12`); a Hugging Face folder holds `vocab.txt` and a
`tokenizer_config.json` with `do_lower_case`. Every script's `--vocab_file`
and `--do_lower_case`, and every model's `from_pretrained`, are resolved here,
into the one value that the data and export code take: `TextSettings`.
"""

import dataclasses
import functools
import json
import os

from bert_tf import files
from bert_tf.config import checkpoint_folder
from bert_tf.errors import InputError
from bert_tf.text import tokenization

VOCAB_FILE_NAME = "vocab.txt"
TOKENIZER_CONFIG_NAME = "tokenizer_config.json"


@dataclasses.dataclass(frozen=True)
class TextSettings:
    """How a model reads text: its vocab file, its casing and the length of
    its inputs in tokens (with `[CLS]` / `[SEP]`). Feature files are made,
    fingerprinted and served with these; `tokenizer` is the `FullTokenizer`
    over them, made on first use."""

    vocab_file: str
    do_lower_case: bool
    max_seq_length: int

    @functools.cached_property
    def tokenizer(self):
        return tokenization.FullTokenizer(self.vocab_file, self.do_lower_case)


def vocab_file_beside(path):
    """The `vocab.txt` in the folder `path` or beside the checkpoint prefix `path`, or None."""
    vocab_file = os.path.join(checkpoint_folder(path), VOCAB_FILE_NAME)
    return vocab_file if files.exists(vocab_file) else None


def lower_case_of(path):
    """`(lower_cased, why)`: whether the model at `path` (a folder or a
    checkpoint prefix) lower-cases its input, as its Hugging Face
    `tokenizer_config.json` or its Google release name says, and a phrase
    saying which; `(None, None)` when neither does."""
    if not path:
        return None, None
    hf_config = os.path.join(checkpoint_folder(path), TOKENIZER_CONFIG_NAME)
    if files.exists(hf_config):
        with files.open_file(hf_config) as f:
            try:
                value = json.load(f).get("do_lower_case")
            except (ValueError, AttributeError):
                raise InputError(f"{hf_config} is not a JSON object") from None
        if value is not None:
            return bool(value), f"its {TOKENIZER_CONFIG_NAME} says do_lower_case: {bool(value)}"
    model_name, lower_cased = tokenization.release_casing(path)
    if lower_cased is None:
        return None, None
    return lower_cased, f"`{model_name}` is a {'lower-cased' if lower_cased else 'cased'} model"


def resolve_lower_case(do_lower_case, model, default=True, source=None):
    """The casing to tokenize with for the model at `model`: `do_lower_case`
    when given (not None), which must not contradict what the model says
    (`lower_case_of`); else what the model says; else `default`. `source`
    names the model in the error (default: `--init_checkpoint=<model>`)."""
    lower_cased, why = lower_case_of(model)
    if do_lower_case is None:
        return default if lower_cased is None else lower_cased
    if lower_cased is not None and bool(do_lower_case) != lower_cased:
        raise InputError(
            f"--do_lower_case={bool(do_lower_case)} contradicts "
            f"{source or f'--init_checkpoint={model}'}: {why}, pass "
            f"--do_lower_case={lower_cased} (or leave it out) so fine-tuning matches pre-training"
        )
    return bool(do_lower_case)


def same_vocab(a, b):
    """Whether the vocab files `a` and `b` hold the same tokens in the same order."""
    return tokenization.load_vocab(a) == tokenization.load_vocab(b)


def resolve_vocab_file(vocab_file, init_checkpoint, allow_vocab_mismatch=False):
    """`vocab_file`, else the `vocab.txt` beside `init_checkpoint` (as its
    config is found). A `vocab_file` other than the one beside the
    checkpoint is an error unless `allow_vocab_mismatch`: the checkpoint's
    embeddings are rows of its own vocab, and another one of the same size
    shreds every word into wrong pieces without a warning."""
    if vocab_file:
        if files.isdir(vocab_file):
            raise InputError(
                f"--vocab_file={vocab_file} is a folder; expected a file (its {VOCAB_FILE_NAME}?)"
            )
        beside = init_checkpoint and vocab_file_beside(init_checkpoint)
        if beside and not allow_vocab_mismatch and not same_vocab(vocab_file, beside):
            raise InputError(
                f"--vocab_file={vocab_file} differs from {beside} of "
                f"--init_checkpoint={init_checkpoint}, the vocab its embeddings were "
                "trained with: leave --vocab_file out, or pass --allow_vocab_mismatch "
                "if yours is an edited copy of it"
            )
        return vocab_file
    if not init_checkpoint:
        raise InputError(
            f"--vocab_file is needed (or an --init_checkpoint folder with {VOCAB_FILE_NAME})"
        )
    found = vocab_file_beside(init_checkpoint)
    if found is None:
        raise InputError(
            f"--vocab_file is needed: --init_checkpoint={init_checkpoint} has no "
            f"{VOCAB_FILE_NAME} beside it"
        )
    return found


def text_settings(
    vocab_file, do_lower_case, init_checkpoint, default_lower_case=True, allow_vocab_mismatch=False
):
    """`(vocab_file, do_lower_case)` of a run: `--vocab_file` (the one beside
    `--init_checkpoint` unless `allow_vocab_mismatch`, `resolve_vocab_file`),
    else the one beside `--init_checkpoint`; `--do_lower_case` (None: not
    given) checked against, else taken from, the first of `--init_checkpoint`
    and the vocab's folder that says a casing (`lower_case_of`), else
    `default_lower_case`."""
    vocab_file = resolve_vocab_file(vocab_file, init_checkpoint, allow_vocab_mismatch)
    model, source = init_checkpoint, f"--init_checkpoint={init_checkpoint}"
    if lower_case_of(init_checkpoint)[0] is None:
        model, source = os.path.dirname(vocab_file) or ".", f"--vocab_file={vocab_file}"
    return vocab_file, resolve_lower_case(do_lower_case, model, default_lower_case, source)
