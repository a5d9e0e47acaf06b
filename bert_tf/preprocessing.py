"""In-graph BERT preprocessing: the original tokenization as a Keras layer, and input packing.

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

Packing (`pack_inputs` in Python, `BertPackInputs` in the graph) builds
`[CLS] A [SEP] (B [SEP])`, truncating a pair like the original
`_truncate_seq_pair` (drop the last token of the longer segment, of B on a
tie, until it fits) and a single segment to its first `max_seq_length - 2`.
"""

import functools
import unicodedata

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf import tokenization
from bert_tf.errors import InputError


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


@functools.lru_cache(maxsize=None)
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
        if char in "\x00\ufffd" or tokenization._is_control(char):
            deleted.append(cp)
        # `_is_whitespace` chars become spaces; other `isspace()` chars that survive
        # cleaning (U+2028, U+2029) still split words in `whitespace_tokenize`.
        elif tokenization._is_whitespace(char) or char.isspace():
            whitespace.append(cp)
        if tokenization._is_punctuation(char):
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


def _check_vocab_lines(vocab_file):
    """Raises InputError unless every line is a bare token seen only once."""
    first_line = {}
    for line_number, token in tokenization.iter_utf8_lines(vocab_file):
        if token != token.strip():
            raise InputError(
                f"{vocab_file}:{line_number}: token {token!r} has surrounding whitespace; "
                "the in-graph tokenizer needs one bare token per line"
            )
        if token in first_line:
            raise InputError(
                f"{vocab_file}:{line_number}: duplicate token {token!r} "
                f"(first on line {first_line[token]}); the in-graph tokenizer needs unique tokens"
            )
        first_line[token] = line_number


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenizer(keras.layers.Layer):
    """Raw text -> WordPiece ids, identical to `tokenization.FullTokenizer`.

    Call on a tf.string Tensor [batch]; returns an int32 RaggedTensor
    [batch, (tokens)]. For use in tf.function / SavedModel graphs (ragged
    outputs do not fit the Keras functional API).

    Attributes: `vocab_size`, `cls_id`, `sep_id`, `unk_id`, `pad_id` (0, as
    the original pads with id 0) and `mask_id` (None without `[MASK]`).
    """

    def __init__(self, vocab_file, do_lower_case=True, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.vocab_file = vocab_file
        self.do_lower_case = do_lower_case
        vocab = tokenization.FullTokenizer(vocab_file, do_lower_case).vocab
        _check_vocab_lines(vocab_file)
        self.vocab_size = len(vocab)
        self.cls_id = vocab[tokenization.CLS_TOKEN]
        self.sep_id = vocab[tokenization.SEP_TOKEN]
        self.unk_id = vocab[tokenization.UNK_TOKEN]
        self.pad_id = 0
        self.mask_id = vocab.get(tokenization.MASK_TOKEN)
        self._vocab_table = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                vocab_file,
                tf.string,
                tf.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER,
            ),
            default_value=-1,
        )
        self._wordpiece = tf_text.WordpieceTokenizer(
            self._vocab_table,
            suffix_indicator="##",
            # Words over MAX_INPUT_CHARS_PER_WORD characters are replaced by
            # [UNK] before this; 4 bytes per character covers all others.
            max_bytes_per_word=4 * tokenization.MAX_INPUT_CHARS_PER_WORD,
            token_out_type=tf.int64,
            unknown_token=tokenization.UNK_TOKEN,
        )

    def _text_batch(self, inputs):
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
        """tf.string [batch] -> basic tokens, tf.string RaggedTensor [batch, (words)]."""
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

    def get_config(self):
        config = super().get_config()
        config.update(vocab_file=self.vocab_file, do_lower_case=self.do_lower_case)
        return config


def truncate_seq_pair(tokens_a, tokens_b, max_length):
    """The original `_truncate_seq_pair`: pops in place until len(a) + len(b) <= max_length.

    Each step removes the last element of the longer list, of `tokens_b` on a tie.
    """
    while len(tokens_a) + len(tokens_b) > max_length:
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def _check_max_seq_length(max_seq_length, num_segments):
    if max_seq_length < num_segments + 1:
        raise InputError(
            f"max_seq_length={max_seq_length} leaves no room for [CLS] and "
            f"{num_segments} [SEP]: it must be at least {num_segments + 1}"
        )


