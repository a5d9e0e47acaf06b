"""The options of the scripts that run or change a model, one dataclass per
script (each field a flag: `options.option`). Free of TensorFlow, so that a
script defines and parses its flags, and answers `--help` or a bad flag,
before importing it; the tasks (`tasks/<task>.py`) and `checkpoints.surgery`
read them.

`ModelOptions` (every script that runs a model) <- `RunOptions` (every
training script) <- `FineTuningOptions` (classifier, multiple choice, NER,
SQuAD). A training script's options hold its `training.options.TrainingOptions`
(`training`), `FeatureOptions` its `RuntimeOptions` (`runtime`).
"""

import dataclasses

from bert_tf.data.classification import registry
from bert_tf.data.classification.options import ClassifierDataOptions
from bert_tf.options import option
from bert_tf.training.options import XLA_PAD_MULTIPLE, RuntimeOptions, TrainingOptions

# Without XLA a new batch length costs little (oneDNN kernels are made per
# shape, once): a small multiple keeps most of the padding compute away.
PADDING_MULTIPLE = 8


@dataclasses.dataclass(kw_only=True)
class ModelOptions:
    """The flags of every script that runs a BERT model: the model, its
    vocabulary, and how its inputs are padded."""

    bert_config_file: str | None = option(
        None,
        "bert_config.json of the model: its architecture. Not needed when "
        "--init_checkpoint is a folder with one (Google's release, Hugging Face).",
    )
    init_checkpoint: str | None = option(
        None,
        "Checkpoint to start from: Google's bert_model.ckpt, a bert_tf or Model "
        "Garden checkpoint, or a Hugging Face folder.",
    )
    max_seq_length: int = option(128, "Tokens per sequence after WordPiece, with [CLS]/[SEP].")
    dynamic_padding: bool = option(
        True,
        "Pad each batch only to its longest example, rounded up to --padding_multiple, "
        "not to --max_seq_length (same results, less compute). Off under TPUStrategy, "
        "which needs static shapes; pre-training and SQuAD always pad fully.",
    )
    padding_multiple: int | None = option(
        None,
        f"With --dynamic_padding: batch lengths are multiples of this. Default "
        f"{PADDING_MULTIPLE}, or {XLA_PAD_MULTIPLE} under --jit_compile (each length is "
        "compiled into its own XLA program).",
    )
    # What a script without these flags does: no vocabulary of its own (the
    # data is already ids).
    vocab_file: str | None = None
    do_lower_case: bool = True


@dataclasses.dataclass(kw_only=True)
class RunOptions(ModelOptions):
    """The flags every training script shares, with the original's defaults."""

    output_dir: str = option(help="Where checkpoints and results are written.")
    do_train: bool = option(False, "Whether to train.")
    do_eval: bool = option(False, "Whether to evaluate (writes eval_results.txt).")
    train_batch_size: int = option(32, "Global training batch size.")
    eval_batch_size: int = option(8, "Global evaluation batch size.")
    learning_rate: float = option(5e-5, "Peak learning rate.")
    save_checkpoints_steps: int = option(1000, "Updates between checkpoints.")
    keep_checkpoint_max: int = option(5, "Checkpoints kept in --output_dir.")
    group_by_length: bool = option(
        False,
        "With --dynamic_padding: train on batches of similar lengths (sorted within "
        "windows of 32 batches, the batches then shuffled). Eval and predict always "
        "do so, and write results in the original order.",
    )
    training: TrainingOptions = dataclasses.field(default_factory=TrainingOptions)
    eval_every_steps: int = option(
        0,
        "With --do_train and --do_eval: evaluate during training every this many "
        "updates and after the last, one log line each (0: only after training).",
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
    )
    # What a task without these flags does: nothing predicted or exported,
    # no epochs to evaluate after.
    do_predict: bool = False
    eval_every_epoch: bool = False
    export_dir: str | None = None
    overwrite: bool = False


