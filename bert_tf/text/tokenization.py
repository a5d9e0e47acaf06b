"""WordPiece tokenization exactly as in Google's original BERT `tokenization.py`.

`FullTokenizer(vocab_file, do_lower_case)` = `BasicTokenizer` (cleaning, CJK
splitting, optional lower-casing + accent stripping, punctuation splitting)
followed by `WordpieceTokenizer` (greedy longest-match-first with `##`
continuations). Released checkpoints were trained with this exact behaviour,
including its quirks, so they are kept on purpose:

* Special-token strings in raw text are split like any text:
  `"[CLS]"` -> `["[", "cl", "##s", "]"]` (uncased vocab).
* Only control (Cc) and format (Cf) characters, NUL and U+FFFD are deleted;
  a zero-width space (Cf) therefore joins the words around it, while
  private-use (Co) and unassigned characters are kept.
* Whitespace is `" \\t\\n\\r"` and category Zs; they become a plain space.
  U+2028/U+2029 survive cleaning but still separate words (Python's
  `str.split()`).
* Lower-casing is Python's `str.lower()` (full mappings, Greek final sigma),
  then NFD with every Mn character dropped and no recomposition (Hangul
  syllables become jamo, kana lose their voicing marks). No NFKC anywhere.
  Accents are stripped only when lower-casing.
* Punctuation = every character in Unicode category P* plus every
  non-alphanumeric printable ASCII character; non-ASCII symbols such as
  `€ ° £` (categories S*) are not punctuation and stay inside words.
* A word longer than 200 characters, counted after lower-casing and accent
  stripping, becomes `[UNK]`; so does a word WordPiece cannot cover.

Character classes come from the running Python's `unicodedata`
(Unicode 14.0 on Python 3.11).
"""

import collections
import os
import re
import unicodedata

from absl import logging

from bert_tf import files
from bert_tf.errors import InputError

UNK_TOKEN = "[UNK]"
CLS_TOKEN = "[CLS]"
SEP_TOKEN = "[SEP]"
PAD_TOKEN = "[PAD]"
MASK_TOKEN = "[MASK]"
# Tokens a vocabulary must contain to tokenize and pack inputs.
REQUIRED_TOKENS = (UNK_TOKEN, CLS_TOKEN, SEP_TOKEN)
MAX_INPUT_CHARS_PER_WORD = 200
# A tokenizer warns when more than UNKNOWN_SHARE_WARNING of its first
# UNKNOWN_SAMPLE_TOKENS tokens are [UNK]. Measured with the bert-base-uncased
# vocab on the first 1000 tokens of five English texts (the demo corpus, the
# README's prose, MiniLM's model card, the GPL-3 and Apache-2.0 licences):
# 0.0% [UNK] when lower-cased, 6.8% to 12.5% when not (every word with a
# capital letter is [UNK]); CoNLL-style NER text, with its names, far more.
UNKNOWN_SHARE_WARNING = 0.05
UNKNOWN_SAMPLE_TOKENS = 1000

# Released checkpoints (directory names) and the casing they were trained with.
_LOWER_CASED_MODELS = (
    "uncased_L-24_H-1024_A-16",
    "uncased_L-12_H-768_A-12",
    "multilingual_L-12_H-768_A-12",
    "chinese_L-12_H-768_A-12",
    "wwm_uncased_L-24_H-1024_A-16",
)
_CASED_MODELS = (
    "cased_L-12_H-768_A-12",
    "cased_L-24_H-1024_A-16",
    "multi_cased_L-12_H-768_A-12",
    "wwm_cased_L-24_H-1024_A-16",
)
# The 24 smaller BERTs (uncased_L-2_H-128_A-2 ... uncased_L-12_H-768_A-12).
_SMALLER_UNCASED_MODEL = re.compile(r"uncased_L-\d+_H-\d+_A-\d+")

# The original run_squad.py's context whitespace (not `str.split()`'s): the
# word split of SQuAD contexts and of the raw-text task models.
CONTEXT_WHITESPACE = frozenset(" \t\r\n\u202f")


