"""`DistillationObjective`: a task's loss on its labels mixed with the
loss to a frozen teacher's outputs (and, optionally, to its hidden states
and attention), computed in the train step."""

import tensorflow as tf

from bert_tf.modeling.losses import LabelledOnly, distillation_loss, keyed, model_loss
from bert_tf.training.loop import Objective
from bert_tf.training.objectives import HeadObjective

# The feature `DistillationObjective` adds: 1 on an example with a label.
LABELLED = "labelled"
_PREFIX = "distillation/"
_TOKENS = _PREFIX + "tokens"  # the real tokens the intermediate losses average over


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
    is distilled on (e.g. `input_mask`). `layers`: a
    `modeling.layer_distillation.LayerDistillation` whose weighted losses
    between the models' hidden states and attention are added (None or
    without weights: none); `intermediate_only`: the loss is those alone
    (TinyBERT's first stage).
    """

    def __init__(
        self,
        teacher,
        labels,
        temperature,
        weight,
        labelled=None,
        token_mask="input_mask",
        layers=None,
        intermediate_only=False,
    ):
        self.teacher = teacher
        self.layers = layers if layers else None
        self.intermediate_only = intermediate_only
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
        if self.layers is not None:
            totals[_TOKENS] = tf.reduce_sum(tf.cast(features["input_mask"], tf.float32))
        return totals

    def create_variables(self):
        return self.layers.create_variables() if self.layers is not None else {}

    def outputs(self, model, features):
        """The student's outputs; with intermediate losses, `(outputs,
        {"teacher": its outputs, "intermediate": weighted errors [batch, seq]})`."""
        if self.layers is None:
            return model(features, training=True)
        outputs, states = model(features, training=True, return_states=True)
        teacher, teacher_states = self.teacher(features, training=False, return_states=True)
        teacher_states = tf.nest.map_structure(tf.stop_gradient, teacher_states)
        errors = self.layers.errors(states, teacher_states, model.encoder, self.teacher.encoder)
        intermediate = self.layers.weighted_errors(errors)
        return outputs, {"teacher": teacher, "intermediate": intermediate}

    def teacher_outputs(self, features, outputs=None):
        """The teacher's outputs `{output: logits}` (no gradient); `outputs`:
        already computed."""
        if outputs is None:
            outputs = self.teacher(features, training=False)
        return {
            key: tf.stop_gradient(tf.cast(value, tf.float32))
            for key, value in keyed(outputs).items()
        }

    def loss(self, outputs, features, totals):
        teacher, intermediate = None, None
        if self.layers is not None:
            outputs, parts = outputs
            teacher = parts["teacher"]
            mask = tf.cast(features["input_mask"], tf.float32)
            intermediate = tf.reduce_sum(parts["intermediate"] * mask) / totals[_TOKENS]
            if self.intermediate_only:
                return {"loss": intermediate, "intermediate_loss": intermediate}
        student = keyed(outputs)
        label_totals = {k: v for k, v in totals.items() if not k.startswith(_PREFIX)}
        label_losses = self.labels.loss(outputs, self._with_labelled(features), label_totals)
        teacher = self.teacher_outputs(features, teacher)
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
        losses = {"distillation_loss": distilled, "label_loss": label_losses["loss"]}
        if intermediate is not None:
            total += intermediate
            losses["intermediate_loss"] = intermediate
        return {"loss": total, **losses}