@dataclasses.dataclass(kw_only=True)
class FineTuningOptions(RunOptions):
    """The flags every fine-tuning script shares, with the original's
    defaults. A task re-declares one only to change its default or to say
    in its help what it means there."""

    vocab_file: str | None = option(
        None, "The vocab.txt of the BERT model (default: the one in the --init_checkpoint folder)."
    )
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input (uncased models). Default: what the model says (a Hugging "
        "Face tokenizer_config.json, a Google release's name), else true.",
    )
    do_predict: bool = option(False, "Whether to predict the test set.")
    predict_batch_size: int = option(8, "Global prediction batch size.")
    num_train_epochs: float = option(3.0, "Training epochs.")
    warmup_proportion: float = option(0.1, "Share of training for linear warm-up.")
    eval_every_epoch: bool = option(
        False,
        "With --do_train and --do_eval: evaluate during training after every epoch "
        "(instead of --eval_every_steps).",
    )
    export_dir: str | None = option(None, "Write a SavedModel (raw text in) here.")
    overwrite: bool = option(False, "Replace an existing --export_dir.")


@dataclasses.dataclass(kw_only=True)
class ClassifierOptions(ClassifierDataOptions, FineTuningOptions):
    """The flags of the original run_classifier.py (with its defaults) and the additions."""

    long_text_stride: int | None = option(
        None,
        "Split texts longer than --max_seq_length into windows this many tokens apart "
        "and average their logits (default: truncate, as the original).",
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
    )
    tune_thresholds: bool = option(
        False,
        "multi-label: choose each label's threshold on dev (its best F1; needs --do_eval) "
        "and save them to output_dir/thresholds.json.",
    )


@dataclasses.dataclass(kw_only=True)
class MultipleChoiceOptions(FineTuningOptions):
    """The flags of run_multiple_choice.py (run_classifier's that apply)."""

    data_dir: str = option(help="Folder with SWAG's train.csv, val.csv and test.csv.")
    do_predict: bool = option(False, "Whether to predict test.csv (writes test_results.tsv).")
    export_dir: str | None = option(None, "Write a SavedModel (context + endings in) here.")


@dataclasses.dataclass(kw_only=True)
class NerOptions(FineTuningOptions):
    """The flags of run_ner.py."""

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
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input (uncased models). Default: what the model says (a Hugging "
        "Face tokenizer_config.json, a Google release's name), else false (CoNLL models "
        "are usually cased).",
    )
    do_predict: bool = option(
        False, "Tag test.txt (writes test_predictions.txt; cluener: cluener_predict.json)."
    )
    num_train_epochs: float = option(3.0, "Training epochs (over the sentences).")
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
    lstm_units: int = option(768, "Feature-based: LSTM units per direction.")
    export_dir: str | None = option(None, "Write a SavedModel (sentences in, tags out) here.")
    use_crf: bool = option(
        False, "A linear-chain CRF over each window's words: NLL loss, Viterbi tags."
    )


@dataclasses.dataclass(kw_only=True)
class SquadOptions(FineTuningOptions):
    """The flags of the original run_squad.py (with its defaults) and the additions."""

    train_file: str | None = option(None, "SQuAD JSON for training, e.g. train-v1.1.json.")
    predict_file: str | None = option(
        None, "SQuAD JSON to predict, e.g. dev-v1.1.json; scored when it has answers."
    )
    max_seq_length: int = option(
        384, "Tokens per window after WordPiece; longer contexts are split into windows."
    )
    doc_stride: int = option(128, "Tokens between the starts of a context's windows.")
    max_query_length: int = option(64, "Question tokens kept (the rest is cut).")
    do_predict: bool = option(False, "Whether to predict --predict_file.")
    num_train_epochs: float = option(3.0, "Training epochs (over the questions).")
    n_best_size: int = option(
        20,
        "Answers per question in nbest_predictions.json, and start "
        "/ end positions considered per window.",
    )
    max_answer_length: int = option(30, "Longest answer, in WordPiece tokens.")
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
    export_dir: str | None = option(None, "Write a SavedModel (question + context in) here.")
    # run_squad.py has no eval set of its own: --predict_file is scored instead,
    # after training only.
    do_eval: bool = False
    eval_batch_size: int = 8
    eval_every_steps: int = 0
    eval_every_epoch: bool = False
    keep_best_checkpoint: str | None = None
    early_stopping_patience: int = 0


