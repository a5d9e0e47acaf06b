"""SQuAD data side: reading, sub-token alignment, answer text projection and n-best predictions.

Every expected value is worked out by hand from the original run_squad.py
rules (written next to each case), never taken from the code under test.
"""

import json
import math
import os

import numpy as np
import pytest

from bert_tf.data.squad import alignment, postprocess, reader
from bert_tf.data.squad.postprocess import SquadPostprocessor, WindowMeta, get_final_text
from bert_tf.errors import InputError
from bert_tf.text import tokenization

# Character positions:  The 0-2, spaces 3-4, leader 5-10, tab 11, was 12-14,
# space 15, John 16-19, U+202F 20, Smith 21-25, space 26, (1895-1943). 27-38,
# LF 39, He 40-41, space 42, ran. 43-46.
CONTEXT = "The  leader\twas John\u202fSmith (1895-1943).\nHe ran."
WORDS = ["The", "leader", "was", "John", "Smith", "(1895-1943).", "He", "ran."]
# U+00A0 is whitespace for str.split() but not for the original reader.
NBSP_CONTEXT = "Paris\u00a0France is big."


def squad_json(tmp_path, data, name="train.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"version": "v2.0", "data": data}), encoding="utf-8")
    return str(path)


def qa(qas_id, question, answers, **extra):
    return {
        "id": qas_id,
        "question": question,
        **extra,
        "answers": [{"text": text, "answer_start": start} for text, start in answers],
    }


def v2_data():
    return [
        {
            "title": "T",
            "paragraphs": [
                {
                    "context": CONTEXT,
                    "qas": [
                        qa("who", "Who led?", [("John\u202fSmith", 16)], is_impossible=False),
                        qa("born", "When was he born?", [("1895", 28)], is_impossible=False),
                        qa("typo", "Who?", [("Jon", 16)], is_impossible=False),
                        qa(
                            "none",
                            "Who followed?",
                            [],
                            is_impossible=True,
                            plausible_answers=[{"text": "He", "answer_start": 40}],
                        ),
                    ],
                },
                {
                    "context": NBSP_CONTEXT,
                    "qas": [qa("nbsp", "Where?", [("Paris\u00a0France", 0)], is_impossible=False)],
                },
            ],
        }
    ]


# -- reader -------------------------------------------------------------------


def test_context_to_words_uses_the_originals_five_whitespace_characters():
    words, char_to_word = reader.context_to_words(CONTEXT)
    assert words == WORDS
    expected = [0] * 5 + [1] * 7 + [2] * 4 + [3] * 5 + [4] * 6 + [5] * 13 + [6] * 3 + [7] * 4
    assert char_to_word == expected
    assert reader.context_to_words("  a\u00a0b ") == (["a\u00a0b"], [-1, -1, 0, 0, 0, 0])


# CJK ideographs are words of their own; the other text keeps whitespace words.
CHINESE_CONTEXT = "《星光》是李白在2018年写的。 Li Bai住长安"
CHINESE_WORDS = ["《", "星", "光", "》", "是", "李", "白", "在", "2018", "年", "写", "的", "。",
                 "Li", "Bai", "住", "长", "安"]  # fmt: skip


def test_chinese_contexts_split_into_characters_and_join_without_spaces(tmp_path):
    words, char_to_word = reader.context_to_words(CHINESE_CONTEXT)
    assert words == CHINESE_WORDS
    assert char_to_word[14:18] == [11, 12, 12, 13]  # 的 。 space L
    assert reader.word_starts(char_to_word)[11:14] == [14, 15, 17]
    data = [
        {
            "paragraphs": [
                {
                    "context": CHINESE_CONTEXT,
                    "qas": [
                        qa("poet", "谁？", [("李白", 5)]),
                        qa("year", "哪年？", [("2018年", 8)]),
                        qa("span", "？", [("。 Li Bai住", 15)]),
                    ],
                }
            ]
        }
    ]
    examples = reader.read_squad_examples(squad_json(tmp_path, data), True).examples
    spans = [(e.start_position, e.end_position) for e in examples]
    assert spans == [(5, 6), (8, 9), (12, 15)]
    texts = [e.words_text(e.start_position, e.end_position) for e in examples]
    assert texts == ["李白", "2018年", "。 Li Bai住"]


def test_read_training_v2(tmp_path):
    result = reader.read_squad_examples(
        squad_json(tmp_path, v2_data()), is_training=True, version_2_with_negative=True
    )
    # "Jon" is not in the word "John"; "Paris France" (str.split) is not in the
    # single word "Paris\u00a0France".
    assert result.num_unrecoverable == 2
    assert result.num_skipped == 2
    assert result.num_unexpected_impossible == 0
    who, born, none = result.examples
    assert (who.qas_id, who.question_text, who.doc_tokens) == ("who", "Who led?", WORDS)
    assert (who.start_position, who.end_position) == (3, 4)
    assert who.orig_answer_text == "John\u202fSmith" and not who.is_impossible
    assert (born.start_position, born.end_position, born.orig_answer_text) == (5, 5, "1895")
    assert born.context_text == CONTEXT and born.answers == ["1895"]
    assert none.is_impossible
    assert (none.start_position, none.end_position, none.orig_answer_text) == (-1, -1, "")
    assert none.answers == []


def test_read_for_prediction_keeps_every_question_with_all_gold_answers(tmp_path):
    data = v2_data()
    data[0]["paragraphs"][0]["qas"][1]["answers"].append({"text": "1895", "answer_start": 28})
    del data[0]["paragraphs"][1]["qas"][0]["answers"]  # test files have none
    result = reader.read_squad_examples(
        squad_json(tmp_path, data), is_training=False, version_2_with_negative=True
    )
    assert [e.qas_id for e in result.examples] == ["who", "born", "typo", "none", "nbsp"]
    assert result.num_skipped == result.num_unrecoverable == 0
    by_id = {e.qas_id: e for e in result.examples}
    assert by_id["born"].answers == ["1895", "1895"]
    assert by_id["typo"].answers == ["Jon"]
    assert by_id["nbsp"].answers == [] and by_id["nbsp"].doc_tokens == [
        "Paris\u00a0France",
        "is",
        "big.",
    ]
    assert by_id["none"].is_impossible and by_id["none"].answers == []
    assert by_id["who"].start_position is None and by_id["who"].orig_answer_text is None


def test_impossible_questions_without_version_2_are_counted(tmp_path):
    path = squad_json(tmp_path, v2_data())
    train = reader.read_squad_examples(path, is_training=True, version_2_with_negative=False)
    assert train.num_unexpected_impossible == 1
    assert [e.qas_id for e in train.examples] == ["who", "born"]
    assert train.num_skipped == 3  # typo, nbsp (unrecoverable) + none
    predict = reader.read_squad_examples(path, is_training=False, version_2_with_negative=False)
    assert predict.num_unexpected_impossible == 1
    assert len(predict.examples) == 5
    assert not any(e.is_impossible for e in predict.examples)


def bad(tmp_path, data, match, is_training=True, version_2_with_negative=False, name="dev.json"):
    path = squad_json(tmp_path, data, name) if not isinstance(data, str) else data
    with pytest.raises(InputError, match=match) as info:
        reader.read_squad_examples(path, is_training, version_2_with_negative)
    assert "\n" not in str(info.value)


def paragraph(*qas, context="A b c."):
    return [{"paragraphs": [{"context": context, "qas": list(qas)}]}]


@pytest.mark.parametrize(
    "data, message",
    [
        (
            paragraph({"id": "q1", "answers": []}),
            r"^.*dev\.json: data\[0\]\.paragraphs\[0\]\.qas\[0\]: no 'question'$",
        ),
        ([{"title": "x"}], r"dev\.json: data\[0\]: no 'paragraphs'$"),
        (
            [{"paragraphs": [{"context": "a", "qas": []}, {"qas": [{"id": "x"}]}]}],
            r"dev\.json: data\[0\]\.paragraphs\[1\]: no 'context'$",
        ),
        (
            [{"paragraphs": [{"context": "a", "qas": "what?"}]}],
            r"data\[0\]\.paragraphs\[0\]: 'qas' is a string, expected a list$",
        ),
        (
            paragraph(qa("q1", "Q?", [("A", 0)]), {"question": "Q?", "answers": []}),
            r"qas\[1\]: no 'id'$",
        ),
        (
            paragraph(qa("q1", "Q?", [("A", 0)]), qa("q2", "  ", [("b", 2)])),
            r"qas\[1\]: question 'q2' is empty$",
        ),
        (
            paragraph({"id": "q1", "question": "Q?", "answers": [{"text": "b"}]}),
            r"qas\[0\]\.answers\[0\]: no 'answer_start'$",
        ),
        (paragraph(qa("q1", "Q?", [("A", 0), ("b", 2)])), r"qas\[0\]: 2 answers"),
        (paragraph(qa("q1", "Q?", [("c.", 5)])), r"answer_start 5 \+ 2 characters is outside"),
        (
            paragraph(
                {"id": "q1", "question": "Q?", "answers": [{"text": "b", "answer_start": True}]}
            ),
            r"'answer_start' is a boolean, expected an integer$",
        ),
    ],
)
def test_malformed_squad_json_names_file_and_place(tmp_path, data, message):
    bad(tmp_path, data, message)


def test_version_2_on_v1_data_reads_answerable_questions_and_counts_them(tmp_path):
    path = squad_json(
        tmp_path,
        [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": "A b.",
                        "qas": [qa("q1", "Q?", [("A", 0)]), qa("q2", "R?", [("b.", 2)])],
                    }
                ],
            }
        ],
    )
    result = reader.read_squad_examples(path, is_training=True, version_2_with_negative=True)
    assert [(e.qas_id, e.is_impossible, e.start_position) for e in result.examples] == [
        ("q1", False, 0),
        ("q2", False, 1),
    ]
    assert result.num_without_is_impossible == 2 and result.num_skipped == 0


