"""The import paths of 0.1.0's modules that moved: each still imports (as
`import bert_tf.x` and as `from bert_tf import x`), warns DeprecationWarning
at the user's import naming the new path, and gives the new module's objects."""

import importlib
import importlib.abc
import importlib.util
import os
import re
import subprocess
import sys

import pytest

# Every module path a release, the README or the docs named that moved since:
# old path -> its new path(s). Written out here, not read from bert_tf.imports.moved,
# so that an entry dropped there fails.
OLD_TO_NEW = {
    "bert_tf.checkpoint_surgery": ["bert_tf.checkpoints.surgery"],
    "bert_tf.export_multiple_choice": ["bert_tf.export.multiple_choice"],
    "bert_tf.export_tagging": ["bert_tf.export.tagging"],
    "bert_tf.extract": ["bert_tf.tasks.extract"],
    "bert_tf.loading": ["bert_tf.checkpoints.loading"],
    "bert_tf.metrics_ner": ["bert_tf.metrics.entities", "bert_tf.text.tags"],
    "bert_tf.model_text": ["bert_tf.text.model_text"],
    "bert_tf.modeling.initializers": ["bert_tf.initializers"],
    "bert_tf.modeling.models": [
        "bert_tf.modeling.pretraining_model",
        "bert_tf.modeling.classifier",
        "bert_tf.modeling.span_labeler",
        "bert_tf.modeling.multiple_choice",
    ],
    "bert_tf.packing": ["bert_tf.text.packing"],
    "bert_tf.preprocessing": ["bert_tf.text.graph_tokenizer"],
    "bert_tf.preprocessor": ["bert_tf.text.preprocessor"],
    "bert_tf.pretrained": ["bert_tf.modeling.pretrained"],
    "bert_tf.squad_serving": ["bert_tf.export.squad"],
    "bert_tf.tasks.common": [
        "bert_tf.tasks.model_setup",
        "bert_tf.tasks.runner",
        "bert_tf.tasks.run",
    ],
    "bert_tf.tokenization": ["bert_tf.text.tokenization"],
    "bert_tf.vocab": ["bert_tf.text.vocab"],
    "bert_tf.vocab_beam": ["bert_tf.text.vocab_beam"],
}
# What the docs used from the old paths, by name.
DOCUMENTED_NAMES = {
    "bert_tf.tokenization": ["FullTokenizer"],
    "bert_tf.preprocessing": ["BertTokenizer"],
    "bert_tf.packing": ["pack_inputs"],
    "bert_tf.pretrained": ["from_pretrained", "PretrainedBert"],
    "bert_tf.squad_serving": ["answer"],
    "bert_tf.metrics_ner": ["entity_scores", "chunks", "detect_scheme"],
    "bert_tf.tasks.common": ["TaskRunner", "run_task", "warm_start"],
    "bert_tf.extract": ["extract_features", "LayerOutputs"],
    "bert_tf.modeling.models": [
        "BertPretrainingModel",
        "BertClassifier",
        "BertSpanLabeler",
        "BertMultipleChoice",
    ],
}
# The names of 0.1.0's bert_tf/metrics.py, which bert_tf/metrics/ replaced.
METRICS = ["accuracy", "f1_score", "matthews_corrcoef", "pearson", "spearman", "glue_metrics"]


def _forget(path):
    """Removes an imported old path, so that importing it runs the alias again."""
    sys.modules.pop(path, None)
    parent, _, child = path.rpartition(".")
    if child in vars(sys.modules.get(parent, object)):
        delattr(sys.modules[parent], child)


def _import(statement, path):
    """Runs `statement` as code of this file; the module it binds to `module`
    and the DeprecationWarnings it gave."""
    _forget(path)
    namespace = {}
    try:
        with pytest.warns(DeprecationWarning) as warned:
            exec(compile(statement, __file__, "exec"), namespace)
    finally:
        _forget(path)
    return namespace["module"], [w for w in warned if w.category is DeprecationWarning]


@pytest.mark.parametrize("form", ["import", "from"])
@pytest.mark.parametrize("old", sorted(OLD_TO_NEW))
def test_old_path_imports_warns_and_is_the_new_module(old, form):
    parent, _, child = old.rpartition(".")
    statement = {
        "import": f"import {old}\nmodule = {old}",
        "from": f"from {parent} import {child} as module",
    }[form]
    module, warned = _import(statement, old)
    assert len(warned) == 1, [str(w.message) for w in warned]
    message = str(warned[0].message)
    assert old in message and all(new in message for new in OLD_TO_NEW[old]), message
    assert warned[0].filename == __file__, "the warning points at the user's import"
    new_modules = [importlib.import_module(new) for new in OLD_TO_NEW[old]]
    if len(new_modules) == 1:
        assert module is new_modules[0]
    for new_module in reversed(new_modules):  # the first module that has a name gives it
        for name in [n for n in vars(new_module) if not n.startswith("_")]:
            assert getattr(module, name) is getattr(new_module, name), name
    assert all(hasattr(module, name) for name in DOCUMENTED_NAMES.get(old, []))


