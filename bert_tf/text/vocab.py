"""Building a WordPiece vocabulary from raw text (the original BERT never shipped one).

Words are counted with the original `BasicTokenizer` (so the vocabulary
matches what `FullTokenizer` and the in-graph tokenizer will look up), then
the subwords are picked by tensorflow-text's WordPiece learner
(`wordpiece_tokenizer_learner_lib`, the bottom-up algorithm behind
`bert_vocab_from_dataset`), as reimplemented in `wordpiece_learner`: the same
tokens in the same order, in a fraction of the time.
`bert_vocab_from_dataset` itself is not used: it counts words with
tensorflow-text's BasicTokenizer, which differs from the original's.

The result is deterministic for a given corpus and starts with the reserved
tokens, followed by every kept character and its `##` form, then subwords by
decreasing count.
"""

import collections
import dataclasses

from absl import logging

from bert_tf.errors import InputError
from bert_tf.files import check_output_file, expand_input_patterns, write_text_atomically
from bert_tf.options import Options, option
from bert_tf.text import tokenization, wordpiece_learner

RESERVED_TOKENS = (
    tokenization.PAD_TOKEN,
    tokenization.UNK_TOKEN,
    tokenization.CLS_TOKEN,
    tokenization.SEP_TOKEN,
    tokenization.MASK_TOKEN,
)


def count_words(input_files, do_lower_case, skip_invalid_utf8=False):
    """Counts the basic tokens (original BasicTokenizer) of every line of `input_files`.

    Words longer than 200 characters are not counted (FullTokenizer maps them
    to [UNK]). A line that is not UTF-8 raises InputError naming file and
    line, or is skipped with a warning when `skip_invalid_utf8`.

    Returns:
      collections.Counter word -> count.
    """
    basic = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    counts = collections.Counter()
    for path in input_files:
        for _, line in tokenization.iter_utf8_lines(path, skip_invalid=skip_invalid_utf8):
            counts.update(
                w for w in basic.tokenize(line) if len(w) <= tokenization.MAX_INPUT_CHARS_PER_WORD
            )
    return counts


def check_vocab_options(vocab_size, reserved_tokens, max_unique_chars):
    """Raises InputError for arguments `learn_vocab` cannot use."""
    reserved_tokens = list(reserved_tokens)
    missing = [t for t in tokenization.REQUIRED_TOKENS if t not in reserved_tokens]
    if missing:
        raise InputError(f"--reserved_tokens lacks {' '.join(missing)}")
    repeated = sorted({t for t in reserved_tokens if reserved_tokens.count(t) > 1})
    if repeated:
        raise InputError(f"--reserved_tokens repeats {' '.join(repeated)}")
    if vocab_size <= len(reserved_tokens):
        raise InputError(
            f"--vocab_size={vocab_size} must exceed the {len(reserved_tokens)} reserved tokens"
        )
    if max_unique_chars is not None and max_unique_chars < 1:
        raise InputError(f"--max_unique_chars={max_unique_chars} must be at least 1")


def learn_vocab(word_counts, vocab_size, reserved_tokens=RESERVED_TOKENS, max_unique_chars=None):
    """Learns a WordPiece vocabulary of at most about `vocab_size` tokens.

    Args:
      word_counts: dict word -> count (e.g. from `count_words`).
      vocab_size: target size; the learner aims for 95-100% of it (a small
        corpus may support fewer tokens). It is exceeded (with a warning)
        only when the kept characters alone need more.
      reserved_tokens: tokens placed first, in this order; must include
        [UNK], [CLS] and [SEP].
      max_unique_chars: keep only this many most frequent characters (words
        with other characters are not learnt from and tokenize to [UNK]);
        None keeps every character seen.

    Returns:
      list of token strings; the token's index is its id.
    """
    reserved_tokens = list(reserved_tokens)
    check_vocab_options(vocab_size, reserved_tokens, max_unique_chars)
    if not word_counts:
        raise InputError("the input files contain no words")
    if max_unique_chars is None:
        max_unique_chars = len({c for word in word_counts for c in word})
    tokens = wordpiece_learner.learn(word_counts, vocab_size, reserved_tokens, max_unique_chars)
    if len(tokens) > vocab_size:
        logging.warning(
            "learned vocab has %d tokens, more than --vocab_size=%d: the characters alone "
            "need that many (lower --max_unique_chars to cap them)",
            len(tokens),
            vocab_size,
        )
    return tokens


def write_vocab(tokens, output_file):
    """Writes one token per line (UTF-8), the format `tokenization.load_vocab` reads."""
    write_text_atomically(output_file, "".join(f"{t}\n" for t in tokens))


@dataclasses.dataclass(frozen=True)
class VocabOptions(Options):
    """What `build_vocab` learns from and writes: the flags of build_vocab.py."""

    input_file: str = option(
        help="Comma-separated globs of UTF-8 text files (one sentence or paragraph per line)."
    )
    output_file: str = option(help="Where to write the vocab (one token per line).")
    vocab_size: int = option(
        30522,
        "Target vocabulary size: the result aims at 95-100% of it (fewer on a small corpus).",
        at_least=1,
    )
    do_lower_case: bool = option(
        True, "Lower-case and strip accents, as the tokenizer that will use the vocab must."
    )
    reserved_tokens: tuple = option(
        RESERVED_TOKENS, "Tokens placed first, in this order; must include [UNK], [CLS] and [SEP]."
    )
    max_unique_chars: int | None = option(
        None, "Keep only this many most frequent characters (default: all).", at_least=1
    )
    skip_invalid_utf8: bool = option(
        False,
        "Skip (with a warning) lines that are not UTF-8 instead of stopping at the first one.",
    )


def build_vocab(options):
    """Counts words in the files matched by `options.input_file` (comma-separated
    globs, or a list of them), learns a WordPiece vocabulary and writes it to
    `options.output_file`.

    Returns:
      the list of vocabulary tokens written.
    """
    o = options
    check_output_file(o.output_file, "--output_file")
    files = expand_input_patterns(o.input_file)
    counts = count_words(files, o.do_lower_case, skip_invalid_utf8=o.skip_invalid_utf8)
    tokens = learn_vocab(counts, o.vocab_size, o.reserved_tokens, o.max_unique_chars)
    write_vocab(tokens, o.output_file)
    logging.info(
        "wrote %d tokens learnt from %d distinct words in %d files to %s",
        len(tokens),
        len(counts),
        len(files),
        o.output_file,
    )
    return tokens
