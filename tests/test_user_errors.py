"""What a user meets when running the scripts: the real scripts with real
flags, each bad input a single `error:` line with exit status 2 and no
traceback, no partial or `.tmp` file, earlier outputs unchanged; signals end
a run with one line and exit 128 + signal; progress and the outputs written
are shown. Scripts run through `script_server` (one TensorFlow import for
the module)."""

import glob
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
from script_runs import REPO, ScriptServer
from shared import HANG_TIMEOUT, assert_one_error, minilm_dir, write_mrpc
from step_pause import wait_for_pause

from bert_tf import checkpoints
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder

CLASSIFIER = "run_classifier.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("mrpc"))
    write_mrpc(path, random.Random(0), sizes=(96, 16, 8))
    return path


def classifier_flags(model_files, data_dir, output_dir, *more):  # noqa: F811
    vocab, config = model_files
    return [
        "--task_name=MRPC",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--learning_rate=1e-3",
        *more,
    ]


def snapshot(folder):
    """{relative path: sha256} of every file under `folder`."""
    result = {}
    for path in glob.glob(os.path.join(folder, "**"), recursive=True):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                result[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return result


def tmp_files(folder):
    return glob.glob(os.path.join(folder, "**", "*.tmp*"), recursive=True)


@pytest.fixture(scope="module")
def trained(server, model_files, data_dir, tmp_path_factory):  # noqa: F811
    """A classifier fine-tuned by two runs: the first stopped by SIGTERM after
    its second checkpoint (steps 4 and 8) and before its third, the second
    resumed after the newest checkpoint (the one saved on SIGTERM) was cut
    short, to the end of the epoch after next (12 steps an epoch). Returns
    `(output_dir, first run, second run, the step the first stopped at, the
    cut checkpoint, the steps in all, the step the first paused at)`."""
    output_dir = str(tmp_path_factory.mktemp("classifier") / "out")
    flags = classifier_flags(
        model_files, data_dir, output_dir, "--do_train", "--do_eval", "--do_predict"
    )
    # The signal is sent while the run waits after a call (where a signal sent
    # during a call is handled), not at whatever step a machine of some speed
    # has reached: calls of at most 3 steps, which never cross a checkpoint,
    # pause it past step 8 and before step 12.
    marker = str(tmp_path_factory.mktemp("pause") / "paused")
    running = server.start(
        CLASSIFIER,
        *flags,
        "--num_train_epochs=100",
        "--save_checkpoints_steps=4",
        "--steps_per_loop=3",
        pause=(8, marker),
    )
    try:
        paused_at = wait_for_pause(marker, running.ended, running.stderr, HANG_TIMEOUT)
    except BaseException:
        os.kill(running.pid, signal.SIGKILL)
        running.wait()
        raise
    os.kill(running.pid, signal.SIGTERM)
    first = running.wait()
    stopped_at = int(first.stderr.split("interrupted at step ")[1].split()[0].rstrip(":"))
    newest = os.path.join(output_dir, f"model.ckpt-{stopped_at}")
    (data_file,) = glob.glob(newest + ".data-*")
    with open(data_file, "r+b") as f:  # a copy cut short: the disk filled up
        f.truncate(os.path.getsize(data_file) // 2)
    epochs = stopped_at // 12 + 2
    second = server.run(CLASSIFIER, *flags, f"--num_train_epochs={epochs}")
    return output_dir, first, second, stopped_at, newest, 12 * epochs, paused_at


def test_sigterm_saves_a_checkpoint_and_exits_143(trained):
    _, first, _, stopped_at, newest, _, paused_at = trained
    assert first.status == 128 + signal.SIGTERM, first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    lines = [line for line in first.stderr.splitlines() if line.startswith("interrupted:")]
    assert len(lines) == 1 and "SIGTERM" in lines[0], first.stderr[-3000:]
    # It stopped where the signal came, between the checkpoints of steps 8
    # and 12, and saved the steps since step 8.
    assert stopped_at == paused_at and 8 < stopped_at < 12, first.stderr[-3000:]
    assert f"interrupted at step {stopped_at}: saving a checkpoint" in first.stderr
    assert os.path.exists(newest + ".index")


def test_resume_skips_a_truncated_newest_checkpoint_with_a_warning(trained):
    output_dir, _, second, _, newest, _, _ = trained
    assert second.status == 0, second.stderr[-3000:]
    assert f"checkpoint {newest} does not read" in second.stderr
    assert f"resumed from {output_dir}/model.ckpt-8 at step 8" in second.stderr, second.stderr[
        -3000:
    ]
    assert not tmp_files(output_dir)


def test_progress_lines_come_without_waiting_for_steps_per_loop(trained):
    # --steps_per_loop is 1000 (its default) and no checkpoint falls in the
    # resumed run's steps: a line for its first step, its second, then about
    # every 10 s (as many as the machine's speed makes) and at the end.
    second, total = trained[2], trained[5]
    start = int(re.search(r"resumed from \S+ at step (\d+)", second.stderr)[1])
    lines = [line for line in second.stderr.splitlines() if re.search(rf"step \d+/{total} ", line)]
    steps = [int(re.search(rf"step (\d+)/{total} ", line)[1]) for line in lines]
    assert steps[:2] == [start + 1, start + 2] and steps[-1] == total, second.stderr[-3000:]
    assert steps == sorted(set(steps)), steps
    assert "examples/s" in lines[-1] and "loss" in lines[-1]


def test_every_stage_before_training_says_when_it_starts(trained):
    """Writing the features, building the model and tracing the train step
    take seconds to a minute each before step 1: a line says when each
    starts, and how many features were written."""
    stderr, epoch = trained[1].stderr, 12
    position = 0
    for mark in (
        r"\] Writing \S+/train\.tf_record",
        r"wrote \S+/train\.tf_record: 96 features of 96 examples in [\d.]+ s",
        r"\] building the model: 2 layers, hidden size \d+",
        rf"\] step 1/{100 * epoch}: tracing the train step",
        rf"\] step 1/{100 * epoch}  loss",
    ):
        found = re.compile(mark).search(stderr, position)
        assert found, (mark, stderr[position:][-3000:])
        position = found.end()


def test_every_stage_after_training_says_when_it_starts(trained):
    """Evaluation and prediction trace and run for a while with nothing else
    to print: a line says when each starts (then one every 10 s)."""
    stderr = trained[2].stderr
    position = stderr.rfind("saved checkpoint")
    for mark in ("] evaluating", "eval_accuracy = ", "] predicting", "test_results.tsv"):
        found = stderr.find(mark, position)
        assert found > position, (mark, stderr[position:][-3000:])
        position = found


def test_the_run_ends_with_one_line_per_output(trained):
    output_dir, _, second, _, _, total, _ = trained
    assert second.stdout.splitlines() == [
        f"checkpoint: {output_dir}/model.ckpt-{total}",
        f"eval results: {output_dir}/eval_results.txt",
        f"predictions: {output_dir}/test_results.tsv",
        f"GLUE submission: {output_dir}/MRPC.tsv",
    ]
    assert os.path.exists(f"{output_dir}/test_results.tsv")


def test_eval_metrics_reach_tensorboard(trained):
    output_dir = trained[0]
    tags = set()
    for events in glob.glob(os.path.join(output_dir, "eval", "events.out.tfevents.*")):
        for event in tf.compat.v1.train.summary_iterator(events):
            tags.update(value.tag for value in event.summary.value)
    assert {"eval_accuracy", "eval_loss"} <= tags


def test_no_start_up_notices_of_tensorflow(trained, model_files, data_dir):  # noqa: F811
    # A plain process, as a user starts it: TensorFlow reads its log level at import.
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    finished = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, CLASSIFIER),
            *classifier_flags(model_files, data_dir, trained[0], "--do_eval"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_TIMEOUT,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    for line in finished.stderr.splitlines():
        assert "cuda" not in line.lower() and "oneDNN" not in line, line
        assert not line.startswith(("WARNING: All log messages before absl", "E0000")), line


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


@pytest.fixture(scope="module")
def bad_inputs(tmp_path_factory, model_files, data_dir):  # noqa: F811
    root = tmp_path_factory.mktemp("bad")
    vocab, config = model_files
    # The model's checkpoint with its data cut short: its index reads, its
    # weights do not (found only when the warm start loads them).
    prefix = str(root / "cut" / "model.ckpt")
    encoder = BertEncoder(BertConfig.from_json_file(config))
    checkpoints.save_tf1_checkpoint(encoder, prefix)
    (data_file,) = glob.glob(prefix + ".data-*")
    with open(data_file, "r+b") as f:
        f.truncate(1000)
    bad_labels = str(root / "bad_labels")
    shutil.copytree(data_dir, bad_labels)
    with open(os.path.join(bad_labels, "dev.tsv")) as f:
        rows = f.read().splitlines()
    rows[3] = "7" + rows[3][1:]
    _write(os.path.join(bad_labels, "dev.tsv"), "\n".join(rows) + "\n")
    small_config = str(root / "small.json")
    BertConfig.from_json_file(config).replace(vocab_size=5).to_json_file(small_config)
    release = root / "uncased_L-2_H-128_A-2"  # a Google release's folder name
    release.mkdir()
    shutil.copy(config, release / "bert_config.json")
    uncased_hf = root / "uncased_hf"  # a Hugging Face folder that says it is uncased
    uncased_hf.mkdir()
    shutil.copy(vocab, uncased_hf / "vocab.txt")
    shutil.copy(config, uncased_hf / "bert_config.json")
    _write(str(uncased_hf / "tokenizer_config.json"), '{"do_lower_case": true}')
    broken = _write(str(root / "broken" / "bert_model.ckpt.index"), "not a checkpoint")
    return {
        "bad_labels": bad_labels,
        "small_config": small_config,
        "release": str(release),
        "uncased_hf": str(uncased_hf),
        "a_file": _write(str(root / "a_file"), "x"),
        "broken": broken[: -len(".index")],
        "cut": prefix,
        "root": str(root),
    }


def error_cases():
    """(id, script, flags(model, data, bad, out), words the error names)."""

    def classifier(*more):
        return lambda m, d, b, out: classifier_flags(m, d, out, *more)

    return [
        (
            "missing flag",
            CLASSIFIER,
            lambda m, d, b, out: ["--do_train"],
            ["--task_name", "--data_dir"],
        ),
        ("unknown flag", CLASSIFIER, classifier("--do_train", "--num_epochs=3"), ["num_epochs"]),
        (
            "data_dir missing",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(m, b["root"] + "/missing", out, "--do_train"),
            ["--data_dir", "missing does not exist"],
        ),
        ("no mode", CLASSIFIER, classifier(), ["--do_train"]),
        (
            "output_dir is a file",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(m, d, b["a_file"], "--do_train"),
            ["--output_dir", "a_file", "is a file"],
        ),
        (
            "vocab larger than config",
            CLASSIFIER,
            classifier("--do_train", "--bert_config_file=__small__"),
            ["vocab.txt", "vocab_size=5", "small.json"],
        ),
        (
            "bad label in dev.tsv before training",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(
                m, b["bad_labels"], out, "--do_train", "--do_eval"
            ),
            ["label '7'", "dev"],
        ),
        (
            "eval with no weights",
            CLASSIFIER,
            classifier("--do_eval"),
            ["no checkpoint in --output_dir", "--init_checkpoint"],
        ),
        (
            "case of a release folder",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(
                m,
                d,
                out,
                "--do_train",
                "--do_lower_case=false",
                f"--init_checkpoint={b['release']}",
            ),
            ["--do_lower_case=False", "uncased_L-2_H-128_A-2"],
        ),
        (
            "case of a Hugging Face folder",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(
                m,
                d,
                out,
                "--do_train",
                "--do_lower_case=false",
                f"--init_checkpoint={b['uncased_hf']}",
            ),
            [
                "--do_lower_case=False contradicts --init_checkpoint=",
                "uncased_hf: its tokenizer_config.json says do_lower_case: True",
                "pass --do_lower_case=True",
            ],
        ),
        (
            "no vocab beside the checkpoint",
            CLASSIFIER,
            lambda m, d, b, out: [
                a
                for a in classifier_flags(
                    m, d, out, "--do_train", f"--init_checkpoint={b['release']}"
                )
                if not a.startswith("--vocab_file")
            ],
            [
                "--vocab_file is needed: --init_checkpoint=",
                "uncased_L-2_H-128_A-2 has no vocab.txt",
            ],
        ),
        (
            "unreadable init checkpoint",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(
                m, d, out, "--do_train", f"--init_checkpoint={b['broken']}"
            ),
            ["broken/bert_model.ckpt", "does not read"],
        ),
        (
            "no config for a checkpoint",
            CLASSIFIER,
            lambda m, d, b, out: [
                a
                for a in classifier_flags(m, d, out, "--do_train")
                if not a.startswith("--bert_config_file")
            ],
            ["--bert_config_file"],
        ),
        (
            "checkpoint whose weights do not read",
            CLASSIFIER,
            lambda m, d, b, out: classifier_flags(
                m, d, out, "--do_train", f"--init_checkpoint={b['cut']}"
            ),
            ["cut/model.ckpt does not read"],
        ),
        (
            "batch size 0",
            CLASSIFIER,
            classifier("--do_train", "--train_batch_size=0"),
            ["--train_batch_size=0: expected a whole number >= 1"],
        ),
        (
            "negative batch size",
            CLASSIFIER,
            classifier("--do_train", "--train_batch_size=-8"),
            ["--train_batch_size=-8: expected a whole number >= 1"],
        ),
        (
            "learning rate 0",
            CLASSIFIER,
            classifier("--do_train", "--learning_rate=0"),
            ["--learning_rate=0.0: expected a number > 0"],
        ),
        (
            "negative epochs",
            CLASSIFIER,
            classifier("--do_train", "--num_train_epochs=-1"),
            ["--num_train_epochs=-1.0: expected a number > 0"],
        ),
        (
            "vocab file is the checkpoint's folder",
            CLASSIFIER,
            lambda m, d, b, out: [
                *classifier_flags(m, d, out, "--do_train")[:2],
                f"--output_dir={out}",
                "--do_train",
                f"--init_checkpoint={minilm_dir()}",
                f"--vocab_file={minilm_dir()}",
            ],
            [f"--vocab_file={minilm_dir()} is a folder; expected a file (its vocab.txt?)"],
        ),
        (
            "another vocab than the checkpoint's",
            CLASSIFIER,
            lambda m, d, b, out: [
                *classifier_flags(m, d, out, "--do_train")[:3],
                f"--output_dir={out}",
                "--do_train",
                f"--init_checkpoint={minilm_dir()}",
            ],
            ["differs from", "--allow_vocab_mismatch"],
        ),
        (
            "build_vocab into a folder",
            "build_vocab.py",
            lambda m, d, b, out: [f"--input_file={d}/train.tsv", f"--output_file={b['root']}"],
            ["--output_file", "is a folder"],
        ),
    ]


def case_flags(case, model_files, data_dir, bad_inputs, out):  # noqa: F811
    """The flags of an `error_cases()` case, its output folder `out`."""
    make_flags = case[2]
    return [
        f.replace("__small__", bad_inputs["small_config"])
        for f in make_flags(model_files, data_dir, bad_inputs, out)
    ]


@pytest.mark.parametrize("case", error_cases(), ids=[c[0] for c in error_cases()])
def test_bad_input_is_one_error_line_and_nothing_written(
    case, server, model_files, data_dir, bad_inputs, trained
):  # noqa: F811
    _, script, _, words = case
    earlier = trained[0]
    before = snapshot(earlier)
    out = os.path.join(bad_inputs["root"], "out-" + case[0].replace(" ", "-"))
    finished = server.run(script, *case_flags(case, model_files, data_dir, bad_inputs, out))
    assert_one_error(finished, *words)
    assert snapshot(earlier) == before
    # Nothing of this run stays behind, not even the feature files it had
    # finished (the bad-label case stops after writing train's).
    assert not os.path.exists(out), os.listdir(out)
    assert not tmp_files(bad_inputs["root"])


def test_a_run_failing_before_its_first_checkpoint_leaves_an_existing_folder_as_it_was(
    server, model_files, data_dir, bad_inputs, tmp_path
):  # noqa: F811
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    flags = classifier_flags(
        model_files, data_dir, str(out), "--do_train", f"--init_checkpoint={bad_inputs['cut']}"
    )
    assert_one_error(server.run(CLASSIFIER, *flags), "does not read")
    assert sorted(os.listdir(out)) == ["notes.txt"]


def test_help_lists_the_shared_training_flags(server):
    finished = server.run(CLASSIFIER, "--help")
    assert finished.status == 0, finished.stderr[-3000:]
    script_part = finished.stdout.split("run_classifier.py:", 1)[1]
    for flag in (
        "task_name",
        "dtype",
        "jit_compile",
        "seed",
        "optimizer",
        "use_tpu",
        "iterations_per_loop",
        "init_checkpoint",
    ):
        assert re.search(rf"--(\[no\])?{flag}:", script_part), flag


@pytest.mark.large
def test_export_dir_alone_exports_the_newest_checkpoint(
    server,
    trained,
    model_files,  # noqa: F811
    data_dir,
    tmp_path,
):
    output_dir, *_ = trained
    before = snapshot(output_dir)
    export_dir = tmp_path / "export"
    flags = classifier_flags(model_files, data_dir, output_dir, f"--export_dir={export_dir}")
    finished = server.run(CLASSIFIER, *flags)
    assert finished.status == 0, finished.stderr[-3000:]
    assert (export_dir / "saved_model.pb").exists()
    assert f"SavedModel: {export_dir}" in finished.stdout
    assert snapshot(output_dir) == before  # nothing trained, evaluated or rewritten
    assert f"exporting the SavedModel to {export_dir}" in finished.stderr
    # TensorFlow's SavedModel writer's own lines are not shown.
    for noise in ("unsupported characters", "Sharding callback", "fingerprint", "Assets written"):
        assert noise not in finished.stderr, finished.stderr[-3000:]


@pytest.mark.large
def test_importing_bert_tf_shows_no_tensorflow_notices_unless_asked():
    """A user's own code: TensorFlow's C++ start-up notices are hidden, unless
    the user set TF_CPP_MIN_LOG_LEVEL, which is kept."""
    code = "import os, bert_tf; bert_tf.BertEncoder; print(os.environ['TF_CPP_MIN_LOG_LEVEL'])"
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    for level, expected in ((None, "3"), ("0", "0")):
        finished = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env=env if level is None else {**env, "TF_CPP_MIN_LOG_LEVEL": level},
            timeout=HANG_TIMEOUT,
        )
        assert finished.returncode == 0, finished.stderr[-3000:]
        assert finished.stdout == expected + "\n"
        if level is None:
            assert finished.stderr == ""


def test_extract_features_takes_the_original_flags_and_no_training_ones(
    server,
    trained,
    model_files,  # noqa: F811
    tmp_path,
):
    finished = server.run("extract_features.py", "--help")
    script_part = finished.stdout.split("extract_features.py:", 1)[1]
    for flag in ("input_file", "layers", "use_tpu", "use_one_hot_embeddings", "dtype", "seed"):
        assert re.search(rf"--(\[no\])?{flag}:", script_part), flag
    for flag in ("optimizer", "weight_decay_rate", "steps_per_loop", "learning_rate", "do_train"):
        assert not re.search(rf"--(\[no\])?{flag}:", script_part), flag

    vocab, config = model_files
    (tmp_path / "input.txt").write_text("the first line\nthe second ||| and its pair\n")
    flags = [
        f"--input_file={tmp_path / 'input.txt'}",
        f"--output_file={tmp_path / 'features.jsonl'}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--init_checkpoint={trained[0]}",
        "--max_seq_length=32",
        "--layers=-1,-2",
    ]
    assert_one_error(server.run("extract_features.py", *flags, "--optimizer=lamb"), "optimizer")
    ran = server.run("extract_features.py", *flags, "--use_one_hot_embeddings=True")
    assert ran.status == 0, ran.stderr[-3000:]
    assert "--use_one_hot_embeddings is ignored" in ran.stderr
    assert len((tmp_path / "features.jsonl").read_text().splitlines()) == 2


@pytest.mark.large
def test_a_hugging_face_folder_needs_no_bert_config_file_or_vocab_file(server, data_dir, tmp_path):
    folder = minilm_dir()
    out = str(tmp_path / "hf")
    finished = server.run(
        CLASSIFIER,
        "--task_name=MRPC",
        f"--data_dir={data_dir}",
        f"--init_checkpoint={folder}",
        f"--output_dir={out}",
        "--do_eval",
        "--max_seq_length=16",
    )
    assert finished.status == 0, finished.stderr[-3000:]
    assert f"eval results: {out}/eval_results.txt" in finished.stdout
    assert "warm start from" in finished.stderr


def record_tokens(path, vocab_file):
    """The tokens of the first record's `input_ids` in the feature file at `path`."""
    example = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(path))).numpy())
    ids = example.features.feature["input_ids"].int64_list.value
    with open(vocab_file) as f:
        vocab = f.read().splitlines()
    return [vocab[i] for i in ids if i]


