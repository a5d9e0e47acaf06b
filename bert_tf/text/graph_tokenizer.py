"""In-graph BERT tokenization: the original `FullTokenizer` as a Keras layer.

`BertTokenizer` maps a `tf.string` tensor of shape [batch] to WordPiece ids
(RaggedTensor [batch, (tokens)]) equal to `tokenization.FullTokenizer`'s ids.
tensorflow-text's own `BertTokenizer` does not reproduce the original (its
lower-casing is NFKC case folding, so 'ß' -> 'ss' and 'ﬁ' -> 'fi', and its
character classes differ), so only its `WordpieceTokenizer` is used; the
original's `BasicTokenizer` is rebuilt from tf.strings / tensorflow-text ops:

1. drop bytes that are not UTF-8 (the original decodes with errors="ignore");
2. delete NUL, U+FFFD, Cc (except \\t \\n \\r) and Cf; turn the original's
   whitespace (\\t \\n \\r, Zs) and the other `str.isspace()` characters that
   survive cleaning (U+2028, U+2029) into spaces;
3. put spaces around CJK ideographs (`tokenization.CJK_RANGES`);
4. when lower-casing: ICU full lower-casing (`tf.strings.lower(...,
   encoding="utf-8")`, like `str.lower()` incl. final sigma), NFD, delete Mn;
5. put spaces around punctuation (P* and non-alphanumeric ASCII), split on spaces;
6. words longer than 200 characters -> `[UNK]`, then greedy WordPiece.

The character classes of steps 2, 4 and 5 are generated from the Python
tokenizer's own predicates over all code points (not RE2's `\\p{..}`
tables, which follow a newer Unicode version), so both sides classify every
character the same way. The vocab file is read by a
`tf.lookup.TextFileInitializer`, so a SavedModel that contains the layer
carries it as an asset and loads with only `tensorflow` and
`tensorflow_text` imported.

Remaining differences from the Python tokenizer, all with
`do_lower_case=True` (pinned by tests/test_preprocessing.py, which checks
every code point up to U+2FFFF and a sample of the rest):

* 40 upper-case letters that got their lower-case mapping in Unicode 14
  (U+2C2F, U+A7C0, U+A7D0, U+A7D6, U+A7D8, Vithkuqi U+10570-U+10595) are not
  lower-cased: TensorFlow's ICU predates Unicode 14, Python 3.11 has 14.0.
* 20 code points unassigned in Unicode 14 but decomposed by tensorflow-text's
  newer NFD (U+105C9, U+105E4, U+11383..U+113C8, U+16121..U+16128,
  U+16D68..U+16D6A) lose their decomposed marks.
  None of these characters is in a released BERT vocab.
* The vocab file must hold one bare, unique token per line: the in-graph
  table rejects (InputError) duplicate tokens and tokens with surrounding
  whitespace, which the original `load_vocab` accepts (stripped, last
  duplicate wins).

Packing the ids into model inputs is `bert_tf.text.packing`.
"""

import functools
import os
import types
import unicodedata

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf import files
from bert_tf.errors import InputError
from bert_tf.text import tokenization


def _re2_class(code_points):
    """RE2 character class matching exactly the sorted `code_points`."""
    ranges = []
    for cp in code_points:
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    return _re2_class_from_ranges(ranges)


def _re2_class_from_ranges(ranges):
    """RE2 character class for inclusive (first, last) code point ranges."""
    return "[" + "".join(rf"\x{{{lo:X}}}-\x{{{hi:X}}}" for lo, hi in ranges) + "]"


_CJK_CHARS = _re2_class_from_ranges(tokenization.CJK_RANGES)


@functools.cache
def _char_classes():
    """RE2 classes built from the Python tokenizer's own predicates over all code points.

    This keeps the graph on the same Unicode version as `unicodedata`, rather
    than on RE2's (newer) `\\p{..}` tables. Returns (deleted, whitespace,
    punctuation, nonspacing_marks).
    """
    deleted, whitespace, punctuation, marks = [], [], [], []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:  # surrogates: never in valid UTF-8
            continue
        char = chr(cp)
        if char in "\x00\ufffd" or tokenization.is_control(char):
            deleted.append(cp)
        # `is_whitespace` chars become spaces; other `isspace()` chars that survive
        # cleaning (U+2028, U+2029) still split words in `whitespace_tokenize`.
        elif tokenization.is_whitespace(char) or char.isspace():
            whitespace.append(cp)
        if tokenization.is_punctuation(char):
            punctuation.append(cp)
        if unicodedata.category(char) == "Mn":
            marks.append(cp)
    return tuple(_re2_class(cps) for cps in (deleted, whitespace, punctuation, marks))


