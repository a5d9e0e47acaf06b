"""Keras users' path: task models `from_pretrained` on the real MiniLM weights,
`compile` / `fit` / `predict` on raw text, `.keras` files, the scripts'
export and a TF1 checkpoint run_classifier.py continues from, all giving the
same numbers."""

import dataclasses
import json
import os
import re
import subprocess
import sys
import warnings
import zipfile

import h5py
import keras
import numpy as np
import pytest
import tensorflow as tf
from readme_blocks import block_in
from shared import HANG_TIMEOUT, minilm_dir, random_inputs, write_release

import bert_tf
from bert_tf import checkpoints
from bert_tf.errors import CheckpointError, InputError
from bert_tf.export import export_classifier, export_embedder
from bert_tf.options import build
from bert_tf.tasks import model_setup
from bert_tf.tasks.classifier import run_classifier
from bert_tf.tasks.classifier_options import ClassifierOptions
from bert_tf.tasks.extract import extract_features as run_extract_features
from bert_tf.tasks.extract_options import FeatureOptions

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SUBJECTS = ["the movie", "the food", "this book", "the hotel", "our trip", "the concert"]
SUBJECTS += ["the service", "the game"]
POSITIVE = ["wonderful", "great", "excellent", "delightful", "superb", "lovely"]
NEGATIVE = ["terrible", "awful", "dreadful", "horrible", "poor", "boring"]
LABELS = ("neg", "pos")


def sentiment_set(adjective_slice):
    """Made-up reviews `"<subject> was <adjective>."`: label 1 for a positive adjective."""
    texts, labels = [], []
    for subject in SUBJECTS:
        for label, adjectives in enumerate((NEGATIVE, POSITIVE)):
            for adjective in adjectives[adjective_slice]:
                texts.append(f"{subject.capitalize()} was {adjective}.")
                labels.append(label)
    return texts, np.array(labels, np.int32)


TRAIN = sentiment_set(slice(0, 4))  # 64 reviews
DEV = sentiment_set(slice(4, 6))  # 32 reviews, with adjectives unseen in training
EPOCHS, BATCH, LEARNING_RATE = 4, 16, 1e-4


def train_classifier(seed):
    """MiniLM + a new head, trained as a Keras user would: raw text in."""
    keras.utils.set_random_seed(seed)
    classifier = bert_tf.BertClassifier.from_pretrained(minilm_dir(), num_labels=2)
    steps = EPOCHS * len(TRAIN[0]) // BATCH
    classifier.compile(learning_rate=LEARNING_RATE, num_train_steps=steps)
    classifier.fit(*TRAIN, batch_size=BATCH, epochs=EPOCHS, verbose=0)
    return classifier


@pytest.fixture(scope="module")
def trained(calibration):
    return train_classifier(calibration.seed(0))


@pytest.mark.learning
def test_from_pretrained_compile_and_fit_learn_from_raw_text(trained, calibration):
    report = trained.load_report
    assert report.left_initialised == ["output_bias", "output_weights"]
    assert len(report.loaded) == 5 + 6 * 16 + 2  # embeddings, 6 layers, pooler
    assert trained.preprocessor.tokenizer.do_lower_case  # from tokenizer_config.json
    loss, accuracy = trained.evaluate(*DEV, verbose=0)
    calibration.record(dev_accuracy=accuracy, dev_loss=loss)
    # Measured over seeds 0-3, Eigen and oneDNN AVX2 kernels: accuracy 1.0 in
    # all 8, loss 0.456-0.526 (untrained: ln 2 = 0.693).
    assert accuracy >= 0.8 and loss < 0.62


MIRRORED = """
import json, sys
import keras, tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
keras.mixed_precision.set_global_policy("mixed_bfloat16")
sys.path.insert(0, sys.argv[1])
import test_keras_models as t
import bert_tf
keras.utils.set_random_seed(int(sys.argv[2]))
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    classifier = bert_tf.BertClassifier.from_pretrained(t.minilm_dir(), num_labels=2)
    steps = t.EPOCHS * len(t.TRAIN[0]) // t.BATCH
    classifier.compile(learning_rate=t.LEARNING_RATE, num_train_steps=steps)
history = classifier.fit(*t.TRAIN, batch_size=t.BATCH, epochs=t.EPOCHS, verbose=0)
loss, accuracy = classifier.evaluate(*t.DEV, verbose=0)
print(json.dumps({"replicas": strategy.num_replicas_in_sync, "accuracy": accuracy,
                  "logits_dtype": str(classifier.predict(t.DEV[0][:2], verbose=0).dtype)}))
"""


