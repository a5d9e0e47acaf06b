"""The training and evaluation loop shared by every task.

A task supplies its model, how its loss is computed and normalised, and its
evaluation sums (see `Objective`); the loop supplies the rest: distribution over
replicas, optional XLA, up to `steps_per_loop` steps per host round trip
(fewer when that would leave the log silent for more than PROGRESS_SECONDS),
checkpoints with automatic resume (and one saved on SIGTERM / Ctrl-C),
TensorBoard summaries and a progress line.

Losses are normalised by totals over the *global* batch (all-reduced before
the loss is computed), so each replica's loss is its share of the global loss
and the summed gradients equal a single device's on the same global batch.
With `gradient_accumulation_steps=N` one update takes N batches: the step
averages their gradients and applies them once.
"""

import contextlib
import dataclasses
import gc
import time

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.errors import BertTfError
from bert_tf.files import write_text_atomically
from bert_tf.training.checkpoint_manager import CheckpointManager
from bert_tf.training.grappler import lean_rewrites

# A training progress line (and TensorBoard point) at least this often.
PROGRESS_SECONDS = 10.0


def _duration(seconds):
    minutes, seconds = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


@contextlib.contextmanager
def _gc_paused():
    """Python's cyclic garbage collector off: tracing creates objects by the
    hundred thousand, and the collections it triggers cost a tenth of the
    trace (0.6 s at BERT-Base); the garbage is collected after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class TrainingError(BertTfError, RuntimeError):
    """Training cannot go on (e.g. the loss is no longer finite)."""


class Objective:
    """What the loop needs to know about a task: `totals` and `loss` for
    training, `eval_sums` and `eval_metrics` for `Trainer.evaluate`.

    `totals` and `loss` are traced without autograph: branch on tensors with
    `tf.where` / `tf.cond`, not Python `if`."""

    def totals(self, features):
        """Per-replica sums that the loop all-reduces over the global batch
        (e.g. `{"examples": batch}`); passed to `loss` as global totals."""
        raise NotImplementedError

    def loss(self, outputs, features, totals):
        """A dict of float32 scalars with key `loss`: this replica's share of
        the global-batch losses, normalised with the global `totals`."""
        raise NotImplementedError

    def outputs(self, model, features):
        """The model's outputs in a train step, as `loss` takes them."""
        return model(features, training=True)

    def create_variables(self):
        """`{checkpoint name: variable}` the objective trains beside the
        model, made here (in the strategy's scope); none by default."""
        return {}

    def eval_sums(self, outputs, features):
        """A dict of float32 sums over this batch, added up over the eval set."""
        raise NotImplementedError

    def eval_metrics(self, sums):
        """Final metrics (Python floats) from the sums over the eval set."""
        raise NotImplementedError


@dataclasses.dataclass
class LoopConfig:
    """How long to train and how often to log and save."""

    output_dir: str
    num_train_steps: int
    steps_per_loop: int = 1000
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
    inference_jit_compile: bool = False


