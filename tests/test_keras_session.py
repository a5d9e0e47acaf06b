"""A Keras user's session: `.keras` files load after `import bert_tf` alone,
in any import order, and TensorFlow's start-up noise stays hidden."""

import ast
import json
import os
import pathlib
import subprocess
import sys

import keras
import numpy as np
import pytest
from shared import HANG_TIMEOUT, random_inputs

import bert_tf
from bert_tf.modeling import BertFeatureTagger

REPO = pathlib.Path(__file__).resolve().parents[1]


def _run(code, *args, env=None):
    """`code` in a fresh Python that imports bert_tf from this checkout."""
    env = {**(env or os.environ), "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_TIMEOUT,
    )


def test_import_bert_tf_imports_neither_tensorflow_nor_keras():
    finished = _run(
        "import sys, bert_tf, bert_tf.text.tokenization\n"
        "print(sorted(m for m in ('tensorflow', 'keras') if m in sys.modules))"
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout == "[]\n"


def _defines_keras_classes(path):
    tree = ast.parse(path.read_text())
    return any(
        isinstance(node, ast.Attribute) and node.attr == "register_keras_serializable"
        for node in ast.walk(tree)
    )


def test_every_module_with_keras_classes_is_registered_with_keras():
    """`import bert_tf` registers the classes of these modules once Keras is
    imported: a new module with Keras classes must be among them."""
    package = REPO / "bert_tf"
    defining = {
        ".".join(("bert_tf", *path.relative_to(package).with_suffix("").parts))
        for path in package.rglob("*.py")
        if _defines_keras_classes(path)
    }
    assert defining  # the scan finds the decorator
    assert defining == set(bert_tf._KERAS_MODULES)


# Modules that import TensorFlow and that the registered Keras modules import
# in turn: importing one first registers the Keras classes while it is still
# half-imported.
FIRST_IMPORTS = ("bert_tf.data.features", "bert_tf.text.packing")


def test_any_module_imported_first_registers_the_keras_classes():
    code = (
        "import sys\n"
        "__import__(sys.argv[1])\n"
        "import keras\n"
        "assert 'bert_tf>BertSpanLabeler' in keras.saving.get_custom_objects()"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "TF_CPP_MIN_LOG_LEVEL": "3"}
    runs = {
        name: subprocess.Popen(
            [sys.executable, "-c", code, name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in FIRST_IMPORTS
    }
    for name, run in runs.items():
        _, stderr = run.communicate(timeout=HANG_TIMEOUT)
        assert run.returncode == 0, f"{name}: {stderr[-2000:]}"


LOAD = """
import json, sys
order = sys.argv[1].split(",")
for name in order:
    __import__(name)
import keras, numpy as np
inputs = {k: np.array(v, np.int32) for k, v in json.loads(sys.argv[2]).items()}
outputs = {}
for path in sys.argv[3:]:
    model = keras.saving.load_model(path)
    result = model(inputs, training=False)
    outputs[path] = np.asarray(result[max(result)] if isinstance(result, dict) else result).tolist()
print(json.dumps(outputs))
"""


def _tiny_models(config):
    """One tiny model of each kind a user saves (the pre-training model's
    head shares the embedding table, which `.keras` files cannot express)."""
    return [
        bert_tf.BertEncoder(config),
        bert_tf.BertClassifier(config, num_labels=3),
        bert_tf.BertSpanLabeler(config),
        bert_tf.BertTokenClassifier(config, 4, use_crf=True),
        bert_tf.BertSentenceEmbedder(config, pooling="first"),
        BertFeatureTagger(config, 3, layers=(-1,), lstm_units=4),
    ]


@pytest.mark.large
def test_keras_files_load_after_import_bert_tf_alone_in_any_order(tiny_config, tmp_path):
    """Saved in this process; loaded in fresh ones that import only bert_tf
    and Keras (or TensorFlow), before or after each other. Without a
    TF_CPP_MIN_LOG_LEVEL of the user's, TensorFlow prints nothing."""
    keras.utils.set_random_seed(0)
    inputs = random_inputs(tiny_config, batch=2, seq=6, lengths=[6, 4])
    paths, expected = [], {}
    for model in _tiny_models(tiny_config):
        path = str(tmp_path / f"{model.name}.keras")
        model.save(path)
        paths.append(path)
        result = model(inputs, training=False)  # a dict: its last output by name
        expected[path] = np.asarray(result[max(result)] if isinstance(result, dict) else result)
    ids = json.dumps({k: v.tolist() for k, v in inputs.items()})
    quiet = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    for order in ("bert_tf,keras", "bert_tf,tensorflow", "keras,bert_tf"):
        finished = _run(LOAD, order, ids, *paths, env=quiet)
        assert finished.returncode == 0, (order, finished.stderr[-3000:])
        if order == "bert_tf,keras":
            assert finished.stderr == ""
        loaded = json.loads(finished.stdout.splitlines()[-1])
        for path in paths:
            np.testing.assert_allclose(loaded[path], expected[path], atol=1e-6, err_msg=path)
