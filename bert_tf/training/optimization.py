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
* With ``gradient_accumulation_steps=N`` Keras sums the gradients of N
  consecutive ``apply`` calls and, on every N-th call, clips their average and
  updates the variables (this module makes that work under Mirrored and
  MultiWorkerMirrored strategies too, where stock Keras raises an error).
  ``optimizer.iterations`` then counts applied updates,
  and these optimizers evaluate the schedule at ``optimizer.iterations`` (stock
  Keras would use the micro-batch counter): ``num_train_steps`` and
  ``num_warmup_steps`` count updates, not micro-batches.
"""

import re

import keras
import tensorflow as tf
from keras import ops

from bert_tf.errors import InputError

DEFAULT_WEIGHT_DECAY_EXCLUSIONS = ("LayerNorm", "layer_norm", "bias")
_MIRRORED_STRATEGIES = (tf.distribute.MirroredStrategy, tf.distribute.MultiWorkerMirroredStrategy)


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


class _BertOptimizerMixin:
    """What the three optimizers add to Keras's optimizer machinery.

    * Weight-decay exclusions matched on ``variable.path`` (Keras matches its
      own patterns on the short name, "gamma" or "kernel"), resolved into a
      variable list when the optimizer is built.
    * Sparse gradients densified, and clipping applied to the gradient summed
      over replicas (Keras clips each replica's share before the sum).
    * The schedule evaluated at applied updates, not micro-batches.
    * Gradient accumulation under mirrored strategies (see
      `_backend_apply_gradients`).
    """

    def build(self, var_list):
        if not self.built:
            excluded = [v for v in var_list if _is_excluded(v, self.weight_decay_exclusions)]
            self.exclude_from_weight_decay(var_list=excluded)
        super().build(var_list)

    def _get_current_learning_rate(self):
        # Stock Keras calls the schedule with the micro-batch counter; with
        # gradient accumulation `self.iterations` counts applied updates.
        if isinstance(self._learning_rate, keras.optimizers.schedules.LearningRateSchedule):
            return self._learning_rate(self.iterations)
        return super()._get_current_learning_rate()

    def _clip_gradients(self, grads):
        # Called by Keras before the cross-replica sum: only densify here
        # (embedding gradients arrive as tf.IndexedSlices, whose repeated rows
        # Keras would count separately in the norm and in Adam's moments);
        # `_backend_update_step` clips after the sum.
        return [tf.convert_to_tensor(g) if isinstance(g, tf.IndexedSlices) else g for g in grads]

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        variables = [v.value if isinstance(v, keras.Variable) else v for v in trainable_variables]
        grads_and_vars = self._all_reduce_sum_gradients(list(zip(grads, variables)))
        grads = super()._clip_gradients([g for g, _ in grads_and_vars])
        tf.__internal__.distribute.interim.maybe_merge_call(
            self._distributed_tf_update_step,
            self._distribution_strategy,
            list(zip(grads, variables)),
            learning_rate,
        )

    def _backend_apply_gradients(self, grads, trainable_variables):
        if not (
            self.gradient_accumulation_steps
            and isinstance(self._distribution_strategy, _MIRRORED_STRATEGIES)
            and not tf.__internal__.distribute.strategy_supports_no_merge_call()
        ):
            super()._backend_apply_gradients(grads, trainable_variables)
            return
        # Keras conds on the update step inside the replica function, with the
        # replica synchronisation (merge_call) inside a branch, which mirrored
        # strategies reject. Decide in cross-replica context instead, as
        # keras.optimizers.LossScaleOptimizer does.
        tf.distribute.get_replica_context().merge_call(
            self._cross_replica_accumulate, args=(grads, trainable_variables)
        )

    def _cross_replica_accumulate(self, distribution, grads, trainable_variables):
        def update():
            distribution.extended.call_for_each_replica(
                self._apply_accumulated, args=(grads, trainable_variables)
            )

        def accumulate():
            distribution.extended.call_for_each_replica(
                self._accumulate, args=(grads, trainable_variables)
            )

        is_update_step = (self._iterations + 1) % self.gradient_accumulation_steps == 0
        ops.cond(is_update_step, update, accumulate)

    def _accumulators(self, trainable_variables):
        indices = [self._get_variable_index(v) for v in trainable_variables]
        return [self._accumulated_gradients[i] for i in indices]

    def _accumulate(self, grads, trainable_variables):
        accumulators = self._accumulators(trainable_variables)
        self._backend_increment_gradient_accumulators(grads, accumulators)

    def _apply_accumulated(self, grads, trainable_variables):
        # As the update branch of BaseOptimizer._backend_apply_gradients.
        steps = self.gradient_accumulation_steps
        accumulators = self._accumulators(trainable_variables)
        grads = [(g + acc) / steps for g, acc in zip(grads, accumulators)]
        grads = self._clip_gradients(grads)
        self._apply_weight_decay(trainable_variables)
        self._backend_update_step(grads, trainable_variables, self.learning_rate)
        self._backend_reset_gradient_accumulators()

    def get_config(self):
        config = super().get_config()
        config["weight_decay_exclusions"] = list(self.weight_decay_exclusions)
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
        self._momentums, self._velocities = self.add_optimizer_variables(
            var_list, ["momentum", "velocity"]
        )

    def _apply_weight_decay(self, variables):
        # Keras's decoupled decay is disabled: `update_step` adds the decay.
        return

    def _update_moments(self, gradient, variable):
        """Updates and returns the first and second moments of `variable`."""
        gradient = ops.cast(gradient, variable.dtype)
        index = self._get_variable_index(variable)
        m = self.beta_1 * self._momentums[index] + (1.0 - self.beta_1) * gradient
        v = self.beta_2 * self._velocities[index] + (1.0 - self.beta_2) * ops.square(gradient)
        self.assign(self._momentums[index], m)
        self.assign(self._velocities[index], v)
        return m, v

    def _add_weight_decay(self, update, variable):
        if self.weight_decay and self._use_weight_decay(variable):
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
        if self._use_weight_decay(variable):
            param_norm = ops.sqrt(ops.sum(ops.square(variable)))
            update_norm = ops.sqrt(ops.sum(ops.square(update)))
            ratio = ops.where(
                ops.logical_and(param_norm > 0, update_norm > 0), param_norm / update_norm, 1.0
            )
            update = ratio * update
        self.assign_sub(variable, ops.cast(learning_rate, variable.dtype) * update)


@keras.saving.register_keras_serializable(package="bert_tf")
class AdamW(_BertOptimizerMixin, keras.optimizers.AdamW):
    """Keras AdamW with the original epsilon and path-based decay exclusions.

    With step ``t`` (1-based), for a non-excluded variable Keras first decays
    ``param -= lr * weight_decay * param``, then applies Adam in its
    "epsilon hat" form: ``m = b1*m + (1-b1)*g``; ``v = b2*v + (1-b2)*g^2``;
    ``param -= lr * sqrt(1-b2^t) / (1-b1^t) * m / (sqrt(v) + epsilon)``.
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


OPTIMIZERS = {"adamw": AdamW, "bert_adam": BertAdam, "lamb": Lamb}


def create_optimizer(
    optimizer_type,
    init_lr,
    num_train_steps,
    num_warmup_steps,
    weight_decay_rate=0.01,
    global_clipnorm=1.0,
    gradient_accumulation_steps=None,
    weight_decay_exclusions=DEFAULT_WEIGHT_DECAY_EXCLUSIONS,
    epsilon=1e-6,
):
    """Returns the `optimizer_type` optimizer on a `WarmupLinearDecay` schedule.

    Create it inside ``strategy.scope()``. ``num_train_steps`` and
    ``num_warmup_steps`` count applied updates; ``gradient_accumulation_steps``
    of None or 1 disables accumulation. ``global_clipnorm=None`` disables
    clipping.
    """
    if optimizer_type not in OPTIMIZERS:
        raise InputError(
            f"unknown optimizer {optimizer_type!r}; expected one of: {', '.join(OPTIMIZERS)}"
        )
    if gradient_accumulation_steps is not None and gradient_accumulation_steps < 1:
        raise InputError(
            f"gradient_accumulation_steps must be >= 1, got {gradient_accumulation_steps}"
        )
    return OPTIMIZERS[optimizer_type](
        learning_rate=WarmupLinearDecay(init_lr, num_train_steps, num_warmup_steps),
        weight_decay=weight_decay_rate,
        epsilon=epsilon,
        weight_decay_exclusions=weight_decay_exclusions,
        global_clipnorm=global_clipnorm,
        gradient_accumulation_steps=(
            gradient_accumulation_steps if gradient_accumulation_steps != 1 else None
        ),
    )
