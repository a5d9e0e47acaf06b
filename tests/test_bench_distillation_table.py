"""bench/distillation_table.py's data and table, on a corpus laid out as
vaderSentiment's source archive lays it out: the three classes by the
raters' mean score, the splits' sizes, no text in two splits (repeated
snippets dropped), and the share of the gap a row recovers."""

import json
import os
import subprocess
import sys

from shared import HANG_TIMEOUT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(REPO, "bench")


def bench(code, *args):
    """Runs `code` with the bench imported as `b`, in a process of its own
    (the bench defines its flags on absl's global ones); returns its JSON."""
    run = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import json, sys; sys.path.insert(0, {BENCH!r}); "
            f"import distillation_table as b; b.FLAGS(['b']); {code}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_the_task_splits_three_classes_without_a_text_in_two_splits(tmp_path):
    folder = tmp_path / "vaderSentiment-3.3.2" / "additional_resources" / "hutto_ICWSM_2014"
    folder.mkdir(parents=True)
    scores = [-2.0, -1.5, 0.0, 1.5, 1.6]
    lines = [f"{i}\t{scores[i % 5]}\tsnippet  number {i}" for i in range(3400)]
    lines += [f"{i}\t0.0\tsnippet number {i}" for i in range(0, 100, 2)]  # repeated texts
    lines[7] = "7\t3.0\t"  # no text: skipped
    (folder / "movieReviewSnippets_GroundTruth.txt").write_text("\n".join(lines) + "\n")
    task = tmp_path / "task"
    bench(f"b.write_task({str(tmp_path)!r}, {str(task)!r}); print('[]')")
    splits = {}
    for name in ("train", "dev"):
        rows = (task / f"{name}.tsv").read_text().splitlines()
        assert rows[0] == "text\tlabel"
        splits[name] = dict(row.split("\t") for row in rows[1:])
    splits["unlabeled"] = dict.fromkeys((task / "unlabeled.txt").read_text().splitlines())
    assert [len(splits[n]) for n in ("train", "dev", "unlabeled")] == [2400, 800, 3399 - 3200]
    texts = [text for split in splits.values() for text in split]
    assert len(set(texts)) == len(texts) == 3399
    expected = {-2.0: "neg", -1.5: "neutral", 0.0: "neutral", 1.5: "neutral", 1.6: "pos"}
    for text, label in {**splits["train"], **splits["dev"]}.items():
        assert label == expected[scores[int(text.split()[-1]) % 5]], text


def test_the_table_says_the_share_of_the_gap_a_row_recovers():
    """From the best labels-alone row (0.60, not 0.50) to the teacher (0.70)."""
    rows = {
        "teacher": {"mean": 0.70, "std": 0.01, "values": [0.69, 0.71], "learning_rate": 5e-5},
        "labels": {"mean": 0.60, "std": 0.0, "values": [0.6, 0.6], "learning_rate": 5e-5},
        "labels_lr_1e-4": {"mean": 0.50, "std": 0.0, "values": [0.5], "learning_rate": 1e-4},
        "round_one": {"mean": 0.675, "std": 0.0, "values": [0.675], "learning_rate": 1e-4},
    }
    speeds = {
        "round_one": {
            "saved_model_accuracy": 0.68,
            "int8_accuracy": 0.67,
            "examples_per_s": 1300.4,
            "int8_examples_per_s": 3000.6,
        }
    }
    lines = bench(f"print(json.dumps(b.table({rows!r}, {speeds!r})))").splitlines()
    assert lines[2].startswith("| teacher: ")
    assert lines[2].endswith("| 0.7000 ± 0.0100 (0.690, 0.710) |  | 5e-05 | | | |")
    assert lines[5].endswith(
        "| 0.6750 ± 0.0000 (0.675) | 75% | 0.0001 | 0.6800, 0.6700 | 1300 | 3001 |"
    )
