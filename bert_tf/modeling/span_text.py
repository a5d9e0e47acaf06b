"""Raw SQuAD-style text for `BertSpanLabeler`, made as run_squad.py makes it.

x is `(questions, contexts)`: two lists of str, one context per question.
y holds the answers, as character offsets into the contexts: a dict
`{"text": texts, "answer_start": starts}` (SQuAD's field names) or a pair
`(texts, starts)`; each question's entry is one str / int, or lists of
them (several gold answers: training takes the first, scores take all);
an unanswerable question (SQuAD v2.0, `version_2_with_negative=True`) has
the empty answer "" (or []).

The questions become `reader.SquadExample`s (`reader.read_squad_data`:
contexts split into words on whitespace and around each CJK ideograph),
windows `doc_stride` apart (`features.convert_examples`, with the
preprocessor's vocabulary, casing and `max_seq_length`), and the windows'
logits answers (`postprocess.SquadPostprocessor`), scored as
eval_results.json (`scoring.score_predictions`).
"""

import dataclasses

import numpy as np

from bert_tf.data.squad import features as squad_features
from bert_tf.data.squad import postprocess, reader
from bert_tf.errors import InputError
from bert_tf.metrics import squad_scoring as scoring
from bert_tf.text.preprocessor import INPUT_NAMES, window_dataset

RAW_TEXT = "(questions, contexts)"


