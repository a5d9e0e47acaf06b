"""Optimizers and learning-rate schedule of the original BERT, on Keras 3.

`create_optimizer` builds one of three optimizers, all driven by
`WarmupLinearDecay`:

* ``bert_adam``: the original ``AdamWeightDecayOptimizer`` (`BertAdam`):
  Adam without bias correction, weight decay added to the update.
* ``adamw``: Keras's AdamW (`AdamW`): bias-corrected Adam, decoupled decay.
* ``lamb``: LAMB (`Lamb`): bias-corrected Adam direction plus weight decay,
  scaled per variable by the trust ratio ||param|| / ||update||.

Common behaviour:

* Weight decay (and LAMB's trust ratio) is skipped for variables whose
  ``path`` matches any regex in ``weight_decay_exclusions`` (default:
  ``LayerNorm``, ``layer_norm``, ``bias``), as the original's
  ``exclude_from_weight_decay``.
* Gradients are clipped by global norm (``global_clipnorm``, 1.0 as the
  original) after they are summed over replicas, so the norm is that of the
  whole gradient as on one device. Sparse (``tf.IndexedSlices``) gradients
  are densified first (the original on GPU summed the squares of the slices
  without adding up repeated rows).
* Gradient accumulation is the Trainer's (`training.loop`): it averages the
  micro-batches' gradients and calls ``apply`` once per update, so
  ``optimizer.iterations``, ``num_train_steps`` and ``num_warmup_steps`` count
  updates.

Keras has no public hook for "clip after the cross-replica sum", no slot
lookup and no query of its weight-decay exclusions: those come from
`compat.KerasOptimizerHooks`, where the private Keras names live.
"""

import re

import keras
import tensorflow as tf
from keras import ops

from bert_tf.compat import KerasOptimizerHooks
from bert_tf.errors import InputError

DEFAULT_WEIGHT_DECAY_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias")


@keras.saving.register_keras_serializable(package="bert_tf")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """The original BERT schedule: linear warm-up from 0, linear decay to 0.

    ``lr(step) = init_lr * step / num_warmup_steps`` while
    ``step < num_warmup_steps``, else
    ``init_lr * (1 - min(step, num_train_steps) / num_train_steps)``
    (the decay is not offset by the warm-up, as in the original).
    """

    def __init__(self, init_lr, num_train_steps, num_warmup_steps=0):
        if num_train_steps <= 0:
            raise InputError(f"num_train_steps must be positive, got {num_train_steps}")
        if num_warmup_steps < 0:
            raise InputError(f"num_warmup_steps must be >= 0, got {num_warmup_steps}")
        self.init_lr = float(init_lr)
        self.num_train_steps = int(num_train_steps)
        self.num_warmup_steps = int(num_warmup_steps)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        done = ops.minimum(step, self.num_train_steps) / self.num_train_steps
        decayed = self.init_lr * (1.0 - done)
        if not self.num_warmup_steps:
            return decayed
        warmup = self.init_lr * step / self.num_warmup_steps
        return ops.where(step < self.num_warmup_steps, warmup, decayed)

    def get_config(self):
        return {
            "init_lr": self.init_lr,
            "num_train_steps": self.num_train_steps,
            "num_warmup_steps": self.num_warmup_steps,
        }


def _is_excluded(variable, patterns):
    path = getattr(variable, "path", variable.name)
    return any(re.search(pattern, path) for pattern in patterns)


class _BertOptimizerMixin(KerasOptimizerHooks):
    """What the three optimizers add to Keras's optimizer machinery.

    * Weight-decay exclusions matched on ``variable.path`` (Keras matches its
      own patterns on the short name, "gamma" or "kernel"), resolved into a
      variable list when the optimizer is built.
    * ``global_clipnorm`` applied to the gradients summed over replicas, after
      densifying sparse ones (``clipnorm`` and ``clipvalue`` stay Keras's,
      applied to each replica's share).
    * Weight decay applied by each optimizer's `update_step`, not by Keras.
    """

    def __init__(self, global_clipnorm=None, **kwargs):
        super().__init__(**kwargs)
        # Not passed to Keras, which would clip each replica's share before the
        # sum: `summed_gradients` clips the sum.
        self.summed_clipnorm = global_clipnorm

    def build(self, var_list):
        if not self.built:
            excluded = [v for v in var_list if _is_excluded(v, self.weight_decay_exclusions)]
            self.exclude_from_weight_decay(var_list=excluded)
        super().build(var_list)

    def gradients_to_sum(self, grads_and_vars):
        # Densified before the sum: embedding gradients arrive as
        # tf.IndexedSlices, whose repeated rows would count separately in the
        # norm and in Adam's moments.
        return [
            (tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g, v)
            for g, v in grads_and_vars
        ]

    def summed_gradients(self, grads_and_vars):
        # Clipped after the sum, so the norm is the whole gradient's, as on one device.
        if not self.summed_clipnorm:
            return grads_and_vars
        grads, variables = zip(*grads_and_vars)
        grads, _ = tf.clip_by_global_norm(grads, self.summed_clipnorm)
        return list(zip(grads, variables))

    def get_config(self):
        config = super().get_config()
        config["weight_decay_exclusions"] = list(self.weight_decay_exclusions)
        config["global_clipnorm"] = self.summed_clipnorm
        return config


