"""Classifier SavedModels other than MRPC's (see test_run_classifier): a
single-sentence regression model, then replaced by a pair classifier with
overwrite; both checked against the float64 numpy reference."""

import numpy as np
import numpy_bert
import pytest
import tensorflow as tf
from shared import tiny_model_files, with_random_weights

from bert_tf.config import BertConfig
from bert_tf.errors import InputError
from bert_tf.export.classifier import export_classifier
from bert_tf.modeling import BertClassifier
from bert_tf.text.tokenization import FullTokenizer

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    ".",
    "good",
    "bad",
    "movie",
    "the",
    "was",
    "very",
    "##s",
]
TEXTS = ["The movie was very good.", "Bad movies.", "good", "The the the bad bad good movie."]
SEQ = 20


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    vocab, config_file = tiny_model_files(str(root), WORDS, max_position_embeddings=SEQ)
    return vocab, BertConfig.from_json_file(config_file), root


def features(vocab, texts_a, texts_b=None):
    """The original packing of `[CLS] a [SEP] (b [SEP])`, padded to SEQ."""
    tokenizer = FullTokenizer(vocab, do_lower_case=True)
    rows = []
    for i, a in enumerate(texts_a):
        first = ["[CLS]", *tokenizer.tokenize(a), "[SEP]"]
        second = [*tokenizer.tokenize(texts_b[i]), "[SEP]"] if texts_b else []
        pad = [0] * (SEQ - len(first) - len(second))
        rows.append(
            (
                tokenizer.convert_tokens_to_ids(first + second) + pad,
                [1] * (len(first) + len(second)) + pad,
                [0] * len(first) + [1] * len(second) + pad,
            )
        )
    return {
        name: np.array([row[i] for row in rows], np.int32)
        for i, name in enumerate(("input_word_ids", "input_mask", "input_type_ids"))
    }


def test_single_sentence_regression_export_and_overwrite(setup):
    vocab, config, root = setup
    model = BertClassifier(config, num_labels=1)
    weights = with_random_weights(model)
    export_dir = str(root / "export")
    export_classifier(model, export_dir, vocab, True, SEQ, sentence_pairs=False, is_regression=True)
    inputs = features(vocab, TEXTS)
    expected = numpy_bert.classifier(weights, config, inputs)[:, 0]
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    assert set(serve.structured_input_signature[1]) == {"text_a"}
    served = serve(text_a=tf.constant(TEXTS))
    np.testing.assert_allclose(served["predictions"].numpy(), expected, atol=2e-5)
    by_ids = loaded.signatures["serving_ids"](**{k: tf.constant(v) for k, v in inputs.items()})
    np.testing.assert_allclose(by_ids["predictions"].numpy(), expected, atol=2e-5)
    # Each weight is stored once (Keras's `ExportArchive.track(model)` stores it twice).
    stored = tf.train.load_checkpoint(f"{export_dir}/variables/variables")
    shapes = stored.get_variable_to_shape_map()
    values = sum(int(np.prod(shapes[key])) for key in shapes if key.endswith("VARIABLE_VALUE"))
    assert values == model.count_params()
    assert sum(int(np.prod(v.shape)) for v in loaded.variables) == model.count_params()
    assert len(loaded.trainable_variables) == len(model.trainable_variables)

    # A sentence-pair classifier replaces it only with overwrite.
    pairs = BertClassifier(config, num_labels=3)
    weights = with_random_weights(pairs, seed=2)
    with pytest.raises(InputError, match="--export_dir .*export' already exists; pass --overwrite"):
        export_classifier(pairs, export_dir, vocab, True, SEQ, sentence_pairs=True)
    names = ["contradiction", "entailment", "neutral"]
    export_classifier(
        pairs, export_dir, vocab, True, SEQ, sentence_pairs=True, overwrite=True, label_names=names
    )
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        text_a=tf.constant(TEXTS), text_b=tf.constant(TEXTS[::-1])
    )
    expected = numpy_bert.softmax(
        numpy_bert.classifier(weights, config, features(vocab, TEXTS, TEXTS[::-1]))
    )
    np.testing.assert_allclose(served["probabilities"].numpy(), expected, atol=2e-5)
    assert served["label_ids"].numpy().tolist() == expected.argmax(1).tolist()
    assert [label.decode() for label in served["labels"].numpy()] == [
        names[i] for i in expected.argmax(1)
    ]
    assert "labels" not in by_ids  # regression: no label names
