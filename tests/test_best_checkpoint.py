"""Evaluation during training (--eval_every_steps / --eval_every_epoch), the
best checkpoint (--keep_best_checkpoint), early stopping
(--early_stopping_patience) and their resume, through run_classifier.py on
a tiny MRPC."""

import glob
import json
import os
import random
import re
import shutil

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the exported model's ops)
from script_runs import ScriptServer
from shared import assert_one_error, numpy_probabilities, pair_features, write_mrpc

from bert_tf.errors import InputError
from bert_tf.training.best_checkpoint import BestCheckpoint, MetricChoice
from bert_tf.training.periodic_eval import PeriodicEvaluation

CLASSIFIER = "run_classifier.py"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


@pytest.fixture(scope="module")
def mrpc(tmp_path_factory):
    """(data_dir, rows): 96 train pairs (6 steps an epoch at batch 16), 16 dev, 8 test."""
    path = str(tmp_path_factory.mktemp("mrpc"))
    return path, write_mrpc(path, random.Random(0), sizes=(96, 16, 8))


def flags(model_files, data_dir, output_dir, *more):  # noqa: F811
    vocab, config = model_files
    return [
        "--task_name=MRPC",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=32",
        "--train_batch_size=16",
        "--learning_rate=1e-3",
        "--do_train",
        "--do_eval",
        *more,
    ]


def record(output_dir):
    with open(os.path.join(output_dir, "best", "best_metric.json")) as f:
        return json.load(f)


def eval_results(output_dir):
    with open(os.path.join(output_dir, "eval_results.txt")) as f:
        return {k: float(v) for k, v in (line.split(" = ") for line in f.read().splitlines())}


def eval_lines(stderr):
    """{step: the rest of the line} of each `eval at step N: ...` log line."""
    return {int(m[1]): m[2] for m in re.finditer(r"eval at step (\d+): (.*)", stderr)}


def test_metric_choice_parses_the_direction_and_finds_the_metric():
    assert MetricChoice.parse("accuracy") == MetricChoice("accuracy", False)
    assert MetricChoice.parse("eval_loss") == MetricChoice("eval_loss", True)
    assert MetricChoice.parse("min:f1") == MetricChoice("f1", True)
    assert MetricChoice.parse("max:eval_loss") == MetricChoice("eval_loss", False)
    for bad in ("", "min:", "up:f1"):
        with pytest.raises(InputError, match="--keep_best_checkpoint"):
            MetricChoice.parse(bad)
    metrics = {"eval_accuracy": 0.5, "f1": 0.4, "global_step": 3}
    assert MetricChoice.parse("accuracy").key_in(metrics) == "eval_accuracy"
    assert MetricChoice.parse("f1").key_in(metrics) == "f1"
    with pytest.raises(InputError, match="no such metric; it gives eval_accuracy, f1$"):
        MetricChoice.parse("global_step").key_in(metrics)
    assert MetricChoice.parse("eval_loss").better(0.1, 0.2)
    assert not MetricChoice.parse("accuracy").better(0.5, 0.5)


def kept_best(output_dir, step, value, evaluations):
    """A BestCheckpoint of `output_dir` by accuracy, its record as a run left
    it. Not the chief: it decides as every worker does and writes nothing,
    so it needs no model."""
    os.makedirs(os.path.join(output_dir, "best"), exist_ok=True)
    with open(os.path.join(output_dir, "best", "best_metric.json"), "w") as f:
        json.dump(
            {
                "metric": "eval_accuracy",
                "lower_is_better": False,
                "value": value,
                "step": step,
                "checkpoint": f"model.ckpt-{step}",
                "evaluations": evaluations,
            },
            f,
        )
    return BestCheckpoint(
        str(output_dir), MetricChoice.parse("accuracy"), None, None, is_chief=False
    )


def test_a_resumed_run_keeps_the_evaluation_at_its_step_and_does_the_later_ones_again(tmp_path):
    """Killed after the evaluation at step 6, before its checkpoint, a run
    resumes from step 4's checkpoint: the evaluations at steps 2 and 4 stand
    (step 4's counts towards the patience), step 6's is done again."""
    evaluations = [[2, 0.75], [4, 0.5], [6, 0.5]]
    best = kept_best(tmp_path / "a", 2, 0.75, evaluations)
    best.resume(4)
    assert best.record["evaluations"] == [[2, 0.75], [4, 0.5]]
    assert best.evaluations_since_best() == 1

    # Patience 2: the evaluation at step 6 is the second without improvement.
    best = kept_best(tmp_path / "b", 2, 0.75, evaluations)
    evaluation = PeriodicEvaluation(lambda: {"eval_accuracy": 0.5}, 2, best=best, patience=2)
    assert not evaluation.resume(4)
    assert evaluation(6)
    assert best.record["evaluations"] == evaluations and best.record["step"] == 2
    # Resumed from step 6's checkpoint, the run had already stopped.
    best = kept_best(tmp_path / "c", 2, 0.75, evaluations)
    assert PeriodicEvaluation(lambda: {}, 2, best=best, patience=2).resume(6)

    # The best evaluation at the resume step stays the best, with no evaluation since.
    best = kept_best(tmp_path / "d", 4, 0.75, [[2, 0.5], [4, 0.75], [6, 0.6]])
    best.resume(4)
    assert best.record["evaluations"] == [[2, 0.5], [4, 0.75]]
    assert best.evaluations_since_best() == 0
    assert not best.update(6, {"eval_accuracy": 0.75})
    assert best.prefix == os.path.join(str(tmp_path / "d"), "best", "model.ckpt-4")