def test_not_squad_files(tmp_path):
    bad(tmp_path, str(tmp_path / "missing.json"), r"missing\.json does not exist")
    (tmp_path / "broken.json").write_text('{"data": [', encoding="utf-8")
    bad(tmp_path, str(tmp_path / "broken.json"), r"broken\.json: not valid JSON")
    (tmp_path / "v.json").write_text('{"version": "1.1"}', encoding="utf-8")
    bad(tmp_path, str(tmp_path / "v.json"), r"v\.json: no 'data'$")


def test_empty_question_is_an_error_for_prediction_too(tmp_path):
    bad(
        tmp_path,
        paragraph({"id": "q7", "question": ""}),
        "question 'q7' is empty",
        is_training=False,
    )


# -- alignment ------------------------------------------------------------------

VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "john",
    "smith",
    "(",
    ")",
    "-",
    ".",
    "1895",
    "1943",
    "was",
    "un",
    "##aff",
    "##able",
    "japanese",
]
DOC = ["John", "Smith", "(1895-1943).", "was", "unaffable", "xyz", "Japanese"]
# john | smith | ( 1895 - 1943 ) . | was | un ##aff ##able | [UNK] | japanese
DOC_PIECES = [
    "john",
    "smith",
    "(",
    "1895",
    "-",
    "1943",
    ")",
    ".",
    "was",
    "un",
    "##aff",
    "##able",
    "[UNK]",
    "japanese",
]


