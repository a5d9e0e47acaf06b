import json
import os
import signal
import socket
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from loop_harness import (
    PRED,
    SEQ,
    dataset_fn,
    finite_dataset_fn,
    losses_of,
    make_trainer,
    write_data,
)
from pretraining_records import write_records
from shared import HANG_TIMEOUT
from step_pause import wait_for_pause
from tensorflow.core.protobuf import config_pb2
from tensorflow.python.eager import context

from bert_tf.data.pretraining import dataset as pretraining_data
from bert_tf.tasks.pretraining import PretrainingObjective
from bert_tf.training import checkpoint_manager
from bert_tf.training.checkpoint_manager import CheckpointManager
from bert_tf.training.grappler import lean_rewrites
from bert_tf.training.loop import LoopConfig, Trainer, TrainingError

# Floats that depend on the CPU's kernels: also run by `make test-portable`.
pytestmark = pytest.mark.numerics

TESTS = os.path.dirname(__file__)
REPO = os.path.dirname(TESTS)


def run_python(args, env=None, stdout=subprocess.PIPE, **kwargs):
    env = {
        **os.environ,
        "PYTHONPATH": f"{TESTS}:{REPO}",
        "TF_CPP_MIN_LOG_LEVEL": "2",
        **(env or {}),
    }
    return subprocess.Popen(
        [sys.executable, *args],
        env=env,
        stdout=stdout,
        stderr=subprocess.STDOUT,
        text=True,
        **kwargs,
    )


def finish(process, timeout=HANG_TIMEOUT):
    output, _ = process.communicate(timeout=timeout)
    assert process.returncode == 0, output[-3000:]
    return output


def test_mirrored_over_two_cpus_equals_one_device(tmp_path):
    write_data(str(tmp_path))
    out = str(tmp_path / "result.json")
    finish(run_python([os.path.join(TESTS, "loop_harness.py"), "mirrored", out, str(tmp_path)]))
    result = json.load(open(out))
    assert result["replicas"] == 2
    # Same global batch, losses normalised over it: equal up to float32 rounding.
    np.testing.assert_allclose(result["mirrored"], result["single"], rtol=1e-5)
    assert result["final_weight_diff"] < 1e-5
    # Evaluation and prediction of the trained model agree too (all 96 records,
    # each counted once).
    assert result["metrics_diff"] < 1e-5
    assert result["predictions_diff"] < 1e-4
    # Gradient accumulation under mirrored equals it on one device too.
    single, mirrored, final_diff = result["accumulated"]
    assert len(single) == 3
    np.testing.assert_allclose(mirrored, single, rtol=1e-5)
    assert final_diff < 1e-5
    # ... and so does it with each layer recomputed, on both.
    recomputed_single, recomputed_mirrored, final_diff = result["recomputed"]
    np.testing.assert_allclose(recomputed_single, single, rtol=1e-5)
    np.testing.assert_allclose(recomputed_mirrored, single, rtol=1e-5)
    assert final_diff < 1e-5


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.large
def test_multi_worker_with_two_local_processes_agree(tmp_path):
    write_data(str(tmp_path))
    workers = [f"127.0.0.1:{free_port()}" for _ in range(2)]
    processes = []
    for index in range(2):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        processes.append(
            run_python(
                [
                    os.path.join(TESTS, "loop_harness.py"),
                    "multi_worker",
                    str(tmp_path / f"worker{index}.json"),
                    str(tmp_path),
                ],
                env={"TF_CONFIG": json.dumps(tf_config), "WORKER": str(index)},
            )
        )
    for process in processes:
        finish(process)
    a, b = (json.load(open(tmp_path / f"worker{i}.json")) for i in range(2))
    assert a["replicas"] == b["replicas"] == 2
    assert a["losses"] == b["losses"] and len(a["losses"]) == 6
    assert a["checksum"] == b["checksum"]
    assert a["losses"][-1] < a["losses"][0]
    # Agreement is guaranteed by the all-reduce; the reference is one process
    # on the same global batches (worker i reads file i, 4 records a step).
    files = sorted(str(p) for p in tmp_path.glob("*.tfrecord"))

    def global_batches(context):
        halves = [
            pretraining_data.make_dataset([f], SEQ, PRED, 4, is_training=False).repeat()
            for f in files
        ]
        return tf.data.Dataset.zip(tuple(halves)).map(
            lambda x, y: {k: tf.concat([x[k], y[k]], 0) for k in x}
        )

    single = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "single"))
    np.testing.assert_allclose(a["losses"], losses_of(single.train(global_batches, 8)), rtol=1e-5)
    checksum = float(sum(np.abs(w).sum() for w in single.model.get_weights()))
    assert abs(a["checksum"] - checksum) < 1e-5 * checksum
    # Only the chief (worker 0) writes checkpoints.
    assert os.listdir(tmp_path / "mw" / "0") and not os.path.exists(
        tmp_path / "mw" / "1" / "checkpoint"
    )


