"""SavedModel export of a token tagger (NER): raw sentences in, a tag per word out.

`serving_default` takes `text` tf.string `[batch]` (one sentence each) and
returns `tags` tf.string `[batch, max_words]` (padded with ""), and
`word_starts`, `word_ends` int32 `[batch, max_words]` (each word is
`text[word_starts:word_ends]`, offsets in Unicode code points; -1 padding).
It runs `run_ner.py`'s prediction in one graph: words are split on
whitespace and around each CJK ideograph, so Chinese is tagged per
character (`preprocessor.whitespace_words`), each WordPiece-tokenized on its
own (none -> `[UNK]`), packed into windows `data.tagging.window_stride`
apart, and each word's tag is the argmax at its first sub-token in the
window where that sub-token has the most context, as `data.tagging`
features do; with a CRF (`use_crf`), the Viterbi path over those
sub-tokens of each window. It loads with only tensorflow and tensorflow_text imported;
the vocab file travels with it as an asset.
"""

import os

import keras
import tensorflow as tf

from bert_tf.data.tagging import window_stride
from bert_tf.errors import InputError
from bert_tf.export.common import (
    check_export_dir,
    model_call,
    model_text_settings,
    request_length_multiple,
    write_archive,
)
from bert_tf.modeling.tagging import decode_tags
from bert_tf.text.packing import pack_example_windows
from bert_tf.text.preprocessor import whitespace_words
from bert_tf.text.tags import chunks, detect_scheme


def _cut_words(chars, word_starts, word_ends):
    """UTF-8 words tf.string `[all words]` from code points `chars` `[batch, (chars)]`
    and the ragged `[batch, (words)]` offsets."""
    offsets = tf.gather(chars.row_starts(), word_starts.value_rowids())
    spans = tf.ragged.range(
        offsets + tf.cast(word_starts.flat_values, tf.int64),
        offsets + tf.cast(word_ends.flat_values, tf.int64),
    )
    return tf.strings.unicode_encode(tf.gather(chars.flat_values, spans), "UTF-8")


def _at_least_one(pieces, unk_id):
    """int32 `[words, (tokens)]` -> the same with `[UNK]` for empty rows."""
    count = pieces.nrows()
    unk = tf.RaggedTensor.from_row_lengths(tf.fill([count], unk_id), tf.ones([count], tf.int64))
    padded = tf.concat([pieces, unk], axis=1)
    keep = tf.maximum(pieces.row_lengths(), 1)
    starts = padded.row_starts()
    values = tf.gather(padded.flat_values, tf.ragged.range(starts, starts + keep).flat_values)
    return tf.RaggedTensor.from_row_lengths(values, keep)


def sentence_pieces(tokenizer, text):
    """Sentences -> words and their sub-tokens.

    Args: tokenizer: a BertTokenizer; text: tf.string `[batch]`.
    Returns:
      (word_starts, word_ends, ids, is_first, token_words): the words'
      offsets int32 `[batch, (words)]`; ids int32 `[batch, (tokens)]`;
      is_first bool `[all tokens]` (a word's first sub-token); token_words
      int64 `[all tokens]` the index of each token's word in
      `word_starts.flat_values`.
    """
    chars, word_starts, word_ends = whitespace_words(text, split_cjk=True)
    pieces = _at_least_one(tokenizer(_cut_words(chars, word_starts, word_ends)), tokenizer.unk_id)
    ids = tf.RaggedTensor.from_row_splits(pieces, word_starts.row_splits).merge_dims(1, 2)
    is_first = tf.ragged.range(pieces.row_lengths()).flat_values == 0
    return word_starts, word_ends, ids, is_first, pieces.value_rowids()


