"""The options of the scripts that run or change a model, one dataclass per
script composed from option groups (`options.group`): `ModelOptions` (the
model, `model`), `RunOptions` (what a training run does and where, `run`),
`training.options.TrainingOptions` (`training`) and `RuntimeOptions`
(`runtime`), `ExportOptions` (`export`), the task's data options, then the
script's own flags. Free of TensorFlow, so that a script defines and parses
its flags, and answers `--help` or a bad flag, before importing it; the tasks
(`tasks/<task>.py`) and `checkpoints.surgery` read them.
"""

import dataclasses

from bert_tf.data.classification import registry
from bert_tf.data.classification.options import ClassifierDataOptions
from bert_tf.options import (
    ALLOW_VOCAB_MISMATCH_HELP,
    REQUIRED,
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
class ClassifierOptions(FineTuningOptions):
    """The flags of the original run_classifier.py (with its defaults) and the additions."""

    data: ClassifierDataOptions = group(ClassifierDataOptions)
    distillation: DistillationOptions = group(DistillationOptions)
    long_text_stride: int | None = option(
        None,
        "Split texts longer than --max_seq_length into windows this many tokens apart "
        "and average their logits (default: truncate, as the original).",
        at_least=1,
    )
    class_weights: str | None = option(
        None,
        "Classification: weights of the labels in the training loss, comma-separated in "
        "label order (1,3,1), or 'balanced': n_examples / (n_labels * count) over train.",
    )
    threshold: float | None = option(
        None,
        "multi-label: the probability at or over which a label is predicted, for every "
        "label (default: output_dir/thresholds.json if there, else 0.5).",
        above=0,
        below=1,
    )
    tune_thresholds: bool = option(
        False,
        "multi-label: choose each label's threshold on dev (its best F1; needs --do_eval) "
        "and save them to output_dir/thresholds.json.",
    )


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class NerOptions(FineTuningOptions):
    """The flags of run_ner.py."""

    distillation: DistillationOptions = group(
        DistillationOptions,
        help={
            "unlabeled_file": "With --teacher: comma-separated files of unlabelled sentences "
            "(one a line, words split by spaces; --data_format=chars: each character) that the "
            "teacher tags, trained on with the train set."
        },
    )
    model: ModelOptions = group(
        ModelOptions,
        help={
            "do_lower_case": "Lower-case the input (uncased models). Default: what the model "
            "says (a Hugging Face tokenizer_config.json, a Google release's name), else "
            "false (CoNLL models are usually cased)."
        },
    )
    run: RunOptions = group(
        RunOptions,
        help={
            "do_predict": "Tag test.txt (writes test_predictions.txt; cluener: "
            "cluener_predict.json)."
        },
    )
    training: TrainingOptions = group(
        TrainingOptions,
        exclude=IN_UPDATES,
        help={"num_train_epochs": "Training epochs (over the sentences)."},
    )
    export: ExportOptions = group(
        ExportOptions, help={"export_dir": "Write a SavedModel (sentences in, tags out) here."}
    )
    data_dir: str = option(
        help="Folder with train.txt, dev.txt (or valid.txt) and test.txt "
        "(train.json, dev.json and test.json for --data_format=cluener)."
    )
    data_format: str = option(
        "conll",
        "conll (CoNLL-2003: token POS chunk NER rows), chars (word first, tag "
        "last, e.g. MSRA's `character tag` rows) or cluener (CLUENER2020 JSON lines).",
    )
    tag_scheme: str = option(
        "auto",
        "bio (conlleval: BIO or IOB1), bioes or bmes: how entity chunks are "
        "scored and CLUENER's spans tagged; auto: bmes with M- labels, bioes "
        "with E- or S- labels, else bio.",
    )
    labels: str = option(
        "", "Comma-separated tags (default: the train file's tags, sorted, O first)."
    )
    document_context: bool = option(
        False,
        "Fill each window with the neighbouring "
        "sentences of the document (only the sentence "
        "is tagged).",
    )
    feature_based: bool = option(
        False, "Train a 2-layer BiLSTM on the frozen encoder's --layers instead of fine-tuning it."
    )
    layers: str = option(
        "-1,-2,-3,-4", "Feature-based: encoder layers to use (negative from the top)."
    )
    combine: str = option("concat", "Feature-based: concat or sum the --layers.")
    lstm_units: int = option(768, "Feature-based: LSTM units per direction.", at_least=1)
    use_crf: bool = option(
        False, "A linear-chain CRF over each window's words: NLL loss, Viterbi tags."
    )


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


@dataclasses.dataclass(frozen=True, kw_only=True)
class FeatureOptions(Options):
    """The flags of the original extract_features.py, `output_format`, and
    how the model runs (`runtime`): nothing is trained."""

    model: ModelOptions = group(
        ModelOptions,
        exclude=("group_by_length",),
        defaults={"init_checkpoint": REQUIRED},
        help={
            "init_checkpoint": "The model's checkpoint (Google's bert_model.ckpt, "
            "bert_tf, Model Garden or a Hugging Face folder)."
        },
    )
    runtime: RuntimeOptions = group(RuntimeOptions)
    input_file: str = option(help="Text, one example per line: text_a or 'text_a ||| text_b'.")
    output_file: str = option(help="Where the features are written (JSON lines or .npz).")
    layers: str = option("-1,-2,-3,-4", "Comma-separated layer indexes (-1: the last).")
    batch_size: int = option(32, "Global batch size for predictions.", at_least=1)
    output_format: str = option("jsonl", "jsonl (the original's JSON lines) or npz (arrays).")
    use_one_hot_embeddings: bool = option(
        False,
        "The original's switch to one-hot matmul lookups on TPUs. Accepted and ignored: "
        "the embedding gather here gives the same values on every device.",
    )


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
    extend_checkpoint.py."""

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
