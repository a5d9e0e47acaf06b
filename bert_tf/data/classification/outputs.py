"""Prediction files of run_classifier.py: test_results.tsv and GLUE / CLUE submission files.

Both are written to a temporary file and renamed, and take only the
predictions of real examples (filter out padding, and combine the windows
of an example, before calling them).
"""

import json
import os

import numpy as np

from bert_tf.errors import InputError
from bert_tf.files import write_text_atomically


def _rows(values, name):
    values = np.asarray(values, dtype=np.float32)
    if values.ndim == 1:
        return values[:, None]
    if values.ndim != 2:
        raise ValueError(
            f"{name} must be [num_examples, num_labels] (or [num_examples] for "
            f"regression), got shape {values.shape}"
        )
    return values


def write_test_results(path, probabilities):
    """The original's test_results.tsv: per example, its class probabilities in
    label order joined by tabs, each written as `str()` of a float32 (as the
    original writes the Estimator's float32 outputs); for regression
    (`probabilities` of shape [n] or [n, 1]) one value per line."""
    rows = _rows(probabilities, "probabilities")
    write_text_atomically(
        path, "".join("\t".join(str(value) for value in row) + "\n" for row in rows)
    )


def submission_path(output_dir, processor):
    """`output_dir/<the task's leaderboard file>`: GLUE's `<name>.tsv` (e.g.
    MNLI-m.tsv), CLUE's `<name>_predict.json` (e.g. afqmc_predict.json)."""
    if not processor.submission_file:
        raise InputError(
            f"task {processor.name} is not a GLUE or CLUE task: it has no submission file"
        )
    return os.path.join(output_dir, processor.submission_file)


def write_submission(path, processor, predictions, data_dir):
    """The task's leaderboard file in its format (`processor.submission_format`);
    CLUE's takes the ids of the test file in `data_dir`."""
    if processor.submission_format == "clue":
        write_clue_submission(
            path,
            predictions,
            processor.get_labels(),
            processor.test_ids(data_dir),
            processor.submission_fields,
        )
    else:
        write_glue_submission(path, processor, predictions, processor.get_labels())


def _label_names(predictions, label_list):
    """The label of each prediction: class ids [n] or scores [n, num_labels] (argmax)."""
    ids = np.asarray(predictions)
    if ids.ndim == 2:
        ids = np.argmax(ids, axis=-1)
    if ids.ndim != 1:
        raise ValueError(f"predictions must be [n] or [n, num_labels], got shape {ids.shape}")
    if len(ids) and (ids.min() < 0 or ids.max() >= len(label_list)):
        raise ValueError(f"prediction ids must be in [0, {len(label_list)})")
    return [str(label_list[int(i)]) for i in ids]


def write_glue_submission(path, processor, predictions, label_list):
    """A GLUE leaderboard file: `index\tprediction`, then one row per test
    example in order (index 0, 1, ...).

    Classification: the label name of each prediction (`label_list[id]`, so
    "0"/"1" for CoLA, SST-2, MRPC, QQP, WNLI; "entailment"... for MNLI, AX,
    QNLI, RTE); `predictions` are class ids [n] or scores [n, num_labels]
    (argmax). Regression (STS-B): the value with 3 decimals ("%.3f").
    """
    if processor.is_regression:
        values = np.asarray(predictions, dtype=np.float64)
        if values.ndim == 2 and values.shape[1] == 1:
            values = values[:, 0]
        if values.ndim != 1:
            raise ValueError(f"regression predictions must be [n], got shape {values.shape}")
        cells = ["%.3f" % value for value in values]
    else:
        cells = _label_names(predictions, label_list)
    write_text_atomically(
        path,
        "index\tprediction\n" + "".join(f"{index}\t{cell}\n" for index, cell in enumerate(cells)),
    )


def write_id_predictions(path, processor, ids, predictions, thresholds=None):
    """`id\tprediction`, then per test example its id and its label (the
    argmax of its scores), or its value for regression; multi-label: its
    labels with probabilities at or over `thresholds`, joined by the
    processor's `label_delimiter` (empty: none)."""
    if processor.multi_label:
        flags = np.asarray(predictions) >= np.asarray(thresholds)
        labels = processor.get_labels()
        cells = [
            processor.label_delimiter.join(label for label, on in zip(labels, row) if on)
            for row in flags
        ]
    elif processor.is_regression:
        cells = [str(value) for value in np.asarray(predictions, np.float32).reshape(-1)]
    else:
        cells = _label_names(predictions, processor.get_labels())
    if len(ids) != len(cells):
        raise ValueError(f"{len(ids)} ids for {len(cells)} predictions")
    write_text_atomically(
        path, "id\tprediction\n" + "".join(f"{i}\t{cell}\n" for i, cell in zip(ids, cells))
    )


def write_clue_submission(path, predictions, label_list, ids, fields=None):
    """A CLUE leaderboard file: per test example, in order, one JSON object
    `{"id": <its id>, "label": "<label name>", **fields}` on a line.
    `predictions` are class ids [n] or scores [n, num_labels] (argmax)."""
    labels = _label_names(predictions, label_list)
    if len(ids) != len(labels):
        raise ValueError(f"{len(ids)} ids for {len(labels)} predictions")
    write_text_atomically(
        path,
        "".join(
            json.dumps({"id": i, "label": label, **(fields or {})}, ensure_ascii=False) + "\n"
            for i, label in zip(ids, labels)
        ),
    )


def write_thresholds(path, labels, thresholds):
    """A multi-label model's decision thresholds: JSON `{"labels": [...],
    "thresholds": [...]}`, one threshold per label in output order."""
    record = {"labels": list(labels), "thresholds": [float(t) for t in thresholds]}
    write_text_atomically(path, json.dumps(record, indent=1) + "\n")


def read_thresholds(path, labels):
    """The thresholds of `write_thresholds`; InputError unless they are for `labels`."""
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
        found, thresholds = record["labels"], [float(t) for t in record["thresholds"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InputError(f"{path}: not a thresholds file ({e})") from None
    if found != list(labels) or len(thresholds) != len(labels):
        raise InputError(
            f"{path}: thresholds for labels {found}, but the labels are {list(labels)}; "
            "delete it or pass --tune_thresholds"
        )
    return thresholds
