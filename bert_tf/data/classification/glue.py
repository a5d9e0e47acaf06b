"""Data processors of run_classifier.py: GLUE and XNLI (CLUE's JSON lines
tasks: clue.py; the user's own files: generic.py; both registered here too).

Each processor turns a task's files into `InputExample`s the way the
original google-research/bert `run_classifier.py` does (CoLA, MNLI, MRPC,
XNLI) or, for the GLUE tasks it lacks, the way Model Garden's
`classifier_data_lib.py` does (SST-2, STS-B, QQP, QNLI, RTE, WNLI, AX).

Reading (`read_rows`) follows the original `_read_tsv`: one row per line,
fields split on tabs, quotes are ordinary characters (`quotechar=None`), so a
sentence that starts with `"` stays intact. Lines are decoded as UTF-8 by
`tokenization.iter_utf8_lines` (bad bytes -> InputError naming file:line).
Differences from the original, all on input it crashes on or misreads:

* blank lines are skipped (the original's `csv.reader` yields `[]` and the
  task then fails with an IndexError);
* a row with fewer columns than the file's header (or, for CoLA's
  header-less train/dev files, than 4) is an InputError naming file:line
  instead of an IndexError or a silently shifted column. QQP skips such rows
  with a warning, like Model Garden's try/except for the garbage lines of
  QQP's train set (`skip_malformed=False` makes them errors); any processor
  takes `skip_malformed=True`. Extra columns are ignored, as the original
  reads columns by position (and MNLI's label from the last one), so every
  row the original reads gives the same example;
* a label that is not in `get_labels()` is an InputError naming file:line,
  the label and the valid labels (the original fails later with a KeyError);
* QNLI guids are `"<set>-<i>"` (Model Garden's are all `"<set>-1"`) and its
  dev set type is `"dev"`.

Row numbers `i` in guids are the original's `enumerate` index over the rows
of the file, header included: for a TSV file, the line number minus one.

Test sets: GLUE's have no labels (`has_test_labels=False`); their examples
get the first label of `get_labels()` (0.0 for STS-B), as in the original.
XNLI's test set has labels.
"""

import csv
import dataclasses
import os

from absl import logging

from bert_tf.errors import InputError
from bert_tf.text import tokenization

# The GLUE metric sets, named by DataProcessor.metric (see bert_tf.metrics.classification.glue_metrics).
METRICS = ("accuracy", "matthews", "f1_accuracy", "pearson_spearman")
SPLITS = ("train", "dev", "test")
MNLI_LABELS = ("contradiction", "entailment", "neutral")


@dataclasses.dataclass
class InputExample:
    """One example: `text_b` is None for single-sentence tasks; `label` is a
    label string (classification) or a float (regression)."""

    guid: str
    text_a: str
    text_b: str | None = None
    label: object = None


def decode_delimiter(delimiter):
    """One delimiter character from it or an alias ("tab", "comma", ...)."""
    aliases = {"\\t": "\t", "tab": "\t", "tsv": "\t", "comma": ",", "csv": ","}
    delimiter = aliases.get(delimiter, delimiter)
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise InputError(
            f"delimiter {delimiter!r} must be one character (a tab or ',' for instance)"
        )
    return delimiter


def read_rows(path, delimiter="\t"):
    """Yields `(i, line_number, fields)` for each non-blank row of `path`.

    With a tab delimiter, as the original `_read_tsv`: each line is a row and
    quotes are literal. With another delimiter (CSV), the `csv` module's
    standard quoting applies (`"a, b"` is one field; quoted fields may span
    lines; `line_number` is then the row's first line). `i` counts rows from
    0, header and blank rows included (the original's `enumerate`).
    """
    delimiter = decode_delimiter(delimiter)
    lines = tokenization.iter_utf8_lines(path)  # InputError if the file is missing
    if delimiter == "\t":
        for line_number, text in lines:
            if text:
                yield line_number - 1, line_number, text.split("\t")
        return
    # strict: a quote problem is an error, not fields cut in surprising places.
    reader = csv.reader((text + "\n" for _, text in lines), delimiter=delimiter, strict=True)
    i = 0
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            return
        except csv.Error as e:
            raise InputError(f"{path}:{start}: {_csv_problem(e)}") from None
        if fields:
            yield i, start, fields
        i += 1


_QUOTE_HINT = 'a quote inside a quoted field is written twice ("")'


def _csv_problem(error):
    """The `csv` module's error as what is wrong with the row's quotes."""
    message = str(error)
    if message == "unexpected end of data":
        return f"a quote opened in this row is never closed ({_QUOTE_HINT})"
    if message.endswith("expected after '\"'"):
        return f"text after the closing quote of a field ({_QUOTE_HINT})"
    return message


