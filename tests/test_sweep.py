"""The sweep (`bert_tf.tasks.sweep`): the grid and restart flags, the
summary against numpy, the choice, resuming; through the loop with a
stand-in for the runs (fast), and through run_classifier.py on a tiny MRPC
end to end (large)."""

import glob
import json
import os
import random
import signal
import subprocess
import sys

import numpy as np
import pytest
from script_runs import REPO, ScriptServer
from shared import HANG_TIMEOUT, numpy_probabilities, pair_features, write_mrpc
from step_pause import wait_for_pause

from bert_tf.errors import InputError
from bert_tf.options import build, replace
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.tasks.fine_tuning import FineTuningRunner
from bert_tf.tasks.squad_options import SquadOptions
from bert_tf.tasks.sweep import plot, runs, summary
from bert_tf.tasks.sweep.options import Configuration, configurations, restart_seed

CLASSIFIER = "run_classifier.py"


def _options(model_files, output_dir, **flags):
    """`ClassifierOptions` of the tiny model, the original's defaults otherwise."""
    vocab, config = model_files
    flags = {"seed": 3, "max_seq_length": 32, **flags}
    return build(
        ClassifierOptions,
        task_name="MRPC",
        data_dir="unused",
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=str(output_dir),
        **flags,
    )


# -- the flags ---------------------------------------------------------------


def test_the_grid_is_the_product_of_the_flags_in_order(model_files, tmp_path):
    given = _options(
        model_files,
        tmp_path,
        learning_rates=("5e-5", "3e-5"),
        train_batch_sizes=("16", "32"),
        num_train_epochs=2.0,
    )
    assert given.sweep.is_sweep
    # The epochs grid flag is empty: --num_train_epochs alone.
    assert configurations(given.training, given.sweep) == [
        Configuration(5e-5, 16, 2.0),
        Configuration(5e-5, 32, 2.0),
        Configuration(3e-5, 16, 2.0),
        Configuration(3e-5, 32, 2.0),
    ]
    assert Configuration(5e-5, 32, 3.0).name == "lr5e-05_bs32_ep3"
    assert Configuration(2e-5, 16, 2.5).name == "lr2e-05_bs16_ep2.5"
    assert not _options(model_files, tmp_path).sweep.is_sweep
    assert _options(model_files, tmp_path, restarts=2).sweep.is_sweep
    only_restarts = _options(model_files, tmp_path, restarts=5, learning_rate=2e-5)
    assert configurations(only_restarts.training, only_restarts.sweep) == [
        Configuration(2e-5, 32, 3.0)
    ]
    assert [restart_seed(12, r) for r in range(3)] == [12, 13, 14]
    assert [restart_seed(None, r) for r in range(2)] == [0, 1]


@pytest.mark.parametrize(
    "flag, value, words",
    [
        ("learning_rates", ("5e-5", "abc"), ("--learning_rates", "'abc'", "positive numbers")),
        ("learning_rates", ("0",), ("--learning_rates", "'0'")),
        ("learning_rates", ("-1e-5",), ("--learning_rates", "'-1e-5'")),
        ("learning_rates", ("nan",), ("--learning_rates", "'nan'")),
        ("learning_rates", ("inf",), ("--learning_rates", "'inf'")),
        ("learning_rates", ("5e-5", "5e-05"), ("--learning_rates=5e-5,5e-05", "repeated")),
        ("train_batch_sizes", ("16.5",), ("--train_batch_sizes", "'16.5'", "whole numbers")),
        ("train_batch_sizes", ("0",), ("--train_batch_sizes", "'0'")),
        ("num_train_epochs_grid", ("2", "x"), ("--num_train_epochs_grid", "'x'")),
        ("restarts", 0, ("--restarts=0: expected a whole number >= 1",)),
        ("select", "median", ("--select", "'median'", "best, mean")),
    ],
)
def test_a_bad_sweep_flag_is_an_input_error_naming_it(model_files, tmp_path, flag, value, words):
    with pytest.raises(InputError) as raised:
        _options(model_files, tmp_path, **{flag: value})
    for word in words:
        assert word in str(raised.value)


