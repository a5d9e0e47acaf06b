"""bert_tf: Google's original BERT tooling on TensorFlow 2 / Keras 3."""

import importlib
import os

# TensorFlow's C++ start-up notices (no GPU driver, CPU instructions), printed
# when a model first imports it; a TF_CPP_MIN_LOG_LEVEL the user set wins.
# The scripts hide warnings too (level 3).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

__version__ = "0.1.0"

_MODELS = (
    "BertEncoder",
    "BertClassifier",
    "BertMultipleChoice",
    "BertSpanLabeler",
    "BertTokenClassifier",
    "BertPretrainingModel",
    "BertSentenceEmbedder",
)
__all__ = [
    "BertConfig",
    "preset",
    "PretrainedBert",
    "from_pretrained",
    "BertTokenizer",
    "BertPreprocessor",
    "ExtendOptions",
    "extend_checkpoint",
    *_MODELS,
]

# Imported on first use, so that `import bert_tf.tokenization` (e.g. in a data
# worker process) does not import TensorFlow and Keras.
_LAZY = {
    "BertConfig": "bert_tf.config",
    "preset": "bert_tf.config",
    "PretrainedBert": "bert_tf.pretrained",
    "from_pretrained": "bert_tf.pretrained",
    "BertTokenizer": "bert_tf.preprocessing",
    "BertPreprocessor": "bert_tf.preprocessor",
    "ExtendOptions": "bert_tf.tasks.options",
    "extend_checkpoint": "bert_tf.checkpoint_surgery",
    **{name: "bert_tf.modeling" for name in _MODELS},
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bert_tf' has no attribute {name!r}")
