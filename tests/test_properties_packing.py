"""Property tests: packing and windows against the original BERT's run_classifier.py
(`_truncate_seq_pair`, `convert_single_example`) and run_squad.py
(`convert_examples_to_features`, `_check_is_max_context`,
`_improve_answer_span`), rewritten here from the original's code."""

import re

import tensorflow as tf
from hypothesis import given, settings
from hypothesis import strategies as st

from bert_tf.data.squad import features
from bert_tf.data.squad.reader import SquadExample
from bert_tf.text import packing

CLS, SEP = 101, 102


# -- the original run_classifier.py -----------------------------------------------------------


def original_truncate_seq_pair(tokens_a, tokens_b, max_length):
    while True:
        total_length = len(tokens_a) + len(tokens_b)
        if total_length <= max_length:
            break
        if len(tokens_a) > len(tokens_b):
            tokens_a.pop()
        else:
            tokens_b.pop()


def original_single_example(ids_a, ids_b, max_seq_length):
    """convert_single_example on ids: (input_ids, input_mask, segment_ids)."""
    tokens_a, tokens_b = list(ids_a), None
    if ids_b:  # `if example.text_b:` (an empty text tokenizes to nothing)
        tokens_b = list(ids_b)
    if tokens_b:
        original_truncate_seq_pair(tokens_a, tokens_b, max_seq_length - 3)
    elif len(tokens_a) > max_seq_length - 2:
        tokens_a = tokens_a[0 : max_seq_length - 2]
    tokens = [CLS, *tokens_a, SEP]
    segment_ids = [0] * len(tokens)
    if tokens_b:  # after truncation: a B cut to nothing gets no [SEP]
        tokens += [*tokens_b, SEP]
        segment_ids += [1] * (len(tokens_b) + 1)
    input_mask = [1] * len(tokens)
    while len(tokens) < max_seq_length:
        tokens.append(0)
        input_mask.append(0)
        segment_ids.append(0)
    return tokens, input_mask, segment_ids


ids = st.lists(st.integers(1000, 1999), max_size=40)


@settings(max_examples=400)
@given(a=ids, b=ids, max_length=st.integers(0, 60))
def test_truncate_seq_pair_keeps_what_the_original_keeps(a, b, max_length):
    expected_a, expected_b = list(a), list(b)
    original_truncate_seq_pair(expected_a, expected_b, max_length)
    packing.truncate_seq_pair(a, b, max_length)
    assert (a, b) == (expected_a, expected_b)


@settings(max_examples=20)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 60)), min_size=1))
def test_closed_form_truncation_keeps_the_originals_lengths(cases):
    expected = []
    for len_a, len_b, max_length in cases:
        a, b = list(range(len_a)), list(range(len_b))
        original_truncate_seq_pair(a, b, max_length)
        expected.append((len(a), len(b)))
    len_a, len_b, max_length = (tf.constant(column) for column in zip(*cases))
    new_a, new_b = packing.truncated_pair_lengths(len_a, len_b, max_length)
    assert list(zip(new_a.numpy().tolist(), new_b.numpy().tolist())) == expected


second_texts = st.one_of(st.none(), ids)


@settings(max_examples=400)
@given(a=ids, b=second_texts, max_seq_length=st.integers(3, 50))
def test_pack_inputs_is_the_originals_convert_single_example(a, b, max_seq_length):
    packed = packing.pack_inputs(a, b, max_seq_length, CLS, SEP)
    got = tuple(packed[k] for k in ("input_word_ids", "input_mask", "input_type_ids"))
    assert got == original_single_example(a, b, max_seq_length)


@settings(max_examples=15)
@given(
    examples=st.lists(st.tuples(ids, ids), min_size=1, max_size=8),
    # Often 3 or 4, where truncation leaves no room for B.
    max_seq_length=st.sampled_from([3, 4, 5, 6, 9, 16, 50]),
)
def test_graph_packer_is_the_originals_convert_single_example(examples, max_seq_length):
    segments = [
        tf.ragged.constant(column, tf.int32, ragged_rank=1, inner_shape=())
        for column in zip(*examples)
    ]
    packed = packing.BertPackInputs(max_seq_length, CLS, SEP)(segments)
    got = zip(
        *(packed[k].numpy().tolist() for k in ("input_word_ids", "input_mask", "input_type_ids"))
    )
    assert list(got) == [original_single_example(a, b, max_seq_length) for a, b in examples]


