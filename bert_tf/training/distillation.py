"""`DistillationObjective`: a task's loss on its labels mixed with the
loss to a frozen teacher's outputs, computed in the train step."""

import tensorflow as tf

from bert_tf.modeling.losses import LabelledOnly, distillation_loss, keyed, model_loss
from bert_tf.training.loop import Objective
from bert_tf.training.objectives import HeadObjective

# The feature `DistillationObjective` adds: 1 on an example with a label.
LABELLED = "labelled"
_PREFIX = "distillation/"


class DistillationObjective(Objective):
    """`weight * distillation + (1 - weight) * labels`, each output's parts
    normalised over the global batch as `HeadObjective`'s.

    `teacher`: a Keras model of the same outputs as the student (not
    trained: its outputs are constants of the step). `labels`: the task's
    `HeadObjective`. `temperature`: the soft targets' (see
    `losses.distillation_loss`). `labelled(features)`: float32 `[batch]`, 1
    where an example has a label; its label loss then covers those alone
    (None: the task's loss already skips what is unlabelled, e.g. tags of
    -1). `token_mask`: the feature that marks the tokens a per-token output
    is distilled on (e.g. `input_mask`).
    """

    def __init__(
        self, teacher, labels, temperature, weight, labelled=None, token_mask="input_mask"
    ):
        self.teacher = teacher
        self.weight = float(weight)
        self.labelled = labelled
        self.losses = {
            key: distillation_loss(loss, temperature) for key, loss in labels.losses.items()
        }
        self.sample_weights = {
            key: token_mask for key, loss in self.losses.items() if getattr(loss, "per_token", 0)
        }
        self.loss_weights = labels.loss_weights
        if labelled is not None:
            labels = HeadObjective(
                {key: LabelledOnly(loss) for key, loss in labels.losses.items()},
                labels.labels,
                {key: LABELLED for key in labels.losses},
                labels.loss_weights,
            )
        self.labels = labels

    def _with_labelled(self, features):
        if self.labelled is None:
            return features
        return {**features, LABELLED: self.labelled(features)}

    def _weights(self, features):
        return {key: features[name] for key, name in self.sample_weights.items()}

    def totals(self, features):
        totals = dict(self.labels.totals(self._with_labelled(features)))
        weights = self._weights(features)
        for key, loss in self.losses.items():
            counts = loss.counts(features["input_word_ids"], weights.get(key))
            totals[_PREFIX + key] = tf.reduce_sum(counts)
        return totals

    def teacher_outputs(self, features):
        """The teacher's outputs `{output: logits}` (no gradient)."""
        outputs = keyed(self.teacher(features, training=False))
        return {key: tf.stop_gradient(tf.cast(value, tf.float32)) for key, value in outputs.items()}

    def loss(self, outputs, features, totals):
        student = keyed(outputs)
        label_totals = {k: v for k, v in totals.items() if not k.startswith(_PREFIX)}
        label_losses = self.labels.loss(outputs, self._with_labelled(features), label_totals)
        teacher = self.teacher_outputs(features)
        counts = {key: totals[_PREFIX + key] for key in self.losses}
        distilled = model_loss(
            self.losses,
            {key: teacher[key] for key in self.losses},
            student,
            self._weights(features),
            counts,
            self.loss_weights,
        )["loss"]
        total = self.weight * distilled + (1.0 - self.weight) * label_losses["loss"]
        return {"loss": total, "distillation_loss": distilled, "label_loss": label_losses["loss"]}
