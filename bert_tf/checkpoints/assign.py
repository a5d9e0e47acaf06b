"""Canonical `{tf1_name: ndarray}` weights assigned to a model's variables,
strictly by default, with a report of what was loaded and what was not."""

import dataclasses

import numpy as np
from absl import logging

from bert_tf import initializers
from bert_tf.checkpoints.name_map import is_training_state, tf1_variable_map
from bert_tf.errors import CheckpointError


@dataclasses.dataclass
class LoadReport:
    """What `load_weights` did: the TF1 names loaded, left initialised (with
    the Keras paths of variables that have no TF1 name, e.g. a feature-based
    tagger's BiLSTM), and the checkpoint's names the model did not use."""

    loaded: list
    left_initialised: list
    unused: list


def _list(names, limit=8):
    names = sorted(names)
    shown = ", ".join(names[:limit])
    return shown + (f" ... and {len(names) - limit} more" if len(names) > limit else "")


def load_weights(model, weights, strict=True, source="checkpoint"):
    """Assigns canonical `{tf1_name: ndarray}` weights to a bert_tf model.

    Strict (default): any model variable missing from `weights`, any
    checkpoint variable the model does not have, and any shape mismatch is a
    CheckpointError naming each variable. `strict=False` allows partial
    loading (e.g. encoder weights into a classifier whose head is new); shape
    mismatches remain errors. Returns a LoadReport.
    """
    variables = tf1_variable_map(model)
    weights = {k: v for k, v in weights.items() if not is_training_state(k)}
    missing = sorted(set(variables) - set(weights))
    unused = sorted(set(weights) - set(variables))
    wrong = [
        f"{name} {list(np.shape(weights[name]))} (model {list(var.shape)})"
        for name, var in variables.items()
        if name in weights and tuple(np.shape(weights[name])) != tuple(var.shape)
    ]
    problems = []
    if wrong:
        problems.append(f"wrong shape: {_list(wrong)}")
    if strict and missing:
        problems.append(f"missing from the checkpoint: {_list(missing)}")
    if strict and unused:
        problems.append(f"not in the model: {_list(unused)}")
    if problems:
        hint = "" if wrong else " (strict=False loads what matches)"
        raise CheckpointError(f"{source} does not match the model: {'; '.join(problems)}{hint}")
    for name, var in variables.items():
        if name in weights:
            var.assign(np.asarray(weights[name], dtype=var.dtype))
    loaded = sorted(set(variables) & set(weights))
    initializers.mark_assigned(variables[name] for name in loaded)
    named = {id(var) for var in variables.values()}
    missing += [var.path for var in model.weights if id(var) not in named]
    if missing:
        logging.info("%s: left initialised: %s", source, ", ".join(missing))
    if unused:
        logging.info("%s: not used by the model: %s", source, ", ".join(unused))
    return LoadReport(loaded=loaded, left_initialised=missing, unused=unused)
