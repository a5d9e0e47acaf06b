"""Pre-training step: bert_tf against Hugging Face BertForPreTraining on PyTorch.

Each side runs in its own long-lived process (PyTorch in the peers'
virtualenv from `make bench-peers`); rounds alternate between them, one
process computing at a time, so machine noise hits both alike. Same config
(random init), same in-memory batch, masked-LM head on the masked positions
only, AdamW with global-norm clipping, dropout 0.1, float32. Prints the
first step (model build + tracing), the median sequences/second over the
rounds and the bert_tf / PyTorch ratio.

    python bench/train_vs_pytorch.py --peer_python=.venv-peers/bin/python \
        [--configs=base:8,small:32] [--steps=2] [--rounds=5]
"""

import os
import statistics
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402
from pretraining_step import bench_config, bert_tf_step, make_batch  # noqa: E402
from workers import Worker, serve  # noqa: E402

flags.DEFINE_string(
    "peer_python", ".venv-peers/bin/python", "Python of the virtualenv with torch and transformers."
)
flags.DEFINE_list("configs", ["base:8", "small:32"], "config:batch pairs (small = L4 H512).")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("steps", 2, "Timed steps per round.")
flags.DEFINE_integer("rounds", 5, "Alternating rounds; the median counts.")
flags.DEFINE_boolean("jit_compile", False, "bert_tf with XLA.")
flags.DEFINE_string("worker", None, "Internal: run as the bert_tf worker.")
FLAGS = flags.FLAGS

HERE = os.path.dirname(os.path.abspath(__file__))


def bert_tf_worker(config_path, batch_path):
    """The bert_tf side of the protocol of bench/torch_peer.py."""
    from bert_tf.config import BertConfig

    serve(
        lambda: bert_tf_step(
            BertConfig.from_json_file(config_path), dict(np.load(batch_path)), FLAGS.jit_compile
        )
    )


def main(argv):
    del argv
    if FLAGS.worker:
        return bert_tf_worker(*FLAGS.worker.split(","))
    print(
        f"{'config':<8}{'batch':>6}{'bert_tf seq/s':>15}{'torch seq/s':>13}{'ratio':>7}"
        f"{'bert_tf 1st s':>15}{'torch 1st s':>13}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for spec in FLAGS.configs:
            name, batch_size = spec.split(":")
            batch_size = int(batch_size)
            config = bench_config(name, hidden_dropout_prob=0.1)
            config_path, batch_path = os.path.join(tmp, "config.json"), os.path.join(tmp, "b.npz")
            config.to_json_file(config_path)
            np.savez(
                batch_path, **make_batch(config, batch_size, FLAGS.seq_length, FLAGS.predictions)
            )
            workers = {
                "bert_tf": Worker(
                    [
                        sys.executable,
                        os.path.abspath(__file__),
                        f"--worker={config_path},{batch_path}",
                        f"--jit_compile={FLAGS.jit_compile}",
                    ]
                ),
                "torch": Worker(
                    [
                        FLAGS.peer_python,
                        os.path.join(HERE, "torch_peer.py"),
                        config_path,
                        batch_path,
                    ]
                ),
            }
            seconds = {k: [] for k in workers}
            for _ in range(FLAGS.rounds):
                for key, worker in workers.items():
                    seconds[key].append(worker.time(FLAGS.steps) / FLAGS.steps)
            for worker in workers.values():
                worker.close()
            ours, theirs = (batch_size / statistics.median(seconds[k]) for k in workers)
            print(
                f"{name:<8}{batch_size:>6}{ours:>15.2f}{theirs:>13.2f}{ours / theirs:>7.2f}"
                f"{workers['bert_tf'].first_step:>15.1f}{workers['torch'].first_step:>13.1f}",
                flush=True,
            )


if __name__ == "__main__":
    app.run(main)