def is_chief(strategy):
    """Whether this process writes checkpoints and summaries."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return True
    has_chief = "chief" in resolver.cluster_spec().as_dict()
    return resolver.task_type == "chief" or (
        not has_chief and resolver.task_type == "worker" and resolver.task_id == 0
    )


def _sum_over_replicas(strategy, values):
    return {k: strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None) for k, v in values.items()}


class _BatchProgress:
    """Lines for a pass over batches (evaluation, prediction): one when it
    starts (the first batch also traces the step) and one every
    PROGRESS_SECONDS with the batches done, so that no stage is silent."""

    def __init__(self, what, max_batches=None):
        self._what = what
        self._start = time.time()
        self._next_line = self._start + PROGRESS_SECONDS
        self.batches = 0
        logging.info("%s%s", what, f" (at most {max_batches} batches)" if max_batches else "")

    def batch_done(self):
        self.batches += 1
        now = time.time()
        if now >= self._next_line:
            rate = self.batches / (now - self._start)
            logging.info("%s: %d batches, %.1f batches/s", self._what, self.batches, rate)
            self._next_line = now + PROGRESS_SECONDS


class Predictor:
    """Runs a model over a dataset on a strategy, batch by batch.

    Create the model inside `strategy.scope()` and load its weights before
    predicting. `jit_compile`: the model's forward pass compiled with XLA."""

    def __init__(self, strategy, model, jit_compile=False):
        self.strategy = strategy
        self.model = model
        self._infer = tf.function(self._model_outputs, jit_compile=jit_compile)
        self._predict_step = tf.function(self._predict_batch)

    def _model_outputs(self, features):
        return self.model(features, training=False)

    def _predict_batch(self, iterator, passthrough):
        def replica(features):
            outputs = self._infer(features)
            outputs = outputs if isinstance(outputs, dict) else {"logits": outputs}
            return {**outputs, **{k: features[k] for k in passthrough}}

        return self.strategy.run(replica, (next(iterator),))

    def distribute(self, dataset_fn, skip_batches=0):
        """The distributed dataset of `dataset_fn(input_context)` (per-replica
        batches), without its first `skip_batches` batches."""

        def per_replica(context):
            dataset = dataset_fn(context)
            return dataset.skip(skip_batches) if skip_batches else dataset

        return self.strategy.distribute_datasets_from_function(per_replica)

    def predict_batches(self, dataset_fn, passthrough=(), what="predicting"):
        """Runs the model once over the dataset, yielding one dict of numpy
        arrays per replica batch, in order: the model's outputs (`logits`
        when the model returns a single tensor) and the feature keys in
        `passthrough`. (Replicas' batches are not concatenated: with dynamic
        padding their sequence lengths differ.) Nothing is kept between
        batches, so callers can stream results of any size. `what` names the
        pass in the progress lines."""
        iterator = iter(self.distribute(dataset_fn))
        progress = _BatchProgress(what)
        while True:
            try:
                result = self._predict_step(iterator, tuple(passthrough))
            except (StopIteration, tf.errors.OutOfRangeError):
                return
            progress.batch_done()
            local = {k: self.strategy.experimental_local_results(v) for k, v in result.items()}
            for index in range(len(next(iter(local.values())))):
                yield {k: np.asarray(values[index]) for k, values in local.items()}

    def predict(self, dataset_fn, passthrough=(), what="predicting"):
        """`predict_batches` concatenated over all batches."""
        chunks = list(self.predict_batches(dataset_fn, passthrough, what))
        if not chunks:
            raise TrainingError("the prediction data is empty")
        return {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}