@pytest.fixture(scope="module")
def float32_run(tmp_path_factory):
    """The data folder and the losses of the default 6-step float32 run on it."""
    data_dir = str(tmp_path_factory.mktemp("data"))
    write_data(data_dir)
    trainer = make_trainer(tf.distribute.get_strategy(), os.path.join(data_dir, "float32"))
    return data_dir, losses_of(trainer.train(dataset_fn(data_dir, 8), 8))


def test_lean_grappler_rewrites_leave_the_train_steps_bitwise_equal(tmp_path, float32_run):
    data_dir, _ = float32_run
    default = context.context().function_call_options.config_proto_serialized
    with lean_rewrites():
        rewrites = config_pb2.ConfigProto.FromString(
            context.context().function_call_options.config_proto_serialized
        ).graph_options.rewrite_options
    assert rewrites.disable_tfg_optimizer and rewrites.layout_optimizer == rewrites.OFF
    assert rewrites.meta_optimizer_iterations == rewrites.ONE
    assert rewrites.constant_folding != rewrites.OFF  # it makes the step faster
    assert context.context().function_call_options.config_proto_serialized == default
    weights = []
    for lean in (True, False):
        trainer = make_trainer(tf.distribute.get_strategy(), str(tmp_path / str(lean)))
        iterator = iter(trainer.distribute(dataset_fn(data_dir, 8)))
        if lean:
            trainer.train_steps(iterator, 3)
        else:  # the same compiled loop, called under the thread's default options
            trainer._train_loop(iterator, tf.constant(3))
        weights.append([w.numpy() for w in trainer.model.weights])
    # At BERT-Base, the one meta-optimizer iteration rounds a few products
    # otherwise (bench/first_step.py's weights digest); here nothing moves.
    for a, b in zip(*weights):
        np.testing.assert_array_equal(a, b)


def test_train_step_compiles_with_xla_and_matches(tmp_path, float32_run):
    data_dir, plain_losses = float32_run
    xla = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "xla"), jit_compile=True)
    xla_losses = losses_of(xla.train(dataset_fn(data_dir, 8), 8))
    np.testing.assert_allclose(xla_losses, plain_losses, rtol=1e-4)
    features = next(iter(dataset_fn(data_dir, 8)(None)))
    totals = {"masked_lm_logits": tf.constant(1.0), "next_sentence_logits": tf.constant(8.0)}
    hlo = xla._compute.experimental_get_compiler_ir(features, totals)(stage="hlo")
    assert "HloModule" in hlo
    # Eval runs the model compiled too, with the uncompiled metrics.
    plain = Trainer(
        tf.distribute.get_strategy(),
        PretrainingObjective(),
        xla.model,
        None,
        LoopConfig(output_dir=str(tmp_path / "plain"), num_train_steps=1),
    )
    compiled, expected = (t.evaluate(finite_dataset_fn(data_dir, 8)) for t in (xla, plain))
    assert xla._infer.get_concrete_function(features).function_def.attr["_XlaMustCompile"].b
    del compiled["global_step"], expected["global_step"]  # the plain trainer's is 0
    assert compiled.keys() == expected.keys()
    for key, value in expected.items():
        np.testing.assert_allclose(compiled[key], value, rtol=1e-5, err_msg=key)


