"""One harness for bert_tf's Keras models, as keras-hub's `run_task_test` and
`run_model_saving_test`: for each model of `SPECS` (a tiny one: hidden 32,
2 layers, a vocabulary of 30 words), `tests/test_keras_harness.py` checks

- `get_config()` -> `from_config()`: the same config (holding every
  constructor argument the spec gives), and the same outputs on the same
  weights;
- the shapes `predict` gives on packed ids, and on raw text through the
  model's preprocessor;
- one `fit` step with `compile()`'s defaults, on raw text where the model
  takes it: a finite loss, every trainable weight moved, the others not;
- its `.keras` file, saved after that step and loaded in a fresh Python
  process (one for all models: `reload_all`) without the vocab file, gives
  the same config, weights and predictions;
- its SavedModel (`bert_tf.export`), loaded by `tf.saved_model.load`, gives
  the model's outputs;
- `checkpoints.tf1_variable_map` names exactly the original BERT's
  variables, with the original's shapes (`original_bert.py`), plus the
  head's names pinned in the spec.

A new model is one more `ModelSpec` in `SPECS`: its constructor arguments
(non-default values, so that a `get_config` that drops one fails), packed
inputs and the shapes of their outputs, raw text and labels, its export and
its TF1 head names.
"""

import dataclasses
import fnmatch
import json
import os
import subprocess
import sys
from collections.abc import Callable

import keras
import numpy as np
import original_bert
import tensorflow as tf
from shared import HANG_TIMEOUT

import bert_tf
from bert_tf import checkpoints
from bert_tf.export import (
    export_classifier,
    export_embedder,
    export_multiple_choice,
    export_span_labeler,
    export_tagger,
)
from bert_tf.export.common import model_call
from bert_tf.export.squad import answer
from bert_tf.export.tagging import tag_sentences
from bert_tf.modeling import BertFeatureTagger
from bert_tf.modeling.losses import CrfLoss
from bert_tf.modeling.task_model import TaskModel

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Same-process (and same-kernels) comparisons: float rounding only.
TOLERANCE = dict(rtol=1e-5, atol=1e-5)

SEQ = 16  # the preprocessor's max_seq_length, and the length of the packed inputs
HIDDEN = 32
TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", "?", "a", "the", "was", "is"]
TOKENS += ["good", "bad", "film", "what", "who", "code", "amber", "ann", "lee", "lives"]
TOKENS += ["in", "oslo", "plot", "ending", "dull", "fun", "long", "##s", "it"]
CONFIG = bert_tf.BertConfig(
    vocab_size=len(TOKENS),
    hidden_size=HIDDEN,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=SEQ,
    type_vocab_size=2,
)


def packed(batch, seq=SEQ, seed=0):
    """Packed inputs int32 `[batch, seq]`: `[CLS] words [SEP]`, example i
    `seq - 3 * i` tokens long, padded, the second half of each segment 1."""
    rng = np.random.default_rng(seed)
    lengths = [seq - 3 * i for i in range(batch)]
    mask = np.array([[1] * n + [0] * (seq - n) for n in lengths], np.int32)
    words = rng.integers(5, len(TOKENS), (batch, seq))
    words[:, 0] = TOKENS.index("[CLS]")
    words[np.arange(batch), np.array(lengths) - 1] = TOKENS.index("[SEP]")
    types = (np.arange(seq)[None, :] >= np.array(lengths)[:, None] // 2).astype(np.int32)
    return {
        "input_word_ids": (words * mask).astype(np.int32),
        "input_mask": mask,
        "input_type_ids": types * mask,
    }


def choices(inputs, num_choices):
    """`packed` rows as `[batch, num_choices, seq]`."""
    return {k: v.reshape(-1, num_choices, v.shape[-1]) for k, v in inputs.items()}


IDS = packed(3)
TEXTS = ["a good film .", "the plot was dull", "what a fun film !", "long , bad ending"]
QUESTIONS = (
    ["what was the code ?", "who lives in oslo ?", "what is it ?"],
    ["the code was amber .", "ann lee lives in oslo .", "it was a long film ."],
)
ANSWERS = {"text": ["amber", "ann lee", ""], "answer_start": [13, 0, -1]}
SENTENCES = ["ann lee lives in oslo .", "the film was good", "lee was fun"]
TAGS = [["B-PER", "I-PER", "O", "O", "B-LOC", "O"], ["O"] * 4, ["B-PER", "O", "O"]]
TAG_NAMES = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]