@pytest.mark.large
def test_run_ner_takes_the_casing_from_the_model_and_warns_of_unknown_tokens(server, tmp_path):
    # run_ner.py's casing without --do_lower_case is the model's: MiniLM's
    # tokenizer_config.json says lower-case (run_ner.py's own fallback is cased).
    data = tmp_path / "data"
    data.mkdir()
    rows = ["John B-PER", "Smith I-PER", "visited O", "Paris B-LOC", ". O"]
    (data / "dev.txt").write_text(
        "\n".join(f"{r.split()[0]} NNP B-NP {r.split()[1]}" for r in rows)
    )
    flags = [
        f"--data_dir={data}",
        "--labels=O,B-PER,I-PER,B-LOC",
        "--do_eval",
        "--max_seq_length=16",
    ]
    out = tmp_path / "uncased"
    finished = server.run(
        "run_ner.py", *flags, f"--init_checkpoint={minilm_dir()}", f"--output_dir={out}"
    )
    assert finished.status == 0, finished.stderr[-3000:]
    assert record_tokens(str(out / "eval.tf_record"), f"{minilm_dir()}/vocab.txt") == [
        "[CLS]",
        "john",
        "smith",
        "visited",
        "paris",
        ".",
        "[SEP]",
    ]
    assert "[UNK]" not in finished.stderr
    # The same weights and vocab in a folder that does not say: cased, and a
    # warning that names the share of [UNK], the vocab and the likely cause.
    silent = tmp_path / "silent"
    silent.mkdir()
    for name in ("config.json", "model.safetensors", "vocab.txt"):
        os.symlink(os.path.join(minilm_dir(), name), silent / name)
    finished = server.run(
        "run_ner.py", *flags, f"--init_checkpoint={silent}", f"--output_dir={tmp_path / 'cased'}"
    )
    assert finished.status == 0, finished.stderr[-3000:]
    assert (
        f"60% of the first 5 tokens are [UNK] with the vocab {silent}/vocab.txt and "
        "do_lower_case=False: the vocab has no upper-case letters (an uncased model's), "
        "lower-case the input (--do_lower_case=true)"
    ) in finished.stderr