def pack_inputs(tokens_a_ids, tokens_b_ids, max_seq_length, cls_id, sep_id, pad_id=0):
    """Packs one example as the original `convert_single_example` does.

    Args:
      tokens_a_ids: list of ids of segment A (not modified).
      tokens_b_ids: list of ids of segment B, or None for a single segment.
      max_seq_length: output length (>= 2 for one segment, >= 3 for a pair).
      cls_id, sep_id, pad_id: ids of [CLS], [SEP] and padding.

    Returns:
      dict of lists of length max_seq_length: `input_word_ids`
      ([CLS] A [SEP] (B [SEP]) then pad_id), `input_mask` (1 on tokens, 0 on
      padding), `input_type_ids` (0 for [CLS] A [SEP], 1 for B [SEP], 0 on padding).
    """
    a = list(tokens_a_ids)
    if tokens_b_ids is None:
        _check_max_seq_length(max_seq_length, 1)
        a = a[: max_seq_length - 2]
        b = []
    else:
        _check_max_seq_length(max_seq_length, 2)
        b = list(tokens_b_ids)
        truncate_seq_pair(a, b, max_seq_length - 3)
    word_ids = [cls_id] + a + [sep_id]
    type_ids = [0] * len(word_ids)
    if tokens_b_ids is not None:
        word_ids += b + [sep_id]
        type_ids += [1] * (len(b) + 1)
    padding = max_seq_length - len(word_ids)
    return {
        "input_word_ids": word_ids + [pad_id] * padding,
        "input_mask": [1] * len(word_ids) + [0] * padding,
        "input_type_ids": type_ids + [0] * padding,
    }


