"""SavedModel export of a SQuAD span labeler: question + context text in, answer text out.

The SavedModel has two signatures:
  - `serving_default`: `question`, `context` tf.string `[batch]` ->
    `answer` tf.string `[batch]`, `start_char`, `end_char` int32 `[batch]`
    (the answer is `context[start_char:end_char]`, offsets in Unicode code
    points; -1, -1 and "" when there is no answer) and `score` float32
    `[batch]` (start + end logit of the best span, also when the null
    answer wins; 0.0 without any valid span); SQuAD 2.0 models add
    `null_score` float32 `[batch]` (the least start + end logit at [CLS]
    over the question's windows; the answer is "" when it exceeds `score`
    by more than `null_score_diff_threshold`);
  - `serving_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32
    `[batch, max_seq_length]` -> `start_logits`, `end_logits`.
It loads with only tensorflow and tensorflow_text imported; the vocab file
travels with it as an asset.

`serving_default` runs the original run_squad.py prediction in one graph:
the context is split into words as the reader splits it (whitespace, and
around each CJK ideograph: `reader.context_to_words`), each word is
WordPiece-tokenized on its own (`alignment.tokenize_document`), the
question is cut to `max_query_length` tokens, `[CLS] question [SEP] window
[SEP]` windows are taken `doc_stride` tokens apart, and the span is chosen
as `SquadPostprocessor` chooses its best answer (n-best start and end
positions per window, max-context starts, `max_answer_length`, SQuAD 2.0
null threshold). The answer is cut from the context at the character
offsets of its first and last sub-token (`BertTokenizer.tokenize_with_offsets`),
which is predictions.json's text (`get_final_text`) in English and in
Chinese, except:

* where `get_final_text` falls back to the whole words the span touches: a
  span with `[UNK]` in it, or a word whose characters the tokenizer's
  normalisation changes in number (decomposed accents, deleted control
  characters); the graph still cuts at the sub-tokens (whole words only
  for the words so changed);
* where the words of the answer are separated by other whitespace than one
  space: the original joins them with one space, the graph keeps the
  context's own (`context[start_char:end_char] == answer` always holds);
* a question without any valid span gets "" (and score 0.0) instead of the
  original's placeholder "empty";
* invalid UTF-8 in a context counts as U+FFFD characters (the tokenizer
  drops them).

`answer` runs either a Keras `BertSpanLabeler` or such a SavedModel on
Python strings.
"""

import dataclasses
import os

import keras
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.export.common import (
    check_export_dir,
    model_call,
    model_text_settings,
    write_archive,
)
from bert_tf.modeling.span_text import SpanSettings
from bert_tf.text.packing import pack_example_windows
from bert_tf.text.preprocessor import whitespace_words

_MODEL_SETTINGS = frozenset(("vocab_file", "do_lower_case"))


@dataclasses.dataclass(frozen=True)
class _Settings(SpanSettings):
    """Windowing and answer selection (`SpanSettings`, run_squad.py's flags of
    the same names), for windows of `max_seq_length` tokens."""

    max_seq_length: int = 384

    def __post_init__(self):
        super().__post_init__()
        if (
            not isinstance(self.max_seq_length, int)
            or self.max_seq_length <= self.max_query_length + 3
        ):
            raise InputError(
                f"max_seq_length={self.max_seq_length!r} must exceed "
                f"max_query_length + 3 = {self.max_query_length + 3}"
            )


# What answer() takes (the SavedModel answers; it does not score).
_SETTING_NAMES = frozenset(field.name for field in dataclasses.fields(_Settings)) - {"eval_metric"}


def _cut(chars, rows, begins, ends):
    """UTF-8 strings `[n]`: `chars[rows[i]][begins[i]:ends[i]]` (int32 `[n]` each)."""
    offsets = tf.gather(chars.row_starts(), rows)
    spans = tf.ragged.range(offsets + tf.cast(begins, tf.int64), offsets + tf.cast(ends, tf.int64))
    return tf.strings.unicode_encode(tf.gather(chars.flat_values, spans), "UTF-8")


def _gather_or(params, indices, keep, fill):
    """`params[indices]` where `keep`, else `fill` (`indices` need not be valid there)."""
    padded = tf.concat([params, [fill]], axis=0)
    return tf.gather(padded, tf.where(keep, indices, tf.size(params, out_type=indices.dtype)))