@pytest.mark.learning
@pytest.mark.half_precision
def test_fit_under_mirrored_strategy_with_mixed_precision(calibration, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", MIRRORED, os.path.dirname(__file__), str(calibration.seed(0))],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    outcome = json.loads(result.stdout.strip().splitlines()[-1])
    calibration.record(dev_accuracy=outcome["accuracy"])
    assert outcome["replicas"] == 2 and outcome["logits_dtype"] == "float32"
    # Measured over seeds 0-3, Eigen and oneDNN AVX2 kernels: 1.0 in all 8.
    assert outcome["accuracy"] >= 0.8


SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
assert "bert_tf" not in sys.modules
served = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
texts = json.loads(sys.argv[2])
print(json.dumps(served(text_a=tf.constant(texts))["probabilities"].numpy().tolist()))
"""


def softmax(logits):
    return tf.nn.softmax(logits, axis=-1).numpy()


@pytest.mark.large
@pytest.mark.numerics
def test_keras_model_equals_its_keras_file_export_and_run_classifier(trained, tmp_path):
    texts = DEV[0]
    probabilities = softmax(trained.predict(texts, verbose=0))
    assert probabilities.shape == (len(texts), 2)
    # Raw text is packed as the scripts pack it: the same ids give the same logits.
    packed = trained.preprocessor(tf.constant(texts[:3]))
    np.testing.assert_allclose(
        softmax(trained.predict(packed, verbose=0)), probabilities[:3], atol=1e-6
    )

    path = str(tmp_path / "classifier.keras")
    trained.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.optimizer.iterations.numpy() == trained.optimizer.iterations.numpy()
    np.testing.assert_allclose(softmax(loaded.predict(texts, verbose=0)), probabilities, atol=1e-6)

    # The scripts' SavedModel, from the `.keras` file's model (its vocabulary
    # came from the file), served by a process without bert_tf.
    export_dir = str(tmp_path / "export")
    export_classifier(loaded, export_dir)
    served = subprocess.run(
        [sys.executable, "-c", SERVE, export_dir, json.dumps(texts)],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert served.returncode == 0, served.stderr[-3000:]
    np.testing.assert_allclose(json.loads(served.stdout), probabilities, atol=1e-5)

    # A TF1 checkpoint in Google's layout that run_classifier.py continues from.
    release = tmp_path / "keras_trained"
    release.mkdir()
    checkpoints.save_tf1_checkpoint(trained, str(release / "model.ckpt"))
    trained.config.to_json_file(str(release / "bert_config.json"))
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    rows = "".join(f"{text}\t{LABELS[label]}\n" for text, label in zip(*DEV))
    (data_dir / "test.tsv").write_text("text\tlabel\n" + rows)
    run_classifier(
        build(
            ClassifierOptions,
            task_name="generic",
            text_a_column="text",
            label_column="label",
            labels=LABELS,
            data_dir=str(data_dir),
            vocab_file=os.path.join(minilm_dir(), "vocab.txt"),
            init_checkpoint=str(release / "model.ckpt"),
            output_dir=str(tmp_path / "run"),
            max_seq_length=128,
            do_predict=True,
        )
    )
    with open(tmp_path / "run" / "test_results.tsv") as f:
        script = np.array([[float(p) for p in line.split("\t")] for line in f])
    np.testing.assert_allclose(script, probabilities, atol=1e-5)


def test_from_pretrained_reads_every_checkpoint_layout(tmp_path):
    """A Google release folder, its checkpoint prefix, and a Hugging Face
    folder give the same encoder; casing comes from the release's name."""
    hf_encoder = bert_tf.BertEncoder.from_pretrained(minilm_dir())
    release = write_release(hf_encoder, tmp_path)
    ids = {"input_word_ids": np.array([[101, 7592, 2088, 102]], np.int32)}
    expected = hf_encoder(ids)["sequence_output"]
    for path in (str(release), str(release / "bert_model.ckpt")):
        encoder = bert_tf.BertEncoder.from_pretrained(path)
        np.testing.assert_array_equal(encoder(ids)["sequence_output"], expected)
    scorer = bert_tf.BertClassifier.from_pretrained(str(release), num_labels=1)
    assert scorer.preprocessor.tokenizer.do_lower_case
    assert scorer.default_loss().name == "mean_squared_error"
    with pytest.raises(InputError, match="contradicts"):
        bert_tf.BertClassifier.from_pretrained(str(release), num_labels=2, do_lower_case=False)
    short = bert_tf.BertClassifier.from_pretrained(str(release), num_labels=2, max_seq_length=8)
    packed = short.preprocessor((["Hello world " * 10], ["Bye"]))
    # [CLS] hello world hello world [SEP] bye [SEP]: the original pair truncation
    assert packed["input_word_ids"].numpy().tolist() == [
        [101, 7592, 2088, 7592, 2088, 102, 9061, 102]
    ]
    assert packed["input_type_ids"].numpy().tolist() == [[0] * 6 + [1] * 2]


def test_bert_config_file_is_the_model_built_from_any_checkpoint(tmp_path):
    """A config of fewer layers than the checkpoint's (a distillation
    student's) builds those layers; the weights it leaves are reported
    unused. From a Hugging Face folder as from a TF1 checkpoint, and as the
    scripts' --bert_config_file with --init_checkpoint."""
    with open(os.path.join(minilm_dir(), "config.json")) as f:
        values = json.load(f)

    def config_file(layers):
        path = tmp_path / f"{layers}_layers.json"
        path.write_text(json.dumps({**values, "num_hidden_layers": layers}))
        return str(path)

    student = bert_tf.BertClassifier.from_pretrained(
        minilm_dir(), num_labels=2, bert_config_file=config_file(3)
    )
    assert student.config.num_hidden_layers == 3
    unused = student.load_report.unused
    assert len(unused) == 3 * 16
    assert sorted({name.split("/")[2] for name in unused}) == ["layer_3", "layer_4", "layer_5"]
    options = build(
        FeatureOptions,
        input_file="unused.txt",
        output_file="unused.jsonl",
        init_checkpoint=minilm_dir(),
        bert_config_file=config_file(3),
    )
    config = model_setup.load_bert_config(options)
    assert config == student.config
    scripts_model = bert_tf.BertClassifier(config, num_labels=2)
    assert model_setup.warm_start(scripts_model, minilm_dir()).unused == unused

    prefix = checkpoints.save_tf1_checkpoint(student, str(tmp_path / "model.ckpt"))
    smaller = bert_tf.BertClassifier.from_pretrained(
        prefix, num_labels=2, bert_config_file=config_file(2)
    )
    assert smaller.config.num_hidden_layers == 2
    layer_2 = [name for name in checkpoints.tf1_variable_map(student) if "/layer_2/" in name]
    assert smaller.load_report.unused == sorted(layer_2)


def test_num_classes_and_label_names_say_the_number_of_labels(tiny_config):
    """keras-hub's `num_classes` is `num_labels`; label names alone count too."""
    assert bert_tf.BertClassifier(tiny_config, num_classes=3).num_labels == 3
    named = bert_tf.BertClassifier(tiny_config, label_names=["neg", "neu", "pos"])
    assert named.num_labels == 3
    assert named.classifier.output_weights.shape[0] == 3
    assert bert_tf.BertClassifier(tiny_config, 2, num_classes=2).num_labels == 2
    with pytest.raises(InputError, match="num_labels=2 and num_classes=3 differ"):
        bert_tf.BertClassifier(tiny_config, 2, num_classes=3)
    with pytest.raises(InputError, match="pass num_labels"):
        bert_tf.BertClassifier(tiny_config)
    with pytest.raises(InputError, match="2 label_names for num_labels=3"):
        bert_tf.BertClassifier(tiny_config, num_classes=3, label_names=["a", "b"])
    tagger = bert_tf.BertTokenClassifier(tiny_config, num_classes=5, use_crf=True)
    assert (tagger.num_labels, tagger.crf.num_tags) == (5, 5)
    assert bert_tf.BertTokenClassifier(tiny_config, label_names=["O", "B-X", "I-X"]).num_labels == 3


def test_from_pretrained_and_raw_text_errors_name_what_is_wrong(tmp_path):
    with pytest.raises(CheckpointError, match=r"lacks \d+ variables .*cls/predictions/"):
        bert_tf.BertPretrainingModel.from_pretrained(minilm_dir())
    config = bert_tf.BertConfig.from_json_file(os.path.join(minilm_dir(), "config.json"))
    bare = bert_tf.BertClassifier(config, num_labels=2)
    with pytest.raises(InputError, match="raw text needs a preprocessor"):
        bare.predict(["a text"])
    prefix = checkpoints.save_tf1_checkpoint(bare, str(tmp_path / "model.ckpt"))
    with pytest.raises(CheckpointError, match="no bert_config.json or config.json next to"):
        bert_tf.BertClassifier.from_pretrained(prefix, num_labels=2)
    labeler = bert_tf.BertSpanLabeler.from_pretrained(
        prefix, bert_config_file=os.path.join(minilm_dir(), "config.json")
    )
    assert labeler.load_report.left_initialised == [
        "cls/squad/output_bias",
        "cls/squad/output_weights",
    ]
    with pytest.raises(InputError, match="takes packed inputs"):
        labeler.predict(["a question"])


def test_bad_arguments_are_refused_at_once_in_one_line(tiny_config, tmp_path):
    """A length or count out of range is an InputError naming it, before any
    work, not an error deep in TensorFlow at the first batch."""
    for length in (0, -8, 513):
        with pytest.raises(
            InputError,
            match=rf"^max_seq_length={length}: expected a whole number in \[2, 512\] "
            r"\(max_position_embeddings\)$",
        ):
            bert_tf.BertClassifier.from_pretrained(
                minilm_dir(), num_labels=2, max_seq_length=length
            )
    tokenizer = tiny_tokenizer(tmp_path)
    with pytest.raises(InputError, match=r"^max_seq_length=1: expected a whole number >= 2$"):
        bert_tf.BertPreprocessor(tokenizer, max_seq_length=1)
    for name, value in (("num_labels", 0), ("num_labels", -1), ("num_classes", 0)):
        with pytest.raises(InputError, match=rf"^{name}={value}: expected a whole number >= 1$"):
            bert_tf.BertClassifier(tiny_config, **{name: value})
    with pytest.raises(InputError, match=r"^num_choices=0: expected a whole number >= 1$"):
        bert_tf.BertMultipleChoice(tiny_config, num_choices=0)
    with pytest.raises(InputError, match=r"^BertClassifier got no examples: x is empty$"):
        bert_tf.BertClassifier(tiny_config, 2).predict([])
    preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=16)
    classifier = bert_tf.BertClassifier(
        tiny_config, label_names=["neg", "pos"], preprocessor=preprocessor
    )
    assert classifier.predict_labels([]) == []
    assert classifier.predict_labels(([], [])) == []