def test_a_bad_grid_value_is_one_error_line_before_any_work(tmp_path):
    out = tmp_path / "out"
    finished = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, CLASSIFIER),
            "--task_name=MRPC",
            f"--data_dir={tmp_path}",
            f"--output_dir={out}",
            "--do_train",
            "--do_eval",
            "--learning_rates=5e-5,3e-5x",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert finished.returncode == 2, finished.stderr[-3000:]
    lines = [line for line in finished.stderr.splitlines() if line.startswith("error:")]
    assert lines == [
        "error: --learning_rates: '3e-5x' is not one of the positive numbers it expects"
    ]
    assert "Traceback" not in finished.stderr and not out.exists()


# -- the summary ---------------------------------------------------------------


def _runs(values):
    """`summary.Run`s of {configuration: [value of each restart]}."""
    return [
        summary.Run(configuration, r, 7 + r, f"{configuration.name}_r{r}", value)
        for configuration, restarts in values.items()
        for r, value in enumerate(restarts)
    ]


A, B, C = Configuration(5e-5, 32, 3.0), Configuration(3e-5, 32, 3.0), Configuration(2e-5, 16, 2.0)


def test_the_summary_is_numpys_statistics_of_each_configuration():
    rng = np.random.default_rng(0)
    values = {c: list(rng.random(4)) for c in (A, B, C)}
    result = summary.summarise(_runs(values), "eval_accuracy", False, "best")
    assert [row["configuration"] for row in result["configurations"]] == [A.name, B.name, C.name]
    for row, (configuration, restarts) in zip(result["configurations"], values.items()):
        assert row["mean"] == pytest.approx(np.mean(restarts), rel=1e-15)
        assert row["std"] == pytest.approx(np.std(restarts), rel=1e-12)
        assert (row["min"], row["max"]) == (min(restarts), max(restarts))
        assert row["best_run"] == f"{configuration.name}_r{int(np.argmax(restarts))}"
        assert [r["value"] for r in row["runs"]] == restarts
        assert [r["seed"] for r in row["runs"]] == [7, 8, 9, 10]
        assert (row["learning_rate"], row["train_batch_size"], row["num_train_epochs"]) == (
            configuration.learning_rate,
            configuration.train_batch_size,
            configuration.num_train_epochs,
        )
        assert row["restarts"] == 4
    everything = [(v, c, r) for c, vs in values.items() for r, v in enumerate(vs)]
    value, configuration, restart = max(everything, key=lambda t: t[0])
    assert result["chosen"] == {
        "configuration": configuration.name,
        "run": f"{configuration.name}_r{restart}",
        "value": value,
    }


def test_the_choice_by_best_run_by_mean_and_by_a_loss():
    # A has the best single run, B the best mean; as losses, C is best both ways.
    values = {A: [0.9, 0.1, 0.2], B: [0.6, 0.7, 0.65], C: [0.05, 0.3, 0.1]}
    by_best = summary.summarise(_runs(values), "eval_accuracy", False, "best")["chosen"]
    assert (by_best["run"], by_best["value"]) == (f"{A.name}_r0", 0.9)
    by_mean = summary.summarise(_runs(values), "eval_accuracy", False, "mean")["chosen"]
    assert (by_mean["run"], by_mean["value"]) == (f"{B.name}_r1", 0.7)
    assert summary.summarise(_runs(values), "eval_loss", True, "best")["chosen"]["run"] == (
        f"{C.name}_r0"
    )
    assert summary.summarise(_runs(values), "eval_loss", True, "mean")["chosen"]["run"] == (
        f"{C.name}_r0"
    )
    # Equal values: the first in grid order.
    tied = summary.summarise(_runs({A: [0.5], B: [0.5]}), "f1", False, "best")
    assert tied["chosen"]["run"] == f"{A.name}_r0"


