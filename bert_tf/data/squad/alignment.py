"""Sub-token <-> word alignment of SQuAD contexts, as in the original `run_squad.py`.

Words are a `SquadExample`'s `doc_tokens`; sub-tokens are what a tokenizer
with `.tokenize(str) -> list of str` (`tokenization.FullTokenizer`) makes of
each word on its own. Windows ("doc spans") over the sub-tokens are
`(start, length)` pairs; a window is packed after `[CLS] query [SEP]`, so
its first sub-token sits at `doc_offset = len(query_tokens) + 2` in the
model's input.
"""

from bert_tf.text.packing import is_max_context


def tokenize_document(doc_tokens, tokenizer):
    """Sub-tokenizes each word separately.

    Returns `(all_doc_tokens, tok_to_orig_index, orig_to_tok_index)`: the
    sub-tokens of the whole document, the word index of each sub-token, and
    the index of each word's first sub-token (a word with no sub-tokens gets
    the index of the next word's first one, as in the original).
    """
    all_doc_tokens = []
    tok_to_orig_index = []
    orig_to_tok_index = []
    for word_index, word in enumerate(doc_tokens):
        orig_to_tok_index.append(len(all_doc_tokens))
        for sub_token in tokenizer.tokenize(word):
            tok_to_orig_index.append(word_index)
            all_doc_tokens.append(sub_token)
    return all_doc_tokens, tok_to_orig_index, orig_to_tok_index


def answer_token_span(example, all_doc_tokens, orig_to_tok_index, tokenizer):
    """A training example's answer as sub-token indices `(tok_start, tok_end)`
    (inclusive), or (-1, -1) for an impossible question.

    The words' sub-token range is narrowed by `improve_answer_span`.
    """
    if example.is_impossible:
        return -1, -1
    tok_start = orig_to_tok_index[example.start_position]
    if example.end_position < len(example.doc_tokens) - 1:
        tok_end = orig_to_tok_index[example.end_position + 1] - 1
    else:
        tok_end = len(all_doc_tokens) - 1
    return improve_answer_span(
        all_doc_tokens, tok_start, tok_end, tokenizer, example.orig_answer_text
    )


def improve_answer_span(all_doc_tokens, tok_start, tok_end, tokenizer, orig_answer_text):
    """The sub-span of sub-tokens `[tok_start, tok_end]` that spells the
    tokenized answer exactly, or `(tok_start, tok_end)` if there is none.

    The annotated answer is a character span; mapped to whole words it may
    carry extra characters: in "(1895-1943)." the answer "1895" covers the
    whole word, whose sub-tokens are "( 1895 - 1943 ) .". The sub-span that
    tokenizes like the answer is then "1895". Sub-spans are tried by start
    (left first), then by end (longest first). When the answer is part of one
    sub-token ("Japan" in "Japanese") nothing matches and the span is kept.
    """
    answer = " ".join(tokenizer.tokenize(orig_answer_text))
    for new_start in range(tok_start, tok_end + 1):
        for new_end in range(tok_end, new_start - 1, -1):
            if " ".join(all_doc_tokens[new_start : new_end + 1]) == answer:
                return new_start, new_end
    return tok_start, tok_end


def window_token_maps(doc_spans, span_index, tok_to_orig_index, doc_offset):
    """The per-position maps of one packed window, as the original's features.

    Returns `(token_to_orig_map, token_is_max_context)`: dicts keyed by the
    position in the packed sequence (`doc_offset + i` for the window's i-th
    sub-token), giving the word index and `is_max_context` of that sub-token.
    """
    start, length = doc_spans[span_index]
    token_to_orig_map = {}
    token_is_max_context = {}
    for i in range(length):
        position = start + i
        token_to_orig_map[doc_offset + i] = tok_to_orig_index[position]
        token_is_max_context[doc_offset + i] = is_max_context(doc_spans, span_index, position)
    return token_to_orig_map, token_is_max_context


def window_answer_positions(tok_start, tok_end, doc_span, doc_offset):
    """Training targets of one window: positions of the answer's first and
    last sub-token in the packed sequence.

    `tok_start`, `tok_end`: the answer in document sub-tokens (-1, -1 for an
    impossible question); `doc_span`: the window `(start, length)`;
    `doc_offset`: position of the window's first sub-token
    (`len(query_tokens) + 2`). Returns (0, 0), i.e. [CLS], when the answer is
    not entirely inside the window or the question is impossible.
    """
    start, length = doc_span
    if tok_start < start or tok_end > start + length - 1:
        return 0, 0
    return tok_start - start + doc_offset, tok_end - start + doc_offset
