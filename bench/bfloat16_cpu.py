"""bfloat16 on the CPU: bert_tf's `mixed_bfloat16` against float32 and against
Hugging Face BERT on PyTorch with bfloat16 autocast, training and inference.

For each CPU setting (`--isa`: oneDNN's `ONEDNN_MAX_CPU_ISA`, which both
TensorFlow and PyTorch read at start-up; `native` leaves it unset) and each
model, four long-lived processes (bert_tf and PyTorch, float32 and bfloat16)
run the same workload; rounds alternate between them, one computing at a
time. Workloads: `train`, the pre-training step of bench/train_vs_pytorch.py
(random init, AdamW, dropout 0.1, float32 weights and optimizer either way);
`infer`, the encoder's pooled output on a batch with a quarter of padding
(bert_tf: a tf.function over `BertEncoder`; PyTorch: `BertModel` in inference
mode); `products`, the encoder's dense products alone on infer's tokens (per
layer [tokens, H] x [H, H] four times, [H, I] and [I, H], inputs and weights
already in the dtype): the most bfloat16 can give a model of these shapes on
this CPU, the ceiling for the two workloads above. Prints sequences/second,
bfloat16's speed-up over float32 on each side, and bert_tf / PyTorch in
bfloat16. The setting AVX512_CORE_BF16 hides AMX,
AVX512_CORE_VNNI hides AVX512_BF16 too, AVX2 all of AVX-512.

    python bench/bfloat16_cpu.py --peer_python=.venv-peers/bin/python \\
        [--isa=native,AVX512_CORE_VNNI] [--models=base,minilm] [--workloads=train,infer] \\
        [--jit_compile]
"""

import os
import statistics
import subprocess
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402
from pretraining_step import bench_config, make_batch, make_inputs  # noqa: E402
from workers import Worker, serve  # noqa: E402

flags.DEFINE_string(
    "peer_python", ".venv-peers/bin/python", "Python of the virtualenv with torch and transformers."
)
flags.DEFINE_list("isa", ["native", "AVX512_CORE_VNNI"], "ONEDNN_MAX_CPU_ISA settings.")
flags.DEFINE_list("models", ["base", "minilm"], "Models (minilm: L6 H384, 12 heads).")
flags.DEFINE_list("workloads", ["train", "infer", "products"], "train, infer, products.")
flags.DEFINE_integer("train_batch", 8, "Sequences per training step.")
flags.DEFINE_integer("infer_batch", 32, "Sequences per forward pass.")
flags.DEFINE_integer("seq_length", 128, "Sequence length.")
flags.DEFINE_integer("predictions", 20, "Masked positions per sequence.")
flags.DEFINE_integer("steps", 2, "Timed steps per round.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds; the median counts.")
flags.DEFINE_boolean("jit_compile", False, "bert_tf with XLA.")
flags.DEFINE_string("worker", None, "Internal: run as a bert_tf worker.")
FLAGS = flags.FLAGS

HERE = os.path.dirname(os.path.abspath(__file__))
POLICIES = {"float32": "float32", "bfloat16": "mixed_bfloat16"}
SIDES = [(side, dtype) for side in ("bert_tf", "torch") for dtype in ("float32", "bfloat16")]


def bert_tf_runner(config_path, batch_path, workload, dtype):
    """`run(steps)` of bert_tf's `workload` under the Keras policy of `dtype`."""
    import keras

    keras.mixed_precision.set_global_policy(POLICIES[dtype])
    from pretraining_step import bert_tf_forward, bert_tf_step

    from bert_tf.config import BertConfig
    from bert_tf.modeling import BertEncoder

    config = BertConfig.from_json_file(config_path)
    batch = dict(np.load(batch_path))
    if workload == "train":
        return bert_tf_step(config, batch, FLAGS.jit_compile)
    if workload == "products":
        return bert_tf_products(config, batch["input_word_ids"].size, dtype)
    forward = bert_tf_forward(BertEncoder(config), batch, FLAGS.jit_compile)

    def run(steps):
        for _ in range(steps):
            forward()

    return run


