"""The run skeleton every training task shares (their options: `tasks.options`).

A task is a `TaskRunner` subclass (a fine-tuning task: a
`fine_tuning.FineTuningRunner`): it supplies its model, its loss (a
`training.loop.Objective`), its training data and schedule, and what eval,
predict and export mean for it. `run_task` does the rest, in this order:
validate -> read the config -> make `output_dir` -> `prepare` (features) ->
in the strategy scope: model (+ optimizer when training) -> Trainer -> train
(resuming the newest checkpoint, else warm-starting from `init_checkpoint`),
or without training the newest checkpoint (else `init_checkpoint`) ->
evaluate (writes `eval_results.txt`) -> predict -> export.
"""

import numbers
import os

import tensorflow as tf
from absl import logging

from bert_tf import files, initializers
from bert_tf.data.features import damaged_file_error
from bert_tf.errors import InputError
from bert_tf.export.common import check_export_dir
from bert_tf.files import check_output_dir
from bert_tf.optimization import create_optimizer
from bert_tf.options import flag_fields, flag_names
from bert_tf.tasks.model_setup import (
    length_multiple,
    warm_start,
)
from bert_tf.tasks.sweep import runs as sweep_runs
from bert_tf.training import distribution
from bert_tf.training.best_checkpoint import BestCheckpoint, MetricChoice
from bert_tf.training.eval_history import EvalHistory
from bert_tf.training.loop import LoopConfig, Trainer, write_results
from bert_tf.training.periodic_eval import PeriodicEvaluation

# What a run can be asked to do, (group, flag); `--export_dir` alone exports
# the newest checkpoint.
_MODES = (("run", "do_train"), ("run", "do_eval"), ("run", "do_predict"), ("export", "export_dir"))


def _check_shared_options(options):
    """Checks of options several tasks have: one of the task's modes
    (`--do_*`, `--export_dir`) is set, `--output_dir` is a folder (or not
    there yet), an export dir that is free."""
    flags = flag_names(type(options))
    modes = [(group, name) for group, name in _MODES if name in flags]
    if modes and not any(getattr(getattr(options, group), name) for group, name in modes):
        modes = [f"--{name}" for _, name in modes]
        listed = ", ".join(modes[:-1]) + " or " + modes[-1] if len(modes) > 1 else modes[0]
        raise InputError(f"at least one of {listed} must be set")
    data_dir = _flag_value(options, "data_dir")
    if data_dir and not files.exists(data_dir):
        raise InputError(f"--data_dir {data_dir} does not exist")
    check_output_dir(options.run.output_dir, "--output_dir")
    _check_eval_during_training(options)
    if options.export.export_dir:
        check_export_dir(options.export.export_dir, options.export.overwrite)


def _flag_value(options, name):
    """The value of the flag `name` in `options`, None where it has none."""
    for flag in flag_fields(type(options)):
        if flag.name == name:
            holder = options if flag.group is None else getattr(options, flag.group)
            return getattr(holder, flag.field.name)
    return None


def _check_eval_during_training(options):
    """Checks of --eval_every_steps, --keep_best_checkpoint and
    --early_stopping_patience before any work."""
    if options.run.keep_best_checkpoint is not None:
        MetricChoice.parse(options.run.keep_best_checkpoint)
    if options.run.early_stopping_patience and not options.run.keep_best_checkpoint:
        raise InputError(
            "--early_stopping_patience needs --keep_best_checkpoint=<metric>: the metric it watches"
        )
    if options.run.eval_every_steps and options.run.eval_every_epoch:
        raise InputError("--eval_every_steps and --eval_every_epoch: set one of them")
    if options.run.do_train and not options.run.do_eval:
        for name in ("keep_best_checkpoint", "eval_every_steps", "eval_every_epoch"):
            if getattr(options.run, name):
                raise InputError(f"--{name} needs --do_eval: the dev set it evaluates on")


def _check_weights_exist(options):
    """Evaluating, predicting or exporting without training needs trained
    weights: a checkpoint in `--output_dir` or `--init_checkpoint` (a random
    model's results would look like real ones)."""
    if options.run.do_train or options.model.init_checkpoint:
        return
    if not tf.train.get_checkpoint_state(options.run.output_dir):
        raise InputError(
            f"nothing to evaluate, predict or export: no checkpoint in "
            f"--output_dir={options.run.output_dir} and no --init_checkpoint "
            "(pass --do_train, or the checkpoint to use)"
        )


