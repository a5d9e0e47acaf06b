"""Intermediate-layer distillation: losses between a student's and its
teacher's hidden states and self-attention on mapped layers.

- `hidden`: mean squared error of the hidden states (TinyBERT), through a
  learned projection when the widths differ;
- `cosine`: 1 - cosine of the hidden states, token by token (DistilBERT);
- `embedding`: mean squared error of the embedding outputs (TinyBERT);
- `attention`: KL divergence from the teacher's self-attention
  distributions to the student's (MiniLM);
- `value_relation`: KL divergence of the value-value relations,
  softmax(V V^T / sqrt(d)) (MiniLM).

The attention losses compare `heads` relation heads: the queries, keys or
values of a layer (its whole width) split into that many parts, as MiniLMv2
does, so that a student with other widths or heads than the teacher's can
learn them; with the student's head count and a teacher of the same heads
they are the layers' own attention distributions. Each loss is per real
token (`[batch, seq]` errors, zero on padding), averaged over the mapped
layers; callers sum them over the tokens and divide by the token count.
"""

import keras
import tensorflow as tf

from bert_tf.errors import InputError
from bert_tf.initializers import TruncatedNormal
from bert_tf.modeling.layers import MASK_ADDER

LOSSES = ("hidden", "cosine", "embedding", "attention", "value_relation")
# Losses on hidden states, compared through a projection when the widths differ.
_PROJECTED = {"hidden": "hidden_projection", "cosine": "hidden_projection"}
_PROJECTED_EMBEDDINGS = "embedding_projection"
# The checkpoint names of the projections (they are trained with the student).
VARIABLE_SCOPE = "distillation/"


