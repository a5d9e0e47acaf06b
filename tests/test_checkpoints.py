import os

import keras
import numpy as np
import pytest
import tensorflow as tf
from model_garden import copy_to_model_garden, model_garden_encoder
from original_bert import encoder_variables, pretraining_head_variables
from shared import random_inputs

import bert_tf
from bert_tf import checkpoints
from bert_tf.errors import CheckpointError
from bert_tf.modeling import BertClassifier, BertEncoder, BertPretrainingModel
from bert_tf.optimization import create_optimizer
from bert_tf.training.checkpoint_manager import CheckpointManager


def original_variables(config):
    """`{name: shape}` of an original BERT pre-training checkpoint."""
    names = {**encoder_variables(config), **pretraining_head_variables(config)}
    return {name: list(shape) for name, shape in names.items()}


def pretraining_inputs(config):
    return dict(random_inputs(config), masked_lm_positions=np.array([[1, 2]] * 3, np.int32))


def assert_same_outputs(a, b, inputs, tol=0.0):
    for x, y in zip(tf.nest.flatten(a(inputs)), tf.nest.flatten(b(inputs))):
        assert np.max(np.abs(np.asarray(x) - np.asarray(y))) <= tol


def test_tf1_save_writes_the_original_names_and_reloads_identically(tiny_config, tmp_path):
    model = BertPretrainingModel(tiny_config)
    prefix = checkpoints.save_tf1_checkpoint(model, str(tmp_path / "bert_model.ckpt"))
    written = dict(tf.train.list_variables(prefix))
    assert written == original_variables(tiny_config)

    reloaded = BertPretrainingModel(tiny_config)
    report = checkpoints.load_checkpoint(reloaded, prefix)
    assert report.left_initialised == [] and report.unused == []
    assert_same_outputs(model, reloaded, pretraining_inputs(tiny_config))


def write_tf1_checkpoint_in_graph_mode(weights, prefix):
    """Writes `weights` with a TF1 Saver, as the original training code did,
    including the optimizer state it kept next to the weights."""
    with tf.Graph().as_default():
        variables = [tf.compat.v1.Variable(v, name=n) for n, v in weights.items()]
        variables.append(tf.compat.v1.Variable(7, dtype=tf.int64, name="global_step"))
        for name, value in list(weights.items())[:3]:
            variables.append(tf.compat.v1.Variable(np.zeros_like(value), name=f"{name}/adam_m"))
            variables.append(tf.compat.v1.Variable(np.zeros_like(value), name=f"{name}/adam_v"))
        saver = tf.compat.v1.train.Saver(variables)
        with tf.compat.v1.Session() as session:
            session.run(tf.compat.v1.global_variables_initializer())
            return saver.save(session, prefix)


def test_reads_a_checkpoint_written_by_a_tf1_saver(tiny_config, tmp_path):
    rng = np.random.default_rng(3)
    weights = {
        name: rng.normal(size=shape).astype(np.float32)
        for name, shape in original_variables(tiny_config).items()
    }
    prefix = write_tf1_checkpoint_in_graph_mode(weights, str(tmp_path / "model.ckpt"))
    (tmp_path / "bert_config.json").write_text(tiny_config.to_json_string())

    loaded = bert_tf.from_pretrained(str(tmp_path))  # a directory works too
    assert loaded.pretraining_model is not None
    variables = checkpoints.tf1_variable_map(loaded.pretraining_model)
    for name, value in weights.items():
        np.testing.assert_array_equal(variables[name].numpy(), value)
    assert loaded.encoder is loaded.pretraining_model.encoder
    assert prefix.startswith(str(tmp_path))


def test_encoder_only_checkpoint_gives_an_encoder(tiny_config, tmp_path):
    encoder = BertEncoder(tiny_config)
    prefix = checkpoints.save_tf1_checkpoint(encoder, str(tmp_path / "bert_model.ckpt"))
    config_file = tmp_path / "config.json"
    config_file.write_text(tiny_config.to_json_string())
    loaded = bert_tf.from_pretrained(prefix, str(config_file))
    assert loaded.pretraining_model is None
    assert_same_outputs(encoder, loaded.encoder, random_inputs(tiny_config))


@pytest.mark.parametrize("v2", [False, True], ids=["BertEncoder", "BertEncoderV2"])
def test_loads_a_model_garden_tf2_checkpoint(tiny_config, tmp_path, v2):
    source = BertEncoder(tiny_config)
    theirs = model_garden_encoder(tiny_config, v2=v2)
    copy_to_model_garden(source, theirs)
    prefix = tf.train.Checkpoint(encoder=theirs).save(str(tmp_path / "ckpt"))
    assert checkpoints.checkpoint_format(prefix) == "model_garden"

    ours = BertEncoder(tiny_config)
    checkpoints.load_checkpoint(ours, prefix)
    inputs = random_inputs(tiny_config, lengths=[10, 6, 2])
    a, b = ours(inputs), theirs(inputs)
    for key in ("sequence_output", "pooled_output"):
        assert np.max(np.abs(a[key].numpy() - b[key].numpy())) < 1e-5