class DataProcessor:
    """Base class: the examples and labels of one classification task.

    Attributes:
      name: canonical task name (`get_processor` key).
      is_regression: labels are floats (STS-B); `get_labels()` is then [].
      metric: one of `METRICS`, the GLUE metric set of the task.
      submission_name: the GLUE leaderboard file name without ".tsv"
        ("MRPC", "MNLI-m", ...), or None for tasks outside GLUE and CLUE.
      submission_format: "glue" (`submission_file` is `<submission_name>.tsv`)
        or "clue" (CLUE's JSON lines, see clue.py).
      has_test_labels: whether `get_test_examples` returns real labels.
      skip_malformed: skip rows with too few columns (with a warning)
        instead of raising InputError.
      id_column: where the guids come from, for the generic task's
        predictions by id (None: no such column).
      multi_label: each example's label is a list of labels (generic task).
    """

    name = None
    is_regression = False
    metric = "accuracy"
    submission_name = None
    submission_format = "glue"
    has_test_labels = False
    # File names (relative to data_dir) of each split.
    files = {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"}
    # Value of the `set_type` part of guids for each split.
    set_types = {"train": "train", "dev": "dev", "test": "test"}
    skip_malformed = False
    id_column = None
    multi_label = False

    def __init__(self, skip_malformed=None):
        if skip_malformed is not None:
            self.skip_malformed = bool(skip_malformed)

    @property
    def submission_file(self):
        """The leaderboard file's name, or None."""
        return self.submission_name and self.submission_name + ".tsv"

    # -- the original API ------------------------------------------------
    def get_train_examples(self, data_dir):
        return self.get_examples(data_dir, "train")

    def get_dev_examples(self, data_dir):
        return self.get_examples(data_dir, "dev")

    def get_test_examples(self, data_dir):
        return self.get_examples(data_dir, "test")

    def get_labels(self):
        raise NotImplementedError

    # -- additions ---------------------------------------------------------
    def read_labels(self, data_dir):  # noqa: ARG002
        """The labels, read from the data where the task takes them from there."""
        return self.get_labels()

    def input_files(self, data_dir, split):
        """The files `get_examples(data_dir, split)` reads (for cache fingerprints)."""
        if split not in SPLITS:
            raise InputError(f"unknown split {split!r}: use one of {', '.join(SPLITS)}")
        return [os.path.join(data_dir, self.files[split])]

    def config(self):
        """A JSON-able dict of what decides the examples besides the files."""
        return {
            "task": self.name,
            "labels": list(self.get_labels()),
            "is_regression": self.is_regression,
            "skip_malformed": self.skip_malformed,
        }

    def get_examples(self, data_dir, split):
        """The `InputExample`s of split "train", "dev" or "test"."""
        (path,) = self.input_files(data_dir, split)
        examples = []
        skipped = []
        header = None
        for i, line_number, fields in read_rows(path):
            if header is None and self.has_header(split):
                header = fields
                continue
            expected = len(header) if header is not None else self.num_columns(split)
            if len(fields) < expected:
                problem = (
                    f"{path}:{line_number}: {len(fields)} columns, expected at least "
                    f"{expected}" + (" (as in the header)" if header is not None else "")
                )
                if self.skip_malformed:
                    skipped.append(line_number)
                    continue
                raise InputError(problem + "; is this the right file for the task?")
            example = self.make_example(fields, i, self.set_types[split], split)
            if example is None:
                continue
            example.label = self.check_label(example.label, path, line_number, split)
            examples.append(example)
        log_skipped_rows(path, skipped)
        return examples

    def has_header(self, split):  # noqa: ARG002
        return True

    def num_columns(self, split):
        """Column count of header-less files."""
        raise NotImplementedError

    def make_example(self, fields, i, set_type, split):
        """An InputExample from a row (None to skip the row)."""
        raise NotImplementedError

    def test_label(self):
        """The placeholder label of unlabeled test examples (the original's first label)."""
        return 0.0 if self.is_regression else self.get_labels()[0]

    def check_label(self, label, path, line_number, split):
        if split == "test" and not self.has_test_labels:
            return label
        if self.is_regression:
            try:
                return float(label)
            except (TypeError, ValueError):
                raise InputError(
                    f"{path}:{line_number}: label {label!r} is not a number "
                    f"(task {self.name} is a regression)"
                ) from None
        labels = self.get_labels()
        if label not in labels:
            raise InputError(
                f"{path}:{line_number}: unknown label {label!r}; "
                f"the labels of task {self.name} are {', '.join(map(repr, labels))}"
            )
        return label


class ColaProcessor(DataProcessor):
    """CoLA: train/dev without header [source, label, original_label, sentence];
    test with header `index sentence`. Guids `<set>-<i>`."""

    name = "cola"
    metric = "matthews"
    submission_name = "CoLA"

    def get_labels(self):
        return ["0", "1"]

    def has_header(self, split):
        # Only the test set has a header.
        return split == "test"

    def num_columns(self, split):  # noqa: ARG002
        return 4

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        if split == "test":
            return InputExample(guid, fields[1], None, self.test_label())
        return InputExample(guid, fields[3], None, fields[1])


class Sst2Processor(DataProcessor):
    """SST-2: train/dev `sentence label`, test `index sentence`."""

    name = "sst-2"
    submission_name = "SST-2"

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        if split == "test":
            return InputExample(guid, fields[1], None, self.test_label())
        return InputExample(guid, fields[0], None, fields[1])


class MrpcProcessor(DataProcessor):
    """MRPC: `Quality #1 ID #2 ID #1 String #2 String` (test: `index` first)."""

    name = "mrpc"
    metric = "f1_accuracy"
    submission_name = "MRPC"

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[0]
        return InputExample(guid, fields[3], fields[4], label)


class StsbProcessor(DataProcessor):
    """STS-B (regression): `index genre filename year old_index source1 source2
    sentence1 sentence2 score` (test without score)."""

    name = "sts-b"
    is_regression = True
    metric = "pearson_spearman"
    submission_name = "STS-B"

    def get_labels(self):
        return []

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[9]
        return InputExample(guid, fields[7], fields[8], label)


class QqpProcessor(DataProcessor):
    """QQP: `id qid1 qid2 question1 question2 is_duplicate` (test: `id question1
    question2`). Guids `<set>-<id>`. Malformed rows are skipped by default."""

    name = "qqp"
    metric = "f1_accuracy"
    submission_name = "QQP"
    skip_malformed = True

    def get_labels(self):
        return ["0", "1"]

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, fields[0])
        if split == "test":
            return InputExample(guid, fields[1], fields[2], self.test_label())
        return InputExample(guid, fields[3], fields[4], fields[5])


