"""Masked-LM + next-sentence pre-training: what `run_pretraining.py` runs."""

import os

import tensorflow as tf
from absl import logging

from bert_tf.config import CONFIG_FILE_NAMES
from bert_tf.data.pretraining import dataset as pretraining_data
from bert_tf.data.tfrecord import find_damage
from bert_tf.errors import InputError
from bert_tf.files import expand_input_patterns
from bert_tf.modeling import BertPretrainingModel
from bert_tf.modeling.losses import PRETRAINING_TARGETS, pretraining_head_losses
from bert_tf.tasks.run import run_task
from bert_tf.tasks.runner import TaskRunner
from bert_tf.training.loop import TrainingError
from bert_tf.training.objectives import HeadObjective


class PretrainingObjective(HeadObjective):
    """Masked LM + next sentence losses (`modeling.losses`, as
    `BertPretrainingModel`'s `default_loss`), normalised over the global
    batch, and the original's eval metrics."""

    def __init__(self):
        super().__init__(
            pretraining_head_losses(),
            labels={key: label for key, (label, _) in PRETRAINING_TARGETS.items()},
            sample_weights={key: w for key, (_, w) in PRETRAINING_TARGETS.items() if w},
        )

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


class PretrainingRunner(TaskRunner):
    """Pre-training on the run skeleton: records from create_pretraining_data.py in,
    checkpoints and `eval_results.txt` out."""

    pads_dynamically = False
    damaged_file_remedy = (
        "--skip_corrupt_records reads the records before it and skips the rest of the file"
    )

    def __init__(self, options):
        super().__init__(options)
        self.input_files = []
        self.eval_files = []  # --eval_input_file's, else --input_file's
        self.damaged = {}  # path -> tfrecord.Damage, with --skip_corrupt_records

    def validate(self):
        if self.options.eval_input_file and not self.options.run.do_eval:
            raise InputError("--eval_input_file needs --do_eval: it is only evaluated on")

    def prepare(self, config):
        options = self.options
        self.input_files = expand_input_patterns(options.input_file)
        self.eval_files = self.input_files
        if options.eval_input_file:  # validate: only with --do_eval
            self.eval_files = expand_input_patterns(options.eval_input_file, "--eval_input_file")
        record_files = self.record_files()
        if options.skip_corrupt_records:
            logging.info("checking %d input files for damaged records", len(record_files))
            for path in record_files:
                damage = find_damage(path)
                if damage:
                    logging.warning(
                        "%s: %s; skipping the rest of the file", path, damage.describe()
                    )
                    self.damaged[path] = damage
        pretraining_data.check_record_files(
            [p for p in record_files if p not in self.damaged or self.damaged[p].record],
            options.model.max_seq_length,
            options.max_predictions_per_seq,
            config.vocab_size,
        )
        if options.run.do_train:
            # The checkpoints' architecture beside them: fine-tuning from
            # --init_checkpoint=<output_dir> then needs no --bert_config_file.
            path = os.path.join(options.run.output_dir, CONFIG_FILE_NAMES[0])
            config.to_json_file(path)
            self.wrote("model config", path)

    def record_files(self):
        return self.input_files + [p for p in self.eval_files if p not in self.input_files]

    def _dataset_fn(self, batch_size, is_training):
        options = self.options

        def dataset_fn(input_context):
            return pretraining_data.make_dataset(
                self.input_files if is_training else self.eval_files,
                options.model.max_seq_length,
                options.max_predictions_per_seq,
                batch_size,
                is_training=is_training,
                input_context=input_context,
                seed=options.runtime.seed,
                check_files=False,
                skip_damaged=options.skip_corrupt_records,
            )

        return dataset_fn

    def train_schedule(self):
        return self.options.training.num_train_steps, self.options.training.num_warmup_steps

    def train_dataset_fn(self):
        return self._dataset_fn(self.options.training.train_batch_size, True)

    def build_model(self, config):
        return BertPretrainingModel(config)

    def objective(self):
        return PretrainingObjective()

    def evaluate(self, trainer):
        options = self.options
        try:
            return trainer.evaluate(
                self._dataset_fn(options.training.eval_batch_size, False),
                max_steps=options.max_eval_steps,
            )
        except TrainingError:  # not one whole batch: evaluation drops the rest, as the original
            flag, value = (
                ("eval_input_file", options.eval_input_file)
                if options.eval_input_file
                else ("input_file", options.input_file)
            )
            raise InputError(
                f"--{flag}={value} holds fewer records than one batch of "
                f"--eval_batch_size={options.training.eval_batch_size}: nothing to evaluate"
            ) from None


def run_pretraining(options):
    """Trains and/or evaluates; returns the eval metrics (empty without do_eval).

    Checkpoints go to `output_dir` (resumed automatically); eval writes
    `output_dir/eval_results.txt` with the original's keys.
    """
    runner = PretrainingRunner(options)
    metrics = run_task(runner)
    for path, damage in runner.damaged.items():
        print(
            f"skipped: {path} from {damage.describe()} to its end "
            f"({damage.bytes_lost} bytes; {damage.record} records read)"
        )
    return metrics
