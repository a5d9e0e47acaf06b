"""Dynamic padding: batches cut to their longest example, grouping by length,
and results equal to padding every batch to max_seq_length."""

import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from shared import HANG_TIMEOUT
from tensorflow.core.protobuf import saved_model_pb2

from bert_tf.data.classification import features as cf
from bert_tf.data.features import SORT_WINDOW_BATCHES, trim_to_longest
from bert_tf.export import export_classifier
from bert_tf.modeling import BertClassifier
from bert_tf.optimization import create_optimizer
from bert_tf.tasks.logits import ClassificationObjective
from bert_tf.text import tokenization
from bert_tf.text.packing import pack_inputs
from bert_tf.training.loop import LoopConfig, Trainer

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

MAX_SEQ_LENGTH = 40


def write_records(path, lengths, padding=0):
    """Classifier records whose example i has `lengths[i]` real tokens (ids
    i * 1000 + position) and `padding` all-zero padding records after them."""
    features = []
    for index, length in enumerate(lengths):
        ids = [index * 1000 + p + 1 for p in range(length)] + [0] * (MAX_SEQ_LENGTH - length)
        mask = [1] * length + [0] * (MAX_SEQ_LENGTH - length)
        features.append(
            cf.InputFeatures(ids, mask, [0] * MAX_SEQ_LENGTH, index % 2, example_index=index)
        )
    features += [cf.padding_features(MAX_SEQ_LENGTH)] * padding
    with tf.io.TFRecordWriter(str(path)) as writer:
        for f in features:
            writer.write(cf.serialize_features(f))


def read(path, batch_size, **kwargs):
    return [
        {k: v.numpy() for k, v in batch.items()}
        for batch in cf.make_dataset(str(path), MAX_SEQ_LENGTH, batch_size, False, **kwargs)
    ]


def test_batches_are_cut_to_their_longest_example_rounded_up(tmp_path):
    lengths = [3, 5, 9, 2, 17, 4, 40, 6, 1, 8, 11, 7]
    write_records(tmp_path / "r", lengths)
    full = read(tmp_path / "r", 4)
    trimmed = read(tmp_path / "r", 4, length_multiple=8)
    assert [b["input_word_ids"].shape for b in full] == [(4, MAX_SEQ_LENGTH)] * 3
    assert [b["input_word_ids"].shape[1] for b in trimmed] == [16, 40, 16]
    for f, t in zip(full, trimmed):
        length = t["input_mask"].shape[1]
        for key in ("input_word_ids", "input_mask", "input_type_ids"):
            np.testing.assert_array_equal(t[key], f[key][:, :length])
            assert not f[key][:, length:].any()
        np.testing.assert_array_equal(t["example_index"], f["example_index"])
    # A batch of padding records only still keeps one multiple.
    batch = {"input_mask": tf.zeros([2, 40], tf.int32), "x": tf.ones([2, 40])}
    cut = trim_to_longest(batch, 8, ("input_mask",))
    assert cut["input_mask"].shape == (2, 8) and cut["x"].shape == (2, 40)


