"""What every SavedModel export shares: the export directory check, the
in-graph tokenizer, the model call (plain or compiled with XLA), outputs of
classification logits, and writing the archive atomically."""

import contextlib
import os

import keras
import tensorflow as tf
from absl import logging

from bert_tf.errors import InputError
from bert_tf.files import atomic_output, check_writable, exists
from bert_tf.options import XLA_PAD_MULTIPLE
from bert_tf.text.graph_tokenizer import BertTokenizer


def check_export_dir(export_dir, overwrite):
    """Refuses an existing export dir unless `overwrite`, and one that cannot
    be written (checked before training)."""
    if exists(export_dir) and not overwrite:
        raise InputError(
            f"--export_dir {export_dir!r} already exists; pass --overwrite to replace it"
        )
    # Written beside itself first (`atomic_output`): its parent must be writable.
    check_writable(os.path.dirname(export_dir.rstrip("/")) or ".", export_dir, "--export_dir")


def classification_outputs(logits, is_regression=False):
    """Logits `[batch, n]` -> `probabilities` `[batch, n]` and `label_ids` int32
    `[batch]` (regression: `predictions` `[batch]` from column 0)."""
    if is_regression:
        predictions = logits[:, 0]
        return {"predictions": predictions, "label_ids": tf.zeros_like(predictions, tf.int32)}
    return {
        "probabilities": tf.nn.softmax(logits, axis=-1),
        "label_ids": tf.argmax(logits, axis=-1, output_type=tf.int32),
    }


def multi_label_outputs(logits, thresholds):
    """Logits `[batch, n]` -> `probabilities` (sigmoid) `[batch, n]` and
    `label_flags` bool `[batch, n]`: probabilities at or over `thresholds` `[n]`."""
    probabilities = tf.sigmoid(logits)
    thresholds = tf.constant(thresholds, tf.float32)
    return {"probabilities": probabilities, "label_flags": probabilities >= thresholds}


def serving_tokenizer(vocab_file, do_lower_case):
    """The in-graph `BertTokenizer`, built so that its vocabulary table can be
    tracked by the archive."""
    tokenizer = BertTokenizer(vocab_file, do_lower_case=do_lower_case, name="tokenizer")
    tokenizer(tf.constant([""]))
    return tokenizer


def model_text_settings(model, vocab_file, do_lower_case, max_seq_length):
    """`(tokenizer, max_seq_length)` for an export: from the arguments, or
    where they are None, from `model.preprocessor` (a Keras user's model from
    `from_pretrained` or a `.keras` file). `do_lower_case` defaults to True
    with a `vocab_file`, as the scripts' flag. A `max_seq_length` past the
    model's positions is refused."""
    preprocessor = getattr(model, "preprocessor", None)
    if vocab_file is None and preprocessor is not None:
        tokenizer = preprocessor.tokenizer
        if do_lower_case is not None and do_lower_case != tokenizer.do_lower_case:
            raise InputError(
                f"do_lower_case={do_lower_case} contradicts the model's preprocessor "
                f"(do_lower_case={tokenizer.do_lower_case})"
            )
        max_seq_length = max_seq_length or preprocessor.max_seq_length
    elif vocab_file is None or max_seq_length is None:
        raise InputError(
            f"{model.name} has no preprocessor: pass vocab_file, do_lower_case and max_seq_length"
        )
    else:
        lower_case = True if do_lower_case is None else bool(do_lower_case)
        tokenizer = serving_tokenizer(vocab_file, lower_case)
    positions = model.config.max_position_embeddings
    if max_seq_length > positions:
        raise InputError(
            f"max_seq_length={max_seq_length} exceeds the {positions} positions of "
            f"{model.name} (max_position_embeddings)"
        )
    return tokenizer, max_seq_length


def model_call(model, jit_compile=False):
    """`inputs -> model(inputs, training=False)`.

    With `jit_compile`, a tf.function that XLA compiles for each input shape
    it meets; the SavedModel keeps that. TF Serving then needs XLA for the
    device it serves on (on CPU: `--xla_cpu_compilation_enabled`).
    """

    def call(inputs):
        return model(inputs, training=False)

    return tf.function(call, jit_compile=True) if jit_compile else call


def request_length_multiple(jit_compile):
    """What text requests' lengths are rounded up to (`pack_example_windows`)."""
    return XLA_PAD_MULTIPLE if jit_compile else 1


def write_archive(export_dir, model, tokenizer, endpoints):
    """Writes a SavedModel of `model` and `tokenizer` with `endpoints`
    ({signature name: tf.function}) to a temporary directory renamed to
    `export_dir` at the end, so that it is never left half-written; returns
    `export_dir`. The loaded SavedModel has the model's `variables`,
    `trainable_variables` and `non_trainable_variables`."""
    archive = keras.export.ExportArchive()
    # `track(model)` would list the Keras variables, which the checkpoint
    # stores apart from the `tf.Variable`s under them that the endpoints use:
    # every weight twice on disk and in memory wherever the SavedModel is
    # loaded (Keras 3.15, keras-team/keras#23553). The `tf.Variable`s
    # themselves (a Keras variable's `value` on TensorFlow) are stored once.
    # The weights only: `model.variables` also holds dropout's seed states.
    collections = {
        "variables": model.weights,
        "trainable_variables": model.trainable_weights,
        "non_trainable_variables": model.non_trainable_weights,
    }
    for name, weights in collections.items():
        archive.add_variable_collection(name, [weight.value for weight in weights])
    archive.track(tokenizer)
    # Each step takes seconds (6-8 s for a tiny tagger on 2 cores) without a word.
    logging.info("tracing the SavedModel's signatures: %s", ", ".join(endpoints))
    for name, function in endpoints.items():
        archive.add_endpoint(name, function)
    logging.info("writing the SavedModel (TensorFlow traces the model's functions again)")
    with atomic_output(export_dir) as tmp, tensorflow_info_hidden():
        archive.write_out(tmp, verbose=False)
    return export_dir


@contextlib.contextmanager
def tensorflow_info_hidden():
    """Hides the INFO lines TensorFlow's SavedModel writer logs through absl
    (renamed input names, sharding callback durations, the fingerprint file):
    they say nothing about the user's model."""
    verbosity = logging.get_verbosity()
    logging.set_verbosity(min(verbosity, logging.WARNING))
    try:
        yield
    finally:
        logging.set_verbosity(verbosity)
