"""SQuAD windows: the original's doc_stride windows, max-context marks and
training positions, and their records."""

import numpy as np
import pytest

from bert_tf.data.squad import features
from bert_tf.data.squad.reader import SquadExample
from bert_tf.text import tokenization
from bert_tf.text.model_text import TextSettings

WORDS = [f"w{i}" for i in range(300)]


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    vocab = tmp_path_factory.mktemp("squad_vocab") / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "q", *WORDS]) + "\n")
    return tokenization.FullTokenizer(str(vocab))


def example(answer_words=(100, 102)):
    first, last = answer_words
    return SquadExample("x", "q q q", list(WORDS), " ".join(WORDS[first : last + 1]), first, last)


def test_windows_of_a_long_context(tokenizer):
    windows = features.convert_example(
        example(),
        0,
        tokenizer,
        max_seq_length=64,
        doc_stride=32,
        max_query_length=64,
        is_training=True,
    )
    # 64 - 3 question tokens - [CLS] - 2 [SEP] = 58 context tokens per window,
    # starting 32 apart until a window reaches the 300th token: 0, 32, ..., 256.
    starts = [0, 32, 64, 96, 128, 160, 192, 224, 256]
    assert len(windows) == len(starts)
    for window, start in zip(windows, starts):
        length = min(58, 300 - start)
        assert window.tokens == [
            "[CLS]",
            "q",
            "q",
            "q",
            "[SEP]",
            *WORDS[start : start + length],
            "[SEP]",
        ]
        assert window.token_to_orig_map == {5 + i: start + i for i in range(length)}
        assert sum(window.inputs["input_mask"]) == len(window.tokens)
        assert window.inputs["input_type_ids"][: len(window.tokens)] == [0] * 5 + [1] * (length + 1)
    # Each context token has its maximum context in exactly one window: the one
    # where min(left, right) + 0.01 * length is largest.
    for position in range(300):
        best = [
            w.token_is_max_context.get(5 + position - start, False)
            for w, start in zip(windows, starts)
        ]
        assert sum(best) == 1, position
    scores = [
        min(150 - s, s + min(58, 300 - s) - 1 - 150) + 0.01 * min(58, 300 - s)
        if s <= 150 < s + 58
        else -1
        for s in starts
    ]
    assert windows[int(np.argmax(scores))].token_is_max_context[5 + 150 - starts[np.argmax(scores)]]
    # The answer (words 100-102) is whole in the windows starting at 64 and 96.
    positions = [(w.start_position, w.end_position) for w in windows]
    assert positions == [(0, 0), (0, 0), (41, 43), (9, 11)] + [(0, 0)] * 5


def test_question_is_cut_and_impossible_questions_point_at_cls(tokenizer):
    impossible = SquadExample("y", "q " * 20, list(WORDS[:10]), "", -1, -1, is_impossible=True)
    windows = features.convert_example(
        impossible, 3, tokenizer, 32, 8, max_query_length=4, is_training=True
    )
    assert len(windows) == 1 and windows[0].example_index == 3
    assert windows[0].tokens == ["[CLS]", "q", "q", "q", "q", "[SEP]", *WORDS[:10], "[SEP]"]
    assert (windows[0].start_position, windows[0].end_position) == (0, 0)


def test_records_round_trip_with_padding_windows(tokenizer, tmp_path):
    windows = features.convert_example(example(), 0, tokenizer, 64, 32, 64, is_training=False)
    stamp = tmp_path / "input.json"  # only its size and time go into the fingerprint
    stamp.write_text("{}")
    written = features.ensure_squad_features(
        str(tmp_path),
        "predict",
        windows,
        input_file=str(stamp),
        text=TextSettings(str(stamp), True, 64),
        doc_stride=32,
        max_query_length=64,
        is_training=False,
        pad_examples_to_multiple_of=4,
    )
    assert (written.num_examples, written.num_features, written.num_records) == (1, 9, 12)
    batches = list(features.make_dataset(written.path, 64, 4, False).as_numpy_iterator())
    unique_ids = np.concatenate([b["unique_ids"] for b in batches]).tolist()
    assert unique_ids == list(range(9)) + [features.PADDING_UNIQUE_ID] * 3
    ids = np.concatenate([b["input_word_ids"] for b in batches])
    assert ids[4].tolist() == windows[4].inputs["input_word_ids"]
    assert not ids[9:].any()