class MnliProcessor(DataProcessor):
    """MNLI (matched): sentence1/sentence2 in columns 8/9, the label in the
    last column. Guids `<set>-<index column>`; dev set type "dev_matched"."""

    name = "mnli"
    submission_name = "MNLI-m"
    files = {"train": "train.tsv", "dev": "dev_matched.tsv", "test": "test_matched.tsv"}
    set_types = {"train": "train", "dev": "dev_matched", "test": "test"}

    def get_labels(self):
        return list(MNLI_LABELS)

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, fields[0])
        label = self.test_label() if split == "test" else fields[-1]
        return InputExample(guid, fields[8], fields[9], label)


class MnliMismatchedProcessor(MnliProcessor):
    """MNLI mismatched dev/test (`dev_mismatched.tsv`, `test_mismatched.tsv`)."""

    name = "mnli-mm"
    submission_name = "MNLI-mm"
    files = {"train": "train.tsv", "dev": "dev_mismatched.tsv", "test": "test_mismatched.tsv"}
    set_types = {"train": "train", "dev": "dev_mismatched", "test": "test"}


class AxProcessor(MnliProcessor):
    """GLUE's diagnostic set: an MNLI model's predictions on `AX.tsv`
    (`index sentence1 sentence2`). Train/dev are MNLI's (matched), so put AX.tsv
    in the MNLI folder."""

    name = "ax"
    metric = "matthews"
    submission_name = "AX"
    files = {"train": "train.tsv", "dev": "dev_matched.tsv", "test": "AX.tsv"}

    def make_example(self, fields, i, set_type, split):
        if split != "test":
            return super().make_example(fields, i, set_type, split)
        return InputExample("%s-%s" % (set_type, i), fields[1], fields[2], self.test_label())


class _SentencePairProcessor(DataProcessor):
    """`index text_a text_b label` (test: `index text_a text_b`), guids `<set>-<i>`."""

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%s" % (set_type, i)
        label = self.test_label() if split == "test" else fields[3]
        return InputExample(guid, fields[1], fields[2], label)


class QnliProcessor(_SentencePairProcessor):
    """QNLI: `index question sentence label`."""

    name = "qnli"
    submission_name = "QNLI"

    def get_labels(self):
        return ["entailment", "not_entailment"]


class RteProcessor(_SentencePairProcessor):
    """RTE: `index sentence1 sentence2 label`."""

    name = "rte"
    submission_name = "RTE"

    def get_labels(self):
        return ["entailment", "not_entailment"]


class WnliProcessor(_SentencePairProcessor):
    """WNLI: `index sentence1 sentence2 label` with labels 0/1."""

    name = "wnli"
    submission_name = "WNLI"

    def get_labels(self):
        return ["0", "1"]


