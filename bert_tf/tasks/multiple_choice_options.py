"""run_multiple_choice.py's options (`tasks.multiple_choice`). Free of
TensorFlow: the script parses its flags before importing the task."""

import dataclasses

from bert_tf.options import group, option
from bert_tf.tasks.options import ExportOptions, FineTuningOptions, RunOptions


@dataclasses.dataclass(frozen=True, kw_only=True)
class MultipleChoiceOptions(FineTuningOptions):
    """The flags of run_multiple_choice.py (run_classifier's that apply)."""

    run: RunOptions = group(
        RunOptions, help={"do_predict": "Whether to predict test.csv (writes test_results.tsv)."}
    )
    export: ExportOptions = group(
        ExportOptions, help={"export_dir": "Write a SavedModel (context + endings in) here."}
    )
    data_dir: str = option(help="Folder with SWAG's train.csv, val.csv and test.csv.")
