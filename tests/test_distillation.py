"""run_classifier.py --teacher: a student taught by a fine-tuned teacher
(`tasks.distillation`), on the train set and unlabelled text; its start from
the teacher's layers, its outputs, resume, the learning it brings and the
checks of its inputs."""

import os
import random
import shutil

import numpy as np
import pytest
import tensorflow as tf
from script_runs import ScriptServer
from shared import WORDS, assert_one_error, assert_resumes, options, tiny_model_files, write_mrpc

from bert_tf.checkpoints import read_tensors
from bert_tf.options import replace
from bert_tf.tasks.classifier import run_classifier
from bert_tf.tasks.distillation import chosen_layers, student_weights

CLASSIFIER = "run_classifier.py"
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."]


def test_the_student_takes_evenly_spaced_teacher_layers_up_to_the_top():
    assert chosen_layers(12, 6) == [1, 3, 5, 7, 9, 11]
    assert chosen_layers(6, 3) == [1, 3, 5]
    assert chosen_layers(6, 2) == [2, 5]
    assert chosen_layers(4, 4) == [0, 1, 2, 3]
    assert chosen_layers(2, 1) == [1]
    weights = {
        "bert/embeddings/word_embeddings": 0,
        "bert/encoder/layer_0/output/dense/kernel": 10,
        "bert/encoder/layer_1/output/dense/kernel": 11,
        "bert/encoder/layer_2/output/dense/kernel": 12,
        "bert/encoder/layer_11/output/dense/kernel": 111,
        "output_weights": 5,
    }
    assert student_weights(weights, [1, 11]) == {
        "bert/embeddings/word_embeddings": 0,
        "bert/encoder/layer_0/output/dense/kernel": 11,
        "bert/encoder/layer_1/output/dense/kernel": 111,
        "output_weights": 5,
    }


@pytest.fixture(scope="module")
def teacher(tmp_path_factory):
    """A 2-layer classifier fine-tuned on MRPC-like data ("good" in either
    sentence: label 1): `(model_files, data_dir, teacher output_dir, unlabelled file)`."""
    root = tmp_path_factory.mktemp("distil")
    model_files = tiny_model_files(str(root), [*SPECIAL, *WORDS])
    data_dir = str(root / "data")
    rows = write_mrpc(data_dir, random.Random(0), sizes=(240, 61, 37))
    unlabelled = str(root / "unlabelled.txt")
    rng = random.Random(1)
    more = write_mrpc(str(root / "more"), rng, sizes=(400, 1, 1))["train"]
    with open(unlabelled, "w") as f:
        f.write("".join(f"{a}\t{b}\n" for a, b in [*rows["test"], *more]))
    output_dir = str(root / "teacher")
    metrics = run_classifier(
        options(model_files, "mrpc", data_dir, output_dir, do_train=True, do_eval=True)
    )
    assert metrics["eval_accuracy"] > 0.9, metrics
    return model_files, data_dir, output_dir, unlabelled


def distil(teacher, output_dir, **flags):
    model_files, data_dir, teacher_dir, unlabelled = teacher
    flags = {"teacher": teacher_dir, "unlabeled_file": unlabelled, **flags}
    return replace(options(model_files, "mrpc", data_dir, output_dir), **flags)


def test_a_student_cut_from_the_teacher_starts_from_its_top_layer(teacher, tmp_path):
    """With a learning rate of 1e-30 (updates far below a float32 ulp of the
    weights; 0 is refused) the student's checkpoint is its start: the
    teacher's embeddings, layer 1 as its only layer, pooler and head."""
    out = str(tmp_path / "student")
    run_classifier(
        distil(
            teacher,
            out,
            student_num_layers=1,
            learning_rate=1e-30,
            num_train_epochs=0.1,
            do_train=True,
        )
    )
    student = read_tensors(tf.train.latest_checkpoint(out))
    taught = read_tensors(tf.train.latest_checkpoint(teacher[2]))
    layers = {n for n in student if n.startswith("bert/encoder/layer_")}
    assert layers and all(n.startswith("bert/encoder/layer_0/") for n in layers)
    for name in layers:
        if "adam" not in name:
            theirs = name.replace("layer_0/", "layer_1/")
            np.testing.assert_array_equal(student[name], taught[theirs], err_msg=name)
    for name in ("bert/embeddings/word_embeddings", "bert/pooler/dense/kernel", "output_weights"):
        np.testing.assert_array_equal(student[name], taught[name], err_msg=name)