def _window_layout(input_mask, example_ids, window_starts, question_lengths, context_starts):
    """Where each packed position lies in the context tokens.

    Args: input_mask int32 `[windows, seq]`; example_ids, window_starts int32
      `[windows]`; question_lengths, context_starts int32 `[batch]` (kept
      question tokens; index of each example's first context token among
      all examples' context tokens).
    Returns:
      (in_context bool `[windows, seq]`, offset int32 `[windows, seq]` the
      position within the window's context part, token int32 `[windows, seq]`
      the context token there, over all examples (valid where in_context),
      length int32 `[windows]` context tokens in the window).
    """
    doc_offset = tf.gather(question_lengths, example_ids) + 2
    length = tf.maximum(tf.reduce_sum(input_mask, axis=1) - doc_offset - 1, 0)
    offset = tf.range(tf.shape(input_mask)[1])[None, :] - doc_offset[:, None]
    in_context = (offset >= 0) & (offset < length[:, None])
    token = (tf.gather(context_starts, example_ids) + window_starts)[:, None] + offset
    return in_context, offset, token, length


def _max_context(in_context, offset, token, length, num_tokens):
    """bool `[windows, seq]`: the window gives that context token its best context.

    The original `is_max_context`: score min(tokens left, tokens right) +
    0.01 * window length, in float64 as Python computes it; the first
    window wins ties. Arguments as `_window_layout` returns them;
    `num_tokens` counts all examples' context tokens.
    """
    score = (
        tf.cast(tf.minimum(offset, length[:, None] - 1 - offset), tf.float64)
        + 0.01 * tf.cast(length, tf.float64)[:, None]
    )
    segment = tf.where(in_context, token, num_tokens)  # other positions: one spare segment
    best = tf.math.unsorted_segment_max(score, segment, num_tokens + 1)
    is_best = in_context & (score == tf.gather(best, segment))
    num_windows = tf.shape(score)[0]
    window = tf.broadcast_to(tf.range(num_windows)[:, None], tf.shape(score))
    first = tf.math.unsorted_segment_min(
        tf.where(is_best, window, num_windows), segment, num_tokens + 1
    )
    return is_best & (window == tf.gather(first, segment))


def _candidate_pairs(start_logits, end_logits, start_ok, end_ok, settings):
    """Each window's allowed pairs of its `n_best_size` best starts and ends.

    As `SquadPostprocessor`: top-k over all positions (the padding too), a
    start where `start_ok`, an end where `end_ok`, end >= start, at most
    `max_answer_length` tokens.

    Args: start_logits, end_logits float32 `[windows, seq]`; start_ok,
      end_ok bool `[windows, seq]`.
    Returns:
      (valid bool, start int32, end int32, start_logit float64, end_logit
      float64), each `[windows, k * k]` in the original's pair order (by
      start rank, then end rank).
    """
    k = min(settings.n_best_size, settings.max_seq_length)
    top_starts = tf.math.top_k(start_logits, k)
    top_ends = tf.math.top_k(end_logits, k)
    shape = tf.stack([tf.shape(start_logits)[0], k, k])

    def by_start(values):
        return tf.reshape(tf.broadcast_to(values[:, :, None], shape), [-1, k * k])

    def by_end(values):
        return tf.reshape(tf.broadcast_to(values[:, None, :], shape), [-1, k * k])

    start, end = by_start(top_starts.indices), by_end(top_ends.indices)
    valid = (
        by_start(tf.gather(start_ok, top_starts.indices, batch_dims=1))
        & by_end(tf.gather(end_ok, top_ends.indices, batch_dims=1))
        & (end >= start)
        & (end - start < settings.max_answer_length)
    )
    # Python adds the float32 logits as float64; so does the graph, to rank alike.
    return (
        valid,
        start,
        end,
        by_start(tf.cast(top_starts.values, tf.float64)),
        by_end(tf.cast(top_ends.values, tf.float64)),
    )