@pytest.fixture(scope="module")
def pretraining_records(server, tmp_path_factory):
    """Two record shards made by the README's command into a folder that did
    not exist, and a config that fits them: `(tmp folder, made, config)`."""
    tmp_path = tmp_path_factory.mktemp("pretraining")
    corpus = _write(
        str(tmp_path / "corpus.txt"),
        "\n\n".join(
            "\n".join(f"Sentence {d} {i} says the cat sat on a mat ." for i in range(6))
            for d in range(12)
        )
        + "\n",
    )
    vocab = _write(
        str(tmp_path / "vocab.txt"),
        "\n".join(
            [
                "[PAD]",
                "[UNK]",
                "[CLS]",
                "[SEP]",
                "[MASK]",
                ".",
                "sentence",
                "says",
                "the",
                "cat",
                "sat",
                "on",
                "a",
                "mat",
                *map(str, range(12)),
            ]
        )
        + "\n",
    )
    data = tmp_path / "data"
    made = server.run(
        "create_pretraining_data.py",
        f"--input_file={corpus}",
        f"--output_file={data}/train.tfrecord-0,{data}/train.tfrecord-1",
        f"--vocab_file={vocab}",
        "--max_seq_length=16",
        "--max_predictions_per_seq=3",
        "--dupe_factor=1",
    )
    config = str(tmp_path / "bert_config.json")
    BertConfig(
        vocab_size=26,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=16,
    ).to_json_file(config)
    return tmp_path, made, config


