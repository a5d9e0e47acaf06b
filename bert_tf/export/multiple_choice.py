"""SavedModel export of a fine-tuned `BertMultipleChoice`, for TF Serving.

Signatures:
  - `serving_default`: `context` and `ending0` .. `ending{n-1}`, tf.string
    `[batch]` (for SWAG: `sent1` as the context and `sent2 + " " + ending_i`
    as each ending), tokenized and each (context, ending) pair packed in the
    graph exactly as `FullTokenizer` + `packing.pack_inputs` (the original
    truncation); returns `probabilities` float32 `[batch, n]` and
    `label_ids` int32 `[batch]` (the most probable ending);
  - `serving_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32
    `[batch, n, max_seq_length]` in, the same outputs.
It loads with `tf.saved_model.load` in a process that imports only
tensorflow and tensorflow_text; the vocab file travels as an asset.
"""

import tensorflow as tf

from bert_tf.export.common import (
    check_export_dir,
    classification_outputs,
    model_call,
    model_text_settings,
    request_length_multiple,
    write_archive,
)
from bert_tf.text.preprocessor import pack_choices


def export_multiple_choice(
    model,
    export_dir,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    overwrite=False,
    jit_compile=False,
):
    """Writes `model` (a BertMultipleChoice) as a SavedModel at `export_dir`
    (through a temporary directory renamed at the end). The signatures are
    the module docstring's.

    Args:
        model: The `BertMultipleChoice`.
        export_dir: Where to write the SavedModel.
        vocab_file: The vocab; by default the model's preprocessor's.
        do_lower_case: The casing; by default the preprocessor's (with a
            `vocab_file`: True).
        max_seq_length: The longest packed (context, ending) pair; by default
            the preprocessor's.
        overwrite: Whether to replace an existing `export_dir`.
        jit_compile: Whether the model runs compiled with XLA (`export.common`).

    Returns:
        `export_dir`.

    Raises:
        InputError: `export_dir` exists and `overwrite` is False, or its
            folder cannot be written; the model has no preprocessor and no
            `vocab_file` and `max_seq_length` are given; `do_lower_case`
            contradicts the preprocessor's; or `max_seq_length` exceeds the
            model's `max_position_embeddings`.

    Examples:
        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> import bert_tf
        >>> from bert_tf.export import export_multiple_choice
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertMultipleChoice(config, num_choices=2, preprocessor=preprocessor)
        >>> export_dir = export_multiple_choice(
        ...     model, os.path.join(tempfile.mkdtemp(), "export")
        ... )
        >>> choose = tf.saved_model.load(export_dir).signatures["serving_default"]
        >>> outputs = choose(
        ...     context=tf.constant(["the movie was"]),
        ...     ending0=tf.constant(["good"]),
        ...     ending1=tf.constant(["bad"]),
        ... )
        >>> sorted(outputs), tuple(outputs["probabilities"].shape)
        (['label_ids', 'probabilities'], (1, 2))
    """
    check_export_dir(export_dir, overwrite)
    num_choices = model.num_choices
    tokenizer, max_seq_length = model_text_settings(
        model, vocab_file, do_lower_case, max_seq_length
    )
    ids_spec = tf.TensorSpec([None, num_choices, max_seq_length], tf.int32)
    infer = model_call(model, jit_compile)

    def choose_ids(input_word_ids, input_mask, input_type_ids):
        return classification_outputs(
            infer(
                {
                    "input_word_ids": input_word_ids,
                    "input_mask": input_mask,
                    "input_type_ids": input_type_ids,
                }
            )
        )

    def choose_text(context, *endings):
        inputs = pack_choices(
            tokenizer, context, list(endings), max_seq_length, request_length_multiple(jit_compile)
        )
        return classification_outputs(infer(inputs))

    # Varargs take their signature input names from the specs: ending0, ending1, ...
    text_fn = tf.function(
        choose_text,
        input_signature=[
            tf.TensorSpec([None], tf.string, name="context"),
            *(tf.TensorSpec([None], tf.string, name=f"ending{i}") for i in range(num_choices)),
        ],
    )
    return write_archive(
        export_dir,
        model,
        tokenizer,
        {
            "serving_default": text_fn,
            "serving_ids": tf.function(choose_ids, input_signature=[ids_spec] * 3),
        },
    )
