"""The runs of a sweep: each configuration of the grid and each restart an
ordinary run in its own folder of --output_dir (`<configuration>_r<restart>`,
e.g. `lr5e-05_bs32_ep3_r0`), then the summary, the chosen run linked as
`output_dir/best`, and --do_predict / --export_dir from it.

The feature files are written once, into --output_dir, and every run reads
them. A run that finished left `sweep_run.json` in its folder: a sweep
started again reads its dev metrics instead of running it, and an
interrupted run resumes from its newest checkpoint as any run does.
"""

import dataclasses
import json
import os

from absl import logging

from bert_tf import files
from bert_tf.errors import InputError
from bert_tf.options import replace
from bert_tf.tasks.sweep import plot, summary
from bert_tf.tasks.sweep.options import GRID_FLAGS, configurations, restart_seed
from bert_tf.training.best_checkpoint import MetricChoice

RUN_FILE = "sweep_run.json"
BEST_LINK = "best"


def check(runner):
    """The sweep's own checks of `runner.options`, before the run's (`tasks.run`)."""
    options = runner.options
    mode, _ = runner.dev_results
    output_dir = options.run.output_dir
    if not options.run.do_train:
        raise InputError("a sweep (--restarts, --learning_rates, ...) trains: add --do_train")
    if not getattr(options.run, mode):
        raise InputError(f"a sweep compares runs on the dev set: add --{mode}")
    if files.is_remote(output_dir):
        raise InputError(
            f"--output_dir={output_dir}: a sweep needs a local folder (it links "
            f"{BEST_LINK} to the chosen run)"
        )
    best = os.path.join(output_dir, BEST_LINK)
    if os.path.lexists(best) and not os.path.islink(best):
        raise InputError(
            f"--output_dir={output_dir}: {best} is not a sweep's link to its chosen run; "
            "expected a new folder or a sweep's"
        )


def run_sweep(runner, run_task):
    """Runs (or reads) every run of the sweep `runner.options` describe with
    `run_task(runner)`, writes the summary and links the chosen run; returns
    its dev metrics. `runner` is checked (`check`, then `tasks.run`'s checks
    and `validate`) but not run: each run gets a new runner of its class."""
    options = runner.options
    sweep, output_dir = options.sweep, options.run.output_dir
    choice = MetricChoice.parse(sweep.sweep_metric or runner.dev_metric(), "--sweep_metric")
    runs, metrics, key = [], {}, None
    with files.folder_removed_on_error(output_dir):  # when the first run fails at once
        for configuration in configurations(options.training, sweep):
            for restart in range(sweep.restarts):
                seed = restart_seed(options.runtime.seed, restart)
                folder = f"{configuration.name}_r{restart}"
                metrics[folder] = _run_or_read(runner, run_task, configuration, seed, folder)
                key = key or choice.key_in(metrics[folder], "--sweep_metric")
                value = float(metrics[folder][key])
                runs.append(summary.Run(configuration, restart, seed, folder, value))
    result = summary.summarise(runs, key, choice.lower_is_better, sweep.select)
    logging.info("%s", "\n".join(summary.table(result)))
    for path in summary.write_results(output_dir, result):
        runner.wrote("sweep results", path)
    _draw(runner, result, os.path.join(output_dir, plot.PNG_FILE))
    chosen = result["chosen"]["run"]
    _link(output_dir, chosen)
    runner.wrote("chosen run", os.path.join(output_dir, BEST_LINK))
    _use_chosen(runner, run_task, _chosen_options(runner, runs, chosen))
    for what, path in runner.written:
        print(f"{what}: {path}")
    return metrics[chosen]


def _run_options(runner, configuration, seed, folder):
    """The options of one run: the configuration's training flags, its seed
    and folder, the dev set evaluated, no grid, no test set, no export."""
    mode, _ = runner.dev_results
    options = runner.options
    no_grid = {flag: () for flag, _, _ in GRID_FLAGS}
    run = replace(
        options,
        **dataclasses.asdict(configuration),
        **no_grid,
        restarts=1,
        seed=seed,
        output_dir=os.path.join(options.run.output_dir, folder),
        export_dir=None,
    )
    modes = {"do_predict": False, mode: True}
    return dataclasses.replace(run, run=dataclasses.replace(run.run, **modes))


def _settings(configuration, seed):
    """What `sweep_run.json` records of a run: what the sweep set."""
    return dataclasses.asdict(configuration) | {"seed": seed}


def _run_or_read(runner, run_task, configuration, seed, folder):
    """The dev metrics of a run: read from its results file when the run
    finished before, else after running it."""
    _, results_file = runner.dev_results
    run_dir = os.path.join(runner.options.run.output_dir, folder)
    record = os.path.join(run_dir, RUN_FILE)
    settings = _settings(configuration, seed)
    if files.exists(record):
        with files.open_file(record) as f:
            recorded = json.load(f)
        if recorded != settings:
            raise InputError(
                f"{run_dir} holds a run of {recorded}, not of {settings}: use another "
                "--output_dir, or delete that folder"
            )
        logging.info("sweep: %s finished before; reading its results", folder)
    else:
        logging.info("sweep: running %s (seed %d)", folder, seed)
        run = type(runner)(_run_options(runner, configuration, seed, folder))
        run.features_dir = runner.options.run.output_dir
        run_task(run)
        files.write_text_atomically(record, json.dumps(settings, indent=1) + "\n")
    return read_results(os.path.join(run_dir, results_file))


def read_results(path):
    """The metrics a run wrote: eval_results.txt (`key = value` lines) or a
    JSON file (SQuAD's eval_results.json)."""
    with files.open_file(path) as f:
        text = f.read()
    if path.endswith(".json"):
        return json.loads(text)
    metrics = {}
    for line in text.splitlines():
        key, _, value = line.partition(" = ")
        try:
            metrics[key] = float(value)
        except ValueError:
            metrics[key] = value
    return metrics


def _draw(runner, result, path):
    if not plot.have_matplotlib():
        logging.warning("no %s: matplotlib is not installed (pip install bert_tf[plot])", path)
        return
    plot.draw(result, path)
    runner.wrote("sweep picture", path)


def _link(output_dir, folder):
    """Points `output_dir/best` at the run folder `folder` (a relative link,
    replaced atomically)."""
    best = os.path.join(output_dir, BEST_LINK)
    tmp = f"{best}.tmp-{os.getpid()}"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(folder, tmp)
    os.replace(tmp, best)


def _chosen_options(runner, runs, chosen):
    run = next(r for r in runs if r.folder == chosen)
    return _run_options(runner, run.configuration, run.seed, chosen)


def _use_chosen(runner, run_task, options):
    """--do_predict and --export_dir of the sweep, run from the chosen run's
    checkpoint (its folder); SQuAD predicted its dev set in each run."""
    mode, _ = runner.dev_results
    predict = runner.options.run.do_predict and mode != "do_predict"
    export_dir = runner.options.export.export_dir
    if not predict and not export_dir:
        return
    final = dataclasses.replace(
        options,
        run=dataclasses.replace(options.run, do_train=False, do_eval=False, do_predict=predict),
        export=dataclasses.replace(options.export, export_dir=export_dir),
    )
    last = type(runner)(final)
    last.features_dir = runner.options.run.output_dir
    run_task(last)