class XnliProcessor(DataProcessor):
    """XNLI as the original: train from `multinli/multinli.train.<language>.tsv`
    (`premise hypo label`, "contradictory" read as "contradiction"), dev and test
    from `xnli.dev.tsv` / `xnli.test.tsv` keeping the rows of `language`
    (column 0; label column 1, sentences columns 6 and 7). Guids `<set>-<i>`,
    counted over all rows. The test set has labels."""

    name = "xnli"
    has_test_labels = True
    set_types = {"train": "train", "dev": "dev", "test": "test"}

    def __init__(self, language="zh", skip_malformed=None):
        super().__init__(skip_malformed)
        self.language = language

    @property
    def files(self):
        return {
            "train": os.path.join("multinli", f"multinli.train.{self.language}.tsv"),
            "dev": "xnli.dev.tsv",
            "test": "xnli.test.tsv",
        }

    def config(self):
        return {**super().config(), "language": self.language}

    def get_labels(self):
        return list(MNLI_LABELS)

    def make_example(self, fields, i, set_type, split):
        guid = "%s-%d" % (set_type, i)
        if split == "train":
            label = fields[2]
            if label == "contradictory":
                label = "contradiction"
            return InputExample(guid, fields[0], fields[1], label)
        if fields[0] != self.language:
            return None
        return InputExample(guid, fields[6], fields[7], fields[1])


_PROCESSORS = {
    "cola": ColaProcessor,
    "sst-2": Sst2Processor,
    "mrpc": MrpcProcessor,
    "sts-b": StsbProcessor,
    "qqp": QqpProcessor,
    "mnli": MnliProcessor,
    "mnli-mm": MnliMismatchedProcessor,
    "qnli": QnliProcessor,
    "rte": RteProcessor,
    "wnli": WnliProcessor,
    "ax": AxProcessor,
    "xnli": XnliProcessor,
}
_ALIASES = {
    "sst2": "sst-2",
    "sst": "sst-2",
    "stsb": "sts-b",
    "sts": "sts-b",
    "mnli-m": "mnli",
    "mnli_matched": "mnli",
    "mnli-matched": "mnli",
    "mnlim": "mnli",
    "mnli_mismatched": "mnli-mm",
    "mnli-mismatched": "mnli-mm",
    "mnli_mm": "mnli-mm",
    "mnlimm": "mnli-mm",
    "diagnostic": "ax",
}
# Options get_processor passes to the processors that take them.
_OPTIONS = {
    "xnli": {"language"},
    "generic": {
        "text_a_column",
        "text_b_column",
        "label_column",
        "id_column",
        "labels",
        "labels_file",
        "delimiter",
        "has_header",
        "train_file",
        "dev_file",
        "test_file",
        "is_regression",
        "test_has_labels",
        "metric",
        "multi_label",
        "label_delimiter",
    },
}
_ALL_OPTIONS = set().union(*_OPTIONS.values()) | {"skip_malformed"}
_OPTION_ALIASES = {"xnli_language": "language"}


def _registry():
    """(processors, aliases) of GLUE's tasks, CLUE's (clue.py) and the generic
    task (generic.py); both build on this module, hence imported here."""
    from bert_tf.data.classification import clue, generic

    processors = {**_PROCESSORS, **clue.PROCESSORS, "generic": generic.GenericProcessor}
    return processors, {**_ALIASES, **clue.ALIASES}


def task_names():
    """The canonical task names `get_processor` accepts."""
    return sorted(_registry()[0])


def get_processor(task_name, **options):
    """The processor of `task_name` (case-insensitive; aliases such as "sst2",
    "stsb", "mnli_mismatched" / "mnli-mm", "wsc").

    `options` may hold the options of every task (e.g. all of run_classifier's
    flags): those of value None and those the task does not take are ignored.
    They are `language` (or `xnli_language`) for XNLI, `skip_malformed` for
    every task, and GenericProcessor's arguments for "generic".
    """
    processors, aliases = _registry()
    key = str(task_name).strip().lower()
    key = aliases.get(key, key)
    if key not in processors:
        raise InputError(
            f"unknown task_name {task_name!r}: use one of {', '.join(task_names())} "
            "(case-insensitive)"
        )
    kwargs = {}
    for name, value in options.items():
        name = _OPTION_ALIASES.get(name, name)
        if name not in _ALL_OPTIONS:
            raise TypeError(f"get_processor() got an unknown option {name!r}")
        if value is not None and (name == "skip_malformed" or name in _OPTIONS.get(key, ())):
            kwargs[name] = value
    return processors[key](**kwargs)


def log_skipped_rows(path, line_numbers):
    """Warns of the malformed rows of `path` that were skipped (their line
    numbers, the first ten), if any."""
    if line_numbers:
        logging.warning(
            "%s: skipped %d malformed rows (lines %s%s)",
            path,
            len(line_numbers),
            ", ".join(map(str, line_numbers[:10])),
            ", ..." if len(line_numbers) > 10 else "",
        )
