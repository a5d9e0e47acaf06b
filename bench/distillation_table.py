"""docs/distillation.md's table: for each classifier SavedModel (a teacher
and its students, fine-tuned on demo/data/classify), the dev accuracy, size
on disk and examples/s, as the float32 SavedModel and as LiteRT int8 (what
`export_model.py --export_format=litert --int8` writes).

Speed: the dev set's own token ids (tokenized once), batches of
--batch_size, --threads threads, rounds alternating between the models so
that machine noise hits all alike; the best round counts.

    python bench/distillation_table.py --runs=teacher:out/distil/teacher/export,...
"""

import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

from bert_tf.data.classification import registry  # noqa: E402
from bert_tf.export.deploy import accuracy_check, convert, load_runner  # noqa: E402
from bert_tf.export.deploy.litert import max_seq_length_of, vocab_file_of  # noqa: E402
from bert_tf.text.tokenization import FullTokenizer  # noqa: E402

DEMO_DATA = os.path.join(os.path.dirname(__file__), "..", "demo", "data", "classify")
DEMO_CLASSIFY = dict(
    text_a_column="sentence",
    label_column="label",
    labels=("town", "person", "animal", "ship", "invention"),
)
INT8 = "litert_int8"

flags.DEFINE_list("runs", None, "name:SavedModel folder, ... (a run's --export_dir).")
flags.DEFINE_integer("batch_size", 32, "Examples a call.")
flags.DEFINE_integer("threads", 2, "Threads of every runtime.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds; the best round counts.")
flags.DEFINE_float("seconds", 3.0, "Time per model per round (at least one call).")
FLAGS = flags.FLAGS


def size_mb(path):
    if os.path.isdir(path):
        return (
            sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs) / 1e6
        )
    return os.path.getsize(path) / 1e6


def dev_batches(saved_model_dir, examples):
    """The dev texts as `[CLS] text [SEP]` id batches of the model's length."""
    seq = max_seq_length_of_dir(saved_model_dir)
    tokenizer = FullTokenizer(vocab_file_of(saved_model_dir), True)
    rows = []
    for example in examples:
        ids = tokenizer.convert_tokens_to_ids(
            ["[CLS]", *tokenizer.tokenize(example.text_a)[: seq - 2], "[SEP]"]
        )
        rows.append(ids + [0] * (seq - len(ids)))
    ids = np.array(rows, np.int32)
    usable = len(ids) - len(ids) % FLAGS.batch_size
    return [
        {"input_word_ids": b, "input_mask": (b > 0).astype(np.int32), "input_type_ids": 0 * b}
        for b in np.split(ids[:usable], usable // FLAGS.batch_size)
    ]


def max_seq_length_of_dir(saved_model_dir):
    from bert_tf.export.deploy.litert import IDS_SIGNATURE, load_saved_model

    return max_seq_length_of(load_saved_model(saved_model_dir).signatures[IDS_SIGNATURE])


def rate(run, batches, seconds):
    start, calls = time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - start < seconds:
        run(batches[calls % len(batches)])
        calls += 1
    return calls * FLAGS.batch_size / (time.perf_counter() - start)


def main(argv):
    del argv
    runs = dict(item.split(":", 1) for item in FLAGS.runs)
    examples = registry.get_processor("generic", **DEMO_CLASSIFY).get_dev_examples(DEMO_DATA)
    rows, runners = {}, {}
    with tempfile.TemporaryDirectory() as work:
        for name, saved_model in runs.items():
            int8 = convert(saved_model, os.path.join(work, f"{name}.tflite"), INT8)
            report = accuracy_check(saved_model, int8, INT8, examples)
            rows[name] = {
                "accuracy": report["saved_model_accuracy"],
                "int8_accuracy": report[f"{INT8}_accuracy"],
                "mb": size_mb(os.path.join(saved_model, "variables")),
                "int8_mb": size_mb(int8),
            }
            batches = dev_batches(saved_model, examples)
            runners[name] = [
                (load_runner(saved_model, "saved_model", FLAGS.threads), batches),
                (load_runner(int8, INT8, FLAGS.threads), batches),
            ]
            for run, inputs in runners[name]:
                run(inputs[0])  # the first call (tracing, allocation) is not timed
        rates = {name: [0.0, 0.0] for name in runs}
        for _ in range(FLAGS.rounds):
            for name, pair in runners.items():
                for i, (run, inputs) in enumerate(pair):
                    rates[name][i] = max(rates[name][i], rate(run, inputs, FLAGS.seconds))
    print(
        f"dev: {len(examples)} examples; speed: batch {FLAGS.batch_size}, {FLAGS.threads} threads\n"
    )
    print(
        "| model | dev accuracy float32 | dev accuracy int8 | MB float32 | MB int8 "
        "| examples/s float32 | examples/s int8 |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        print(
            f"| {name} | {row['accuracy']:.3f} | {row['int8_accuracy']:.3f} | {row['mb']:.1f} "
            f"| {row['int8_mb']:.1f} | {rates[name][0]:.0f} | {rates[name][1]:.0f} |"
        )


if __name__ == "__main__":
    flags.mark_flag_as_required("runs")
    app.run(main)
