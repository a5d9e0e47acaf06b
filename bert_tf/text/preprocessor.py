"""Raw text for the Keras task models: `BertPreprocessor` (text -> packed
inputs, in the graph), `text_dataset` (a user's texts and labels -> a
batched tf.data pipeline that runs the preprocessor), `whitespace_words`
(text -> words, as the SQuAD reader splits contexts; the exports' and the
taggers' word split) and `window_dataset` (feature rows made in Python, as
the scripts make them -> batches)."""

import math
import numbers

import keras
import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.options import Range
from bert_tf.text import tokenization
from bert_tf.text.packing import pack_example_windows
from bert_tf.text.tokenization import CONTEXT_WHITESPACE

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
DEFAULT_BATCH_SIZE = 32
_WHITESPACE_CODE_POINTS = sorted(ord(char) for char in CONTEXT_WHITESPACE)


# What raw text a task model takes (`TaskModel.text_layout`).
TEXTS = "texts or pairs (texts_a, texts_b)"
CHOICES = "(contexts, choices) with choices [n, num_choices]"


def pack_choices(tokenizer, context, endings, max_seq_length, multiple=1):
    """tf.string `context` `[batch]` and a list of n tf.string `[batch]`
    endings -> dict of int32 `[batch, n, longest]` model inputs, padded to
    the longest pair rounded up to `multiple` (at most `max_seq_length`);
    pair i of example b is `[CLS] context_b [SEP] ending_i_b [SEP]`."""
    num_choices = len(endings)
    context_ids = tokenizer(context)
    contexts = tf.concat([context_ids[:, None]] * num_choices, axis=1).merge_dims(0, 1)
    choices = tf.concat([tokenizer(ending)[:, None] for ending in endings], axis=1).merge_dims(0, 1)
    packed, _, _ = pack_example_windows(
        [contexts, choices],
        max_seq_length,
        tokenizer.cls_id,
        tokenizer.sep_id,
        pad_to_longest=True,
        length_multiple=multiple,
    )
    return {
        name: tf.reshape(value, [-1, num_choices, tf.shape(value)[1]])
        for name, value in packed.items()
    }


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
    """Raw text -> BERT's inputs, as the scripts tokenize and pack them.

    Call on texts (a tf.string Tensor `[batch]` or a list of strings), a
    pair `(texts_a, texts_b)` of them, or `(contexts, choices)` with choices
    `[batch, num_choices]` (multiple choice). Returns a dict of int32
    `[batch, length]` (choices: `[batch, num_choices, length]`)
    (`input_word_ids`, `input_mask`, `input_type_ids`): `[CLS] A [SEP] (B
    [SEP])`, truncated as the original `_truncate_seq_pair` to
    `max_seq_length`, padded to the batch's longest example rounded up to
    `length_multiple` (a compiled model then sees few shapes). `tokenizer` is
    a `BertTokenizer`; a `.keras` file carries its vocabulary.

    Args:
        tokenizer: The `BertTokenizer` (or its Keras config, as a `.keras`
            file holds it).
        max_seq_length: The longest packed example, at least 2.
        length_multiple: What each batch's length is rounded up to.
        **kwargs: Keras layer arguments (`name`, ...).

    Raises:
        InputError: `max_seq_length` is not an integer of at least 2. When
            called: the input is none of the layouts above, or
            `max_seq_length` leaves no room for the text of each segment.

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "movie", "was", "good", "bad"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
        >>> inputs = preprocessor(["the movie was good", "bad"])
        >>> inputs["input_word_ids"].numpy().tolist()
        [[2, 4, 5, 6, 7, 3, 0, 0], [2, 8, 3, 0, 0, 0, 0, 0]]
        >>> pair = preprocessor((["the movie"], ["was good"]))
        >>> pair["input_type_ids"].numpy().tolist()
        [[0, 0, 0, 0, 1, 1, 1, 0]]
        >>> choices = preprocessor((["the movie was"], [["good", "bad"]]))
        >>> tuple(choices["input_word_ids"].shape)
        (1, 2, 8)
    """

    def __init__(self, tokenizer, max_seq_length=128, length_multiple=8, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if isinstance(tokenizer, dict):
            tokenizer = keras.saving.deserialize_keras_object(tokenizer)
        self.tokenizer = tokenizer
        check_max_seq_length(max_seq_length)
        self.max_seq_length = max_seq_length
        self.length_multiple = length_multiple
        self.built = True  # no weights: exports can track it before any call

    def __call__(self, inputs, **kwargs):
        # Checked here, not in call(): Keras rewrites errors raised in call() to many lines.
        layout = text_layout(inputs)
        if layout is None:
            raise InputError(f"{self.name} takes {TEXTS} or {CHOICES}")
        segments = (inputs,) if _string_rank(inputs) == 1 else tuple(inputs)
        segments = tuple(_string_tensor(segment) for segment in segments)
        if self.max_seq_length < 1 + 2 * len(segments) - (len(segments) == 1):
            raise InputError(f"{self.name}: max_seq_length={self.max_seq_length} is too short")
        return super().__call__(segments, **kwargs)

    def call(self, inputs):
        tokenizer = self.tokenizer
        if len(inputs) == 2 and inputs[1].shape.rank == 2:
            endings = tf.unstack(inputs[1], axis=1)
            return pack_choices(
                tokenizer, inputs[0], endings, self.max_seq_length, self.length_multiple
            )
        packed, _, _ = pack_example_windows(
            [tokenizer(text) for text in inputs],
            self.max_seq_length,
            tokenizer.cls_id,
            tokenizer.sep_id,
            pad_id=tokenizer.pad_id,
            pad_to_longest=True,
            length_multiple=self.length_multiple,
        )
        return packed

    def python_tokenizer(self):
        """The scripts' `tokenization.FullTokenizer` over this vocabulary and
        casing (the same tokens as `tokenizer`), for features made in Python.

        Returns:
            The `FullTokenizer`.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "movie", "##s"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> preprocessor.python_tokenizer().tokenize("The movies")
            ['the', 'movie', '##s']
        """
        tokenizer = self.tokenizer
        return tokenization.FullTokenizer(
            tokenizer.vocab_file, tokenizer.do_lower_case, vocabulary=tokenizer.vocabulary
        )

    def get_config(self):
        return {
            **super().get_config(),
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "max_seq_length": self.max_seq_length,
            "length_multiple": self.length_multiple,
        }


def check_max_seq_length(max_seq_length, max_position_embeddings=None):
    """Raises InputError unless `max_seq_length` is an integer of at least 2
    (`[CLS]` and `[SEP]`) and, when given, at most `max_position_embeddings`."""
    top = max_position_embeddings
    if (
        not isinstance(max_seq_length, numbers.Integral)
        or isinstance(max_seq_length, bool)
        or not 2 <= max_seq_length <= (top or max_seq_length)
    ):
        expected = Range(at_least=2, at_most=top).describe(int)
        if top:
            expected += " (max_position_embeddings)"
        raise InputError(f"max_seq_length={max_seq_length!r}: expected {expected}")


def whitespace_words(texts, split_cjk=False):
    """Splits texts into words as the SQuAD reader's `context_to_words`.

    Args:
      texts: tf.string `[batch]` (invalid UTF-8 decodes to U+FFFD).
      split_cjk: each CJK ideograph a word of its own, as the reader does
        (else only whitespace splits).
    Returns:
      (chars, word_starts, word_ends): chars int32 `[batch, (chars)]`, the
      code points; word_starts, word_ends int32 `[batch, (words)]`, the
      offset of each word's first character and one past its last.
    """
    chars = tf.strings.unicode_decode(texts, "UTF-8", errors="replace")
    code_points = chars.flat_values
    is_space = tf.reduce_any(code_points[:, None] == _WHITESPACE_CODE_POINTS, axis=1)
    # A character that ends the word before it and the one after it.
    is_alone = tf.zeros_like(is_space)
    if split_cjk:
        for first, last in tokenization.CJK_RANGES:
            is_alone |= (code_points >= first) & (code_points <= last)
    rows = chars.value_rowids()
    position = tf.cast(tf.ragged.range(chars.row_lengths()).flat_values, tf.int32)
    row_length = tf.cast(tf.gather(chars.row_lengths(), rows), tf.int32)
    # Neighbours of each character; a row's first / last sees a space beyond its edge.
    breaks = tf.pad(is_space | is_alone, [[1, 1]], constant_values=True)
    is_first = ~is_space & (breaks[:-2] | is_alone | (position == 0))
    is_last = ~is_space & (breaks[2:] | is_alone | (position == row_length - 1))
    word_starts = tf.RaggedTensor.from_value_rowids(
        tf.boolean_mask(position, is_first), tf.boolean_mask(rows, is_first), chars.nrows()
    )
    word_ends = word_starts.with_flat_values(tf.boolean_mask(position + 1, is_last))
    return chars, word_starts, word_ends


def split_words(texts):
    """Python strings -> their `whitespace_words(split_cjk=True)`: per text a
    list of `(word, start_char, end_char)`."""
    texts = list(texts)
    if not texts:
        return []
    _, starts, ends = whitespace_words(tf.constant(texts, tf.string), split_cjk=True)
    return [
        [(text[b:e], b, e) for b, e in zip(row_starts, row_ends)]
        for text, row_starts, row_ends in zip(texts, starts.to_list(), ends.to_list())
    ]


def window_dataset(inputs, targets=None, sample_weight=None, batch_size=None, shuffle=False):
    """A batched tf.data.Dataset of `(inputs[, targets[, sample_weight]])`
    from feature rows made in Python: `inputs` a dict of int `[rows,
    max_seq_length]` (`INPUT_NAMES`), `targets` an array or a dict of
    arrays `[rows, ...]`, `sample_weight` `[rows, ...]`. Batches keep the
    full length, as the scripts' records."""
    parts = [{name: np.asarray(inputs[name], np.int32) for name in INPUT_NAMES}]
    parts += [v for v in (targets, sample_weight) if v is not None]
    dataset = tf.data.Dataset.from_tensor_slices(tuple(parts) if len(parts) > 1 else parts[0])
    if shuffle:
        dataset = dataset.shuffle(len(parts[0][INPUT_NAMES[0]]), reshuffle_each_iteration=True)
    return dataset.batch(batch_size or DEFAULT_BATCH_SIZE).prefetch(tf.data.AUTOTUNE)


def _string_rank(value):
    """The rank of a string array (a list, nested lists, a numpy or tf.string
    array or a tf.TensorSpec), else None."""
    if isinstance(value, (tf.Tensor, tf.TensorSpec)):
        return value.shape.rank if value.dtype == tf.string else None
    if isinstance(value, np.ndarray):
        return value.ndim if value.dtype.kind in "USO" else None
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(v, (str, bytes)) for v in value):
            return 1
        ranks = {_string_rank(v) for v in value}
        return ranks.pop() + 1 if ranks in ({1}, {2}) else None
    return None


