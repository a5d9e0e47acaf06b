"""Peak memory of a training step: BERT-Base / BERT-Large x sequence length x
batch, with and without recomputation, float32 and mixed_bfloat16; and the
largest batch that fits a budget.

Each measurement is a fresh process that builds the pre-training model (as
run_pretraining.py trains it: AdamW, dropout 0.1, 20 masked positions per
sequence), runs three training steps on one synthetic batch and prints its
peak memory: the process's peak resident set on the CPU, TensorFlow's peak
allocation (`tf.config.experimental.get_memory_info`) on a GPU. The step's
seconds (the third step's) come with it, so the cost of recomputing shows.

The largest batch within `--budget_gb`: peak memory grows about linearly
with the batch, so the bench measures batches 1 and 2 and then probes where
the line through the two nearest measurements meets the budget, until the
batch it reports fits and the one above it (measured too) does not. With
`--cache`, a rerun measures only what the cache lacks.

    python bench/memory.py [--models=base,large] [--seq_lengths=128,384,512] \\
        [--recompute=none,layer,attention] [--dtypes=float32] [--budget_gb=12] \\
        [--batches=8] [--max_batch=64] [--cache=memory_cache.json]
"""

import functools
import json
import os
import resource
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

from absl import app, flags  # noqa: E402

flags.DEFINE_list("models", ["base", "large"], "Models: tiny, small, base, large.")
flags.DEFINE_list("seq_lengths", ["128", "384", "512"], "Sequence lengths.")
flags.DEFINE_list("recompute", ["none", "layer"], "Recompute modes (none, layer, attention).")
flags.DEFINE_list("dtypes", ["float32"], "float32 and / or mixed_bfloat16.")
flags.DEFINE_list("batches", [], "Also measure these batch sizes in every setting.")
flags.DEFINE_float("budget_gb", 12.0, "Memory budget for the largest batch (GB = 10^9 bytes).")
flags.DEFINE_integer("max_batch", 64, "Search no batch above this.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_string("output", None, "Also write the table's rows to this JSON file.")
flags.DEFINE_string(
    "cache",
    None,
    "Keep each measurement in this JSON file; a rerun measures only what is not there.",
)
flags.DEFINE_string("step", None, "Internal: measure one step, model,seq,batch,recompute,dtype.")
FLAGS = flags.FLAGS

GB = 1e9


def measure_step(model, seq, batch, recompute, dtype):
    """{"peak_gb", "step_s"} of three training steps in this process."""
    import keras
    import tensorflow as tf

    keras.mixed_precision.set_global_policy(dtype)
    from pretraining_step import bench_config, bert_tf_trainer, make_batch

    from bert_tf.modeling import BertPretrainingModel

    config = bench_config(model)
    data = make_batch(config, batch, seq, FLAGS.predictions)
    trainer, iterator = bert_tf_trainer(
        BertPretrainingModel(config, recompute=recompute), data, xla=False
    )
    trainer.train_steps(iterator, 2)
    start = time.perf_counter()
    float(trainer.train_steps(iterator, 1)["loss"])
    step_s = time.perf_counter() - start
    if tf.config.list_physical_devices("GPU"):
        peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    else:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
    return {"peak_gb": peak / GB, "step_s": step_s}


def measured(model, seq, batch, recompute, dtype, cache):
    """`measure_step` in a fresh process (None: it ran out of memory),
    remembered in `cache` (a dict saved to `--cache`)."""
    setting = f"{model},{seq},{batch},{recompute},{dtype}"
    if setting not in cache:
        done = subprocess.run(
            [sys.executable, os.path.abspath(__file__), f"--step={setting}"],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            cache[setting] = json.loads(done.stdout.strip().splitlines()[-1])
        elif done.returncode in (-9, 137) or "ResourceExhaustedError" in done.stderr:
            cache[setting] = None
        else:
            raise RuntimeError(f"{setting} failed:\n{done.stderr[-3000:]}")
        if FLAGS.cache:
            with open(FLAGS.cache + ".tmp", "w") as f:
                json.dump(cache, f, indent=1)
            os.replace(FLAGS.cache + ".tmp", FLAGS.cache)
    result = cache[setting]
    if result is None:
        print(f"  {setting}: out of memory", flush=True)
    else:
        print(f"  {setting}: {result['peak_gb']:.2f} GB, step {result['step_s']:.2f} s", flush=True)
    return result


def largest_batch(measure):
    """The largest batch whose step fits `--budget_gb` (0: not even one) and
    `{batch: measure(batch)}` of the batches it tried. Peak memory is about
    linear in the batch: each probe is where the line through the two
    nearest measurements meets the budget, until a batch fits and the one
    above it (measured too) does not."""
    runs = {}

    def peak(batch):
        if batch not in runs:
            runs[batch] = measure(batch)
        return float("inf") if runs[batch] is None else runs[batch]["peak_gb"]

    if peak(1) > FLAGS.budget_gb:
        return 0, runs
    peak(2)
    fitting = max(b for b in runs if peak(b) <= FLAGS.budget_gb)
    too_large = min((b for b in runs if peak(b) > FLAGS.budget_gb), default=FLAGS.max_batch + 1)
    while too_large - fitting > 1:
        below = sorted(b for b in runs if peak(b) <= FLAGS.budget_gb)[-2:]
        above = min((b for b in runs if b > fitting and peak(b) < float("inf")), default=None)
        low, high = (below[0], below[1]) if above is None else (fitting, above)
        slope = max((peak(high) - peak(low)) / (high - low), 1e-3)
        probe = int(low + (FLAGS.budget_gb - peak(low)) / slope)
        probe = min(max(probe, fitting + 1), too_large - 1)
        if peak(probe) <= FLAGS.budget_gb:
            fitting = probe
        else:
            too_large = probe
    return fitting, runs


def main(argv):
    del argv
    if FLAGS.step:
        model, seq, batch, recompute, dtype = FLAGS.step.split(",")
        print(json.dumps(measure_step(model, int(seq), int(batch), recompute, dtype)))
        return
    cache = {}
    if FLAGS.cache and os.path.exists(FLAGS.cache):
        with open(FLAGS.cache) as f:
            cache = json.load(f)
    rows = []
    for model in FLAGS.models:
        for seq in map(int, FLAGS.seq_lengths):
            for dtype in FLAGS.dtypes:
                for recompute in FLAGS.recompute:
                    print(f"{model} seq {seq} {dtype} recompute={recompute}", flush=True)
                    measure = functools.partial(
                        measured, model, seq, recompute=recompute, dtype=dtype, cache=cache
                    )
                    fits, runs = largest_batch(measure)
                    runs.update({int(b): measure(int(b)) for b in FLAGS.batches})
                    rows.append(
                        {
                            "model": model,
                            "seq": seq,
                            "dtype": dtype,
                            "recompute": recompute,
                            "largest_batch": fits,
                            "runs": {str(b): r for b, r in sorted(runs.items())},
                        }
                    )
    print(f"\nlargest batch within {FLAGS.budget_gb:g} GB (peak GB, step s at that batch):")
    print("| model | seq | dtype | recompute | largest batch | peak GB | step s |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        at = row["runs"].get(str(row["largest_batch"])) or {}
        print(
            f"| {row['model']} | {row['seq']} | {row['dtype']} | {row['recompute']} "
            f"| {row['largest_batch']} | {at.get('peak_gb', float('nan')):.2f} "
            f"| {at.get('step_s', float('nan')):.2f} |"
        )
    if FLAGS.output:
        with open(FLAGS.output, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    app.run(main)
