"""Task distillation on the fine-tuning skeleton (`DistillationOptions`).

`Distilling` goes before a task's runner class (`class X(Distilling,
ClassifierRunner)`): the model the run trains, checkpoints, evaluates and
exports is the student; the teacher, a fine-tuned model of the same task,
labels and vocabulary, is loaded frozen beside it and gives its outputs in
each train step (`training.distillation.DistillationObjective`). The student
is the run's model (`--bert_config_file` / `--init_checkpoint`) or, with
`--student_num_layers`, the teacher cut to fewer layers and started from
them (DistilBERT's initialisation).
"""

import dataclasses
import json
import os
import re

from absl import logging

from bert_tf import checkpoints, files
from bert_tf.config import BertConfig, checkpoint_folder, config_file_beside
from bert_tf.errors import CheckpointError, InputError
from bert_tf.tasks.fine_tuning import epoch_schedule
from bert_tf.tasks.model_setup import check_model_fits, config_file_of
from bert_tf.text.model_text import same_vocab, vocab_file_beside
from bert_tf.training.distillation import DistillationObjective

# The train features of a fine-tuning run (every task's name for them), whose
# fingerprint says the teacher's labels and vocab.
TRAIN_FEATURES = "train.tf_record"
_LAYER = re.compile(r"^bert/encoder/layer_(\d+)/")