class _StaleCopies(importlib.abc.MetaPathFinder):
    """A finder after bert_tf's own, as an editable install's is: it has a
    file at every old path (another checkout, made before the modules moved)."""

    def find_spec(self, name, path=None, target=None):
        if name in OLD_TO_NEW:
            return importlib.util.spec_from_loader(name, loader=None)
        return None


def test_an_old_path_is_the_new_module_even_where_a_later_finder_has_a_stale_copy():
    stale = _StaleCopies()
    sys.meta_path.append(stale)
    try:
        module, _ = _import("from bert_tf import extract as module", "bert_tf.extract")
    finally:
        sys.meta_path.remove(stale)
    assert module is importlib.import_module("bert_tf.tasks.extract")


def test_a_split_module_says_which_names_it_lacks():
    module, _ = _import("from bert_tf import metrics_ner as module", "bert_tf.metrics_ner")
    with pytest.raises(AttributeError, match="bert_tf.metrics_ner.*no_such_name"):
        _ = module.no_such_name


@pytest.mark.parametrize("name", METRICS)
def test_old_metrics_names_warn_and_are_the_classification_ones(name):
    from bert_tf.metrics import classification

    with pytest.warns(
        DeprecationWarning, match=re.escape(f"bert_tf.metrics.classification.{name}")
    ):
        namespace = {}
        exec(compile(f"from bert_tf.metrics import {name}", __file__, "exec"), namespace)
    assert namespace[name] is getattr(classification, name)


TASK_OPTIONS = {
    "ClassifierOptions": "classifier_options",
    "MultipleChoiceOptions": "multiple_choice_options",
    "NerOptions": "ner_options",
    "SquadOptions": "squad_options",
    "PretrainingOptions": "pretraining_options",
    "FeatureOptions": "extract_options",
}


@pytest.mark.parametrize("name", TASK_OPTIONS)
def test_task_options_from_their_old_module_warn_and_are_the_new_ones(name):
    new = importlib.import_module(f"bert_tf.tasks.{TASK_OPTIONS[name]}")
    with pytest.warns(DeprecationWarning, match=re.escape(f"{new.__name__}.{name}")):
        namespace = {}
        exec(compile(f"from bert_tf.tasks.options import {name}", __file__, "exec"), namespace)
    assert namespace[name] is getattr(new, name)
    with pytest.raises(AttributeError, match="no_such_options"):
        _ = importlib.import_module("bert_tf.tasks.options").no_such_options


def test_metrics_package_still_imports_its_modules_and_rejects_unknown_names():
    import bert_tf.metrics

    with pytest.raises(AttributeError, match="no_such_metric"):
        _ = bert_tf.metrics.no_such_metric
    from bert_tf.metrics import entities

    assert entities.__name__ == "bert_tf.metrics.entities"


def test_new_paths_do_not_warn_and_the_old_tokenizer_path_imports_no_tensorflow():
    """In a fresh process with Python's default warning filters: the user's
    own script (__main__) sees the warning, at its own line; the new path
    gives none; and neither imports TensorFlow."""
    code = (
        "import sys\n"
        "import bert_tf.text.tokenization\n"
        "from bert_tf import tokenization\n"
        "assert tokenization is bert_tf.text.tokenization\n"
        "assert 'tensorflow' not in sys.modules\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", code],
        cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert run.stderr.count("DeprecationWarning") == 1, run.stderr
    assert "<string>:3: DeprecationWarning: bert_tf.tokenization" in run.stderr, run.stderr


def test_the_changelog_names_each_old_path_and_where_it_went():
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "CHANGELOG.md")
    with open(path, encoding="utf-8") as f:
        rows = {m[1]: m[0] for m in re.finditer(r"^\| `([\w.]+)`.*$", f.read(), re.M)}
    for old, new in OLD_TO_NEW.items():
        assert old in rows and all(f"`{n}`" in rows[old] for n in new), old
    assert "bert_tf.metrics.classification" in rows["bert_tf.metrics"]