def test_a_checkpoint_of_another_size_names_each_mismatch(tiny_config, tmp_path):
    prefix = checkpoints.save_tf1_checkpoint(
        BertEncoder(tiny_config), str(tmp_path / "bert_model.ckpt")
    )
    bigger = tiny_config.replace(hidden_size=64, num_hidden_layers=3)
    with pytest.raises(CheckpointError) as e:
        checkpoints.load_checkpoint(BertEncoder(bigger), prefix)
    message = str(e.value)
    assert "\n" not in message and prefix in message
    assert "bert/embeddings/word_embeddings [97, 32] (model [97, 64])" in message
    with pytest.raises(CheckpointError, match="missing from the checkpoint: bert/encoder/layer_2"):
        checkpoints.load_checkpoint(BertEncoder(tiny_config.replace(num_hidden_layers=3)), prefix)


def test_strict_and_partial_loading_into_a_new_head(tiny_config, tmp_path):
    pretrained = BertPretrainingModel(tiny_config)
    prefix = checkpoints.save_tf1_checkpoint(pretrained, str(tmp_path / "bert_model.ckpt"))
    classifier = BertClassifier(tiny_config, num_labels=3)
    with pytest.raises(
        CheckpointError,
        match="missing from the checkpoint: output_bias, "
        "output_weights; not in the model: cls/predictions/output_bias",
    ):
        checkpoints.load_checkpoint(classifier, prefix)
    report = checkpoints.load_checkpoint(classifier, prefix, strict=False)
    assert report.left_initialised == ["output_bias", "output_weights"]
    assert len(report.unused) == 7 and all(n.startswith("cls/") for n in report.unused)
    assert_same_outputs(pretrained.encoder, classifier.encoder, random_inputs(tiny_config))


def test_variables_without_a_tf1_name_are_reported_left_initialised(tiny_config, tmp_path):
    # A feature-based tagger's BiLSTM and output layer have no name in the
    # original's checkpoints: loading one leaves them as they were.
    from bert_tf.modeling.tagging import BertFeatureTagger, BertTokenClassifier

    prefix = checkpoints.save_tf1_checkpoint(
        BertTokenClassifier(tiny_config, 3), str(tmp_path / "tagger.ckpt")
    )
    tagger = BertFeatureTagger(tiny_config, 3, layers=(-1, -2), combine="concat", lstm_units=4)
    report = checkpoints.load_checkpoint(tagger, prefix, strict=False)
    new = [v.path for v in tagger.weights if not v.path.startswith(tagger.encoder.name)]
    assert sorted(report.left_initialised) == sorted(new)
    assert len(new) == 14 and any(path.startswith("bilstm_0/") for path in new)
    assert len(report.loaded) == len(tagger.encoder.weights)


def test_missing_files_are_one_clear_line(tiny_config, tmp_path):
    with pytest.raises(CheckpointError, match=r"no checkpoint at '.*nothing/bert_model.ckpt'"):
        checkpoints.read_tf1_checkpoint(str(tmp_path / "nothing" / "bert_model.ckpt"))
    checkpoints.save_tf1_checkpoint(BertEncoder(tiny_config), str(tmp_path / "bert_model.ckpt"))
    with pytest.raises(CheckpointError, match="no bert_config.json or config.json next to"):
        bert_tf.from_pretrained(str(tmp_path))


# -- training checkpoints: resuming past a broken newest one ---------------------------


def training_state(config, seed):
    """A classifier, its AdamW (built) and a global step, as the Trainer holds them."""
    keras.utils.set_random_seed(seed)
    model = BertClassifier(config, num_labels=2)
    model(random_inputs(config))
    optimizer = create_optimizer("adamw", 1e-3, 10, 1)
    optimizer.build(model.trainable_variables)
    return model, optimizer, tf.Variable(0, dtype=tf.int64)


def state_values(model, optimizer, global_step):
    return [v.numpy().copy() for v in model.variables + optimizer.variables + [global_step]]


def saved_steps(tmp_path, config, num_steps):
    """Saves one checkpoint after each of `num_steps` optimizer updates (random
    gradients: weights, Adam's slots and iterations all move); returns the
    state at each step."""
    model, optimizer, global_step = training_state(config, seed=0)
    manager = CheckpointManager(str(tmp_path), model, optimizer, global_step)
    rng = np.random.default_rng(0)
    states = {}
    for step in range(1, num_steps + 1):
        optimizer.apply(
            [rng.normal(size=v.shape).astype(np.float32) for v in model.trainable_variables],
            model.trainable_variables,
        )
        global_step.assign(step)
        manager.save()
        states[step] = state_values(model, optimizer, global_step)
    return states


