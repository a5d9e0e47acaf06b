"""Task distillation on the fine-tuning skeleton (`DistillationOptions`).

A run with `--teacher` has a `Teacher` (`runner.teacher`), a part that the
run skeleton asks at its steps (`tasks.run`, `fine_tuning.FineTuningRunner`):
the student's config, the teacher's label check, the unlabelled text, the
teacher model, the objective, the student's first weights. The model the run
trains, checkpoints, evaluates and exports is the student; the teacher, a
fine-tuned model of the same task, labels and vocabulary, is loaded frozen
beside it and gives its outputs in each train step
(`training.distillation.DistillationObjective`). The student is the run's
model (`--bert_config_file` / `--init_checkpoint`) or, with
`--student_num_layers`, the teacher cut to fewer layers and started from
them (DistilBERT's initialisation).

What a task adds for it (all optional, on its runner): `labelled(features)`
(float32 `[batch]`, 1 on an example with a label) when its unlabelled
examples need masking, `fingerprint_labels()` (its labels as its train
features' fingerprint lists them) and `unlabeled_features(paths)` (records
of the train set's schema from unlabelled text).
"""

import dataclasses
import json
import os
import re

from absl import logging

from bert_tf import checkpoints, files
from bert_tf.config import BertConfig, checkpoint_folder, config_file_beside
from bert_tf.errors import CheckpointError, InputError
from bert_tf.modeling.layer_distillation import (
    LOSSES,
    LayerDistillation,
    chosen_layers,
    parse_layer_map,
)
from bert_tf.tasks.model_setup import check_model_fits, config_file_of
from bert_tf.text.model_text import same_vocab, vocab_file_beside
from bert_tf.training.distillation import DistillationObjective

# The train features of a fine-tuning run (every task's name for them), whose
# fingerprint says the teacher's labels and vocab.
TRAIN_FEATURES = "train.tf_record"
_LAYER = re.compile(r"^bert/encoder/layer_(\d+)/")


def student_weights(weights, layers):
    """The teacher's `{tf1_name: ndarray}` for a student of `layers`
    (`chosen_layers`): student layer i gets teacher layer `layers[i]`,
    everything outside the layers (embeddings, pooler, head) as it is."""
    source = {teacher: student for student, teacher in enumerate(layers)}
    chosen = {}
    for name, value in weights.items():
        match = _LAYER.match(name)
        if match is None:
            chosen[name] = value
        elif int(match.group(1)) in source:
            rest = name[match.end() :]
            chosen[f"bert/encoder/layer_{source[int(match.group(1))]}/{rest}"] = value
    return chosen


def check_distillation_options(options):
    """InputError for a bad flag of `DistillationOptions`, before any work."""
    d = options.distillation
    if d.student_num_layers is not None and options.model.init_checkpoint:
        raise InputError(
            "--student_num_layers starts the student from the teacher's layers: "
            "leave out --init_checkpoint"
        )
    if d.teacher_config_file and not files.exists(d.teacher_config_file):
        raise InputError(f"--teacher_config_file: no such file {d.teacher_config_file!r}")
    for path in (d.unlabeled_file or "").split(","):
        if path.strip() and not files.exists(path.strip()):
            raise InputError(f"--unlabeled_file: no such file {path.strip()!r}")
    try:
        checkpoints.resolve_checkpoint_prefix(d.teacher)
    except CheckpointError as e:
        raise InputError(f"--teacher: {e}") from None
    if not options.run.do_train:
        logging.info("--teacher without --do_train: only the student is used")


def teacher_of(options):
    """The run's `Teacher`, or None without `--teacher` (or without the
    distillation flags); the flags that only distillation reads are an
    InputError without `--teacher`."""
    d = getattr(options, "distillation", None)
    if d is None:
        return None
    if d.teacher is None:
        for field in dataclasses.fields(d):
            if field.name != "teacher" and getattr(d, field.name) != field.default:
                raise InputError(f"--{field.name} is for distillation: add --teacher")
        return None
    return Teacher(options)