def release_casing(path):
    """`(model_name, lower_cased)` of a Google release named in `path`
    (`.../<model_name>/bert_model.ckpt*` or the release's folder itself):
    `lower_cased` is True or False for a known release, else None."""
    if not path:
        return None, None
    m = re.match(r"^.*?([A-Za-z0-9_-]+)/bert_model.ckpt", path)
    if m is not None:
        model_name = m.group(1)
    elif os.path.isdir(path):
        model_name = os.path.basename(os.path.normpath(path))
    else:
        return None, None
    if model_name in _LOWER_CASED_MODELS or _SMALLER_UNCASED_MODEL.fullmatch(model_name):
        return model_name, True
    return model_name, (False if model_name in _CASED_MODELS else None)


def convert_to_unicode(text):
    """Returns `text` as `str`; bytes are decoded as UTF-8, dropping invalid bytes."""
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise InputError(f"unsupported string type: {type(text).__name__} (expected str or bytes)")


def printable_text(text):
    """Returns `text` as a `str` suitable for print / logging (same as convert_to_unicode)."""
    return convert_to_unicode(text)


def iter_utf8_lines(path, skip_invalid=False, on_skip=None):
    """Yields `(line_number, text)` for each line of a text file, newline removed.

    Lines are split on b"\\n" (a trailing "\\r" is removed too). A line that is
    not valid UTF-8 raises InputError naming the file and line, or, with
    `skip_invalid=True`, is skipped: `on_skip(message)` is called for it
    (default: the message is logged as a warning). Line numbers start at 1.
    """
    for line_number, _, text in iter_utf8_lines_at(path, skip_invalid, on_skip):
        yield line_number, text


def iter_utf8_lines_at(path, skip_invalid=False, on_skip=None, start=0, end=None, first_line=1):
    """`iter_utf8_lines` with each line's byte offset: yields `(line_number,
    offset, text)` for the lines that begin in bytes `[start, end)` of the file
    (`end=None`: to its end). `start` must be the beginning of a line, whose
    number is `first_line`: a part of a file is read without the rest.
    """
    if not files.exists(path):
        raise InputError(f"input file {path} does not exist")
    with files.open_file(path, "rb") as f:
        if start:
            f.seek(start)
        offset = start
        for line_number, raw in enumerate(f, start=first_line):
            if end is not None and offset >= end:
                return
            line_offset = offset
            offset += len(raw)
            raw = raw.rstrip(b"\n").rstrip(b"\r")
            try:
                yield line_number, line_offset, raw.decode("utf-8")
            except UnicodeDecodeError as e:
                message = f"{path}:{line_number}: not valid UTF-8 (byte {e.start})"
                if not skip_invalid:
                    raise InputError(message) from None
                if on_skip is None:
                    logging.warning("skipping line %s", message)
                else:
                    on_skip(message)


def load_vocab(vocab_file):
    """Loads a vocabulary file (one token per line) into an OrderedDict token -> id.

    As in the original, each line is stripped of surrounding whitespace and
    its id is its 0-based line number; an empty line becomes the token "".
    Raises InputError for a missing or empty file or a line that is not UTF-8.
    """
    if not files.exists(vocab_file):
        raise InputError(f"vocab file {vocab_file} does not exist")
    vocab = collections.OrderedDict()
    for index, (_, token) in enumerate(iter_utf8_lines(vocab_file)):
        vocab[token.strip()] = index
    if not vocab:
        raise InputError(f"vocab file {vocab_file} is empty")
    return vocab


def convert_by_vocab(vocab, items):
    """Maps each item through `vocab` (a dict); a missing item raises KeyError."""
    return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
    """Token strings -> ids with a token -> id dict."""
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    """Ids -> token strings with an id -> token dict."""
    return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
    """Splits on whitespace as Python's `str.split()` does (no empty pieces)."""
    return text.split()


