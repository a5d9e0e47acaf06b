"""Data processors of CLUE's classification tasks (github.com/CLUEbenchmark/CLUE).

CLUE's files are JSON lines (`train.json`, `dev.json`, `test.json`: one
object per line) with task-specific keys. The examples are those of CLUE's
TF baseline (`baselines/models/classifier_utils.py`):

* AFQMC: `sentence1`, `sentence2`; labels "0", "1".
* TNEWS: `sentence` alone (`keywords` unused); labels "100".."116" without
  "105" and "111".
* IFLYTEK: `sentence`; labels "0".."118".
* CMNLI, OCNLI: `sentence1`, `sentence2`; labels contradiction, entailment,
  neutral. Rows labelled "-" (no annotator majority) are skipped, with a count
  in the log, as CLUE's CMNLI reader does.
* CLUEWSC2020: `text` with span1 (the noun) between "_" and span2 (the
  pronoun) between "[" and "]" (`mark_spans`); labels "true", "false".
* CSL: text_a the `keyword` list joined by spaces, text_b `abst`; labels
  "0", "1".

Test files have no labels: examples get the first label, as GLUE's. Bad JSON,
a missing key, a wrong type or an unknown label is an InputError naming the
file and line. Guids are `<set>-<i>`, `i` the line number minus one.

Submission files (`<name>_predict.json`, the names of CLUE's submission
examples) hold one `{"id": ..., "label": ...}` per test example; the id is
the test file's `id` (or `idx`), else the example's position.
"""

import json

from absl import logging

from bert_tf.data.classification.glue import MNLI_LABELS
from bert_tf.data.classification.processor import DataProcessor, InputExample
from bert_tf.errors import InputError
from bert_tf.text import tokenization


def read_json_lines(path):
    """Yields `(line_number, record)` for each non-blank line of a JSON lines file."""
    for line_number, text in tokenization.iter_utf8_lines(path):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}:{line_number}: not valid JSON ({e.msg})") from None
        if not isinstance(record, dict):
            raise InputError(f"{path}:{line_number}: expected a JSON object, got {text[:40]!r}")
        yield line_number, record


def mark_spans(text, span1_index, span1_len, span2_index, span2_len):
    """`text` with "_" around span1 and "[" "]" around span2. The four marks
    go in one at a time as CLUE's WSCProcessor inserts them (the earlier
    span's first, the later span's index then moved by 2), so even
    overlapping spans come out as there."""
    chars = list(text)
    if span2_index > span1_index:
        marks = [
            (span1_index, "_"),
            (span1_index + span1_len + 1, "_"),
            (span2_index + 2, "["),
            (span2_index + span2_len + 3, "]"),
        ]
    else:
        marks = [
            (span2_index, "["),
            (span2_index + span2_len + 1, "]"),
            (span1_index + 2, "_"),
            (span1_index + span1_len + 3, "_"),
        ]
    for position, mark in marks:
        chars.insert(position, mark)
    return "".join(chars)


_KINDS = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