@pytest.mark.learning
def test_the_best_checkpoint_is_kept_and_used_for_eval_predict_and_export(
    server, model_files, mrpc, tmp_path, calibration
):  # noqa: F811
    """Three evaluations; the best by `max:eval_loss` (the worst model: under
    learning an early one, not the last) is kept apart from
    keep_checkpoint_max, and eval_results.txt, test_results.tsv and the
    SavedModel come from it. The best and the last evaluations are checked
    against the float64 numpy classifier on their checkpoints."""
    data_dir, rows = mrpc
    out, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    finished = server.run(
        CLASSIFIER,
        *flags(model_files, data_dir, out, "--do_predict", f"--export_dir={export_dir}"),
        "--num_train_epochs=4",
        "--learning_rate=2e-3",
        "--eval_every_steps=8",
        "--save_checkpoints_steps=8",
        "--keep_checkpoint_max=1",
        "--keep_best_checkpoint=max:eval_loss",
        f"--seed={calibration.seed(1)}",
    )
    assert finished.status == 0, finished.stderr[-3000:]
    vocab, config = model_files
    lines = eval_lines(finished.stderr)
    assert sorted(lines) == [8, 16, 24], finished.stderr[-3000:]
    kept = record(out)
    steps = [step for step, _ in kept["evaluations"]]
    values = [value for _, value in kept["evaluations"]]
    assert steps == sorted(lines)
    best_step = steps[int(np.argmax(values))]
    assert kept["step"] == best_step and kept["value"] == max(values)
    assert kept["metric"] == "eval_loss" and kept["checkpoint"] == f"model.ckpt-{best_step}"
    for i, (step, value) in enumerate(kept["evaluations"]):
        assert f"eval_loss {value:.4f}" in lines[step]
        assert ("new best eval_loss" in lines[step]) == (i == 0 or value > max(values[:i]))
    assert sorted(os.listdir(os.path.join(out, "best"))) == sorted(
        [
            "best_metric.json",
            "checkpoint",
            f"model.ckpt-{best_step}.index",
            f"model.ckpt-{best_step}.data-00000-of-00001",
        ]
    )
    # keep_checkpoint_max=1 left the regular checkpoint of step 24 alone.
    assert glob.glob(os.path.join(out, "model.ckpt-*.index")) == [
        os.path.join(out, "model.ckpt-24.index")
    ]

    labels = np.array(rows["dev_labels"])
    dev = pair_features(vocab, rows["dev"], 32)
    best_prefix = os.path.join(out, "best", f"model.ckpt-{best_step}")
    best_dev = numpy_probabilities(best_prefix, config, dev)
    loss = -np.log(best_dev[np.arange(16), labels]).mean()
    assert kept["value"] == pytest.approx(loss, abs=1e-5)
    final_dev = numpy_probabilities(os.path.join(out, "model.ckpt-24"), config, dev)
    final_loss = -np.log(final_dev[np.arange(16), labels]).mean()
    assert values[-1] == pytest.approx(final_loss, abs=1e-5)
    # The final model is not the best, so what follows tells them apart
    # (loss_drop 0.0051 to 0.0078 over seeds 0-3, default and avx2 kernels).
    calibration.record(loss_drop=loss - final_loss)
    assert final_loss < loss and np.abs(final_dev - best_dev).max() > 1e-3

    results = eval_results(out)
    assert results["global_step"] == best_step
    assert results["eval_loss"] == pytest.approx(loss, abs=1e-5)
    assert results["eval_accuracy"] == pytest.approx((best_dev.argmax(1) == labels).mean())
    assert f"using the best checkpoint {best_prefix}" in finished.stderr

    test = pair_features(vocab, rows["test"], 32)
    best_test = numpy_probabilities(best_prefix, config, test)
    predicted = np.loadtxt(os.path.join(out, "test_results.tsv"), ndmin=2)
    np.testing.assert_allclose(predicted, best_test, atol=1e-5)
    served = tf.saved_model.load(export_dir).signatures["serving_ids"](
        **{k: tf.constant(v) for k, v in test.items()}
    )
    np.testing.assert_allclose(served["probabilities"].numpy(), best_test, atol=1e-5)


