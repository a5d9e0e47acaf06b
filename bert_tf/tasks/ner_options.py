"""run_ner.py's options (`tasks.ner`). Free of TensorFlow: the script parses
its flags before importing the task."""

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