# --------------------------------------------------------------------------
# Outputs: their shapes, and comparisons.


def shapes(value):
    """The shapes in `value`: an array's; per key of a dict, per item of a
    list of examples; a list of str or numbers is 1-D, a str or number ()."""
    if isinstance(value, dict):
        return {key: shapes(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)) and not all(
        isinstance(item, (str, bytes, int, float)) for item in value
    ):
        return [shapes(item) for item in value]
    return tuple(np.shape(value))


def answer_fields(answers):
    """A span labeler's raw-text predictions: the fields of each answer."""
    return [sorted(found) for found in answers]


def plain(value):
    """`value` (outputs: tensors, arrays, dicts, lists, str, bytes) as JSON
    would give it back: lists, dicts, str, numbers."""
    return json.loads(json.dumps(value, default=_json_value))


def _json_value(value):
    if isinstance(value, bytes):
        return value.decode("utf-8")
    value = np.asarray(value)
    return value.astype(str).tolist() if value.dtype.kind in "SO" else value.tolist()


def assert_close(actual, expected, what=""):
    """Equal structures, str equal and numbers within `TOLERANCE`."""
    actual, expected = plain(actual), plain(expected)
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and sorted(actual) == sorted(expected), what
        for key in expected:
            assert_close(actual[key], expected[key], f"{what}/{key}")
    elif isinstance(expected, list) and expected and isinstance(expected[0], (list, dict, str)):
        assert isinstance(actual, list) and len(actual) == len(expected), what
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, f"{what}/{i}")
    elif isinstance(expected, str):
        assert actual == expected, what
    else:
        np.testing.assert_allclose(actual, expected, err_msg=what, **TOLERANCE)


def without_vocab_file(config):
    """A model's config but its tokenizer's `vocab_file` (a `.keras` file
    carries the vocabulary itself: loaded, the tokenizer has no file)."""
    if isinstance(config, dict):
        return {k: without_vocab_file(v) for k, v in config.items() if k != "vocab_file"}
    return config


def softmax(logits):
    return tf.nn.softmax(logits, axis=-1).numpy()


def sigmoid(logits):
    return tf.sigmoid(logits).numpy()


# --------------------------------------------------------------------------
# The exports: each writes the model's SavedModel and gives pairs (what the
# loaded SavedModel serves, what the model computes).


def served_classifier(model, export_dir):
    export_classifier(model, export_dir, thresholds=[0.5] * model.num_labels)
    serve = tf.saved_model.load(export_dir).signatures
    return [
        (serve["serving_ids"](**IDS)["probabilities"], sigmoid(model(IDS, training=False))),
        (
            serve["serving_default"](text_a=tf.constant(TEXTS))["probabilities"],
            sigmoid(model.predict(TEXTS, verbose=0)),
        ),
    ]


def served_multiple_choice(model, export_dir):
    export_multiple_choice(model, export_dir)
    serve = tf.saved_model.load(export_dir).signatures
    contexts, endings = CHOICE_TEXT
    text = {f"ending{i}": tf.constant([row[i] for row in endings]) for i in range(3)}
    ids = choices(packed(6), 3)
    return [
        (serve["serving_ids"](**ids)["probabilities"], softmax(model(ids, training=False))),
        (
            serve["serving_default"](context=tf.constant(contexts), **text)["probabilities"],
            softmax(model.predict(CHOICE_TEXT, verbose=0)),
        ),
    ]


def served_span_labeler(model, export_dir):
    export_span_labeler(model, export_dir)
    loaded = tf.saved_model.load(export_dir)
    logits = loaded.signatures["serving_ids"](**IDS)
    predicted = model.predict(QUESTIONS, verbose=0)
    served = answer(loaded, *QUESTIONS)
    # Scores of the answers found (without one, the export's is 0.0, predict's the null score).
    return [
        (logits, model(IDS, training=False)),
        ([a["answer"] for a in served], [a["answer"] for a in predicted]),
        (
            [a["score"] for a in served if a["answer"]],
            [a["score"] for a in predicted if a["answer"]],
        ),
    ]


def served_token_classifier(model, export_dir):
    export_tagger(model, export_dir)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    tags = serve(text=tf.constant(SENTENCES))["tags"].numpy()
    predicted = model.predict(SENTENCES, verbose=0)
    served = [[t.decode() for t in row[: len(words)]] for row, words in zip(tags, predicted)]
    return [(served, predicted)]