def run_task(runner):
    """Runs a task's train / eval / predict / export as its options say;
    returns the eval metrics (empty without do_eval). An error before the
    run saved a checkpoint leaves `--output_dir` as it was (not there, or
    without what the run added); a later one leaves no empty folder it made. A sweep
    (`tasks.sweep`: a grid or restarts) is checked here, then runs each of
    its runs through this function; it returns the chosen run's dev metrics."""
    if runner.sweeps and runner.options.sweep.is_sweep:
        sweep_runs.check(runner)
        _checked(runner)
        return sweep_runs.run_sweep(runner, run_task)
    metrics = _run(runner)
    for what, path in runner.written:
        print(f"{what}: {path}")
    return metrics


def _checked(runner):
    """Checks the options before any work; returns the model's config."""
    options = runner.options
    _check_shared_options(options)
    runner.validate()
    teacher = runner.teacher
    if teacher is not None:
        teacher.validate()
    config = runner.model_config() if teacher is None else teacher.student_config(runner)
    _check_weights_exist(options)
    return config


def _run(runner):
    config = _checked(runner)
    options = runner.options
    with (
        files.folder_removed_on_error(options.run.output_dir),
        files.new_entries_removed_on_error(options.run.output_dir, keep=_saved_a_checkpoint),
    ):
        runner.prepare(config)
        if runner.teacher is not None and options.run.do_train:
            runner.unlabeled_file = runner.teacher.unlabeled_file(runner)
        try:
            return _train_and_use(runner, config)
        except tf.errors.DataLossError:
            error = damaged_file_error(runner.record_files(), runner.damaged_file_remedy)
            if error is None:
                raise
            raise error from None


def _saved_a_checkpoint(added):
    """Whether a failed run keeps what it `added` to --output_dir: only once
    it saved a checkpoint, which a rerun resumes from. Before that (a bad
    --init_checkpoint, a batch that does not fit) it leaves the folder as it
    found it."""
    return any(name.startswith("model.ckpt-") for name in added)


def _train_and_use(runner, config):
    """Builds the model and trains, evaluates, predicts and exports as the
    options say, in that order; returns the eval metrics."""
    options = runner.options
    with distribution.runtime_environment(options.runtime) as strategy:
        _fit_batches_to(runner, strategy)
        with strategy.scope(), initializers.deferred_draws() as draws:
            model, optimizer, num_train_steps = _model_and_optimizer(runner, config)
        trainer = _trainer(runner, strategy, model, optimizer, num_train_steps)
        best = _best_checkpoint(options, model, trainer)
        eval_writer = (
            tf.summary.create_file_writer(os.path.join(options.run.output_dir, "eval"))
            if options.run.do_eval
            else None
        )
        if options.run.do_train:
            _train(runner, trainer, num_train_steps, draws, best, eval_writer)
        elif not trainer.checkpoints.restore_latest() and not (best and best.record):
            warm_start(model, options.model.init_checkpoint)  # _check_weights_exist: there is one
            draws.finish()
        if best is not None and best.restore():
            runner.wrote("best checkpoint", best.prefix)
        return _use(runner, trainer, model, eval_writer)


def _fit_batches_to(runner, strategy):
    """Checks that the replicas divide every batch size and sets the
    multiple that dynamically padded batches are padded to."""
    training, runtime = runner.options.training, runner.options.runtime
    for name in runner.batch_size_options:
        distribution.check_batch_divisible(getattr(training, name), strategy, name)
    if runner.pads_dynamically:
        runner.length_multiple = length_multiple(runner.options, strategy, runtime.jit_compile)


def _model_and_optimizer(runner, config):
    """`(model, optimizer, num_train_steps)` (called in the strategy's scope);
    without training, no optimizer and one step."""
    training, runtime = runner.options.training, runner.options.runtime
    logging.info(
        "building the model: %d layers, hidden size %d",
        config.num_hidden_layers,
        config.hidden_size,
    )
    if runner.teacher is not None:
        runner.teacher.build(runner)
    model = runner.build_model(config)
    model.encoder.recompute = training.recompute
    if not runner.options.run.do_train:
        return model, None, 1
    num_train_steps, num_warmup_steps = runner.train_schedule()
    optimizer = distribution.with_loss_scaling(
        create_optimizer(
            training.optimizer,
            training.learning_rate,
            num_train_steps,
            num_warmup_steps,
            weight_decay_rate=training.weight_decay_rate,
        ),
        runtime.dtype,
    )
    return model, optimizer, num_train_steps


