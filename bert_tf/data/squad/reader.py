"""SQuAD v1.1 / v2.0 JSON -> `SquadExample`s, as google-research/bert's `run_squad.py` reads them.

A context is split into words on the original's five whitespace characters
only (space, tab, CR, LF, U+202F), so e.g. a no-break space U+00A0 stays
inside a word, and, for Chinese (and Japanese kanji, Korean hanja), every
CJK ideograph (`tokenization.CJK_RANGES`) is a word of its own, as CMRC
2018's baseline splits them; the original keeps a context without spaces as
one word. An answer's character span is mapped to the words it touches.
The text of words `first..last` (`SquadExample.words_text`) is the context's
own text with each whitespace run as one space: on contexts without CJK
ideographs that is the original's `" ".join` of the words, and words split
off ideographs join without a space ("北京", not "北 京").

Training (`is_training=True`), as the original:

* an answerable question needs exactly one answer;
* an answer whose whitespace-normalised text is not found in the words its
  span covers (odd Unicode, mostly) is skipped with a warning; such
  questions are counted in `SquadReadResult.num_unrecoverable`;
* with `version_2_with_negative=True` an impossible question gets
  positions -1 and answer text ""; a question without `is_impossible` (SQuAD
  v1.1 data) is answerable, counted in `num_without_is_impossible` and
  reported in one warning (the original stops with a KeyError).

Prediction (`is_training=False`) needs neither answers nor `is_impossible`
(test files have none); `SquadExample.answers` lists the gold texts that are
there, for evaluation.

Differences from the original, all on input it crashes on or misreads:

* JSON that is not SQuAD-shaped, an empty question, an answer that is empty
  or lies outside its context raise InputError naming the file and the place
  (`dev.json: data[3].paragraphs[0].qas[2]: no 'question'`);
* a question marked `is_impossible: true` read with
  `version_2_with_negative=False` is counted in `num_unexpected_impossible`
  and reported in one warning: training skips it (it has no answer to learn;
  the original crashes), prediction keeps it as an answerable question (as
  the original does);
* an answer starting in whitespace before the context's first word is
  treated as unrecoverable (the original would give it word index -1);
* question ids are converted to `str` (prediction files are keyed by them).
"""

import collections
import dataclasses
import json
import re

from absl import logging

from bert_tf.errors import InputError
from bert_tf.files import exists, open_file
from bert_tf.text import tokenization
from bert_tf.text.tokenization import CONTEXT_WHITESPACE

_WHITESPACE_RUN = re.compile("[" + "".join(sorted(CONTEXT_WHITESPACE)) + "]+")

# A paragraph's context, its words, each character's word index and each word's first character.
_Context = collections.namedtuple("_Context", ["text", "doc_tokens", "char_to_word", "word_starts"])


@dataclasses.dataclass
class SquadExample:
    """One question on one context.

    `doc_tokens` are the context's whitespace-separated words (shared by the
    questions of a paragraph). For training, `start_position` /
    `end_position` are the indices of the first and last answer word and
    `orig_answer_text` the annotated text (-1, -1 and "" for an impossible
    question); for prediction they are None. `answers` holds every gold
    answer text of the file ([] for an unanswerable or unannotated question).
    """

    qas_id: str
    question_text: str
    doc_tokens: list = dataclasses.field(repr=False)
    orig_answer_text: str | None = None
    start_position: int | None = None
    end_position: int | None = None
    is_impossible: bool = False
    answers: list = dataclasses.field(default_factory=list)
    context_text: str = dataclasses.field(default="", repr=False)
    word_starts: list = dataclasses.field(default_factory=list, repr=False)

    def words_text(self, first, last):
        """The context text of words `first..last` (inclusive), each
        whitespace run in it as one space; without `word_starts` (an example
        made by hand) the words joined with spaces, as the original."""
        if not self.word_starts:
            return " ".join(self.doc_tokens[first : last + 1])
        return join_words(self.context_text, self.doc_tokens, self.word_starts, first, last)


@dataclasses.dataclass
class SquadReadResult:
    """What `read_squad_examples` returns.

    examples: the `SquadExample`s, in file order.
    num_unrecoverable: training questions skipped because the answer text is
      not in the context words its span covers (the original's warning).
    num_unexpected_impossible: questions marked `is_impossible: true` in a
      file read with `version_2_with_negative=False`.
    num_without_is_impossible: training questions read with
      `version_2_with_negative=True` that have no `is_impossible` (v1.1 data).
    num_skipped: questions left out of `examples` (training only: the
      unrecoverable ones plus the unexpected impossible ones).
    """

    examples: list
    num_unrecoverable: int = 0
    num_unexpected_impossible: int = 0
    num_without_is_impossible: int = 0
    num_skipped: int = 0


