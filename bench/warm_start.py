"""Building a classifier and loading an encoder checkpoint into it, with the
random initialisation drawn at build time (the peer: what Keras does) and
deferred to after the load (`initializers.deferred_draws`, what the
scripts, `from_pretrained` and extract_features do).

The checkpoint is an original-format (TF1) encoder of random weights, written
first (untimed). Rounds alternate between the two ways; prints the median
wall seconds of each, its share spent loading, and the ratio. A final check
says whether both ways gave the same weights.

    python bench/warm_start.py [--configs=base,large] [--rounds=3]
"""

import gc
import os
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from absl import app, flags, logging  # noqa: E402
from pretraining_step import PRESETS, bench_config  # noqa: E402

from bert_tf import checkpoints  # noqa: E402
from bert_tf.initializers import deferred_draws  # noqa: E402
from bert_tf.modeling import BertClassifier, BertEncoder  # noqa: E402

flags.DEFINE_list("configs", ["base", "large"], f"Models, of: {', '.join(PRESETS)}.")
flags.DEFINE_integer("rounds", 3, "Timed rounds of each way (median).")
FLAGS = flags.FLAGS


def build_and_load(config, prefix, deferred):
    """The classifier with the encoder at `prefix`; (model, build s, load s)."""
    keras.utils.set_random_seed(0)
    start = time.perf_counter()
    if deferred:
        with deferred_draws() as draws:
            model = BertClassifier(config, num_labels=2)
    else:
        model = BertClassifier(config, num_labels=2)
    built = time.perf_counter()
    checkpoints.load_checkpoint(model, prefix, strict=False)
    if deferred:
        draws.finish()
    return model, built - start, time.perf_counter() - built


def main(_):
    logging.set_verbosity(logging.WARNING)  # not the load's "left initialised" lines
    print(f"{'model':8s}{'init drawn':>24s}{'deferred':>24s}{'ratio':>8s}")
    print(f"{'':8s}{'total s (load s)':>24s}{'total s (load s)':>24s}")
    for name in FLAGS.configs:
        config = bench_config(name)
        with tempfile.TemporaryDirectory() as folder:
            prefix = checkpoints.save_tf1_checkpoint(
                BertEncoder(config), os.path.join(folder, "bert_model.ckpt")
            )
            gc.collect()
            times = {False: [], True: []}
            for _ in range(FLAGS.rounds):
                for deferred in (False, True):
                    _, build, load = build_and_load(config, prefix, deferred)
                    times[deferred].append((build + load, load))
                    gc.collect()
            plain = build_and_load(config, prefix, False)[0].weights
            deferred = build_and_load(config, prefix, True)[0].weights
            same = all(np.array_equal(a.numpy(), b.numpy()) for a, b in zip(plain, deferred))
        cells = []
        for deferred in (False, True):
            total = statistics.median(t for t, _ in times[deferred])
            load = statistics.median(x for _, x in times[deferred])
            cells.append((total, load))
        print(
            f"{name:8s}"
            + "".join(f"{f'{total:.2f} ({load:.2f})':>24s}" for total, load in cells)
            + f"{cells[0][0] / cells[1][0]:7.2f}x"
            + ("" if same else "   WEIGHTS DIFFER")
        )


if __name__ == "__main__":
    app.run(main)
