"""run_classifier.py's options (`tasks.classifier`). Free of TensorFlow: the
script parses its flags before importing the task."""

import dataclasses

from bert_tf.data.classification.options import ClassifierDataOptions
from bert_tf.options import group, option
from bert_tf.tasks.options import DistillationOptions, FineTuningOptions


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