@pytest.mark.large
def test_early_stopping_stops_after_patience_and_resumes_its_count(
    server, model_files, mrpc, tmp_path
):  # noqa: F811
    """Learning rate 1e-30 (0 is refused): weights that do not move, so the
    first evaluation is the best and no later one
    improves on it, so with patience 2 training stops at the 3rd evaluation
    (step 6 of 24). Run again, it trains no further; killed after the
    evaluation at step 6 (recorded) and before its checkpoint, it resumes
    from step 4 and stops at step 6 all the same, the best still step 2's."""
    data_dir, _ = mrpc
    out = str(tmp_path / "out")
    run_flags = [
        *flags(model_files, data_dir, out, "--learning_rate=1e-30", "--seed=1"),
        "--num_train_epochs=4",
        "--eval_every_steps=2",
        "--save_checkpoints_steps=4",
        "--keep_best_checkpoint=accuracy",
        "--early_stopping_patience=2",
    ]
    finished = server.run(CLASSIFIER, *run_flags)
    assert finished.status == 0, finished.stderr[-3000:]
    assert sorted(eval_lines(finished.stderr)) == [2, 4, 6]
    assert "early stopping at step 6" in finished.stderr
    stopped = record(out)
    assert stopped["step"] == 2 and stopped["metric"] == "eval_accuracy"
    assert [s for s, _ in stopped["evaluations"]] == [2, 4, 6]
    assert len({v for _, v in stopped["evaluations"]}) == 1
    assert tf.train.latest_checkpoint(out).endswith("model.ckpt-6")
    assert eval_results(out)["global_step"] == 2

    again = server.run(CLASSIFIER, *run_flags)
    assert again.status == 0, again.stderr[-3000:]
    assert "stopped early before" in again.stderr and not eval_lines(again.stderr)
    assert tf.train.latest_checkpoint(out).endswith("model.ckpt-6")
    assert record(out) == stopped

    # The state a kill after the evaluation at step 6 leaves: its record
    # (written), the newest checkpoint step 4's (step 6's not yet).
    for path in glob.glob(os.path.join(out, "model.ckpt-6.*")):
        os.remove(path)
    with open(os.path.join(out, "checkpoint"), "w") as f:
        f.write(
            'model_checkpoint_path: "model.ckpt-4"\nall_model_checkpoint_paths: "model.ckpt-4"\n'
        )
    resumed = server.run(CLASSIFIER, *run_flags)
    assert resumed.status == 0, resumed.stderr[-3000:]
    assert "resumed from" in resumed.stderr
    assert sorted(eval_lines(resumed.stderr)) == [6]
    assert "early stopping at step 6" in resumed.stderr
    assert record(out) == stopped
    assert tf.train.latest_checkpoint(out).endswith("model.ckpt-6")


def test_an_unknown_metric_stops_at_the_first_evaluation(server, model_files, mrpc, tmp_path):  # noqa: F811
    data_dir, _ = mrpc
    finished = server.run(
        CLASSIFIER,
        *flags(model_files, data_dir, str(tmp_path / "out")),
        "--num_train_epochs=1",
        "--eval_every_steps=1",
        "--keep_best_checkpoint=accuarcy",
    )
    assert_one_error(finished, "--keep_best_checkpoint=accuarcy", "it gives", "eval_accuracy")
    assert "step 2/" not in finished.stderr


@pytest.mark.parametrize(
    "more, words",
    [
        (("--keep_best_checkpoint=min:",), ["--keep_best_checkpoint", "min:<name>"]),
        (("--early_stopping_patience=2",), ["--early_stopping_patience", "--keep_best_checkpoint"]),
        (("--eval_every_steps=-1",), ["--eval_every_steps", ">= 0"]),
        (("--eval_every_steps=2", "--eval_every_epoch"), ["--eval_every_steps", "one of"]),
        (("--do_eval=false", "--keep_best_checkpoint=f1"), ["--keep_best_checkpoint", "--do_eval"]),
        (("--do_eval=false", "--eval_every_epoch"), ["--eval_every_epoch", "--do_eval"]),
    ],
)
def test_bad_flags_are_one_error_line_before_any_work(
    server, model_files, mrpc, tmp_path, more, words
):  # noqa: F811
    data_dir, _ = mrpc
    out = str(tmp_path / "out")
    finished = server.run(CLASSIFIER, *flags(model_files, data_dir, out), *more)
    assert_one_error(finished, *words)
    assert not os.path.exists(out)


def test_a_best_record_of_another_metric_is_an_error(server, model_files, mrpc, tmp_path):  # noqa: F811
    data_dir, _ = mrpc
    out = str(tmp_path / "out")
    os.makedirs(os.path.join(out, "best"))
    with open(os.path.join(out, "best", "best_metric.json"), "w") as f:
        json.dump(
            {
                "metric": "f1",
                "value": 0.5,
                "step": 2,
                "checkpoint": "model.ckpt-2",
                "evaluations": [[2, 0.5]],
            },
            f,
        )
    finished = server.run(
        CLASSIFIER, *flags(model_files, data_dir, out), "--keep_best_checkpoint=eval_loss"
    )
    assert_one_error(finished, "keeps the best by f1")
    shutil.rmtree(out)