def test_gradient_accumulation_equals_the_larger_batch(tmp_path):
    data_dir = str(tmp_path)
    write_data(data_dir)

    def every_position_weighted(batch_size):
        # Equal masked-LM weight per example, so that a micro-batch's loss
        # normalisation matches the whole batch's.
        def make(context):
            return dataset_fn(data_dir, batch_size)(context).map(
                lambda f: dict(f, masked_lm_weights=tf.ones_like(f["masked_lm_weights"]))
            )

        return make

    whole = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "whole"), num_steps=4)
    weights = whole.model.get_weights()
    whole_losses = losses_of(whole.train(every_position_weighted(8), 8))
    accumulated = make_trainer(
        tf.distribute.get_strategy(),
        str(tmp_path / "accumulated"),
        num_steps=4,
        initial_weights=weights,
        gradient_accumulation_steps=2,
    )
    accumulated_losses = losses_of(accumulated.train(every_position_weighted(4), 8))
    np.testing.assert_allclose(accumulated_losses, whole_losses, rtol=1e-5)
    assert int(accumulated.global_step.numpy()) == 4
    assert int(accumulated.optimizer.iterations.numpy()) == 4
    for a, b in zip(whole.model.get_weights(), accumulated.model.get_weights()):
        np.testing.assert_allclose(a, b, atol=2e-6)


@pytest.mark.half_precision
@pytest.mark.parametrize("policy", ["mixed_bfloat16", "mixed_float16"])
def test_mixed_precision_trains_close_to_float32(tmp_path, float32_run, policy, calibration):
    data_dir, reference = float32_run
    keras.mixed_precision.set_dtype_policy(policy)
    try:
        trainer = make_trainer(
            tf.distribute.get_strategy(),
            str(tmp_path / policy),
            loss_scaling=policy == "mixed_float16",
        )
        losses = losses_of(trainer.train(dataset_fn(data_dir, 8), 8))
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    assert all(v.dtype == "float32" for v in trainer.model.weights)
    calibration.record(
        deviation=np.max(np.abs(np.array(losses) / reference - 1)),
        reference_ratio=reference[-1] / reference[0],
    )
    # Measured largest relative deviation over the 6 steps: bf16 7.5e-5 on an
    # AMD Zen 4 (AVX512_BF16), 1.9e-4 on a Zen 3 (AVX2, under every setting of
    # CPU_SETTINGS); fp16 1.9e-5 and 2.0e-5. Training moves the loss by about
    # 1% a step (after 6 steps 0.941 of the first loss, on the Zen 3), so a
    # run that skips its updates, or applies scaled gradients, is far outside.
    np.testing.assert_allclose(losses, reference, rtol=1e-3 if policy == "mixed_bfloat16" else 1e-4)
    assert reference[-1] < reference[0] * 0.97


def test_checkpoint_restores_weights_optimizer_slots_and_step(tmp_path):
    data_dir = str(tmp_path)
    write_data(data_dir)
    trainer = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "run"), num_steps=3)
    trainer.train(dataset_fn(data_dir, 8), 8)
    saved = [v.numpy().copy() for v in trainer.optimizer.variables + trainer.model.weights]
    slots = [v.numpy() for v in trainer.optimizer.variables if v.shape.rank]
    # Adam's m and v for every weight, all moved by the 3 steps.
    assert len(slots) == 2 * len(trainer.model.trainable_variables)
    assert all(np.abs(slot).sum() > 0 for slot in slots)

    fresh = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "run"), num_steps=3)
    assert fresh.checkpoints.restore_latest()
    restored = [v.numpy() for v in fresh.optimizer.variables + fresh.model.weights]
    assert int(fresh.global_step.numpy()) == 3
    assert len(restored) == len(saved)
    for a, b in zip(saved, restored):
        np.testing.assert_array_equal(a, b)


