"""Masked-LM + next-sentence pre-training: what `run_pretraining.py` runs."""

import dataclasses
import os

import tensorflow as tf
from keras import ops

from bert_tf.data.pretraining import dataset as pretraining_data
from bert_tf.errors import InputError
from bert_tf.files import expand_input_patterns
from bert_tf.modeling import BertPretrainingModel, pretraining_losses
from bert_tf.tasks.common import load_bert_config, training_environment, warm_start
from bert_tf.training import distribution
from bert_tf.training.distribution import TrainingOptions
from bert_tf.training.loop import LoopConfig, Task, Trainer, write_results
from bert_tf.training.optimization import create_optimizer


@dataclasses.dataclass
class PretrainingOptions:
    """The flags of the original run_pretraining.py, with its defaults."""

    bert_config_file: str
    input_file: str
    output_dir: str
    init_checkpoint: str | None = None
    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    do_train: bool = False
    do_eval: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_steps: int = 100000
    num_warmup_steps: int = 10000
    save_checkpoints_steps: int = 1000
    max_eval_steps: int = 100
    keep_checkpoint_max: int = 5
    training: TrainingOptions = dataclasses.field(default_factory=TrainingOptions)


class PretrainingTask(Task):
    """Masked LM + next sentence losses and the original's eval metrics."""

    def totals(self, features):
        return {"masked_lm_weights": ops.sum(features["masked_lm_weights"]),
                "examples": ops.shape(features["next_sentence_labels"])[0]}

    def loss(self, outputs, features, totals):
        return pretraining_losses(outputs, features, totals["masked_lm_weights"],
                                  totals["examples"])

    def eval_sums(self, outputs, features):
        logits = outputs["masked_lm_logits"]
        ids = tf.cast(features["masked_lm_ids"], tf.int32)
        weights = tf.cast(features["masked_lm_weights"], tf.float32)
        losses = tf.nn.sparse_softmax_cross_entropy_with_logits(ids, logits)
        correct = tf.cast(tf.equal(tf.argmax(logits, -1, output_type=tf.int32), ids), tf.float32)
        ns_logits = outputs["next_sentence_logits"]
        ns_labels = tf.reshape(tf.cast(features["next_sentence_labels"], tf.int32), [-1])
        ns_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(ns_labels, ns_logits)
        ns_correct = tf.equal(tf.argmax(ns_logits, -1, output_type=tf.int32), ns_labels)
        return {
            "masked_lm_correct": tf.reduce_sum(weights * correct),
            "masked_lm_loss": tf.reduce_sum(weights * losses),
            "masked_lm_weight": tf.reduce_sum(weights),
            "next_sentence_correct": tf.reduce_sum(tf.cast(ns_correct, tf.float32)),
            "next_sentence_loss": tf.reduce_sum(ns_losses),
            "examples": tf.cast(tf.size(ns_labels), tf.float32),
        }

    def eval_metrics(self, sums):
        masked_lm_loss = sums["masked_lm_loss"] / sums["masked_lm_weight"]
        next_sentence_loss = sums["next_sentence_loss"] / sums["examples"]
        return {
            "masked_lm_accuracy": sums["masked_lm_correct"] / sums["masked_lm_weight"],
            "masked_lm_loss": masked_lm_loss,
            "next_sentence_accuracy": sums["next_sentence_correct"] / sums["examples"],
            "next_sentence_loss": next_sentence_loss,
            "loss": masked_lm_loss + next_sentence_loss,
        }


def _dataset_fn(options, batch_size, is_training):
    def dataset_fn(input_context):
        return pretraining_data.make_dataset(
            options.input_file, options.max_seq_length, options.max_predictions_per_seq,
            batch_size, is_training=is_training, input_context=input_context,
            seed=options.training.seed, check_files=False)
    return dataset_fn


def run_pretraining(options):
    """Trains and/or evaluates; returns the eval metrics (empty without do_eval).

    Checkpoints go to `output_dir` (resumed automatically); eval writes
    `output_dir/eval_results.txt` with the original's keys.
    """
    if not options.do_train and not options.do_eval:
        raise InputError("at least one of --do_train or --do_eval must be set")
    config = load_bert_config(options.bert_config_file, options.max_seq_length)
    tf.io.gfile.makedirs(options.output_dir)
    files = expand_input_patterns(options.input_file)
    pretraining_data.check_record_files(files, options.max_seq_length,
                                        options.max_predictions_per_seq)
    training = options.training
    with training_environment(training) as strategy:
        for flag in ("train_batch_size", "eval_batch_size"):
            distribution.check_batch_divisible(getattr(options, flag), strategy, flag)
        with strategy.scope():
            model = BertPretrainingModel(config)
            optimizer = distribution.with_loss_scaling(create_optimizer(
                training.optimizer, options.learning_rate, options.num_train_steps,
                options.num_warmup_steps, weight_decay_rate=training.weight_decay_rate,
                gradient_accumulation_steps=training.gradient_accumulation_steps),
                training.dtype)
        loop_config = LoopConfig(
            output_dir=options.output_dir, num_train_steps=options.num_train_steps,
            steps_per_loop=training.steps_per_loop,
            save_checkpoints_steps=options.save_checkpoints_steps,
            keep_checkpoint_max=options.keep_checkpoint_max, jit_compile=training.jit_compile,
            gradient_accumulation_steps=training.gradient_accumulation_steps)
        trainer = Trainer(strategy, PretrainingTask(), model, optimizer, loop_config)
        if options.do_train:
            init_fn = (lambda: warm_start(model, options.init_checkpoint)) \
                if options.init_checkpoint else None
            trainer.train(_dataset_fn(options, options.train_batch_size, True),
                          options.train_batch_size, init_fn=init_fn)
        if not options.do_eval:
            return {}
        if not options.do_train:
            resumed = trainer.checkpoints.restore_latest()
            if not resumed and options.init_checkpoint:
                warm_start(model, options.init_checkpoint)
        metrics = trainer.evaluate(_dataset_fn(options, options.eval_batch_size, False),
                                   max_steps=options.max_eval_steps)
        write_results(os.path.join(options.output_dir, "eval_results.txt"), metrics)
        return metrics