class _Record:
    """One line's object, whose missing keys and wrong types raise InputError."""

    def __init__(self, record, path, line_number, task):
        self.record, self.where, self.task = record, f"{path}:{line_number}", task

    def get(self, key, kind=str, within=None):
        record = self.record if within is None else self.get(within, dict)
        name = key if within is None else f"{within}.{key}"
        if key not in record:
            raise InputError(
                f"{self.where}: no key {name!r} (keys: {', '.join(map(repr, record))}); "
                f"is this a file of task {self.task}?"
            )
        value = record[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise InputError(
                f"{self.where}: {name!r} is {json.dumps(value, ensure_ascii=False)[:40]}, "
                f"expected {_KINDS[kind]}"
            )
        return value

    def error(self, message):
        return InputError(f"{self.where}: {message}")


class ClueProcessor(DataProcessor):
    """A CLUE task: `texts(record)` gives text_a and text_b of a `_Record`."""

    files = {"train": "train.json", "dev": "dev.json", "test": "test.json"}
    submission_format = "clue"
    # Extra fields of each submission line.
    submission_fields = {}
    # Whether rows labelled "-" are skipped (NLI).
    skips_unlabeled = False

    @property
    def submission_file(self):
        return f"{self.submission_name}_predict.json"

    def texts(self, record):
        raise NotImplementedError

    def get_examples(self, data_dir, split):
        return [example for _, example in self._read(data_dir, split)]

    def test_ids(self, data_dir):
        """The ids of the test examples, in order: each line's `id` or `idx`, else its position."""
        ids = []
        for record, _ in self._read(data_dir, "test"):
            ids.append(record.get("id", record.get("idx", len(ids))))
        return ids

    def _read(self, data_dir, split):
        """Yields `(JSON object, InputExample)` for each example of the split."""
        (path,) = self.input_files(data_dir, split)
        malformed, unlabeled = [], 0
        for line_number, raw in read_json_lines(path):
            record = _Record(raw, path, line_number, self.name)
            try:
                text_a, text_b = self.texts(record)
                label = self.test_label() if split == "test" else record.get("label")
            except InputError:
                if not self.skip_malformed:
                    raise
                malformed.append(line_number)
                continue
            if label == "-" and self.skips_unlabeled:
                unlabeled += 1
                continue
            label = self.check_label(label, path, line_number, split)
            guid = f"{self.set_types[split]}-{line_number - 1}"
            yield raw, InputExample(guid, text_a, text_b, label)
        if unlabeled:
            logging.info('%s: skipped %d examples labelled "-" (as CLUE does)', path, unlabeled)
        if malformed:
            logging.warning(
                "%s: skipped %d malformed lines (%s%s)",
                path,
                len(malformed),
                ", ".join(map(str, malformed[:10])),
                ", ..." if len(malformed) > 10 else "",
            )


class _PairProcessor(ClueProcessor):
    def texts(self, record):
        return record.get("sentence1"), record.get("sentence2")


class AfqmcProcessor(_PairProcessor):
    """AFQMC: whether two questions mean the same."""

    name = "afqmc"
    submission_name = "afqmc"

    def get_labels(self):
        return ["0", "1"]


class TnewsProcessor(ClueProcessor):
    """TNEWS: the news category of a headline."""

    name = "tnews"
    submission_name = "tnews11"
    submission_fields = {"label_desc": ""}  # as CLUE's baseline writes it

    def get_labels(self):
        return [str(label) for label in range(100, 117) if label not in (105, 111)]

    def texts(self, record):
        return record.get("sentence"), None


class IflytekProcessor(ClueProcessor):
    """IFLYTEK: the category of an app description."""

    name = "iflytek"
    submission_name = "iflytek"

    def get_labels(self):
        return [str(label) for label in range(119)]

    def texts(self, record):
        return record.get("sentence"), None


class CmnliProcessor(_PairProcessor):
    """CMNLI: MNLI and XNLI translated into Chinese."""

    name = "cmnli"
    submission_name = "cmnli"
    skips_unlabeled = True

    def get_labels(self):
        return list(MNLI_LABELS)


class OcnliProcessor(CmnliProcessor):
    """OCNLI: original Chinese NLI (its 50k train set)."""

    name = "ocnli"
    submission_name = "ocnli_50k"


class WscProcessor(ClueProcessor):
    """CLUEWSC2020: whether the pronoun span2 refers to span1."""

    name = "cluewsc2020"
    submission_name = "cluewsc11"

    def get_labels(self):
        return ["true", "false"]

    def texts(self, record):
        text = record.get("text")
        spans = []
        for span in ("span1", "span2"):
            span_text = record.get(f"{span}_text", within="target")
            index = record.get(f"{span}_index", int, within="target")
            if index < 0 or text[index : index + len(span_text)] != span_text:
                raise record.error(
                    f"target.{span}_text {span_text!r} is not at {span}_index {index} of the text"
                )
            spans += [index, len(span_text)]
        return mark_spans(text, *spans), None


class CslProcessor(ClueProcessor):
    """CSL: whether the keywords are all the abstract's real keywords."""

    name = "csl"
    submission_name = "csl"

    def get_labels(self):
        return ["0", "1"]

    def texts(self, record):
        keywords = record.get("keyword", list)
        if not all(isinstance(keyword, str) for keyword in keywords):
            raise record.error(f"'keyword' must be a list of strings, got {keywords!r}")
        return " ".join(keywords), record.get("abst")


PROCESSORS = {
    processor.name: processor
    for processor in (
        AfqmcProcessor,
        TnewsProcessor,
        IflytekProcessor,
        CmnliProcessor,
        OcnliProcessor,
        WscProcessor,
        CslProcessor,
    )
}
ALIASES = {"wsc": "cluewsc2020", "cluewsc": "cluewsc2020", "ocnli_50k": "ocnli"}