class StandInEvaluation:
    """What `Trainer.train` calls of a `periodic_eval.PeriodicEvaluation`:
    records each call's step and the newest checkpoint then; stops at `stop_at`."""

    def __init__(self, trainer, every_steps, stop_at=None, stopped=False):
        self.trainer, self.every_steps, self.stop_at, self.stopped = (
            trainer,
            every_steps,
            stop_at,
            stopped,
        )
        self.calls, self.resumed_at = [], None

    def resume(self, step):
        self.resumed_at = step
        return self.stopped

    def __call__(self, step):
        assert step == int(self.trainer.global_step.numpy())
        self.calls.append((step, self.trainer.checkpoints.latest()))
        return step == self.stop_at


def test_evaluation_during_training_at_its_steps_before_their_checkpoint(tmp_path, monkeypatch):
    """Calls (one step each while the step time is unknown) end at every
    evaluation step and the last; each evaluation comes
    before its step's checkpoint; a stop saves one and ends training; a run
    that had stopped early does not train on."""
    monkeypatch.setattr("bert_tf.training.loop.PROGRESS_SECONDS", 1e9)
    data_dir = str(tmp_path)
    write_data(data_dir)
    output_dir = str(tmp_path / "run")
    trainer = make_trainer(tf.distribute.get_strategy(), output_dir, num_steps=7, steps_per_loop=4)
    evaluation = StandInEvaluation(trainer, 3)
    history = trainer.train(dataset_fn(data_dir, 8), 8, evaluation=evaluation)
    assert [step for step, _ in history] == [1, 2, 3, 6, 7]
    assert evaluation.resumed_at == 0
    assert evaluation.calls == [(3, None), (6, None), (7, None)]
    assert trainer.checkpoints.latest().endswith("model.ckpt-7")

    stopping_dir = str(tmp_path / "stopping")
    trainer = make_trainer(
        tf.distribute.get_strategy(), stopping_dir, num_steps=7, steps_per_loop=4
    )
    evaluation = StandInEvaluation(trainer, 2, stop_at=4)
    history = trainer.train(dataset_fn(data_dir, 8), 8, evaluation=evaluation)
    assert [step for step, _ in history] == [1, 2, 4]
    assert [step for step, _ in evaluation.calls] == [2, 4]
    assert trainer.checkpoints.latest().endswith("model.ckpt-4")

    trainer = make_trainer(
        tf.distribute.get_strategy(), stopping_dir, num_steps=7, steps_per_loop=4
    )
    evaluation = StandInEvaluation(trainer, 2, stopped=True)
    assert trainer.train(dataset_fn(data_dir, 8), 8, evaluation=evaluation) == []
    assert evaluation.resumed_at == 4 and not evaluation.calls
    assert trainer.checkpoints.latest().endswith("model.ckpt-4")


def test_crash_during_save_keeps_the_latest_and_old_ones_are_pruned(tmp_path, monkeypatch):
    data_dir = str(tmp_path)
    write_data(data_dir)
    trainer = make_trainer(tf.distribute.get_strategy(), str(tmp_path / "run"), num_steps=1)
    manager = CheckpointManager(
        str(tmp_path / "run"), trainer.model, trainer.optimizer, trainer.global_step, max_to_keep=2
    )
    bias = trainer.model.next_sentence.output_bias
    for step in range(1, 5):
        trainer.global_step.assign(step)
        bias.assign([step, -step])
        manager.save()
    assert manager.latest().endswith("model.ckpt-4")
    assert sorted(f for f in os.listdir(tmp_path / "run") if f.endswith(".index")) == [
        "model.ckpt-3.index",
        "model.ckpt-4.index",
    ]

    # The save of step 5 dies after writing part of its data.
    def dies_while_writing(prefix, tensors):
        with open(prefix + ".data-00000-of-00001", "wb") as f:
            f.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(checkpoint_manager, "write_checkpoint", dies_while_writing)
    trainer.global_step.assign(5)
    bias.assign([5, -5])
    with pytest.raises(KeyboardInterrupt):
        manager.save()
    monkeypatch.undo()
    assert manager.latest().endswith("model.ckpt-4")
    manager.restore(manager.latest())
    assert int(trainer.global_step.numpy()) == 4
    np.testing.assert_array_equal(bias.numpy(), [4, -4])

    # The next save of step 5 replaces the partial files.
    trainer.global_step.assign(5)
    manager.save()
    trainer.global_step.assign(0)
    manager.restore(manager.latest())
    assert int(trainer.global_step.numpy()) == 5


