"""run_pretraining.py's options (`tasks.pretraining`). Free of TensorFlow: the
script parses its flags before importing the task."""

import dataclasses

from bert_tf.options import ModelOptions, Options, group, option
from bert_tf.tasks.options import IN_EPOCHS, ExportOptions, RunOptions
from bert_tf.training.options import RuntimeOptions, TrainingOptions


@dataclasses.dataclass(frozen=True, kw_only=True)
class PretrainingOptions(Options):
    """The flags of the original run_pretraining.py, with its defaults."""

    model: ModelOptions = group(
        ModelOptions, exclude=("vocab_file", "allow_vocab_mismatch", "do_lower_case")
    )
    run: RunOptions = group(RunOptions, exclude=("do_predict", "eval_every_epoch"))
    training: TrainingOptions = group(TrainingOptions, exclude=(*IN_EPOCHS, "predict_batch_size"))
    runtime: RuntimeOptions = group(RuntimeOptions)
    export: ExportOptions = group(ExportOptions, flags=())  # no SavedModel
    input_file: str = option(help="Input TFRecord files (comma-separated globs).")
    eval_input_file: str | None = option(
        None,
        "Held-out TFRecord files to evaluate on (comma-separated globs; made by "
        "create_pretraining_data.py from documents kept out of --input_file). "
        "Default: --input_file, as the original.",
    )
    max_predictions_per_seq: int = option(20, "Masked positions per record.", at_least=1)
    max_eval_steps: int = option(100, "Maximum evaluation batches.", at_least=1)
    skip_corrupt_records: bool = option(
        False,
        "Read each --input_file up to its first damaged record (truncated, or a "
        "checksum that does not match) and skip the rest of that file, instead of "
        "stopping. The files are checked before training; what is skipped is listed.",
    )
