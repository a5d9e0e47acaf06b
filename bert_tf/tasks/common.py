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

import contextlib
import dataclasses
import numbers
import os

import keras
import tensorflow as tf
from absl import logging

from bert_tf import checkpoints, files, model_text, tokenization
from bert_tf.accelerators import is_tpu_strategy
from bert_tf.config import CONFIG_FILE_NAMES, BertConfig, config_file_beside
from bert_tf.data.features import damaged_file_error
from bert_tf.errors import InputError
from bert_tf.export.common import check_export_dir
from bert_tf.files import check_output_dir
from bert_tf.optimization import create_optimizer
from bert_tf.options import PADDING_MULTIPLE, XLA_PAD_MULTIPLE, flag_names
from bert_tf.training import distribution
from bert_tf.training.best_checkpoint import BestCheckpoint, MetricChoice
from bert_tf.training.loop import LoopConfig, Trainer, write_results
from bert_tf.training.periodic_eval import PeriodicEvaluation


def config_file_of(options):
    """`--bert_config_file`, else the config beside `--init_checkpoint` (a
    release or Hugging Face folder, or the prefix of a checkpoint in one)."""
    if options.model.bert_config_file:
        return options.model.bert_config_file
    checkpoint = options.model.init_checkpoint
    if checkpoint:
        path = config_file_beside(checkpoint)
        if path is None:
            raise InputError(
                f"--bert_config_file is needed: --init_checkpoint={checkpoint} has "
                f"no {' or '.join(CONFIG_FILE_NAMES)} beside it"
            )
        return path
    raise InputError("--bert_config_file is needed (or an --init_checkpoint folder with one)")


def _config_source(options):
    """How to name the config in a message: the flag when it was given."""
    if options.model.bert_config_file:
        return f"--bert_config_file {options.model.bert_config_file}"
    return config_file_of(options)


def with_model_text(options, default_lower_case=True):
    """`options` with `vocab_file` and `do_lower_case` resolved as
    `model_text.text_settings` does: the vocab beside `--init_checkpoint`
    unless given, the casing its folder says unless given (and checked
    against it when given), else `default_lower_case`."""
    vocab_file, do_lower_case = model_text.text_settings(
        options.model.vocab_file,
        options.model.do_lower_case,
        options.model.init_checkpoint,
        default_lower_case,
    )
    model = dataclasses.replace(options.model, vocab_file=vocab_file, do_lower_case=do_lower_case)
    return dataclasses.replace(options, model=model)


def load_bert_config(options):
    """Reads the model's config (`config_file_of`) and checks
    `--max_seq_length` against it."""
    path = config_file_of(options)
    config = BertConfig.from_json_file(path)
    if options.model.max_seq_length > config.max_position_embeddings:
        raise InputError(
            f"--max_seq_length={options.model.max_seq_length} is larger than "
            f"max_position_embeddings={config.max_position_embeddings} of "
            f"{_config_source(options)}"
        )
    return config


@contextlib.contextmanager
def training_environment(options):
    """Seeds, builds the strategy and sets the dtype policy for `RuntimeOptions`;
    yields the strategy and restores the float32 policy afterwards."""
    distribution.set_seed(options.seed, options.deterministic)
    strategy = distribution.strategy_from_options(options)
    distribution.set_precision_policy(options.dtype, strategy)
    try:
        yield strategy
    finally:
        keras.mixed_precision.set_dtype_policy("float32")


def parse_layers(value):
    """`--layers` "-1,-2" -> (-1, -2) (negative: from the top)."""
    try:
        return tuple(int(part) for part in value.split(","))
    except ValueError:
        raise InputError(f"--layers={value!r} must be comma-separated integers") from None


