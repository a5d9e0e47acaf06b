"""Raw text for the Keras task models: `BertPreprocessor` (text -> packed
inputs, in the graph) and `text_dataset` (a user's texts and labels -> a
batched tf.data pipeline that runs the preprocessor)."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.packing import pack_example_windows

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
DEFAULT_BATCH_SIZE = 32


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
    """Raw text -> BERT's inputs, as the scripts tokenize and pack them.

    Call on texts (a tf.string Tensor `[batch]` or a list of strings) or a
    pair `(text_a, text_b)` of them. Returns a dict of int32 `[batch, length]`
    (`input_word_ids`, `input_mask`, `input_type_ids`): `[CLS] A [SEP] (B
    [SEP])`, truncated as the original `_truncate_seq_pair` to
    `max_seq_length`, padded to the batch's longest example rounded up to
    `length_multiple` (a compiled model then sees few shapes). `tokenizer` is
    a `BertTokenizer`; a `.keras` file carries its vocabulary.
    """

    def __init__(self, tokenizer, max_seq_length=128, length_multiple=8, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        if isinstance(tokenizer, dict):
            tokenizer = keras.saving.deserialize_keras_object(tokenizer)
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.length_multiple = length_multiple

    def __call__(self, inputs, **kwargs):
        # Checked here, not in call(): Keras rewrites errors raised in call() to many lines.
        pair = isinstance(inputs, (tuple, list)) and not _is_string_array(inputs)
        segments = list(inputs) if pair else [inputs]
        if len(segments) not in (1, 2):
            raise InputError(f"{self.name} takes one text or a pair of texts, got {len(segments)}")
        if len(segments) == 2 and self.max_seq_length < 3 or self.max_seq_length < 2:
            raise InputError(f"{self.name}: max_seq_length={self.max_seq_length} is too short")
        return super().__call__(tuple(segments), **kwargs)

    def call(self, inputs):
        tokenizer = self.tokenizer
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

    def get_config(self):
        return {
            **super().get_config(),
            "tokenizer": keras.saving.serialize_keras_object(self.tokenizer),
            "max_seq_length": self.max_seq_length,
            "length_multiple": self.length_multiple,
        }


def _is_string_array(value):
    if isinstance(value, (tf.Tensor, tf.TensorSpec)):
        return value.dtype == tf.string
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "USO" and value.ndim == 1
    return isinstance(value, (list, tuple)) and all(isinstance(v, (str, bytes)) for v in value)


def is_text(x):
    """Whether `x` is raw text: strings (a list, a numpy or tf.string array
    `[n]`) or a pair (tuple or list of two such) for sentence-pair tasks."""
    if _is_string_array(x):
        return True
    return isinstance(x, (tuple, list)) and len(x) == 2 and all(map(_is_string_array, x))


def _string_tensor(value):
    if isinstance(value, tf.Tensor):
        return value
    array = np.asarray(value, dtype=object)
    if array.ndim != 1:
        raise InputError(f"x: expected a list or array of strings [n], got shape {array.shape}")
    return tf.constant([v.decode("utf-8") if isinstance(v, bytes) else str(v) for v in array])


def dataset_is_text(dataset):
    """Whether a tf.data.Dataset's inputs (its element, or the element's
    first part when it is a tuple `(x, y[, sample_weight])`) are strings."""
    spec = dataset.element_spec
    inputs = spec[0] if isinstance(spec, tuple) and not is_text(spec) else spec
    return all(s.dtype == tf.string for s in tf.nest.flatten(inputs))


def text_dataset(preprocessor, x, y=None, sample_weight=None, batch_size=None, shuffle=False):
    """A batched tf.data.Dataset of `(inputs[, y[, sample_weight]])` whose
    inputs are `preprocessor(x)`, each batch padded to its own longest example.

    `x` is raw text (see `is_text`) or a batched tf.data.Dataset of it (then
    `y` and `sample_weight` come from the dataset).
    """
    if isinstance(x, tf.data.Dataset):
        dataset = x
    else:
        texts = tuple(x) if isinstance(x, (tuple, list)) and not _is_string_array(x) else (x,)
        texts = tuple(_string_tensor(t) for t in texts)
        if len({int(t.shape[0]) for t in texts}) > 1:
            rows = " and ".join(str(int(t.shape[0])) for t in texts)
            raise InputError(f"x: the pairs' first and second texts have {rows} rows")
        parts = [texts if len(texts) == 2 else texts[0]]
        parts += [np.asarray(v) for v in (y, sample_weight) if v is not None]
        if y is None and sample_weight is not None:
            raise InputError("sample_weight needs y")
        count = int(texts[0].shape[0])
        for name, value in (("y", y), ("sample_weight", sample_weight)):
            if value is not None and len(value) != count:
                raise InputError(f"{name} has {len(value)} rows for {count} texts")
        dataset = tf.data.Dataset.from_tensor_slices(tuple(parts) if len(parts) > 1 else parts[0])
        if shuffle:
            dataset = dataset.shuffle(count, reshuffle_each_iteration=True)
        dataset = dataset.batch(batch_size or DEFAULT_BATCH_SIZE)

    def preprocess(*element):
        if len(element) > 1 and not is_text(tuple(element)):
            return (preprocessor(element[0]),) + element[1:]
        return preprocessor(element if len(element) > 1 else element[0])

    return dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