def test_the_result_files_and_the_picture(tmp_path):
    values = {A: [0.25, 0.75], B: [0.5, 0.625]}
    result = summary.summarise(_runs(values), "eval_accuracy", False, "mean")
    tsv, js = summary.write_results(str(tmp_path), result)
    with open(tsv) as f:
        rows = [line.split("\t") for line in f.read().splitlines()]
    assert rows[0] == list(summary.TSV_COLUMNS)
    assert rows[1] == [A.name, "5e-05", "32", "3.0", "2", "0.5", "0.25", "0.25", "0.75"] + [
        f"{A.name}_r1",
        "0",
    ]
    assert rows[2][5:] == ["0.5625", "0.0625", "0.5", "0.625", f"{B.name}_r1", "1"]
    with open(js) as f:
        assert json.load(f) == result
    lines = summary.table(result)
    assert lines[0] == "sweep over eval_accuracy (select=mean):"
    assert lines[-1] == f"chosen: {B.name}_r1 (eval_accuracy 0.6250)"
    assert [line.startswith("*") for line in lines[2:4]] == [False, True]

    matplotlib_image = pytest.importorskip("matplotlib.image")
    path = str(tmp_path / "sweep.png")
    plot.draw(result, path)
    pixels = matplotlib_image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 100
    # Not blank: the bars' and the dots' colours are there.
    colours = {tuple(np.round(p[:3], 2)) for p in pixels.reshape(-1, pixels.shape[2])}
    assert len(colours) > 10


def test_the_picture_reads_without_zooming_and_shows_mean_and_sd(tmp_path):
    """About 900 pixels wide (the docs' first one was 304: unreadable), 11
    point labels, and an error bar from mean - sd to mean + sd on each bar."""
    matplotlib_image = pytest.importorskip("matplotlib.image")
    values = {A: [0.25, 0.75], B: [0.5, 0.625, 0.5], C: [0.4]}
    result = summary.summarise(_runs(values), "eval_accuracy", False, "mean")
    path = str(tmp_path / "sweep.png")
    plot.draw(result, path)
    height, width = matplotlib_image.imread(path).shape[:2]
    assert (width, height) == (900, 500)
    figure = plot.figure(result)
    (axes,) = figure.axes
    assert min(label.get_fontsize() for label in axes.get_xticklabels()) >= 11
    assert figure.legends and figure.legends[0].get_texts()[0].get_fontsize() >= 11
    (errorbar,) = [c for c in axes.containers if type(c).__name__ == "ErrorbarContainer"]
    (segments,) = [c.get_segments() for c in errorbar.lines[2]]
    spans = [(float(s[0][1]), float(s[1][1])) for s in segments]
    expected = [(np.mean(v) - np.std(v), np.mean(v) + np.std(v)) for v in values.values()]
    np.testing.assert_allclose(spans, expected)
    bars = [p.get_height() for p in axes.patches]
    np.testing.assert_allclose(bars, [np.mean(v) for v in values.values()])
    wide = {Configuration(1e-5 * (i + 1), 32, 3.0): [0.5] for i in range(20)}
    wide_result = summary.summarise(_runs(wide), "eval_accuracy", False, "mean")
    assert plot.figure(wide_result).get_size_inches()[0] * 100 > 900


# -- the loop, with a stand-in for the runs ------------------------------------


class StandInRunner(FineTuningRunner):
    """What the sweep loop reads of a runner; `eval_loss` compares runs."""

    def dev_metric(self):
        return "eval_loss"


class StandInRuns:
    """`run_task` for `runs.run_sweep`: records each call and writes the
    eval_results.txt a run would (a loss from the run's settings), or stops
    as a killed sweep at call `stop_at`."""

    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def __call__(self, runner):
        options = runner.options
        if len(self.calls) == self.stop_at:
            raise KeyboardInterrupt("killed")
        self.calls.append(runner)
        folder = options.run.output_dir
        os.makedirs(folder, exist_ok=True)
        if options.run.do_train:
            t = options.training
            loss = t.learning_rate * 1e4 + t.train_batch_size / 64 + options.runtime.seed / 10
            _, results_file = runner.dev_results
            with open(os.path.join(folder, results_file), "w") as f:
                if results_file.endswith(".json"):  # SQuAD's scores of --predict_file
                    json.dump({"exact_match": 50.0, "f1": 100 - loss}, f)
                else:
                    f.write(f"eval_accuracy = 0.5\neval_loss = {loss}\nglobal_step = 3\n")
        return {}