def warm_start(model, init_checkpoint):
    """Loads `--init_checkpoint` (original TF1, bert_tf, Model Garden or
    Hugging Face) into `model`; variables it lacks keep their initial values,
    as with the original's `init_from_checkpoint`."""
    report = checkpoints.load_checkpoint(model, init_checkpoint, strict=False)
    if not report.loaded:
        raise InputError(f"--init_checkpoint={init_checkpoint}: no variable matches the model")
    logging.info(
        "warm start from %s: %d variables loaded, %d left initialised%s",
        init_checkpoint,
        len(report.loaded),
        len(report.left_initialised),
        f" ({', '.join(report.left_initialised)})" if report.left_initialised else "",
    )
    return report


class TaskRunner:
    """What a task supplies to `run_task`. `self.options` holds the option
    groups `model`, `run`, `training`, `runtime` and `export` (see
    `tasks.options`); the hooks are called in the order listed."""

    # The batch sizes of `TrainingOptions` that every replica count must divide.
    batch_size_options = ("train_batch_size", "eval_batch_size")
    # Whether the task's batches may be padded only to their longest example
    # (--dynamic_padding); pre-training and SQuAD always pad to --max_seq_length.
    pads_dynamically = True
    # Whether the task tokenizes text (its options name a vocab and a casing,
    # resolved by `with_model_text`), and its casing when neither
    # --do_lower_case nor the model says one.
    reads_text = False
    default_lower_case = True

    def __init__(self, options):
        self.options = options
        self.written = []  # (what, path) of each output, listed when the run ends
        # Set by run_task: the multiple batches are padded to under
        # --dynamic_padding, None for static --max_seq_length shapes.
        self.length_multiple = None

    def wrote(self, what, path):
        """Records an output file or folder for the run's closing list."""
        logging.info("wrote %s", path)
        self.written.append((what, path))

    def group_by_length(self, is_training):
        """Whether batches are grouped by length (dynamic padding only): eval
        and predict always, training with --group_by_length. A task that
        uses it puts eval / predict results back in example order (the
        classifier and multiple choice by example_index, NER by
        sentence_index and word_ids)."""
        return self.length_multiple is not None and (
            self.options.model.group_by_length or not is_training
        )

    def validate(self):
        """Checks the options before any work (raise InputError)."""

    def prepare(self, config):
        """Work before the strategy: read inputs, write feature files."""

    def train_schedule(self):
        """`(num_train_steps, num_warmup_steps)` (called with do_train only)."""
        raise NotImplementedError

    def train_dataset_fn(self):
        """`dataset_fn(input_context)` of the training batches."""
        raise NotImplementedError

    def dataset_fn(self, make_dataset, path, batch_size, is_training, **task_arguments):
        """The Trainer's `dataset_fn(input_context)` over a feature file:
        `make_dataset(path, max_seq_length, batch_size, is_training, ...)` of
        the task's data module, with the run's seed and, for a task that
        `pads_dynamically`, its batch lengths and grouping."""
        options = self.options
        if self.pads_dynamically:
            task_arguments.update(
                length_multiple=self.length_multiple,
                group_by_length=self.group_by_length(is_training),
            )

        def dataset_fn(input_context):
            return make_dataset(
                path,
                options.model.max_seq_length,
                batch_size,
                is_training,
                input_context=input_context,
                seed=options.runtime.seed,
                **task_arguments,
            )

        return dataset_fn

    def build_model(self, config):
        """The Keras model (called inside the strategy scope)."""
        raise NotImplementedError

    def objective(self):
        """The model's `training.loop.Objective`: its loss (and eval sums)."""
        raise NotImplementedError

    def evaluate(self, trainer):
        """With do_eval: the metrics to write to `eval_results.txt`."""
        raise NotImplementedError

    def eval_every_steps(self, num_train_steps):
        """Updates between evaluations during training (0: none): --eval_every_steps,
        an epoch's with --eval_every_epoch, else with --keep_best_checkpoint
        --save_checkpoints_steps."""
        options = self.options
        if options.run.eval_every_steps:
            return options.run.eval_every_steps
        if options.run.eval_every_epoch:
            return self.steps_per_epoch(num_train_steps)
        return options.run.save_checkpoints_steps if options.run.keep_best_checkpoint else 0

    def steps_per_epoch(self, num_train_steps):
        """Updates in an epoch of training (a task with --eval_every_epoch)."""
        raise NotImplementedError

    def predict(self, trainer):
        """With do_predict (where the task has it): writes the prediction files."""

    # What to do about a damaged file of `record_files` (the end of its error line).
    damaged_file_remedy = "delete it and run again: the run writes it anew"

    def record_files(self):
        """The TFRecord files the run reads: when their reader fails, the first
        damaged one is named (see `features.damaged_file_error`)."""
        return []

    def export(self, model):
        """With export_dir (where the task has it): writes the SavedModel;
        returns its folder."""