class _DecayInUpdateOptimizer(_BertOptimizerMixin, keras.optimizers.Optimizer):
    """Adam moments, with ``weight_decay * param`` added to the update itself.

    Arguments as `keras.optimizers.AdamW`, plus ``weight_decay_exclusions``:
    regexes; variables whose ``path`` matches one are not decayed.
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        weight_decay_exclusions=DEFAULT_WEIGHT_DECAY_EXCLUSIONS,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, weight_decay=weight_decay, **kwargs)
        self.beta_1 = beta_1
        self.beta_2 = beta_2
        self.epsilon = epsilon
        self.weight_decay_exclusions = tuple(weight_decay_exclusions)

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        # The names of Keras's Adam slots, which `adam_slots` reads.
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"]
        )

    def _update_moments(self, gradient, variable):
        """Updates and returns the first and second moments of `variable`."""
        gradient = ops.cast(gradient, variable.dtype)
        momentum, velocity = self.adam_slots(variable)
        m = self.beta_1 * momentum + (1.0 - self.beta_1) * gradient
        v = self.beta_2 * velocity + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(momentum, m)
        self.assign(velocity, v)
        return m, v

    def _add_weight_decay(self, update, variable):
        if self.weight_decay and self.decays(variable):
            return update + self.weight_decay * variable
        return update

    def get_config(self):
        config = super().get_config()
        config.update({"beta_1": self.beta_1, "beta_2": self.beta_2, "epsilon": self.epsilon})
        return config


@keras.saving.register_keras_serializable(package="bert_tf")
class BertAdam(_DecayInUpdateOptimizer):
    """The original BERT ``AdamWeightDecayOptimizer`` (no bias correction).

    ``m = b1*m + (1-b1)*g``; ``v = b2*v + (1-b2)*g^2``;
    ``update = m / (sqrt(v) + epsilon)`` plus ``weight_decay * param`` unless
    the variable is excluded; ``param -= lr * update``.
    """

    def update_step(self, gradient, variable, learning_rate):
        m, v = self._update_moments(gradient, variable)
        update = self._add_weight_decay(m / (ops.sqrt(v) + self.epsilon), variable)
        self.assign_sub(variable, ops.cast(learning_rate, variable.dtype) * update)


@keras.saving.register_keras_serializable(package="bert_tf")
class Lamb(_DecayInUpdateOptimizer):
    """LAMB (You et al. 2019) with decay exclusions, as Model Garden's LAMB.

    With step ``t`` (1-based): ``r = m_hat / (sqrt(v_hat) + epsilon)`` plus
    ``weight_decay * param`` unless excluded, where ``m_hat = m / (1 - b1^t)``
    and ``v_hat = v / (1 - b2^t)``. Non-excluded variables scale ``r`` by the
    trust ratio ``||param|| / ||r||`` (1 if either norm is 0); excluded ones
    (LayerNorm, bias) get neither decay nor the trust ratio.
    ``param -= lr * ratio * r``.
    """

    def update_step(self, gradient, variable, learning_rate):
        step = ops.cast(self.iterations + 1, variable.dtype)
        m, v = self._update_moments(gradient, variable)
        m_hat = m / (1.0 - ops.power(ops.cast(self.beta_1, variable.dtype), step))
        v_hat = v / (1.0 - ops.power(ops.cast(self.beta_2, variable.dtype), step))
        update = self._add_weight_decay(m_hat / (ops.sqrt(v_hat) + self.epsilon), variable)
        if self.decays(variable):
            param_norm = ops.sqrt(ops.sum(ops.square(variable)))
            update_norm = ops.sqrt(ops.sum(ops.square(update)))
            ratio = ops.where(
                ops.logical_and(param_norm > 0, update_norm > 0), param_norm / update_norm, 1.0
            )
            update = ratio * update
        self.assign_sub(variable, ops.cast(learning_rate, variable.dtype) * update)


@keras.saving.register_keras_serializable(package="bert_tf")
class AdamW(_BertOptimizerMixin, keras.optimizers.AdamW):
    """Keras AdamW with the original epsilon and path-based decay exclusions,
    updated as Model Garden's `AdamWeightDecay`: one fused kernel per variable.

    With step ``t`` (1-based), for a non-excluded variable first
    ``param -= lr * weight_decay * param``, then Adam in its "epsilon hat"
    form: ``m = b1*m + (1-b1)*g``; ``v = b2*v + (1-b2)*g^2``;
    ``param -= lr * sqrt(1-b2^t) / (1-b1^t) * m / (sqrt(v) + epsilon)``.
    The kernel (`ResourceApplyAdam`) computes ``1-b`` from float32 ``b``, as
    Model Garden and TF1's Adam do (Keras 3 rounds ``1-b`` from float64).
    """

    def __init__(
        self,
        learning_rate=0.001,
        weight_decay=0.01,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-6,
        weight_decay_exclusions=DEFAULT_WEIGHT_DECAY_EXCLUSIONS,
        **kwargs,
    ):
        super().__init__(
            learning_rate=learning_rate,
            weight_decay=weight_decay,
            beta_1=beta_1,
            beta_2=beta_2,
            epsilon=epsilon,
            **kwargs,
        )
        self.weight_decay_exclusions = tuple(weight_decay_exclusions)

    def apply(self, grads, trainable_variables=None):
        self._step_scalars = {}  # filled by `_scalars`, once per step
        return super().apply(grads, trainable_variables)

    def update_step(self, gradient, variable, learning_rate):
        # One fused kernel reads and writes each array once; Keras's AdamW
        # runs about a dozen elementwise ops (each a pass over memory).
        decay, adam = self._scalars(learning_rate, variable.dtype)
        if self.decays(variable):
            variable.assign_sub(variable * decay)
        momentum, velocity = self.adam_slots(variable)
        tf.raw_ops.ResourceApplyAdam(
            var=variable.handle,
            m=momentum.handle,
            v=velocity.handle,
            grad=tf.cast(gradient, variable.dtype),
            **adam,
        )

    def _scalars(self, learning_rate, dtype):
        """The step's decay factor and `ResourceApplyAdam` scalars.

        Computed once per step, not once per variable (which would double the
        update's graph and the time to trace and optimize it), for each
        replica's learning rate (a multi-device strategy passes one per
        device) and dtype.
        """
        key = (id(learning_rate), dtype)
        cached = self._step_scalars.get(key)
        if cached is None:
            lr = tf.cast(learning_rate, dtype)
            step = tf.cast(self.iterations + 1, dtype)
            beta_1, beta_2 = tf.constant(self.beta_1, dtype), tf.constant(self.beta_2, dtype)
            adam = {
                "lr": lr,
                "beta1": beta_1,
                "beta2": beta_2,
                "beta1_power": tf.pow(beta_1, step),
                "beta2_power": tf.pow(beta_2, step),
                "epsilon": tf.constant(self.epsilon, dtype),
            }
            # Keeps `learning_rate` alive, so that its id is not reused.
            cached = (learning_rate, lr * tf.constant(self.weight_decay, dtype), adam)
            self._step_scalars[key] = cached
        return cached[1:]


OPTIMIZERS = {"adamw": AdamW, "bert_adam": BertAdam, "lamb": Lamb}


def default_optimizer(learning_rate=5e-5, num_train_steps=None, warmup_proportion=0.1):
    """The Keras models' `compile(optimizer="auto")`: the original AdamW
    (`create_optimizer("adamw", ...)`) warmed up over `warmup_proportion` of
    `num_train_steps` and decayed linearly to 0; without `num_train_steps`
    a constant `learning_rate` (gradients clipped to global norm 1.0 either way)."""
    if not num_train_steps:
        return AdamW(learning_rate, global_clipnorm=1.0)
    return create_optimizer(
        "adamw", learning_rate, num_train_steps, int(num_train_steps * warmup_proportion)
    )


def create_optimizer(
    optimizer_type,
    init_lr,
    num_train_steps,
    num_warmup_steps,
    weight_decay_rate=0.01,
    global_clipnorm=1.0,
    weight_decay_exclusions=DEFAULT_WEIGHT_DECAY_EXCLUSIONS,
    epsilon=1e-6,
):
    """Returns the `optimizer_type` optimizer on a `WarmupLinearDecay` schedule.

    Create it inside ``strategy.scope()``. ``num_train_steps`` and
    ``num_warmup_steps`` count applied updates. ``global_clipnorm=None``
    disables clipping.
    """
    if optimizer_type not in OPTIMIZERS:
        raise InputError(
            f"unknown optimizer {optimizer_type!r}; expected one of: {', '.join(OPTIMIZERS)}"
        )
    return OPTIMIZERS[optimizer_type](
        learning_rate=WarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps),
        weight_decay=weight_decay_rate,
        epsilon=epsilon,
        weight_decay_exclusions=weight_decay_exclusions,
        global_clipnorm=global_clipnorm,
    )
