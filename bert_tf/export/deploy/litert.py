"""LiteRT (TFLite) models from the scripts' SavedModels.

`export_litert` converts a SavedModel's `serving_ids` signature (every
task's) and, for classifiers, a `serving_default` signature that takes raw
text: tokenized in the model by tensorflow-text's `FastBertTokenizer`, whose
TFLite kernels tensorflow-text ships, then packed as the original
`_truncate_seq_pair` packs, padded to max_seq_length. With `quantize`, the
weights of the dense layers are int8 (dynamic-range quantization: activations
stay float and are quantized on the fly per call).

`FastBertTokenizer` gives `FullTokenizer`'s ids on text (tested on the demo
sets and a real vocab) but differs on rare characters: it splits words at
control characters, which the original deletes, and when lower-casing it
also applies Unicode compatibility mappings (ß -> ss, full-width ， -> ,;
`lower_casing_differences` lists a vocab's tokens that this changes).

A reader needs the tokenizer ops' resolver:

    from ai_edge_litert.interpreter import InterpreterWithCustomOps
    from tensorflow_text.core.pybinds import tflite_registrar
    interpreter = InterpreterWithCustomOps(
        model_path="model.tflite",
        custom_op_registerers=tflite_registrar.SELECT_TFTEXT_OPS)
    classify = interpreter.get_signature_runner("serving_default")
    classify(text_a=np.array([b"a text"]))
"""

import os
import tempfile

import tensorflow as tf
import tensorflow_text as tf_text
from absl import logging

from bert_tf.errors import InputError
from bert_tf.export.common import tensorflow_info_hidden
from bert_tf.files import atomic_output
from bert_tf.text import tokenization

IDS_SIGNATURE = "serving_ids"
TEXT_SIGNATURE = "serving_default"
INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
INSTALL_HINT = "pip install 'bert_tf[deploy]'"


def check_saved_model_dir(saved_model_dir):
    """InputError unless `saved_model_dir` holds a SavedModel."""
    if not tf.saved_model.contains_saved_model(saved_model_dir):
        raise InputError(f"--saved_model_dir {saved_model_dir!r} holds no SavedModel")


def load_saved_model(saved_model_dir):
    """The SavedModel at `saved_model_dir` (tensorflow_text's ops registered);
    InputError when it is not one of the scripts' exports."""
    check_saved_model_dir(saved_model_dir)
    loaded = tf.saved_model.load(saved_model_dir)
    if IDS_SIGNATURE not in loaded.signatures:
        raise InputError(
            f"--saved_model_dir {saved_model_dir!r} has no {IDS_SIGNATURE!r} signature "
            "(token ids in), which is what converts: run_classifier, run_squad, "
            "run_multiple_choice and extract_features export one, run_ner does not"
        )
    return loaded


def max_seq_length_of(ids_signature):
    """The sequence length the `serving_ids` signature takes."""
    _, inputs = ids_signature.structured_input_signature
    return int(inputs["input_word_ids"].shape[-1])


def text_inputs_of(loaded):
    """The raw-text inputs of a classifier SavedModel's `serving_default`
    (`("text_a",)` or `("text_a", "text_b")`), else None (other tasks)."""
    signature = loaded.signatures.get(TEXT_SIGNATURE)
    if signature is None or "probabilities" not in signature.structured_outputs:
        return None
    _, inputs = signature.structured_input_signature
    names = tuple(sorted(inputs))
    return names if names in (("text_a",), ("text_a", "text_b")) else None


def vocab_file_of(saved_model_dir):
    """The vocab file the SavedModel carries as its asset."""
    assets = os.path.join(saved_model_dir, "assets")
    names = sorted(os.listdir(assets)) if os.path.isdir(assets) else []
    if len(names) != 1:
        raise InputError(
            f"--saved_model_dir {saved_model_dir!r}: expected one vocab file in assets/, "
            f"found {names or 'none'}"
        )
    return os.path.join(assets, names[0])


def read_vocab(vocab_file):
    """The tokens of `vocab_file`, in id order."""
    return [token for _, token in tokenization.iter_utf8_lines(vocab_file)]