def pretraining_flags(input_file, config, output_dir, *more):
    return [
        f"--input_file={input_file}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=16",
        "--max_predictions_per_seq=3",
        "--train_batch_size=4",
        "--num_warmup_steps=1",
        *more,
    ]


def test_pretraining_records_and_the_readme_glob(server, pretraining_records):
    """The README's commands: records into a folder that does not exist yet,
    read back with `train.tfrecord-*` although the summary lies beside them."""
    tmp_path, made, config = pretraining_records
    data = tmp_path / "data"
    assert made.status == 0, made.stderr[-3000:]
    assert made.stdout.splitlines() == [
        f"records: {data}/train.tfrecord-0",
        f"records: {data}/train.tfrecord-1",
        f"summary: {data}/train.summary.json",
    ]
    trained = server.run(
        "run_pretraining.py",
        *pretraining_flags(
            f"{data}/train.tfrecord-*",
            config,
            tmp_path / "out",
            "--do_train",
            "--num_train_steps=2",
        ),
    )
    assert trained.status == 0, trained.stderr[-3000:]
    assert trained.stdout.splitlines() == [
        f"model config: {tmp_path}/out/bert_config.json",
        f"checkpoint: {tmp_path}/out/model.ckpt-2",
    ]


def test_records_of_another_vocab_are_one_error(server, pretraining_records):
    """Records whose token ids run past the config's vocab_size (made with
    a larger vocab.txt): one line naming the file, before any step."""
    tmp_path, made, config = pretraining_records
    small = str(tmp_path / "small_vocab_config.json")
    BertConfig.from_json_file(config).replace(vocab_size=12).to_json_file(small)
    first = tmp_path / "data" / "train.tfrecord-0"
    stopped = server.run(
        "run_pretraining.py",
        *pretraining_flags(
            first, small, tmp_path / "small_out", "--do_train", "--num_train_steps=2"
        ),
    )
    assert_one_error(stopped, f"{first}: token id", "past the model's vocab_size 12")
    assert not os.path.exists(tmp_path / "small_out" / "model.ckpt-2.index")


