"""A tiny pre-training setup on the Trainer, shared by the loop tests and the
subprocesses they start (`python loop_harness.py MODE OUT_JSON DATA_DIR`)."""

import json
import os
import sys

import keras
import numpy as np
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.data.pretraining import dataset as pretraining_data
from bert_tf.modeling import BertPretrainingModel
from bert_tf.optimization import create_optimizer
from bert_tf.tasks.pretraining import PretrainingObjective
from bert_tf.training.loop import LoopConfig, Trainer

SEQ, PRED, VOCAB = 16, 3, 50
CONFIG = BertConfig(
    vocab_size=VOCAB,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=64,
    max_position_embeddings=SEQ,
    type_vocab_size=2,
    hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0,
)


def write_data(data_dir):
    from pretraining_records import write_records

    os.makedirs(data_dir, exist_ok=True)
    return [
        write_records(os.path.join(data_dir, f"part-{i}.tfrecord"), 48, SEQ, PRED, VOCAB, seed=i)
        for i in range(2)
    ]


def dataset_fn(data_dir, global_batch):
    """Records in a fixed order (no shuffling), repeated: the same global batches
    whatever the number of replicas."""

    def make(context):
        files = sorted(tf.io.gfile.glob(os.path.join(data_dir, "*.tfrecord")))
        return pretraining_data.make_dataset(
            files, SEQ, PRED, global_batch, is_training=False, input_context=context
        ).repeat()

    return make


def make_trainer(
    strategy,
    output_dir,
    num_steps=6,
    jit_compile=False,
    optimizer="adamw",
    initial_weights=None,
    steps_per_loop=1,
    loss_scaling=False,
    gradient_accumulation_steps=1,
    recompute="none",
):
    keras.utils.set_random_seed(0)
    with strategy.scope():
        model = BertPretrainingModel(CONFIG, recompute=recompute)
        if initial_weights is not None:
            model.set_weights(initial_weights)
        opt = create_optimizer(optimizer, 1e-3, num_steps, 2)
        if loss_scaling:
            opt = keras.optimizers.LossScaleOptimizer(opt)
    config = LoopConfig(
        output_dir=output_dir,
        num_train_steps=num_steps,
        steps_per_loop=steps_per_loop,
        save_checkpoints_steps=1000,
        jit_compile=jit_compile,
        inference_jit_compile=jit_compile,
        gradient_accumulation_steps=gradient_accumulation_steps,
    )
    return Trainer(strategy, PretrainingObjective(), model, opt, config)


def losses_of(history):
    return [losses["loss"] for _, losses in history]


def finite_dataset_fn(data_dir, global_batch):
    """Every record once, in a fixed order (for evaluate and predict)."""

    def make(context):
        files = sorted(tf.io.gfile.glob(os.path.join(data_dir, "*.tfrecord")))
        return pretraining_data.make_dataset(
            files, SEQ, PRED, global_batch, is_training=False, input_context=context
        )

    return make


def _evaluate_and_predict(single, mirrored, data_dir):
    """Largest relative difference between the eval metrics of the two
    trainers, and largest difference between their predictions."""
    a, b = (t.evaluate(finite_dataset_fn(data_dir, 8)) for t in (single, mirrored))
    metrics_diff = max(abs(a[k] - b[k]) / abs(a[k]) for k in a if k != "global_step")
    a, b = (
        t.predict(finite_dataset_fn(data_dir, 8), ("next_sentence_labels",))
        for t in (single, mirrored)
    )
    assert a.keys() == b.keys() and len(a["next_sentence_labels"]) == 96
    predictions_diff = max(float(np.max(np.abs(a[k] - b[k]))) for k in a)
    return metrics_diff, predictions_diff


def _single_and_mirrored(strategy, data_dir, name, evaluate=False, **kwargs):
    """Losses of one device and of `strategy` from the same weights, the
    largest difference between their final weights, and with `evaluate`
    the differences of their evaluation and predictions."""
    single = make_trainer(
        tf.distribute.get_strategy(), os.path.join(data_dir, "single" + name), **kwargs
    )
    weights = single.model.get_weights()
    single_losses = losses_of(single.train(dataset_fn(data_dir, 8), 8))
    mirrored = make_trainer(
        strategy, os.path.join(data_dir, "mirrored" + name), initial_weights=weights, **kwargs
    )
    mirrored_losses = losses_of(mirrored.train(dataset_fn(data_dir, 8), 8))
    final_diff = max(
        float(np.max(np.abs(a - b)))
        for a, b in zip(single.model.get_weights(), mirrored.model.get_weights())
    )
    if evaluate:
        return (
            single_losses,
            mirrored_losses,
            final_diff,
            _evaluate_and_predict(single, mirrored, data_dir),
        )
    return single_losses, mirrored_losses, final_diff


def _mirrored(out, data_dir):
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    single, mirrored, final_diff, (metrics_diff, predictions_diff) = _single_and_mirrored(
        strategy, data_dir, "", evaluate=True
    )
    accumulated = _single_and_mirrored(
        strategy, data_dir, "-accumulated", num_steps=3, gradient_accumulation_steps=2
    )
    recomputed = _single_and_mirrored(
        strategy,
        data_dir,
        "-recomputed",
        num_steps=3,
        gradient_accumulation_steps=2,
        recompute="layer",
    )
    json.dump(
        {
            "replicas": strategy.num_replicas_in_sync,
            "single": single,
            "mirrored": mirrored,
            "final_weight_diff": final_diff,
            "metrics_diff": metrics_diff,
            "predictions_diff": predictions_diff,
            "accumulated": accumulated,
            "recomputed": recomputed,
        },
        open(out, "w"),
    )


def _multi_worker(out, data_dir):
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    trainer = make_trainer(strategy, os.path.join(data_dir, "mw", os.environ["WORKER"]))
    losses = losses_of(trainer.train(dataset_fn(data_dir, 8), 8))
    checksum = float(sum(np.abs(w).sum() for w in trainer.model.get_weights()))
    json.dump(
        {"replicas": strategy.num_replicas_in_sync, "losses": losses, "checksum": checksum},
        open(out, "w"),
    )


if __name__ == "__main__":
    mode, out_json, data = sys.argv[1:4]
    {"mirrored": _mirrored, "multi_worker": _multi_worker}[mode](out_json, data)
