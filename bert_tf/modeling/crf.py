"""A linear-chain conditional random field over tag sequences.

A path `y_0 .. y_{n-1}` over emissions `e` scores
`start[y_0] + sum_t e[t, y_t] + sum_{t>0} transitions[y_{t-1}, y_t] + end[y_{n-1}]`;
its probability is `exp(score) / Z`, `Z` summed over every path of length
`n`. Sequences are left-aligned in `[batch, steps, num_tags]` with their
`lengths`; steps past a row's length are ignored (a row of length 0 has
NLL 0). Everything is computed in float32, whatever the inputs' dtype, with
in-graph loops (`tf.scan`) that compile with XLA.

`compact` / `expand` move the tags of the labelled positions of a window
(scattered among sub-tokens) into such left-aligned sequences and back.
"""

import keras
import tensorflow as tf


def compact(values, mask):
    """Moves the masked positions of each row to its front, in order.

    Args: values `[batch, seq, ...]`; mask bool `[batch, seq]`.
    Returns: (values `[batch, seq, ...]` the masked ones first, then the
      others; lengths int32 `[batch]` the masked count of each row).
    """
    seq = tf.shape(mask)[1]
    position = tf.range(seq)[None, :]
    order = tf.argsort(tf.where(mask, position, seq + position), axis=1, stable=True)
    lengths = tf.reduce_sum(tf.cast(mask, tf.int32), axis=1)
    return tf.gather(values, order, batch_dims=1), lengths


def expand(values, mask, fill=-1):
    """The inverse of `compact`: left-aligned `values` `[batch, seq]` back at
    the masked positions of `mask` `[batch, seq]`, `fill` elsewhere."""
    index = tf.maximum(tf.cumsum(tf.cast(mask, tf.int32), axis=1) - 1, 0)
    return tf.where(mask, tf.gather(values, index, batch_dims=1), tf.cast(fill, values.dtype))


def _time_major(x):
    """`[batch, steps, ...]` -> `[steps, batch, ...]`."""
    return tf.transpose(x, [1, 0] + list(range(2, x.shape.rank)))


