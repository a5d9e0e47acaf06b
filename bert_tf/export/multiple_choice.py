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
    (through a temporary directory renamed at the end); returns `export_dir`.
    `vocab_file`, `do_lower_case` and `max_seq_length` default to the
    model's preprocessor's. With `jit_compile` the model runs compiled with
    XLA (`export.common`)."""
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