def readme_keras_examples():
    """The Keras guide's first examples (docs/keras.md)."""
    return [
        block_in("docs/keras.md", section, containing).code
        for section, containing in (
            ("Fine-tune and predict on raw text", "import"),
            ("The encoder and a preprocessor", "BertPreprocessor"),
            ("The encoder and a preprocessor", "deferred_draws"),
            ("Models from a config", "import"),
        )
    ]


def test_readme_keras_examples_run_as_written(tmp_path, monkeypatch):
    """The Keras guide's code, on MiniLM written as a Google release in the
    folder the guide names."""
    monkeypatch.chdir(tmp_path)
    write_release(bert_tf.BertEncoder.from_pretrained(minilm_dir()), tmp_path)
    fit_example, encoder_example, warm_start_example, config_example = readme_keras_examples()
    names = {}
    exec(fit_example, names)
    assert names["logits"].shape == (1, 2)
    for written in ("classifier.keras", "export/1/saved_model.pb", "keras_run/model.ckpt.index"):
        assert (tmp_path / written).exists(), written
    names = {}
    exec(encoder_example, names)
    assert names["outputs"]["sequence_output"].shape == (1, 8, 384)
    assert names["pretrained"].pretraining_model is None  # MiniLM has no cls/ heads
    exec(warm_start_example, names)
    loaded = {v.path.split("/", 1)[1]: v.numpy() for v in names["pretrained"].encoder.weights}
    head = names["classifier"].classifier.output_weights.numpy()
    for variable in names["classifier"].encoder.weights:
        np.testing.assert_array_equal(variable.numpy(), loaded[variable.path.split("/", 1)[1]])
    assert head.std() > 0.01 and np.abs(head).max() <= 0.04  # drawn: truncated normal(0.02)
    names = {}
    exec(config_example, names)
    assert names["classifier"].num_labels == 3


