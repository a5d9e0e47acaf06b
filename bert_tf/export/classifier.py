"""SavedModel export of a fine-tuned classifier, for TF Serving.

The SavedModel has two signatures:
  - `serving_default`: raw text in (`text_a`, and `text_b` for sentence-pair
    tasks; tf.string `[batch]`), tokenized and packed in the graph exactly as
    `FullTokenizer` + the original packing; returns `probabilities` float32
    `[batch, num_labels]`, `label_ids` int32 `[batch]` and `labels`
    tf.string `[batch]` (the label names; for regression `predictions`
    float32 `[batch]` and `label_ids`, all 0);
  - `serving_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32
    `[batch, max_seq_length]` in, the same outputs.
It loads with `tf.saved_model.load` in a process that imports only
tensorflow and tensorflow_text (whose ops the tokenizer uses). The vocab file
travels with it as an asset.
"""

import tensorflow as tf

from bert_tf.export.common import (
    check_export_dir,
    classification_outputs,
    model_call,
    model_text_settings,
    multi_label_outputs,
    request_length_multiple,
    write_archive,
)
from bert_tf.text.packing import average_windows, pack_example_windows


def export_classifier(
    model,
    export_dir,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    sentence_pairs=False,
    is_regression=None,
    long_text_stride=None,
    overwrite=False,
    jit_compile=False,
    label_names=None,
    thresholds=None,
):
    """Writes `model` (a BertClassifier) as a SavedModel at `export_dir`.

    Written to a temporary directory and renamed, so `export_dir` is never
    left half-written. The signatures are the module docstring's.

    Args:
        model: The `BertClassifier`.
        export_dir: Where to write the SavedModel.
        vocab_file: The vocab; by default the model's preprocessor's
            (`from_pretrained`, `.keras` files).
        do_lower_case: The casing; by default the preprocessor's (with a
            `vocab_file`: True).
        max_seq_length: The longest packed example; by default the
            preprocessor's.
        sentence_pairs: Whether `serving_default` takes `text_b`.
        is_regression: By default `num_labels == 1`.
        long_text_stride: Texts longer than `max_seq_length` are split into
            overlapping windows this many tokens apart, whose logits are
            averaged, as in eval/predict; None truncates them.
        overwrite: Whether to replace an existing `export_dir`.
        jit_compile: Whether the model runs compiled with XLA (`export.common`).
        label_names: One per label, in output order, the `labels` output;
            by default the model's `label_names`, else the ids as strings.
        thresholds: One per label, for a multi-label export: sigmoid
            `probabilities`, bool `label_flags` and as `labels` the names of
            the flagged labels joined by `|`, instead of softmax, `label_ids`
            and one name.

    Returns:
        `export_dir`.

    Raises:
        InputError: `export_dir` exists and `overwrite` is False, or its
            folder cannot be written; the model has no preprocessor and no
            `vocab_file` and `max_seq_length` are given; `do_lower_case`
            contradicts the preprocessor's; or `max_seq_length` exceeds the
            model's `max_position_embeddings`.
        ValueError: `label_names` is not one name per label.

    Examples:
        >>> import os, tempfile
        >>> import tensorflow as tf
        >>> import bert_tf
        >>> from bert_tf.export import export_classifier
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertClassifier(config, label_names=["neg", "pos"], preprocessor=preprocessor)
        >>> export_dir = export_classifier(model, os.path.join(tempfile.mkdtemp(), "export"))
        >>> classify = tf.saved_model.load(export_dir).signatures["serving_default"]
        >>> outputs = classify(text_a=tf.constant(["the movie was good", "bad"]))
        >>> sorted(outputs), tuple(outputs["probabilities"].shape)
        (['label_ids', 'labels', 'probabilities'], (2, 2))
        >>> set(outputs["labels"].numpy().tolist()) <= {b"neg", b"pos"}
        True
    """
    check_export_dir(export_dir, overwrite)
    tokenizer, max_seq_length = model_text_settings(
        model, vocab_file, do_lower_case, max_seq_length
    )
    if is_regression is None:
        is_regression = model.num_labels == 1
    outputs = _outputs_of_logits(model, is_regression, label_names, thresholds)
    infer = model_call(model, jit_compile)

    def pack(segments):
        return pack_example_windows(
            segments,
            max_seq_length,
            tokenizer.cls_id,
            tokenizer.sep_id,
            long_text_stride,
            pad_to_longest=True,
            length_multiple=request_length_multiple(jit_compile),
        )

    return write_archive(
        export_dir,
        model,
        tokenizer,
        {
            "serving_default": _text_endpoint(infer, outputs, tokenizer, pack, sentence_pairs),
            "serving_ids": _ids_endpoint(infer, outputs, max_seq_length),
        },
    )


def _outputs_of_logits(model, is_regression, label_names, thresholds):
    """`logits -> outputs` of the signatures (see `export_classifier`)."""
    if label_names is None:
        label_names = getattr(model, "label_names", None) or [
            str(i) for i in range(model.num_labels)
        ]
    elif not is_regression and len(label_names) != model.num_labels:
        raise ValueError(f"{len(label_names)} label names for a model of {model.num_labels} labels")
    names = tf.constant([str(name) for name in label_names])

    def outputs(logits):
        if thresholds is not None:
            result = multi_label_outputs(logits, thresholds)
            flagged = tf.ragged.boolean_mask(
                tf.broadcast_to(names, tf.shape(logits)), result["label_flags"]
            )
            result["labels"] = tf.strings.reduce_join(flagged, axis=-1, separator="|")
            return result
        result = classification_outputs(logits, is_regression)
        if not is_regression:
            result["labels"] = tf.gather(names, result["label_ids"])
        return result

    return outputs


def _ids_endpoint(infer, outputs, max_seq_length):
    """`serving_ids`: the three id tensors `[batch, max_seq_length]` in."""
    ids_spec = tf.TensorSpec([None, max_seq_length], tf.int32)

    def classify_ids(input_word_ids, input_mask, input_type_ids):
        logits = infer(
            {
                "input_word_ids": input_word_ids,
                "input_mask": input_mask,
                "input_type_ids": input_type_ids,
            }
        )
        return outputs(logits)

    return tf.function(classify_ids, input_signature=[ids_spec] * 3)


def _text_endpoint(infer, outputs, tokenizer, pack, sentence_pairs):
    """`serving_default`: `text_a` (and `text_b` with `sentence_pairs`) in,
    tokenized and packed (`pack`: `pack_example_windows`) in the graph, the
    logits of an example's windows averaged."""

    def classify_text(text_a, text_b=None):
        segments = [tokenizer(text_a)] + ([tokenizer(text_b)] if text_b is not None else [])
        inputs, example_ids, _ = pack(segments)
        logits = infer(inputs)
        logits = average_windows(logits, example_ids, tf.shape(text_a)[0])
        return outputs(logits)

    text_spec = tf.TensorSpec([None], tf.string)
    if sentence_pairs:
        return tf.function(
            lambda text_a, text_b: classify_text(text_a, text_b),
            input_signature=[text_spec, text_spec],
        )
    return tf.function(lambda text_a: classify_text(text_a), input_signature=[text_spec])
