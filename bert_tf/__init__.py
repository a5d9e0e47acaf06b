"""bert_tf: Google's original BERT tooling on TensorFlow 2 / Keras 3."""

import importlib
import importlib.machinery
import os
import sys

from bert_tf.imports import moved, startup_notices

# TensorFlow's C++ log hidden up to its errors: on a machine without a GPU
# driver it logs `failed call to cuInit` and oneDNN's int64 fallback at error
# level, and what goes wrong for a user reaches Python as an exception. The
# scripts do the same; a TF_CPP_MIN_LOG_LEVEL the user set wins. TensorFlow
# reads it once, when it is first imported; what its libraries print while
# they load, before they read it, `startup_notices` hides (the import hook
# below).
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

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
    "Distiller",
    *_MODELS,
]

# Imported on first use, so that `import bert_tf.text.tokenization` (e.g. in a data
# worker process) does not import TensorFlow and Keras.
_LAZY = {
    "BertConfig": "bert_tf.config",
    "preset": "bert_tf.config",
    "PretrainedBert": "bert_tf.modeling.pretrained",
    "from_pretrained": "bert_tf.modeling.pretrained",
    "BertTokenizer": "bert_tf.text.graph_tokenizer",
    "BertPreprocessor": "bert_tf.text.preprocessor",
    "ExtendOptions": "bert_tf.tasks.options",
    "extend_checkpoint": "bert_tf.checkpoints.surgery",
    "Distiller": "bert_tf.modeling.distiller",
    **{name: "bert_tf.modeling" for name in _MODELS},
}


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bert_tf' has no attribute {name!r}")


# The import paths of 0.1.0's modules that moved (`bert_tf.tokenization`, ...)
# keep working, with a DeprecationWarning, for one more release.
moved.install()


# Every module that defines a Keras class a `.keras` file may name.
_KERAS_MODULES = (
    "bert_tf.initializers",
    "bert_tf.modeling.classifier",
    "bert_tf.modeling.crf",
    "bert_tf.modeling.embedding",
    "bert_tf.modeling.encoder",
    "bert_tf.modeling.heads",
    "bert_tf.modeling.layers",
    "bert_tf.modeling.losses",
    "bert_tf.modeling.multiple_choice",
    "bert_tf.modeling.pretraining_model",
    "bert_tf.modeling.span_labeler",
    "bert_tf.modeling.tagging",
    "bert_tf.optimization",
    "bert_tf.text.packing",
    "bert_tf.text.graph_tokenizer",
    "bert_tf.text.preprocessor",
)


def _register_keras_classes():
    """Imports the modules of `_KERAS_MODULES`, whose decorators register
    their classes, so that `keras.saving.load_model` finds them."""
    for module in _KERAS_MODULES:
        importlib.import_module(module)


class _RegisterWhenKerasIsImported:
    """An import hook: once `keras` and `tensorflow` (which import each
    other) are both imported, and no bert_tf module is half-imported,
    registers bert_tf's Keras classes, and removes itself. `import bert_tf`
    must not import them itself: data worker processes and the scripts' flag
    errors stay fast without TensorFlow. (A bert_tf module that imports
    TensorFlow is still half-imported then; the modules registered may import
    it in turn, so they wait for it to finish.) `import tensorflow` runs
    within `startup_notices.hidden()`."""

    _TRIGGERS = ("keras", "tensorflow")

    def __init__(self):
        self.importing = {"keras": 0, "bert_tf": 0}  # nesting depth of each kind of import

    def find_spec(self, name, path=None, target=None):
        kind = "keras" if name in self._TRIGGERS else None
        if name.startswith("bert_tf."):
            kind = "bert_tf"
        if kind is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module  # the loader is this module's own

        def exec_then_register(module):
            self.importing[kind] += 1
            try:
                if name == "tensorflow":
                    with startup_notices.hidden():
                        exec_module(module)
                else:
                    exec_module(module)
            finally:
                self.importing[kind] -= 1
            done = not any(self.importing.values())
            if done and "keras" in sys.modules and self in sys.meta_path:
                sys.meta_path.remove(self)
                _register_keras_classes()

        spec.loader.exec_module = exec_then_register
        return spec


if "keras" in sys.modules:
    _register_keras_classes()
else:
    sys.meta_path.insert(0, _RegisterWhenKerasIsImported())