@pytest.mark.numerics
@pytest.mark.parametrize("pooling", ["mean", "first", "pooled"])
def test_an_embedder_trains_its_pooler_only_when_it_pools_with_it(pooling):
    """With "mean" or "first" nothing reaches the pooler: it is frozen, so
    `fit` trains the rest without Keras's "Gradients do not exist" warning."""
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "movie", "was", "good"]
    preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(vocabulary=vocab), 8)
    config = bert_tf.preset("bert_tiny", vocab_size=len(vocab))
    model = bert_tf.BertSentenceEmbedder(config, pooling=pooling, preprocessor=preprocessor)
    model.compile(loss="mse")
    texts = ["the movie was good", "good"]
    targets = np.ones((2, config.hidden_size), np.float32)
    pooler = [w.numpy() for w in model.encoder.pooler.weights]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(texts, targets, epochs=1, verbose=0)
    assert not [w for w in caught if "Gradients do not exist" in str(w.message)]
    moved = [not np.array_equal(a, w.numpy()) for a, w in zip(pooler, model.encoder.pooler.weights)]
    assert moved == [pooling == "pooled"] * 2


def test_sentence_embeddings_equal_extract_features_and_the_served_model(tmp_path):
    texts = ["The movie was great.", "A dull, long film with a twist nobody saw coming!"]
    (tmp_path / "input.txt").write_text("\n".join(texts) + "\n")
    run_extract_features(
        build(
            FeatureOptions,
            input_file=str(tmp_path / "input.txt"),
            output_file=str(tmp_path / "features.npz"),
            vocab_file=os.path.join(minilm_dir(), "vocab.txt"),
            init_checkpoint=minilm_dir(),
            layers="-1,-2",
            max_seq_length=128,
            output_format="npz",
        )
    )
    features = np.load(tmp_path / "features.npz")
    values, offsets = features["values"], features["offsets"]
    examples = [values[offsets[i] : offsets[i + 1]] for i in range(len(texts))]

    mean = bert_tf.BertSentenceEmbedder.from_pretrained(minilm_dir())
    vectors = mean.predict(texts, verbose=0)
    expected = np.stack([tokens[:, 0].mean(axis=0) for tokens in examples])  # layer -1
    np.testing.assert_allclose(vectors, expected, atol=2e-5)
    first = bert_tf.BertSentenceEmbedder.from_pretrained(
        minilm_dir(), pooling="first", layers=(-2, -1), normalize=True
    )
    expected = np.stack([np.concatenate([tokens[0, 1], tokens[0, 0]]) for tokens in examples])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(first.predict(texts, verbose=0), expected, atol=2e-5)

    export_dir = str(tmp_path / "embedder")
    export_embedder(mean, export_dir)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    np.testing.assert_allclose(serve(text=tf.constant(texts))["embeddings"], vectors, atol=1e-5)


