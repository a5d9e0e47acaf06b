"""What every classification reader shares: `InputExample`, the
`DataProcessor` base, and row reading.

Reading (`read_rows`) follows the original `_read_tsv`: one row per line,
fields split on tabs, quotes are ordinary characters (`quotechar=None`), so a
sentence that starts with `"` stays intact. Lines are decoded as UTF-8 by
`tokenization.iter_utf8_lines` (bad bytes -> InputError naming file:line);
blank lines are skipped. Row numbers `i` in guids are the original's
`enumerate` index over the rows of the file, header included: for a TSV
file, the line number minus one.
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