def served_feature_tagger(model, export_dir):
    """A feature tagger takes no raw text in Keras: the export's own graph,
    run eagerly on the model, is what it serves."""
    export_tagger(model, export_dir, labels=TAG_NAMES)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    texts = tf.constant(SENTENCES)
    pre = model.preprocessor
    eager = tag_sentences(
        model_call(model), pre.tokenizer, TAG_NAMES, pre.max_seq_length, texts, crf=model.crf
    )
    return [(serve(text=texts), eager)]


def served_embedder(model, export_dir):
    export_embedder(model, export_dir)
    serve = tf.saved_model.load(export_dir).signatures
    return [
        (serve["serving_ids"](**IDS)["embeddings"], model(IDS, training=False)),
        (
            serve["serving_default"](text=tf.constant(TEXTS))["embeddings"],
            model.predict(TEXTS, verbose=0),
        ),
    ]


# --------------------------------------------------------------------------
# The models.


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """What the harness needs of one Keras model class (see the module docstring)."""

    cls: type
    # Constructor arguments besides the config (and a task model's preprocessor):
    # non-default values, each of which get_config must keep.
    arguments: dict
    ids: dict  # packed inputs for `predict`
    ids_shapes: object  # `shapes` of `predict(ids)`
    # `fit` arguments (x, y, sample_weight): raw text where the model takes it.
    # None: the model has no loss to fit (an encoder).
    fit: dict | None
    # TF1 names of the head besides the encoder's (`tf1_head_variables`): {name: shape}.
    head_variables: dict
    text: object = None  # raw text for `predict`; None: the model takes none
    text_shapes: object = None  # `view` of `predict(text)`
    view: Callable = shapes
    loss: Callable | None = None  # model -> compile()'s loss, where it has no default
    # (model, export_dir) -> [(served, expected)]; None: bert_tf exports no SavedModel of it.
    export: Callable | None = None
    # Weights without a TF1 name (the original has no such layer): fnmatch patterns of paths.
    keras_only: tuple = ()
    # Trainable weights that get no gradient, by the model's nature: their paths.
    no_gradient: tuple = ()
    # More argument sets, for the config round trip alone.
    more_arguments: tuple = ()

    @property
    def name(self):
        return self.cls.__name__

    def build(self, preprocessor, arguments=None):
        """A new model of `arguments` (default: the spec's)."""
        arguments = dict(self.arguments if arguments is None else arguments)
        if issubclass(self.cls, TaskModel):
            arguments["preprocessor"] = preprocessor
        return self.cls(CONFIG, **arguments)


# The original run_classifier.py's head (top-level names), run_squad.py's and run_pretraining.py's.
CLASSIFIER_HEAD = original_bert.classifier_head_variables(3, HIDDEN)
SQUAD_HEAD = original_bert.squad_head_variables(HIDDEN)
PRETRAINING_HEADS = original_bert.pretraining_head_variables(CONFIG)
# bert_tf's own, where the original has none: a CRF's transitions.
CRF = {"crf/transitions": (5, 5), "crf/start_transitions": (5,), "crf/end_transitions": (5,)}

CHOICE_TEXT = (
    ["the film was", "ann lee lives in"],
    [["good", "bad", "a long film"], ["oslo", "a film", "the code"]],
)
MASKED = {**IDS, "masked_lm_positions": np.array([[1, 2], [3, 1], [2, 2]], np.int32)}
LABELLED = np.where(IDS["input_mask"] > 0, np.arange(SEQ) % 5, -1).astype(np.int32)