def _best_spans(candidates, example_ids, batch):
    """Each example's best pair over its windows: the highest start + end
    logit, ties to the earlier window, then to the earlier pair.

    Args: candidates: `_candidate_pairs`' tensors `[windows, pairs]`;
      example_ids int32 `[windows]`; batch: int32 scalar.
    Returns:
      (has_span bool `[batch]`, window int32 `[batch]`, start, end int32
      `[batch]` positions in that window, start_logit, end_logit float64
      `[batch]`); without a span, window 0, logits 0 and arbitrary positions.
    """
    valid, start, end, start_logit, end_logit = candidates
    scores = start_logit + end_logit
    num_pairs = tf.shape(scores)[1]
    window_has = tf.reduce_any(valid, axis=1)
    window_best = tf.reduce_max(tf.where(valid, scores, -float("inf")), axis=1)
    window_pair = tf.reduce_min(
        tf.where(valid & (scores == window_best[:, None]), tf.range(num_pairs), num_pairs), axis=1
    )
    has_span = tf.math.unsorted_segment_max(tf.cast(window_has, tf.int32), example_ids, batch) > 0
    best = tf.math.unsorted_segment_max(
        tf.where(window_has, window_best, -float("inf")), example_ids, batch
    )
    num_windows = tf.size(example_ids)
    is_best = window_has & (window_best == tf.gather(best, example_ids))
    window = tf.math.unsorted_segment_min(
        tf.where(is_best, tf.range(num_windows), num_windows), example_ids, batch
    )
    window = tf.where(has_span, window, 0)
    chosen = window * num_pairs + tf.where(has_span, tf.gather(window_pair, window), 0)

    def pick(values):
        return tf.gather(tf.reshape(values, [-1]), chosen)

    return (
        has_span,
        window,
        pick(start),
        pick(end),
        tf.where(has_span, pick(start_logit), 0.0),
        tf.where(has_span, pick(end_logit), 0.0),
    )


def _context_tokens(tokenizer, contexts):
    """Contexts -> words, WordPiece-tokenized one by one as `alignment.tokenize_document`.

    Args: tokenizer: a BertTokenizer; contexts: tf.string `[batch]`.
    Returns:
      (chars, context_ids, token_begins, token_ends): chars as
      `whitespace_words`; context_ids int32 `[batch, (tokens)]`;
      token_begins, token_ends int32 `[all tokens]`, for each of
      `context_ids.flat_values` the code points of its context it spells
      (`BertTokenizer.tokenize_with_offsets`).
    """
    chars, word_starts, word_ends = whitespace_words(contexts, split_cjk=True)
    words = _cut(chars, word_starts.value_rowids(), word_starts.flat_values, word_ends.flat_values)
    pieces, begins, ends = tokenizer.tokenize_with_offsets(words)  # [all words, (tokens)]
    context_ids = tf.RaggedTensor.from_row_splits(pieces, word_starts.row_splits).merge_dims(1, 2)
    word_start = tf.gather(word_starts.flat_values, pieces.value_rowids())
    return chars, context_ids, word_start + begins.flat_values, word_start + ends.flat_values


def _answer_spans(infer, tokenizer, questions, contexts, settings):
    """question, context tf.string `[batch]` -> the `serving_default` outputs;
    `infer` is the model call (`export.common.model_call`)."""
    batch = tf.shape(contexts)[0]
    chars, context_ids, token_begins, token_ends = _context_tokens(tokenizer, contexts)
    question_ids = tokenizer(questions)[:, : settings.max_query_length]
    inputs, example_ids, window_starts = pack_example_windows(
        [question_ids, context_ids],
        settings.max_seq_length,
        tokenizer.cls_id,
        tokenizer.sep_id,
        stride=settings.doc_stride,
        window_over=1,
        max_fixed_length=settings.max_query_length,
    )
    logits = infer(inputs)
    start_logits = tf.cast(logits["start_logits"], tf.float32)
    end_logits = tf.cast(logits["end_logits"], tf.float32)

    in_context, offset, token, length = _window_layout(
        inputs["input_mask"],
        example_ids,
        window_starts,
        tf.cast(question_ids.row_lengths(), tf.int32),
        tf.cast(context_ids.row_starts(), tf.int32),
    )
    max_context = _max_context(in_context, offset, token, length, tf.size(token_begins))
    candidates = _candidate_pairs(
        start_logits, end_logits, in_context & max_context, in_context, settings
    )
    has_answer, window, start, end, start_logit, end_logit = _best_spans(
        candidates, example_ids, batch
    )
    outputs = {"score": tf.cast(start_logit + end_logit, tf.float32)}
    if settings.version_2_with_negative:
        null_score = tf.math.unsorted_segment_min(
            tf.cast(start_logits[:, 0], tf.float64) + tf.cast(end_logits[:, 0], tf.float64),
            example_ids,
            batch,
        )
        # In float64 and in this order, as Python computes null_odds.
        null_wins = null_score - start_logit - end_logit > settings.null_score_diff_threshold
        has_answer &= ~null_wins
        outputs["null_score"] = tf.cast(null_score, tf.float32)

    def char_at(position, token_chars):
        """`token_chars` int32 `[batch]` of the context token at `position` of `window`."""
        context_token = tf.gather(
            tf.reshape(token, [-1]), window * settings.max_seq_length + position
        )
        return _gather_or(token_chars, context_token, has_answer, -1)

    start_char = char_at(start, token_begins)
    end_char = char_at(end, token_ends)
    outputs.update(
        start_char=start_char,
        end_char=end_char,
        answer=_cut(
            chars,
            tf.range(batch, dtype=tf.int64),
            tf.maximum(start_char, 0),
            tf.maximum(end_char, 0),
        ),
    )
    return outputs