def labelled_positions(input_mask, example_ids, starts, row_starts, is_first):
    """Where each word is predicted: its first sub-token, in its max-context window.

    Args:
      input_mask: int32 `[windows, seq]`.
      example_ids, starts: int32 `[windows]` (from `pack_example_windows`).
      row_starts: int32 `[batch]`, each sentence's first token among all tokens.
      is_first: bool `[all tokens]`.
    Returns:
      (chosen bool `[windows, seq]`, token int32 `[windows, seq]` the token
      at each position among all tokens, valid where chosen).
    """
    length = tf.reduce_sum(input_mask, axis=1) - 2
    offset = tf.range(tf.shape(input_mask)[1])[None, :] - 1
    in_window = (offset >= 0) & (offset < length[:, None])
    token = (tf.gather(row_starts, example_ids) + starts)[:, None] + offset
    num_tokens = tf.size(is_first)
    first = in_window & tf.gather(is_first, tf.where(in_window, token, 0))
    # alignment.is_max_context's score, in float64 as Python computes it.
    score = (
        tf.cast(tf.minimum(offset, length[:, None] - 1 - offset), tf.float64)
        + 0.01 * tf.cast(length, tf.float64)[:, None]
    )
    segment = tf.where(first, token, num_tokens)
    best = tf.math.unsorted_segment_max(score, segment, num_tokens + 1)
    is_best = first & (score == tf.gather(best, segment))
    num_windows = tf.shape(score)[0]
    window = tf.broadcast_to(tf.range(num_windows)[:, None], tf.shape(score))
    earliest = tf.math.unsorted_segment_min(
        tf.where(is_best, window, num_windows), segment, num_tokens + 1
    )
    return is_best & (window == tf.gather(earliest, segment)), token


def tag_sentences(infer, tokenizer, labels, max_seq_length, text, multiple=1, crf=None):
    """text tf.string `[batch]` -> the `serving_default` outputs (module docstring).
    `infer` is the model call (`export.common.model_call`); windows are
    padded to their longest, rounded up to `multiple`; `crf` the model's
    `LinearChainCrf`, or None (argmax)."""
    word_starts, word_ends, ids, is_first, token_words = sentence_pieces(tokenizer, text)
    inputs, example_ids, starts = pack_example_windows(
        [ids],
        max_seq_length,
        tokenizer.cls_id,
        tokenizer.sep_id,
        stride=window_stride(max_seq_length),
        pad_to_longest=True,
        length_multiple=multiple,
    )
    logits = infer(inputs)
    chosen, token = labelled_positions(
        inputs["input_mask"], example_ids, starts, tf.cast(ids.row_starts(), tf.int32), is_first
    )
    predicted = decode_tags(crf, logits, chosen)
    words = tf.gather(token_words, tf.boolean_mask(token, chosen))
    num_words = tf.size(word_starts.flat_values, out_type=tf.int64)
    tag_ids = tf.scatter_nd(words[:, None], tf.boolean_mask(predicted, chosen), [num_words])
    tags = tf.gather(tf.constant(labels), tag_ids)
    return {
        "tags": word_starts.with_flat_values(tags).to_tensor(""),
        "word_starts": word_starts.to_tensor(-1),
        "word_ends": word_ends.to_tensor(-1),
    }


def _tag_names(model, labels, what):
    """`labels` (by default `model.label_names`) as a list, one per logit."""
    labels = list(labels or getattr(model, "label_names", None) or [])
    if not labels:
        raise InputError(
            f"{what} needs labels (the tag names in id order) or a model with label_names"
        )
    if len(labels) != model.num_labels:
        raise InputError(f"{len(labels)} labels for a model of {model.num_labels} tags")
    return labels


def export_tagger(
    model,
    export_dir,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    labels=None,
    overwrite=False,
    jit_compile=False,
):
    """Writes `model` (logits `[batch, seq, len(labels)]`, decoded by its
    `crf` when it has one) as a SavedModel at `export_dir` (module
    docstring). Written to a temporary directory and renamed.

    Args:
        model: The tagger (a `BertTokenClassifier` or `BertFeatureTagger`).
        export_dir: Where to write the SavedModel.
        vocab_file: The vocab; by default the model's preprocessor's.
        do_lower_case: The casing; by default the preprocessor's (with a
            `vocab_file`: True).
        max_seq_length: The window length; by default the preprocessor's.
        labels: The tag names in id order; by default the model's
            `label_names`.
        overwrite: Whether to replace an existing `export_dir`.
        jit_compile: Whether the model runs compiled with XLA (`export.common`).

    Returns:
        `export_dir`.

    Raises:
        InputError: There are no `labels` (nor `label_names`), or not one per
            tag; `export_dir` exists and `overwrite` is False, or its
            folder cannot be written; the model has no preprocessor and no
            `vocab_file` and `max_seq_length` are given; `do_lower_case`
            contradicts the preprocessor's; or `max_seq_length` exceeds the
            model's `max_position_embeddings`.

    Examples:
        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> import bert_tf
        >>> from bert_tf.export import export_tagger
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertTokenClassifier(
        ...     config, label_names=["O", "B-X", "I-X"], preprocessor=preprocessor
        ... )
        >>> export_dir = export_tagger(model, os.path.join(tempfile.mkdtemp(), "export"))
        >>> tag = tf.saved_model.load(export_dir).signatures["serving_default"]
        >>> outputs = tag(text=tf.constant(["the movie was good", "bad"]))
        >>> outputs["word_starts"].numpy().tolist(), outputs["word_ends"].numpy().tolist()
        ([[0, 4, 10, 14], [0, -1, -1, -1]], [[3, 9, 13, 18], [3, -1, -1, -1]])
        >>> tuple(outputs["tags"].shape)
        (2, 4)
    """
    check_export_dir(export_dir, overwrite)
    labels = _tag_names(model, labels, "export_tagger")
    tokenizer, max_seq_length = model_text_settings(
        model, vocab_file, do_lower_case, max_seq_length
    )
    infer = model_call(model, jit_compile)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve(text):
        return tag_sentences(
            infer,
            tokenizer,
            labels,
            max_seq_length,
            text,
            request_length_multiple(jit_compile),
            getattr(model, "crf", None),
        )

    return write_archive(export_dir, model, tokenizer, {"serving_default": serve})


