"""The generic task: the user's own files, read through column flags.

Each split's file is found in data_dir as `<split>.tsv`, `.csv`, `.jsonl` or
`.json` (the first that exists), or named by `train_file` ...; its
extension decides how it is read:

* `.jsonl` / `.json`: JSON lines, one object per line. Columns are keys; a
  dotted path reaches into nested objects (`data.title`; a top-level key
  that contains the dot wins). Texts are strings (text_b may be null),
  labels strings or numbers, ids strings or numbers.
* anything else: delimited rows (`processor.read_rows`): a tab (quotes literal,
  as the GLUE readers) for `.tsv`, `,` with standard CSV quoting for `.csv`
  (`"a, b"` is one field), or `delimiter`. Columns are header names or
  0-based indexes; `has_header=False` for files without a header.

Guids are the `id_column`'s value when there is one, else `<set>-<i>` (`i`
the row index, header included, as the GLUE tasks; the line number minus one
for JSON lines). A missing column or key, a wrong type, an unknown label or
a malformed row is an InputError naming file:line.

The labels, in the order of the model's outputs: `labels`, or the lines of
`labels_file`, or else (`read_labels(data_dir)`) the distinct labels of the
train file, sorted.

Multi-label (`multi_label=True`): an example's label is a list of labels
(possibly empty): a JSON list, or a string split on `label_delimiter`
("|" by default; an empty cell is no label). Unlabeled test examples get [].
"""

import json
import os

from absl import logging

from bert_tf.data.classification.clue import read_json_lines
from bert_tf.data.classification.processor import (
    METRICS,
    DataProcessor,
    InputExample,
    decode_delimiter,
    log_skipped_rows,
    read_rows,
)
from bert_tf.errors import InputError
from bert_tf.text import tokenization

EXTENSIONS = (".tsv", ".csv", ".jsonl", ".json")
JSON_EXTENSIONS = (".jsonl", ".json")
_COLUMNS = ("text_a", "text_b", "label", "id")


def _parse_labels(labels):
    if labels is None:
        return None
    if isinstance(labels, str):
        labels = [label.strip() for label in labels.split(",")]
    labels = [str(label) for label in labels]
    if len(set(labels)) != len(labels) or "" in labels:
        raise InputError(f"labels {labels} must be distinct and non-empty")
    return labels


def read_labels_file(path):
    """The labels of a file with one label per line (blank lines skipped)."""
    labels = [text.strip() for _, text in tokenization.iter_utf8_lines(path) if text.strip()]
    if not labels:
        raise InputError(f"--labels_file {path}: no labels in it")
    try:
        return _parse_labels(labels)
    except InputError as e:
        raise InputError(f"--labels_file {path}: {e}") from None


def _parse_column(column):
    """A header name, or an int for a 0-based index (None: no such column)."""
    if column is None or isinstance(column, int):
        return column
    column = str(column).strip()
    return int(column) if column.isdigit() else column


def json_value(record, key, where):
    """`record[key]`, a dotted `key` reaching into nested objects; InputError
    naming `where` (file:line) when a key is missing."""
    if key in record:
        return record[key]
    value, parts = record, key.split(".")
    for depth, part in enumerate(parts):
        if not isinstance(value, dict) or part not in value:
            inside = ".".join(parts[:depth])
            keys = ", ".join(map(repr, value)) if isinstance(value, dict) else "none"
            raise InputError(
                f"{where}: no key {key!r} ("
                + (f"keys of {inside!r}" if inside else "keys")
                + f": {keys})"
            )
        value = value[part]
    return value