def basic_tokenize(texts, do_lower_case):
    """The original `BasicTokenizer` in the graph.

    Args:
      texts: tf.string Tensor [batch] (UTF-8; invalid bytes are dropped).
      do_lower_case: Python bool.

    Returns:
      tf.string RaggedTensor [batch, (words)].
    """
    deleted, whitespace, punctuation, marks = _char_classes()
    x = tf.strings.unicode_transcode(texts, "UTF-8", "UTF-8", errors="ignore")
    x = tf.strings.regex_replace(x, deleted, "")
    x = tf.strings.regex_replace(x, whitespace, " ")
    x = tf.strings.regex_replace(x, _CJK_CHARS, r" \0 ")
    if do_lower_case:
        x = tf.strings.lower(x, encoding="utf-8")
        x = tf_text.normalize_utf8(x, "NFD")
        x = tf.strings.regex_replace(x, marks, "")
    x = tf.strings.regex_replace(x, punctuation, r" \0 ")
    return tf.strings.split(x)


def _check_vocab_lines(source, numbered_tokens):
    """Raises InputError unless every `(line_number, token)` is a bare token
    seen only once; `source` names the vocabulary in the message."""
    first_line = {}
    for line_number, token in numbered_tokens:
        if token != token.strip():
            raise InputError(
                f"{source}:{line_number}: token {token!r} has surrounding whitespace; "
                "the in-graph tokenizer needs one bare token per line"
            )
        if token in first_line:
            raise InputError(
                f"{source}:{line_number}: duplicate token {token!r} "
                f"(first on line {first_line[token]}); the in-graph tokenizer needs unique tokens"
            )
        first_line[token] = line_number


