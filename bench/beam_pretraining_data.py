"""Benchmark of create_pretraining_data.py on Apache Beam against the local path.

Usage (needs the beam extra: `make bench-beam`):
  python bench/beam_pretraining_data.py [--corpus_mb=8] [--workers=2] [--repeats=3]

Peers, each a fresh process timed from start to exit (imports included), on
the corpus of bench/pretraining_data.py with its flags (--corpus_mb,
--dupe_factor, --vocab_file, --repeats):
  local  create_pretraining_data.py --num_workers=N.
  beam   create_pretraining_data.py --runner=DirectRunner --direct_num_workers=N
         --direct_running_mode=multi_processing --num_output_shards=N.
Both make the same records. The table gives the median of the runs (peers
interleaved), the ratio of records/s to the local path's in the same run,
and "records/CPU s": records per CPU second of all processes, the figure a
cluster's throughput per core follows. Columns as in bench/pretraining_data.py.
"""

import json
import os
import statistics
import sys
import tempfile

from absl import app, flags
from pretraining_data import REPO, default_vocab, generate_corpus, timed_run

from bert_tf.data.pretraining.writer import summary_path

FLAGS = flags.FLAGS
flags.DEFINE_integer("workers", 2, "Worker processes of each peer.")

PEERS = ("local", "beam")


def run_peer(peer, corpus, out_dir, vocab_file):
    """One run; returns its numbers."""
    output = os.path.join(out_dir, f"{peer}.tfrecord")
    command = [
        sys.executable,
        os.path.join(REPO, "create_pretraining_data.py"),
        f"--input_file={corpus}",
        f"--vocab_file={vocab_file}",
        f"--dupe_factor={FLAGS.dupe_factor}",
        "--show_progress=false",
    ]
    if peer == "local":
        command += [f"--output_file={output}", f"--num_workers={FLAGS.workers}"]
    else:
        command += [
            f"--output_file={output}",
            f"--num_output_shards={FLAGS.workers}",
            "--runner=DirectRunner",
            f"--direct_num_workers={FLAGS.workers}",
            "--direct_running_mode=multi_processing",
        ]
    wall, cpu, max_cpu, peak_mb, _ = timed_run(command)
    with open(summary_path(output)) as f:
        instances = json.load(f)["instances"]
    return {"wall": wall, "cpu": cpu, "max_cpu": max_cpu, "peak_mb": peak_mb, "records": instances}


def main(argv):
    del argv
    vocab_file = FLAGS.vocab_file or default_vocab()
    print(
        f"{'corpus':>7} {'peer':>6} {'workers':>7} {'records':>8} {'wall s':>7} "
        f"{'records/s':>9} {'x local':>7} {'CPU s':>7} {'records/CPU s':>13} {'peak MB':>8}"
    )
    for megabytes in map(float, FLAGS.corpus_mb):
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(tmp, "corpus.txt")
            generate_corpus(corpus, megabytes)
            runs = {peer: [] for peer in PEERS}
            for _ in range(FLAGS.repeats):
                for peer in PEERS:
                    runs[peer].append(run_peer(peer, corpus, tmp, vocab_file))
            medians = {
                peer: {key: statistics.median(r[key] for r in results) for key in results[0]}
                for peer, results in runs.items()
            }
            local_rate = medians["local"]["records"] / medians["local"]["wall"]
            for peer, m in medians.items():
                rate = m["records"] / m["wall"]
                print(
                    f"{megabytes:>5.0f}MB {peer:>6} {FLAGS.workers:>7} {m['records']:>8.0f} "
                    f"{m['wall']:>7.1f} {rate:>9.0f} {rate / local_rate:>7.2f} {m['cpu']:>7.1f} "
                    f"{m['records'] / m['cpu']:>13.0f} {m['peak_mb']:>8.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    app.run(main)
