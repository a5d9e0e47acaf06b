"""`Distiller`: a student task model taught by a fine-tuned teacher, driven
with Keras's `compile` / `fit` (keras.io's knowledge-distillation example,
for the BERT task models), on packed inputs or raw text."""

import keras
import tensorflow as tf

from bert_tf import optimization
from bert_tf.errors import InputError
from bert_tf.modeling.losses import distillation_loss, keyed


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
    """

    def __init__(self, student, teacher, temperature=2.0, distillation_weight=0.5, **kwargs):
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

    def call(self, inputs, training=False):
        return self.student(inputs, training=training)

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
        `TaskModel.compile`); the loss is the distiller's own."""
        if isinstance(optimizer, str) and optimizer == "auto":
            optimizer = optimization.default_optimizer(
                learning_rate, num_train_steps, warmup_proportion
            )
        if isinstance(metrics, str) and metrics == "auto":
            metrics = self.student.default_metrics()
        super().compile(optimizer=optimizer, metrics=metrics, **kwargs)

    def teacher_outputs(self, x):
        """The teacher's outputs on the packed inputs `x`, keyed like the loss."""
        outputs = keyed(self.teacher(x, training=False))
        return {key: tf.stop_gradient(tf.cast(value, tf.float32)) for key, value in outputs.items()}

    def distillation(self, x, y_pred):
        """`D`: each output's distillation loss, weighted and added."""
        teacher, student = self.teacher_outputs(x), keyed(y_pred)
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
        distilled = self.distillation(x, y_pred)
        if y is None:
            return distilled
        weight = self.distillation_weight
        return weight * distilled + (1.0 - weight) * self.labels_loss(y, y_pred, sample_weight)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
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
        """The student's predictions."""
        return self.student.predict(x, batch_size=batch_size, **kwargs)
