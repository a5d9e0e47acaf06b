"""Named entity data: readers, label set, features and their records.

Three formats (`DATA_FORMATS`):
- "conll", CoNLL-2003: one `token POS chunk NER` row per word (columns
  separated by spaces), a blank line after each sentence and
  `-DOCSTART- -X- -X- O` rows that start a document. The tag is the last
  column.
- "chars", any CoNLL-like file: the word in the first column, the tag in
  the last, as many columns (at least two) on every row, separated by spaces
  or tabs; `-DOCSTART-` rows optional. MSRA, People's Daily and Weibo NER
  have one `character tag` row per Chinese character.
- "cluener", CLUENER2020 JSON lines (`{"id": 0, "text": "...", "label":
  {"name": {"叶老桂": [[9, 11]]}}}`, spans inclusive character offsets):
  every character of the text is a word (a space too: it has no sub-token,
  so it becomes `[UNK]`, and offsets stay the text's), tagged from the
  spans in the tagging scheme (`text.tags.span_tags`); the file is one
  document.

Features: each word is WordPiece-tokenized on its own (a word that
tokenizes to nothing becomes `[UNK]`, so every word has a sub-token); the
word's tag id goes on its FIRST sub-token, every other position (other
sub-tokens, [CLS], [SEP], padding, context) gets `IGNORE` (-1), left out of
the loss and the metrics. `word_ids` holds the sentence's word index at the
labelled positions (-1 elsewhere) and `sentence_index` the sentence's
position in the file, so predictions map back to words.

A sentence longer than `max_seq_length - 2` sub-tokens becomes several
windows (`packing.pack_windows`, `window_stride` apart); each word is
labelled (and predicted) in exactly one of them: the window where its first
sub-token has the most context (`packing.is_max_context`, as SQuAD's
windows; the first such window on ties). With `document_context` the
sentence sits in the middle of `max_seq_length - 2` sub-tokens of its
document (the neighbouring sentences on both sides, moved over at the
document's edges), the paper's "maximal document context"; only the
sentence's own words are labelled. A sentence that alone fills more than
the window gets windows of its own sub-tokens as above.
"""

import dataclasses
import functools
import json
import os

from absl import logging

from bert_tf.data import features as feature_files
from bert_tf.data.features import Feature, FeatureSchema, file_stamp, input_features
from bert_tf.errors import InputError
from bert_tf.files import exists, open_file, write_text_atomically
from bert_tf.text.packing import is_max_context, pack_windows
from bert_tf.text.tags import chunks, span_tags

DATA_FORMATS = ("conll", "chars", "cluener")
DOCSTART = "-DOCSTART-"
NUM_COLUMNS = 4
OUTSIDE = "O"
IGNORE = -1
RECORD_FILES = {
    "train": "train.tf_record",
    "eval": "eval.tf_record",
    "predict": "predict.tf_record",
}
UNLABELED_RECORD_FILE = "unlabeled.tf_record"
_CACHE_VERSION = 1


@dataclasses.dataclass(frozen=True)
class Sentence:
    """One sentence: its words, their tags, the (1-based) line of each word
    and, from CLUENER files, the line's "id"."""

    words: tuple
    tags: tuple
    line_numbers: tuple
    example_id: object = None


def read_conll(path):
    """Reads a CoNLL-2003 file into documents: a list of lists of `Sentence`.

    A file without `-DOCSTART-` rows is one document. A row without exactly
    four columns raises InputError naming the file and the line.
    """
    return read_columns(path, conll=True)


def read_columns(path, conll=False):
    """Reads a CoNLL-like file (word first, tag last) as `read_conll`.

    Rows have as many columns as the first word row (at least two;
    `-DOCSTART-` rows of any width), or with `conll` four, as `read_conll`.
    InputError names the file and line of a row that differs.
    """
    documents, sentences, rows = [], [], []
    width, width_line = (NUM_COLUMNS if conll else None), None

    def end_sentence():
        if rows:
            words, tags, lines = zip(*rows)
            sentences.append(Sentence(words, tags, lines))
            rows.clear()

    def end_document():
        end_sentence()
        if sentences:
            documents.append(list(sentences))
            sentences.clear()

    if not exists(path):
        raise InputError(f"{path} does not exist")
    with open_file(path) as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            end_sentence()
            continue
        if not conll:
            if fields[0] == DOCSTART:
                end_document()
                continue
            if len(fields) < 2:
                raise InputError(f"{path}:{number}: 1 column, expected a word and its tag")
            if width is None:
                width, width_line = len(fields), number
        if len(fields) != width:
            expected = (
                f"{NUM_COLUMNS} (token POS chunk NER)"
                if conll
                else f"{width} as on line {width_line}"
            )
            raise InputError(f"{path}:{number}: {len(fields)} columns, expected {expected}")
        if fields[0] == DOCSTART:
            end_document()
            continue
        rows.append((fields[0], fields[-1], number))
    end_document()
    return documents