def truncated_pair_lengths(len_a, len_b, max_length):
    """Final segment lengths after `truncate_seq_pair`, in closed form (tensors).

    Args:
      len_a, len_b: int Tensors [batch] of segment lengths.
      max_length: int >= 0 (or int Tensor [batch]), the budget for both segments.

    Returns:
      (new_len_a, new_len_b), int Tensors [batch]. Once both segments are cut
      they end at ceil(max_length / 2) and floor(max_length / 2) (ties pop B);
      a segment shorter than its half is kept and the other gets the rest.
    """
    new_a = tf.minimum(len_a, tf.maximum(max_length - len_b, (max_length + 1) // 2))
    new_b = tf.minimum(len_b, tf.maximum(max_length - len_a, max_length // 2))
    return new_a, new_b


def _first_n(ragged, n):
    """Row i of `ragged` [batch, (len)] cut to its first n[i] values."""
    positions = tf.ragged.range(ragged.row_lengths())
    return tf.ragged.boolean_mask(ragged, positions < tf.expand_dims(n, 1))


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPackInputs(keras.layers.Layer):
    """Builds BERT's model inputs from token ids, exactly like `pack_inputs`.

    Call on an int RaggedTensor [batch, (tokens)] (segment A) or a list of one
    or two of them ([A] or [A, B]); 3-D [batch, (words), (pieces)] inputs are
    flattened to [batch, (tokens)]. Returns a dict of int32 Tensors
    [batch, max_seq_length]: `input_word_ids`, `input_mask`, `input_type_ids`.
    """

    def __init__(self, max_seq_length, cls_id, sep_id, pad_id=0, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.max_seq_length = max_seq_length
        self.cls_id = cls_id
        self.sep_id = sep_id
        self.pad_id = pad_id

    def __call__(self, inputs, **kwargs):
        # Checked here, not in call(): Keras rewrites errors raised in call() to many lines.
        segments = [inputs] if isinstance(inputs, tf.RaggedTensor) else list(inputs)
        if len(segments) not in (1, 2):
            raise InputError(f"{self.name} takes 1 or 2 segments, got {len(segments)}")
        if not all(isinstance(s, tf.RaggedTensor) for s in segments):
            raise InputError(f"{self.name} expects int RaggedTensors [batch, (tokens)]")
        _check_max_seq_length(self.max_seq_length, len(segments))
        return super().__call__(segments, **kwargs)

    def call(self, inputs):
        """[A] or [A, B] (int RaggedTensors [batch, (tokens)]) -> dict of int32 Tensors."""
        segments = [
            tf.cast(s.merge_dims(1, -1) if s.ragged_rank > 1 else s, tf.int32) for s in inputs
        ]
        lengths = [s.row_lengths() for s in segments]
        if len(segments) == 1:
            lengths = [tf.minimum(lengths[0], self.max_seq_length - 2)]
        else:
            lengths = list(truncated_pair_lengths(*lengths, self.max_seq_length - 3))
        batch_size = segments[0].nrows()

        def column(value):
            return tf.RaggedTensor.from_tensor(tf.fill([batch_size, 1], value))

        word_parts, type_parts = [column(self.cls_id)], [column(0)]
        for type_id, (segment, length) in enumerate(zip(segments, lengths)):
            kept = tf.concat([_first_n(segment, length), column(self.sep_id)], axis=1)
            word_parts.append(kept)
            type_parts.append(tf.ones_like(kept) * type_id)
        word_ids = tf.concat(word_parts, axis=1)
        shape = [None, self.max_seq_length]
        return {
            "input_word_ids": word_ids.to_tensor(self.pad_id, shape=shape),
            "input_mask": tf.ones_like(word_ids).to_tensor(0, shape=shape),
            "input_type_ids": tf.concat(type_parts, axis=1).to_tensor(0, shape=shape),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            max_seq_length=self.max_seq_length,
            cls_id=self.cls_id,
            sep_id=self.sep_id,
            pad_id=self.pad_id,
        )
        return config


def _take_rows(ragged, rows, lengths, offsets=None):
    """Row `rows[i]` of `ragged`, from `offsets[i]` (default 0), `lengths[i]` values."""
    starts = tf.gather(tf.cast(ragged.row_starts(), tf.int32), rows)
    if offsets is not None:
        starts += offsets
    return tf.gather(ragged.flat_values, tf.ragged.range(starts, starts + lengths))


def pack_example_windows(segments, max_seq_length, cls_id, sep_id, stride=None, pad_id=0):
    """In-graph packing of whole examples, windowed over long A texts.

    Exactly what `classifier_features.convert_example` does in Python: an
    empty B makes a single-text example (the original's rule); B is cut as
    the original truncation cuts it; with `stride`, an A longer than what is
    left is split into windows starting 0, S, 2S, ... (S = min(stride,
    window)) up to the first that reaches its end; without, it is truncated.

    Args:
      segments: `[A]` or `[A, B]`, int RaggedTensors `[batch, (tokens)]`.
    Returns:
      (inputs, example_ids): a dict of int32 `[windows, max_seq_length]`
      (`input_word_ids`, `input_mask`, `input_type_ids`) and int32
      `[windows]`, the example each window comes from.
    """
    a = tf.cast(segments[0], tf.int32)
    len_a = tf.cast(a.row_lengths(), tf.int32)
    if len(segments) > 1:
        b = tf.cast(segments[1], tf.int32)
        len_b = tf.cast(b.row_lengths(), tf.int32)
    else:
        b, len_b = a, tf.zeros_like(len_a)
    has_b = len_b > 0
    pair_a, pair_b = truncated_pair_lengths(len_a, len_b, max_seq_length - 3)
    window = tf.where(has_b, pair_a, tf.minimum(len_a, max_seq_length - 2))
    kept_b = tf.where(has_b, pair_b, 0)
    if stride is None:
        num_windows = tf.ones_like(len_a)
        step = window
    else:
        step = tf.maximum(tf.minimum(stride, window), 1)
        num_windows = 1 + tf.maximum(0, (len_a - window + step - 1) // step)
    example_ids = tf.repeat(tf.range(tf.size(len_a)), num_windows)
    starts = tf.ragged.range(num_windows).flat_values * tf.gather(step, example_ids)
    lengths = tf.minimum(tf.gather(window, example_ids),
                         tf.gather(len_a, example_ids) - starts)
    window_ids = _take_rows(a, example_ids, lengths, starts)
    b_ids = _take_rows(b, example_ids, tf.gather(kept_b, example_ids))
    count = tf.size(example_ids)

    def column(value, width=None):
        width = tf.ones([count], tf.int32) if width is None else width
        return tf.ragged.range(width) * 0 + value

    second_sep = tf.cast(tf.gather(has_b, example_ids), tf.int32)
    word_ids = tf.concat([column(cls_id), window_ids, column(sep_id), b_ids,
                          column(sep_id, second_sep)], axis=1)
    first_len = lengths + 2
    type_ids = tf.concat([column(0, first_len),
                          column(1, tf.gather(kept_b, example_ids) + second_sep)], axis=1)
    shape = [None, max_seq_length]
    inputs = {
        "input_word_ids": word_ids.to_tensor(pad_id, shape=shape),
        "input_mask": tf.ones_like(word_ids).to_tensor(0, shape=shape),
        "input_type_ids": type_ids.to_tensor(0, shape=shape),
    }
    return inputs, example_ids
