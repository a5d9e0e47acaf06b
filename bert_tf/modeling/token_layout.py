"""Where the encoder keeps a batch's hidden states: every position of
`[batch, seq]`, or the real tokens alone as rows `[tokens, width]`.

The position-wise layers (projections, feed-forward, LayerNorm) run on
whatever layout they are given; attention always sees `[batch, seq, ...]`.
"""

import tensorflow as tf
from keras import ops


class PaddedTokens:
    """Every position, padding included: the original's layout, `[batch, seq, width]`."""

    def pack(self, x):
        """`[batch, seq, width]` -> this layout."""
        return x

    def unpack(self, x):
        """This layout -> `[batch, seq, width]`."""
        return x

    def output(self, x):
        """This layout -> `[batch, seq, width]` as the encoder returns it."""
        return x

    def first(self, x):
        """This layout -> `[batch, width]`, each sequence's first token."""
        return x[:, 0]


PADDED = PaddedTokens()


class RealTokens:
    """The real tokens (`input_mask` 1) alone, as rows `[tokens, width]`, so that
    the position-wise layers skip the padding.

    The first position of every sequence always has a row, even when its mask
    is 0, so that each sequence has a first token and a batch never has zero
    rows. Unpacking fills a padded position with the row of the real token
    before it: finite values that the attention mask then hides.
    """

    def __init__(self, input_mask):
        batch, seq = ops.shape(input_mask)[0], ops.shape(input_mask)[1]
        is_row = ops.logical_or(ops.not_equal(input_mask, 0), ops.arange(seq)[None, :] == 0)
        flat = ops.reshape(is_row, (-1,))
        self._mask = input_mask
        self._positions = tf.where(flat)[:, 0]
        # For each position of [batch, seq], the row of the last row-holding
        # position at or before it (the sequence's own first token at worst).
        row_of_position = ops.cumsum(ops.cast(flat, "int32")) - 1
        self._row_of_position = ops.reshape(row_of_position, (batch, seq))

    def pack(self, x):
        return ops.take(ops.reshape(x, (-1, ops.shape(x)[-1])), self._positions, axis=0)

    def unpack(self, x):
        return ops.take(x, self._row_of_position, axis=0)

    def output(self, x):
        """Zeros at padded positions (the original has meaningless values there)."""
        return self.unpack(x) * ops.cast(self._mask, x.dtype)[:, :, None]

    def first(self, x):
        return ops.take(x, self._row_of_position[:, 0], axis=0)