class Teacher:
    """The teacher of a distilled run and what it decides (see the module
    docstring); `options` are the run's (with a `distillation` group)."""

    def __init__(self, options):
        self.options = options
        self.flags = options.distillation
        self.config = None  # its BertConfig, from `student_config`
        self.layers = None  # the intermediate losses, from `student_config`
        self.model = None  # from `build`

    def validate(self):
        check_distillation_options(self.options)

    def student_config(self, runner):
        """The student's `BertConfig`: the run's (`runner.model_config()`),
        or the teacher's cut to `--student_num_layers`; its vocabulary must
        be the teacher's."""
        d = self.flags
        self.config = BertConfig.from_json_file(self._config_file())
        if d.student_num_layers is None:
            config = runner.model_config()
        else:
            if d.student_num_layers > self.config.num_hidden_layers:
                raise InputError(
                    f"--student_num_layers={d.student_num_layers}: the teacher has only "
                    f"{self.config.num_hidden_layers} layers"
                )
            config = dataclasses.replace(self.config, num_hidden_layers=d.student_num_layers)
            check_model_fits(self.options, config, f"--teacher={d.teacher}'s config")
        self._check_vocab(config)
        self.layers = self._layer_distillation(config)
        return config

    def _layer_distillation(self, student_config):
        d = self.flags
        weights = {name: getattr(d, f"{name}_distillation_weight") for name in LOSSES}
        layers = parse_layer_map(
            d.layer_map, student_config.num_hidden_layers, self.config.num_hidden_layers
        )
        if d.intermediate_only and not any(weights.values()):
            raise InputError(
                "--intermediate_only: add a weight of an intermediate loss "
                "(--hidden_distillation_weight, --attention_distillation_weight, ...)"
            )
        if d.layer_map and not any(weights.values()):
            raise InputError("--layer_map: add a weight of an intermediate loss")
        return LayerDistillation(student_config, self.config, weights, layers)

    def _config_file(self):
        d = self.flags
        path = d.teacher_config_file or config_file_beside(d.teacher)
        if path:
            return path
        if d.student_num_layers:
            return config_file_of(self.options)
        raise InputError(
            f"--teacher_config_file is needed: --teacher={d.teacher} has no config beside it"
        )

    def _check_vocab(self, config):
        teacher, vocab_file = self.flags.teacher, self.options.model.vocab_file
        teacher_vocab = vocab_file_beside(teacher) or self._vocab_file_of_its_run()
        if config.vocab_size != self.config.vocab_size or (
            teacher_vocab and vocab_file and not same_vocab(teacher_vocab, vocab_file)
        ):
            raise InputError(
                f"--vocab_file {vocab_file}: the student's vocabulary differs from "
                f"--teacher={teacher}'s ({teacher_vocab or 'its config'}); the student "
                "learns from the teacher's outputs on the same tokens"
            )

    def _fingerprint(self):
        """The fingerprint of the teacher run's train features (None: not a run folder)."""
        folder = checkpoint_folder(self.flags.teacher)
        path = os.path.join(folder, TRAIN_FEATURES + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f).get("fingerprint")

    def _vocab_file_of_its_run(self):
        """The vocab the teacher was fine-tuned with where its run says it (None: unknown)."""
        fingerprint = self._fingerprint() or {}
        # "vocab": how the tagging features of earlier versions named it.
        stamp = fingerprint.get("vocab_file") or fingerprint.get("vocab") or [None]
        return stamp[0] if stamp[0] and os.path.exists(stamp[0]) else None

    def check_labels(self, labels):
        """InputError unless the teacher's run trained on `labels` (the
        task's `fingerprint_labels()`; None: the task has none to check)."""
        fingerprint = self._fingerprint()
        if fingerprint and labels is not None and fingerprint.get("labels") != labels:
            raise InputError(
                f"--teacher={self.flags.teacher} was trained on the labels "
                f"{fingerprint.get('labels')}, not {labels}"
            )

    def unlabeled_file(self, runner):
        """The `FeatureFile` of `--unlabeled_file` (`runner.unlabeled_features`),
        or None without it."""
        paths = [p.strip() for p in (self.flags.unlabeled_file or "").split(",")]
        paths = [p for p in paths if p]
        return runner.unlabeled_features(paths) if paths else None

    def build(self, runner):
        """The teacher model (`runner.build_model` of the teacher's config)
        with its weights, frozen; called in the strategy's scope."""
        teacher = self.flags.teacher
        model = runner.build_model(self.config)
        try:
            checkpoints.load_checkpoint(model, teacher)
        except CheckpointError as e:
            raise InputError(
                f"--teacher={teacher} is not a model of this task and labels: {e}"
            ) from None
        model.trainable = False
        self.model = model
        logging.info("teacher %s: %d layers", teacher, self.config.num_hidden_layers)
        return model

    def objective(self, task_objective, labelled=None):
        """The task's objective mixed with the loss to the teacher's outputs."""
        d = self.flags
        return DistillationObjective(
            self.model,
            task_objective,
            d.temperature,
            d.distillation_weight,
            labelled,
            layers=self.layers,
            intermediate_only=d.intermediate_only,
        )

    def initial_weights(self, model):
        """With `--student_num_layers`: training's `init_fn` that starts
        `model` from the teacher's chosen layers; else None."""
        d = self.flags
        if d.student_num_layers is None:
            return None
        layers = chosen_layers(self.config.num_hidden_layers, d.student_num_layers)

        def start_from_teacher():
            weights = student_weights(checkpoints.read_weights(d.teacher), layers)
            checkpoints.load_weights(model, weights, source=d.teacher)
            logging.info("student: the teacher's layers %s", layers)

        return start_from_teacher