def _text_settings(model, vocab_file, do_lower_case, max_seq_length):
    """`export.common.model_text_settings`; without a preprocessor, the
    length defaults to run_squad.py's 384, or the model's positions when fewer."""
    if max_seq_length is None and getattr(model, "preprocessor", None) is None:
        max_seq_length = min(_Settings.max_seq_length, model.config.max_position_embeddings)
    return model_text_settings(model, vocab_file, do_lower_case, max_seq_length)


def _settings(model, max_seq_length, given):
    """`_Settings` for windows of `max_seq_length`: the settings `given` (those
    not None) over the model's own (a `BertSpanLabeler`'s `settings`), a
    `doc_stride` and `max_query_length` set by neither derived from the
    length (`SpanSettings.for_length`)."""
    chosen = {name: value for name, value in given.items() if value is not None}
    own = dataclasses.replace(getattr(model, "settings", SpanSettings()), **chosen)
    resolved = dataclasses.asdict(own.for_length(max_seq_length))
    return _Settings(max_seq_length=max_seq_length, **resolved)


def _answer_function(infer, tokenizer, settings):
    """The `serving_default` tf.function of `infer` (a BertSpanLabeler's call)."""
    text_spec = tf.TensorSpec([None], tf.string)

    @tf.function(input_signature=[text_spec, text_spec])
    def answer_text(question, context):
        return _answer_spans(infer, tokenizer, question, context, settings)

    return answer_text


def export_span_labeler(
    model,
    export_dir,
    vocab_file=None,
    do_lower_case=None,
    max_seq_length=None,
    doc_stride=None,
    max_query_length=None,
    max_answer_length=None,
    n_best_size=None,
    version_2_with_negative=None,
    null_score_diff_threshold=None,
    overwrite=False,
    jit_compile=False,
):
    """Writes `model` (a BertSpanLabeler) as a SavedModel at `export_dir`.

    See the module docstring for the signatures. The settings from
    `doc_stride` to `null_score_diff_threshold` are run_squad.py's flags of
    the same names, by default the model's own (`model.settings`: a
    `doc_stride` and `max_query_length` it was not given are a third and a
    sixth of `max_seq_length`). Written to a temporary directory and
    renamed, so `export_dir` is never left half-written.

    Args:
        model: The `BertSpanLabeler`.
        export_dir: Where to write the SavedModel.
        vocab_file: The vocab; by default the model's preprocessor's
            (`from_pretrained`, `.keras` files).
        do_lower_case: The casing; by default the preprocessor's (with a
            `vocab_file`: True).
        max_seq_length: The window length; by default the preprocessor's
            (without one, 384 or the model's positions when fewer).
        doc_stride: Tokens between the starts of a context's windows.
        max_query_length: The question's tokens kept.
        max_answer_length: The longest answer, in tokens.
        n_best_size: The start and end positions considered in each window.
        version_2_with_negative: Whether a question may have no answer
            (SQuAD 2.0: the `null_score` output).
        null_score_diff_threshold: By how much `null_score` must exceed
            `score` for the answer to be "".
        overwrite: Whether to replace an existing `export_dir`.
        jit_compile: Whether the model runs compiled with XLA (`export.common`).

    Returns:
        `export_dir`.

    Raises:
        InputError: `export_dir` exists and `overwrite` is False, or its
            folder cannot be written; the model has no preprocessor and no
            `vocab_file` is given; `do_lower_case` contradicts the
            preprocessor's; `max_seq_length` exceeds the model's
            `max_position_embeddings` or does not exceed `max_query_length`
            + 3; or a setting is invalid.

    Examples:
        >>> import os, tempfile
        >>> import bert_tf
        >>> from bert_tf.export.squad import answer, export_span_labeler
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "movie", "was", "good", "bad", "?"]
        >>> tokenizer = bert_tf.BertTokenizer(vocabulary=vocab)
        >>> preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=32)
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
        >>> export_dir = export_span_labeler(model, os.path.join(tempfile.mkdtemp(), "export"))
        >>> [result] = answer(export_dir, ["was the movie good?"], ["the movie was bad"])
        >>> sorted(result)
        ['answer', 'end_char', 'score', 'start_char']
        >>> result["answer"] == "the movie was bad"[result["start_char"] : result["end_char"]]
        True
    """
    check_export_dir(export_dir, overwrite)
    tokenizer, max_seq_length = _text_settings(model, vocab_file, do_lower_case, max_seq_length)
    settings = _settings(
        model,
        max_seq_length,
        dict(
            doc_stride=doc_stride,
            max_query_length=max_query_length,
            max_answer_length=max_answer_length,
            n_best_size=n_best_size,
            version_2_with_negative=version_2_with_negative,
            null_score_diff_threshold=null_score_diff_threshold,
        ),
    )
    ids_spec = tf.TensorSpec([None, max_seq_length], tf.int32)
    infer = model_call(model, jit_compile)

    @tf.function(input_signature=[ids_spec] * 3)
    def span_logits(input_word_ids, input_mask, input_type_ids):
        return infer(
            {
                "input_word_ids": input_word_ids,
                "input_mask": input_mask,
                "input_type_ids": input_type_ids,
            }
        )

    return write_archive(
        export_dir,
        model,
        tokenizer,
        {
            "serving_default": _answer_function(infer, tokenizer, settings),
            "serving_ids": span_logits,
        },
    )