@pytest.fixture
def tokenizer(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return tokenization.FullTokenizer(str(path), do_lower_case=True)


def test_tokenize_document(tokenizer):
    pieces, tok_to_orig, orig_to_tok = alignment.tokenize_document(DOC, tokenizer)
    assert pieces == DOC_PIECES
    assert tok_to_orig == [0, 1, 2, 2, 2, 2, 2, 2, 3, 4, 4, 4, 5, 6]
    assert orig_to_tok == [0, 1, 2, 8, 9, 12, 13]
    # A word with no sub-tokens (a zero-width space is deleted) points at
    # the next word's first sub-token.
    assert alignment.tokenize_document(["was", "\u200b", "john"], tokenizer) == (
        ["was", "john"],
        [0, 2],
        [0, 1, 1],
    )


@pytest.mark.parametrize(
    "start, end, text, expected",
    [
        (2, 2, "1895", (3, 3)),  # "(1895-1943)." -> just "1895"
        (2, 2, "1895-1943", (3, 5)),
        (2, 2, "(1895-1943).", (2, 7)),
        (0, 1, "John Smith", (0, 1)),
        (4, 4, "unaffable", (9, 11)),
        (6, 6, "Japan", (13, 13)),  # part of one sub-token: kept as the word
        (4, 4, "unaffabl", (9, 11)),  # no sub-span matches: the word's sub-tokens
        (5, 6, "xyz Japanese", (12, 13)),  # the last word ends at the last sub-token
    ],
)
def test_answer_token_span(tokenizer, start, end, text, expected):
    example = reader.SquadExample("q", "Q?", DOC, text, start, end)
    _, _, orig_to_tok = alignment.tokenize_document(DOC, tokenizer)
    assert alignment.answer_token_span(example, DOC_PIECES, orig_to_tok, tokenizer) == expected


def test_answer_token_span_of_impossible_question(tokenizer):
    example = reader.SquadExample("q", "Q?", DOC, "", -1, -1, is_impossible=True)
    assert alignment.answer_token_span(example, DOC_PIECES, [], tokenizer) == (-1, -1)


def test_improve_answer_span_prefers_leftmost_start_then_longest(tokenizer):
    pieces = ["was", "1895", "was", "1895"]
    assert alignment.improve_answer_span(pieces, 0, 3, tokenizer, "1895") == (1, 1)
    assert alignment.improve_answer_span(pieces, 0, 3, tokenizer, "was 1895") == (0, 1)
    assert alignment.improve_answer_span(pieces, 1, 2, tokenizer, "john") == (1, 2)


# Windows over 10 sub-tokens: A covers 0-5, B 3-8, C 6-9.
SPANS = [(0, 6), (3, 6), (6, 4)]


@pytest.mark.parametrize(
    "position, best",
    [
        (0, 0),  # only A
        (4, 0),  # A: min(4, 1) + .06 = 1.06; B: min(1, 4) + .06 = 1.06; tie -> first
        (5, 1),  # A: min(5, 0) + .06 = 0.06; B: min(2, 3) + .06 = 2.06
        (6, 1),  # B: min(3, 2) + .06 = 2.06; C: min(0, 3) + .04 = 0.04
        (7, 1),  # B: min(4, 1) + .06 = 1.06; C: min(1, 2) + .04 = 1.04
        (8, 2),  # B: min(5, 0) + .06 = 0.06; C: min(2, 1) + .04 = 1.04
        (9, 2),  # only C
    ],
)
def test_is_max_context(position, best):
    assert [alignment.is_max_context(SPANS, i, position) for i in range(3)] == [
        i == best for i in range(3)
    ]


def test_is_max_context_length_breaks_equal_context():
    # Position 2 in windows 0-3 and 1-6: min(2, 1) + .04 = 1.04 < min(1, 4) + .06.
    spans = [(0, 4), (1, 6)]
    assert not alignment.is_max_context(spans, 0, 2)
    assert alignment.is_max_context(spans, 1, 2)


def test_window_token_maps():
    tok_to_orig = [0, 0, 1, 1, 1, 2, 3, 3, 4, 5]
    # Window B (3-8) packed at offset 4: positions 4..9 hold sub-tokens 3..8.
    token_to_orig, max_context = alignment.window_token_maps(SPANS, 1, tok_to_orig, 4)
    assert token_to_orig == {4: 1, 5: 1, 6: 2, 7: 3, 8: 3, 9: 4}
    assert max_context == {4: False, 5: False, 6: True, 7: True, 8: True, 9: False}


@pytest.mark.parametrize(
    "tok_span, window, expected",
    [
        ((3, 5), (2, 4), (6, 8)),  # window 2-5, offset 5: 3-2+5, 5-2+5
        ((3, 5), (0, 6), (8, 10)),
        ((3, 5), (3, 3), (5, 7)),  # answer exactly fills the window
        ((3, 5), (3, 2), (0, 0)),  # window 3-4: the end is outside
        ((3, 5), (4, 6), (0, 0)),  # window 4-9: the start is outside
        ((-1, -1), (0, 14), (0, 0)),  # impossible
    ],
)
def test_window_answer_positions(tok_span, window, expected):
    assert alignment.window_answer_positions(*tok_span, window, 5) == expected


# -- get_final_text -----------------------------------------------------------------


@pytest.mark.parametrize(
    "pred, orig, lower, expected",
    [
        ("steve smith", "Steve Smith's", True, "Steve Smith"),
        ("smith", "Steve Smith's", True, "Smith"),
        ("resume", "Résumé,", True, "Résumé"),  # precomposed é: same length
        ("Résumé", "Résumé.", False, "Résumé"),
        ("1895", "(1895-1943).", True, "1895"),
        # NFD accents: "Re\u0301sume\u0301" has 8 characters, "resume" 6 -> whole text.
        ("resume", "Re\u0301sume\u0301's", True, "Re\u0301sume\u0301's"),
        ("resume", "Résumé", False, "Résumé"),  # cased: not found -> whole text
        ("smith john", "John Smith", True, "John Smith"),  # not found -> whole text
    ],
)
def test_get_final_text(pred, orig, lower, expected):
    assert get_final_text(pred, orig, lower) == expected


# -- n-best predictions ---------------------------------------------------------------

TWO_WINDOW_WORDS = ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
# Query "q" -> window tokens start at 3. Window 0 = words 0-2, window 1 =
# words 2-4; Gamma has its maximum context in window 0 (tie, first wins).
W0 = WindowMeta(
    0,
    ["[CLS]", "q", "[SEP]", "alpha", "beta", "gamma", "[SEP]"],
    {3: 0, 4: 1, 5: 2},
    {3: True, 4: True, 5: True},
)
W1 = WindowMeta(
    0,
    ["[CLS]", "q", "[SEP]", "gamma", "delta", "epsilon", "[SEP]"],
    {3: 2, 4: 3, 5: 4},
    {3: False, 4: True, 5: True},
)
# 8 positions: position 7 is padding, with the highest logits of window 0.
W0_START = [-1.0, 0.0, 0.0, 1.0, 3.0, 0.5, 0.0, 5.0]
W0_END = [-1.0, 0.0, 0.0, 0.2, 1.0, 2.0, 0.0, 4.0]
W1_START = [0.25, 0.0, 0.0, 4.0, 0.5, 2.5, 0.0, -1.0]
W1_END = [-0.5, 0.0, 0.0, 0.1, 0.3, 3.0, 0.0, -1.0]
# n_best_size 3: window 0 starts 7, 4, 3 / ends 7, 5, 4 -> (4,5) Beta Gamma 5.0,
# (4,4) Beta 4.0, (3,4) Alpha Beta 2.0 ((3,5) is 3 long, 7 is padding).
# Window 1 starts 3, 4, 5 / ends 5, 4, 3 -> start 3 lacks max context
# ((3,4) Gamma Delta would score 4.3); (5,5) Epsilon 5.5, (4,5) Delta
# Epsilon 3.5, (4,4) Delta 0.8.


def softmax(*scores):
    exps = [math.exp(s - max(scores)) for s in scores]
    return [e / sum(exps) for e in exps]


def run(windows, examples=None, **kwargs):
    post = SquadPostprocessor(examples or [example("q0", TWO_WINDOW_WORDS)], **kwargs)
    for meta, start, end in windows:
        post.add(meta, start, end)
    return post.finish()


def example(qas_id, words):
    return reader.SquadExample(qas_id, "q", words)


def two_windows():
    return [
        (W0, W0_START, W0_END),
        (W1, np.array(W1_START, np.float32), np.array(W1_END, np.float32)),
    ]


def test_chinese_answers_are_cut_from_the_context_without_spaces():
    words, char_to_word = reader.context_to_words(CHINESE_CONTEXT)
    chinese = reader.SquadExample(
        "zh", "q", words, context_text=CHINESE_CONTEXT, word_starts=reader.word_starts(char_to_word)
    )
    tokens = ["[CLS]", "q", "[SEP]", "李", "白", "在", "2018", "年", "[SEP]"]
    window = WindowMeta(0, tokens, {3: 5, 4: 6, 5: 7, 6: 8, 7: 9}, dict.fromkeys(range(3, 8), True))
    logits = [0.0] * len(tokens)
    post = SquadPostprocessor([chinese], n_best_size=2)
    post.add(window, [*logits[:3], 5.0, 0, 0, 4.0, *logits[7:]], [*logits[:4], 5.0, 0, 0, 4.0, 0])
    nbest = post.finish().nbest["zh"]
    # (3, 4) 10.0, (6, 7) 8.0, (3, 7) 9.0: the original would answer "李 白".
    assert [entry["text"] for entry in nbest] == ["李白", "李白在2018年"]


def test_nbest_across_two_windows():
    out = run(two_windows(), n_best_size=3, max_answer_length=2)
    assert out.predictions == {"q0": "Epsilon"}
    assert out.null_odds is None
    nbest = out.nbest["q0"]
    assert [list(entry) for entry in nbest] == [
        ["text", "probability", "start_logit", "end_logit"]
    ] * 3
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest] == [
        ("Epsilon", 2.5, 3.0),
        ("Beta Gamma", 3.0, 2.0),
        ("Beta", 3.0, 1.0),
    ]
    assert all(type(e["start_logit"]) is float for e in nbest)
    assert [e["probability"] for e in nbest] == pytest.approx(softmax(5.5, 5.0, 4.0))
    json.dumps(out.nbest)  # NumPy logits came out as Python floats


