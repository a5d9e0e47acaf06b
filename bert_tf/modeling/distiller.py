"""`Distiller`: a student task model taught by a fine-tuned teacher, driven
with Keras's `compile` / `fit` (keras.io's knowledge-distillation example,
for the BERT task models), on packed inputs or raw text."""

import keras
import tensorflow as tf

from bert_tf import optimization
from bert_tf.errors import InputError
from bert_tf.modeling.layer_distillation import LayerDistillation, masked_mean, parse_layer_map
from bert_tf.modeling.losses import distillation_loss, keyed

# The key of a training call's outputs under which the intermediate losses travel.
_LAYERS = "layer_distillation"


def check_same_task(student, teacher):
    """Refuses a teacher of another task or other labels than the student's
    (as the scripts refuse such a `--teacher`): another model class, number
    of labels or choices, or other label names."""
    if type(teacher) is not type(student):
        raise InputError(
            f"Distiller: the teacher is a {type(teacher).__name__}, the student a "
            f"{type(student).__name__}: they must be models of the same task"
        )
    for name in ("num_labels", "num_choices", "label_names"):
        theirs, ours = getattr(teacher, name, None), getattr(student, name, None)
        if theirs is not None and ours is not None and theirs != ours:
            raise InputError(
                f"Distiller: the teacher's {name} {theirs!r} differ from the student's {ours!r}"
            )