def test_non_finite_loss_stops_with_the_step_and_keeps_the_last_checkpoint(tmp_path):
    data_dir = str(tmp_path)
    write_data(data_dir)
    trainer = make_trainer(
        tf.distribute.get_strategy(), str(tmp_path / "run"), num_steps=9, steps_per_loop=3
    )
    trainer.config.save_checkpoints_steps = 3

    def poisoned(context):
        def poison(index, features):
            bad = tf.cast(index == 4, tf.float32) * np.nan  # the 5th batch: step 5
            weights = features["masked_lm_weights"] + tf.where(index == 4, bad, 0.0)
            return dict(features, masked_lm_weights=weights)

        return dataset_fn(data_dir, 8)(context).enumerate().map(poison)

    with pytest.raises(TrainingError, match=r"not finite at step 5; .*model.ckpt-3"):
        trainer.train(poisoned, 8)
    assert trainer.checkpoints.latest().endswith("model.ckpt-3")


@pytest.mark.large
def test_killed_run_resumes_and_finishes_like_an_uninterrupted_one(tmp_path):
    config_file = str(tmp_path / "bert_config.json")
    from loop_harness import CONFIG, VOCAB

    CONFIG.replace(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1).to_json_file(
        config_file
    )
    files = [
        write_records(str(tmp_path / f"d{i}.tfrecord"), 64, SEQ, PRED, VOCAB, seed=i)
        for i in range(2)
    ]

    def command(output_dir):
        return [
            os.path.join(REPO, "run_pretraining.py"),
            f"--bert_config_file={config_file}",
            f"--input_file={','.join(files)}",
            f"--output_dir={output_dir}",
            "--do_train",
            f"--max_seq_length={SEQ}",
            f"--max_predictions_per_seq={PRED}",
            "--train_batch_size=8",
            "--num_train_steps=300",
            "--num_warmup_steps=10",
            "--save_checkpoints_steps=20",
            "--steps_per_loop=10",
            "--learning_rate=1e-3",
            "--seed=7",
            "--deterministic",
        ]

    # Killed while it waits after a call, past step 40 and before step 60 (calls
    # never cross a checkpoint), whatever the machine's speed: the steps since
    # the step-40 checkpoint are lost and done again.
    interrupted, marker, log = (str(tmp_path / name) for name in ("interrupted", "paused", "log"))
    with open(log, "w") as output:  # a file: a full pipe would block the run
        process = run_python(
            [os.path.join(TESTS, "step_pause.py"), "40", marker, *command(interrupted)],
            stdout=output,
        )
    try:
        paused_at = wait_for_pause(
            marker, lambda: process.poll() is not None, lambda: open(log).read(), HANG_TIMEOUT
        )
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=HANG_TIMEOUT)
    assert 40 < paused_at < 60
    assert tf.train.latest_checkpoint(interrupted).endswith("model.ckpt-40")
    assert not os.path.exists(os.path.join(interrupted, "model.ckpt-300.index"))
    resumed_output = finish(run_python(command(interrupted)))
    assert "model.ckpt-40 at step 40" in resumed_output, resumed_output[-3000:]

    uninterrupted = str(tmp_path / "uninterrupted")
    finish(run_python(command(uninterrupted)))
    a = tf.train.load_checkpoint(os.path.join(interrupted, "model.ckpt-300"))
    b = tf.train.load_checkpoint(os.path.join(uninterrupted, "model.ckpt-300"))
    names = a.get_variable_to_shape_map()
    assert set(names) == set(b.get_variable_to_shape_map())
    for name in names:
        np.testing.assert_allclose(
            a.get_tensor(name), b.get_tensor(name), rtol=1e-5, atol=1e-6, err_msg=name
        )