def test_max_answer_length_filters_spans():
    # Length 1 only: (5,5) Epsilon 5.5, (4,4) Beta 4.0, (4,4) of window 1 Delta 0.8.
    out = run(two_windows(), n_best_size=3, max_answer_length=1)
    assert [e["text"] for e in out.nbest["q0"]] == ["Epsilon", "Beta", "Delta"]


def test_duplicate_texts_are_kept_once():
    # Window 0 twice: its three texts come again with the same scores.
    out = run(two_windows() + [(W0, W0_START, W0_END)], n_best_size=3, max_answer_length=2)
    assert [e["text"] for e in out.nbest["q0"]] == ["Epsilon", "Beta Gamma", "Beta"]
    # n_best_size 5 adds start 5 to window 0 (Gamma (5,5) 2.5, max context there).
    out = run(two_windows() + [(W0, W0_START, W0_END)], n_best_size=5, max_answer_length=2)
    assert [e["text"] for e in out.nbest["q0"]] == [
        "Epsilon",
        "Beta Gamma",
        "Beta",
        "Delta Epsilon",
        "Gamma",
    ]


def test_each_window_keeps_n_best_distinct_texts():
    # Any span inside "Re\u0301sume\u0301" falls back to the whole word (its NFD
    # accents change the length), so (3,4) 6.0 and (4,4) 5.5 give the same
    # text; (3,5) 4.0 is the second distinct one.
    meta = WindowMeta(
        0,
        ["[CLS]", "q", "[SEP]", "re", "##sume", "zeta", "[SEP]"],
        {3: 0, 4: 0, 5: 1},
        {3: True, 4: True, 5: True},
    )
    start = [0.0, 0.0, 0.0, 3.0, 2.5, 0.0, 0.0]
    end = [0.0, 0.0, 0.0, 0.0, 3.0, 1.0, 0.0]
    out = run([(meta, start, end)], [example("r", ["Re\u0301sume\u0301", "Zeta"])], n_best_size=2)
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in out.nbest["r"]] == [
        ("Re\u0301sume\u0301", 3.0, 3.0),
        ("Re\u0301sume\u0301 Zeta", 3.0, 1.0),
    ]