def _sweep(model_files, output_dir, run_task, **flags):
    flags = {
        "learning_rates": ("3e-5", "1e-5"),
        "train_batch_sizes": ("32", "8"),
        "restarts": 2,
        "do_train": True,
        "do_eval": True,
        **flags,
    }
    runner = StandInRunner(_options(model_files, output_dir, **flags))
    runs.check(runner)
    return runner, runs.run_sweep(runner, run_task)


def _eval_loss(folder):
    return runs.read_results(os.path.join(folder, "eval_results.txt"))["eval_loss"]


def test_each_run_is_an_ordinary_run_and_the_summary_reads_their_results(model_files, tmp_path):
    out = str(tmp_path / "sweep")
    export_dir = str(tmp_path / "export")
    stand_in = StandInRuns()
    runner, metrics = _sweep(
        model_files, out, stand_in, do_predict=True, export_dir=export_dir, seed=3
    )
    *trained, last = stand_in.calls
    grid = [(3e-5, 32), (3e-5, 8), (1e-5, 32), (1e-5, 8)]
    expected = [(lr, bs, 3 + r) for lr, bs in grid for r in range(2)]
    assert [
        (
            c.options.training.learning_rate,
            c.options.training.train_batch_size,
            c.options.runtime.seed,
        )
        for c in trained
    ] == expected
    for call in trained:
        options = call.options
        assert (options.run.do_train, options.run.do_eval, options.run.do_predict) == (
            True,
            True,
            False,
        )
        assert options.export.export_dir is None and not options.sweep.is_sweep
        assert os.path.dirname(options.run.output_dir) == out
        assert call.features_dir == out  # the feature files: one set, in the sweep's folder
        # Everything else is the sweep's own flags.
        assert options.training.num_train_epochs == 3.0 and options.model.max_seq_length == 32
    folders = [os.path.basename(c.options.run.output_dir) for c in trained]
    assert folders[:3] == ["lr3e-05_bs32_ep3_r0", "lr3e-05_bs32_ep3_r1", "lr3e-05_bs8_ep3_r0"]

    with open(os.path.join(out, summary.JSON_FILE)) as f:
        result = json.load(f)
    losses = {folder: _eval_loss(os.path.join(out, folder)) for folder in folders}
    for row in result["configurations"]:
        values = [losses[run["run"]] for run in row["runs"]]
        assert [run["value"] for run in row["runs"]] == values
        assert row["mean"] == pytest.approx(np.mean(values), rel=1e-12)
        assert row["std"] == pytest.approx(np.std(values), rel=1e-9)
        assert (row["min"], row["max"]) == (min(values), max(values))
    chosen = min(losses, key=losses.get)
    assert chosen == "lr1e-05_bs8_ep3_r0" and result["chosen"]["run"] == chosen
    assert result["metric"] == "eval_loss" and result["lower_is_better"]
    assert os.readlink(os.path.join(out, "best")) == chosen
    assert metrics == runs.read_results(os.path.join(out, chosen, "eval_results.txt"))
    # --do_predict and --export_dir: once, from the chosen run's checkpoint.
    options = last.options
    assert options.run.output_dir == os.path.join(out, chosen)
    assert (options.run.do_train, options.run.do_eval, options.run.do_predict) == (
        False,
        False,
        True,
    )
    assert options.export.export_dir == export_dir and last.features_dir == out
    assert (options.training.learning_rate, options.runtime.seed) == (1e-5, 3)
    assert os.path.exists(os.path.join(out, summary.TSV_FILE))
    assert os.path.exists(os.path.join(out, plot.PNG_FILE))

    # By mean: 1e-5 at batch 8 still (the loss grows with both).
    _, by_mean = _sweep(model_files, str(tmp_path / "mean"), StandInRuns(), select="mean")
    assert by_mean == metrics


