"""Evaluation during training: one log line per evaluation, the best
checkpoint (`best_checkpoint.BestCheckpoint`) and early stopping.

`Trainer.train(..., evaluation=PeriodicEvaluation(...))` calls it every
`every_steps` updates and after the last one.
"""

import numbers

from absl import logging


def _format(metrics):
    return "  ".join(
        f"{k} {v:.4f}" for k, v in sorted(metrics.items()) if isinstance(v, numbers.Real)
    )


class PeriodicEvaluation:
    """Evaluates with `evaluate_fn()` (-> a dict of metrics) every
    `every_steps` updates. With `best` (a BestCheckpoint) the best model is
    kept, and with `patience` > 0 training stops after that many evaluations
    in a row without improvement. `on_metrics(step, metrics)`, if given,
    sees every evaluation (e.g. to write TensorBoard summaries); `history`
    (an `eval_history.EvalHistory`), if given, records it."""

    def __init__(
        self, evaluate_fn, every_steps, best=None, patience=0, on_metrics=None, history=None
    ):
        self.evaluate_fn = evaluate_fn
        self.every_steps = every_steps
        self.best = best
        self.patience = patience
        self.on_metrics = on_metrics
        self.history = history

    def _patience_spent(self):
        return bool(self.patience) and self.best.evaluations_since_best() >= self.patience

    def resume(self, step):
        """Called once before training from `step`; returns whether the run
        had already stopped early (then it does not train on)."""
        if self.history is not None:
            self.history.resume(step)
        if self.best is None:
            return False
        self.best.resume(step)
        if self._patience_spent():
            logging.info(
                "stopped early before: %d evaluations without improvement since step %d",
                self.best.evaluations_since_best(),
                self.best.record["step"],
            )
            return True
        return False

    def __call__(self, step):
        """Evaluates at `step`; returns whether to stop training."""
        metrics = {k: v for k, v in self.evaluate_fn().items() if k != "global_step"}
        if self.on_metrics is not None:
            self.on_metrics(step, metrics)
        if self.history is not None:
            self.history.append(step, metrics)
        if self.best is None:
            logging.info("eval at step %d: %s", step, _format(metrics))
            return False
        improved = self.best.update(step, metrics)
        record = self.best.record
        if improved:
            verdict = f"new best {record['metric']}"
        else:
            verdict = (
                f"best {record['metric']} {record['value']:.4f} at step {record['step']}; "
                f"{self.best.evaluations_since_best()} evaluation(s) without improvement"
            )
        logging.info("eval at step %d: %s (%s)", step, _format(metrics), verdict)
        if self._patience_spent():
            logging.info(
                "early stopping at step %d: --early_stopping_patience=%d evaluations "
                "without improvement",
                step,
                self.patience,
            )
            return True
        return False
