"""Raw sentences for `BertTokenClassifier`, made as run_ner.py makes them.

x is a list of sentences, each a str (split into words by
`preprocessor.whitespace_words`: on whitespace, and each CJK ideograph a
word of its own, as the exported tagger splits them) or a list of words.
y is, per sentence, a list of tags (one per word), or a CLUENER "label"
dict `{type: {entity text: [[first, last], ...]}}` (inclusive character
offsets; every character of the str is then a word, spaces too, as
run_ner.py's `--data_format=cluener`).

Features are `data.tagging`'s (each word WordPiece-tokenized alone, its
tag on its first piece, a long sentence in windows labelling each word
once); predictions are the tag at each word's first piece, and the scores
run_ner.py's eval_results.txt (`metrics.entities.eval_metrics`).
"""

import numpy as np

from bert_tf.data import tagging
from bert_tf.data.features import input_features
from bert_tf.errors import InputError
from bert_tf.text.preprocessor import split_words, window_dataset
from bert_tf.text.tags import detect_scheme

RAW_TEXT = "sentences (str or lists of words)"


def is_raw(x):
    """Whether `x` is a list of sentences (str or lists of str)."""
    if not isinstance(x, (list, tuple, np.ndarray)) or not len(x):
        return False
    return all(
        isinstance(s, str) or (isinstance(s, (list, tuple)) and all(isinstance(w, str) for w in s))
        for s in x
    )


def label_scheme(label_names):
    """The tagging scheme CLUENER spans are tagged in: the labels' (BIO
    without label names yet)."""
    return detect_scheme(label_names) if label_names else "bio"


def sentences(x, y=None, scheme="bio"):
    """The `tagging.Sentence`s of `x` with the tags of `y` ("O" without `y`)."""
    if y is not None and len(y) != len(x):
        raise InputError(f"y has {len(y)} rows for {len(x)} sentences")
    texts = [i for i, s in enumerate(x) if isinstance(s, str)]
    spans = y is not None and any(isinstance(label, dict) for label in y)
    split = dict(zip(texts, split_words([x[i] for i in texts]))) if not spans else {}
    found = []
    for i, sentence in enumerate(x):
        label = None if y is None else y[i]
        if isinstance(label, dict):
            if not isinstance(sentence, str):
                raise InputError(f"y: sentence {i}: span labels need the sentence as a str")
            words = tuple(sentence)
            tags = tagging.span_label_tags(sentence, label, scheme, f"y: sentence {i}")
        else:
            if isinstance(sentence, str):
                words = tuple(word for word, _, _ in split[i]) if i in split else tuple(sentence)
            else:
                words = tuple(sentence)
            tags = [tagging.OUTSIDE] * len(words) if label is None else [str(t) for t in label]
            if len(tags) != len(words):
                raise InputError(f"y: sentence {i} has {len(words)} words but {len(tags)} tags")
        found.append(tagging.Sentence(words, tuple(tags), (i,) * len(words)))
    return found


def label_list(found):
    """run_ner.py's label set of training sentences: "O" first, then sorted."""
    return tagging.label_list([found])


def windows(preprocessor, found, label_names, labelled=True):
    """The sentences' windows as run_ner.py's records: a dict of int arrays
    (`input_ids`, `input_mask`, `segment_ids`, `label_ids`, `word_ids`
    `[windows, max_seq_length]`, `sentence_index` `[windows, 1]`); without
    `labelled` the label ids are 0 (predicting)."""
    ids = {label: i for i, label in enumerate(label_names)}
    length = preprocessor.max_seq_length
    rows = []
    pieces = tagging.document_windows(found, preprocessor.python_tokenizer(), length, False)
    for index, (sentence, packed_windows) in enumerate(pieces):
        unknown = [t for t in sentence.tags if t not in ids] if labelled else []
        if unknown:
            raise InputError(
                f"y: unknown tag {unknown[0]!r} in sentence {index}; "
                f"the labels are {', '.join(label_names)}"
            )
        tag_ids = [ids[t] for t in sentence.tags] if labelled else [0] * len(sentence.tags)
        for packed, labelled_words in packed_windows:
            rows.append(tagging.window_record(packed, labelled_words, tag_ids, index, length))
    return {name: np.array([row[name] for row in rows], np.int32) for name in rows[0]}


def model_inputs(records):
    """The windows' records under the names the model reads (`input_features`)."""
    return {f.model_name or f.name: records[f.name] for f in input_features(None)}


def training_dataset(preprocessor, found, label_names, use_crf, batch_size=None, shuffle=False):
    """Batches of windows with the default loss's targets: label ids and
    weights 1 on each word's first piece, or with a CRF the label ids with
    -1 elsewhere."""
    if not found:
        raise InputError("x: no sentences to train on")
    records = windows(preprocessor, found, label_names)
    labels = records["label_ids"]
    if use_crf:
        return window_dataset(model_inputs(records), labels, None, batch_size, shuffle)
    weights = (labels >= 0).astype(np.float32)
    return window_dataset(
        model_inputs(records), np.maximum(labels, 0), weights, batch_size, shuffle
    )


def predict_windows(model, found, labelled, batch_size=None, **kwargs):
    """`(records, logits)` of the sentences' windows."""
    records = windows(model.preprocessor, found, model.label_names, labelled)
    dataset = window_dataset(model_inputs(records), batch_size=batch_size)
    return records, model.predict(dataset, **kwargs)


def word_tags(model, found, records, logits, decode):
    """Per sentence the tag names at its words' first pieces (`decode`:
    logits, mask -> tag ids, the model's `decode_tags`)."""
    batch = {
        "predicted": np.asarray(decode(logits, records["word_ids"] >= 0)),
        "word_ids": records["word_ids"],
        "sentence_index": records["sentence_index"][:, 0],
        "is_real_example": np.ones(len(records["word_ids"]), np.int32),
    }
    predicted = tagging.word_predictions(found, [batch])
    return [[model.label_names[i] for i in ids] for ids in predicted]