class Distiller(keras.Model):
    """`student` (a task model: `BertClassifier`, `BertTokenClassifier`,
    `BertSpanLabeler` ...) learns from `teacher`, a model of the same task
    and labels whose weights stay as they are. The loss is
    `distillation_weight * D + (1 - distillation_weight) * L`: `D` the
    distillation loss to the teacher's outputs (`losses.distillation_loss`
    of the student's head loss at `temperature`: per token over the
    `input_mask` for a tagger), `L` the student's own loss on the labels;
    `fit` without labels (`y=None`: text the teacher labels) trains on `D`
    alone. Raw text goes through the student's preprocessor. Save, export
    and serve `distiller.student` as any task model.

    `intermediate_weights` adds losses between the models' hidden states
    and attention (`modeling.layer_distillation`: `hidden`, `cosine`,
    `embedding`, `attention`, `value_relation`) on the `layer_map` layers,
    each weighted and averaged over the real tokens; `intermediate_only`
    trains on those alone (TinyBERT's first stage). A projection to the
    teacher's width, where the widths differ, is trained with the student
    (`distiller.projections`).

    Args:
        student: The task model to train.
        teacher: A fine-tuned model of the same class and labels; frozen.
        temperature: The softmax temperature of the distillation loss.
        distillation_weight: The weight of `D` in the loss, in [0, 1].
        intermediate_weights: `{loss name: weight}` of intermediate losses.
        layer_map: `[(student_layer, teacher_layer), ...]` (0-based) or
            "s:t,s:t"; None: every student layer to the teacher's evenly
            spaced ones, the top to the top.
        intermediate_only: Train on the intermediate losses alone.
        **kwargs: Keras model arguments (`name`).

    Raises:
        InputError: `distillation_weight` is outside [0, 1], or the teacher
            is of another class than the student, or has other numbers of
            labels or choices, or other label names, or the intermediate
            losses do not fit the models (an unknown loss, a layer past
            either model's, widths that do not divide into the heads).

    Examples:
        >>> import bert_tf
        >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
        >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
        >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
        >>> teacher = bert_tf.BertClassifier(config, label_names=["neg", "pos"])
        >>> student = bert_tf.BertClassifier(
        ...     config.replace(num_hidden_layers=1), label_names=["neg", "pos"], preprocessor=preprocessor
        ... )
        >>> distiller = bert_tf.Distiller(student, teacher, temperature=2.0)
        >>> distiller.compile(learning_rate=1e-4)
        >>> tuple(distiller(preprocessor(["the movie was good"])).shape)
        (1, 2)
        >>> layered = bert_tf.Distiller(student, teacher, intermediate_weights={"hidden": 1.0})
        >>> layered.layer_losses.layers  # (student layer, teacher layer): the top to the top
        [(0, 1)]
        >>> bert_tf.Distiller(student, bert_tf.BertClassifier(config, num_labels=3))
        Traceback (most recent call last):
        ...
        bert_tf.errors.InputError: Distiller: the teacher's num_labels 3 differ from the student's 2
    """

    def __init__(
        self,
        student,
        teacher,
        temperature=2.0,
        distillation_weight=0.5,
        intermediate_weights=None,
        layer_map=None,
        intermediate_only=False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if not 0 <= distillation_weight <= 1:
            raise InputError(f"distillation_weight must be in [0, 1], got {distillation_weight}")
        check_same_task(student, teacher)
        self.student = student
        self.teacher = teacher
        self.teacher.trainable = False
        self.distillation_weight = float(distillation_weight)
        self.label_losses = keyed(student.default_loss())
        self.loss_weights = student.default_loss_weights() or dict.fromkeys(self.label_losses, 1.0)
        self.distillation_losses = {
            key: distillation_loss(loss, temperature) for key, loss in self.label_losses.items()
        }
        if isinstance(layer_map, str):
            layer_map = parse_layer_map(
                layer_map,
                student.config.num_hidden_layers,
                teacher.config.num_hidden_layers,
                flag="layer_map",
            )
        self.layer_losses = LayerDistillation(
            student.config, teacher.config, dict(intermediate_weights or {}), layer_map
        )
        if intermediate_only and not self.layer_losses:
            raise InputError("Distiller: intermediate_only needs intermediate_weights")
        self.intermediate_only = bool(intermediate_only)
        self.layer_losses.create_variables()
        self.projections = list(self.layer_losses.projections.values())

    def call(self, inputs, training=False):
        if not (training and self.layer_losses):
            return self.student(inputs, training=training)
        outputs, states = self.student(inputs, training=True, return_states=True)
        teacher, teacher_states = self.teacher(inputs, training=False, return_states=True)
        teacher_states = tf.nest.map_structure(tf.stop_gradient, teacher_states)
        errors = self.layer_losses.errors(
            states, teacher_states, self.student.encoder, self.teacher.encoder
        )
        mask = states["input_mask"]
        return {
            "student": outputs,
            "teacher": teacher,
            _LAYERS: masked_mean(self.layer_losses.weighted_errors(errors), mask),
        }

    def compile(
        self,
        optimizer="auto",
        metrics="auto",
        *,
        learning_rate=5e-5,
        num_train_steps=None,
        warmup_proportion=0.1,
        **kwargs,
    ):
        """Keras `compile` with the task models' defaults for "auto" (see
        `TaskModel.compile`); the loss is the distiller's own.

        Args:
            optimizer: A Keras optimizer, or "auto": the original AdamW.
            metrics: Keras metrics, or "auto": the student's task's.
            learning_rate: The peak learning rate of the "auto" optimizer.
            num_train_steps: The updates the "auto" schedule spans; None keeps
                the learning rate constant after the warm-up.
            warmup_proportion: The share of `num_train_steps` spent warming up.
            **kwargs: Keras `compile` arguments (`jit_compile`, ...).

        Examples:
            >>> import bert_tf
            >>> config = bert_tf.preset("bert_tiny", vocab_size=100)
            >>> teacher = bert_tf.BertClassifier(config, num_labels=2)
            >>> student = bert_tf.BertClassifier(config.replace(num_hidden_layers=1), num_labels=2)
            >>> distiller = bert_tf.Distiller(student, teacher)
            >>> distiller.compile(learning_rate=1e-4, num_train_steps=100)
            >>> type(distiller.optimizer).__name__
            'AdamW'
        """
        if isinstance(optimizer, str) and optimizer == "auto":
            optimizer = optimization.default_optimizer(
                learning_rate, num_train_steps, warmup_proportion
            )
        if isinstance(metrics, str) and metrics == "auto":
            metrics = self.student.default_metrics()
        super().compile(optimizer=optimizer, metrics=metrics, **kwargs)

    def teacher_outputs(self, x, outputs=None):
        """The teacher's outputs on the packed inputs `x` (or `outputs`,
        already computed), keyed like the loss."""
        if outputs is None:
            outputs = self.teacher(x, training=False)
        return {
            key: tf.stop_gradient(tf.cast(value, tf.float32))
            for key, value in keyed(outputs).items()
        }

    def distillation(self, x, y_pred, teacher=None):
        """`D`: each output's distillation loss, weighted and added."""
        teacher, student = self.teacher_outputs(x, teacher), keyed(y_pred)
        total = 0.0
        for key, loss in self.distillation_losses.items():
            mask = x["input_mask"] if getattr(loss, "per_token", False) else None
            total += self.loss_weights[key] * loss(teacher[key], student[key], mask)
        return total

    def labels_loss(self, y, y_pred, sample_weight=None):
        """`L`: the student's head losses on the labels `y`, weighted and added."""
        y, y_pred = keyed(y), keyed(y_pred)
        weights = sample_weight if isinstance(sample_weight, dict) else {}
        total = 0.0
        for key, loss in self.label_losses.items():
            weight = weights.get(key, None if weights else sample_weight)
            total += self.loss_weights[key] * loss(y[key], y_pred[key], weight)
        return total

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        teacher, intermediate = None, 0.0
        if _is_layered(y_pred):
            replicas = tf.distribute.get_strategy().num_replicas_in_sync
            intermediate = y_pred[_LAYERS] * (1.0 / replicas)
            if self.intermediate_only:
                return intermediate
            teacher, y_pred = y_pred["teacher"], y_pred["student"]
        distilled = self.distillation(x, y_pred, teacher)
        if y is None:
            return distilled + intermediate
        weight = self.distillation_weight
        labels = self.labels_loss(y, y_pred, sample_weight)
        return weight * distilled + (1.0 - weight) * labels + intermediate

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        if _is_layered(y_pred):
            y_pred = y_pred["student"]
        if y is None:  # text without labels: only the loss
            return {m.name: m.result() for m in self.metrics if m.name == "loss"}
        return super().compute_metrics(x, y, y_pred, sample_weight)

    def get_metrics_result(self):
        # Text without labels leaves the label metrics unbuilt: the loss alone.
        results = {}
        for metric in self.metrics:
            if getattr(metric, "built", True):
                value = metric.result()
                results.update(value if isinstance(value, dict) else {metric.name: value})
        return results

    def fit(self, x=None, y=None, batch_size=None, *, sample_weight=None, shuffle=True, **kwargs):
        x, y, sample_weight, batch_size = self.student.text_data(
            x, y, sample_weight, batch_size, shuffle
        )
        if isinstance(x, tf.data.Dataset):
            shuffle = False
        return super().fit(
            x, y, batch_size=batch_size, sample_weight=sample_weight, shuffle=shuffle, **kwargs
        )

    def evaluate(self, x=None, y=None, batch_size=None, *, sample_weight=None, **kwargs):
        x, y, sample_weight, batch_size = self.student.text_data(
            x, y, sample_weight, batch_size, False
        )
        return super().evaluate(x, y, batch_size=batch_size, sample_weight=sample_weight, **kwargs)

    def predict(self, x, batch_size=None, **kwargs):
        """The student's predictions.

        Args:
            x: What the student's `predict` takes (raw text with its
                preprocessor, or packed inputs).
            batch_size: As Keras `predict`'s.
            **kwargs: Keras `predict` arguments (`verbose`, ...).

        Returns:
            `distiller.student.predict(x, ...)`.

        Examples:
            >>> import bert_tf
            >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good", "bad"]
            >>> preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab))
            >>> config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
            >>> teacher = bert_tf.BertClassifier(config, num_labels=2)
            >>> student = bert_tf.BertClassifier(config, num_labels=2, preprocessor=preprocessor)
            >>> bert_tf.Distiller(student, teacher).predict(["the movie was good"], verbose=0).shape
            (1, 2)
        """
        return self.student.predict(x, batch_size=batch_size, **kwargs)


def _is_layered(y_pred):
    """Whether `y_pred` is a training call's outputs with intermediate losses."""
    return isinstance(y_pred, dict) and _LAYERS in y_pred