# What a run can be asked to do, (group, flag); `--export_dir` alone exports
# the newest checkpoint.
_MODES = (("run", "do_train"), ("run", "do_eval"), ("run", "do_predict"), ("export", "export_dir"))


def _check_shared_options(options):
    """Checks of options several tasks have: one of the task's modes
    (`--do_*`, `--export_dir`) is set, `--output_dir` is a folder (or not
    there yet), an export dir that is free, and `ModelOptions`."""
    flags = flag_names(type(options))
    modes = [(group, name) for group, name in _MODES if name in flags]
    if modes and not any(getattr(getattr(options, group), name) for group, name in modes):
        modes = [f"--{name}" for _, name in modes]
        listed = ", ".join(modes[:-1]) + " or " + modes[-1] if len(modes) > 1 else modes[0]
        raise InputError(f"at least one of {listed} must be set")
    check_output_dir(options.run.output_dir, "--output_dir")
    check_model_options(options)
    _check_eval_during_training(options)
    if options.export.export_dir:
        check_export_dir(options.export.export_dir, options.export.overwrite)


def _check_eval_during_training(options):
    """Checks of --eval_every_steps, --keep_best_checkpoint and
    --early_stopping_patience before any work."""
    for name in ("eval_every_steps", "early_stopping_patience"):
        if getattr(options.run, name) < 0:
            raise InputError(f"--{name} must be >= 0, got {getattr(options.run, name)}")
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


def check_model_options(options):
    """Checks of `ModelOptions` before any work: `--padding_multiple`."""
    if options.model.padding_multiple is not None and options.model.padding_multiple < 1:
        raise InputError(f"--padding_multiple must be >= 1, got {options.model.padding_multiple}")


def load_model_config(options):
    """Reads the model's config and checks the files `ModelOptions` name
    against it: `--max_seq_length`, the vocab's size, the shapes in
    `--init_checkpoint`'s index. Returns the config."""
    config = load_bert_config(options)
    _check_vocab_fits(options, config)
    if options.model.init_checkpoint:
        checkpoints.check_fits_config(
            options.model.init_checkpoint, config, _config_source(options)
        )
    return config


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


def _check_vocab_fits(options, config):
    """A vocab with more tokens than the model's embedding rows would fail deep
    in the model on the first unknown id; say so before any work."""
    if not options.model.vocab_file:
        return
    size = len(tokenization.load_vocab(options.model.vocab_file))
    if size > config.vocab_size:
        raise InputError(
            f"--vocab_file {options.model.vocab_file} has {size} tokens, more than "
            f"vocab_size={config.vocab_size} of {_config_source(options)}: "
            "they are not the same model's"
        )


def length_multiple(options, strategy, jit_compile):
    """--padding_multiple (or its default) under --dynamic_padding off TPUs, else None."""
    if not options.model.dynamic_padding:
        return None
    if is_tpu_strategy(strategy):
        logging.info("--dynamic_padding is off under TPUStrategy: static shapes")
        return None
    if options.model.padding_multiple is not None:
        return options.model.padding_multiple
    return XLA_PAD_MULTIPLE if jit_compile else PADDING_MULTIPLE


def run_task(runner):
    """Runs a task's train / eval / predict / export as its options say;
    returns the eval metrics (empty without do_eval). An error before
    training leaves `--output_dir` as it was (not there, or without what the
    run added); a later one leaves no empty folder it made."""
    metrics = _run(runner)
    for what, path in runner.written:
        print(f"{what}: {path}")
    return metrics