def answer(model_or_export, questions, contexts, **settings):
    """Answers `questions` (list of str) on `contexts` (list of str, one per question).

    The answers are `serving_default`'s (module docstring).

    Args:
        model_or_export: A Keras `BertSpanLabeler`; or the path of a
            SavedModel written by `export_span_labeler`, or that SavedModel
            loaded.
        questions: The questions, a list of str.
        contexts: The contexts, a list of str, one per question.
        **settings: With a Keras model: `vocab_file` and `do_lower_case`
            (unless the model has a preprocessor), and optionally
            `max_seq_length` and `export_span_labeler`'s settings (by default
            the model's own, as there). None with a SavedModel: they are
            fixed in it.

    Returns:
        One dict per question: `answer` (str), `start_char`, `end_char`
            (int; the answer is `context[start_char:end_char]`), `score`
            (float) and, for SQuAD 2.0, `null_score` (float).

    Raises:
        InputError: `questions` and `contexts` differ in length; a setting is
            unknown, or a Keras model without a preprocessor lacks
            `vocab_file` or `do_lower_case`; or settings are given with a
            SavedModel.

    Examples:
        >>> import bert_tf
        >>> from bert_tf.export.squad import answer
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "movie", "was", "good", "bad", "?"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> model = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
        >>> results = answer(model, ["was the movie good?", "was it bad?"], ["the movie was bad"] * 2)
        >>> [sorted(result) for result in results]
        [['answer', 'end_char', 'score', 'start_char'], ['answer', 'end_char', 'score', 'start_char']]
        >>> all(result["answer"] in "the movie was bad" for result in results)
        True
    """
    questions, contexts = list(questions), list(contexts)
    if len(questions) != len(contexts):
        raise InputError(f"{len(questions)} questions but {len(contexts)} contexts")
    if isinstance(model_or_export, keras.Model):
        unknown = set(settings) - _SETTING_NAMES - _MODEL_SETTINGS
        has_preprocessor = getattr(model_or_export, "preprocessor", None) is not None
        missing = set() if has_preprocessor else _MODEL_SETTINGS - set(settings)
        if unknown or missing:
            raise InputError(
                f"answer() with a Keras model without a preprocessor needs vocab_file and "
                f"do_lower_case; unknown settings: {sorted(unknown)}, missing: {sorted(missing)}"
            )
        tokenizer, max_seq_length = _text_settings(
            model_or_export,
            settings.pop("vocab_file", None),
            settings.pop("do_lower_case", None),
            settings.pop("max_seq_length", None),
        )
        settings = _settings(model_or_export, max_seq_length, settings)
        serve = _answer_function(model_call(model_or_export), tokenizer, settings)
    else:
        if settings:
            raise InputError(f"settings {sorted(settings)} cannot change an exported model")
        export = model_or_export
        if isinstance(export, (str, os.PathLike)):
            export = tf.saved_model.load(os.fspath(export))
        serve = export.signatures["serving_default"]
    outputs = serve(
        question=tf.constant(questions, tf.string), context=tf.constant(contexts, tf.string)
    )
    outputs = {name: value.numpy().tolist() for name, value in outputs.items()}
    results = []
    for i in range(len(questions)):
        result = {name: values[i] for name, values in outputs.items()}
        result["answer"] = result["answer"].decode("utf-8")
        results.append(result)
    return results
