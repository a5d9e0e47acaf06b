"""The flags that say which classification task's files to read and how
(`registry.get_processor`'s options): run_classifier.py's, and export_model.py's
for its dev-set check."""

import dataclasses

from bert_tf.data.classification import registry
from bert_tf.options import Options, option


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClassifierDataOptions(Options):
    """Which task's files to read and how: the flags of `registry.get_processor`
    (run_classifier.py's, and export_model.py's dev-set check)."""

    task_name: str = option(help=f"One of: {', '.join(registry.task_names())}.")
    data_dir: str = option(help="Folder with the task's files (.tsv; CLUE: .json).")
    # The data reader's options (registry.get_processor); None: the task's default.
    xnli_language: str | None = option(None, "XNLI language (the original's default: zh).")
    skip_malformed: bool | None = option(
        None, "Skip rows with a wrong number of columns (CLUE: a missing key or a wrong type)."
    )
    text_a_column: str | None = option(
        None, "generic task: column (header name, 0-based index or JSON key, dotted) of text a."
    )
    text_b_column: str | None = option(None, "generic task: column of text b (pairs).")
    label_column: str | None = option(None, "generic task: column of the label.")
    id_column: str | None = option(
        None,
        "generic task: column of an example id (the guid; the first column of "
        "test_predictions.tsv).",
    )
    labels: tuple | None = option(
        None, "generic task: the labels, in output order (default: those of train, sorted)."
    )
    labels_file: str | None = option(None, "generic task: a file of the labels, one per line.")
    delimiter: str | None = option(
        None, "generic task: field delimiter (default: ',' for .csv, else tab)."
    )
    has_header: bool | None = option(
        None, "generic task: delimited files start with a header (default true)."
    )
    regression: bool | None = option(
        None, "generic task: the labels are numbers (regression, squared error)."
    )
    multi_label: bool = option(
        False, "generic task: each example has a list of labels (sigmoid outputs, BCE loss)."
    )
    label_delimiter: str | None = option(
        None, "multi-label: separator of the labels in a delimited file's label cell (|)."
    )

    @property
    def processor_options(self):
        """The options of `registry.get_processor`: every field but the task and
        its folder, with `regression` and `multi_label` under its names."""
        options = {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(ClassifierDataOptions)
            if field.name not in ("task_name", "data_dir", "regression", "multi_label")
        }
        return options | {"is_regression": self.regression, "multi_label": self.multi_label or None}