SPECS = [
    ModelSpec(
        bert_tf.BertEncoder,
        arguments={"recompute": "layer"},
        ids=IDS,
        ids_shapes={
            "sequence_output": (3, SEQ, HIDDEN),
            "pooled_output": (3, HIDDEN),
            "encoder_outputs": [(3, SEQ, HIDDEN)] * 2,
            "embedding_output": (3, SEQ, HIDDEN),
        },
        fit=None,
        head_variables={},
    ),
    ModelSpec(
        bert_tf.BertPretrainingModel,
        arguments={"recompute": "attention"},
        ids=MASKED,
        ids_shapes={"masked_lm_logits": (3, 2, len(TOKENS)), "next_sentence_logits": (3, 2)},
        fit=dict(
            x=MASKED,
            y={
                "masked_lm_logits": np.array([[11, 12]] * 3),
                "next_sentence_logits": np.array([0, 1, 1]),
            },
            sample_weight={
                "masked_lm_logits": np.array([[1.0, 1.0], [1.0, 0.0], [1.0, 0.0]]),
                "next_sentence_logits": np.ones(3),
            },
        ),
        head_variables=PRETRAINING_HEADS,
    ),
    ModelSpec(
        bert_tf.BertClassifier,
        arguments={"num_labels": 3, "multi_label": True, "label_names": ["bad", "dull", "fun"]},
        ids=IDS,
        ids_shapes=(3, 3),
        text=TEXTS,
        text_shapes=(4, 3),
        fit=dict(x=TEXTS, y=np.array([[0, 0, 0], [1, 1, 0], [0, 0, 1], [1, 0, 0]], np.float32)),
        head_variables=CLASSIFIER_HEAD,
        export=served_classifier,
        more_arguments=({"num_labels": 1},),
    ),
    ModelSpec(
        bert_tf.BertMultipleChoice,
        arguments={"num_choices": 3},
        ids=choices(packed(6), 3),
        ids_shapes=(2, 3),
        text=CHOICE_TEXT,
        text_shapes=(2, 3),
        fit=dict(x=CHOICE_TEXT, y=np.array([0, 2])),
        # bert_tf's own (the original has no multiple choice): run_classifier.py's with one label.
        head_variables=original_bert.classifier_head_variables(1, HIDDEN),
        export=served_multiple_choice,
        # Added to every choice's logit alike: the softmax over the choices ignores it.
        no_gradient=("classifier/output_bias",),
    ),
    ModelSpec(
        bert_tf.BertSpanLabeler,
        arguments=dict(
            doc_stride=4,
            max_query_length=6,
            max_answer_length=5,
            n_best_size=3,
            version_2_with_negative=True,
            null_score_diff_threshold=0.5,
            eval_metric="cmrc2018",
        ),
        ids=IDS,
        ids_shapes={"start_logits": (3, SEQ), "end_logits": (3, SEQ)},
        text=QUESTIONS,
        text_shapes=[["answer", "nbest", "null_odds", "probability", "score"]] * 3,
        view=answer_fields,
        fit=dict(x=QUESTIONS, y=ANSWERS),
        head_variables=SQUAD_HEAD,
        export=served_span_labeler,
    ),
    ModelSpec(
        bert_tf.BertTokenClassifier,
        arguments={"num_labels": 5, "use_crf": True, "label_names": TAG_NAMES},
        ids=IDS,
        ids_shapes=(3, SEQ, 5),
        text=SENTENCES,
        text_shapes=[(6,), (4,), (3,)],
        fit=dict(x=SENTENCES, y=TAGS),
        # bert_tf's own (the original has no tagger): run_classifier.py's names, and a CRF.
        head_variables={**original_bert.classifier_head_variables(5, HIDDEN), **CRF},
        export=served_token_classifier,
        more_arguments=({"num_labels": 3},),
    ),
    ModelSpec(
        BertFeatureTagger,
        arguments=dict(num_labels=5, layers=[-1, -2], combine="sum", lstm_units=4, use_crf=True),
        ids=IDS,
        ids_shapes=(3, SEQ, 5),
        fit=dict(x=IDS, y=LABELLED),
        loss=lambda model: CrfLoss(model.crf),
        head_variables=CRF,
        export=served_feature_tagger,
        keras_only=("bilstm_*", "classifier/*"),
        more_arguments=({"num_labels": 2, "combine": "concat", "lstm_units": 3, "layers": [0]},),
    ),
    ModelSpec(
        bert_tf.BertSentenceEmbedder,
        arguments={"pooling": "pooled", "layers": [-2], "normalize": True},
        ids=IDS,
        ids_shapes=(3, HIDDEN),
        text=TEXTS,
        text_shapes=(4, HIDDEN),
        fit=dict(x=TEXTS, y=np.full((4, HIDDEN), 0.1, np.float32)),
        loss=lambda model: keras.losses.MeanSquaredError(),
        head_variables={},
        export=served_embedder,
        more_arguments=({"pooling": "mean", "layers": [0, -1]}, {"pooling": "first"}),
    ),
]


def spec_named(name):
    return next(spec for spec in SPECS if spec.name == name)


# --------------------------------------------------------------------------
# The harness: each model built and fitted once, shared by the checks.


@dataclasses.dataclass
class Fitted:
    model: keras.Model
    loss: float
    steps: int
    before: dict  # {weight path: value} before the step
    trainable: set  # the paths of the trainable weights