def _record_offsets(path):
    """The byte offset of each record of a TFRecord file, and its data length."""
    offsets = []
    with open(path, "rb") as f:
        data = f.read()
    offset = 0
    while offset < len(data):
        length = int.from_bytes(data[offset : offset + 8], "little")
        offsets.append((offset, length))
        offset += 16 + length
    return offsets


def test_damaged_records_are_named_and_can_be_skipped(server, pretraining_records):
    """A record file cut short, or with a byte changed, past its first record:
    one line naming the file, the record and its byte offset; with
    --skip_corrupt_records the run reads each file up to the damage and lists
    what it skipped."""
    tmp_path, made, config = pretraining_records
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    cut, changed = str(damaged / "cut.tfrecord"), str(damaged / "changed.tfrecord")
    for source, target in ((0, cut), (1, changed)):
        shutil.copy(tmp_path / "data" / f"train.tfrecord-{source}", target)
    cut_at, _ = _record_offsets(cut)[3]
    with open(cut, "r+b") as f:
        f.truncate(cut_at + 20)
    changed_at, length = _record_offsets(changed)[2]
    with open(changed, "r+b") as f:
        f.seek(changed_at + 12 + length // 2)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))

    stopped = server.run(
        "run_pretraining.py",
        *pretraining_flags(cut, config, tmp_path / "cut_out", "--do_train", "--num_train_steps=8"),
    )
    assert_one_error(
        stopped, f"{cut}: record 3 (byte {cut_at}) is truncated", "--skip_corrupt_records"
    )
    stopped = server.run(
        "run_pretraining.py",
        *pretraining_flags(
            changed, config, tmp_path / "changed_out", "--do_train", "--num_train_steps=8"
        ),
    )
    assert_one_error(
        stopped, f"{changed}: record 2 (byte {changed_at}) is corrupted (its data fails"
    )

    skipped = server.run(
        "run_pretraining.py",
        *pretraining_flags(
            f"{damaged}/*.tfrecord",
            config,
            tmp_path / "skip_out",
            "--do_train",
            "--do_eval",
            "--num_train_steps=8",
            "--eval_batch_size=4",
            "--skip_corrupt_records",
        ),
    )
    assert skipped.status == 0, skipped.stderr[-3000:]
    assert sorted(skipped.stdout.splitlines())[-2:] == [
        f"skipped: {changed} from record 2 (byte {changed_at}) is corrupted (its data fails "
        f"its checksum) to its end ({os.path.getsize(changed) - changed_at} bytes; 2 records read)",
        f"skipped: {cut} from record 3 (byte {cut_at}) is truncated to its end (20 bytes; "
        "3 records read)",
    ]


def test_a_damaged_feature_file_is_named_with_what_to_do(
    server, model_files, data_dir, trained, tmp_path
):  # noqa: F811
    """A fine-tuning run's cached features changed on disk: the run names the
    file and says to delete it."""
    output_dir = str(tmp_path / "out")
    shutil.copytree(trained[0], output_dir)
    features = os.path.join(output_dir, "eval.tf_record")
    offset, length = _record_offsets(features)[1]
    with open(features, "r+b") as f:
        f.seek(offset + 12 + length - 1)
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
    finished = server.run(
        CLASSIFIER, *classifier_flags(model_files, data_dir, output_dir, "--do_eval")
    )
    assert_one_error(
        finished, f"{features}: record 1 (byte {offset}) is corrupted", "delete it and run again"
    )


def _eval_results(output_dir):
    with open(os.path.join(output_dir, "eval_results.txt")) as f:
        return {k: float(v) for k, v in (line.split(" = ") for line in f.read().splitlines())}


def _probabilities(output_dir):
    return np.loadtxt(os.path.join(output_dir, "test_results.tsv"), ndmin=2)


@pytest.mark.large
@pytest.mark.numerics
def test_dtype_jit_compile_and_strategy_flags_reach_the_run(
    server, model_files, tmp_path, calibration
):  # noqa: F811
    """A short fine-tuning with the three flags, then a float32 evaluation and
    prediction with its checkpoint: the variables stay float32 and the run's
    own results differ from float32's by bfloat16's rounding, not more, not less."""
    # Predictions on the dev sentences (test.tsv is dev.tsv: MRPC's reader
    # takes both sentences from the same columns) to compare labels by margin.
    data_dir = str(tmp_path / "mrpc")
    dev_labels = np.array(write_mrpc(data_dir, random.Random(0), sizes=(96, 16, 8))["dev_labels"])
    shutil.copy(os.path.join(data_dir, "dev.tsv"), os.path.join(data_dir, "test.tsv"))
    out = str(tmp_path / "out")
    flags = classifier_flags(model_files, data_dir, out, "--do_eval", "--do_predict")
    finished = server.run(
        CLASSIFIER,
        *flags,
        "--do_train",
        "--num_train_epochs=0.5",
        "--dtype=mixed_bfloat16",
        "--jit_compile",
        "--distribution_strategy=one_device",
    )
    assert finished.status == 0, finished.stderr[-3000:]
    mixed, mixed_probabilities = _eval_results(out), _probabilities(out)
    reader = tf.train.load_checkpoint(os.path.join(out, "model.ckpt-6"))
    dtypes = reader.get_variable_to_dtype_map()
    assert set(dtypes.values()) == {tf.float32, tf.int64}, dtypes
    finished = server.run(CLASSIFIER, *flags)
    assert finished.status == 0, finished.stderr[-3000:]
    float32, float32_probabilities = _eval_results(out), _probabilities(out)
    assert mixed["global_step"] == float32["global_step"] == 6
    # The probabilities, not the eval loss: an average near ln 2 in which
    # bfloat16's errors cancel (measured 5e-7 to 1.5e-5 apart, too close to
    # float32 against itself). Probabilities measured 1.5e-5 to 3.7e-5 apart;
    # float32 against itself (with or without XLA) differs by < 1e-7.
    difference = np.abs(mixed_probabilities - float32_probabilities).max()
    assert 2e-6 < difference < 5e-3, (mixed_probabilities, float32_probabilities)
    assert abs(mixed["eval_loss"] - float32["eval_loss"]) < 5e-4, (mixed, float32)

    # Each run's eval accuracy is its own predictions' accuracy on the same
    # sentences, not float32's: after 6 steps the probabilities may all sit
    # within 1e-3 of 0.5 (here 0.5114 +- 2e-5), and bfloat16 flipped 3 of 16
    # labels on another CPU. The eval and predict programs may round apart
    # only where the margin is within the run's rounding.
    for results, probabilities, rounding in (
        (mixed, mixed_probabilities, difference),
        (float32, float32_probabilities, 1e-6),
    ):
        predicted_accuracy = np.mean(probabilities.argmax(axis=1) == dev_labels)
        mismatches = abs(results["eval_accuracy"] - predicted_accuracy) * len(dev_labels)
        near_half = np.sum(np.abs(probabilities[:, 1] - 0.5) <= rounding)
        assert mismatches <= near_half + 1e-6, (results, probabilities)
    flipped = mixed_probabilities.argmax(axis=1) != float32_probabilities.argmax(axis=1)
    calibration.record(
        difference=difference,
        loss_difference=abs(mixed["eval_loss"] - float32["eval_loss"]),
        labels_flipped=np.sum(flipped),
        smallest_margin=np.abs(float32_probabilities[:, 1] - 0.5).min(),
    )


def test_a_run_killed_after_a_checkpoint_resumes_to_the_same_model(
    server, model_files, data_dir, tmp_path
):  # noqa: F811
    """A seeded run, and a copy of its folder as a kill after its step-18
    checkpoint (mid-epoch) leaves it, resumed: the same final weights and
    evaluation."""
    whole, killed = str(tmp_path / "whole"), str(tmp_path / "killed")

    def run(output_dir):
        finished = server.run(
            CLASSIFIER,
            *classifier_flags(
                model_files,
                data_dir,
                output_dir,
                "--do_train",
                "--do_eval",
                "--seed=1",
                "--num_train_epochs=2",
                "--save_checkpoints_steps=9",
            ),
        )
        assert finished.status == 0, finished.stderr[-3000:]
        return finished

    run(whole)
    shutil.copytree(whole, killed)
    for path in glob.glob(os.path.join(killed, "model.ckpt-24.*")) + [f"{killed}/eval_results.txt"]:
        os.remove(path)
    _write(
        os.path.join(killed, "checkpoint"),
        'model_checkpoint_path: "model.ckpt-18"\n'
        'all_model_checkpoint_paths: "model.ckpt-9"\n'
        'all_model_checkpoint_paths: "model.ckpt-18"\n',
    )
    assert "resumed from" in run(killed).stderr
    a, b = (tf.train.load_checkpoint(os.path.join(d, "model.ckpt-24")) for d in (whole, killed))
    names = a.get_variable_to_shape_map()
    assert len(names) > 20 and set(names) == set(b.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_allclose(
            a.get_tensor(name), b.get_tensor(name), rtol=1e-5, atol=1e-6, err_msg=name
        )
    whole_results, killed_results = _eval_results(whole), _eval_results(killed)
    assert whole_results.keys() == killed_results.keys()
    for key in whole_results:
        assert killed_results[key] == pytest.approx(whole_results[key], rel=1e-5), key


@pytest.fixture
def read_only_dir(tmp_path):
    """A folder no one may write into. Root ignores file modes, so as root it
    is made immutable (`chattr +i`); the test is skipped where neither works."""
    folder = tmp_path / "read_only"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = False
    if os.access(folder, os.W_OK):
        made = subprocess.run(["chattr", "+i", str(folder)], capture_output=True)
        immutable = made.returncode == 0 and not os.access(folder, os.W_OK)
        if not immutable:
            pytest.skip("root writes into read-only folders here and chattr +i is not available")
    yield str(folder)
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


def squad_flags(model_files, train_file, output_dir):  # noqa: F811
    vocab, config = model_files
    return [
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--train_file={train_file}",
        f"--output_dir={output_dir}",
        "--do_train",
        "--max_seq_length=32",
        "--max_query_length=8",
    ]


def path_cases():
    """(id, script, flags(model, data, folder, out), words of the error).
    `folder` is a folder where a file is expected, or, in the cases named
    "read-only", a folder no one may write into; `out` is `<tmp>/new/out`,
    whose `new` does not exist."""
    folder_name = "a_folder"
    return [
        (
            "vocab_file is a folder",
            CLASSIFIER,
            lambda m, d, f, out: classifier_flags((f, m[1]), d, out, "--do_train", "--do_eval"),
            ["--vocab_file", folder_name, "is a folder; expected a file"],
        ),
        (
            "squad train_file is a folder",
            "run_squad.py",
            lambda m, d, f, out: squad_flags(m, f, out),
            ["--train_file", folder_name, "is a folder; expected a file"],
        ),
        (
            "output_dir in a read-only folder",
            CLASSIFIER,
            lambda m, d, f, out: classifier_flags(m, d, f"{f}/out", "--do_train"),
            ["--output_dir", "read_only", "not writable; expected a folder you can write to"],
        ),
        (
            "output_dir is a read-only folder",
            CLASSIFIER,
            lambda m, d, f, out: classifier_flags(m, d, f, "--do_train"),
            ["--output_dir", "read_only", "not writable; expected a folder you can write to"],
        ),
        (
            "export_dir in a read-only folder",
            CLASSIFIER,
            lambda m, d, f, out: classifier_flags(m, d, out, "--do_train", f"--export_dir={f}/e"),
            ["--export_dir", "read_only", "not writable; expected a folder you can write to"],
        ),
        (
            "output_file in a read-only folder",
            "create_pretraining_data.py",
            lambda m, d, f, out: [
                f"--input_file={d}/train.tsv",
                f"--output_file={f}/data/train.tfrecord",
                f"--vocab_file={m[0]}",
                "--max_seq_length=16",
                "--max_predictions_per_seq=3",
            ],
            ["--output_file", "read_only", "not writable; expected a folder you can write to"],
        ),
    ]


@pytest.mark.parametrize("case", path_cases(), ids=[c[0] for c in path_cases()])
def test_a_folder_for_a_file_or_a_read_only_output_is_one_error_line(
    case, server, model_files, data_dir, tmp_path, request
):  # noqa: F811
    name, script, make_flags, words = case
    if "read-only" in name:
        folder = request.getfixturevalue("read_only_dir")
    else:
        folder = str(tmp_path / "a_folder")
        os.mkdir(folder)
    out = tmp_path / "new" / "out"
    finished = server.run(script, *make_flags(model_files, data_dir, folder, str(out)))
    assert_one_error(finished, *words)
    assert not (tmp_path / "new").exists()
    assert os.listdir(folder) == []


def test_an_output_dir_below_a_file_is_one_error_line(server, model_files, data_dir, tmp_path):  # noqa: F811
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    finished = server.run(
        CLASSIFIER, *classifier_flags(model_files, data_dir, f"{a_file}/out", "--do_train")
    )
    assert_one_error(finished, "--output_dir", f"{a_file} is a file; expected a folder")


@pytest.mark.parametrize(
    "corpus", [b"Good movie .\n\xff\xfe bad\n", b""], ids=["not UTF-8", "empty"]
)
@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "existing folder"])
def test_failed_pretraining_data_leaves_no_folder_or_file(
    server, model_files, tmp_path, corpus, existing
):  # noqa: F811
    """A corpus with a line that is not UTF-8, or none at all: one error line;
    the folders made for --output_file are gone, a folder that was there keeps
    only what it held."""
    (tmp_path / "corpus.txt").write_bytes(corpus)
    folder = tmp_path / "out" / "data"
    if existing:
        folder.mkdir(parents=True)
        (folder / "kept.txt").write_text("earlier")
    finished = server.run(
        "create_pretraining_data.py",
        f"--input_file={tmp_path / 'corpus.txt'}",
        f"--output_file={folder}/train.tfrecord-0,{folder}/train.tfrecord-1",
        f"--vocab_file={model_files[0]}",
        "--max_seq_length=16",
        "--max_predictions_per_seq=3",
    )
    assert_one_error(finished, "corpus.txt")
    if existing:
        assert os.listdir(folder) == ["kept.txt"]
    else:
        assert not (tmp_path / "out").exists()


