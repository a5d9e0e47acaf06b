"""The option groups of the scripts that run or change a model, and the
options of the scripts that are not tasks. A script's options are one
dataclass composed from groups (`options.group`): `ModelOptions` (the model,
`model`), `RunOptions` (what a training run does and where, `run`),
`training.options.TrainingOptions` (`training`) and `RuntimeOptions`
(`runtime`), `ExportOptions` (`export`), the task's data options, then the
script's own flags. Each task's options are beside its runner
(`tasks/<task>_options.py`: `ClassifierOptions`, `SquadOptions`, ...);
`ExportModelOptions` and `ExtendOptions` are here. Free of TensorFlow, so
that a script defines and parses its flags, and answers `--help` or a bad
flag, before importing it; the tasks (`tasks/<task>.py`) and
`checkpoints.surgery` read them.
"""

import dataclasses
import importlib
import warnings

from bert_tf.data.classification import registry
from bert_tf.data.classification.options import ClassifierDataOptions
from bert_tf.options import (
    ALLOW_VOCAB_MISMATCH_HELP,
    ModelOptions,
    Options,
    group,
    option,
)
from bert_tf.tasks.sweep.options import SweepOptions
from bert_tf.training.options import RuntimeOptions, TrainingOptions

# The two schedules of `TrainingOptions`: fine-tuning's is in epochs,
# pre-training's in updates.
IN_EPOCHS = ("num_train_epochs", "warmup_proportion")
IN_UPDATES = ("num_train_steps", "num_warmup_steps")