class Harness:
    """The models of `SPECS` (built and, where they fit, fitted one step,
    once each) and the files they write under `root`."""

    def __init__(self, root):
        self.root = root
        self.vocab_file = os.path.join(root, "vocab.txt")
        with open(self.vocab_file, "w", encoding="utf-8") as f:
            f.write("\n".join(TOKENS) + "\n")
        tokenizer = bert_tf.BertTokenizer(self.vocab_file)
        self.preprocessor = bert_tf.BertPreprocessor(
            tokenizer, max_seq_length=SEQ, length_multiple=4
        )
        self._fitted = {}
        self._reloaded = None

    def new_model(self, spec, arguments=None):
        keras.utils.set_random_seed(SPECS.index(spec))
        return spec.build(self.preprocessor, arguments)

    def fitted(self, spec):
        """The spec's model after one `fit` step with `compile()`'s defaults
        (a model without a loss, as built)."""
        if spec.name not in self._fitted:
            model = self.new_model(spec)
            before = {w.path: w.numpy().copy() for w in model.weights}
            loss, steps = None, 0
            if spec.fit is not None:
                model.compile(**({"loss": spec.loss(model)} if spec.loss else {}))
                # One eager step: tracing the training step would take 3-7 s of CPU
                # per model (predict still traces the forward pass in a graph).
                model.run_eagerly = True
                history = model.fit(**spec.fit, epochs=1, verbose=0)
                model.run_eagerly = False
                loss, steps = history.history["loss"][-1], int(model.optimizer.iterations)
            trainable = {w.path for w in model.trainable_weights}
            self._fitted[spec.name] = Fitted(model, loss, steps, before, trainable)
        return self._fitted[spec.name]

    def model(self, spec):
        return self.fitted(spec).model

    def reloaded(self, spec):
        """What the spec's `.keras` file gave in a fresh process: `{"config":
        ..., "weights": [each weight, in order], "ids": [each output on the packed
        inputs], "text": predict's outputs on the raw text}`."""
        if self._reloaded is None:
            models = {spec.name: self.model(spec) for spec in SPECS}
            # The files carry their vocabulary: the vocab file is gone while they load.
            away = self.vocab_file + ".away"
            os.rename(self.vocab_file, away)
            try:
                self._reloaded = reload_all(models, self.root)
            finally:
                os.rename(away, self.vocab_file)
        return self._reloaded[spec.name]


# The fresh process: `import bert_tf` and Keras alone (no test module, which
# would register bert_tf's Keras classes however the package does).
RELOAD = """
import json, sys
import bert_tf
import keras, numpy as np

with open(sys.argv[1]) as f:
    manifest = json.load(f)
for entry in manifest:
    model = keras.saving.load_model(entry["keras"])
    # In order: their paths hold layer names made unique per process.
    np.savez(entry["weights"], *[w.numpy() for w in model.weights])
    outputs = model(dict(np.load(entry["ids"])), training=False)
    np.savez(entry["outputs"], *keras.tree.flatten(outputs))
    results = {"config": model.get_config()}
    if entry["text"] is not None:
        text = entry["text"]
        text = tuple(text) if entry["pair"] else text
        model.run_eagerly = True  # no tracing: this process predicts once
        predicted = model.predict(text, verbose=0)
        results["text"] = json.loads(json.dumps(predicted, default=lambda v: v.tolist()))
    with open(entry["results"], "w") as f:
        json.dump(results, f)
"""


def reload_all(models, root):
    """Saves `models` ({name: model}) as `.keras` files in `root`, loads
    them all in one fresh Python process, and returns what it gave for each
    (`Harness.reloaded`)."""
    manifest = []
    for name, model in models.items():
        spec = spec_named(name)
        entry = {
            "keras": os.path.join(root, f"{name}.keras"),
            "ids": os.path.join(root, f"{name}.ids.npz"),
            "weights": os.path.join(root, f"{name}.reloaded_weights.npz"),
            "outputs": os.path.join(root, f"{name}.reloaded_outputs.npz"),
            "results": os.path.join(root, f"{name}.reloaded.json"),
            "text": plain(spec.text) if spec.text is not None else None,
            "pair": isinstance(spec.text, tuple),
        }
        model.save(entry["keras"])
        np.savez(entry["ids"], **spec.ids)
        manifest.append(entry)
    manifest_path = os.path.join(root, "manifest.json")
    with open(manifest_path, "w") as f:
        json.dump(manifest, f)
    env = {**os.environ, "PYTHONPATH": REPO}
    finished = subprocess.run(
        [sys.executable, "-c", RELOAD, manifest_path],
        capture_output=True,
        text=True,
        env=env,
        timeout=HANG_TIMEOUT,
    )
    assert finished.returncode == 0, finished.stderr[-5000:]
    results = {}
    for name, entry in zip(models, manifest):
        with open(entry["results"]) as f:
            results[name] = json.load(f)
        weights = np.load(entry["weights"])
        results[name]["weights"] = [weights[f"arr_{i}"] for i in range(len(weights.files))]
        outputs = np.load(entry["outputs"])
        results[name]["ids"] = [outputs[f"arr_{i}"] for i in range(len(outputs.files))]
    return results