def test_a_killed_sweep_redoes_no_finished_run_and_gives_the_same_summary(model_files, tmp_path):
    whole, killed = str(tmp_path / "whole"), str(tmp_path / "killed")
    _sweep(model_files, whole, StandInRuns())
    with pytest.raises(KeyboardInterrupt):
        _sweep(model_files, killed, StandInRuns(stop_at=3))
    # The third run was killed before it finished: no record, no results read.
    finished = glob.glob(os.path.join(killed, "*", runs.RUN_FILE))
    assert sorted(os.path.basename(os.path.dirname(path)) for path in finished) == [
        "lr3e-05_bs32_ep3_r0",
        "lr3e-05_bs32_ep3_r1",
        "lr3e-05_bs8_ep3_r0",
    ]
    again = StandInRuns()
    _sweep(model_files, killed, again)
    assert [os.path.basename(c.options.run.output_dir) for c in again.calls] == [
        "lr3e-05_bs8_ep3_r1",
        "lr1e-05_bs32_ep3_r0",
        "lr1e-05_bs32_ep3_r1",
        "lr1e-05_bs8_ep3_r0",
        "lr1e-05_bs8_ep3_r1",
    ]
    for name in (summary.JSON_FILE, summary.TSV_FILE):
        with open(os.path.join(whole, name)) as a, open(os.path.join(killed, name)) as b:
            assert a.read() == b.read()
    # Another seed in the same folder: the finished runs are not this sweep's.
    with pytest.raises(InputError, match="lr3e-05_bs32_ep3_r0 holds a run of .*'seed': 3"):
        _sweep(model_files, killed, StandInRuns(), seed=4)


class StandInSquadRunner(FineTuningRunner):
    """A task without an eval split: --predict_file's scores compare runs."""

    dev_results = ("do_predict", "eval_results.json")

    def dev_metric(self):
        return "f1"


@pytest.mark.parametrize("export", [True, False])
def test_a_task_scored_on_its_predictions_predicts_in_each_run(model_files, tmp_path, export):
    vocab, config = model_files
    out, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    given = build(
        SquadOptions,
        train_file="train.json",
        predict_file="dev.json",
        vocab_file=vocab,
        bert_config_file=config,
        output_dir=out,
        do_train=True,
        do_predict=True,
        learning_rates=("3e-5", "1e-5"),
        seed=0,
        export_dir=export_dir if export else None,
    )
    runner = StandInSquadRunner(given)
    runs.check(runner)
    stand_in = StandInRuns()
    metrics = runs.run_sweep(runner, stand_in)
    trained = stand_in.calls[:2]
    for call in trained:
        assert (call.options.run.do_train, call.options.run.do_predict) == (True, True)
        assert call.options.export.export_dir is None
    # The higher f1 (lower stand-in loss): 1e-5.
    assert _summary(out)["chosen"]["run"] == "lr1e-05_bs32_ep3_r0"
    assert metrics == {"exact_match": 50.0, "f1": 100 - 0.1 - 0.5}
    if export:  # only the export is left to do: each run predicted already
        (last,) = stand_in.calls[2:]
        assert last.options.run.output_dir == os.path.join(out, "lr1e-05_bs32_ep3_r0")
        assert (last.options.run.do_train, last.options.run.do_predict) == (False, False)
        assert last.options.export.export_dir == export_dir
    else:
        assert len(stand_in.calls) == 2
    with pytest.raises(InputError, match="compares runs on the dev set: add --do_predict"):
        runs.check(StandInSquadRunner(replace(given, do_predict=False)))