@pytest.mark.half_precision
def test_fp16_overflow_skips_the_update_halves_the_scale_and_training_goes_on(tmp_path):
    data_dir = str(tmp_path)
    write_data(data_dir)
    keras.mixed_precision.set_dtype_policy("mixed_float16")
    try:
        trainer = make_trainer(
            tf.distribute.get_strategy(), str(tmp_path / "run"), loss_scaling=True
        )

        def poisoned(context):
            # The 2nd batch: +-1e5 on two masked positions leaves the weights'
            # sum (the loss's normaliser) and the float32 loss finite, but
            # the scaled float16 gradients overflow.
            def poison(index, features):
                weights = features["masked_lm_weights"]
                spike = tf.tensor_scatter_nd_update(
                    tf.zeros_like(weights), [[0, 0], [1, 0]], [1e5, -1e5]
                )
                weights += tf.where(index == 1, spike, 0.0)
                return dict(features, masked_lm_weights=weights)

            return dataset_fn(data_dir, 8)(context).enumerate().map(poison)

        iterator = iter(trainer.distribute(poisoned))
        optimizer = trainer.optimizer

        def state():
            weights = [w.numpy().copy() for w in trainer.model.weights]
            return weights, float(optimizer.scale_loss(1.0))

        trainer.train_steps(iterator, 1)
        before, scale = state()
        losses = trainer.train_steps(iterator, 1)
        after, skipped_scale = state()
        trainer.train_steps(iterator, 1)
        then, next_scale = state()
    finally:
        keras.mixed_precision.set_dtype_policy("float32")
    assert np.isfinite(losses["loss"])
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert skipped_scale == scale / 2 and next_scale == skipped_scale
    assert any(not np.array_equal(a, b) for a, b in zip(after, then))
    assert all(np.isfinite(w).all() for w in then)
    # The trainer counts every step; the optimizer (Keras's LossScaleOptimizer)
    # only the updates it applied.
    assert int(trainer.global_step.numpy()) == 3
    assert int(optimizer.iterations.numpy()) == 2


class XlaReplicas:
    """The default strategy, except that it compiles every replica function
    with XLA and records its input shapes, as TPUStrategy does (which also
    needs those shapes static and no host-side op in the step)."""

    def __init__(self, strategy):
        self._strategy = strategy
        self.traces = []  # the input shapes of each replica function traced

    def __getattr__(self, name):
        return getattr(self._strategy, name)

    def run(self, fn, args=(), kwargs=None):
        def replica(*args, **kwargs):
            self.traces.append([t.shape for t in tf.nest.flatten((args, kwargs))])
            return fn(*args, **kwargs)

        return self._strategy.run(tf.function(replica, jit_compile=True), args, kwargs)


def test_train_eval_and_predict_steps_compile_for_a_tpu(tmp_path, float32_run, monkeypatch):
    data_dir, reference = float32_run
    # Calls sized by steps_per_loop alone, however slow the machine.
    monkeypatch.setattr("bert_tf.training.loop.PROGRESS_SECONDS", 1e9)
    strategy = XlaReplicas(tf.distribute.get_strategy())
    trainer = make_trainer(strategy, str(tmp_path / "run"), num_steps=4, steps_per_loop=2)
    history = trainer.train(dataset_fn(data_dir, 8), 8)
    assert [step for step, _ in history] == [1, 2, 4]
    np.testing.assert_allclose(losses_of(history)[0], reference[0], rtol=1e-4)
    metrics = trainer.evaluate(finite_dataset_fn(data_dir, 8))
    predictions = trainer.predict(finite_dataset_fn(data_dir, 8), ("next_sentence_labels",))
    assert np.isfinite(metrics["masked_lm_loss"]) and len(predictions["next_sentence_labels"]) == 96
    # Train (calls of 1, 1 and 2 steps), eval and predict each traced once, with
    # static shapes only.
    assert len(strategy.traces) == 3, strategy.traces
    assert trainer._train_loop.experimental_get_tracing_count() == 1
    assert all(shape.is_fully_defined() for trace in strategy.traces for shape in trace), (
        strategy.traces
    )