def test_wordpieces_and_tie_order():
    words = ["Unaffable,", "fellow"]
    meta = WindowMeta(
        0,
        ["[CLS]", "q", "[SEP]", "un", "##aff", "##able", ",", "fellow", "[SEP]"],
        {3: 0, 4: 0, 5: 0, 6: 0, 7: 1},
        {i: True for i in range(3, 8)},
    )
    start = [0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    end = [0.0, 0.0, 0.0, 0.0, 0.0, 4.0, 1.0, 0.0, 0.0]
    out = run([(meta, start, end)], [example("w", words)], n_best_size=20)
    # (3,5) 9.0, (3,6) 6.0, then score 5.0 for ends 3, 4, 7 in that order (equal
    # end logits rank by position), then (4,5) "##aff ##able" 4.0.
    assert [e["text"] for e in out.nbest["w"]][:6] == [
        "Unaffable",
        "Unaffable,",
        "Un",
        "Unaff",
        "Unaffable, fellow",
        "affable",
    ]
    # With n_best_size 4 only positions 3, 0, 1, 2 start and 5, 6, 0, 1 end.
    out = run([(meta, start, end)], [example("w", words)], n_best_size=4)
    assert [e["text"] for e in out.nbest["w"]] == ["Unaffable", "Unaffable,"]


def test_version_2_null_answer_and_threshold():
    # Null score: min(-1 + -1, 0.25 + -0.5) = -2.0, from window 0.
    # Best non-null: Epsilon 2.5 + 3.0 -> difference -2.0 - 2.5 - 3.0 = -7.5.
    for threshold, answer in ((-8.0, ""), (-7.5, "Epsilon"), (0.0, "Epsilon")):
        out = run(
            two_windows(),
            n_best_size=3,
            max_answer_length=2,
            version_2_with_negative=True,
            null_score_diff_threshold=threshold,
        )
        assert out.predictions == {"q0": answer}
        assert out.null_odds == {"q0": -7.5}
    nbest = out.nbest["q0"]
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest] == [
        ("Epsilon", 2.5, 3.0),
        ("Beta Gamma", 3.0, 2.0),
        ("Beta", 3.0, 1.0),
        ("", -1.0, -1.0),
    ]
    assert [e["probability"] for e in nbest] == pytest.approx(softmax(5.5, 5.0, 4.0, -2.0))


