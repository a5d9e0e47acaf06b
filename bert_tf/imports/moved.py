"""The 0.1.0 import paths of modules that have moved since, kept working for
one more release.

`import bert_tf.tokenization` and `from bert_tf import tokenization` give the
module at its new path, `bert_tf.text.tokenization` (the same object), with
a DeprecationWarning that names the new path. A module that was split answers
each name from the first of its new modules that has it. Imports nothing
until an old path is imported.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings

# Old path -> its new path, or the new paths of its parts.
MOVED = {
    "bert_tf.checkpoint_surgery": ("bert_tf.checkpoints.surgery",),
    "bert_tf.export_multiple_choice": ("bert_tf.export.multiple_choice",),
    "bert_tf.export_tagging": ("bert_tf.export.tagging",),
    "bert_tf.extract": ("bert_tf.tasks.extract",),
    "bert_tf.loading": ("bert_tf.checkpoints.loading",),
    "bert_tf.metrics_ner": ("bert_tf.metrics.entities", "bert_tf.text.tags"),
    "bert_tf.model_text": ("bert_tf.text.model_text",),
    "bert_tf.modeling.initializers": ("bert_tf.initializers",),
    "bert_tf.modeling.models": (
        "bert_tf.modeling.pretraining_model",
        "bert_tf.modeling.classifier",
        "bert_tf.modeling.span_labeler",
        "bert_tf.modeling.multiple_choice",
    ),
    "bert_tf.packing": ("bert_tf.text.packing",),
    "bert_tf.preprocessing": ("bert_tf.text.graph_tokenizer",),
    "bert_tf.preprocessor": ("bert_tf.text.preprocessor",),
    "bert_tf.pretrained": ("bert_tf.modeling.pretrained",),
    "bert_tf.squad_serving": ("bert_tf.export.squad",),
    "bert_tf.tasks.common": (
        "bert_tf.tasks.model_setup",
        "bert_tf.tasks.runner",
        "bert_tf.tasks.run",
    ),
    "bert_tf.tokenization": ("bert_tf.text.tokenization",),
    "bert_tf.vocab": ("bert_tf.text.vocab",),
    "bert_tf.vocab_beam": ("bert_tf.text.vocab_beam",),
}


def message(old, new):
    """The deprecation message for `old`, which moved to the paths `new`."""
    return f"{old} is deprecated and will be removed in the next release: use {' or '.join(new)}"


class _OldPath(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of MOVED (after the finder of the files on
    sys.path, so a module that is there wins) and loads each as its new
    module."""

    def find_spec(self, name, path=None, target=None):
        if name in MOVED:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return None  # a plain module, replaced in exec_module

    def exec_module(self, module):
        old, new = module.__name__, MOVED[module.__name__]
        # stacklevel 2 is the import statement: warnings skips importlib's frames.
        warnings.warn(message(old, new), DeprecationWarning, stacklevel=2)
        parts = [importlib.import_module(name) for name in new]
        if len(parts) == 1:
            # The import statement returns what sys.modules holds once this returns.
            sys.modules[old] = parts[0]
        else:
            module.__getattr__ = _first_of(old, parts)


def _first_of(old, parts):
    """A module `__getattr__` that answers each name from the first of
    `parts` that has it."""

    def __getattr__(name):
        for part in parts:
            if hasattr(part, name):
                return getattr(part, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def install():
    """Lets the old paths be imported (once per process). The finder goes
    right after `PathFinder` (the one that finds bert_tf's own files), before
    the finders that come later: an editable install's finder would
    otherwise give an old path's file from the checkout that was installed,
    which another checkout using the same environment has moved."""
    if not any(isinstance(finder, _OldPath) for finder in sys.meta_path):
        after = [i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder]
        sys.meta_path.insert(after[0] + 1 if after else len(sys.meta_path), _OldPath())