class FullTokenizer:
    """Text -> WordPiece tokens and ids, as the original `FullTokenizer`.

    Each whitespace-separated word of the cleaned text is tokenized once and
    remembered (`WordCache`): natural text repeats its words, so most words
    cost a dict lookup.

    `vocabulary` (tokens in id order) stands in for the vocab file. Raises
    InputError if the vocab file is missing, empty, or lacks any of [UNK],
    [CLS], [SEP]. Warns when its first tokens are mostly [UNK]
    (`check_unknown_share`).
    """

    def __init__(self, vocab_file, do_lower_case=True, vocabulary=None):
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        if vocabulary is None:
            self.vocab = load_vocab(vocab_file)
        else:  # tokens in id order, e.g. a `.keras` file's (`BertTokenizer.vocabulary`)
            self.vocab = collections.OrderedDict((t, i) for i, t in enumerate(vocabulary))
        missing = [t for t in REQUIRED_TOKENS if t not in self.vocab]
        if missing:
            raise InputError(
                f"vocab file {vocab_file} lacks {' '.join(missing)}: a BERT vocab "
                f"needs {' '.join(REQUIRED_TOKENS)}"
            )
        self.inv_vocab = {v: k for k, v in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)
        self._pieces = WordCache(self.word_pieces)
        # [UNK] among the first UNKNOWN_SAMPLE_TOKENS tokens (see check_unknown_share).
        self._sampled = self._unknown = 0
        self._share_checked = False

    def tokenize(self, text):
        """Returns the list of WordPiece token strings of `text` (str or UTF-8 bytes)."""
        pieces = self._pieces
        tokens = [piece for word in self.basic_tokenizer.raw_words(text) for piece in pieces[word]]
        if self._sampled < UNKNOWN_SAMPLE_TOKENS:
            self._sampled += len(tokens)
            self._unknown += tokens.count(UNK_TOKEN)
            if self._sampled >= UNKNOWN_SAMPLE_TOKENS:
                self.check_unknown_share()
        return tokens

    def check_unknown_share(self):
        """Logs a warning, once, when more than UNKNOWN_SHARE_WARNING of the
        first tokens of `tokenize` are [UNK]: the casing or the vocab is likely
        not the model's. Called by `tokenize` once UNKNOWN_SAMPLE_TOKENS tokens
        are counted; call it after tokenizing less."""
        if self._share_checked or not self._sampled:
            return
        self._share_checked = True
        share = self._unknown / self._sampled
        if share <= UNKNOWN_SHARE_WARNING:
            return
        if self.do_lower_case or any(is_cased(token) for token in self.vocab):
            cause = (
                "is it the model's vocab, and does the model lower-case its input "
                "(--do_lower_case)?"
            )
        else:
            cause = (
                "the vocab has no upper-case letters (an uncased model's), lower-case "
                "the input (--do_lower_case=true)"
            )
        logging.warning(
            "%.0f%% of the first %d tokens are %s with the vocab %s and do_lower_case=%s: %s",
            100 * share,
            self._sampled,
            UNK_TOKEN,
            self.vocab_file,
            self.do_lower_case,
            cause,
        )

    def word_pieces(self, raw_word):
        """The WordPiece tokens (a tuple) of one word of `BasicTokenizer.raw_words`."""
        return tuple(
            piece
            for word in self.basic_tokenizer.split_word(raw_word)
            for piece in self.wordpiece_tokenizer.tokenize(word)
        )

    def convert_tokens_to_ids(self, tokens):
        """Token strings -> ids (KeyError for a token not in the vocab)."""
        return convert_by_vocab(self.vocab, tokens)

    def convert_ids_to_tokens(self, ids):
        """Ids -> token strings (KeyError for an id not in the vocab)."""
        return convert_by_vocab(self.inv_vocab, ids)


class WordCache(dict):
    """word (or any key) -> `compute(word)`, computed on the first lookup (`cache[word]`).

    Emptied when it holds `max_size` words, so memory stays bounded on any
    corpus while the frequent words are back after a few lines.
    """

    def __init__(self, compute, max_size=1 << 18):
        super().__init__()
        self._compute = compute
        self._max_size = max_size

    def __missing__(self, word):
        value = self._compute(word)
        if len(self) >= self._max_size:
            self.clear()
        self[word] = value
        return value