# -- the original run_squad.py ------------------------------------------------------------------


def original_check_is_max_context(doc_spans, cur_span_index, position):
    best_score = None
    best_span_index = None
    for span_index, (start, length) in enumerate(doc_spans):
        end = start + length - 1
        if position < start or position > end:
            continue
        num_left_context = position - start
        num_right_context = end - position
        score = min(num_left_context, num_right_context) + 0.01 * length
        if best_score is None or score > best_score:
            best_score = score
            best_span_index = span_index
    return cur_span_index == best_span_index


def original_doc_spans(num_doc_tokens, max_tokens_for_doc, doc_stride):
    doc_spans = []
    start_offset = 0
    while start_offset < num_doc_tokens:
        length = min(num_doc_tokens - start_offset, max_tokens_for_doc)
        doc_spans.append((start_offset, length))
        if start_offset + length == num_doc_tokens:
            break
        start_offset += min(length, doc_stride)
    return doc_spans


def original_improve_answer_span(doc_tokens, input_start, input_end, tokenizer, answer_text):
    tok_answer_text = " ".join(tokenizer.tokenize(answer_text))
    for new_start in range(input_start, input_end + 1):
        for new_end in range(input_end, new_start - 1, -1):
            if " ".join(doc_tokens[new_start : new_end + 1]) == tok_answer_text:
                return new_start, new_end
    return input_start, input_end


def original_squad_features(example, tokenizer, max_seq_length, doc_stride, max_query_length):
    """convert_examples_to_features for one training example: a dict per window."""
    query_tokens = tokenizer.tokenize(example.question_text)[:max_query_length]
    tok_to_orig_index, orig_to_tok_index, all_doc_tokens = [], [], []
    for i, token in enumerate(example.doc_tokens):
        orig_to_tok_index.append(len(all_doc_tokens))
        for sub_token in tokenizer.tokenize(token):
            tok_to_orig_index.append(i)
            all_doc_tokens.append(sub_token)
    if example.is_impossible:
        tok_start_position = tok_end_position = -1
    else:
        tok_start_position = orig_to_tok_index[example.start_position]
        if example.end_position < len(example.doc_tokens) - 1:
            tok_end_position = orig_to_tok_index[example.end_position + 1] - 1
        else:
            tok_end_position = len(all_doc_tokens) - 1
        tok_start_position, tok_end_position = original_improve_answer_span(
            all_doc_tokens,
            tok_start_position,
            tok_end_position,
            tokenizer,
            example.orig_answer_text,
        )
    max_tokens_for_doc = max_seq_length - len(query_tokens) - 3
    doc_spans = original_doc_spans(len(all_doc_tokens), max_tokens_for_doc, doc_stride)
    windows = []
    for doc_span_index, (start, length) in enumerate(doc_spans):
        tokens = ["[CLS]", *query_tokens, "[SEP]"]
        segment_ids = [0] * len(tokens)
        token_to_orig_map, token_is_max_context = {}, {}
        for i in range(length):
            split_token_index = start + i
            token_to_orig_map[len(tokens)] = tok_to_orig_index[split_token_index]
            token_is_max_context[len(tokens)] = original_check_is_max_context(
                doc_spans, doc_span_index, split_token_index
            )
            tokens.append(all_doc_tokens[split_token_index])
            segment_ids.append(1)
        tokens.append("[SEP]")
        segment_ids.append(1)
        input_ids = tokenizer.convert_tokens_to_ids(tokens)
        input_mask = [1] * len(input_ids)
        padding = [0] * (max_seq_length - len(input_ids))
        start_position = end_position = 0
        doc_end = start + length - 1
        if (
            not example.is_impossible
            and start <= tok_start_position
            and tok_end_position <= doc_end
        ):
            doc_offset = len(query_tokens) + 2
            start_position = tok_start_position - start + doc_offset
            end_position = tok_end_position - start + doc_offset
        windows.append(
            dict(
                tokens=tokens,
                token_to_orig_map=token_to_orig_map,
                token_is_max_context=token_is_max_context,
                input_ids=input_ids + padding,
                input_mask=input_mask + padding,
                segment_ids=segment_ids + padding,
                start_position=start_position,
                end_position=end_position,
            )
        )
    return windows


