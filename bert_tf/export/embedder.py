"""SavedModel export of a sentence embedder, for TF Serving.

Signatures: `serving_default`, raw text in (`text`, tf.string `[batch]`),
tokenized and packed in the graph as the original (truncated to
`max_seq_length`), and `serving_ids` (`input_word_ids`, `input_mask`,
`input_type_ids` int32 `[batch, max_seq_length]`); both return
`embeddings` float32 `[batch, width]`. Loads with only tensorflow and
tensorflow_text.
"""

import tensorflow as tf

from bert_tf.export.common import (
    check_export_dir,
    model_call,
    model_text_settings,
    request_length_multiple,
    write_archive,
)
from bert_tf.text.packing import pack_example_windows


def export_embedder(
    model,
    export_dir,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    overwrite=False,
    jit_compile=False,
):
    """Writes `model` (a BertSentenceEmbedder) as a SavedModel at `export_dir`.

    `vocab_file`, `do_lower_case` and `max_seq_length` default to the
    model's preprocessor's. Written to a temporary directory and renamed.
    """
    check_export_dir(export_dir, overwrite)
    tokenizer, max_seq_length = model_text_settings(
        model, vocab_file, do_lower_case, max_seq_length
    )
    infer = model_call(model, jit_compile)

    def embed_ids(input_word_ids, input_mask, input_type_ids):
        inputs = {
            "input_word_ids": input_word_ids,
            "input_mask": input_mask,
            "input_type_ids": input_type_ids,
        }
        return {"embeddings": infer(inputs)}

    def embed_text(text):
        inputs, _, _ = pack_example_windows(
            [tokenizer(text)],
            max_seq_length,
            tokenizer.cls_id,
            tokenizer.sep_id,
            pad_to_longest=True,
            length_multiple=request_length_multiple(jit_compile),
        )
        return {"embeddings": infer(inputs)}

    ids_spec = tf.TensorSpec([None, max_seq_length], tf.int32)
    return write_archive(
        export_dir,
        model,
        tokenizer,
        {
            "serving_default": tf.function(
                embed_text, input_signature=[tf.TensorSpec([None], tf.string)]
            ),
            "serving_ids": tf.function(embed_ids, input_signature=[ids_spec] * 3),
        },
    )
