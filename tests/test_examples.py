"""The scripts of examples/, each run as a user runs it (`python
examples/<name>.py ...`, the checkout's bert_tf) on tiny data, its outputs
checked against an independent computation: the float64 numpy BERT
(tests/numpy_bert.py) on the checkpoint it wrote or served, or the run's own
prediction files."""

import csv
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from script_runs import REPO
from shared import (
    HANG_TIMEOUT,
    WORDS,
    numpy_probabilities,
    options,
    pair_features,
    sentence,
    tiny_model_files,
    write_mrpc,
)

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder
from bert_tf.options import replace
from bert_tf.tasks.classifier import run_classifier
from bert_tf.text.tokenization import FullTokenizer

pytestmark = pytest.mark.large


def run_example(name, *args, cwd):
    """`python examples/<name> args...` with the checkout's bert_tf; its stdout."""
    env = {**os.environ, "PYTHONPATH": REPO}
    env.pop("TF_CPP_MIN_LOG_LEVEL", None)
    finished = subprocess.run(
        [sys.executable, os.path.join(REPO, "examples", name), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=HANG_TIMEOUT,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    return finished.stdout


def single_features(vocab_file, texts, seq):
    """`[CLS] text [SEP]` ids, mask and segment ids, padded to `seq`."""
    tokenizer = FullTokenizer(vocab_file, do_lower_case=True)
    rows = []
    for text in texts:
        ids = tokenizer.convert_tokens_to_ids(["[CLS]", *tokenizer.tokenize(text), "[SEP]"])
        rows.append(ids + [0] * (seq - len(ids)))
    ids = np.array(rows, np.int32)
    return {
        "input_word_ids": ids,
        "input_mask": (ids > 0).astype(np.int32),
        "input_type_ids": np.zeros_like(ids),
    }


def write_csv(path, rng, count):
    rows = []
    for _ in range(count):
        good = rng.random() < 0.5
        rows.append((sentence(rng, int(good)), "pos" if good else "neg"))
    rows.append(("Good, very good.", "pos"))  # a quoted comma
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["text", "label"])
        writer.writerows(rows)
    return rows


def test_keras_csv_classifier(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    vocab, config = tiny_model_files(
        str(model), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *WORDS]
    )
    encoder = BertEncoder(BertConfig.from_json_file(config))
    checkpoints.save_tf1_checkpoint(encoder, str(model / "bert_model.ckpt"))
    rng = random.Random(3)
    write_csv(tmp_path / "train.csv", rng, 31)
    dev = write_csv(tmp_path / "dev.csv", rng, 11)
    out = tmp_path / "out"
    stdout = run_example(
        "keras_csv_classifier.py",
        f"--model={model}",
        f"--train_csv={tmp_path / 'train.csv'}",
        f"--dev_csv={tmp_path / 'dev.csv'}",
        f"--output_dir={out}",
        "--epochs=2",
        "--batch_size=8",
        "--learning_rate=1e-3",
        "--max_seq_length=32",
        cwd=tmp_path,
    )
    with open(out / "dev_predictions.csv", newline="", encoding="utf-8") as f:
        header, *rows = list(csv.reader(f))
    assert header == ["text", "label", "predicted", "neg", "pos"]
    assert [tuple(row[:2]) for row in rows] == dev
    written = np.array([[float(p) for p in row[3:]] for row in rows])
    texts = [text for text, _ in dev]
    expected = numpy_probabilities(
        str(out / "model.ckpt"), config, single_features(vocab, texts, 32)
    )
    np.testing.assert_allclose(written, expected, atol=1e-5)
    predicted = [("neg", "pos")[i] for i in expected.argmax(axis=1)]
    assert [row[2] for row in rows] == predicted
    accuracy = np.mean([p == label for p, (_, label) in zip(predicted, dev)])
    assert f"dev accuracy: {accuracy:.4f} ({len(dev)} examples)" in stdout
    assert (out / "classifier.keras").is_file() and (out / "export" / "saved_model.pb").is_file()


def test_serve_saved_model(model_files, tmp_path):
    """A tiny fine-tuned run_classifier export, served on raw sentence pairs."""
    vocab, config = model_files
    data, out, export = (str(tmp_path / name) for name in ("mrpc", "out", "export"))
    rows = write_mrpc(data, random.Random(1), sizes=(32, 8, 8))
    quick = options(model_files, "MRPC", data, out, do_train=True, export_dir=export)
    run_classifier(replace(quick, num_train_epochs=1.0))
    pairs = rows["dev"][:5]
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"instances": [{"text_a": a, "text_b": b} for a, b in pairs]}))
    stdout = run_example(
        "serve_saved_model.py", f"--export_dir={export}", f"--request={request}", cwd=tmp_path
    )
    predictions = json.loads(stdout.splitlines()[-1])["predictions"]
    expected = numpy_probabilities(
        tf.train.latest_checkpoint(out), config, pair_features(vocab, pairs, 32)
    )
    np.testing.assert_allclose([p["probabilities"] for p in predictions], expected, atol=1e-5)
    assert [p["label_ids"] for p in predictions] == expected.argmax(axis=1).tolist()
    assert [p["labels"] for p in predictions] == [str(i) for i in expected.argmax(axis=1)]


