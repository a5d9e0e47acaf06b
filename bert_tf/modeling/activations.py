"""Activation functions by the names `bert_config.json` uses."""

import math

import keras
from keras import ops


def gelu(x):
    """The original BERT's gelu: the tanh approximation.

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))
    """
    cdf = 0.5 * (1.0 + ops.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * ops.power(x, 3))))
    return x * cdf


def gelu_exact(x):
    """The erf form of gelu, x * Phi(x) (Hugging Face's `gelu`)."""
    return 0.5 * x * (1.0 + ops.erf(x / math.sqrt(2.0)))


_ACTIVATIONS = {
    "gelu": gelu,
    "gelu_exact": gelu_exact,
    "relu": keras.activations.relu,
    "tanh": keras.activations.tanh,
    "linear": None,
}


def get_activation(name):
    """Maps a `hidden_act` name (validated by BertConfig) to a function, or None for linear."""
    return _ACTIVATIONS[name]