def generic_flags(model_files, data_dir, output_dir, *more):  # noqa: F811
    vocab, config = model_files
    return [
        "--task_name=generic",
        f"--data_dir={data_dir}",
        "--text_a_column=text",
        "--label_column=label",
        "--labels=neg,pos",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=32",
        "--do_train",
        "--do_eval",
        *more,
    ]


@pytest.mark.parametrize("train", ["", "text,label\n"], ids=["empty", "header only"])
@pytest.mark.parametrize("existing", [False, True], ids=["new folder", "existing folder"])
def test_an_empty_train_csv_is_named_and_nothing_is_left(
    server, model_files, tmp_path, train, existing
):  # noqa: F811
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.csv").write_text(train)
    (data / "dev.csv").write_text("text,label\nGood movie.,pos\n")
    out = tmp_path / "runs" / "out"
    if existing:
        out.mkdir(parents=True)
        (out / "kept.txt").write_text("earlier")
    finished = server.run(CLASSIFIER, *generic_flags(model_files, data, out))
    assert_one_error(finished, f"{data}/train.csv", "no examples")
    if existing:
        assert os.listdir(out) == ["kept.txt"]
    else:
        assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "rows, line, words",
    [
        # A quote inside a quoted field not doubled ends the field early.
        ('Fine.,pos\n"Good, "really", I think.",pos\n', 3, "after the closing quote"),
        ('Fine.,pos\n"Good, I think.,pos\nBad.,neg\n', 3, "never closed"),
    ],
    ids=["quote inside", "never closed"],
)
def test_a_csv_quote_error_names_the_row_and_the_quote(tmp_path, rows, line, words):
    from bert_tf.data.classification.generic import GenericProcessor
    from bert_tf.errors import InputError

    (tmp_path / "train.csv").write_text("text,label\n" + rows)
    processor = GenericProcessor(text_a_column="text", label_column="label", labels="neg,pos")
    with pytest.raises(InputError) as raised:
        processor.get_train_examples(str(tmp_path))
    message = str(raised.value)
    assert message.startswith(f"{tmp_path}/train.csv:{line}: "), message
    assert words in message and '""' in message, message


