"""End to end: run_classifier.py's generic task on JSON lines with nested keys
and ids, with balanced class weights, through the real script (run by `script_server`: one TensorFlow import)."""

import json
import random

import pytest
from script_runs import ScriptServer
from shared import FILLER


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


def run_script(server, model_files, data_dir, output_dir, *flags):  # noqa: F811
    vocab, config = model_files
    return server.run(
        "run_classifier.py",
        "--task_name=generic",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=16",
        "--train_batch_size=8",
        "--predict_batch_size=8",
        "--learning_rate=1e-3",
        "--text_a_column=doc.title",
        "--text_b_column=doc.body",
        "--label_column=meta.label",
        "--id_column=key",
        *flags,
    )


def write_reviews(path, rng, n, labels=True):
    """JSON lines: label "pos" when the title says "good", else "neg". Returns the labels."""
    lines, labels_written = [], []
    for i in range(n):
        good = rng.random() < 0.5
        words = [rng.choice(FILLER) for _ in range(4)] + (["good"] if good else [])
        record = {"key": f"r{i}", "doc": {"title": " ".join(words), "body": rng.choice(FILLER)}}
        if labels:
            record["meta"] = {"label": "pos" if good else "neg"}
            labels_written.append(record["meta"]["label"])
        lines.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return labels_written


@pytest.mark.large
def test_json_lines_with_nested_keys_train_and_predict_by_id(server, model_files, tmp_path):  # noqa: F811
    rng = random.Random(0)
    data_dir = tmp_path / "data"
    train_labels = write_reviews(data_dir / "train.jsonl", rng, 16)
    write_reviews(data_dir / "test.jsonl", rng, 5, labels=False)
    output_dir = tmp_path / "out"
    result = run_script(
        server,
        model_files,
        data_dir,
        output_dir,
        "--do_train",
        "--do_predict",
        "--num_train_epochs=1",
        "--class_weights=balanced",
    )
    assert result.status == 0, result.stderr[-3000:]
    assert "Labels (from " in result.stderr and "sorted): neg, pos" in result.stderr
    neg = train_labels.count("neg")
    weights = f"neg={16 / (2 * neg):.6g}, pos={16 / (2 * (16 - neg)):.6g}"
    assert f"Class weights (--class_weights=balanced): {weights}" in result.stderr
    probabilities = [
        [float(x) for x in line.split("\t")] for line in open(output_dir / "test_results.tsv")
    ]
    assert len(probabilities) == 5 and all(len(row) == 2 for row in probabilities)
    by_id = open(output_dir / "test_predictions.tsv").read().splitlines()
    assert by_id == ["id\tprediction"] + [
        f"r{i}\t{['neg', 'pos'][int(p[1] > p[0])]}" for i, p in enumerate(probabilities)
    ]

    # A malformed line: one error line naming file:line, before any training.
    (data_dir / "train.jsonl").write_text('{"key": "x", "doc": {"title": "a"}}\n')
    result = run_script(server, model_files, data_dir, tmp_path / "bad", "--do_train")
    assert result.status == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {data_dir}/train.jsonl:1: no key 'doc.body' (keys of 'doc': 'title')"
    )