def fast_tokenizer(vocab, do_lower_case):
    """tensorflow-text's `FastBertTokenizer` for `vocab` (tokens in id order; int32 ids)."""
    return tf_text.FastBertTokenizer(
        vocab=vocab,
        suffix_indicator="##",
        max_bytes_per_word=4 * tokenization.MAX_INPUT_CHARS_PER_WORD,
        token_out_type=tf.int32,
        unknown_token=tokenization.UNK_TOKEN,
        lower_case_nfd_strip_accents=do_lower_case,
        support_detokenization=False,
    )


def lower_casing_differences(vocab):
    """The tokens of `vocab` that `FastBertTokenizer` lower-cases otherwise than
    the original (`BasicTokenizer`: str.lower, NFD, marks removed): its
    lower-casing also applies Unicode compatibility mappings (ß -> ss,
    ² -> 2, full-width ， -> ,). Text with these characters gets other ids."""
    normalizer = tf_text.FastBertNormalizer(lower_case_nfd_strip_accents=True)
    normalized = normalizer.normalize(tf.constant(vocab)).numpy()
    return [
        token
        for token, fast in zip(vocab, normalized)
        if fast.decode("utf-8") != tokenization.lower_case(token)
    ]


def pack_dense(ids_a, ids_b, max_seq_length, cls_id, sep_id):
    """`[CLS] a [SEP] (b [SEP])` padded to `max_seq_length`, with TFLite's
    built-in ops only (no ragged ops).

    Args: ids_a, ids_b: int32 RaggedTensors `[batch, (tokens)]` (ids_b None
      for single texts). Pairs are truncated as the original
      `_truncate_seq_pair` (the longer loses its last token, b on ties),
      which ends with a of min(len_a, max(budget - len_b, ceil(budget / 2))).
      As the original (`if tokens_b:`), a row whose b is empty is a single
      text, and so is one whose b truncation emptied (no second `[SEP]`).
    Returns: dict of int32 `[batch, max_seq_length]` model inputs.
    """
    positions = tf.range(max_seq_length)[None, :]
    length_a = tf.cast(ids_a.row_lengths(), tf.int32)[:, None]
    single_a = tf.minimum(length_a, max_seq_length - 2)
    if ids_b is None:
        kept_a = single_a
    else:
        length_b = tf.cast(ids_b.row_lengths(), tf.int32)[:, None]
        budget = max_seq_length - 3
        truncated_a = tf.minimum(length_a, tf.maximum(budget - length_b, (budget + 1) // 2))
        pair_a = tf.where(length_a + length_b > budget, truncated_a, length_a)
        kept_a = tf.where(length_b > 0, pair_a, single_a)
        kept_b = tf.maximum(tf.minimum(length_b, budget - kept_a), 0)
    word_ids = _place(ids_a, positions - 1, (positions >= 1) & (positions <= kept_a))
    is_sep = positions == kept_a + 1
    length = kept_a + 2
    type_ids = tf.zeros_like(word_ids)
    if ids_b is not None:
        b_start = length
        in_b = (positions >= b_start) & (positions < b_start + kept_b)
        word_ids += _place(ids_b, positions - b_start, in_b)
        is_sep |= (kept_b > 0) & (positions == b_start + kept_b)
        length += tf.where(kept_b > 0, kept_b + 1, 0)
        type_ids = tf.cast((positions >= b_start) & (positions < length), tf.int32)
    word_ids = tf.where(positions == 0, cls_id, tf.where(is_sep, sep_id, word_ids))
    return {
        "input_word_ids": word_ids,
        "input_mask": tf.cast(positions < length, tf.int32),
        "input_type_ids": type_ids,
    }


def _place(ids, index, valid):
    """`ids[b, index[b, p]]` where `valid`, else 0: tokens moved to their
    positions in the packed row (`index`, `valid` `[batch or 1, max_seq_length]`)."""
    max_seq_length = valid.shape[-1]
    dense = ids.to_tensor(0, shape=[None, max_seq_length])
    # TFLite's batched gather needs index's batch dimension spelled out.
    index = tf.broadcast_to(tf.clip_by_value(index, 0, max_seq_length - 1), tf.shape(dense))
    return tf.where(valid, tf.gather(dense, index, batch_dims=1), 0)


def serving_functions(loaded, vocab_file, do_lower_case=True):
    """`{signature name: tf.function}` around a loaded SavedModel:
    `serving_ids` always; `serving_default` (raw text) for classifiers,
    given their `vocab_file`."""
    classify_ids = loaded.signatures[IDS_SIGNATURE]
    max_seq_length = max_seq_length_of(classify_ids)
    _, specs = classify_ids.structured_input_signature
    ids_spec = [tf.TensorSpec(specs[n].shape, specs[n].dtype, name=n) for n in INPUT_NAMES]

    def serve_ids(input_word_ids, input_mask, input_type_ids):
        return classify_ids(
            input_word_ids=input_word_ids, input_mask=input_mask, input_type_ids=input_type_ids
        )

    functions = {IDS_SIGNATURE: tf.function(serve_ids, input_signature=ids_spec)}
    text_inputs = text_inputs_of(loaded)
    if text_inputs is None or vocab_file is None:
        return functions
    vocab = read_vocab(vocab_file)
    tokenizer = fast_tokenizer(vocab, do_lower_case)
    if do_lower_case:
        _warn_of_lower_casing(vocab, vocab_file)
    cls_id, sep_id = vocab.index(tokenization.CLS_TOKEN), vocab.index(tokenization.SEP_TOKEN)

    def serve_text(text_a, text_b=None):
        ids_b = None if text_b is None else tokenizer.tokenize(text_b)
        packed = pack_dense(tokenizer.tokenize(text_a), ids_b, max_seq_length, cls_id, sep_id)
        return serve_ids(**packed)

    text_spec = [tf.TensorSpec([None], tf.string, name=name) for name in text_inputs]
    functions[TEXT_SIGNATURE] = tf.function(serve_text, input_signature=text_spec)
    return functions


def export_litert(saved_model_dir, output_file, quantize=False, do_lower_case=True):
    """Writes the SavedModel at `saved_model_dir` (a script's `--export_dir`)
    as a LiteRT model to `output_file`, atomically; `quantize`: int8 weights
    (dynamic range). `do_lower_case` is the tokenizer's (the SavedModel does
    not record it). Returns the signature names written."""
    loaded = load_saved_model(saved_model_dir)
    vocab_file = vocab_file_of(saved_model_dir) if text_inputs_of(loaded) else None
    functions = serving_functions(loaded, vocab_file, do_lower_case)
    module = tf.Module()
    module.loaded = loaded
    with tempfile.TemporaryDirectory() as wrapped, tensorflow_info_hidden():
        # The converter takes several signatures from a SavedModel only.
        tf.saved_model.save(module, wrapped, signatures=functions)
        converter = tf.lite.TFLiteConverter.from_saved_model(wrapped, list(functions))
        converter.allow_custom_ops = True  # the tokenizer's tensorflow-text ops
        if quantize:
            converter.optimizations = [tf.lite.Optimize.DEFAULT]
        flatbuffer = converter.convert()
    with atomic_output(output_file) as tmp:
        with open(tmp, "wb") as f:
            f.write(flatbuffer)
        _check_ops(tmp, saved_model_dir)
    return sorted(functions)


def litert_interpreter(path, threads=None):
    """An `ai_edge_litert` interpreter of `path` with tensorflow-text's
    tokenizer ops registered."""
    try:
        from ai_edge_litert.interpreter import InterpreterWithCustomOps
    except ImportError:
        raise InputError(f"LiteRT models need ai-edge-litert: {INSTALL_HINT}") from None
    from tensorflow_text.core.pybinds import tflite_registrar

    return InterpreterWithCustomOps(
        model_path=path,
        custom_op_registerers=tflite_registrar.SELECT_TFTEXT_OPS,
        num_threads=threads,
    )


def _check_ops(path, saved_model_dir):
    """InputError unless LiteRT has a kernel for every op of the model at
    `path` (the converter leaves TensorFlow ops it cannot map as custom ops)."""
    try:
        litert_interpreter(path).allocate_tensors()
    except (RuntimeError, ValueError) as error:
        missing = " ".join(str(error).split())
        raise InputError(
            f"--export_format=litert: {saved_model_dir}'s graph has ops that LiteRT lacks "
            f"({missing}); export it with --export_format=onnx"
        ) from None


def _warn_of_lower_casing(vocab, vocab_file):
    differences = lower_casing_differences(vocab)
    if differences:
        logging.warning(
            "the LiteRT tokenizer lower-cases %d of %s's tokens otherwise than the original "
            "(e.g. %s): text with them gets other ids than from the SavedModel; cased models "
            "(--do_lower_case=false) do not change",
            len(differences),
            vocab_file,
            " ".join(differences[:8]),
        )