def test_answer_on_raw_text_uses_the_models_preprocessor():
    """A span labeler from `from_pretrained` answers raw questions with no
    vocab argument: spans cut from the contexts at their character offsets."""
    from bert_tf.export.squad import answer

    # A random head whose best spans lie in the contexts (with seed 0 it
    # picks no span there, and the answers are empty).
    keras.utils.set_random_seed(1)
    labeler = bert_tf.BertSpanLabeler.from_pretrained(minilm_dir())
    questions = ["Who wrote the book?", "When was it written?"]
    contexts = ["The book was written by Ann Lee in 1999.", "Ann Lee wrote it in 1999, in Oslo."]
    results = answer(labeler, questions, contexts, max_seq_length=64, max_query_length=16)
    for result, context in zip(results, contexts):
        assert result["answer"]
        assert result["answer"] == context[result["start_char"] : result["end_char"]]


def tiny_tokenizer(folder):
    """A 97-token vocab (tiny_config's size) in `folder`: words good, bad, film, w0..w87."""
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film", "##s"]
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(tokens + [f"w{i}" for i in range(88)]) + "\n")
    return bert_tf.BertTokenizer(str(vocab_file))


def test_entities_on_raw_text_from_the_keras_model_and_its_export(tiny_config, tmp_path):
    from bert_tf.export.tagging import entities, export_tagger
    from bert_tf.text.tags import chunks

    keras.utils.set_random_seed(3)
    preprocessor = bert_tf.BertPreprocessor(tiny_tokenizer(tmp_path), max_seq_length=12)
    labels = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC"]
    tagger = bert_tf.BertTokenClassifier(tiny_config, label_names=labels, preprocessor=preprocessor)
    texts = ["good  films w1 w2 bad w3 w4 w5 w6 w7 w8 w9 w10", "w11 film\tgood", "bad"]
    found = entities(tagger, texts)  # labels: the tagger's label_names
    assert entities(tagger, texts, labels) == found
    export_dir = str(tmp_path / "tagger")
    with pytest.raises(InputError, match="^2 labels for a model of 5 tags$"):
        export_tagger(tagger, export_dir, labels=labels[:2])
    export_tagger(tagger, export_dir)
    assert entities(export_dir, texts) == found
    served = tf.saved_model.load(export_dir).signatures["serving_default"](text=tf.constant(texts))
    assert sum(map(len, found)) > 2  # random weights tag some entities
    for text, spans, tags in zip(texts, found, served["tags"].numpy()):
        words = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
        word_tags = [t.decode() for t in tags[: len(words)]]
        expected = sorted(chunks(word_tags), key=lambda c: c[1])
        assert [(s["type"], s["start_char"], s["end_char"]) for s in spans] == [
            (kind, words[first][0], words[last][1]) for kind, first, last in expected
        ]
        for span in spans:
            assert text[span["start_char"] : span["end_char"]] == span["text"]