def read_squad_examples(input_file, is_training, version_2_with_negative=False):
    """Reads a SQuAD JSON file; returns a `SquadReadResult`.

    Raises InputError for a missing file, invalid JSON, a file that is not
    SQuAD-shaped, or an empty question (see the module docstring).
    """
    return read_squad_data(
        load_squad_json(input_file), input_file, is_training, version_2_with_negative
    )


def read_squad_data(data, input_file, is_training, version_2_with_negative=False):
    """`read_squad_examples` of a SQuAD `data` list (articles) already in
    memory; `input_file` names its source in errors and warnings."""
    result = SquadReadResult(examples=[])
    for where, paragraph in iter_paragraphs(data, input_file):
        qas = _field(paragraph, "qas", list, input_file, where)
        if not qas:
            continue
        text = _field(paragraph, "context", str, input_file, where)
        doc_tokens, char_to_word = context_to_words(text)
        context = _Context(text, doc_tokens, char_to_word, word_starts(char_to_word))
        for k, qa in enumerate(qas):
            example = _read_question(
                qa,
                f"{where}.qas[{k}]",
                input_file,
                context,
                is_training,
                version_2_with_negative,
                result,
            )
            if example is None:
                result.num_skipped += 1
            else:
                result.examples.append(example)
    if result.num_unrecoverable:
        logging.warning(
            "%s: skipped %d training questions whose answer text is not in the context",
            input_file,
            result.num_unrecoverable,
        )
    if result.num_without_is_impossible:
        logging.warning(
            "%s: %d questions have no is_impossible (SQuAD v1.1 data?) although "
            "version_2_with_negative is set; they are read as answerable",
            input_file,
            result.num_without_is_impossible,
        )
    if result.num_unexpected_impossible:
        logging.warning(
            "%s: %d questions are marked is_impossible but version_2_with_negative is False; %s",
            input_file,
            result.num_unexpected_impossible,
            "they are skipped" if is_training else "they are read as answerable questions",
        )
    return result


def context_to_words(context):
    """Splits a context on `CONTEXT_WHITESPACE` and around each CJK ideograph.

    Returns `(doc_tokens, char_to_word_offset)`: the list of words, and for
    each character of `context` the index of the word it belongs to (a
    whitespace character gets the index of the word before it, -1 before
    the first word).
    """
    doc_tokens = []
    char_to_word_offset = []
    in_word = False
    for char in context:
        if char in CONTEXT_WHITESPACE:
            in_word = False
        elif ord(char) >= _FIRST_CJK and tokenization.is_chinese_char(ord(char)):
            doc_tokens.append(char)
            in_word = False
        elif in_word:
            doc_tokens[-1] += char
        else:
            doc_tokens.append(char)
            in_word = True
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset


_FIRST_CJK = min(first for first, _ in tokenization.CJK_RANGES)


def word_starts(char_to_word_offset):
    """The offset of each word's first character, from `context_to_words`'s map."""
    starts = []
    for offset, word in enumerate(char_to_word_offset):
        if word == len(starts):
            starts.append(offset)
    return starts


def join_words(context, doc_tokens, starts, first, last):
    """`context`'s text from word `first` to word `last` (inclusive), each
    whitespace run as one space (`starts`: `word_starts`)."""
    end = starts[last] + len(doc_tokens[last])
    return _WHITESPACE_RUN.sub(" ", context[starts[first] : end])


def load_squad_json(input_file):
    """Returns the `data` list (articles) of a SQuAD JSON file.

    Raises InputError if the file is missing, is not JSON, or has no `data` list.
    """
    if not exists(input_file):
        raise InputError(f"input file {input_file} does not exist")
    with open_file(input_file, "rb") as f:
        raw = f.read()
    try:
        content = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"{input_file}: not valid JSON ({e})") from None
    return _field(content, "data", list, input_file, "")


def iter_paragraphs(data, source):
    """Yields `(where, paragraph)` for every paragraph of a SQuAD `data` list.

    `where` is the paragraph's place, e.g. "data[3].paragraphs[0]"; `source`
    (a file name) prefixes InputError messages about missing keys.
    """
    for i, article in enumerate(data):
        for j, paragraph in enumerate(_field(article, "paragraphs", list, source, f"data[{i}]")):
            yield f"data[{i}].paragraphs[{j}]", paragraph