def test_version_2_null_ranks_after_equal_non_null_scores():
    meta = WindowMeta(
        0, ["[CLS]", "q", "[SEP]", "alpha", "beta", "[SEP]"], {3: 0, 4: 1}, {3: True, 4: True}
    )
    start = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    end = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    out = run(
        [(meta, start, end)],
        [example("t", ["Alpha", "Beta"])],
        version_2_with_negative=True,
        null_score_diff_threshold=0.0,
    )
    # Null 2.0 ties Alpha (3,3) 2.0; Alpha Beta 1.0; Beta 0.0. 2 - 1 - 1 = 0, not > 0.
    assert [e["text"] for e in out.nbest["t"]] == ["Alpha", "", "Alpha Beta", "Beta"]
    assert out.predictions == {"t": "Alpha"} and out.null_odds == {"t": 0.0}


def test_version_2_without_any_valid_span_does_not_crash():
    meta = WindowMeta(0, ["[CLS]", "q", "[SEP]", "alpha", "[SEP]"], {3: 0}, {3: True})
    start = [0.5, 5.0, 0.0, 0.0, 0.0]  # n_best_size 1: only the question token
    end = [0.25, 5.0, 0.0, 0.0, 0.0]
    examples = [example("a", ["Alpha"]), example("nowin", ["Beta"])]
    out = run(
        [(meta, start, end)],
        examples,
        n_best_size=1,
        version_2_with_negative=True,
        null_score_diff_threshold=10.0,
    )
    assert out.predictions == {"a": "", "nowin": ""}
    # Best non-null is the placeholder (score 0): 0.75 - 0; a question with no
    # window keeps the original's null score 1000000.
    assert out.null_odds == {"a": 0.75, "nowin": 1000000.0}
    nbest = out.nbest["a"]
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in nbest] == [
        ("", 0.5, 0.25),
        ("empty", 0.0, 0.0),
    ]
    assert [e["probability"] for e in nbest] == pytest.approx(softmax(0.75, 0.0))