NAMES = ["张伟", "王芳", "李娜", "刘洋", "陈静"]
PLACES = ["北京", "上海", "广州", "深圳", "杭州"]
TEMPLATES = ["{name}在{address}工作。", "{name}去了{address}。", "我们在{address}见到了{name}。"]
CHARACTERS = sorted(set("".join(NAMES + PLACES + TEMPLATES)) - set("{}adehmnrs"))


def cluener_records(count, seed):
    """CLUENER lines: `{"id", "text", "label": {type: {entity: [[first, last]]}}}`."""
    rng, records = random.Random(seed), []
    for example_id in range(count):
        name, place = rng.choice(NAMES), rng.choice(PLACES)
        text = rng.choice(TEMPLATES).format(name=name, address=place)
        label = {
            kind: {entity: [[text.index(entity), text.index(entity) + len(entity) - 1]]}
            for kind, entity in (("name", name), ("address", place))
        }
        records.append({"id": example_id, "text": text, "label": label})
    return records


def test_chinese_ner(tmp_path):
    vocab, config = tiny_model_files(
        str(tmp_path), ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *CHARACTERS]
    )
    data = tmp_path / "cluener"
    data.mkdir()
    for split, count, seed in (("train", 160, 1), ("dev", 20, 2), ("test", 12, 3)):
        records = cluener_records(count, seed)
        if split == "test":  # as CLUE ships it: no labels
            records = [{"id": r["id"], "text": r["text"]} for r in records]
        lines = [json.dumps(r, ensure_ascii=False) for r in records]
        (data / f"{split}.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [r["text"] for r in cluener_records(12, 3)]
    out = tmp_path / "out"
    stdout = run_example(
        "chinese_ner.py",
        f"--data_dir={data}",
        f"--bert_config_file={config}",
        f"--vocab_file={vocab}",
        f"--output_dir={out}",
        "--max_seq_length=32",
        "--train_batch_size=16",
        "--learning_rate=3e-3",
        "--num_train_epochs=3",
        *[f"--text={text}" for text in texts],
        cwd=tmp_path,
    )
    lines = stdout.splitlines()
    with open(out / "eval_results.txt") as f:
        assert [line for line in lines if " = " in line] == sorted(f.read().splitlines())
    # The SavedModel on raw text finds what the run wrote for test.json.
    served = [json.loads(line) for line in lines if line.startswith("{")]
    assert [s["text"] for s in served] == texts
    found = set()
    for row, s in enumerate(served):
        for entity in s["entities"]:
            assert texts[row][entity["start_char"] : entity["end_char"]] == entity["text"]
            found.add((row, entity["type"], entity["start_char"], entity["end_char"] - 1))
    with open(out / "cluener_predict.json", encoding="utf-8") as f:
        submitted = [json.loads(line) for line in f]
    written = {
        (row, kind, first, last)
        for row, submission in enumerate(submitted)
        for kind, spans in submission["label"].items()
        for positions in spans.values()
        for first, last in positions
    }
    assert written, "the tiny run tagged no entity in test.json"
    assert found == written