def test_intermediate_losses_alone_train_the_encoder_and_a_projection_not_the_head(
    teacher, tmp_path
):
    """A student of hidden 16 (the teacher's 32) distilled on hidden states
    and attention alone (TinyBERT's first stage): the projection to the
    teacher's width is trained and checkpointed; the classifier head and
    the pooler, which those losses do not reach, stay as they started."""
    model_files, _, teacher_dir, _ = teacher
    narrow = tiny_model_files(
        str(tmp_path), [*SPECIAL, *WORDS], hidden_size=16, intermediate_size=32
    )[1]
    flags = dict(
        bert_config_file=narrow,
        teacher_config_file=model_files[1],
        hidden_distillation_weight=1.0,
        attention_distillation_weight=1.0,
        num_train_epochs=0.5,
        do_train=True,
        intermediate_only=True,
    )
    # The same seed's start: updates of lr 1e-30 leave the weights as they were.
    run_classifier(distil(teacher, str(tmp_path / "start"), learning_rate=1e-30, **flags))
    start = read_tensors(tf.train.latest_checkpoint(str(tmp_path / "start")))
    run_classifier(distil(teacher, str(tmp_path / "alone"), **flags))
    alone = read_tensors(tf.train.latest_checkpoint(str(tmp_path / "alone")))
    assert alone["distillation/hidden_projection/kernel"].shape == (16, 32)
    assert "distillation/embedding_projection/kernel" not in alone
    for name in ("output_weights", "output_bias", "bert/pooler/dense/kernel"):
        np.testing.assert_array_equal(alone[name], start[name], err_msg=name)
    for name in (
        "bert/encoder/layer_1/attention/self/query/kernel",
        "distillation/hidden_projection/kernel",
    ):
        assert not np.allclose(alone[name], start[name]), name