class Trainer(Predictor):
    """Runs a task's train and eval steps on a strategy (and predicts).

    Create the model and the optimizer inside `strategy.scope()` before
    constructing the Trainer. Without an optimizer (None) it only evaluates
    and predicts, and restores just the model's weights.
    """

    def __init__(self, strategy, objective, model, optimizer, config):
        super().__init__(strategy, model, config.inference_jit_compile)
        self.objective = objective
        self.optimizer = optimizer
        self.config = config
        with strategy.scope():
            self.global_step = tf.Variable(0, dtype=tf.int64, trainable=False, name="global_step")
            self.objective_variables = objective.create_variables() if objective is not None else {}
            if optimizer is not None:
                optimizer.build(self._trained_variables())
        self.checkpoints = CheckpointManager(
            config.output_dir,
            model,
            optimizer,
            self.global_step,
            config.keep_checkpoint_max,
            is_chief=is_chief(strategy),
            extra_variables=self.objective_variables,
        )
        if config.gradient_accumulation_steps < 1:
            raise BertTfError(
                "gradient_accumulation_steps must be >= 1, got "
                f"{config.gradient_accumulation_steps}"
            )
        # The train step is straight-line code: tracing it without autograph
        # saves converting and wrapping every call (~1 s at BERT-Base).
        self._compute = tf.function(
            self._compute_losses_and_gradients, jit_compile=config.jit_compile, autograph=False
        )
        self._step = tf.function(self._one_step, autograph=False)
        self._train_loop = tf.function(self._train_steps, autograph=False)
        self._eval_step = tf.function(self._eval_batch)

    # -- steps ------------------------------------------------------------

    def _trained_variables(self):
        return self.model.trainable_variables + list(self.objective_variables.values())

    def _global_totals(self, features):
        context = tf.distribute.get_replica_context()
        return {
            k: context.all_reduce(tf.distribute.ReduceOp.SUM, tf.cast(v, tf.float32))
            for k, v in self.objective.totals(features).items()
        }

    def _compute_losses_and_gradients(self, features, totals):
        variables = self._trained_variables()
        with tf.GradientTape() as tape:
            outputs = self.objective.outputs(self.model, features)
            losses = self.objective.loss(outputs, features, totals)
            scaled = self.optimizer.scale_loss(losses["loss"])
        return losses, tape.gradient(scaled, variables)

    def _replica_update(self, batches):
        """One update on this replica from its micro-batches: their gradients
        averaged (densified when there are several), applied once; returns the
        micro-batches' mean losses. Variables the loss does not reach (the
        pooler of a span labeler) are left alone, as in the original."""
        variables = self._trained_variables()
        losses, gradients = self._compute(batches[0], self._global_totals(batches[0]))
        trained = [i for i, g in enumerate(gradients) if g is not None]
        gradients = [gradients[i] for i in trained]
        if len(batches) > 1:
            gradients = [tf.convert_to_tensor(g) for g in gradients]
            for features in batches[1:]:
                more_losses, more = self._compute(features, self._global_totals(features))
                losses = {k: losses[k] + more_losses[k] for k in losses}
                gradients = [g + tf.convert_to_tensor(more[i]) for g, i in zip(gradients, trained)]
            gradients = [g / len(batches) for g in gradients]
            losses = {k: v / len(batches) for k, v in losses.items()}
        self.optimizer.apply(gradients, [variables[i] for i in trained])
        return losses

    def _one_step(self, iterator):
        """One optimizer update on `gradient_accumulation_steps` batches;
        returns their mean losses (summed over replicas)."""
        batches = tuple(next(iterator) for _ in range(self.config.gradient_accumulation_steps))
        losses = self.strategy.run(self._replica_update, args=(batches,))
        self.global_step.assign_add(1)
        return _sum_over_replicas(self.strategy, losses)

    def _train_steps(self, iterator, num_steps):
        """Runs `num_steps` steps; returns mean losses, and the index of the
        first step whose loss was not finite (-1 if none)."""
        # The step appears once in the graph, inside the loop: tracing it and
        # optimizing the graph (grappler) are most of the time to the first
        # step. Its traced outputs give the keys the sums start from.
        traced = self._step.get_concrete_function(iterator).structured_outputs
        sums = {k: tf.zeros((), v.dtype) for k, v in traced.items()}

        def body(i, sums, first_bad):
            losses = self._step(iterator)
            bad_now = tf.logical_and(
                first_bad < 0, tf.logical_not(tf.math.is_finite(losses["loss"]))
            )
            return (i + 1, {k: sums[k] + losses[k] for k in sums}, tf.where(bad_now, i, first_bad))

        _, sums, first_bad = tf.while_loop(
            lambda i, *_: i < num_steps, body, (tf.constant(0), sums, tf.constant(-1))
        )
        means = {k: v / tf.cast(num_steps, v.dtype) for k, v in sums.items()}
        return means, first_bad

    def _eval_batch(self, iterator):
        def replica(features):
            return self.objective.eval_sums(self._infer(features), features)

        return _sum_over_replicas(self.strategy, self.strategy.run(replica, (next(iterator),)))

    # -- loops ------------------------------------------------------------

    def train(self, dataset_fn, global_batch_size, init_fn=None, evaluation=None):
        """Trains to `num_train_steps`, resuming from the newest checkpoint in
        `output_dir`, else calling `init_fn()` (warm start) if given.

        `dataset_fn(input_context)` returns the per-replica batched dataset;
        on resume, the batches already consumed are skipped, so a deterministic
        pipeline continues exactly where it stopped. `evaluation` (a
        `periodic_eval.PeriodicEvaluation`) is called every
        `evaluation.every_steps` updates and after the last, before that
        step's checkpoint; training stops (with a checkpoint) when it says so.
        Returns the history: one `(global_step, mean losses over the loop)`
        per loop run.
        """
        config = self.config
        if not self.checkpoints.restore_latest() and init_fn is not None:
            init_fn()
        step = int(self.global_step.numpy())
        if step >= config.num_train_steps:
            logging.info("already trained to step %d", step)
            return []
        if evaluation is not None and evaluation.resume(step):
            return []
        eval_every = evaluation.every_steps if evaluation is not None else None
        iterator = iter(
            self.distribute(dataset_fn, skip_batches=step * config.gradient_accumulation_steps)
        )
        writer = (
            tf.summary.create_file_writer(config.output_dir)
            if is_chief(self.strategy)
            else tf.summary.create_noop_writer()
        )
        history = []
        seconds_per_step = None  # unknown until a call without tracing ran
        saved_step = step
        # A checkpoint saved during an evaluation would skip it on resume.
        evaluating = False
        logging.info(
            "step %d/%d: tracing the train step and optimizing its graph, once per run "
            "(seconds to a minute)",
            step + 1,
            config.num_train_steps,
        )
        try:
            while step < config.num_train_steps:
                num_steps = self._steps_in_next_call(step, seconds_per_step, eval_every)
                start = time.time()
                losses = self.train_steps(iterator, num_steps)
                seconds = time.time() - start
                if history:
                    seconds_per_step = seconds / num_steps
                step += num_steps
                history.append((step, losses))
                self._log(
                    writer, step, losses, num_steps / seconds, global_batch_size, seconds_per_step
                )
                last = step == config.num_train_steps
                stop = False
                if eval_every and (step % eval_every == 0 or last):
                    evaluating = True
                    stop = evaluation(step)
                    evaluating = False
                if stop or last or step % config.save_checkpoints_steps == 0:
                    self.checkpoints.save()
                    saved_step = step
                if stop:
                    break
        except KeyboardInterrupt:
            # SIGTERM (preemption, a scheduler) or Ctrl-C between steps: keep
            # the steps done since the last checkpoint (unless an evaluation
            # was under way: the next run redoes those steps and it).
            step = int(self.global_step.numpy())
            save = step > saved_step and not evaluating
            logging.warning(
                "interrupted at step %d%s",
                step,
                ": saving a checkpoint" if save else "",
            )
            if save:
                self.checkpoints.save()
            raise
        finally:
            writer.flush()
        return history

    def _steps_in_next_call(self, step, seconds_per_step, eval_every=None):
        """Steps for the next tf.function call: up to `steps_per_loop`, the
        next checkpoint, the next evaluation and the end, and few enough for a
        progress line about every PROGRESS_SECONDS (one step while the step
        time is unknown)."""
        config = self.config
        boundaries = [config.save_checkpoints_steps] + ([eval_every] if eval_every else [])
        num_steps = min(
            config.steps_per_loop,
            config.num_train_steps - step,
            *(every - step % every for every in boundaries),
        )
        if seconds_per_step is None:
            return 1
        return max(1, min(num_steps, int(PROGRESS_SECONDS / seconds_per_step)))

    def train_steps(self, iterator, num_steps):
        """Runs `num_steps` updates from `iterator` (of `distribute`) in one
        tf.function call; returns their mean losses as Python floats. Raises
        TrainingError naming the step if a loss is not finite."""
        step = int(self.global_step.numpy())
        with lean_rewrites(), _gc_paused():
            means, first_bad = self._train_loop(iterator, tf.constant(num_steps))
        if int(first_bad) >= 0:
            last = self.checkpoints.latest()
            raise TrainingError(
                f"the loss is not finite at step {step + int(first_bad) + 1}; stopped. "
                f"Last good checkpoint: {last or 'none'}"
            )
        return {k: float(v) for k, v in means.items()}

    def _log(self, writer, step, losses, steps_per_second, global_batch_size, seconds_per_step):
        learning_rate = float(self.optimizer.learning_rate)
        remaining = self.config.num_train_steps - step
        eta = (
            f"  ETA {_duration(remaining * seconds_per_step)}"
            if seconds_per_step is not None and remaining
            else ""
        )
        logging.info(
            "step %d/%d  %s  lr %.3g  %.2f steps/s  %.1f examples/s%s",
            step,
            self.config.num_train_steps,
            "  ".join(f"{k} {v:.4f}" for k, v in sorted(losses.items())),
            learning_rate,
            steps_per_second,
            steps_per_second * global_batch_size,
            eta,
        )
        with writer.as_default(step=step):
            for name, value in losses.items():
                tf.summary.scalar(name, value)
            tf.summary.scalar("learning_rate", learning_rate)
            tf.summary.scalar("examples_per_second", steps_per_second * global_batch_size)
            tf.summary.scalar("global_step/sec", steps_per_second)

    def evaluate(self, dataset_fn, max_steps=None):
        """Evaluates over the dataset (at most `max_steps` batches); returns
        the task's metrics plus `global_step`."""
        iterator = iter(self.distribute(dataset_fn))
        sums, progress = None, _BatchProgress("evaluating", max_steps)
        while max_steps is None or progress.batches < max_steps:
            try:
                batch_sums = self._eval_step(iterator)
            except (StopIteration, tf.errors.OutOfRangeError):
                break
            batch_sums = {k: float(v) for k, v in batch_sums.items()}
            sums = batch_sums if sums is None else {k: sums[k] + batch_sums[k] for k in sums}
            progress.batch_done()
        if sums is None:
            raise TrainingError("the evaluation data is empty")
        metrics = self.objective.eval_metrics(sums)
        metrics["global_step"] = int(self.global_step.numpy())
        return metrics


def write_results(path, metrics):
    """Writes `key = value` lines sorted by key (the original's eval_results.txt), atomically."""
    for key in sorted(metrics):
        logging.info("  %s = %s", key, metrics[key])
    write_text_atomically(path, "".join(f"{key} = {metrics[key]}\n" for key in sorted(metrics)))
