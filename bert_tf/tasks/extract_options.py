"""extract_features.py's options (`tasks.extract`). Free of TensorFlow: the
script parses its flags before importing the task."""

import dataclasses

from bert_tf.options import REQUIRED, ModelOptions, Options, group, option
from bert_tf.training.options import RuntimeOptions


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