@keras.saving.register_keras_serializable(package="bert_tf")
class LinearChainCrf(keras.layers.Layer):
    """The CRF's weights: `transitions` float32 `[num_tags, num_tags]` (from
    row tag to column tag), `start_transitions` and `end_transitions`
    `[num_tags]` (into the first tag, out of the last: BIO's `I-` cannot
    start a sequence). All start at zero, where the CRF's best path is each
    step's argmax and its NLL the sum of the steps' cross-entropies.
    """

    def __init__(self, num_tags, **kwargs):
        kwargs["dtype"] = "float32"  # float32 under mixed precision too
        super().__init__(**kwargs)
        self.num_tags = num_tags
        self.transitions = self.add_weight(
            shape=(num_tags, num_tags), initializer="zeros", name="transitions"
        )
        self.start_transitions = self.add_weight(
            shape=(num_tags,), initializer="zeros", name="start_transitions"
        )
        self.end_transitions = self.add_weight(
            shape=(num_tags,), initializer="zeros", name="end_transitions"
        )
        self.built = True

    def tf1_variables(self, scope="crf"):
        """`{TF1 name: variable}`: `<scope>/transitions`, `<scope>/start_transitions`,
        `<scope>/end_transitions`."""
        return {
            f"{scope}/transitions": self.transitions,
            f"{scope}/start_transitions": self.start_transitions,
            f"{scope}/end_transitions": self.end_transitions,
        }

    def _weights32(self):
        return (
            tf.convert_to_tensor(self.transitions),
            tf.convert_to_tensor(self.start_transitions),
            tf.convert_to_tensor(self.end_transitions),
        )

    def path_score(self, emissions, tags, lengths):
        """The score of `tags` int `[batch, steps]` over `emissions`
        `[batch, steps, num_tags]` up to `lengths` `[batch]`: float32 `[batch]`."""
        transitions, start, end = self._weights32()
        emissions = tf.cast(emissions, tf.float32)
        tags = tf.cast(tags, tf.int32)
        lengths = tf.cast(lengths, tf.int32)
        steps = tf.shape(tags)[1]
        real = tf.range(steps)[None, :] < lengths[:, None]
        tags = tf.where(real, tags, 0)
        emitted = tf.gather(emissions, tags[..., None], batch_dims=2)[..., 0]
        moved = tf.gather_nd(transitions, tf.stack([tags[:, :-1], tags[:, 1:]], axis=-1))
        last = tf.gather(tags, tf.maximum(lengths - 1, 0), batch_dims=1)
        score = (
            tf.gather(start, tags[:, 0])
            + tf.reduce_sum(tf.where(real, emitted, 0.0), axis=1)
            + tf.reduce_sum(tf.where(real[:, 1:], moved, 0.0), axis=1)
            + tf.gather(end, last)
        )
        return tf.where(lengths > 0, score, 0.0)

    def log_partition(self, emissions, lengths):
        """log Z of each row (forward algorithm in log space): float32 `[batch]`."""
        transitions, start, end = self._weights32()
        emissions = tf.cast(emissions, tf.float32)
        lengths = tf.cast(lengths, tf.int32)
        steps = tf.range(1, tf.shape(emissions)[1])

        def step(alpha, inputs):
            t, emitted = inputs
            moved = tf.reduce_logsumexp(alpha[:, :, None] + transitions[None], axis=1) + emitted
            return tf.where((t < lengths)[:, None], moved, alpha)

        first = start[None] + emissions[:, 0]
        alphas = tf.scan(step, (steps, _time_major(emissions[:, 1:])), initializer=first)
        alpha = tf.concat([first[None], alphas], axis=0)[-1]
        return tf.where(lengths > 0, tf.reduce_logsumexp(alpha + end[None], axis=1), 0.0)

    def nll(self, emissions, tags, lengths):
        """Negative log-likelihood of the gold `tags` `[batch, steps]`:
        float32 `[batch]`, 0 for rows of length 0."""
        return self.log_partition(emissions, lengths) - self.path_score(emissions, tags, lengths)

    def decode(self, emissions, lengths):
        """Viterbi: the best path of each row, int32 `[batch, steps]` (0 past
        its length)."""
        transitions, start, end = self._weights32()
        emissions = tf.cast(emissions, tf.float32)
        lengths = tf.cast(lengths, tf.int32)
        batch = tf.shape(emissions)[0]
        stay = tf.broadcast_to(tf.range(self.num_tags)[None], [batch, self.num_tags])

        def forward(carry, inputs):
            score, _ = carry
            t, emitted = inputs
            candidates = score[:, :, None] + transitions[None]
            best = tf.reduce_max(candidates, axis=1) + emitted
            back = tf.argmax(candidates, axis=1, output_type=tf.int32)
            real = (t < lengths)[:, None]
            return tf.where(real, best, score), tf.where(real, back, stay)

        first = start[None] + emissions[:, 0]
        scores, backs = tf.scan(
            forward,
            (tf.range(1, tf.shape(emissions)[1]), _time_major(emissions[:, 1:])),
            initializer=(first, stay),
        )
        final = tf.concat([first[None], scores], axis=0)[-1] + end[None]
        last = tf.argmax(final, axis=1, output_type=tf.int32)

        def backward(tag, back):
            return tf.gather(back, tag, batch_dims=1)

        # backs[t] points from step t + 1 to step t; padded steps keep the tag.
        earlier = tf.scan(backward, backs, initializer=last, reverse=True)
        path = tf.concat([earlier, last[None]], axis=0)
        path = tf.transpose(path)
        real = tf.range(tf.shape(path)[1])[None, :] < lengths[:, None]
        return tf.where(real, path, 0)

    def labelled_nll(self, emissions, label_ids):
        """`nll` over each row's labelled positions (`label_ids` int
        `[batch, seq]` >= 0, -1 elsewhere) taken in order as one sequence:
        float32 `[batch]`."""
        mask = label_ids >= 0
        emissions, lengths = compact(emissions, mask)
        tags, _ = compact(tf.maximum(label_ids, 0), mask)
        return self.nll(emissions, tags, lengths)

    def labelled_decode(self, emissions, mask):
        """`decode` over each row's positions where `mask` (bool `[batch, seq]`),
        the best tags put back there: int32 `[batch, seq]`, -1 elsewhere."""
        emissions, lengths = compact(emissions, mask)
        return expand(self.decode(emissions, lengths), mask)

    def get_config(self):
        return {**super().get_config(), "num_tags": self.num_tags}