def test_version_1_without_any_valid_span_answers_empty():
    meta = WindowMeta(0, ["[CLS]", "q", "[SEP]", "alpha", "[SEP]"], {3: 0}, {3: True})
    out = run(
        [(meta, [0.0, 5.0, 0, 0, 0], [0.0, 5.0, 0, 0, 0])],
        [example("a", ["Alpha"]), example("b", ["Beta"])],
        n_best_size=1,
    )
    assert out.predictions == {"a": "empty", "b": "empty"}
    assert out.nbest["a"] == [
        {"text": "empty", "probability": 1.0, "start_logit": 0.0, "end_logit": 0.0}
    ]


def test_windows_of_different_examples_may_interleave():
    meta = WindowMeta(1, ["[CLS]", "q", "[SEP]", "beta", "[SEP]"], {3: 0}, {3: True})
    logits = [0.0, 0.0, 0.0, 1.0, 0.0]
    windows = [(meta, logits, logits), (W0, W0_START, W0_END), (W1, W1_START, W1_END)]
    out = run(
        windows,
        [example("q0", TWO_WINDOW_WORDS), example("q1", ["Beta"])],
        n_best_size=3,
        max_answer_length=2,
    )
    assert list(out.predictions.items()) == [("q0", "Epsilon"), ("q1", "Beta")]