@pytest.mark.parametrize(
    "flags, words",
    [
        ({"do_train": False}, ("trains", "--do_train")),
        ({"do_eval": False}, ("dev set", "--do_eval")),
        ({"sweep_metric": "up:f1"}, ("--sweep_metric='up:f1'",)),
    ],
)
def test_a_sweep_without_what_it_needs_is_an_error_before_any_run(
    model_files, tmp_path, flags, words
):
    stand_in = StandInRuns()
    with pytest.raises(InputError) as raised:
        _sweep(model_files, str(tmp_path / "out"), stand_in, **flags)
    for word in words:
        assert word in str(raised.value)
    assert stand_in.calls == [] and not (tmp_path / "out").exists()


def test_a_folder_named_best_that_is_not_the_link_is_an_error(model_files, tmp_path):
    (tmp_path / "out" / "best").mkdir(parents=True)
    with pytest.raises(InputError, match="best is not a sweep's link"):
        _sweep(model_files, str(tmp_path / "out"), StandInRuns())


# -- end to end: run_classifier.py on a tiny MRPC ------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = ScriptServer(str(tmp_path_factory.mktemp("runs")))
    yield server
    server.close()


@pytest.fixture(scope="module")
def mrpc(tmp_path_factory):
    """(data_dir, rows): 32 train pairs (4 steps an epoch at batch 8), 16 dev, 8 test."""
    path = str(tmp_path_factory.mktemp("mrpc"))
    return path, write_mrpc(path, random.Random(0), sizes=(32, 16, 8))


# Learning rates x epochs, 1 restart: runs of 4 and 8 steps, a checkpoint every 4.
FOLDERS = ["lr0.001_bs8_ep1_r0", "lr0.001_bs8_ep2_r0", "lr0.003_bs8_ep1_r0", "lr0.003_bs8_ep2_r0"]


def sweep_flags(model_files, data_dir, output_dir, *more):
    vocab, config = model_files
    return [
        "--task_name=MRPC",
        f"--data_dir={data_dir}",
        f"--vocab_file={vocab}",
        f"--bert_config_file={config}",
        f"--output_dir={output_dir}",
        "--max_seq_length=32",
        "--train_batch_size=8",
        "--learning_rates=1e-3,3e-3",
        "--num_train_epochs_grid=1,2",
        "--sweep_metric=eval_loss",
        "--save_checkpoints_steps=4",
        "--steps_per_loop=2",
        "--seed=1",
        "--do_train",
        "--do_eval",
        *more,
    ]


@pytest.fixture(scope="module")
def whole_sweep(server, model_files, mrpc, tmp_path_factory):
    """`(output_dir, export_dir, Finished)` of a 2 x 2 sweep with --do_predict and --export_dir."""
    root = tmp_path_factory.mktemp("sweep")
    out, export_dir = str(root / "out"), str(root / "export")
    finished = server.run(
        CLASSIFIER,
        *sweep_flags(model_files, mrpc[0], out, "--do_predict", f"--export_dir={export_dir}"),
    )
    assert finished.status == 0, finished.stderr[-3000:]
    return out, export_dir, finished


def _summary(out):
    with open(os.path.join(out, summary.JSON_FILE)) as f:
        return json.load(f)