def chosen_layers(teacher_layers, student_layers):
    """The teacher's layer each student layer corresponds to: evenly spaced,
    the top one always (12 -> 6: 1, 3, 5, 7, 9, 11; 6 -> 3: 1, 3, 5)."""
    return [(i + 1) * teacher_layers // student_layers - 1 for i in range(student_layers)]


def parse_layer_map(text, student_layers, teacher_layers, flag="--layer_map"):
    """`[(student_layer, teacher_layer), ...]` (0-based) from "s:t,s:t"; None
    or "" maps every student layer to `chosen_layers`. InputError (naming
    `flag`) on a malformed pair or a map `check_layer_map` refuses."""
    if not text:
        return list(enumerate(chosen_layers(teacher_layers, student_layers)))
    pairs = []
    for part in text.split(","):
        student, _, teacher = part.strip().partition(":")
        if not (student.strip().isdigit() and teacher.strip().isdigit()):
            raise InputError(
                f"{flag}={text}: expected student:teacher layer pairs, 0-based, e.g. 0:1,1:3,2:5"
            )
        pairs.append((int(student), int(teacher)))
    return check_layer_map(pairs, student_layers, teacher_layers, f"{flag}={text}")


def check_layer_map(pairs, student_layers, teacher_layers, what="layer_map"):
    """`pairs` as a list, or InputError (naming `what`) on a layer past
    either model's or a student layer mapped twice."""
    pairs = [(int(student), int(teacher)) for student, teacher in pairs]
    if not pairs:
        raise InputError(f"{what}: no layers mapped")
    for student, teacher in pairs:
        if not (0 <= student < student_layers and 0 <= teacher < teacher_layers):
            raise InputError(
                f"{what}: {student}:{teacher} does not fit a student of "
                f"{student_layers} layers and a teacher of {teacher_layers} (0-based)"
            )
    students = [student for student, _ in pairs]
    if len(set(students)) != len(students):
        raise InputError(f"{what}: a student layer is mapped twice")
    return pairs


def masked_mean(errors, mask):
    """`sum(errors * mask) / sum(mask)` over `[batch, seq]` (0 without tokens)."""
    mask = tf.cast(mask, tf.float32)
    return tf.math.divide_no_nan(tf.reduce_sum(errors * mask), tf.reduce_sum(mask))


def squared_errors(student, teacher):
    """Mean over the width of the squared difference, `[batch, seq]`."""
    return tf.reduce_mean(tf.square(_f32(student) - _f32(teacher)), axis=-1)


def cosine_errors(student, teacher):
    """1 - cosine of each token's vectors, `[batch, seq]`."""
    student, teacher = tf.nn.l2_normalize(_f32(student), -1), tf.nn.l2_normalize(_f32(teacher), -1)
    return 1.0 - tf.reduce_sum(student * teacher, axis=-1)


def relation_log_probs(left, right, heads, mask):
    """Log-softmax over the keys of `left_h right_h^T / sqrt(d)` for each of
    `heads` equal parts of the width, padded keys masked as the encoder masks
    them: float32 `[batch, heads, seq, seq]`."""
    left, right = _split(_f32(left), heads), _split(_f32(right), heads)
    scores = tf.einsum("bhqd,bhkd->bhqk", left, right) / tf.sqrt(float(left.shape[-1]))
    adder = (1.0 - tf.cast(mask, tf.float32)[:, None, None, :]) * MASK_ADDER
    return tf.nn.log_softmax(scores + adder, axis=-1)


def relation_kl(teacher_log_probs, student_log_probs):
    """KL(teacher || student) over the keys, averaged over the heads: `[batch, seq]`."""
    kl = tf.reduce_sum(tf.exp(teacher_log_probs) * (teacher_log_probs - student_log_probs), axis=-1)
    return tf.reduce_mean(kl, axis=1)


def _split(x, heads):
    batch, seq, width = tf.shape(x)[0], tf.shape(x)[1], x.shape[-1]
    return tf.transpose(tf.reshape(x, [batch, seq, heads, width // heads]), [0, 2, 1, 3])


def _f32(x):
    return tf.cast(x, tf.float32)


class LayerDistillation:
    """The intermediate losses of a student and a teacher (see the module
    docstring), weighted: `loss = sum(weights[k] * loss_k)`.

    Args:
        student_config: The student's `BertConfig`.
        teacher_config: The teacher's.
        weights: `{loss name: weight}` over `LOSSES`; 0 or absent leaves a
            loss out.
        layers: `[(student_layer, teacher_layer), ...]` (0-based) for the
            layer losses; None: `parse_layer_map`'s default.
        heads: Relation heads of `attention` / `value_relation`; None: the
            student's head count. Both widths must divide by it.

    Raises:
        InputError: an unknown loss, a negative weight, layers that do not
            fit, or widths that do not divide into the relation heads.
    """

    def __init__(self, student_config, teacher_config, weights, layers=None, heads=None):
        unknown = sorted(set(weights) - set(LOSSES))
        if unknown:
            raise InputError(f"unknown intermediate losses {unknown}; expected some of {LOSSES}")
        for name, weight in weights.items():
            if not weight >= 0:
                raise InputError(f"the {name} distillation weight must be >= 0, got {weight}")
        self.weights = {name: float(w) for name, w in weights.items() if w > 0}
        self.student_width = student_config.hidden_size
        self.teacher_width = teacher_config.hidden_size
        s_layers, t_layers = student_config.num_hidden_layers, teacher_config.num_hidden_layers
        if layers is None:
            self.layers = parse_layer_map(None, s_layers, t_layers)
        else:
            self.layers = check_layer_map(layers, s_layers, t_layers, f"layer_map={layers}")
        self.heads = heads or student_config.num_attention_heads
        if {"attention", "value_relation"} & set(self.weights):
            for who, width in (("student", self.student_width), ("teacher", self.teacher_width)):
                if width % self.heads:
                    raise InputError(
                        f"attention distillation: the {who}'s hidden size {width} does not "
                        f"divide into {self.heads} relation heads"
                    )
        self.initializer_range = student_config.initializer_range
        self.projections = {}

    def __bool__(self):
        return bool(self.weights)

    def projection_names(self):
        """The projections the losses need: none where the widths are equal."""
        if self.student_width == self.teacher_width:
            return []
        names = {_PROJECTED[name] for name in self.weights if name in _PROJECTED}
        if "embedding" in self.weights:
            names.add(_PROJECTED_EMBEDDINGS)
        return sorted(names)

    def create_variables(self):
        """Makes the projections (call in the strategy's scope); returns
        `{checkpoint name: variable}` of them, trained with the student."""
        variables = {}
        for name in self.projection_names():
            layer = keras.layers.Dense(
                self.teacher_width,
                kernel_initializer=TruncatedNormal(stddev=self.initializer_range),
                name=name,
                dtype="float32",
            )
            layer.build((None, None, self.student_width))
            self.projections[name] = layer
            variables[f"{VARIABLE_SCOPE}{name}/kernel"] = layer.kernel
            variables[f"{VARIABLE_SCOPE}{name}/bias"] = layer.bias
        return variables

    def _projected(self, name, hidden):
        layer = self.projections.get(name)
        return _f32(hidden) if layer is None else layer(_f32(hidden))

    def errors(self, student, teacher, student_encoder, teacher_encoder):
        """`{loss name: float32 [batch, seq]}` of each weighted loss.

        `student` / `teacher`: the models' states (`return_states=True`):
        `hidden_states` (the embedding output, then every layer's) and
        `input_mask`. The encoders give the layers' query, key and value
        projections for the attention losses."""
        mask = student["input_mask"]
        s_states, t_states = student["hidden_states"], teacher["hidden_states"]
        errors = {}
        if "embedding" in self.weights:
            errors["embedding"] = squared_errors(
                self._projected(_PROJECTED_EMBEDDINGS, s_states[0]), t_states[0]
            )
        for name in ("hidden", "cosine"):
            if name in self.weights:
                compare = squared_errors if name == "hidden" else cosine_errors
                errors[name] = _mean(
                    compare(self._projected(_PROJECTED[name], s_states[s + 1]), t_states[t + 1])
                    for s, t in self.layers
                )
        for name, parts in (("attention", ("query", "key")), ("value_relation", ("value",) * 2)):
            if name in self.weights:
                errors[name] = _mean(
                    relation_kl(
                        self._relations(teacher_encoder, t, t_states, parts, mask),
                        self._relations(student_encoder, s, s_states, parts, mask),
                    )
                    for s, t in self.layers
                )
        return errors

    def _relations(self, encoder, layer, states, parts, mask):
        attention = encoder.transformer_layers[layer].attention
        left, right = (getattr(attention, part)(states[layer]) for part in parts)
        return relation_log_probs(left, right, self.heads, mask)

    def weighted_errors(self, errors):
        """`sum(weights[k] * errors[k])`, `[batch, seq]`."""
        return tf.add_n([self.weights[name] * value for name, value in errors.items()])


def _mean(values):
    values = list(values)
    return tf.add_n(values) / float(len(values))