def test_multiple_choice_fits_and_predicts_contexts_with_choices(tiny_config, tmp_path):
    """Raw `(contexts, choices)` are packed as SWAG's features are
    (`data.multiple_choice.convert_example`), and train with compile()'s
    defaults; a classifier refuses them."""
    from bert_tf.data.multiple_choice import MultipleChoiceExample, convert_example
    from bert_tf.text.tokenization import FullTokenizer

    tokenizer = tiny_tokenizer(tmp_path)
    preprocessor = bert_tf.BertPreprocessor(tokenizer, max_seq_length=8, length_multiple=1)
    model = bert_tf.BertMultipleChoice(tiny_config, num_choices=3, preprocessor=preprocessor)
    contexts = ["good film w1 w2 w3", "bad"]
    choices = [["w4", "films w5 w6 w7", "good"], ["w8 w9", "w10", "bad bad bad bad bad bad"]]
    packed = preprocessor((contexts, choices))
    full = FullTokenizer(str(tmp_path / "vocab.txt"))
    for row, (context, endings) in enumerate(zip(contexts, choices)):
        record = convert_example(MultipleChoiceExample("x", context, tuple(endings)), 8, full)
        width = packed["input_word_ids"].shape[-1]
        expected = np.reshape(record["input_ids"], (3, 8))[:, :width]
        np.testing.assert_array_equal(packed["input_word_ids"][row], expected)
    model.compile(learning_rate=1e-3)
    history = model.fit((contexts * 4, choices * 4), [0, 2] * 4, batch_size=4, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    assert model.predict((contexts, choices), verbose=0).shape == (2, 3)
    classifier = bert_tf.BertClassifier(tiny_config, 2, preprocessor=preprocessor)
    with pytest.raises(InputError, match="not raw \\(contexts, choices\\)"):
        classifier.predict((contexts, choices))


def test_crf_tagger_keras_file_keeps_its_transitions_and_loss(tiny_config, tmp_path):
    """A compiled `use_crf` tagger's `.keras` file loads with its CRF and its
    `CrfLoss` bound to that CRF (the same loss)."""
    inputs = random_inputs(tiny_config, batch=2, seq=6, lengths=[6, 4])
    labels = np.where(inputs["input_mask"] > 0, np.arange(6) % 3, -1)
    model = bert_tf.BertTokenClassifier(tiny_config, 3, use_crf=True)
    model.crf.transitions.assign(np.random.default_rng(1).normal(size=(3, 3)))
    model.compile()
    path = str(tmp_path / "crf.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(loaded.crf.transitions.numpy(), model.crf.transitions.numpy())
    losses = [
        float(m.compute_loss(inputs, labels, m(inputs, training=False), None, training=False))
        for m in (model, loaded)
    ]
    assert losses[0] == losses[1] and losses[0] > 0


@pytest.mark.large
def test_span_labeler_windows_take_the_models_length(tiny_config, tmp_path):
    """`answer` and `export_span_labeler` on a model of 128 positions use
    windows of 128 (its preprocessor's length), not run_squad.py's 384, and
    refuse more than the model's positions."""
    from bert_tf.export.squad import answer, export_span_labeler

    config = dataclasses.replace(tiny_config, max_position_embeddings=128)
    preprocessor = bert_tf.BertPreprocessor(tiny_tokenizer(tmp_path), max_seq_length=128)
    labeler = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
    context = " ".join(["good film"] * 100)  # 200 tokens: two windows of 128
    with pytest.raises(InputError, match="max_seq_length=384 exceeds the 128 positions"):
        answer(labeler, ["good?"], [context], max_seq_length=384)
    found = answer(labeler, ["good?"], [context])[0]
    assert context[found["start_char"] : found["end_char"]] == found["answer"] != ""
    export_dir = str(tmp_path / "squad")
    export_span_labeler(labeler, export_dir)
    serving_ids = tf.saved_model.load(export_dir).signatures["serving_ids"]
    assert serving_ids.structured_input_signature[1]["input_word_ids"].shape == [None, 128]


def test_span_labeler_settings_are_the_defaults_of_what_serves_it(tiny_config, tmp_path):
    """`answer`, `export_span_labeler` and `predict` take the labeler's own
    settings; `max_query_length` and `doc_stride` it was not given follow its
    length: a sixth and a third (10 and 21 of 64; run_squad.py's 64 and 128 of
    384)."""
    from bert_tf.export.squad import answer, export_span_labeler

    keras.utils.set_random_seed(2)
    config = dataclasses.replace(tiny_config, max_position_embeddings=64)
    preprocessor = bert_tf.BertPreprocessor(tiny_tokenizer(tmp_path), max_seq_length=64)
    labeler = bert_tf.BertSpanLabeler(
        config, preprocessor=preprocessor, max_query_length=24, doc_stride=32
    )
    questions = [" ".join(f"w{i}" for i in range(30)) + " good"]  # 31 tokens, cut
    contexts = [" ".join(["good film", "bad films"] * 40)]  # 200 tokens: several windows
    x = (questions, contexts)

    def score(answers):
        return answers[0]["score"]

    own = answer(labeler, *x)
    np.testing.assert_allclose(score(own), score(labeler.predict(x, verbose=0)), rtol=1e-5)
    export_dir = str(tmp_path / "squad")
    export_span_labeler(labeler, export_dir)
    np.testing.assert_allclose(score(answer(export_dir, *x)), score(own), rtol=1e-5)
    # Other settings answer otherwise: those of a labeler given none.
    derived = answer(labeler, *x, max_query_length=10, doc_stride=21)
    assert derived[0]["start_char"] != own[0]["start_char"]
    plain = bert_tf.BertSpanLabeler(config, preprocessor=preprocessor)
    plain.set_weights(labeler.get_weights())
    assert answer(plain, *x) == derived
    np.testing.assert_allclose(score(plain.predict(x, verbose=0)), score(derived), rtol=1e-5)


def test_classifier_fits_on_label_names_with_validation_split_and_keeps_them(tiny_config, tmp_path):
    """String labels given to `fit` name the classes (sorted), in the
    `.keras` file, `predict_labels`, `evaluate` and the exported SavedModel's
    `labels`; names given at construction fix the order. On raw text,
    `validation_split` validates on the last rows, as Keras cuts arrays."""
    preprocessor = bert_tf.BertPreprocessor(tiny_tokenizer(tmp_path), max_seq_length=16)
    texts = ["good film", "bad film", "good w1", "bad w2", "w3 w4 w5 w6 w7 w8 w9"]
    labels = ["pos", "neg", "pos", "neg", "neg"]
    model = bert_tf.BertClassifier(tiny_config, num_labels=2, preprocessor=preprocessor)
    model.compile(learning_rate=1e-3)
    history = model.fit(texts, labels, validation_split=0.2, batch_size=4, verbose=0)
    assert model.label_names == ("neg", "pos")
    validation = model.evaluate(texts[4:], labels[4:], verbose=0)
    np.testing.assert_allclose(history.history["val_loss"][0], validation[0], rtol=1e-5)
    path = str(tmp_path / "classifier.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert loaded.label_names == ("neg", "pos")
    predicted = loaded.predict_labels(texts)
    ids = np.argmax(loaded.predict(texts, verbose=0), axis=1)
    assert predicted == [("neg", "pos")[i] for i in ids]
    export_dir = str(tmp_path / "export")
    export_classifier(loaded, export_dir)
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        text_a=tf.constant(texts)
    )
    assert [name.decode() for name in served["labels"].numpy()] == predicted

    with pytest.raises(InputError, match="y: unknown label 'meh'; the labels are neg, pos"):
        model.fit(texts, ["pos", "meh", "pos", "neg", "neg"], verbose=0)
    named = bert_tf.BertClassifier(tiny_config, 2, label_names=["pos", "neg"])
    assert named.get_config()["label_names"] == ["pos", "neg"]
    with pytest.raises(InputError, match="3 label_names for num_labels=2"):
        bert_tf.BertClassifier(tiny_config, 2, label_names=["a", "b", "c"])
    with pytest.raises(InputError, match="y has 1 distinct labels for num_labels=2"):
        bert_tf.BertClassifier(tiny_config, 2, preprocessor=preprocessor).fit(texts, ["a"] * 5)


def test_save_without_the_optimizer_state(tiny_config, tmp_path):
    """`save(path, include_optimizer=False)` leaves AdamW's slots (two per
    weight) out: the file loads uncompiled, with the same predictions; the
    model keeps its optimizer."""
    preprocessor = bert_tf.BertPreprocessor(tiny_tokenizer(tmp_path), max_seq_length=16)
    model = bert_tf.BertClassifier(
        tiny_config, label_names=["neg", "pos"], preprocessor=preprocessor
    )
    model.compile()
    model.optimizer.build(model.trainable_variables)
    full, light = str(tmp_path / "full.keras"), str(tmp_path / "light.keras")
    model.save(full)
    model.save(light, include_optimizer=False)
    assert model.compiled and model.optimizer.built
    for path, has_optimizer in ((full, True), (light, False)):
        with zipfile.ZipFile(path) as archive, archive.open("model.weights.h5") as f:
            assert ("optimizer" in h5py.File(f, "r")) == has_optimizer, path
    assert os.path.getsize(light) < 0.6 * os.path.getsize(full)
    loaded = keras.saving.load_model(light)
    assert not loaded.compiled and loaded.label_names == ("neg", "pos")
    texts = ["good film", "bad w1"]
    np.testing.assert_array_equal(loaded.predict(texts, verbose=0), model.predict(texts, verbose=0))


def test_a_slow_first_training_step_says_what_it_is(tiny_config, monkeypatch, capsys):
    """Tracing and optimizing the train step, once per fit, takes seconds (13 at
    MiniLM): past `AFTER_SECONDS` a line says so; a quick first step says nothing."""
    from bert_tf.modeling import first_step

    model = bert_tf.BertClassifier(tiny_config, num_labels=2)
    model.compile()
    inputs, labels = random_inputs(tiny_config, batch=2, seq=6), np.array([0, 1])
    monkeypatch.setattr(first_step, "AFTER_SECONDS", 0.0)
    model.fit(inputs, labels, verbose=2)
    said = capsys.readouterr().out
    assert said.count("first training step: TensorFlow traces") == 1, said
    monkeypatch.undo()
    model.fit(inputs, labels, verbose=2)  # traced already
    assert "first training step" not in capsys.readouterr().out


def test_from_pretrained_of_a_path_without_a_checkpoint_says_so(tmp_path):
    with pytest.raises(CheckpointError, match=r"^no checkpoint at '/no/such/folder' \(expected"):
        bert_tf.BertClassifier.from_pretrained("/no/such/folder", num_labels=2)
    (tmp_path / "classifier.keras").write_text("x")
    with pytest.raises(CheckpointError, match="is a Keras model file"):
        bert_tf.BertClassifier.from_pretrained(str(tmp_path / "classifier.keras"), num_labels=2)