def text_layout(x):
    """`TEXTS` or `CHOICES` when `x` is raw text of that layout, else None."""
    if _string_rank(x) == 1:
        return TEXTS
    if not isinstance(x, (tuple, list)) or len(x) != 2 or _string_rank(x[0]) != 1:
        return None
    return {1: TEXTS, 2: CHOICES}.get(_string_rank(x[1]))


def _string_tensor(value):
    if isinstance(value, tf.Tensor):
        return value
    array = np.asarray(value, dtype=object)
    strings = [v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in array.flat]
    return tf.reshape(tf.constant(strings, tf.string), array.shape)


def dataset_text_layout(dataset):
    """`text_layout` of a tf.data.Dataset's inputs: its element, or the
    element's first part when it is a tuple `(x, y[, sample_weight])`."""
    spec = dataset.element_spec
    layout = text_layout(spec)
    if layout is None and isinstance(spec, tuple):
        layout = text_layout(spec[0])
    return layout


def split_off_validation(x, y, sample_weight, validation_split):
    """Raw text `x` (see `text_layout`) and its `y`, `sample_weight` ->
    `(training, validation)`, each `(x, y, sample_weight)`: the last
    `validation_split` of the rows validate, as Keras cuts arrays."""
    count = len(x) if _string_rank(x) == 1 else len(x[0])
    split_at = int(math.floor(count * (1.0 - validation_split)))

    def rows(value, part, text=False):
        if value is None:
            return None
        if isinstance(value, dict):
            return {name: rows(v, part) for name, v in value.items()}
        if text and _string_rank(value) != 1:
            return tuple(rows(v, part) for v in value)
        return value[:split_at] if part == 0 else value[split_at:]

    return tuple(
        (rows(x, part, text=True), rows(y, part), rows(sample_weight, part)) for part in (0, 1)
    )


