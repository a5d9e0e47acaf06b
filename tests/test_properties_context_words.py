"""Property tests: SQuAD / CMRC 2018 contexts split into words (the reader's
`context_to_words`, the exports' in-graph `whitespace_words`) and answers
mapped to words, against the original run_squad.py's reading loop with CMRC
2018's rule that each CJK ideograph is a word of its own."""

import json
import re

import tensorflow as tf
from hypothesis import event, given, settings
from hypothesis import strategies as st
from original_bert import is_chinese_char

from bert_tf.data.squad import reader
from bert_tf.text.preprocessor import whitespace_words

# run_squad.py's is_whitespace: four ASCII characters and U+202F.
ORIGINAL_WHITESPACE = " \t\r\n\u202f"
CHARS = list("abcXY1.,\u00e9\u3002") * 3
# CJK ideographs at the ends of the original's ranges, and characters just outside them.
CHARS += list("\u4e00\u9fff\u3400\u4dbf\U00020000\U0002a6df\uf900\ufaff\U0002f800\U0002fa1f")
CHARS += list("\u33ff\u4dc0\ua000\uf8ff\ufb00\u3007\ud55c\u304b")
# The original's whitespace, and whitespace it keeps inside words.
CHARS += list(ORIGINAL_WHITESPACE * 3 + "\u00a0\u3000\u2009\u200b\ufeff")
contexts = st.lists(st.sampled_from(CHARS), max_size=30).map("".join)


def original_words(context, split_cjk=True):
    """run_squad.py's loop over the paragraph text, with each CJK ideograph
    closing the word before it and making a word of its own: (doc_tokens,
    char_to_word_offset, each word's first character)."""
    doc_tokens, char_to_word_offset, starts = [], [], []
    prev_is_whitespace = True
    for offset, char in enumerate(context):
        if char in ORIGINAL_WHITESPACE:
            prev_is_whitespace = True
        else:
            if prev_is_whitespace or (split_cjk and is_chinese_char(ord(char))):
                doc_tokens.append(char)
                starts.append(offset)
            else:
                doc_tokens[-1] += char
            prev_is_whitespace = split_cjk and is_chinese_char(ord(char))
        char_to_word_offset.append(len(doc_tokens) - 1)
    return doc_tokens, char_to_word_offset, starts


@settings(max_examples=300)
@given(context=contexts)
def test_context_words_are_the_originals(context):
    doc_tokens, char_to_word_offset, starts = original_words(context)
    assert reader.context_to_words(context) == (doc_tokens, char_to_word_offset)
    assert reader.word_starts(char_to_word_offset) == starts


@settings(max_examples=20)
@given(batch=st.lists(contexts, min_size=1, max_size=8), split_cjk=st.booleans())
def test_graph_words_are_the_originals(batch, split_cjk):
    _, starts, ends = whitespace_words(tf.constant(batch), split_cjk=split_cjk)
    expected_starts, expected_ends = [], []
    for context in batch:
        words, _, word_starts = original_words(context, split_cjk)
        expected_starts.append(word_starts)
        expected_ends.append([s + len(w) for s, w in zip(word_starts, words)])
    assert (starts.to_list(), ends.to_list()) == (expected_starts, expected_ends)


@st.composite
def contexts_and_answers(draw):
    context = draw(st.lists(st.sampled_from(CHARS), min_size=8, max_size=30).map("".join))
    # sampled_from: as likely long as short (st.integers favours small values).
    start = draw(st.sampled_from(range(len(context))))
    end = min(len(context), start + draw(st.sampled_from(range(1, 13))))
    return context, start, context[start:end]


@settings(max_examples=200)
@given(context_and_answer=contexts_and_answers())
def test_answers_map_to_the_words_the_original_maps_them_to(tmp_path_factory, context_and_answer):
    context, start, answer = context_and_answer
    if not answer.split():  # the reader refuses an empty answer
        event("empty")
        return
    qa = {"id": "q", "question": "?", "answers": [{"text": answer, "answer_start": start}]}
    path = tmp_path_factory.getbasetemp() / "squad.json"
    path.write_text(json.dumps({"data": [{"paragraphs": [{"context": context, "qas": [qa]}]}]}))
    examples = reader.read_squad_examples(str(path), is_training=True).examples

    doc_tokens, char_to_word_offset, starts = original_words(context)
    first = char_to_word_offset[start]
    last = char_to_word_offset[start + len(answer) - 1]
    if first < 0:  # an answer starting before the first word: no word to point at
        event("before the first word")
        assert examples == []
        return
    # The words' text: the context from the first word to the end of the last,
    # each run of whitespace one space (" ".join of the words without CJK).
    words_text = context[starts[first] : starts[last] + len(doc_tokens[last])]
    words_text = re.sub(f"[{ORIGINAL_WHITESPACE}]+", " ", words_text)
    if " ".join(answer.split()) not in words_text:  # the original's "Could not find answer"
        event("not found")
        assert examples == []
        return
    event("found")
    [example] = examples
    assert (example.start_position, example.end_position) == (first, last)
    assert example.doc_tokens == doc_tokens
    assert example.words_text(first, last) == words_text