def _cluener_spans(label):
    """`(type, entity, first, last)` of a "label" value; ValueError unless it
    maps types to `{entity text: [[first, last], ...]}`."""
    spans = []
    for entity_type, entities in label.items():
        for entity, positions in entities.items():
            for first, last in positions:
                if not (isinstance(first, int) and isinstance(last, int)):
                    raise ValueError
                spans.append((entity_type, entity, first, last))
    return spans


def span_label_tags(text, label, scheme, where):
    """The tags of each character of `text` from a CLUENER "label" `{type:
    {entity text: [[first, last], ...]}}` (inclusive offsets), in `scheme`;
    InputError (prefixed `where`) for a malformed label, a span whose text is
    not the text at its offsets, or overlapping spans."""
    try:
        spans = _cluener_spans(label)
    except (AttributeError, TypeError, ValueError):
        raise InputError(
            f'{where}: "label" must map types to {{entity: [[first, last], ...]}}'
        ) from None
    tags = [OUTSIDE] * len(text)
    owner = [None] * len(text)
    for entity_type, entity, first, last in sorted(spans, key=lambda span: span[2:]):
        name = f"{entity_type} {entity!r} at [{first}, {last}]"
        if not 0 <= first <= last < len(text) or text[first : last + 1] != entity:
            found = text[first : last + 1] if 0 <= first <= last < len(text) else None
            raise InputError(
                f"{where}: {name} is not the text there "
                + (f"({found!r})" if found is not None else f"({len(text)} characters)")
            )
        overlapped = next((o for o in owner[first : last + 1] if o is not None), None)
        if overlapped is not None:
            raise InputError(f"{where}: {name} overlaps {overlapped}")
        owner[first : last + 1] = [name] * (last + 1 - first)
        tags[first : last + 1] = span_tags(entity_type, last + 1 - first, scheme)
    return tags


def read_cluener(path, scheme="bio"):
    """Reads a CLUENER2020 JSON lines file into one document of `Sentence`s
    (a list holding a list), one per non-blank line, the characters tagged in
    `scheme` ("bio", "bioes" or "bmes"); a line without "label" (the test
    file) is all "O". `example_id` is the line's "id", or without one its
    0-based index among the file's non-blank lines. InputError names the
    file and line of bad JSON, a span whose text is not the text at its
    offsets, and overlapping spans."""
    if not exists(path):
        raise InputError(f"{path} does not exist")
    with open_file(path) as f:
        lines = f.read().split("\n")
    sentences = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            example = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{where}: not JSON: {error.msg} (column {error.colno})") from None
        if not isinstance(example, dict) or not isinstance(example.get("text"), str):
            raise InputError(f'{where}: expected an object with a "text" string')
        text = example["text"]
        tags = span_label_tags(text, example.get("label") or {}, scheme, where)
        example_id = example.get("id", len(sentences))
        sentences.append(Sentence(tuple(text), tuple(tags), (number,) * len(text), example_id))
    return [sentences] if sentences else []


def read_data(path, data_format, scheme="bio"):
    """Documents of a file in `data_format` (one of `DATA_FORMATS`); `scheme`
    tags CLUENER's spans."""
    if data_format == "cluener":
        return read_cluener(path, scheme)
    return read_columns(path, conll=data_format == "conll")


def sentences_of(documents):
    """All sentences of `documents`, in file order."""
    return [sentence for document in documents for sentence in document]


def label_list(documents):
    """The label set of a training file: its tags sorted, "O" first."""
    tags = {tag for sentence in sentences_of(documents) for tag in sentence.tags}
    return [OUTSIDE] + sorted(tags - {OUTSIDE})


def parse_labels(value):
    """`--labels` ("O,B-PER,I-PER,...") -> list of labels (InputError when
    empty or repeated)."""
    labels = [label.strip() for label in value.split(",") if label.strip()]
    if not labels or len(set(labels)) != len(labels):
        raise InputError(f"--labels={value!r} must list distinct labels, separated by commas")
    return labels