def text_dataset(preprocessor, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
    """A batched tf.data.Dataset of `(inputs[, y[, sample_weight]])` whose
    inputs are `preprocessor(x)`, each batch padded to its own longest example.

    `x` is raw text (see `text_layout`) or a batched tf.data.Dataset of it
    (then `y` and `sample_weight` come from the dataset).
    """
    if isinstance(x, tf.data.Dataset):
        dataset = x
    else:
        texts = (x,) if _string_rank(x) == 1 else tuple(x)
        texts = tuple(_string_tensor(t) for t in texts)
        count = int(texts[0].shape[0])
        if len({int(t.shape[0]) for t in texts}) > 1:
            rows = " and ".join(str(int(t.shape[0])) for t in texts)
            raise InputError(f"x: its two parts have {rows} rows")
        if y is None and sample_weight is not None:
            raise InputError("sample_weight needs y")
        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None and len(value) != count:
                raise InputError(f"{name} has {len(value)} rows for {count} texts")
        parts = [texts if len(texts) == 2 else texts[0]]
        parts += [np.asarray(v) for v in (y, sample_weight) if v is not None]
        dataset = tf.data.Dataset.from_tensor_slices(tuple(parts) if len(parts) > 1 else parts[0])
        if shuffle:
            dataset = dataset.shuffle(count, reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size or DEFAULT_BATCH_SIZE)

    def preprocess(*element):
        if len(element) > 1 and text_layout(element) is None:
            return (preprocessor(element[0]),) + element[1:]
        return preprocessor(element if len(element) > 1 else element[0])

    return dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
