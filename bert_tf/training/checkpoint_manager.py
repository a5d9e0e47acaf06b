"""Training checkpoints in the original's layout, written atomically, with resume.

A checkpoint `output_dir/model.ckpt-STEP` holds the model's weights under the
original TF1 names (`bert/...`, `cls/...`, `output_weights`), so any tool that
reads Google's checkpoints reads ours as `--init_checkpoint`, plus the
training state: `global_step` and the optimizer's variables under
`optimizer/<k>/<name>`, and the model's other state (the dropout
seed generators, so a resumed run draws the same masks) as `model_state/N`,
and what the objective trains beside the model (a distilled student's
projections to its teacher's width, `distillation/...`). The `checkpoint`
index file (TF1's text format, so `tf.train.latest_checkpoint` works) is
replaced only after the new files are complete: a crash during a save
leaves the previous checkpoint as the latest.
"""

import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import files, initializers
from bert_tf.checkpoints import (
    UnreadableCheckpointError,
    read_tensors,
    tf1_variable_map,
    variable_shapes,
    write_checkpoint,
)
from bert_tf.errors import CheckpointError
from bert_tf.files import write_text_atomically

OPTIMIZER_PREFIX = "optimizer/"
STATE_FILE = "checkpoint"


def _optimizer_names(optimizer):
    """`optimizer/<k>/<variable name>` -> variable, where k numbers the
    optimizers in the chain (a LossScaleOptimizer and the one it wraps) in
    order; Keras's own optimizer names carry process-wide counters."""
    owners = {}
    names = {}
    for variable in optimizer.variables:
        owner, _, short = variable.path.rpartition("/")
        index = owners.setdefault(owner, len(owners))
        names[f"{OPTIMIZER_PREFIX}{index}/{short}"] = variable
    return names


def _read_state(output_dir):
    path = os.path.join(output_dir, STATE_FILE)
    if not files.exists(path):
        return []
    with files.open_file(path) as f:
        return re.findall(r'^all_model_checkpoint_paths: "(.*)"$', f.read(), re.M)


def write_state(output_dir, prefixes):
    """Writes the `checkpoint` index of `output_dir` (atomically): `prefixes`
    (names in the folder), the newest last."""
    lines = [f'model_checkpoint_path: "{prefixes[-1]}"']
    lines += [f'all_model_checkpoint_paths: "{p}"' for p in prefixes]
    write_text_atomically(os.path.join(output_dir, STATE_FILE), "\n".join(lines) + "\n")


class CheckpointManager:
    """Saves and restores model + optimizer + global step in `output_dir`,
    and `extra_variables` (`{name: variable}` trained beside the model).

    Keeps the newest `max_to_keep` checkpoints. Only the chief writes
    (`is_chief=False` on the other workers of a multi-worker job).
    """

    def __init__(
        self,
        output_dir,
        model,
        optimizer,
        global_step,
        max_to_keep=5,
        is_chief=True,
        extra_variables=None,
    ):
        self.output_dir = output_dir
        self.model = model
        self.optimizer = optimizer
        self.global_step = global_step
        self.max_to_keep = max_to_keep
        self.is_chief = is_chief
        self.extra_variables = dict(extra_variables or {})

    def _variables(self):
        variables = dict(tf1_variable_map(self.model))
        weights = {id(v) for v in variables.values()}
        other_state = [v for v in self.model.variables if id(v) not in weights]
        variables.update({f"model_state/{i}": v for i, v in enumerate(other_state)})
        variables.update(self.extra_variables)
        if self.optimizer is not None:
            variables.update(_optimizer_names(self.optimizer))
        variables["global_step"] = self.global_step
        return variables

    def latest(self):
        """The prefix of the newest complete checkpoint, or None."""
        prefixes = _read_state(self.output_dir)
        return os.path.join(self.output_dir, prefixes[-1]) if prefixes else None

    def save(self):
        """Writes `model.ckpt-<global_step>`; returns its prefix."""
        step = int(self.global_step.numpy())
        name = f"model.ckpt-{step}"
        prefix = os.path.join(self.output_dir, name)
        if not self.is_chief:
            return prefix
        self.write(prefix)
        kept = [p for p in _read_state(self.output_dir) if p != name] + [name]
        write_state(self.output_dir, kept[-self.max_to_keep :])
        for old in kept[: -self.max_to_keep]:
            for path in files.matching(os.path.join(self.output_dir, old) + ".*"):
                files.remove(path)
        logging.info("saved checkpoint %s", prefix)
        return prefix

    def write(self, prefix):
        """Writes the checkpoint at `prefix` (atomically), leaving the
        `checkpoint` index and the other checkpoints alone."""
        write_checkpoint(prefix, self._variables())

    def restore(self, prefix):
        """Restores model, optimizer and global step from `prefix` (strict).
        Every tensor is read before any is assigned: a checkpoint that does
        not read leaves the model as it was."""
        available = variable_shapes(prefix)
        variables = self._variables()
        missing = sorted(set(variables) - set(available))
        if missing:
            raise CheckpointError(
                f"{prefix}: cannot resume, missing {', '.join(missing[:8])}"
                + (f" ... and {len(missing) - 8} more" if len(missing) > 8 else "")
                + " (was it written with another model, optimizer or --output_dir?)"
            )
        values = read_tensors(prefix, list(variables))
        for name, variable in variables.items():
            if tuple(values[name].shape) != tuple(variable.shape):
                raise CheckpointError(
                    f"{prefix}: {name} has shape {list(values[name].shape)}, "
                    f"the model expects {list(variable.shape)}"
                )
        for name, variable in variables.items():
            variable.assign(
                np.asarray(values[name], dtype=tf.as_dtype(variable.dtype).as_numpy_dtype)
            )
        initializers.mark_assigned(variables.values())
        logging.info("resumed from %s at step %d", prefix, int(self.global_step.numpy()))

    def restore_latest(self):
        """Restores the newest checkpoint that reads; returns whether one did.
        A newer one that does not read (a crash or a full disk mid-copy) is
        skipped with a warning naming it."""
        prefixes = [os.path.join(self.output_dir, p) for p in _read_state(self.output_dir)]
        broken = []
        for prefix in reversed(prefixes):
            try:
                self.restore(prefix)
            except UnreadableCheckpointError as e:
                logging.warning("%s; trying an older one", e)
                broken.append(str(e))
                continue
            return True
        if broken:
            raise CheckpointError(
                f"no checkpoint in {self.output_dir} reads ({broken[0]}); "
                "remove them or choose another --output_dir"
            )
        return False