def check_tags(path, documents, labels):
    """Raises InputError naming the file and the line of the first tag that
    is not in `labels`."""
    known = set(labels)
    for sentence in sentences_of(documents):
        for tag, number in zip(sentence.tags, sentence.line_numbers):
            if tag not in known:
                raise InputError(
                    f"{path}:{number}: tag {tag!r} is not one of the labels "
                    f"({', '.join(labels)}); set them with --labels"
                )


def word_pieces(words, tokenizer):
    """Sub-token ids of `words`, each word tokenized on its own.

    Returns `(ids, firsts)`: the sub-token ids of all words (a word without
    sub-tokens gets `[UNK]`) and the index in `ids` of each word's first one.
    """
    unk_id = tokenizer.vocab["[UNK]"]
    ids, firsts = [], []
    for word in words:
        firsts.append(len(ids))
        ids.extend(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)) or [unk_id])
    return ids, firsts


def window_stride(max_seq_length):
    """Sub-tokens between the starts of a long sentence's windows: half a window."""
    return max(1, (max_seq_length - 2) // 2)


def pack_targets(ids, targets, max_seq_length, cls_id, sep_id):
    """Packs sub-tokens `ids` into one or more windows and labels each target once.

    Args:
      ids: list of sub-token ids.
      targets: list of `(position in ids, word index)` of the words to label.
      max_seq_length: the length of each window (with [CLS] and [SEP]).
    Returns:
      a list of `(packed, labelled)`: `packed` as `pack_windows` (lists of
      length max_seq_length), `labelled` a list of `(position in packed,
      word index)`: the targets whose max-context window this is.
    """
    windows = pack_windows(
        ids, None, max_seq_length, cls_id, sep_id, stride=window_stride(max_seq_length)
    )
    width = max_seq_length - 2
    spans = [(start, min(width, len(ids) - start)) for _, start in windows]
    return [
        (
            packed,
            [
                (1 + position - start, word)
                for position, word in targets
                if is_max_context(spans, index, position)
            ],
        )
        for index, (packed, start) in enumerate(windows)
    ]


def context_start(doc_length, first, last, width):
    """Start of the `width` document sub-tokens around a sentence at
    `[first, last)`: the sentence centred, the window kept inside the document."""
    margin = width - (last - first)
    return max(0, min(first - margin // 2, doc_length - width))


def document_windows(document, tokenizer, max_seq_length, document_context):
    """Yields `(sentence, windows)` for each sentence of a document (a list
    of `Sentence`): `windows` as `pack_targets` returns them, the labelled
    word indices counted within the sentence."""
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    width = max_seq_length - 2
    pieces = [word_pieces(sentence.words, tokenizer) for sentence in document]
    doc_ids = [i for ids, _ in pieces for i in ids]
    offset = 0
    for sentence, (ids, firsts) in zip(document, pieces):
        targets = list(zip(firsts, range(len(firsts))))
        if document_context and len(ids) <= width:
            start = context_start(len(doc_ids), offset, offset + len(ids), width)
            context = doc_ids[start : start + width]
            shift = offset - start
            yield (
                sentence,
                pack_targets(
                    context, [(p + shift, w) for p, w in targets], max_seq_length, cls_id, sep_id
                ),
            )
        else:
            yield sentence, pack_targets(ids, targets, max_seq_length, cls_id, sep_id)
        offset += len(ids)


@functools.cache
def tagging_schema(max_seq_length):
    """The `FeatureSchema` of tagging records."""

    def sequence(name, model_name=None):
        return Feature(
            name,
            max_seq_length,
            model_name=model_name,
            length_flag="max_seq_length",
            per_token=True,
        )

    return FeatureSchema(
        [
            *input_features(max_seq_length),
            sequence("label_ids"),
            sequence("word_ids"),
            Feature("sentence_index", 1, scalar=True),
            Feature("is_real_example", 1, scalar=True),
        ],
        description="token tagging",
    )


def window_record(packed, labelled, tag_ids, sentence_index, max_seq_length):
    """The record values of one window: `labelled` `(position, word)` pairs
    get `tag_ids[word]` and `word`, other positions `IGNORE`."""
    label_ids = [IGNORE] * max_seq_length
    word_ids = [IGNORE] * max_seq_length
    for position, word in labelled:
        label_ids[position] = tag_ids[word]
        word_ids[position] = word
    return {
        "input_ids": packed["input_word_ids"],
        "input_mask": packed["input_mask"],
        "segment_ids": packed["input_type_ids"],
        "label_ids": label_ids,
        "word_ids": word_ids,
        "sentence_index": [sentence_index],
        "is_real_example": [1],
    }


def padding_record(max_seq_length):
    """A record that fills the last eval / predict batch (is_real_example 0)."""
    zeros, ignored = [0] * max_seq_length, [IGNORE] * max_seq_length
    return {
        "input_ids": zeros,
        "input_mask": zeros,
        "segment_ids": zeros,
        "label_ids": ignored,
        "word_ids": ignored,
        "sentence_index": [IGNORE],
        "is_real_example": [0],
    }


def _record_writer(
    path,
    documents,
    labels,
    text,
    document_context,
    pad_examples_to_multiple_of,
):
    tokenizer, max_seq_length = text.tokenizer, text.max_seq_length
    schema = tagging_schema(max_seq_length)
    label_map = {label: i for i, label in enumerate(labels)}

    def write_records(writer):
        num_sentences = num_windows = num_split = 0
        for document in documents:
            for sentence, windows in document_windows(
                document, tokenizer, max_seq_length, document_context
            ):
                tag_ids = [IGNORE if tag is None else label_map[tag] for tag in sentence.tags]
                for packed, labelled in windows:
                    writer.write(
                        schema.serialize(
                            window_record(packed, labelled, tag_ids, num_sentences, max_seq_length)
                        )
                    )
                num_split += len(windows) > 1
                num_windows += len(windows)
                num_sentences += 1
        if num_split:
            logging.info(
                "%s: %d of %d sentences are longer than --max_seq_length=%d and were "
                "split into windows",
                path,
                num_split,
                num_sentences,
                max_seq_length,
            )
        padding = -num_windows % pad_examples_to_multiple_of if pad_examples_to_multiple_of else 0
        record = schema.serialize(padding_record(max_seq_length))
        for _ in range(padding):
            writer.write(record)
        return num_sentences, num_windows, num_windows + padding

    return write_records


def ensure_tagging_features(
    output_dir,
    split,
    input_file,
    documents,
    labels,
    text,
    *,
    document_context,
    tag_scheme="bio",
    pad_examples_to_multiple_of=None,
):
    """Writes (or reuses) `output_dir/<split>.tf_record` with the windows of
    `documents` (read from `input_file`; `tag_scheme` tagged CLUENER's
    spans), packed with `text` (a `model_text.TextSettings`); returns a `FeatureFile` counting sentences (examples) and
    windows (features)."""
    path = os.path.join(output_dir, RECORD_FILES[split])
    check_tags(input_file, documents, labels)
    fingerprint = {
        "version": _CACHE_VERSION,
        "input": file_stamp(input_file),
        **feature_files.text_fingerprint(text),
        "labels": list(labels),
        "document_context": document_context,
        "tag_scheme": tag_scheme,
        "pad_to": pad_examples_to_multiple_of,
    }
    return feature_files.ensure_feature_file(
        path,
        fingerprint,
        _record_writer(
            path,
            documents,
            labels,
            text,
            document_context,
            pad_examples_to_multiple_of,
        ),
    )


def read_unlabeled(paths, data_format):
    """Unlabelled text for distillation, each file one document: a sentence
    a line (blank lines skipped), its words split on whitespace (`chars`:
    each character not a space is a word), every tag None (no label)."""
    documents = []
    for path in paths:
        if not exists(path):
            raise InputError(f"--unlabeled_file: no such file {path!r}")
        with open_file(path) as f:
            lines = f.read().splitlines()
        sentences = []
        for number, line in enumerate(lines, start=1):
            words = tuple("".join(line.split())) if data_format == "chars" else tuple(line.split())
            if words:
                sentences.append(Sentence(words, (None,) * len(words), (number,) * len(words)))
        if sentences:
            documents.append(sentences)
    if not documents:
        raise InputError(f"--unlabeled_file {','.join(paths)}: no text in it")
    return documents


def ensure_unlabeled_features(
    output_dir,
    paths,
    data_format,
    text,
    *,
    document_context,
):
    """Writes (or reuses) `output_dir/unlabeled.tf_record`: the windows of
    the unlabelled files' sentences (`read_unlabeled`) packed with `text`,
    every label_id IGNORE; returns its `FeatureFile`."""
    path = os.path.join(output_dir, UNLABELED_RECORD_FILE)
    fingerprint = {
        "version": _CACHE_VERSION,
        "inputs": [file_stamp(p) for p in paths],
        "data_format": data_format,
        **feature_files.text_fingerprint(text),
        "document_context": document_context,
    }

    def write_records(writer):
        documents = read_unlabeled(paths, data_format)
        return _record_writer(path, documents, (), text, document_context, None)(writer)

    return feature_files.ensure_feature_file(path, fingerprint, write_records)


def make_dataset(
    path,
    max_seq_length,
    batch_size,
    is_training,
    input_context=None,
    seed=None,
    length_multiple=None,
    group_by_length=False,
):
    """Batches of tagging records: int32 `[batch, max_seq_length]` `input_word_ids`,
    `input_mask`, `input_type_ids`, `label_ids`, `word_ids` (with
    `length_multiple`, `[batch, longest rounded up]`; see
    `features.make_dataset`), and int32 `[batch]` `sentence_index`,
    `is_real_example`."""
    return feature_files.make_dataset(
        path,
        tagging_schema(max_seq_length),
        batch_size,
        is_training,
        input_context=input_context,
        seed=seed,
        shard_by="records",
        length_multiple=length_multiple,
        group_by_length=group_by_length,
    )


def word_predictions(sentences, batches):
    """Maps window predictions back to words.

    Args:
      sentences: the file's `Sentence`s, in record order.
      batches: iterable of dicts of numpy arrays: `predicted` int `[n, seq]`
        (a label id per position), `word_ids` `[n, seq]`, `sentence_index`
        and `is_real_example` `[n]`.
    Returns:
      one list of label ids per sentence, one per word. Raises InputError
      (the records do not fit the file) unless every word got exactly one.
    """
    predicted = [[None] * len(sentence.words) for sentence in sentences]
    for batch in batches:
        for row in range(len(batch["sentence_index"])):
            if not batch["is_real_example"][row]:
                continue
            words = predicted[batch["sentence_index"][row]]
            for position in (batch["word_ids"][row] >= 0).nonzero()[0]:
                word = batch["word_ids"][row][position]
                if words[word] is not None:
                    raise InputError(
                        f"word {word} of sentence {batch['sentence_index'][row]} "
                        "is labelled in two windows: stale feature records?"
                    )
                words[word] = int(batch["predicted"][row][position])
    for index, words in enumerate(predicted):
        if None in words:
            raise InputError(
                f"sentence {index}: word {words.index(None)} was not predicted: "
                "stale feature records?"
            )
    return predicted


def write_predictions(path, input_file, sentences, tags):
    """Writes `input_file` with each word row's predicted tag appended as a
    last column (`tags`: one list of tag strings per sentence), blank lines
    kept and `-DOCSTART-` rows given "O", so conlleval reads it."""
    by_line = {
        number: tag
        for sentence, sentence_tags in zip(sentences, tags)
        for number, tag in zip(sentence.line_numbers, sentence_tags)
    }
    with open_file(input_file) as f:
        lines = f.read().splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.split():
            out.append("")
        else:
            out.append(f"{line.rstrip()} {by_line.get(number, OUTSIDE)}")
    write_text_atomically(path, "\n".join(out) + "\n")


def cluener_label(sentence, tags, scheme):
    """CLUENER's "label" of a sentence's predicted `tags`: `{type: {entity
    text: [[first, last], ...]}}` (offsets inclusive, in text order)."""
    text = "".join(sentence.words)
    label = {}
    for entity_type, first, last in sorted(chunks(tags, scheme), key=lambda c: c[1:]):
        entities = label.setdefault(entity_type, {})
        entities.setdefault(text[first : last + 1], []).append([first, last])
    return label


def write_cluener_predictions(path, sentences, tags, scheme):
    """Writes CLUE's submission file: one `{"id": ..., "label": ...}` JSON
    object per sentence, in file order (`tags` one list of strings per
    sentence)."""
    lines = [
        json.dumps(
            {"id": sentence.example_id, "label": cluener_label(sentence, sentence_tags, scheme)},
            ensure_ascii=False,
        )
        for sentence, sentence_tags in zip(sentences, tags)
    ]
    write_text_atomically(path, "".join(line + "\n" for line in lines))