class GenericProcessor(DataProcessor):
    """The user's own TSV / CSV / JSON lines files (see the module docstring).

    Args:
      text_a_column: column of the first text: a header name or a 0-based index
        (an int or a string of digits); for JSON lines, a (dotted) key.
      text_b_column: column of the second text, or None for single texts.
      label_column: column of the label.
      id_column: column of an id, used as the example's guid (and so in
        the test predictions), or None.
      labels: the label list (a list, or a comma-separated string), in the
        order of the model's outputs; every label must be one of them.
        Not used for regression.
      labels_file: a file with the label list, one per line (instead of `labels`).
      delimiter: "\\t" (quotes literal, as the GLUE readers) or another
        character such as "," (then standard CSV quoting applies). Default:
        "," for a .csv file, else a tab. Not used for JSON lines.
      has_header: whether the first row of each delimited file is a header
        (needed to name columns).
      train_file, dev_file, test_file: file names inside data_dir (default:
        the first of `<split>.tsv`, `.csv`, `.jsonl`, `.json` that exists).
      is_regression: float labels; metric Pearson / Spearman.
      test_has_labels: read and check the test file's labels (otherwise they
        are the first label / 0.0 and the label column may be absent).
      metric: a name of `processor.METRICS` (default "accuracy", "pearson_spearman"
        for regression; multi-label has its own metrics).
      multi_label: each example has a list of labels (see the module docstring).
      label_delimiter: what separates the labels of a multi-label string ("|").
    """

    name = "generic"

    def __init__(
        self,
        text_a_column=None,
        text_b_column=None,
        label_column=None,
        id_column=None,
        labels=None,
        labels_file=None,
        delimiter=None,
        has_header=True,
        train_file=None,
        dev_file=None,
        test_file=None,
        is_regression=False,
        test_has_labels=False,
        metric=None,
        skip_malformed=None,
        multi_label=False,
        label_delimiter=None,
    ):
        super().__init__(skip_malformed)
        self.column_names = {
            "text_a": text_a_column,
            "text_b": text_b_column,
            "label": label_column,
            "id": id_column,
        }
        self.delimiter = None if delimiter is None else decode_delimiter(delimiter)
        self.header = bool(has_header)
        self.files = {"train": train_file, "dev": dev_file, "test": test_file}
        self.is_regression = bool(is_regression)
        self.has_test_labels = bool(test_has_labels)
        self.metric = metric or ("pearson_spearman" if self.is_regression else "accuracy")
        self.multi_label = bool(multi_label)
        self.label_delimiter = "|" if label_delimiter is None else str(label_delimiter)
        if self.multi_label and self.is_regression:
            raise InputError("a task is multi-label or a regression, not both")
        if not self.label_delimiter:
            raise InputError("--label_delimiter must not be empty")
        if text_a_column is None:
            raise InputError(
                "the generic task needs --text_a_column (a header name, a 0-based index "
                "or a JSON key)"
            )
        if label_column is None:
            raise InputError(
                "the generic task needs --label_column (a header name, a 0-based index "
                "or a JSON key)"
            )
        if labels is not None and labels_file is not None:
            raise InputError("pass --labels or --labels_file, not both")
        if self.metric not in METRICS:
            raise InputError(f"unknown metric {self.metric!r}: use one of {', '.join(METRICS)}")
        if self.is_regression:
            self.labels = []
        elif labels_file is not None:
            self.labels = read_labels_file(labels_file)
        else:
            self.labels = _parse_labels(labels)  # None: read_labels(data_dir)
        indexes = {what: _parse_column(c) for what, c in self.column_names.items()}
        if not self.header and any(isinstance(c, str) for c in indexes.values()):
            raise InputError(
                "columns are named but has_header is false: use 0-based "
                "column indexes for files without a header"
            )

    def get_labels(self):
        if self.labels is None:
            raise InputError(
                "the generic task needs --labels or --labels_file (in output order), "
                "or a train file to read them from"
            )
        return list(self.labels)

    def read_labels(self, data_dir):
        """Unless they were given, takes the labels from the train file
        (distinct, sorted) and logs them. Returns the labels."""
        if self.labels is None:
            (path,) = self.input_files(data_dir, "train")
            if not os.path.exists(path):
                self.get_labels()  # the error: no labels and no train file
            found = set()
            for example in self._read(path, "train", check=False):
                found.update(example.label if self.multi_label else [example.label])
            self.labels = sorted(found)
            logging.info("Labels (from %s, sorted): %s", path, ", ".join(self.labels))
        return self.get_labels()

    @property
    def id_column(self):
        return self.column_names["id"]

    def config(self):
        return {
            **super().config(),
            "columns": [self.column_names[what] for what in _COLUMNS],
            "delimiter": self.delimiter,
            "has_header": self.header,
            "files": self.files,
            "test_has_labels": self.has_test_labels,
            "multi_label": self.multi_label,
            "label_delimiter": self.label_delimiter if self.multi_label else None,
        }

    def test_label(self):
        return [] if self.multi_label else super().test_label()

    def check_label(self, label, path, line_number, split):
        if not self.multi_label:
            return super().check_label(label, path, line_number, split)
        for one in label:
            super().check_label(one, path, line_number, split)
        return label

    def input_files(self, data_dir, split):
        if split in self.files and self.files[split] is None:
            candidates = [os.path.join(data_dir, f"{split}{ext}") for ext in EXTENSIONS]
            return [next((p for p in candidates if os.path.exists(p)), candidates[0])]
        return super().input_files(data_dir, split)

    def get_examples(self, data_dir, split):
        (path,) = self.input_files(data_dir, split)
        if self.files[split] is None and not os.path.exists(path):
            others = ", ".join(f"{split}{ext}" for ext in EXTENSIONS[1:])
            raise InputError(f"input file {path} does not exist (nor {others})")
        return self._read(path, split)

    def _read(self, path, split, check=True):
        with_label = split != "test" or self.has_test_labels
        if path.lower().endswith(JSON_EXTENSIONS):
            rows = self._json_rows(path, with_label)
        else:
            rows = self._delimited_rows(path, with_label)
        examples = []
        for i, line_number, values in rows:
            guid = values["id"] if values["id"] is not None else f"{self.set_types[split]}-{i}"
            label = values["label"] if with_label else self.test_label()
            if self.multi_label and isinstance(label, str):
                label = [one.strip() for one in label.split(self.label_delimiter) if one.strip()]
            example = InputExample(guid, values["text_a"], values["text_b"], label)
            if check:
                example.label = self.check_label(label, path, line_number, split)
            examples.append(example)
        return examples

    # -- JSON lines --------------------------------------------------------------
    def _json_rows(self, path, with_label):
        """Yields `(i, line_number, values)` with the column values of each line."""
        for line_number, record in read_json_lines(path):
            where = f"{path}:{line_number}"
            values = {}
            for what in _COLUMNS:
                key = self.column_names[what]
                if key is None or (what == "label" and not with_label):
                    values[what] = None
                    continue
                value = json_value(record, str(key), where)
                values[what] = self._check_json_type(what, key, value, where)
            yield line_number - 1, line_number, values

    def _check_json_type(self, what, key, value, where):
        if what == "text_b" and value is None:
            return None
        if what == "label" and self.multi_label and isinstance(value, list):
            return [self._check_json_type("id", key, one, where) for one in value]
        if isinstance(value, str):
            return value
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if what in ("id", "label") and numeric:
            return value if what == "label" and self.is_regression else str(value)
        expected = "a string" if what.startswith("text") else "a string or a number"
        raise InputError(
            f"{where}: {key!r} is {json.dumps(value, ensure_ascii=False)[:40]}, expected {expected}"
        )

    # -- delimited files ------------------------------------------------------
    def _delimiter_of(self, path):
        if self.delimiter is not None:
            return self.delimiter
        return "," if path.lower().endswith(".csv") else "\t"

    def _delimited_rows(self, path, with_label):
        """Yields `(i, line_number, values)` with the column values of each row."""
        header, index, skipped = None, None, []
        for i, line_number, fields in read_rows(path, self._delimiter_of(path)):
            if self.header and header is None:
                header = fields
                index = self._column_indexes(header, path, with_label)
                continue
            if index is None:
                index = self._column_indexes(None, path, with_label)
            needed = max(c for c in index.values() if c is not None) + 1
            if len(fields) < needed:
                if self.skip_malformed:
                    skipped.append(line_number)
                    continue
                raise InputError(
                    f"{path}:{line_number}: {len(fields)} columns, expected at least {needed}"
                )
            values = {what: None if c is None else fields[c] for what, c in index.items()}
            yield i, line_number, values
        log_skipped_rows(path, skipped)

    def _column_indexes(self, header, path, with_label):
        def resolve(what):
            column = _parse_column(self.column_names[what])
            if column is None or (what == "label" and not with_label):
                return None
            if isinstance(column, int):
                if header is not None and column >= len(header):
                    raise InputError(
                        f"{path}: {what} column {column} is out of range: "
                        f"the header has {len(header)} columns"
                    )
                return column
            if column not in header:
                raise InputError(
                    f"{path}: no {what} column {column!r} in the header "
                    f"({', '.join(map(repr, header))}){_delimiter_hint(header)}"
                )
            return header.index(column)

        return {what: resolve(what) for what in _COLUMNS}


def _delimiter_hint(header):
    """A hint for a header read as one column that looks split by another character."""
    if len(header) != 1:
        return ""
    for char, name in ((",", ","), (";", ";"), ("\t", "tab"), ("|", "|")):
        if char in header[0]:
            return f"; the file looks {name}-separated: pass --delimiter={name}"
    return ""