def test_too_few_logits_is_an_error():
    post = SquadPostprocessor([example("q0", TWO_WINDOW_WORDS)])
    with pytest.raises(ValueError, match="window of 7 tokens"):
        post.add(W0, [0.0] * 6, [0.0] * 8)


def test_write_json_is_atomic_and_indented(tmp_path):
    path = str(tmp_path / "predictions.json")
    postprocess.write_json(path, {"q1": "Denver Broncos", "q2": ""})
    assert open(path, encoding="utf-8").read() == (
        '{\n    "q1": "Denver Broncos",\n    "q2": ""\n}\n'
    )
    assert os.listdir(tmp_path) == ["predictions.json"]
    with pytest.raises(TypeError):
        postprocess.write_json(path, {"q1": object()})
    assert os.listdir(tmp_path) == ["predictions.json"]  # old file kept, no temp file
    assert json.load(open(path, encoding="utf-8"))["q1"] == "Denver Broncos"


def test_write_prediction_files(tmp_path):
    out = run(two_windows(), n_best_size=3, max_answer_length=2, version_2_with_negative=True)
    paths = postprocess.write_prediction_files(str(tmp_path), out)
    assert [os.path.basename(p) for p in paths] == [
        "predictions.json",
        "nbest_predictions.json",
        "null_odds.json",
    ]
    assert json.load(open(paths[2], encoding="utf-8")) == {"q0": -7.5}
