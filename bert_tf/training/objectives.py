"""`HeadObjective`: the training loop's `Objective` from a head's loss
definitions (`bert_tf.modeling.losses`), the ones Keras's `compile()` uses."""

from bert_tf.modeling.losses import keyed, model_loss, summed_counts
from bert_tf.training.loop import Objective


class HeadObjective(Objective):
    """Each output's errors summed over the replica's batch and divided by
    its loss's counts summed over the global batch, weighted and added up:
    each replica's share of the global-batch loss.

    `losses`: a `HeadLoss`, or `{output: HeadLoss}` (a model's
    `default_loss()`); `labels`: the feature holding `y_true`, or
    `{output: feature}`; `sample_weights`: `{output: feature}` for the
    outputs that have one; `loss_weights`: `{output: weight}` or None (1).
    """

    def __init__(self, losses, labels, sample_weights=None, loss_weights=None):
        self.losses = keyed(losses)
        self.labels = keyed(labels)
        self.sample_weights = sample_weights or {}
        self.loss_weights = loss_weights

    def _targets(self, features):
        y_true = {key: features[name] for key, name in self.labels.items()}
        weights = {key: features[name] for key, name in self.sample_weights.items()}
        return y_true, weights

    def totals(self, features):
        return summed_counts(self.losses, *self._targets(features))

    def loss(self, outputs, features, totals):
        y_true, weights = self._targets(features)
        return model_loss(self.losses, y_true, keyed(outputs), weights, totals, self.loss_weights)