@pytest.mark.parametrize("converted", [0.75, 0.75 - 1e-12], ids=["equal", "a rounding below"])
def test_the_dev_check_prints_no_negative_zero(converted):
    from bert_tf.export.deploy.conversion import accuracy_summary

    report = {
        "format": "onnx_int8",
        "examples": 8,
        "saved_model_accuracy": 0.75,
        "onnx_int8_accuracy": converted,
        "labels_changed": 0,
    }
    assert "(+0.00 points;" in accuracy_summary(report)


def test_a_saved_model_export_says_what_its_long_steps_do(tmp_path, caplog):
    """After run_ner's "exporting the SavedModel" line, TensorFlow traced the
    signatures, then the model's functions while writing, for 12 s (about
    half each) without a word: a line says when each starts."""
    import keras

    from bert_tf.export.common import write_archive

    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    serve = tf.function(lambda x: model(x), input_signature=[tf.TensorSpec([None, 2])])
    caplog.set_level("INFO", logger="absl")
    write_archive(str(tmp_path / "export"), model, tf.Module(), {"serving_default": serve})
    lines = [record.getMessage() for record in caplog.records]
    tracing = [i for i, line in enumerate(lines) if line.startswith("tracing")]
    writing = [i for i, line in enumerate(lines) if line.startswith("writing the SavedModel")]
    assert tracing and writing and tracing[0] < writing[0], lines
    assert "serving_default" in lines[tracing[0]]
    assert (tmp_path / "export" / "saved_model.pb").exists()