def chosen_layers(teacher_layers, student_layers):
    """The teacher's layer each student layer starts from: evenly spaced,
    the top one always (12 -> 6: 1, 3, 5, 7, 9, 11; 6 -> 3: 1, 3, 5)."""
    return [(i + 1) * teacher_layers // student_layers - 1 for i in range(student_layers)]


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


def distilling(options):
    """Whether the options ask for distillation (`--teacher`); the flags
    that only distillation reads are an InputError without it."""
    d = options.distillation
    if d.teacher is None:
        for name in ("teacher_config_file", "student_num_layers", "unlabeled_file"):
            if getattr(d, name) is not None:
                raise InputError(f"--{name} is for distillation: add --teacher")
    return d.teacher is not None


class Distilling:
    """Distillation hooks of a `FineTuningRunner` (listed before it in the
    bases). A task sets `labelled(features)` (float32 `[batch]`, 1 on an
    example with a label) when its unlabelled examples need masking."""

    labelled = None

    def __init__(self, options):
        super().__init__(options)
        self.teacher = None
        self.teacher_config = None
        self.unlabeled_file = None  # its FeatureFile, with do_train

    def unlabeled_features(self, paths):
        """The `FeatureFile` of the unlabelled text files `paths`, records of
        the train set's schema without labels."""
        raise InputError("--unlabeled_file: this task reads no unlabelled text")

    def validate(self):
        super().validate()
        check_distillation_options(self.options)

    def _teacher_config_file(self):
        d = self.options.distillation
        path = d.teacher_config_file or config_file_beside(d.teacher)
        if path:
            return path
        if d.student_num_layers:
            return config_file_of(self.options)
        raise InputError(
            f"--teacher_config_file is needed: --teacher={d.teacher} has no config beside it"
        )

    def model_config(self):
        d = self.options.distillation
        self.teacher_config = BertConfig.from_json_file(self._teacher_config_file())
        if d.student_num_layers is None:
            config = super().model_config()
        else:
            if d.student_num_layers > self.teacher_config.num_hidden_layers:
                raise InputError(
                    f"--student_num_layers={d.student_num_layers}: the teacher has only "
                    f"{self.teacher_config.num_hidden_layers} layers"
                )
            config = dataclasses.replace(
                self.teacher_config, num_hidden_layers=d.student_num_layers
            )
            check_model_fits(self.options, config, f"--teacher={d.teacher}'s config")
        self._check_vocab(config)
        return config

    def _check_vocab(self, config):
        d, vocab_file = self.options.distillation, self.options.model.vocab_file
        teacher_vocab = vocab_file_beside(d.teacher) or self.teacher_vocab_file()
        if config.vocab_size != self.teacher_config.vocab_size or (
            teacher_vocab and vocab_file and not same_vocab(teacher_vocab, vocab_file)
        ):
            raise InputError(
                f"--vocab_file {vocab_file}: the student's vocabulary differs from "
                f"--teacher={d.teacher}'s ({teacher_vocab or 'its config'}); the student "
                "learns from the teacher's outputs on the same tokens"
            )

    def fingerprint_labels(self):
        """The task's labels as its train features' fingerprint lists them
        (None: the task has none)."""
        return None

    def _teacher_fingerprint(self):
        """The fingerprint of the teacher run's train features (None: not a run folder)."""
        folder = checkpoint_folder(self.options.distillation.teacher)
        path = os.path.join(folder, TRAIN_FEATURES + ".json")
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f).get("fingerprint")

    def teacher_vocab_file(self):
        """The vocab the teacher was fine-tuned with where its run says it (None: unknown)."""
        fingerprint = self._teacher_fingerprint() or {}
        stamp = fingerprint.get("vocab_file") or fingerprint.get("vocab") or [None]
        return stamp[0] if stamp[0] and os.path.exists(stamp[0]) else None

    def read_inputs(self):
        super().read_inputs()
        fingerprint, labels = self._teacher_fingerprint(), self.fingerprint_labels()
        if fingerprint and labels is not None and fingerprint.get("labels") != labels:
            raise InputError(
                f"--teacher={self.options.distillation.teacher} was trained on the labels "
                f"{fingerprint.get('labels')}, not {labels}"
            )

    def build_model(self, config):
        d = self.options.distillation
        teacher = super().build_model(self.teacher_config)
        try:
            checkpoints.load_checkpoint(teacher, d.teacher)
        except CheckpointError as e:
            raise InputError(
                f"--teacher={d.teacher} is not a model of this task and labels: {e}"
            ) from None
        teacher.trainable = False
        self.teacher = teacher
        logging.info("teacher %s: %d layers", d.teacher, self.teacher_config.num_hidden_layers)
        return super().build_model(config)

    def objective(self):
        d = self.options.distillation
        return DistillationObjective(
            self.teacher, super().objective(), d.temperature, d.distillation_weight, self.labelled
        )

    def initial_weights(self, model):
        d = self.options.distillation
        if d.student_num_layers is None:
            return super().initial_weights(model)
        layers = chosen_layers(self.teacher_config.num_hidden_layers, d.student_num_layers)

        def start_from_teacher():
            weights = student_weights(checkpoints.read_weights(d.teacher), layers)
            checkpoints.load_weights(model, weights, source=d.teacher)
            logging.info("student: the teacher's layers %s", layers)

        return start_from_teacher

    def prepare(self, config):
        super().prepare(config)
        paths = [p.strip() for p in (self.options.distillation.unlabeled_file or "").split(",")]
        if any(paths) and self.options.run.do_train:
            self.unlabeled_file = self.unlabeled_features([p for p in paths if p])

    def _train_files(self):
        return [self.train_file, *([self.unlabeled_file] if self.unlabeled_file else [])]

    def train_schedule(self):
        if self.unlabeled_file is None:
            return super().train_schedule()
        size = sum(getattr(f, self.epoch_of) for f in self._train_files())
        schedule = epoch_schedule(size, self.options)
        logging.info(
            "training on %d labelled and %d unlabelled %s for %d steps",
            getattr(self.train_file, self.epoch_of),
            getattr(self.unlabeled_file, self.epoch_of),
            self.epoch_of.removeprefix("num_"),
            schedule[0],
        )
        return schedule

    def train_dataset_fn(self):
        """Batches of the train set and the unlabelled text, shuffled together."""
        paths = [f.path for f in self._train_files()]
        self.feature_paths.extend(p for p in paths if p not in self.feature_paths)
        return self.dataset_fn(
            self.make_dataset,
            paths,
            self.options.training.train_batch_size,
            True,
            **self.dataset_arguments(),
        )