def _trainer(runner, strategy, model, optimizer, num_train_steps):
    options = runner.options
    training, runtime = options.training, options.runtime
    objective = runner.objective()
    if runner.teacher is not None:
        objective = runner.teacher.objective(objective, runner.labelled)
    return Trainer(
        strategy,
        objective,
        model,
        optimizer,
        LoopConfig(
            output_dir=options.run.output_dir,
            num_train_steps=num_train_steps,
            steps_per_loop=training.steps_per_loop,
            save_checkpoints_steps=options.run.save_checkpoints_steps,
            keep_checkpoint_max=options.run.keep_checkpoint_max,
            jit_compile=runtime.jit_compile,
            gradient_accumulation_steps=training.gradient_accumulation_steps,
            inference_jit_compile=runtime.jit_compile,
        ),
    )


def _best_checkpoint(options, model, trainer):
    """The `BestCheckpoint` of --keep_best_checkpoint, or None."""
    if not options.run.keep_best_checkpoint:
        return None
    return BestCheckpoint(
        options.run.output_dir,
        MetricChoice.parse(options.run.keep_best_checkpoint),
        model,
        trainer.global_step,
        trainer.checkpoints.is_chief,
    )


def _train(runner, trainer, num_train_steps, draws, best, eval_writer):
    """Trains, resuming the newest checkpoint, else starting from the
    runner's `initial_weights`; evaluates during training as the options say."""
    model, teacher = trainer.model, runner.teacher
    warm_start_fn = (teacher and teacher.initial_weights(model)) or runner.initial_weights(model)

    def init_fn():  # when there is no checkpoint to resume
        if warm_start_fn is not None:
            warm_start_fn()
        draws.finish()

    evaluation = _evaluation_during_training(runner, trainer, num_train_steps, best, eval_writer)
    trainer.train(
        runner.train_dataset_fn(),
        runner.options.training.train_batch_size,
        init_fn=init_fn,
        evaluation=evaluation,
    )
    if trainer.checkpoints.is_chief:
        runner.wrote("checkpoint", trainer.checkpoints.latest())
    if evaluation is not None and evaluation.history is not None:
        _write_eval_history(runner, evaluation.history)


def _use(runner, trainer, model, eval_writer):
    """Evaluates (eval_results.txt), predicts and exports as the options say;
    returns the eval metrics (empty without do_eval)."""
    options = runner.options
    metrics = {}
    if options.run.do_eval:
        metrics = runner.evaluate(trainer)
        metrics.setdefault("global_step", int(trainer.global_step.numpy()))
        path = os.path.join(options.run.output_dir, "eval_results.txt")
        write_results(path, metrics)
        _write_eval_summaries(eval_writer, metrics["global_step"], metrics)
        runner.wrote("eval results", path)
    if options.run.do_predict:
        runner.predict_and_write(trainer)
    if options.export.export_dir:
        logging.info("exporting the SavedModel to %s", options.export.export_dir)
        runner.wrote("SavedModel", runner.export(model))
    return metrics


def _evaluation_during_training(runner, trainer, num_train_steps, best, eval_writer):
    """The Trainer's `evaluation` (None when the run evaluates only after training)."""
    every_steps = _eval_every_steps(runner, num_train_steps)
    if not every_steps:
        return None
    return PeriodicEvaluation(
        lambda: runner.evaluate(trainer),
        every_steps,
        best,
        runner.options.run.early_stopping_patience,
        on_metrics=lambda step, metrics: _write_eval_summaries(eval_writer, step, metrics),
        history=EvalHistory(runner.options.run.output_dir)
        if trainer.checkpoints.is_chief
        else None,
    )


def _eval_every_steps(runner, num_train_steps):
    """Updates between evaluations during training (0: none): --eval_every_steps,
    an epoch's with --eval_every_epoch, else with --keep_best_checkpoint
    --save_checkpoints_steps."""
    run = runner.options.run
    if run.eval_every_steps:
        return run.eval_every_steps
    if run.eval_every_epoch:
        return runner.steps_per_epoch(num_train_steps)
    return run.save_checkpoints_steps if run.keep_best_checkpoint else 0


def _write_eval_history(runner, history):
    """Lists the evaluations' CSV and draws their curves (with the plot extra)."""
    if not history.rows:
        return
    runner.wrote("eval history", history.path)
    picture = history.draw()
    if picture is None:
        logging.info("no eval_history.png: matplotlib is not installed (pip install bert_tf[plot])")
    else:
        runner.wrote("eval curves", picture)


def _write_eval_summaries(writer, step, metrics):
    """The eval metrics as TensorBoard scalars at `step` (the original
    Estimator's `eval` folder beside the training curves)."""
    with writer.as_default(step=step):
        for name, value in metrics.items():
            if name != "global_step" and isinstance(value, numbers.Real):
                tf.summary.scalar(name, value)
    writer.flush()
