"""The in-graph window packer (used by the exported SavedModel) against the
Python feature conversion (used by training, eval and predict)."""

import random

import pytest
import tensorflow as tf

from bert_tf.data.classification.features import convert_example
from bert_tf.data.classification.processor import InputExample
from bert_tf.text.packing import pack_example_windows


class NumberTokenizer:
    """Whitespace tokens; a number is its own id, so windows are easy to read."""

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [{"[CLS]": 1, "[SEP]": 2}.get(t) or int(t) for t in tokens]


def ragged(rows):
    return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1, inner_shape=())


@pytest.mark.parametrize("seed", range(6))
def test_graph_windows_equal_python_features(seed):
    rng = random.Random(seed)
    tokenizer = NumberTokenizer()
    windowed_cases = 0
    for _ in range(40):
        max_seq_length = rng.randint(5, 20)
        stride = rng.choice([None, 1, 2, 3, 7])
        pair = rng.random() < 0.6
        examples = []
        for i in range(rng.randint(1, 4)):
            text_a = " ".join(str(rng.randint(10, 99)) for _ in range(rng.randint(0, 40)))
            text_b = " ".join(str(rng.randint(10, 99)) for _ in range(rng.randint(0, 25)))
            examples.append(InputExample(f"t-{i}", text_a, text_b if pair else None, "0"))
        expected = [
            (i, f.input_ids, f.segment_ids, f.input_mask)
            for i, e in enumerate(examples)
            for f in convert_example(
                e, ["0"], max_seq_length, tokenizer, long_text_stride=stride, example_index=i
            )
        ]
        segments = [ragged([tokenizer.convert_tokens_to_ids(e.text_a.split()) for e in examples])]
        if pair:  # an empty text_b makes a single-text example, in both
            segments.append(
                ragged([tokenizer.convert_tokens_to_ids(e.text_b.split()) for e in examples])
            )
        inputs, example_ids, _ = pack_example_windows(segments, max_seq_length, 1, 2, stride)
        got = list(
            zip(
                example_ids.numpy().tolist(),
                inputs["input_word_ids"].numpy().tolist(),
                inputs["input_type_ids"].numpy().tolist(),
                inputs["input_mask"].numpy().tolist(),
            )
        )
        assert got == expected, (max_seq_length, stride)
        windowed_cases += len({i for i, *_ in expected}) < len(expected)
    assert windowed_cases > 0  # the cases did exercise windows