class PairTokenizer:
    """Splits whitespace words at "-" (a token of its own, as BERT splits
    punctuation) and cuts the rest into pieces of two characters (`ab`,
    `##cd`, ...)."""

    def __init__(self):
        self.vocab = {"[CLS]": CLS, "[SEP]": SEP}

    def tokenize(self, text):
        return [
            ("##" if i else "") + part[i : i + 2]
            for word in text.split()
            for part in re.split("(-)", word)
            for i in range(0, len(part), 2)
        ]

    def convert_tokens_to_ids(self, tokens):
        return [self.vocab.setdefault(token, 1000 + len(self.vocab)) for token in tokens]


words = st.lists(st.sampled_from("ab-"), min_size=1, max_size=5).map("".join)


@st.composite
def squad_examples(draw):
    doc_tokens = draw(st.lists(words, min_size=1, max_size=30))
    question = " ".join(draw(st.lists(words, min_size=1, max_size=6)))
    if draw(st.sampled_from(range(4))) == 0:  # a quarter unanswerable
        return SquadExample("q", question, doc_tokens, "", -1, -1, is_impossible=True)
    first = draw(st.integers(0, len(doc_tokens) - 1))
    last = draw(st.integers(first, min(len(doc_tokens) - 1, first + 4)))
    text = " ".join(doc_tokens[first : last + 1])
    # Annotated character spans often cut into the first or last word.
    cut_left = draw(st.integers(0, len(doc_tokens[first]) - 1))
    cut_right = draw(st.integers(0, len(doc_tokens[last]) - 1 if last > first else 0))
    text = text[cut_left : len(text) - cut_right]
    return SquadExample("q", question, doc_tokens, text, first, last)


@settings(max_examples=300)
@given(
    example=squad_examples(),
    max_query_length=st.integers(1, 8),
    room=st.integers(1, 20),
    doc_stride=st.integers(1, 24),
)
def test_squad_windows_are_the_originals_features(example, max_query_length, room, doc_stride):
    tokenizer = PairTokenizer()
    max_seq_length = max_query_length + 3 + room
    expected = original_squad_features(
        example, tokenizer, max_seq_length, doc_stride, max_query_length
    )
    windows = features.convert_example(
        example, 0, tokenizer, max_seq_length, doc_stride, max_query_length, is_training=True
    )
    got = [
        dict(
            tokens=w.tokens,
            token_to_orig_map=w.token_to_orig_map,
            token_is_max_context=w.token_is_max_context,
            input_ids=w.inputs["input_word_ids"],
            input_mask=w.inputs["input_mask"],
            segment_ids=w.inputs["input_type_ids"],
            start_position=w.start_position,
            end_position=w.end_position,
        )
        for w in windows
    ]
    assert got == expected


@settings(max_examples=15)
@given(
    examples=st.lists(
        st.tuples(st.lists(st.integers(1000, 1999), min_size=1, max_size=10), ids.filter(bool)),
        min_size=1,
        max_size=6,
    ),
    max_query_length=st.integers(1, 8),
    room=st.integers(1, 12),
    doc_stride=st.integers(1, 16),
)
def test_graph_squad_windows_are_the_originals(examples, max_query_length, room, doc_stride):
    max_seq_length = max_query_length + 3 + room
    expected = []
    for index, (query, doc) in enumerate(examples):
        query = query[:max_query_length]
        for start, length in original_doc_spans(
            len(doc), max_seq_length - len(query) - 3, doc_stride
        ):
            tokens = [CLS, *query, SEP, *doc[start : start + length], SEP]
            padding = [0] * (max_seq_length - len(tokens))
            types = [0] * (len(query) + 2) + [1] * (length + 1)
            expected.append(
                (index, start, tokens + padding, [1] * len(tokens) + padding, types + padding)
            )
    segments = [
        tf.ragged.constant(column, tf.int32, ragged_rank=1, inner_shape=())
        for column in zip(*examples)
    ]
    inputs, example_ids, starts = packing.pack_example_windows(
        segments,
        max_seq_length,
        CLS,
        SEP,
        doc_stride,
        window_over=1,
        max_fixed_length=max_query_length,
    )
    got = zip(
        example_ids.numpy().tolist(),
        starts.numpy().tolist(),
        *(inputs[k].numpy().tolist() for k in ("input_word_ids", "input_mask", "input_type_ids")),
    )
    assert list(got) == expected