@dataclasses.dataclass(frozen=True)
class SpanSettings:
    """Windows and answers, as run_squad.py's flags of the same names.
    `doc_stride` and `max_query_length` left None follow the window length
    (`for_length`): a third and a sixth of it, run_squad.py's 128 and 64 of 384."""

    doc_stride: int | None = None
    max_query_length: int | None = None
    max_answer_length: int = 30
    n_best_size: int = 20
    version_2_with_negative: bool = False
    null_score_diff_threshold: float = 0.0
    eval_metric: str = "squad"

    def __post_init__(self):
        for name in ("doc_stride", "max_query_length", "max_answer_length", "n_best_size"):
            value = getattr(self, name)
            if value is None and name in ("doc_stride", "max_query_length"):
                continue
            if not isinstance(value, int) or value < 1:
                raise InputError(f"{name}={value!r} must be a positive integer")
        if self.eval_metric not in scoring.EVAL_METRICS:
            raise InputError(
                f"eval_metric={self.eval_metric!r} must be one of {', '.join(scoring.EVAL_METRICS)}"
            )

    def for_length(self, max_seq_length):
        """These settings for windows of `max_seq_length` tokens: a
        `doc_stride` and `max_query_length` left None derived from it."""
        return dataclasses.replace(
            self,
            doc_stride=self.doc_stride or max(1, max_seq_length // 3),
            max_query_length=self.max_query_length or max(1, max_seq_length // 6),
        )


def is_raw(x):
    """Whether `x` is `(questions, contexts)` text rather than packed inputs."""
    return (
        isinstance(x, (tuple, list))
        and len(x) == 2
        and all(isinstance(part, (list, tuple, np.ndarray)) for part in x)
        and all(isinstance(v, (str, bytes, np.str_)) for part in x for v in part)
    )


def answer_columns(y):
    """y as `{"text": [[str]], "answer_start": [[int]]}` (one list per
    question); other `y` (packed positions) as it is."""
    if isinstance(y, dict) and set(y) == {"text", "answer_start"}:
        texts, starts = y["text"], y["answer_start"]
    elif isinstance(y, tuple) and len(y) == 2 and not isinstance(y[0], dict):
        texts, starts = y
    else:
        return y
    if len(texts) != len(starts):
        raise InputError(f"y: {len(texts)} answer texts but {len(starts)} answer_start")

    def as_list(value):
        if isinstance(value, (str, bytes, int, np.integer, np.str_)):
            return [] if value in ("", b"") else [value]
        return list(value)

    return {
        "text": [as_list(t) for t in texts],
        "answer_start": [as_list(s)[: len(as_list(t))] for t, s in zip(texts, starts)],
    }


def _text(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def squad_examples(x, y, settings, is_training):
    """`(questions, contexts)` and answers (`answer_columns` form, or None)
    -> `reader.SquadExample`s, question i with qas_id "i"; training skips
    those whose answer is not in its words, as run_squad.py."""
    questions, contexts = ([_text(v) for v in part] for part in x)
    if len(questions) != len(contexts):
        raise InputError(f"x: {len(questions)} questions but {len(contexts)} contexts")
    if y is not None and len(y["text"]) != len(questions):
        raise InputError(f"y has {len(y['text'])} answers for {len(questions)} questions")
    paragraphs = []
    for i, (question, context) in enumerate(zip(questions, contexts)):
        if not question.strip():
            raise InputError(f"x: question {i} is empty")
        qa = {"id": str(i), "question": question}
        if y is not None:
            answers = [
                _answer(i, context, _text(text), start)
                for text, start in zip(y["text"][i], y["answer_start"][i])
            ]
            if not answers and not settings.version_2_with_negative:
                raise InputError(
                    f"y: question {i} has no answer; unanswerable questions need "
                    "version_2_with_negative=True"
                )
            qa.update(answers=answers[:1] if is_training else answers, is_impossible=not answers)
        paragraphs.append({"context": context, "qas": [qa]})
    data = [{"paragraphs": paragraphs}]
    return reader.read_squad_data(data, "x", is_training, settings.version_2_with_negative).examples


def _answer(index, context, text, start):
    if not isinstance(start, (int, np.integer)) or isinstance(start, bool):
        raise InputError(f"y: answer_start {start!r} of question {index} must be an integer")
    start = int(start)
    found = context[start : start + len(text)] if start >= 0 else None
    if found != text:
        raise InputError(
            f"y: answer_start {start} of question {index} does not point at its answer "
            f"{text!r} in the context (there: {found!r})"
        )
    return {"text": text, "answer_start": start}


def windows(preprocessor, settings, examples, is_training):
    """The examples' `features.SquadWindow`s, as run_squad.py makes them
    (windows of the preprocessor's `max_seq_length`)."""
    settings = settings.for_length(preprocessor.max_seq_length)
    return list(
        squad_features.convert_examples(
            examples,
            preprocessor.python_tokenizer(),
            preprocessor.max_seq_length,
            settings.doc_stride,
            settings.max_query_length,
            is_training,
        )
    )


def window_inputs(window_list):
    """The windows' packed inputs, int32 `[windows, max_seq_length]` each."""
    return {
        name: np.array([w.inputs[name] for w in window_list], np.int32).reshape(
            len(window_list), -1
        )
        for name in INPUT_NAMES
    }


def training_dataset(preprocessor, settings, x, y, batch_size=None, shuffle=False):
    """Batches of training windows: `(inputs, {"start_logits": start
    positions, "end_logits": end positions})`, as run_squad.py's records."""
    examples = squad_examples(x, y, settings, is_training=True)
    found = windows(preprocessor, settings, examples, is_training=True)
    if not found:
        raise InputError("x: no questions to train on")
    targets = {
        "start_logits": np.array([w.start_position for w in found], np.int32),
        "end_logits": np.array([w.end_position for w in found], np.int32),
    }
    return window_dataset(window_inputs(found), targets, None, batch_size, shuffle)


def predicted_answers(model, settings, x, y=None, batch_size=None, **kwargs):
    """`(examples, postprocess.SquadPredictions)` of `(questions,
    contexts)`: run_squad.py's predictions (`y` gives the examples gold
    answers to score)."""
    preprocessor = model.preprocessor
    examples = squad_examples(x, y, settings, is_training=False)
    found = windows(preprocessor, settings, examples, is_training=False)
    logits = model.predict(window_dataset(window_inputs(found), batch_size=batch_size), **kwargs)
    processor = postprocess.SquadPostprocessor(
        examples,
        n_best_size=settings.n_best_size,
        max_answer_length=settings.max_answer_length,
        do_lower_case=preprocessor.tokenizer.do_lower_case,
        version_2_with_negative=settings.version_2_with_negative,
        null_score_diff_threshold=settings.null_score_diff_threshold,
    )
    for window, start, end in zip(found, logits["start_logits"], logits["end_logits"]):
        processor.add(window, start, end)
    return examples, processor.finish()


def answers(outputs, examples):
    """Per question a dict: `answer` (predictions.json's text), its
    `probability` and `score` (start + end logit) from its n-best list,
    `nbest` (nbest_predictions.json's entries) and, for SQuAD v2.0,
    `null_odds` (the null score minus the best answer's)."""
    results = []
    for example in examples:
        qas_id = example.qas_id
        nbest = outputs.nbest[qas_id]
        text = outputs.predictions[qas_id]
        best = next(entry for entry in nbest if entry["text"] == text)
        result = {
            "answer": text,
            "probability": best["probability"],
            "score": best["start_logit"] + best["end_logit"],
            "nbest": nbest,
        }
        if outputs.null_odds is not None:
            result["null_odds"] = outputs.null_odds[qas_id]
        results.append(result)
    return results


def scores(examples, outputs, settings):
    """eval_results.json's scores of the predictions."""
    return scoring.score_predictions(examples, outputs, settings.eval_metric)