def corrupt(prefix, how):
    (data_file,) = tf.io.gfile.glob(prefix + ".data-*")
    size = os.path.getsize(data_file)
    with open(data_file, "r+b") as f:
        if how == "truncated":  # a copy cut short: the disk filled up
            f.truncate(size // 2)
        else:  # bytes changed in the middle
            f.seek(size // 2)
            f.write(bytes(255 - b for b in f.read(64))[::-1])


@pytest.mark.parametrize("how", ["truncated", "overwritten"])
def test_resume_falls_back_to_the_previous_checkpoint(tiny_config, tmp_path, caplog, how):
    """A newest checkpoint that does not read is skipped with a warning; the
    run resumes from the one before it: its weights, optimizer and step."""
    states = saved_steps(tmp_path, tiny_config, 3)
    corrupt(str(tmp_path / "model.ckpt-3"), how)
    model, optimizer, global_step = training_state(tiny_config, seed=1)
    manager = CheckpointManager(str(tmp_path), model, optimizer, global_step)
    assert manager.restore_latest()
    assert int(global_step.numpy()) == 2
    restored = state_values(model, optimizer, global_step)
    assert len(restored) == len(states[2])
    for got, want in zip(restored, states[2]):
        np.testing.assert_array_equal(got, want)
    assert not all(np.array_equal(a, b) for a, b in zip(states[2], states[1]))
    assert f"checkpoint {tmp_path / 'model.ckpt-3'} does not read" in caplog.text


def test_resume_fails_when_no_checkpoint_reads(tiny_config, tmp_path):
    """Every checkpoint broken: a CheckpointError, and the model left as it was."""
    saved_steps(tmp_path, tiny_config, 2)
    for step in (1, 2):
        corrupt(str(tmp_path / f"model.ckpt-{step}"), "truncated")
    model, optimizer, global_step = training_state(tiny_config, seed=1)
    before = state_values(model, optimizer, global_step)
    manager = CheckpointManager(str(tmp_path), model, optimizer, global_step)
    with pytest.raises(CheckpointError, match="no checkpoint in .* reads"):
        manager.restore_latest()
    for got, want in zip(state_values(model, optimizer, global_step), before):
        np.testing.assert_array_equal(got, want)


def test_a_file_given_for_a_checkpoint_says_what_to_pass_instead(tmp_path):
    checkpoints.write_checkpoint(str(tmp_path / "model.ckpt-3"), {"x": np.zeros(2, np.float32)})
    for name in ("model.safetensors", "pytorch_model.bin", "classifier.keras", "notes.txt"):
        (tmp_path / name).write_text("x")
    expected = {
        "model.safetensors": f"is a weights file; pass its folder '{tmp_path}'",
        "pytorch_model.bin": f"is a weights file; pass its folder '{tmp_path}'",
        "classifier.keras": "is a Keras model file; checkpoints are read by prefix: write one "
        "with bert_tf.checkpoints.save_tf1_checkpoint(keras.saving.load_model(",
        "model.ckpt-3.index": f"is a file of the checkpoint '{tmp_path}/model.ckpt-3': pass "
        "that prefix",
        "model.ckpt-3.data-00000-of-00001": f"is a file of the checkpoint '{tmp_path}/model.ckpt-3'",
        "notes.txt": "is a file, not a checkpoint",
    }
    for name, words in expected.items():
        path = str(tmp_path / name)
        with pytest.raises(CheckpointError) as raised:
            checkpoints.resolve_checkpoint_prefix(path)
        assert str(raised.value).startswith(f"{path!r} {words}"), str(raised.value)
    prefix = str(tmp_path / "model.ckpt-3")
    assert checkpoints.resolve_checkpoint_prefix(prefix) == prefix


def test_a_checkpoint_cut_short_is_named_from_its_index_before_loading(tmp_path):
    prefix = str(tmp_path / "model.ckpt")
    tensors = {"a": np.ones((4, 8), np.float32), "b": np.zeros(3, np.int64)}
    checkpoints.write_checkpoint(prefix, tensors)
    checkpoints.check_complete(prefix)  # 4 * 8 * 4 + 3 * 8 = 152 bytes, all there
    (data,) = [str(p) for p in tmp_path.glob("model.ckpt.data-*")]
    with open(data, "r+b") as f:
        f.truncate(151)
    with pytest.raises(checkpoints.UnreadableCheckpointError) as raised:
        checkpoints.check_complete(prefix)
    assert str(raised.value) == (
        f"checkpoint {prefix} does not read: its data files hold 151 bytes of the 152 its "
        "index lists (a copy cut short?)"
    )
