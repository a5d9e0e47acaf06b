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

    Written to a temporary directory and renamed. The signatures are the
    module docstring's.

    Args:
        model: The `BertSentenceEmbedder`.
        export_dir: Where to write the SavedModel.
        vocab_file: The vocab; by default the model's preprocessor's.
        do_lower_case: The casing; by default the preprocessor's (with a
            `vocab_file`: True).
        max_seq_length: The longest packed text; by default the preprocessor's.
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
        >>> from bert_tf.export import export_embedder
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertSentenceEmbedder(config, preprocessor=preprocessor)
        >>> export_dir = export_embedder(model, os.path.join(tempfile.mkdtemp(), "export"))
        >>> embed = tf.saved_model.load(export_dir).signatures["serving_default"]
        >>> tuple(embed(text=tf.constant(["the movie was good", "bad"]))["embeddings"].shape)
        (2, 128)
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