def entities(model_or_export, texts, labels=None, max_seq_length=None):
    """The entities tagged in each of `texts` (list of str).

    Words and tags are as `serving_default`'s (module docstring); entities
    are the chunks of CoNLL's scorer (`text.tags.chunks`) in the tags' scheme
    (`text.tags.detect_scheme` of `labels`, else of the tags found: BIO,
    BIOES or BMES).

    Args:
        model_or_export: A Keras token classifier with a preprocessor (from
            `from_pretrained`); or the path of an `export_tagger`
            SavedModel, or that SavedModel loaded.
        texts: The sentences, a list of str.
        labels: A Keras model's tag names in id order; by default its
            `label_names`.
        max_seq_length: A Keras model's window length; by default its
            preprocessor's.

    Returns:
        Per text a list of dicts: `type`, `text`, `start_char`, `end_char`
            (code points).

    Raises:
        InputError: A Keras model without `labels` (nor `label_names`), or
            not one per tag; or without a preprocessor.

    Examples:
        >>> import bert_tf
        >>> from bert_tf.export.tagging import entities
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "paris", "is", "in", "france"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> # A model of one tag, B-LOC, which it gives every word: each word is an entity.
        >>> model = bert_tf.BertTokenClassifier(config, label_names=["B-LOC"], preprocessor=preprocessor)
        >>> found = entities(model, ["Paris is in France", "France"])
        >>> found[0][0]
        {'type': 'LOC', 'text': 'Paris', 'start_char': 0, 'end_char': 5}
        >>> [[entity["text"] for entity in text_entities] for text_entities in found]
        [['Paris', 'is', 'in', 'France'], ['France']]
    """
    texts = list(texts)
    if isinstance(model_or_export, keras.Model):
        labels = _tag_names(model_or_export, labels, "entities() with a Keras model")
        tokenizer, max_seq_length = model_text_settings(model_or_export, None, None, max_seq_length)
        infer = model_call(model_or_export)
        outputs = tag_sentences(
            infer,
            tokenizer,
            labels,
            max_seq_length,
            tf.constant(texts),
            crf=getattr(model_or_export, "crf", None),
        )
    else:
        export = model_or_export
        if isinstance(export, (str, os.PathLike)):
            export = tf.saved_model.load(os.fspath(export))
        outputs = export.signatures["serving_default"](text=tf.constant(texts, tf.string))
    tags, starts, ends = (outputs[k].numpy() for k in ("tags", "word_starts", "word_ends"))
    tags = [
        [tag.decode("utf-8") for tag in row_tags[: int((row_starts >= 0).sum())]]
        for row_tags, row_starts in zip(tags, starts)
    ]
    scheme = detect_scheme(labels or {tag for row in tags for tag in row})
    found = []
    for text, words, row_starts, row_ends in zip(texts, tags, starts, ends):
        found.append(
            [
                {
                    "type": entity_type,
                    "text": text[row_starts[first] : row_ends[last]],
                    "start_char": int(row_starts[first]),
                    "end_char": int(row_ends[last]),
                }
                for entity_type, first, last in sorted(chunks(words, scheme), key=lambda c: c[1])
            ]
        )
    return found
