"""`bert_tf.Distiller`: a student task model taught by a teacher through
Keras's `compile` / `fit`, its loss against numpy, on packed inputs and raw
text, and its student saved like any task model."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf
from shared import random_inputs

import bert_tf
from bert_tf.errors import InputError

T, WEIGHT = 2.0, 0.7


def log_softmax(x):
    x = np.asarray(x, np.float64)
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def models(config, num_labels=3, preprocessor=None):
    keras.utils.set_random_seed(5)
    teacher = bert_tf.BertClassifier(config, num_labels, preprocessor=preprocessor)
    small = dataclasses.replace(config, num_hidden_layers=1)
    student = bert_tf.BertClassifier(small, num_labels, preprocessor=preprocessor)
    # A teacher sure of its answers, not as near uniform as a new head's.
    weights = teacher.classifier.output_weights
    weights.assign(weights * 100.0)
    return teacher, student


def test_the_loss_mixes_the_softened_kl_and_the_labels_loss(tiny_config):
    teacher, student = models(tiny_config)
    distiller = bert_tf.Distiller(student, teacher, temperature=T, distillation_weight=WEIGHT)
    distiller.compile()
    x = random_inputs(tiny_config, batch=4, seq=10, lengths=[10, 8, 5, 3])
    y = np.array([0, 2, 1, 2])
    t, s = teacher(x, training=False).numpy(), student(x, training=False).numpy()
    p, q = log_softmax(t / T), log_softmax(s / T)
    distilled = T * T * np.mean(np.sum(np.exp(p) * (p - q), axis=-1))
    labels = -np.mean(log_softmax(s)[np.arange(4), y])
    got = distiller.evaluate(x, y, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(got["loss"], WEIGHT * distilled + (1 - WEIGHT) * labels, rtol=1e-5)
    # Without labels: the distillation alone.
    got = distiller.evaluate(x, None, batch_size=4, verbose=0, return_dict=True)
    np.testing.assert_allclose(got["loss"], distilled, rtol=1e-5)


@pytest.mark.large
def test_fit_on_raw_text_trains_the_student_only_and_it_saves_as_a_task_model(
    tiny_config, tmp_path
):
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "good", "bad", "film"]
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(tokens + [f"w{i}" for i in range(89)]) + "\n")
    preprocessor = bert_tf.BertPreprocessor(bert_tf.BertTokenizer(str(vocab)), max_seq_length=12)
    teacher, student = models(tiny_config, 2, preprocessor)
    before = [w.numpy().copy() for w in teacher.weights]
    distiller = bert_tf.Distiller(student, teacher, temperature=T)
    distiller.compile(learning_rate=1e-3)
    texts = ["good film", "bad film w3", "w7 good", "bad w1 w2"] * 4
    labels = np.array([1, 0, 1, 0] * 4)
    start = distiller.evaluate(texts, None, batch_size=8, verbose=0, return_dict=True)["loss"]
    distiller.fit(texts, labels, batch_size=8, epochs=2, verbose=0)
    distiller.fit(texts, None, batch_size=8, epochs=8, verbose=0)  # text the teacher labels
    end = distiller.evaluate(texts, None, batch_size=8, verbose=0, return_dict=True)["loss"]
    assert end < 0.5 * start, (start, end)
    for old, new in zip(before, teacher.weights):
        np.testing.assert_array_equal(old, new.numpy())
    path = str(tmp_path / "student.keras")
    student.save(path)
    loaded = keras.saving.load_model(path)
    np.testing.assert_allclose(
        loaded.predict(texts[:4], verbose=0), student.predict(texts[:4], verbose=0), atol=1e-6
    )


def test_a_distillation_weight_outside_0_1_is_refused(tiny_config):
    teacher, student = models(tiny_config)
    with pytest.raises(ValueError, match="distillation_weight must be in"):
        bert_tf.Distiller(student, teacher, distillation_weight=1.5)
    with pytest.raises(ValueError, match="temperature must be > 0"):
        bert_tf.Distiller(student, teacher, temperature=0.0)
    assert tf.is_tensor(teacher(random_inputs(tiny_config), training=False))


def test_a_teacher_of_another_task_or_labels_is_refused(tiny_config):
    """As the scripts refuse such a --teacher: in the constructor, not at fit."""
    teacher, student = models(tiny_config)
    tagger = bert_tf.BertTokenClassifier(tiny_config, 3)
    with pytest.raises(
        InputError,
        match="^Distiller: the teacher is a BertTokenClassifier, the student a "
        "BertClassifier: they must be models of the same task$",
    ):
        bert_tf.Distiller(student, tagger)
    with pytest.raises(InputError, match="^Distiller: the teacher's num_labels 2 differ"):
        bert_tf.Distiller(student, bert_tf.BertClassifier(tiny_config, 2))
    named = [bert_tf.BertClassifier(tiny_config, label_names=n) for n in ("abc", "bca")]
    with pytest.raises(InputError, match="teacher's label_names \\('b', 'c', 'a'\\) differ"):
        bert_tf.Distiller(named[0], named[1])