def bert_tf_products(config, tokens, dtype):
    """`run(steps)` of the encoder's dense products on `tokens` rows, in `dtype`."""
    import tensorflow as tf

    h, i = config.hidden_size, config.intermediate_size
    shapes = [(h, h)] * 4 + [(h, i), (i, h)]
    # Variables, not constants, or the graph optimizer folds the products away.
    random = lambda shape: tf.Variable(tf.cast(tf.random.normal(shape), dtype))  # noqa: E731
    inputs = {k: random([tokens, k]) for k in (h, i)}
    weights = [random(shape) for shape in shapes]

    @tf.function
    def layers():
        total = 0.0
        for _ in range(config.num_hidden_layers):
            for w in weights:
                total += tf.cast(tf.matmul(inputs[w.shape[0]], w)[0, 0], tf.float32)
        return total

    def run(steps):
        for _ in range(steps):
            layers().numpy()

    return run


def bert_tf_worker(config_path, batch_path, workload, dtype):
    """The bert_tf side of the protocol of bench/torch_peer.py."""
    serve(lambda: bert_tf_runner(config_path, batch_path, workload, dtype))


def model_config(name):
    if name == "minilm":
        return bench_config("base", num_hidden_layers=6, hidden_size=384, intermediate_size=1536)
    return bench_config(name)


def workers(config_path, batch_path, workload, isa):
    env = dict(os.environ)
    if isa != "native":
        env["ONEDNN_MAX_CPU_ISA"] = isa
    commands = {
        "bert_tf": [sys.executable, os.path.abspath(__file__)],
        "torch": [FLAGS.peer_python, os.path.join(HERE, "torch_peer.py")],
    }
    started = {}
    for side, dtype in SIDES:
        if side == "bert_tf":
            args = [
                f"--worker={config_path},{batch_path},{workload},{dtype}",
                f"--jit_compile={FLAGS.jit_compile}",
            ]
        else:
            args = [config_path, batch_path, workload, dtype]
        started[side, dtype] = Worker(commands[side] + args, env=env)
    return started


def measure(name, workload, isa, tmp):
    """{(side, dtype): sequences/second} of `workload` on model `name`."""
    config = model_config(name)
    config_path, batch_path = os.path.join(tmp, "config.json"), os.path.join(tmp, "b.npz")
    config.to_json_file(config_path)
    if workload == "train":
        batch_size = FLAGS.train_batch
        batch = make_batch(config, batch_size, FLAGS.seq_length, FLAGS.predictions)
    else:  # infer and products: the same tokens
        batch_size = FLAGS.infer_batch
        batch = make_inputs(config, batch_size, FLAGS.seq_length)
    np.savez(batch_path, **batch)
    running = workers(config_path, batch_path, workload, isa)
    seconds = {key: [] for key in running}
    for _ in range(FLAGS.rounds):
        for key, worker in running.items():
            seconds[key].append(worker.time(FLAGS.steps) / FLAGS.steps)
    for worker in running.values():
        worker.close()
    return {key: batch_size / statistics.median(s) for key, s in seconds.items()}


def main(argv):
    del argv
    if FLAGS.worker:
        return bert_tf_worker(*FLAGS.worker.split(","))
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model_name = [line for line in cpu.splitlines() if line.startswith("Model name")]
    print(f"{model_name[0] if model_name else 'CPU ?'}; {os.cpu_count()} CPUs; sequences/s")
    print(
        f"{'ISA':<18}{'model':<8}{'work':<7}{'tf f32':>8}{'tf bf16':>9}{'x':>6}"
        f"{'pt f32':>8}{'pt bf16':>9}{'x':>6}{'tf/pt bf16':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for isa in FLAGS.isa:
            for name in FLAGS.models:
                for workload in FLAGS.workloads:
                    rate = measure(name, workload, isa, tmp)
                    tf32, tf16 = rate["bert_tf", "float32"], rate["bert_tf", "bfloat16"]
                    pt32, pt16 = rate["torch", "float32"], rate["torch", "bfloat16"]
                    print(
                        f"{isa:<18}{name:<8}{workload:<7}{tf32:>8.2f}{tf16:>9.2f}"
                        f"{tf16 / tf32:>6.2f}{pt32:>8.2f}{pt16:>9.2f}{pt16 / pt32:>6.2f}"
                        f"{tf16 / pt16:>12.2f}",
                        flush=True,
                    )


if __name__ == "__main__":
    app.run(main)