def _run(runner):
    if runner.reads_text:
        runner.options = with_model_text(runner.options, runner.default_lower_case)
    options = runner.options
    _check_shared_options(options)
    runner.validate()
    config = load_model_config(options)
    _check_weights_exist(options)
    with files.folder_removed_on_error(options.run.output_dir):
        with files.new_entries_removed_on_error(options.run.output_dir):
            runner.prepare(config)
        try:
            return _train_and_use(runner, config)
        except tf.errors.DataLossError:
            error = damaged_file_error(runner.record_files(), runner.damaged_file_remedy)
            if error is None:
                raise
            raise error from None


def _train_and_use(runner, config):
    """Builds the model and trains, evaluates, predicts and exports as the options say."""
    options = runner.options
    training, runtime = options.training, options.runtime
    with training_environment(runtime) as strategy:
        for name in runner.batch_size_options:
            distribution.check_batch_divisible(getattr(training, name), strategy, name)
        if runner.pads_dynamically:
            runner.length_multiple = length_multiple(options, strategy, runtime.jit_compile)
        num_train_steps, optimizer = 1, None
        with strategy.scope():
            model = runner.build_model(config)
            if options.run.do_train:
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
        trainer = Trainer(
            strategy,
            runner.objective(),
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
        best = (
            BestCheckpoint(
                options.run.output_dir,
                MetricChoice.parse(options.run.keep_best_checkpoint),
                model,
                trainer.global_step,
                trainer.checkpoints.is_chief,
            )
            if options.run.keep_best_checkpoint
            else None
        )
        eval_writer = (
            tf.summary.create_file_writer(os.path.join(options.run.output_dir, "eval"))
            if options.run.do_eval
            else None
        )
        if options.run.do_train:
            init_fn = (
                (lambda: warm_start(model, options.model.init_checkpoint))
                if options.model.init_checkpoint
                else None
            )
            evaluation = _evaluation_during_training(
                runner, trainer, num_train_steps, best, eval_writer
            )
            trainer.train(
                runner.train_dataset_fn(),
                training.train_batch_size,
                init_fn=init_fn,
                evaluation=evaluation,
            )
            if trainer.checkpoints.is_chief:
                runner.wrote("checkpoint", trainer.checkpoints.latest())
        elif not trainer.checkpoints.restore_latest() and not (best and best.record):
            warm_start(model, options.model.init_checkpoint)  # _check_weights_exist: there is one
        if best is not None and best.restore():
            runner.wrote("best checkpoint", best.prefix)
        metrics = {}
        if options.run.do_eval:
            metrics = runner.evaluate(trainer)
            metrics.setdefault("global_step", int(trainer.global_step.numpy()))
            path = os.path.join(options.run.output_dir, "eval_results.txt")
            write_results(path, metrics)
            _write_eval_summaries(eval_writer, metrics["global_step"], metrics)
            runner.wrote("eval results", path)
        if options.run.do_predict:
            runner.predict(trainer)
        if options.export.export_dir:
            logging.info("exporting the SavedModel to %s", options.export.export_dir)
            runner.wrote("SavedModel", runner.export(model))
        return metrics


def _evaluation_during_training(runner, trainer, num_train_steps, best, eval_writer):
    """The Trainer's `evaluation` (None when the run evaluates only after training)."""
    every_steps = runner.eval_every_steps(num_train_steps)
    if not every_steps:
        return None
    return PeriodicEvaluation(
        lambda: runner.evaluate(trainer),
        every_steps,
        best,
        runner.options.run.early_stopping_patience,
        on_metrics=lambda step, metrics: _write_eval_summaries(eval_writer, step, metrics),
    )


def _write_eval_summaries(writer, step, metrics):
    """The eval metrics as TensorBoard scalars at `step` (the original
    Estimator's `eval` folder beside the training curves)."""
    with writer.as_default(step=step):
        for name, value in metrics.items():
            if name != "global_step" and isinstance(value, numbers.Real):
                tf.summary.scalar(name, value)
    writer.flush()