class _CleaningTable(dict):
    """`str.translate` table doing the original's `_clean_text` then
    `_tokenize_chinese_chars`, both maps of single characters: deleted ->
    None, whitespace -> " ", CJK ideograph -> " c ", any other character ->
    itself. Filled as characters are first seen."""

    def __missing__(self, code_point):
        char = chr(code_point)
        if char in ("\x00", "\ufffd") or is_control(char):
            value = None
        elif is_whitespace(char):
            value = " "
        elif is_chinese_char(code_point):
            value = f" {char} "
        else:
            value = code_point
        self[code_point] = value
        return value


_CLEANING_TABLE = _CleaningTable()
# Pieces of a word of printable ASCII: runs of letters and digits, and each
# other character (all of them punctuation) alone.
_ASCII_PIECES = re.compile(r"[0-9A-Za-z]+|[^0-9A-Za-z]")


def is_cased(token):
    """Whether vocab `token` has an upper-case letter (special tokens such as
    `[UNK]` aside): uncased models' vocabs have none."""
    special = token.startswith("[") and token.endswith("]")
    return not special and token.lower() != token


def lower_case(text):
    """The original's lower-casing: str.lower, NFD, then every nonspacing mark
    (category Mn) dropped; no recomposition."""
    return "".join(
        c for c in unicodedata.normalize("NFD", text.lower()) if unicodedata.category(c) != "Mn"
    )


class BasicTokenizer:
    """Cleaning, CJK and punctuation splitting, optional lower-casing (no WordPiece).

    `tokenize(text)` is `split_word` over `raw_words(text)`: the text is
    cleaned and split on whitespace first, then each word is lower-cased,
    stripped of accents and split at punctuation on its own.
    """

    def __init__(self, do_lower_case=True):
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        """Returns the list of basic tokens ("words") of `text`."""
        return [piece for word in self.raw_words(text) for piece in self.split_word(word)]

    @staticmethod
    def raw_words(text):
        """`text` (str or UTF-8 bytes) cleaned, CJK ideographs spaced, split on whitespace."""
        text = convert_to_unicode(text)
        if text.isascii() and text.isprintable():  # cleaning would leave it as it is
            return text.split()
        return text.translate(_CLEANING_TABLE).split()

    def split_word(self, word):
        """The basic tokens of one word of `raw_words`."""
        if word.isascii():  # the common case, without a loop over characters
            return _ASCII_PIECES.findall(word.lower() if self.do_lower_case else word)
        if self.do_lower_case:
            word = lower_case(word)
        # Lower-casing and NFD could in principle make whitespace: split again.
        return whitespace_tokenize(" ".join(self._run_split_on_punc(word)))

    @staticmethod
    def _run_split_on_punc(text):
        """Splits `text` so that every punctuation character is its own piece."""
        pieces = []
        start_new_piece = True
        for char in text:
            if is_punctuation(char):
                pieces.append(char)
                start_new_piece = True
            else:
                if start_new_piece:
                    pieces.append("")
                    start_new_piece = False
                pieces[-1] += char
        return pieces


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece over whitespace-separated words."""

    def __init__(
        self, vocab, unk_token=UNK_TOKEN, max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD
    ):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        """Returns the WordPiece tokens of already basic-tokenized `text`.

        Example: "unaffable" -> ["un", "##aff", "##able"]. A word longer than
        `max_input_chars_per_word` characters, or one that cannot be covered by
        vocab pieces, becomes a single `unk_token`.
        """
        output = []
        for word in whitespace_tokenize(convert_to_unicode(text)):
            if len(word) > self.max_input_chars_per_word:
                output.append(self.unk_token)
                continue
            output.extend(self._word_pieces(word))
        return output

    def _word_pieces(self, word):
        pieces = []
        start = 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
            else:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces


def is_whitespace(char):
    """Space, tab, newline, carriage return, or category Zs."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char):
    """Category Cc or Cf, except tab / newline / carriage return (whitespace)."""
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char):
    """Category P*, or any non-alphanumeric printable ASCII character."""
    cp = ord(char)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(char).startswith("P")


# CJK Unified Ideographs blocks the original treats as "Chinese characters"
# (Hangul, kana and other CJK-script letters are not included).
CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def is_chinese_char(cp):
    """Whether code point `cp` is in one of CJK_RANGES."""
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)