def test_grouping_sorts_within_windows_and_keeps_every_record(tmp_path):
    rng = np.random.default_rng(0)
    batch_size = 4
    num = batch_size * SORT_WINDOW_BATCHES + 3 * batch_size - 2
    lengths = rng.integers(1, MAX_SEQ_LENGTH + 1, num).tolist()
    write_records(tmp_path / "r", lengths, padding=2)
    batches = read(tmp_path / "r", batch_size, length_multiple=8, group_by_length=True)
    index = np.concatenate([b["example_index"] for b in batches])
    real = np.concatenate([b["is_real_example"] for b in batches]) == 1
    assert sorted(index[real]) == list(range(num)) and (index[~real] == -1).all()
    window = batch_size * SORT_WINDOW_BATCHES
    got = [int(b["input_mask"][i].sum()) for b in batches for i in range(batch_size)]
    assert got[:window] == sorted(lengths[:window])
    for b in batches:
        longest = b["input_mask"].sum(axis=1).max()
        assert b["input_mask"].shape[1] == min(MAX_SEQ_LENGTH, max(8, -(-longest // 8) * 8))
        ids = b["input_word_ids"]
        for row, i in enumerate(b["example_index"]):
            if i >= 0:
                n = lengths[i]
                np.testing.assert_array_equal(ids[row, :n], i * 1000 + np.arange(1, n + 1))


def test_training_groups_shuffle_batches_of_similar_length(tmp_path):
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, MAX_SEQ_LENGTH + 1, 300).tolist()
    write_records(tmp_path / "r", lengths)
    dataset = cf.make_dataset(
        str(tmp_path / "r"),
        MAX_SEQ_LENGTH,
        4,
        True,
        seed=1,
        length_multiple=8,
        group_by_length=True,
    )
    widths = [b["input_mask"].shape[1] for b in dataset.take(60)]
    assert len(set(widths)) > 1 and widths != sorted(widths)
    spreads = [np.ptp(b["input_mask"].numpy().sum(1)) for b in dataset.take(60)]
    assert np.mean(spreads) < 8  # random batches of 4 would spread ~20 tokens


def test_model_outputs_do_not_depend_on_trailing_padding(tiny_config):
    """The attention mask makes the cut positions inert for a [CLS] head."""
    from shared import random_inputs

    model = BertClassifier(tiny_config, 3)
    inputs = random_inputs(
        tiny_config, batch=3, seq=tiny_config.max_position_embeddings, lengths=[5, 9, 2]
    )
    full = model(inputs, training=False).numpy()
    short = model({k: v[:, :16] for k, v in inputs.items()}, training=False).numpy()
    np.testing.assert_allclose(short, full, atol=1e-5)


def fit_tiny_model(dataset):
    """The tiny configs have 24 positions (no test record is longer) and 97 ids."""
    return dataset.map(
        lambda b: {
            **{k: v[:, :24] if v.shape.rank == 2 else v for k, v in b.items()},
            "input_word_ids": b["input_word_ids"][:, :24] % 89,
        }
    )


def test_trainer_predicts_the_same_with_grouped_short_batches(tmp_path, tiny_config):
    rng = np.random.default_rng(2)
    write_records(tmp_path / "r", rng.integers(1, 25, 40).tolist())
    model = BertClassifier(tiny_config, 2)
    trainer = Trainer(
        tf.distribute.get_strategy(),
        None,
        model,
        None,
        LoopConfig(output_dir=str(tmp_path / "out"), num_train_steps=1),
    )

    def predict(**kwargs):
        def dataset_fn(context):
            return fit_tiny_model(
                cf.make_dataset(
                    str(tmp_path / "r"), MAX_SEQ_LENGTH, 4, False, input_context=context, **kwargs
                )
            )

        out = trainer.predict(dataset_fn, passthrough=("example_index",))
        return out["logits"][np.argsort(out["example_index"])]

    np.testing.assert_allclose(
        predict(length_multiple=8, group_by_length=True), predict(), atol=1e-5
    )


def test_xla_prediction_equals_the_uncompiled_one(tmp_path, tiny_config):
    """With inference_jit_compile (--jit_compile) predict runs the model
    through XLA, one program per batch length, with the same results."""
    rng = np.random.default_rng(5)
    write_records(tmp_path / "r", rng.integers(1, 25, 40).tolist())
    model = BertClassifier(tiny_config, 2)

    def dataset_fn(context):
        return fit_tiny_model(
            cf.make_dataset(
                str(tmp_path / "r"),
                MAX_SEQ_LENGTH,
                4,
                False,
                input_context=context,
                length_multiple=8,
                group_by_length=True,
            )
        )

    spec = {
        k: tf.TensorSpec([None, None], tf.int32)
        for k in ("input_word_ids", "input_mask", "input_type_ids")
    }
    results = {}
    for xla in (False, True):
        trainer = Trainer(
            tf.distribute.get_strategy(),
            None,
            model,
            None,
            LoopConfig(
                output_dir=str(tmp_path / "out"), num_train_steps=1, inference_jit_compile=xla
            ),
        )
        out = trainer.predict(dataset_fn, passthrough=("example_index",))
        results[xla] = out["logits"][np.argsort(out["example_index"])]
        traced = trainer._infer.get_concrete_function(spec)  # noqa: SLF001
        assert traced.function_def.attr["_XlaMustCompile"].b == xla
    np.testing.assert_allclose(results[True], results[False], atol=1e-5)


def test_xla_training_on_short_batches_equals_padded_training(tmp_path, tiny_config):
    """Same batches (same seed), cut or not: the same losses and weights, with
    the train step compiled by XLA for each batch length."""
    rng = np.random.default_rng(4)
    write_records(tmp_path / "r", rng.integers(1, 25, 64).tolist())

    def train(length_multiple):
        keras.utils.set_random_seed(0)
        model = BertClassifier(tiny_config, 2)
        trainer = Trainer(
            tf.distribute.get_strategy(),
            ClassificationObjective(False),
            model,
            create_optimizer("adamw", 1e-3, 6, 0),
            LoopConfig(
                output_dir=str(tmp_path / f"out{length_multiple}"),
                num_train_steps=6,
                jit_compile=True,
            ),
        )

        def dataset_fn(context):
            return fit_tiny_model(
                cf.make_dataset(
                    str(tmp_path / "r"),
                    MAX_SEQ_LENGTH,
                    8,
                    True,
                    input_context=context,
                    seed=1,
                    length_multiple=length_multiple,
                )
            )

        iterator = iter(trainer.distribute(dataset_fn))
        losses = [trainer.train_steps(iterator, 1)["loss"] for _ in range(6)]
        # One trace for every batch length (XLA compiles one program per length).
        assert trainer._train_loop.experimental_get_tracing_count() == 1  # noqa: SLF001
        return losses, [v.numpy() for v in model.trainable_variables]

    padded_losses, padded_weights = train(None)
    losses, weights = train(8)
    np.testing.assert_allclose(losses, padded_losses, atol=1e-5)
    for got, expected in zip(weights, padded_weights):
        np.testing.assert_allclose(got, expected, atol=1e-5)


MIRRORED = """
import sys
import numpy as np
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from test_dynamic_padding import MAX_SEQ_LENGTH, fit_tiny_model
from bert_tf.config import BertConfig
from bert_tf.data.classification import features as cf
from bert_tf.modeling import BertClassifier
from bert_tf.training.loop import LoopConfig, Trainer
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    model = BertClassifier(BertConfig(vocab_size=97, hidden_size=32, num_hidden_layers=2,
                                      num_attention_heads=4, intermediate_size=64,
                                      max_position_embeddings=24), 2)
trainer = Trainer(strategy, None, model, None, LoopConfig(output_dir=sys.argv[2],
                                                          num_train_steps=1))
def predict(**kwargs):
    def dataset_fn(context):
        return fit_tiny_model(cf.make_dataset(sys.argv[1], MAX_SEQ_LENGTH, 8, False,
                                              input_context=context, **kwargs))
    widths = set()
    for batch in trainer.predict_batches(dataset_fn, ("example_index", "input_mask")):
        widths.add(batch["input_mask"].shape[1])
    out = trainer.predict(dataset_fn, passthrough=("example_index",))
    return out["logits"][np.argsort(out["example_index"])], widths
short, widths = predict(length_multiple=4, group_by_length=True)
padded, _ = predict()
assert len(widths) > 2, widths
np.testing.assert_allclose(short, padded, atol=1e-5)
print("ok", sorted(widths))
"""


def test_mirrored_replicas_get_batches_of_different_lengths(tmp_path):
    rng = np.random.default_rng(5)
    write_records(tmp_path / "r", rng.integers(1, 25, 48).tolist())
    tests = os.path.dirname(__file__)
    env = {
        **os.environ,
        "PYTHONPATH": f"{tests}:{os.path.dirname(tests)}",
        "TF_CPP_MIN_LOG_LEVEL": "2",
    }
    result = subprocess.run(
        [sys.executable, "-c", MIRRORED, str(tmp_path / "r"), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert result.returncode == 0 and "ok" in result.stdout, result.stderr[-3000:]


WORDS = ["good", "bad", "movie", "film", "plot", "actor", "the", "a", "was", "is", "very"]


def test_exported_classifier_pads_a_request_to_its_longest_example(tmp_path, tiny_config):
    """Short sentences through the raw-text signature (packed to their own
    length in the graph) give the probabilities of padding to max_seq_length."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", ".", *WORDS]) + "\n")
    max_seq_length = tiny_config.max_position_embeddings
    model = BertClassifier(tiny_config, 3)
    export_dir = str(tmp_path / "export")
    export_classifier(model, export_dir, str(vocab), True, max_seq_length, sentence_pairs=True)
    rng = np.random.default_rng(3)
    pairs = [
        (
            " ".join(rng.choice(WORDS, rng.integers(1, 5))),
            " ".join(rng.choice(WORDS, rng.integers(0, 4))),
        )
        for _ in range(6)
    ]
    tokenizer = tokenization.FullTokenizer(str(vocab), do_lower_case=True)
    packed = [
        pack_inputs(
            *(tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)) for t in pair),
            max_seq_length,
            2,
            3,
        )
        for pair in pairs
    ]
    ids = {k: tf.constant([p[k] for p in packed], tf.int32) for k in packed[0]}
    assert max(sum(p["input_mask"]) for p in packed) < max_seq_length / 2

    loaded = tf.saved_model.load(export_dir)
    served = loaded.signatures["serving_default"](
        text_a=tf.constant([a for a, _ in pairs]), text_b=tf.constant([b for _, b in pairs])
    )
    padded = loaded.signatures["serving_ids"](**ids)
    np.testing.assert_allclose(served["probabilities"], padded["probabilities"], atol=1e-6)
    # The text signature's graph leaves the sequence length open (the model
    # runs at the request's length); the ids signature's is max_seq_length.
    hidden = tiny_config.hidden_size
    assert _embedding_shapes(loaded, "serving_default") == {(None, None, hidden)}
    assert _embedding_shapes(loaded, "serving_ids") == {(None, max_seq_length, hidden)}


def test_exported_classifier_compiled_with_xla_serves_the_model_s_probabilities(
    tmp_path, tiny_config
):
    """--jit_compile exports the model call compiled with XLA; requests are
    padded to a multiple of 16 tokens (few programs) with the same results."""
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", ".", *WORDS]) + "\n")
    max_seq_length = tiny_config.max_position_embeddings
    model = BertClassifier(tiny_config, 3)
    export_dir = tmp_path / "export"
    export_classifier(
        model,
        str(export_dir),
        str(vocab),
        True,
        max_seq_length,
        sentence_pairs=False,
        jit_compile=True,
    )
    saved = saved_model_pb2.SavedModel.FromString((export_dir / "saved_model.pb").read_bytes())
    library = saved.meta_graphs[0].graph_def.library.function
    assert any(f.attr["_XlaMustCompile"].b for f in library)
    texts = [" ".join(np.random.default_rng(i).choice(WORDS, 1 + 3 * i)) for i in range(5)]
    tokenizer = tokenization.FullTokenizer(str(vocab), do_lower_case=True)
    ids = [
        pack_inputs(
            tokenizer.convert_tokens_to_ids(tokenizer.tokenize(t)), [], max_seq_length, 2, 3
        )
        for t in texts
    ]
    expected = tf.nn.softmax(
        model({k: tf.constant([p[k] for p in ids]) for k in ids[0]}, training=False)
    )
    loaded = tf.saved_model.load(str(export_dir))
    served = loaded.signatures["serving_default"](text_a=tf.constant(texts))
    np.testing.assert_allclose(served["probabilities"], expected, atol=1e-5)


def _embedding_shapes(loaded, signature):
    """Shapes of the `[batch, seq, hidden]` gathers (embedding lookups) in the
    functions a signature calls."""
    shapes, pending, seen = set(), [loaded.signatures[signature].graph], set()
    while pending:
        for name, function in pending.pop()._functions.items():  # noqa: SLF001
            if name in seen or not hasattr(function, "graph"):
                continue
            seen.add(name)
            pending.append(function.graph)
            shapes |= {
                tuple(op.outputs[0].shape.as_list())
                for op in function.graph.get_operations()
                if op.type in ("GatherV2", "ResourceGather") and op.outputs[0].shape.rank == 3
            }
    return shapes


def test_padding_multiple_defaults_to_8_and_to_16_under_xla():
    from types import SimpleNamespace

    from bert_tf.tasks.model_setup import length_multiple

    def multiple(padding_multiple=None, jit_compile=False, dynamic_padding=True):
        model = SimpleNamespace(dynamic_padding=dynamic_padding, padding_multiple=padding_multiple)
        options = SimpleNamespace(model=model)
        return length_multiple(options, tf.distribute.get_strategy(), jit_compile)

    assert (multiple(), multiple(jit_compile=True)) == (8, 16)
    assert (multiple(4), multiple(4, jit_compile=True)) == (4, 4)
    assert multiple(dynamic_padding=False) is None