VOCAB_ASSET = "vocab.txt"


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenizer(keras.layers.Layer):
    """Raw text -> WordPiece ids, identical to `tokenization.FullTokenizer`.

    Call on a tf.string Tensor [batch]; returns an int32 RaggedTensor
    [batch, (tokens)]. For use in tf.function / SavedModel graphs and
    tf.data pipelines (ragged outputs do not fit the Keras functional API;
    `BertPreprocessor` packs them into model inputs).

    The vocabulary is `vocab_file` (a SavedModel carries it as an asset) or
    `vocabulary`, a list of tokens in id order. A `.keras` file carries it as
    an asset too, so it loads where `vocab_file` does not exist.

    Args:
        vocab_file: The vocab file, one token a line in id order.
        do_lower_case: Whether to lower-case and strip accents, as the
            original's uncased models do.
        vocabulary: The tokens in id order, instead of `vocab_file`.
        **kwargs: Keras layer arguments (`name`, ...).

    Attributes:
        vocab_size: Number of tokens.
        cls_id: Id of `[CLS]`.
        sep_id: Id of `[SEP]`.
        unk_id: Id of `[UNK]`.
        pad_id: 0, as the original pads with id 0.
        mask_id: Id of `[MASK]`, None without it.

    Raises:
        InputError: The vocab file is missing or empty; the vocabulary lacks
            `[UNK]`, `[CLS]` or `[SEP]`, repeats a token or has one with
            surrounding whitespace. When called: no vocabulary was given, or
            the input is not of shape `[batch]`.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "##s"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> tokenizer(["The movies was good!"]).to_list()
        [[5, 6, 9, 7, 8, 1]]
        >>> tokenizer.cls_id, tokenizer.sep_id, tokenizer.mask_id
        (2, 3, 4)
    """

    def __init__(self, vocab_file=None, do_lower_case=True, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        # Private Keras flags, with no public switch: take ragged tensors (and
        # lists of them) as they are, not converted to dense tensors.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        self._wordpiece = None
        self.built = True  # no weights: exports can track it before any call
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)
        elif vocab_file is not None:
            self._set_vocab_file(vocab_file)

    def _set_vocab_file(self, vocab_file):
        vocab = tokenization.FullTokenizer(vocab_file, self.do_lower_case).vocab
        _check_vocab_lines(vocab_file, tokenization.iter_utf8_lines(vocab_file))
        self._set_table(
            list(vocab),
            tf.lookup.TextFileInitializer(
                vocab_file,
                tf.string,
                tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
        )

    def set_vocabulary(self, vocabulary):
        """Uses `vocabulary` (tokens in id order) instead of the vocab file.

        Args:
            vocabulary: The tokens in id order.

        Raises:
            InputError: The vocabulary lacks `[UNK]`, `[CLS]` or `[SEP]`,
                repeats a token or has one with surrounding whitespace.

        Examples:
            >>> import bert_tf
            >>> tokenizer = bert_tf.BertTokenizer(vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
            >>> tokenizer.set_vocabulary(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good"])
            >>> tokenizer.vocab_size, tokenizer(["good"]).to_list()
            (5, [[4]])
        """
        tokens = [str(token) for token in vocabulary]
        _check_vocab_lines("vocabulary", enumerate(tokens, start=1))
        missing = [t for t in tokenization.REQUIRED_TOKENS if t not in tokens]
        if missing:
            raise InputError(f"the vocabulary lacks {' '.join(missing)}: a BERT vocab has them")
        self._set_table(
            tokens,
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(tokens), tf.range(len(tokens), dtype=tf.int64)
            ),
        )

    def _set_table(self, tokens, initializer):
        # A read-only view: Keras would wrap a plain dict and track each token.
        ids = self._token_ids = types.MappingProxyType({t: i for i, t in enumerate(tokens)})
        self.vocab_size = len(tokens)
        self.cls_id = ids[tokenization.CLS_TOKEN]
        self.sep_id = ids[tokenization.SEP_TOKEN]
        self.unk_id = ids[tokenization.UNK_TOKEN]
        self.pad_id = 0
        self.mask_id = ids.get(tokenization.MASK_TOKEN)
        self._vocab_table = tf.lookup.StaticHashTable(initializer, default_value=-1)
        self._wordpiece = tf_text.WordpieceTokenizer(
            self._vocab_table,
            suffix_indicator="##",
            # Words over MAX_INPUT_CHARS_PER_WORD characters are replaced by
            # [UNK] before this; 4 bytes per character covers all others.
            max_bytes_per_word=4 * tokenization.MAX_INPUT_CHARS_PER_WORD,
            token_out_type=tf.int64,
            unknown_token=tokenization.UNK_TOKEN,
        )

    @property
    def vocabulary(self):
        """The tokens in id order.

        Examples:
            >>> import bert_tf
            >>> bert_tf.BertTokenizer(vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]"]).vocabulary
            ['[PAD]', '[UNK]', '[CLS]', '[SEP]']
        """
        return list(self._token_ids)

    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, VOCAB_ASSET), "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in self.vocabulary))

    def load_assets(self, dir_path):
        path = os.path.join(dir_path, VOCAB_ASSET)
        self.set_vocabulary(token for _, token in tokenization.iter_utf8_lines(path))

    @classmethod
    def from_config(cls, config):
        # A `.keras` file brings its vocabulary as an asset (`load_assets`),
        # where the original vocab file may not exist.
        config = dict(config)
        if config.get("vocab_file") and not files.exists(config["vocab_file"]):
            config["vocab_file"] = None
        return cls(**config)

    def _text_batch(self, inputs):
        if self._wordpiece is None:
            raise InputError(f"{self.name} has no vocabulary: pass vocab_file or vocabulary")
        inputs = tf.convert_to_tensor(inputs, tf.string)
        if inputs.shape.rank is not None and inputs.shape.rank != 1:
            raise InputError(
                f"{self.name} expects a tf.string Tensor of shape [batch], got shape {inputs.shape}"
            )
        return inputs

    def __call__(self, inputs, **kwargs):
        # Checked here, not in call(): Keras rewrites errors raised in call() to many lines.
        return super().__call__(self._text_batch(inputs), **kwargs)

    def tokenize_words(self, inputs):
        """Splits texts into the original's basic tokens (before WordPiece).

        Args:
            inputs: Texts, tf.string `[batch]` (or a list of str).

        Returns:
            The basic tokens, tf.string RaggedTensor `[batch, (words)]`.

        Raises:
            InputError: The tokenizer has no vocabulary, or `inputs` is not
                of shape `[batch]`.

        Examples:
            >>> import bert_tf
            >>> tokenizer = bert_tf.BertTokenizer(vocabulary=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
            >>> tokenizer.tokenize_words(["The movies, good!"]).to_list()
            [[b'the', b'movies', b',', b'good', b'!']]
        """
        return basic_tokenize(self._text_batch(inputs), self.do_lower_case)

    def call(self, inputs):
        """tf.string [batch] -> int32 RaggedTensor [batch, (tokens)] of WordPiece ids."""
        words = basic_tokenize(inputs, self.do_lower_case)
        too_long = (
            tf.strings.length(words.flat_values, unit="UTF8_CHAR")
            > tokenization.MAX_INPUT_CHARS_PER_WORD
        )
        words = words.with_flat_values(
            tf.where(too_long, tokenization.UNK_TOKEN, words.flat_values)
        )
        ids = self._wordpiece.tokenize(words).merge_dims(1, 2)
        return tf.cast(ids, tf.int32)

    def tokenize_with_offsets(self, words):
        """Words -> WordPiece ids and where each token lies in its word.

        Args:
            words: tf.string `[n]`, each without whitespace (e.g. a context's
                words), tokenized one by one as `call` tokenizes texts.

        Returns:
            `(ids, begins, ends)`, int32 RaggedTensors `[n, (tokens)]`: token j
                of word i spells `words[i]`'s code points `begins[i, j]` to
                `ends[i, j]` (exclusive); `[UNK]` spans its whole basic token.
                Where the basic tokenizer changed a word's number of characters
                (decomposed accents removed, control characters deleted, a
                no-break space), its tokens all span the whole word.

        Raises:
            InputError: The tokenizer has no vocabulary, or `words` is not of
                shape `[n]`.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "movie", "good", "##s"]
            >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
            >>> ids, begins, ends = tokenizer.tokenize_with_offsets(["Movies", "good!"])
            >>> ids.to_list(), begins.to_list(), ends.to_list()
            ([[4, 6], [5, 1]], [[0, 5], [0, 4]], [[5, 6], [4, 5]])
        """
        words = self._text_batch(words)
        pieces = basic_tokenize(words, self.do_lower_case)  # [n, (basic tokens)]
        piece_chars = tf.strings.length(pieces, unit="UTF8_CHAR")
        word_chars = tf.strings.length(words, unit="UTF8_CHAR")
        kept_length = tf.reduce_sum(piece_chars, axis=1) == word_chars
        too_long = piece_chars.flat_values > tokenization.MAX_INPUT_CHARS_PER_WORD
        flat_pieces = tf.where(too_long, tokenization.UNK_TOKEN, pieces.flat_values)
        ids, byte_begins, byte_ends = self._wordpiece.tokenize_with_offsets(flat_pieces)
        token_piece = ids.value_rowids()
        token_texts = tf.gather(flat_pieces, token_piece)

        def chars_before(byte_offsets):
            """Code points of each token's basic token before a byte offset."""
            lengths = byte_offsets.flat_values
            return tf.strings.length(
                tf.strings.substr(token_texts, tf.zeros_like(lengths), lengths), unit="UTF8_CHAR"
            )

        piece_length = tf.gather(piece_chars.flat_values, token_piece)
        token_too_long = tf.gather(too_long, token_piece)
        begin = tf.where(token_too_long, 0, chars_before(byte_begins))
        end = tf.where(token_too_long, piece_length, chars_before(byte_ends))
        # Where each basic token starts in its word: the lengths of those before it.
        piece_word = pieces.value_rowids()
        running = tf.cumsum(piece_chars.flat_values, exclusive=True)
        piece_begin = running - tf.gather(running, tf.gather(pieces.row_starts(), piece_word))
        token_word = tf.gather(piece_word, token_piece)
        offset = tf.gather(piece_begin, token_piece)
        kept = tf.gather(kept_length, token_word)
        begin = tf.where(kept, offset + begin, 0)
        end = tf.where(kept, offset + end, tf.gather(word_chars, token_word))
        row_splits = tf.gather(ids.row_splits, pieces.row_splits)
        return tuple(
            tf.RaggedTensor.from_row_splits(tf.cast(values, tf.int32), row_splits)
            for values in (ids.flat_values, begin, end)
        )

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, do_lower_case=self.do_lower_case)
        return config