def test_an_os_error_is_named_by_the_flag_whose_path_holds_it(tmp_path):
    """What `run_main` prints for an OSError: the flag whose path is the file,
    a folder above it or a glob it matches (the longest wins), else nothing."""
    import errno

    from bert_tf.cli import file_error_message

    flag_values = {
        "data_dir": str(tmp_path),
        "output_dir": f"{tmp_path}/out",
        "input_file": f"{tmp_path}/a/*.txt,{tmp_path}/b.txt",
        "layers": ["-1", "-2"],
        "do_train": True,
    }

    def message(error_type, code, filename):
        return file_error_message(error_type(code, os.strerror(code), filename), flag_values)

    assert message(IsADirectoryError, errno.EISDIR, f"{tmp_path}/train.tsv") == (
        f"--data_dir={tmp_path}: {tmp_path}/train.tsv is a folder; expected a file"
    )
    assert message(PermissionError, errno.EACCES, f"{tmp_path}/out/eval") == (
        f"--output_dir={tmp_path}/out: {tmp_path}/out/eval: Permission denied"
    )
    assert message(IsADirectoryError, errno.EISDIR, f"{tmp_path}/a/x.txt") == (
        f"--input_file={tmp_path}/a/*.txt: {tmp_path}/a/x.txt is a folder; expected a file"
    )
    assert message(IsADirectoryError, errno.EISDIR, f"{tmp_path}/b.txt") == (
        f"--input_file={tmp_path}/b.txt is a folder; expected a file"
    )
    assert message(PermissionError, errno.EACCES, "/elsewhere/x") is None
    assert file_error_message(OSError("no file named"), flag_values) is None
