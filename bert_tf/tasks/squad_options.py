"""run_squad.py's options (`tasks.squad`). Free of TensorFlow: the script
parses its flags before importing the task."""

import dataclasses

from bert_tf.options import ModelOptions, group, option
from bert_tf.tasks.options import (
    IN_UPDATES,
    DistillationOptions,
    ExportOptions,
    FineTuningOptions,
    RunOptions,
)
from bert_tf.training.options import TrainingOptions


@dataclasses.dataclass(frozen=True, kw_only=True)
class SquadOptions(FineTuningOptions):
    """The flags of the original run_squad.py (with its defaults) and the
    additions. run_squad.py has no eval set of its own: --predict_file is
    scored instead, after training only."""

    distillation: DistillationOptions = group(
        DistillationOptions,
        help={
            "unlabeled_file": "With --teacher: a SQuAD JSON file of questions on contexts "
            "(answers not read) that the teacher answers, trained on with --train_file."
        },
    )
    model: ModelOptions = group(
        ModelOptions,
        defaults={"max_seq_length": 384},
        help={
            "max_seq_length": "Tokens per window after WordPiece; longer contexts are "
            "split into windows."
        },
    )
    run: RunOptions = group(
        RunOptions,
        flags=(
            "output_dir",
            "do_train",
            "do_predict",
            "save_checkpoints_steps",
            "keep_checkpoint_max",
        ),
        help={"do_predict": "Whether to predict --predict_file."},
    )
    training: TrainingOptions = group(
        TrainingOptions,
        exclude=(*IN_UPDATES, "eval_batch_size"),
        help={"num_train_epochs": "Training epochs (over the questions)."},
    )
    export: ExportOptions = group(
        ExportOptions, help={"export_dir": "Write a SavedModel (question + context in) here."}
    )
    train_file: str | None = option(None, "SQuAD JSON for training, e.g. train-v1.1.json.")
    predict_file: str | None = option(
        None, "SQuAD JSON to predict, e.g. dev-v1.1.json; scored when it has answers."
    )
    doc_stride: int = option(128, "Tokens between the starts of a context's windows.", at_least=1)
    max_query_length: int = option(64, "Question tokens kept (the rest is cut).", at_least=1)
    n_best_size: int = option(
        20,
        "Answers per question in nbest_predictions.json, and start "
        "/ end positions considered per window.",
        at_least=1,
    )
    max_answer_length: int = option(30, "Longest answer, in WordPiece tokens.", at_least=1)
    verbose_logging: bool = option(
        False, "Log why an answer could not be mapped back to the context text."
    )
    version_2_with_negative: bool = option(
        False, "SQuAD 2.0: questions may have no answer (writes null_odds.json)."
    )
    null_score_diff_threshold: float = option(
        0.0, 'SQuAD 2.0: answer "" when the null score exceeds the best span\'s by more.'
    )
    eval_metric: str = option(
        "squad",
        "How to score --predict_file: squad (the official v1.1 / v2.0 scripts) or cmrc2018 "
        "(CMRC 2018's script, for Chinese: CMRC 2018, DRCD).",
    )