@dataclasses.dataclass(frozen=True, kw_only=True)
class RunOptions(Options):
    """What a training run does and where: its modes, checkpoints and the
    evaluations during training, with the original's defaults."""

    output_dir: str = option(help="Where checkpoints and results are written.")
    do_train: bool = option(False, "Whether to train.")
    do_eval: bool = option(False, "Whether to evaluate (writes eval_results.txt).")
    do_predict: bool = option(False, "Whether to predict the test set.")
    save_checkpoints_steps: int = option(1000, "Updates between checkpoints.", at_least=1)
    keep_checkpoint_max: int = option(5, "Checkpoints kept in --output_dir (0: all).", at_least=0)
    eval_every_steps: int = option(
        0,
        "With --do_train and --do_eval: evaluate during training every this many "
        "updates and after the last, one log line each (0: only after training).",
        at_least=0,
    )
    eval_every_epoch: bool = option(
        False,
        "With --do_train and --do_eval: evaluate during training after every epoch "
        "(instead of --eval_every_steps).",
    )
    keep_best_checkpoint: str | None = option(
        None,
        "With --do_eval: evaluate during training (every --eval_every_steps, else at "
        "each checkpoint) and keep the checkpoint with the best value of this eval "
        "metric in --output_dir/best/, e.g. accuracy, f1, eval_loss (lower is better "
        "for names ending in loss, else higher; or say min:<name> / max:<name>). "
        "The final eval, predict and export use it.",
    )
    early_stopping_patience: int = option(
        0,
        "With --keep_best_checkpoint: stop training after this many evaluations in a "
        "row without improvement (0: never).",
        at_least=0,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExportOptions(Options):
    """Where a fine-tuning run writes its SavedModel."""

    export_dir: str | None = option(None, "Write a SavedModel (raw text in) here.")
    overwrite: bool = option(False, "Replace an existing --export_dir.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class DistillationOptions(Options):
    """Task distillation (`tasks.distillation`): the model the run trains is
    the student, taught by a fine-tuned `--teacher` of the same task."""

    teacher: str | None = option(
        None,
        "Distil: a fine-tuned model of this task and these labels (a run's --output_dir, "
        "or a checkpoint) whose outputs the trained model (the student) learns from.",
    )
    teacher_config_file: str | None = option(
        None,
        "The teacher's config (default: the one beside --teacher, else the model's with "
        "--student_num_layers).",
    )
    student_num_layers: int | None = option(
        None,
        "With --teacher: the student is the teacher cut to this many layers, each started "
        "from one of the teacher's, evenly spaced up to the top one (instead of "
        "--init_checkpoint / --bert_config_file).",
        at_least=1,
    )
    temperature: float = option(
        2.0, "With --teacher: the softmax temperature T of the soft targets.", above=0
    )
    distillation_weight: float = option(
        0.5,
        "With --teacher: the weight of the loss to the teacher's outputs (times T^2); the "
        "labels' loss weighs 1 minus it.",
        at_least=0,
        at_most=1,
    )
    unlabeled_file: str | None = option(
        None,
        "With --teacher: comma-separated files of unlabelled text (one example a line; "
        "text_a<TAB>text_b for pairs) that the teacher labels, trained on with the train set.",
    )
    hidden_distillation_weight: float = option(
        0.0,
        "With --teacher: the weight of the mean squared error between the student's and the "
        "teacher's hidden states on the --layer_map layers (TinyBERT; through a learned "
        "projection when the widths differ), added to the loss.",
        at_least=0,
    )
    cosine_distillation_weight: float = option(
        0.0,
        "With --teacher: the weight of 1 - cosine between the student's and the teacher's "
        "hidden states, token by token, on the --layer_map layers (DistilBERT).",
        at_least=0,
    )
    embedding_distillation_weight: float = option(
        0.0,
        "With --teacher: the weight of the mean squared error between the embedding outputs.",
        at_least=0,
    )
    attention_distillation_weight: float = option(
        0.0,
        "With --teacher: the weight of the KL divergence from the teacher's self-attention "
        "distributions to the student's on the --layer_map layers (MiniLM), split into the "
        "student's number of heads.",
        at_least=0,
    )
    value_relation_distillation_weight: float = option(
        0.0,
        "With --teacher: the weight of the KL divergence between the value-value relations "
        "softmax(V V^T / sqrt(d)) on the --layer_map layers (MiniLM).",
        at_least=0,
    )
    layer_map: str | None = option(
        None,
        "With intermediate distillation weights: student:teacher layer pairs, 0-based "
        "(e.g. 0:1,1:3,2:5); default every student layer to the teacher's evenly spaced "
        "layers, the top one to the top one.",
    )
    intermediate_only: bool = option(
        False,
        "With intermediate distillation weights: train on those losses alone, not on the "
        "teacher's outputs nor the labels (TinyBERT's first stage; then distil the outputs "
        "from this run with --init_checkpoint).",
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class FineTuningOptions(Options):
    """The groups every fine-tuning script holds, with all their flags
    (training counted in epochs). A task adds its own flags; it re-declares
    a group field only to expose fewer of the group's flags or to change
    their defaults or help. `sweep`: a grid of such runs (`tasks.sweep`)."""

    model: ModelOptions = group(ModelOptions)
    run: RunOptions = group(RunOptions)
    training: TrainingOptions = group(TrainingOptions, exclude=IN_UPDATES)
    runtime: RuntimeOptions = group(RuntimeOptions)
    export: ExportOptions = group(ExportOptions)
    sweep: SweepOptions = group(SweepOptions)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExportModelOptions(Options):
    """export_model.py's flags; the task flags name the dev set of the check."""

    model: ModelOptions = group(
        ModelOptions,
        flags=("do_lower_case",),
        defaults={"do_lower_case": True},
        help={
            "do_lower_case": "The LiteRT tokenizer lower-cases (as the SavedModel's, which "
            "does not record it)."
        },
    )
    data: ClassifierDataOptions = group(
        ClassifierDataOptions,
        defaults={"task_name": None, "data_dir": None},
        help={
            "task_name": "Check the dev accuracy on this task (one of: "
            f"{', '.join(registry.task_names())}) with --data_dir.",
            "data_dir": "Folder with the task's dev file.",
        },
    )
    saved_model_dir: str = option(help="A SavedModel a bert_tf script wrote (its --export_dir).")
    export_format: str = option(
        help="litert (a .tflite model; classifiers take raw text) or onnx (token ids in)."
    )
    output_file: str = option(help="Where to write the model.")
    int8: bool = option(False, "Quantize: int8 weights (dynamic range), float activations.")
    overwrite: bool = option(False, "Replace an existing --output_file.")
    max_accuracy_drop: float = option(
        1.0,
        "Points of dev accuracy the converted model may lose against the SavedModel; "
        "past it the model is not written (negative: it must gain that many).",
        at_least=-100,
        at_most=100,
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtendOptions(Options):
    """What `extend_checkpoint` reads, changes and writes: the flags of
    extend_checkpoint.py, one field each (the field's help is the flag's).

    Examples:
        >>> import bert_tf
        >>> from bert_tf.options import build
        >>> options = bert_tf.ExtendOptions(
        ...     init_checkpoint="uncased_L-12_H-768_A-12", output_dir="extended", words=("covid",)
        ... )
        >>> options.word_ids, options.init
        ('unused', 'truncated_normal')
        >>> build(bert_tf.ExtendOptions, init_checkpoint="m", output_dir="o", init="mean").init
        'mean'
    """

    init_checkpoint: str = option(
        help="The model to extend: Google's bert_model.ckpt prefix or its release folder, "
        "a bert_tf run's output folder (its newest checkpoint), a Model Garden "
        "checkpoint or a Hugging Face folder."
    )
    output_dir: str = option(
        help="Folder to write bert_model.ckpt, bert_config.json and vocab.txt to."
    )
    bert_config_file: str | None = option(
        None, "The model's config (default: bert_config.json or config.json beside it)."
    )
    vocab_file: str | None = option(None, "The model's vocab (default: vocab.txt beside it).")
    allow_vocab_mismatch: bool = option(False, ALLOW_VOCAB_MISMATCH_HELP)
    words_file: str | None = option(
        None, "New words, one per line (UTF-8; empty lines skipped, repeats dropped)."
    )
    words: tuple = option((), "New words, comma-separated (after those of --words_file).")
    word_ids: str = option(
        "unused",
        "Where new words go: 'unused' replaces [unused*] vocab lines in order (the "
        "checkpoint unchanged); 'append' adds ids after the last, growing the word "
        "embeddings and the masked LM output bias.",
    )
    init: str = option(
        "truncated_normal",
        "Rows of appended words: 'truncated_normal' (stddev initializer_range, as the "
        "original initialises; output bias 0) or 'mean' (the mean of the rows and biases "
        "of the word's WordPiece tokens under the old vocab).",
    )
    seed: int = option(12345, "Seed of the truncated normal rows.", at_least=0)
    type_vocab_size: int | None = option(
        None,
        "Grow the token type embeddings to this many types (new rows copy type 0's).",
        at_least=1,
    )
    do_lower_case: bool | None = option(
        None,
        "Casing of the model's tokenizer, for --init=mean and the check that a new "
        "word stays one token (default: what the folder's name or tokenizer config "
        "says, else true).",
    )
    overwrite: bool = option(False, "Replace an existing --output_dir.")


# The options of each task, which moved beside its runner (0.1.0 had them
# here): importing them from here keeps working, with a DeprecationWarning,
# for one more release.
_MOVED = {
    "ClassifierOptions": "bert_tf.tasks.classifier_options",
    "MultipleChoiceOptions": "bert_tf.tasks.multiple_choice_options",
    "NerOptions": "bert_tf.tasks.ner_options",
    "SquadOptions": "bert_tf.tasks.squad_options",
    "PretrainingOptions": "bert_tf.tasks.pretraining_options",
    "FeatureOptions": "bert_tf.tasks.extract_options",
}


def __getattr__(name):
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    warnings.warn(
        f"bert_tf.tasks.options.{name} is deprecated and will be removed in the next "
        f"release: use {_MOVED[name]}.{name}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(_MOVED[name]), name)
