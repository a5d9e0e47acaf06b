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
import concurrent.futures
import dataclasses
import functools
import multiprocessing

from absl import logging

from bert_tf import files
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


def count_words(input_files, do_lower_case, skip_invalid_utf8=False, num_workers=1):
    """Counts the basic tokens (original BasicTokenizer) of every line of `input_files`.

    Words longer than 200 characters are not counted (FullTokenizer maps them
    to [UNK]). A line that is not UTF-8 raises InputError naming file and
    line, or is skipped with a warning when `skip_invalid_utf8`. With
    `num_workers` > 1, that many spawned processes count pieces of about
    1 MB of whole lines; the pieces' counts are merged in corpus order.

    Returns:
      collections.Counter word -> count, words in the order of their first
      occurrence in the corpus, for any `num_workers`.
    """
    if num_workers == 1:
        pieces = [(path, 0, None, 1) for path in input_files]
        return _merge(_count_piece(do_lower_case, skip_invalid_utf8, p) for p in pieces)
    pieces = [piece for path in input_files for piece in _pieces(path, _PIECE_BYTES)]
    count = functools.partial(_count_piece, do_lower_case, skip_invalid_utf8)
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(num_workers, mp_context=context) as pool:
        return _merge(pool.map(count, pieces))


_PIECE_BYTES = 1 << 20


def _pieces(path, piece_bytes):
    """`(path, start, end, first line number)` of consecutive byte ranges of
    the file, each of whole lines and about `piece_bytes` long."""
    if not files.exists(path):
        raise InputError(f"input file {path} does not exist")
    pieces = []
    start, line = 0, 1
    with files.open_file(path, "rb") as f:
        while True:
            block = f.read(piece_bytes)
            if not block:
                break
            if not block.endswith(b"\n"):
                block += f.readline()
            pieces.append((path, start, start + len(block), line))
            start += len(block)
            line += block.count(b"\n")
    return pieces


def _count_piece(do_lower_case, skip_invalid_utf8, piece):
    """The Counter of the words of the lines in `piece` (see `_pieces`)."""
    path, start, end, first_line = piece
    basic = tokenization.BasicTokenizer(do_lower_case=do_lower_case)
    counts = collections.Counter()
    lines = tokenization.iter_utf8_lines_at(
        path, skip_invalid_utf8, start=start, end=end, first_line=first_line
    )
    for _, _, line in lines:
        counts.update(
            w for w in basic.tokenize(line) if len(w) <= tokenization.MAX_INPUT_CHARS_PER_WORD
        )
    return counts


def _merge(counters):
    """The sum of `counters`, words in order of first appearance."""
    total = collections.Counter()
    for counts in counters:
        total.update(counts)
    return total


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
    # Beyond the original.
    num_workers: int = option(
        1,
        "Processes that count the words (spawned when more than 1); the vocabulary does "
        "not depend on it.",
        at_least=1,
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
    paths = expand_input_patterns(o.input_file)
    counts = count_words(paths, o.do_lower_case, o.skip_invalid_utf8, o.num_workers)
    tokens = learn_vocab(counts, o.vocab_size, o.reserved_tokens, o.max_unique_chars)
    write_vocab(tokens, o.output_file)
    logging.info(
        "wrote %d tokens learnt from %d distinct words in %d files to %s",
        len(tokens),
        len(counts),
        len(paths),
        o.output_file,
    )
    return tokens