@pytest.mark.large
def test_distillation_writes_the_fine_tuning_outputs_and_resumes_like_an_uninterrupted_run(
    teacher, tmp_path
):
    """The student's eval_results.txt, test_results.tsv and SavedModel; a run
    killed after its first checkpoint ends with the same weights."""
    flags = dict(
        student_num_layers=1,
        do_train=True,
        do_eval=True,
        do_predict=True,
        num_train_epochs=1.0,
        save_checkpoints_steps=20,
        deterministic=True,
    )
    whole = str(tmp_path / "whole")
    metrics = run_classifier(distil(teacher, whole, export_dir=str(tmp_path / "export"), **flags))
    # One epoch over 240 labelled and 37 + 400 unlabelled texts, 16 a batch.
    assert metrics["global_step"] == (240 + 437) // 16
    assert os.path.exists(os.path.join(whole, "test_results.tsv"))
    assert os.path.exists(os.path.join(tmp_path, "export", "saved_model.pb"))

    killed = str(tmp_path / "killed")
    shutil.copytree(whole, killed, ignore=shutil.ignore_patterns("model.ckpt-42.*"))
    with open(os.path.join(killed, "checkpoint"), "w") as f:
        f.write('model_checkpoint_path: "model.ckpt-40"\n')
    for name in ("eval_results.txt", "test_results.tsv"):
        os.remove(os.path.join(killed, name))
    resumed = run_classifier(distil(teacher, killed, **flags))
    assert resumed == metrics
    a, b = (
        read_tensors(os.path.join(whole, "model.ckpt-42")),
        read_tensors(os.path.join(killed, "model.ckpt-42")),
    )
    assert set(a) == set(b)
    for name in a:
        np.testing.assert_allclose(a[name], b[name], rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.large
def test_a_narrower_student_resumes_its_projections_like_an_uninterrupted_run(teacher, tmp_path):
    """Hidden and embedding losses through projections to the teacher's
    width: a run killed after its first checkpoint ends with the same
    weights, projections and their optimizer slots included."""
    model_files = teacher[0]
    narrow = tiny_model_files(
        str(tmp_path), [*SPECIAL, *WORDS], hidden_size=16, intermediate_size=32
    )[1]
    flags = dict(
        bert_config_file=narrow,
        teacher_config_file=model_files[1],
        hidden_distillation_weight=1.0,
        embedding_distillation_weight=0.5,
        num_train_epochs=0.5,
        save_checkpoints_steps=10,
        deterministic=True,
        do_train=True,
        do_eval=True,
    )
    whole = str(tmp_path / "whole")
    metrics = run_classifier(distil(teacher, whole, **flags))
    last = metrics["global_step"]
    assert last == (240 + 437) // 16 // 2
    a = read_tensors(os.path.join(whole, f"model.ckpt-{last}"))
    projections = [n for n in a if n.startswith("distillation/")]
    assert len(projections) == 4 and any(
        n.startswith("optimizer/") and "projection" in n for n in a
    )
    resumed = assert_resumes(
        whole, last, 20, lambda out: run_classifier(distil(teacher, out, **flags))
    )
    assert resumed == metrics


@pytest.mark.learning
def test_with_few_labels_a_distilled_student_beats_one_trained_on_the_labels(
    teacher, tmp_path, calibration
):
    """16 labelled pairs (and 437 unlabelled texts for the teacher to label):
    a 2-layer student from scratch learns the rule from the teacher; on the
    labels alone, with as many updates, it stays near chance. Calibrated
    (tests/calibrate.py, seeds 3-5, default, AVX2, SSE4.1 and Eigen kernels,
    two sessions' CPUs): labels alone 0.49-0.59, distilled 1.0."""
    model_files, data_dir, _, _ = teacher
    few = str(tmp_path / "few")
    shutil.copytree(data_dir, few)
    with open(os.path.join(data_dir, "train.tsv")) as f:
        lines = f.read().splitlines()
    with open(os.path.join(few, "train.tsv"), "w") as f:
        f.write("\n".join(lines[:17]) + "\n")  # the header and 16 examples
    seed = calibration.seed(3)
    epochs = 15
    distilled = run_classifier(
        distil(
            (model_files, few, teacher[2], teacher[3]),
            str(tmp_path / "distilled"),
            teacher_config_file=model_files[1],
            num_train_epochs=float(epochs),
            do_train=True,
            do_eval=True,
            seed=seed,
        )
    )
    updates = distilled["global_step"]
    assert updates == int((16 + 437) / 16 * epochs)
    labels_only = run_classifier(
        replace(
            options(model_files, "mrpc", few, str(tmp_path / "labels"), seed=seed),
            num_train_epochs=float(updates),  # one update an epoch of 16
            do_train=True,
            do_eval=True,
        )
    )
    assert labels_only["global_step"] == updates
    calibration.record(
        distilled=distilled["eval_accuracy"], labels_only=labels_only["eval_accuracy"]
    )
    assert distilled["eval_accuracy"] >= 0.85
    assert distilled["eval_accuracy"] - labels_only["eval_accuracy"] >= 0.25


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


def script_flags(teacher, output_dir, *more):
    (vocab, config), data_dir, teacher_dir, unlabelled = teacher
    return [
        "--task_name=MRPC",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--output_dir={output_dir}",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--do_train",
        f"--teacher={teacher_dir}",
        f"--bert_config_file={config}",
        f"--teacher_config_file={config}",
        *more,
    ]


@pytest.mark.parametrize(
    "more, words",
    [
        (["--temperature=0"], ["--temperature=0.0: expected a number > 0"]),
        (["--distillation_weight=1.5"], ["--distillation_weight=1.5: expected a number in [0, 1]"]),
        (["--teacher=/no/such/run"], ["--teacher", "no checkpoint at '/no/such/run'"]),
        (["--teacher_config_file="], ["--teacher_config_file is needed", "no config beside it"]),
        (["--student_num_layers=3"], ["--student_num_layers=3", "only 2 layers"]),
        (["--unlabeled_file=/no/such.txt"], ["--unlabeled_file", "/no/such.txt"]),
        (
            ["--hidden_distillation_weight=1", "--layer_map=0:2"],
            ["--layer_map=0:2: 0:2 does not fit a student of 2 layers and a teacher of 2"],
        ),
        (
            ["--cosine_distillation_weight=1", "--layer_map=1:1,1:0"],
            ["--layer_map=1:1,1:0: a student layer is mapped twice"],
        ),
        (["--layer_map=0:1"], ["--layer_map: add a weight of an intermediate loss"]),
        (["--intermediate_only"], ["--intermediate_only: add a weight of an intermediate loss"]),
        (
            ["--attention_distillation_weight=-1"],
            ["--attention_distillation_weight=-1.0: expected a number >= 0"],
        ),
    ],
)
def test_bad_distillation_flags_are_one_error_before_any_work(
    server, teacher, tmp_path, more, words
):
    out = str(tmp_path / "out")
    finished = server.run(CLASSIFIER, *script_flags(teacher, out), *more)
    assert_one_error(finished, *words)
    assert not os.path.exists(os.path.join(out, "model.ckpt-1.index"))


def test_distillation_flags_without_a_teacher_are_one_error(server, teacher, tmp_path):
    flags = [f for f in script_flags(teacher, str(tmp_path / "out")) if "teacher" not in f]
    finished = server.run(CLASSIFIER, *flags, "--unlabeled_file=more.txt")
    assert_one_error(finished, "--unlabeled_file is for distillation: add --teacher")
    finished = server.run(CLASSIFIER, *flags, "--hidden_distillation_weight=0.5")
    assert_one_error(finished, "--hidden_distillation_weight is for distillation: add --teacher")


def test_a_teacher_of_other_labels_another_task_or_vocab_is_one_error(server, teacher, tmp_path):
    (vocab, config), data_dir, teacher_dir, _ = teacher
    out = str(tmp_path / "out")
    # Other labels: the same data read as three labels.
    three = str(tmp_path / "three")
    shutil.copytree(data_dir, three)
    relabelled = script_flags(teacher, out, f"--data_dir={three}")
    relabelled[0] = "--task_name=generic"
    finished = server.run(
        CLASSIFIER,
        *relabelled,
        "--has_header=true",
        "--text_a_column=3",
        "--text_b_column=4",
        "--label_column=0",
        "--labels=0,1,2",
    )
    assert_one_error(finished, "--teacher", "labels", "['0', '1']")
    # Another task: a regression head (one output) where the teacher has two.
    regression = [f for f in relabelled if not f.startswith("--data_dir")]
    finished = server.run(
        CLASSIFIER,
        *regression,
        f"--data_dir={three}",
        "--has_header=true",
        "--text_a_column=3",
        "--text_b_column=4",
        "--label_column=0",
        "--regression=true",
    )
    assert_one_error(finished, "--teacher", "labels")
    # Another vocabulary of the same size: two tokens swapped.
    other_vocab = str(tmp_path / "vocab.txt")
    with open(vocab) as f:
        tokens = f.read().splitlines()
    tokens[7], tokens[8] = tokens[8], tokens[7]
    with open(other_vocab, "w") as f:
        f.write("\n".join(tokens) + "\n")
    finished = server.run(CLASSIFIER, *script_flags(teacher, out), f"--vocab_file={other_vocab}")
    assert_one_error(finished, "--vocab_file", "vocabulary differs from --teacher")
    assert not os.path.exists(out)


@pytest.mark.large
@pytest.mark.parametrize("kind", ["regression", "multi_label"])
def test_regression_and_multi_label_distil_on_unlabelled_text(kind, tmp_path):
    """Their unlabelled records carry NaN labels, masked out of the label
    loss: a NaN reaching the loss would stop the run (not finite)."""
    vocab, config = tiny_model_files(str(tmp_path), [*SPECIAL, *WORDS])
    rng = random.Random(0)

    def text():
        return " ".join(rng.choice(WORDS) for _ in range(6))

    def label(words):
        if kind == "regression":
            return str(words.count("good") * 1.5)
        return "|".join(w for w in ("good", "bad") if w in words) or "none"

    for split, count in (("train", 48), ("dev", 16)):
        rows = [text() for _ in range(count)]
        (tmp_path / f"{split}.tsv").write_text(
            "sentence\tlabel\n" + "".join(f"{t}\t{label(t)}\n" for t in rows)
        )
    unlabelled = tmp_path / "unlabelled.txt"
    unlabelled.write_text("".join(text() + "\n" for _ in range(40)))
    task = (
        {"regression": True}
        if kind == "regression"
        else {"multi_label": True, "labels": ("good", "bad", "none"), "label_delimiter": "|"}
    )

    def run(output_dir, **more):
        return run_classifier(
            replace(
                options((vocab, config), "generic", str(tmp_path), str(tmp_path / output_dir)),
                text_a_column="sentence",
                label_column="label",
                num_train_epochs=2.0,
                do_train=True,
                do_eval=True,
                **task,
                **more,
            )
        )

    run("teacher")
    metrics = run(
        "student",
        teacher=str(tmp_path / "teacher"),
        teacher_config_file=config,
        student_num_layers=1,
        unlabeled_file=str(unlabelled),
    )
    assert metrics["global_step"] == int((48 + 40) / 16 * 2)
    assert np.isfinite(metrics["eval_loss"])


@pytest.mark.learning
def test_with_few_labels_intermediate_losses_beat_distilling_the_outputs_alone(
    teacher, tmp_path, calibration
):
    """16 labelled pairs and no other text: a 2-layer student from scratch
    distilled on the teacher's outputs alone, against the same run that also
    matches the teacher's hidden states and attention (TinyBERT), 150
    epochs each. Calibrated (tests/calibrate.py, seeds 3-5, default, AVX2,
    SSE4.1 and Eigen kernels): outputs alone 0.541-0.557, with the layers 1.0."""
    model_files, data_dir, teacher_dir, _ = teacher
    few = str(tmp_path / "few")
    shutil.copytree(data_dir, few)
    with open(os.path.join(data_dir, "train.tsv")) as f:
        lines = f.read().splitlines()
    with open(os.path.join(few, "train.tsv"), "w") as f:
        f.write("\n".join(lines[:17]) + "\n")  # the header and 16 examples
    seed = calibration.seed(3)

    def run(name, **more):
        flags = dict(
            teacher=teacher_dir,
            teacher_config_file=model_files[1],
            num_train_epochs=150.0,
            distillation_weight=1.0,
            do_train=True,
            do_eval=True,
            seed=seed,
        )
        options = replace(options_of(model_files, few, str(tmp_path / name)), **flags, **more)
        return run_classifier(options)["eval_accuracy"]

    outputs = run("outputs")
    layers = run("layers", hidden_distillation_weight=1.0, attention_distillation_weight=1.0)
    calibration.record(outputs=outputs, layers=layers)
    assert layers >= 0.85
    assert layers - outputs >= 0.25


def options_of(model_files, data_dir, output_dir):
    return options(model_files, "mrpc", data_dir, output_dir)