# --------------------------------------------------------------------------
# The checks.


def check_config_round_trip(harness, spec):
    """`from_config(get_config())`: the same config, JSON-serialisable and
    holding every argument given, and the same outputs on the same weights
    (the same packed text from its preprocessor)."""
    for arguments in (spec.arguments, *spec.more_arguments):
        model = harness.model(spec) if arguments is spec.arguments else None
        model = model or harness.new_model(spec, arguments)
        config = model.get_config()
        assert json.loads(json.dumps(config)) == config
        for name, value in arguments.items():
            assert name in config and plain(config[name]) == plain(value), (name, config)
        clone = type(model).from_config(config)
        assert clone.get_config() == config
        clone.set_weights(model.get_weights())
        assert_close(clone(spec.ids, training=False), model(spec.ids, training=False), spec.name)
        if spec.text is not None:
            assert_close(clone.preprocessor(spec.text), model.preprocessor(spec.text), "text")


def check_predict_shapes(harness, spec):
    model = harness.model(spec)
    assert shapes(model.predict(spec.ids, verbose=0)) == spec.ids_shapes
    if spec.text is not None:
        assert spec.view(model.predict(spec.text, verbose=0)) == spec.text_shapes


def check_fit_step(harness, spec):
    """One step: a finite loss, every trainable weight moved, the others kept."""
    fitted = harness.fitted(spec)
    assert fitted.steps == 1 and np.isfinite(fitted.loss), (fitted.steps, fitted.loss)
    after = {w.path: w.numpy() for w in fitted.model.weights}
    assert sorted(after) == sorted(fitted.before)
    kept = sorted(p for p in after if np.array_equal(after[p], fitted.before[p]))
    frozen = sorted((set(after) - fitted.trainable) | set(spec.no_gradient))
    assert kept == frozen


def check_keras_file(harness, spec):
    """The `.keras` file, loaded in a fresh process: the same config, weights and predictions."""
    model, reloaded = harness.model(spec), harness.reloaded(spec)
    assert without_vocab_file(reloaded["config"]) == without_vocab_file(plain(model.get_config()))
    # Compared in order: a weight's path holds layer names that Keras makes
    # unique per process (`backward_lstm_4` here may be `backward_lstm` there).
    assert len(reloaded["weights"]) == len(model.weights)
    for value, weight in zip(reloaded["weights"], model.weights):
        np.testing.assert_array_equal(value, weight.numpy(), err_msg=weight.path)
    assert_close(reloaded["ids"], keras.tree.flatten(model(spec.ids, training=False)), "ids")
    if spec.text is not None:
        assert_close(reloaded["text"], model.predict(spec.text, verbose=0), "text")


def check_export(harness, spec):
    export_dir = os.path.join(harness.root, f"{spec.name}_export")
    for i, (served, expected) in enumerate(spec.export(harness.model(spec), export_dir)):
        assert_close(served, expected, f"{spec.name} output {i}")


def check_tf1_names(harness, spec):
    """The TF1 names: the original encoder's and the spec's head, with the
    original's shapes, each a distinct weight of the model; the model's
    other weights are `keras_only`."""
    model = harness.model(spec)
    names = checkpoints.tf1_variable_map(model)
    expected = {**original_bert.encoder_variables(CONFIG), **spec.head_variables}
    assert {n: tuple(v.shape) for n, v in names.items()} == expected
    paths = [v.path for v in names.values()]
    assert len(set(paths)) == len(paths)
    others = {w.path for w in model.weights} - set(paths)
    unnamed = [p for p in others if not any(fnmatch.fnmatch(p, k) for k in spec.keras_only)]
    assert unnamed == [] and set(paths) <= {w.path for w in model.weights}