@pytest.mark.large
def test_a_sweep_summarises_its_runs_and_predicts_and_exports_from_the_best(
    whole_sweep, model_files, mrpc
):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the exported model's ops)

    out, export_dir, finished = whole_sweep
    losses = {folder: _eval_loss(os.path.join(out, folder)) for folder in FOLDERS}
    result = _summary(out)
    assert [run["run"] for row in result["configurations"] for run in row["runs"]] == FOLDERS
    for row in result["configurations"]:
        (run,) = row["runs"]
        assert run["value"] == losses[run["run"]] == row["mean"] == row["min"] == row["max"]
        assert row["std"] == 0.0 and run["seed"] == 1
    with open(os.path.join(out, summary.TSV_FILE)) as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:]]
    assert [float(row[5]) for row in rows] == [losses[folder] for folder in FOLDERS]
    chosen = min(losses, key=losses.get)
    assert result["chosen"]["run"] == chosen and os.readlink(os.path.join(out, "best")) == chosen
    assert [row[-1] for row in rows] == [str(int(folder == chosen)) for folder in FOLDERS]
    assert f"chosen: {chosen} (eval_loss {losses[chosen]:.4f})" in finished.stderr
    # Each configuration trained as long as its flags say.
    for folder in FOLDERS:
        steps = 4 * int(folder.split("_ep")[1][0])
        assert tf.train.latest_checkpoint(os.path.join(out, folder)).endswith(f"ckpt-{steps}")
    # The feature files: written once, in the sweep's folder.
    for split in ("train", "eval", "predict"):
        assert finished.stderr.count(f"Writing {out}/{split}.tf_record") == 1, split
    assert glob.glob(os.path.join(out, "*", "*.tf_record")) == []

    vocab, config = model_files
    _, data = mrpc
    test = pair_features(vocab, data["test"], 32)
    expected = {
        folder: numpy_probabilities(
            tf.train.latest_checkpoint(os.path.join(out, folder)), config, test
        )
        for folder in FOLDERS
    }
    predicted = np.loadtxt(os.path.join(out, "best", "test_results.tsv"), ndmin=2)
    np.testing.assert_allclose(predicted, expected[chosen], atol=1e-5)
    for folder in set(FOLDERS) - {chosen}:
        assert np.abs(predicted - expected[folder]).max() > 1e-3, folder
        assert not os.path.exists(os.path.join(out, folder, "test_results.tsv"))
    served = tf.saved_model.load(export_dir).signatures["serving_ids"](
        **{k: tf.constant(v) for k, v in test.items()}
    )
    np.testing.assert_allclose(served["probabilities"].numpy(), expected[chosen], atol=1e-5)

    import matplotlib.image

    pixels = matplotlib.image.imread(os.path.join(out, plot.PNG_FILE))
    assert pixels.ndim == 3 and min(pixels.shape[:2]) > 100


@pytest.mark.large
def test_a_killed_sweep_started_again_reads_its_finished_runs(
    server, whole_sweep, model_files, mrpc, tmp_path
):
    """Killed (SIGKILL) in its second run, past that run's step-4
    checkpoint: started again it reads the first run, resumes the second
    from its checkpoint and gives the uninterrupted sweep's summary."""
    out, marker = str(tmp_path / "out"), str(tmp_path / "paused")
    flags = sweep_flags(model_files, mrpc[0], out)
    running = server.start(CLASSIFIER, *flags, pause=(4, marker))
    try:
        wait_for_pause(marker, running.ended, running.stderr, HANG_TIMEOUT)
    finally:
        os.kill(running.pid, signal.SIGKILL)
        running.wait()
    first, second = (os.path.join(out, folder) for folder in FOLDERS[:2])
    assert os.path.exists(os.path.join(first, runs.RUN_FILE))
    assert not os.path.exists(os.path.join(second, runs.RUN_FILE))
    assert not os.path.exists(os.path.join(out, summary.JSON_FILE))
    results = os.path.join(first, "eval_results.txt")
    before = os.stat(results).st_mtime_ns

    again = server.run(CLASSIFIER, *flags)
    assert again.status == 0, again.stderr[-3000:]
    assert f"sweep: {FOLDERS[0]} finished before" in again.stderr
    assert f"sweep: running {FOLDERS[0]}" not in again.stderr
    assert f"resumed from {second}/model.ckpt-4 at step 4" in again.stderr
    assert os.stat(results).st_mtime_ns == before
    for split in ("train", "eval"):
        assert f"Reusing {out}/{split}.tf_record" in again.stderr
        assert f"Writing {out}/{split}.tf_record" not in again.stderr
    whole, resumed = _summary(whole_sweep[0]), _summary(out)
    assert resumed["chosen"]["run"] == whole["chosen"]["run"]
    for a, b in zip(whole["configurations"], resumed["configurations"]):
        assert b["configuration"] == a["configuration"]
        for key in ("mean", "min", "max"):
            assert b[key] == pytest.approx(a[key], rel=1e-5), (a["configuration"], key)
