"""The best checkpoint of a run by a dev metric, kept apart from the latest ones.

`output_dir/best/model.ckpt-STEP` holds the model's weights (TF1 names, as
every checkpoint here) and `global_step` of the best evaluation so far;
`output_dir/best/best_metric.json` records it:

    {"metric": "eval_accuracy", "lower_is_better": false, "value": 0.83,
     "step": 40, "checkpoint": "model.ckpt-40",
     "evaluations": [[20, 0.71], [40, 0.83], [60, 0.80]]}

A new best is written as a new checkpoint first, then the record naming it
(the commit point: both atomic), then the older files are removed: a crash at
any moment leaves a record whose checkpoint is complete. The folder is not
`output_dir`'s, so `keep_checkpoint_max` never deletes the best one.
"""

import dataclasses
import json
import os

from absl import logging

from bert_tf import files
from bert_tf.errors import InputError
from bert_tf.files import write_text_atomically
from bert_tf.training.checkpoint_manager import CheckpointManager, write_state

BEST_DIR = "best"
RECORD_FILE = "best_metric.json"


@dataclasses.dataclass(frozen=True)
class MetricChoice:
    """Which eval metric decides the best checkpoint, and its direction."""

    name: str
    lower_is_better: bool

    @classmethod
    def parse(cls, text, flag="--keep_best_checkpoint"):
        """`accuracy`, `eval_loss`, `min:eval_loss` or `max:f1`: without a
        prefix, lower is better for names ending in `loss`, else higher."""
        mode, _, name = text.rpartition(":")
        if not name or mode not in ("", "min", "max"):
            raise InputError(f"{flag}={text!r}: expected a metric name, min:<name> or max:<name>")
        lower = mode == "min" if mode else name.endswith("loss")
        return cls(name, lower)

    def key_in(self, metrics, flag="--keep_best_checkpoint"):
        """The key of `metrics` this choice names: the name itself, else
        `eval_<name>` (`accuracy` is eval_results.txt's `eval_accuracy`)."""
        for key in (self.name, f"eval_{self.name}"):
            if key in metrics and key != "global_step":
                return key
        names = ", ".join(sorted(k for k in metrics if k != "global_step"))
        raise InputError(
            f"{flag}={self.name}: the evaluation gives no such metric; it gives {names}"
        )

    def better(self, value, than):
        return value < than if self.lower_is_better else value > than


def read_record(output_dir):
    """The best-checkpoint record of `output_dir` (a dict), or None."""
    path = os.path.join(output_dir, BEST_DIR, RECORD_FILE)
    if not files.exists(path):
        return None
    with files.open_file(path) as f:
        return json.load(f)


class BestCheckpoint:
    """Keeps `output_dir/best/` up to date with the evaluations of a run.

    The model and `global_step` are the Trainer's; only the chief writes
    (`is_chief=False` on the other workers), but every worker keeps the
    same record in memory and so takes the same decisions."""

    def __init__(self, output_dir, choice, model, global_step, is_chief=True):
        self.choice = choice
        self.folder = os.path.join(output_dir, BEST_DIR)
        self.record = read_record(output_dir)
        self.key = self.record["metric"] if self.record else None
        if self.record and self.record["metric"] not in (choice.name, f"eval_{choice.name}"):
            raise InputError(
                f"--keep_best_checkpoint={choice.name}: {self.folder} keeps the best by "
                f"{self.record['metric']}; use that metric or another --output_dir"
            )
        self._checkpoints = CheckpointManager(
            self.folder, model, None, global_step, max_to_keep=1, is_chief=is_chief
        )

    @property
    def prefix(self):
        """The best checkpoint's prefix, or None before the first evaluation."""
        return os.path.join(self.folder, self.record["checkpoint"]) if self.record else None

    def evaluations_since_best(self):
        """How many evaluations after the best one did not improve on it."""
        if not self.record:
            return 0
        return sum(step > self.record["step"] for step, _ in self.record["evaluations"])

    def resume(self, step):
        """Forgets the evaluations after `step`, where training resumes: they
        are done again (a crash came after them, before their checkpoint)."""
        if self.record:
            evaluations = self.record["evaluations"]
            self.record["evaluations"] = [e for e in evaluations if e[0] <= step]

    def update(self, step, metrics):
        """Records the evaluation `metrics` at `step`; writes the model as the
        new best checkpoint when it improves on the best. Returns whether it did."""
        self.key = self.key or self.choice.key_in(metrics)
        value = float(metrics[self.key])
        record = self.record or {"evaluations": []}
        evaluations = [e for e in record["evaluations"] if e[0] != step] + [[step, value]]
        improved = not self.record or self.choice.better(value, self.record["value"])
        if improved:
            record = {
                "metric": self.key,
                "lower_is_better": self.choice.lower_is_better,
                "value": value,
                "step": step,
                "checkpoint": f"model.ckpt-{step}",
            }
        self.record = {**record, "evaluations": evaluations}
        if self._checkpoints.is_chief:
            self._write(improved)
        return improved

    def _write(self, improved):
        name = self.record["checkpoint"]
        if improved:
            self._checkpoints.write(self.prefix)
        write_text_atomically(
            os.path.join(self.folder, RECORD_FILE), json.dumps(self.record, indent=1) + "\n"
        )
        if improved:
            write_state(self.folder, [name])
            for path in files.matching(os.path.join(self.folder, "model.ckpt-*")):
                if not os.path.basename(path).startswith(name + "."):
                    files.remove(path)

    def restore(self):
        """Loads the best checkpoint's weights and `global_step` into the
        model; returns whether there was one."""
        if not self.record:
            return False
        self._checkpoints.restore(self.prefix)
        logging.info(
            "using the best checkpoint %s (%s %.4f at step %d) for eval, predict and export",
            self.prefix,
            self.record["metric"],
            self.record["value"],
            self.record["step"],
        )
        return True