def iter_questions(data, source):
    """Yields `(where, qa)` for every question of a SQuAD `data` list
    (`where` e.g. "data[3].paragraphs[0].qas[2]")."""
    for where, paragraph in iter_paragraphs(data, source):
        for k, qa in enumerate(_field(paragraph, "qas", list, source, where)):
            yield f"{where}.qas[{k}]", qa


def question_id(qa, source, where):
    """A question's `id` as a str (InputError if missing or not a string / integer)."""
    return str(_field(qa, "id", (str, int), source, where))


def answer_texts(qa, source, where, required=False):
    """The `text` of each entry of a question's `answers` ([] if the key is
    absent, unless `required`)."""
    if "answers" not in qa and not required:
        return []
    answers = _field(qa, "answers", list, source, where)
    return [_field(a, "text", str, source, f"{where}.answers[{n}]") for n, a in enumerate(answers)]


def _read_question(qa, where, source, context, is_training, version_2_with_negative, result):
    """One question -> SquadExample, or None if training skips it (counted in `result`)."""
    qas_id = question_id(qa, source, where)
    question = _field(qa, "question", str, source, where)
    if not question.strip():
        raise InputError(f"{source}: {where}: question {qas_id!r} is empty")
    texts = answer_texts(qa, source, where, required=is_training)
    is_impossible = False
    if "is_impossible" in qa:
        is_impossible = _field(qa, "is_impossible", bool, source, where)
    elif is_training and version_2_with_negative:
        result.num_without_is_impossible += 1
    if is_impossible and not version_2_with_negative:
        result.num_unexpected_impossible += 1
        if is_training:
            return None
        is_impossible = False
    example = SquadExample(
        qas_id=qas_id,
        question_text=question,
        doc_tokens=context.doc_tokens,
        is_impossible=is_impossible,
        answers=texts,
        context_text=context.text,
        word_starts=context.word_starts,
    )
    if not is_training:
        return example
    if is_impossible:
        example.orig_answer_text, example.start_position, example.end_position = "", -1, -1
        return example
    if len(texts) != 1:
        raise InputError(
            f"{source}: {where}: {len(texts)} answers; for training an answerable "
            "question needs exactly 1"
        )
    span = _answer_word_span(qa["answers"][0], texts[0], f"{where}.answers[0]", source, context)
    if span is None:
        result.num_unrecoverable += 1
        return None
    example.orig_answer_text = texts[0]
    example.start_position, example.end_position = span
    return example


def _answer_word_span(answer, text, where, source, context):
    """(first word, last word) of a training answer, or None if its text is
    not found in those words (the original's "Could not find answer")."""
    offset = _field(answer, "answer_start", int, source, where)
    cleaned = " ".join(tokenization.whitespace_tokenize(text))
    if not cleaned:
        raise InputError(f"{source}: {where}: answer text is empty")
    if offset < 0 or offset + len(text) > len(context.text):
        raise InputError(
            f"{source}: {where}: answer_start {offset} + {len(text)} characters is "
            f"outside the context ({len(context.text)} characters)"
        )
    start = context.char_to_word[offset]
    end = context.char_to_word[offset + len(text) - 1]
    actual = ""
    if start >= 0:
        actual = join_words(context.text, context.doc_tokens, context.word_starts, start, end)
    if cleaned not in actual:
        logging.warning(
            "%s: %s: could not find answer: '%s' vs. '%s'", source, where, actual, cleaned
        )
        return None
    return start, end


_JSON_KINDS = (
    (bool, "a boolean"),
    (str, "a string"),
    (int, "an integer"),
    (float, "a number"),
    (list, "a list"),
    (dict, "an object"),
)


def _json_kind(value):
    """'a string', 'a list', ... for error messages ('null' for None)."""
    for kind, name in _JSON_KINDS:
        if isinstance(value, kind):
            return name
    return "null"


def _field(obj, key, kinds, source, where):
    """`obj[key]`, checked to be an instance of `kinds` (a type or tuple).

    Raises InputError `<source>: <where>: no '<key>'` if `obj` (a JSON
    object) lacks the key, or a message naming the key and the wrong type.
    A JSON boolean never passes for an integer.
    """
    place = f"{source}: {where}" if where else str(source)
    if not isinstance(obj, dict):
        raise InputError(f"{place}: expected an object with '{key}', got {_json_kind(obj)}")
    if key not in obj:
        raise InputError(f"{place}: no '{key}'")
    value = obj[key]
    kinds = kinds if isinstance(kinds, tuple) else (kinds,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        wanted = " or ".join(name for kind, name in _JSON_KINDS if kind in kinds)
        raise InputError(f"{place}: '{key}' is {_json_kind(value)}, expected {wanted}")
    return value