@dataclasses.dataclass(kw_only=True)
class PretrainingOptions(RunOptions):
    """The flags of the original run_pretraining.py, with its defaults."""

    input_file: str = option(help="Input TFRecord files (comma-separated globs).")
    max_predictions_per_seq: int = option(20, "Masked positions per record.")
    num_train_steps: int = option(100000, "Optimizer updates to train for.")
    num_warmup_steps: int = option(10000, "Linear warm-up updates.")
    max_eval_steps: int = option(100, "Maximum evaluation batches.")
    skip_corrupt_records: bool = option(
        False,
        "Read each --input_file up to its first damaged record (truncated, or a "
        "checksum that does not match) and skip the rest of that file, instead of "
        "stopping. The files are checked before training; what is skipped is listed.",
    )


@dataclasses.dataclass(kw_only=True)
class FeatureOptions(ModelOptions):
    """The flags of the original extract_features.py, `output_format`, and
    how the model runs (`runtime`): nothing is trained."""

    input_file: str = option(help="Text, one example per line: text_a or 'text_a ||| text_b'.")
    output_file: str = option(help="Where the features are written (JSON lines or .npz).")
    vocab_file: str | None = option(
        None, "The vocab.txt of the BERT model (default: the one in the --init_checkpoint folder)."
    )
    init_checkpoint: str = option(
        help="The model's checkpoint (Google's bert_model.ckpt, "
        "bert_tf, Model Garden or a Hugging Face folder)."
    )
    layers: str = option("-1,-2,-3,-4", "Comma-separated layer indexes (-1: the last).")
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input (uncased models). Default: what the model says (a Hugging "
        "Face tokenizer_config.json, a Google release's name), else true.",
    )
    batch_size: int = option(32, "Global batch size for predictions.")
    output_format: str = option("jsonl", "jsonl (the original's JSON lines) or npz (arrays).")
    use_one_hot_embeddings: bool = option(
        False,
        "The original's switch to one-hot matmul lookups on TPUs. Accepted and ignored: "
        "the embedding gather here gives the same values on every device.",
    )
    runtime: RuntimeOptions = dataclasses.field(default_factory=RuntimeOptions)


@dataclasses.dataclass(kw_only=True)
class ExportModelOptions(ClassifierDataOptions):
    """export_model.py's flags; the task flags name the dev set of the check."""

    saved_model_dir: str = option(help="A SavedModel a bert_tf script wrote (its --export_dir).")
    export_format: str = option(
        help="litert (a .tflite model; classifiers take raw text) or onnx (token ids in)."
    )
    output_file: str = option(help="Where to write the model.")
    int8: bool = option(False, "Quantize: int8 weights (dynamic range), float activations.")
    do_lower_case: bool = option(
        True, "The LiteRT tokenizer lower-cases (as the SavedModel's, which does not record it)."
    )
    overwrite: bool = option(False, "Replace an existing --output_file.")
    task_name: str | None = option(
        None,
        f"Check the dev accuracy on this task (one of: {', '.join(registry.task_names())}) "
        "with --data_dir.",
    )
    data_dir: str | None = option(None, "Folder with the task's dev file.")
    max_accuracy_drop: float = option(
        1.0,
        "Points of dev accuracy the converted model may lose against the SavedModel; "
        "past it the model is not written.",
    )


@dataclasses.dataclass(frozen=True, kw_only=True)
class ExtendOptions:
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
    seed: int = option(12345, "Seed of the truncated normal rows.")
    type_vocab_size: int | None = option(
        None, "Grow the token type embeddings to this many types (new rows copy type 0's)."
    )
    do_lower_case: bool | None = option(
        None,
        "Casing of the model's tokenizer, for --init=mean and the check that a new "
        "word stays one token (default: what the folder's name or tokenizer config "
        "says, else true).",
    )
    overwrite: bool = option(False, "Replace an existing --output_dir.")
