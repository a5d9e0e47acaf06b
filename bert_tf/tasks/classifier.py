"""Sentence (pair) classification and regression: what `run_classifier.py` runs."""

import dataclasses
import os

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf import tokenization
from bert_tf.data.classification import features as classifier_features
from bert_tf.data.classification import glue
from bert_tf.data.classification import outputs as classifier_outputs
from bert_tf.errors import InputError
from bert_tf.export import check_export_dir, export_classifier
from bert_tf.metrics import glue_metrics
from bert_tf.modeling import BertClassifier
from bert_tf.packing import average_windows
from bert_tf.tasks.common import load_bert_config, training_environment, warm_start
from bert_tf.training import distribution
from bert_tf.training.distribution import TrainingOptions
from bert_tf.training.loop import LoopConfig, Task, Trainer, write_results
from bert_tf.training.optimization import create_optimizer

_PASSTHROUGH = ("label_ids", "is_real_example", "example_index")


@dataclasses.dataclass
class ClassifierOptions:
    """The flags of the original run_classifier.py (with its defaults) and the additions."""

    task_name: str
    data_dir: str
    vocab_file: str
    bert_config_file: str
    output_dir: str
    init_checkpoint: str | None = None
    do_lower_case: bool = True
    max_seq_length: int = 128
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    eval_batch_size: int = 8
    predict_batch_size: int = 8
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    save_checkpoints_steps: int = 1000
    keep_checkpoint_max: int = 5
    long_text_stride: int | None = None
    export_dir: str | None = None
    overwrite: bool = False
    processor_options: dict = dataclasses.field(default_factory=dict)
    training: TrainingOptions = dataclasses.field(default_factory=TrainingOptions)


class ClassificationTask(Task):
    """Cross-entropy over labels, or squared error for regression, averaged
    over the global batch."""

    def __init__(self, is_regression):
        self.is_regression = is_regression

    def totals(self, features):
        return {"examples": tf.shape(features["label_ids"])[0]}

    def loss(self, outputs, features, totals):
        if self.is_regression:
            errors = tf.square(outputs[:, 0] - tf.cast(features["label_ids"], tf.float32))
        else:
            errors = tf.nn.sparse_softmax_cross_entropy_with_logits(features["label_ids"],
                                                                    outputs)
        return {"loss": tf.reduce_sum(errors) / totals["examples"]}


def combine_windows(predictions):
    """Per-feature predictions -> per-example: real rows only, logits of the
    windows of one example averaged, examples in `example_index` order."""
    real = predictions["is_real_example"] == 1
    index = predictions["example_index"][real]
    logits = predictions["logits"][real]
    examples, position = np.unique(index, return_inverse=True)
    means = average_windows(logits.astype(np.float64), position, len(examples))
    labels = np.zeros(len(examples), predictions["label_ids"].dtype)
    labels[position] = predictions["label_ids"][real]
    return means.numpy().astype(np.float32), labels


def _softmax(logits):
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def eval_metrics(processor, logits, labels):
    """eval_results.txt: the original's `eval_accuracy` / `eval_loss` plus the
    task's GLUE metrics (`loss` equals `eval_loss`: padding is left out)."""
    if processor.is_regression:
        eval_loss = float(np.mean((logits[:, 0] - labels) ** 2))
        metrics = glue_metrics(processor.metric, logits[:, 0], labels)
    else:
        log_probs = np.log(_softmax(logits.astype(np.float64)))
        eval_loss = float(-np.mean(log_probs[np.arange(len(labels)), labels]))
        metrics = glue_metrics(processor.metric, logits, labels)
    return {**metrics, "eval_loss": eval_loss, "loss": eval_loss}


def _has_sentence_pairs(processor, data_dir):
    """Whether the task's examples have a text_b (from its first non-empty split on disk)."""
    for split in glue.SPLITS:
        if all(os.path.exists(f) for f in processor.input_files(data_dir, split)):
            examples = processor.get_examples(data_dir, split)
            if examples:
                return any(e.text_b for e in examples)
    raise InputError(f"--data_dir {data_dir}: no examples of task {processor.name} to export for")


def _validate(options):
    if not (options.do_train or options.do_eval or options.do_predict):
        raise InputError("at least one of --do_train, --do_eval or --do_predict must be set")
    if options.long_text_stride is not None and options.long_text_stride < 1:
        raise InputError(f"--long_text_stride must be >= 1, got {options.long_text_stride}")
    if options.export_dir:
        check_export_dir(options.export_dir, options.overwrite)
    tokenization.validate_case_matches_checkpoint(options.do_lower_case, options.init_checkpoint)


def run_classifier(options):
    """Fine-tunes, evaluates, predicts and exports as the flags say.

    Returns the eval metrics (empty without do_eval). Writes to `output_dir`:
    checkpoints, cached features (`train.tf_record`, ...),
    `eval_results.txt`, `test_results.tsv` and the GLUE submission file.
    """
    _validate(options)
    config = load_bert_config(options.bert_config_file, options.max_seq_length)
    processor = glue.get_processor(options.task_name, **options.processor_options)
    label_list = processor.get_labels()
    num_outputs = 1 if processor.is_regression else len(label_list)
    tokenizer = tokenization.FullTokenizer(options.vocab_file, options.do_lower_case)
    tf.io.gfile.makedirs(options.output_dir)

    def features(split, pad_to=None):
        return classifier_features.ensure_split_features(
            processor, options.data_dir, split, options.output_dir, options.max_seq_length,
            tokenizer, vocab_file=options.vocab_file, do_lower_case=options.do_lower_case,
            long_text_stride=options.long_text_stride, pad_to_multiple_of=pad_to)

    def dataset_fn(path, batch_size, is_training):
        def make(input_context):
            return classifier_features.make_dataset(
                path, options.max_seq_length, batch_size, is_training,
                is_regression=processor.is_regression, input_context=input_context,
                seed=options.training.seed)
        return make

    training = options.training
    train_file = features("train") if options.do_train else None
    num_train_steps = 1
    if train_file:
        num_train_steps = max(1, int(train_file.num_features / options.train_batch_size
                                     * options.num_train_epochs))
    with training_environment(training) as strategy:
        for flag in ("train_batch_size", "eval_batch_size", "predict_batch_size"):
            distribution.check_batch_divisible(getattr(options, flag), strategy, flag)
        with strategy.scope():
            model = BertClassifier(config, num_outputs)
            optimizer = distribution.with_loss_scaling(create_optimizer(
                training.optimizer, options.learning_rate, num_train_steps,
                int(num_train_steps * options.warmup_proportion),
                weight_decay_rate=training.weight_decay_rate,
                gradient_accumulation_steps=training.gradient_accumulation_steps),
                training.dtype)
        trainer = Trainer(strategy, ClassificationTask(processor.is_regression), model, optimizer,
                          LoopConfig(output_dir=options.output_dir,
                                     num_train_steps=num_train_steps,
                                     steps_per_loop=training.steps_per_loop,
                                     save_checkpoints_steps=options.save_checkpoints_steps,
                                     keep_checkpoint_max=options.keep_checkpoint_max,
                                     jit_compile=training.jit_compile,
                                     gradient_accumulation_steps=(
                                         training.gradient_accumulation_steps)))
        if options.do_train:
            logging.info("training on %d features (%d examples) for %d steps",
                         train_file.num_features, train_file.num_examples, num_train_steps)
            init_fn = (lambda: warm_start(model, options.init_checkpoint)) \
                if options.init_checkpoint else None
            trainer.train(dataset_fn(train_file.path, options.train_batch_size, True),
                          options.train_batch_size, init_fn=init_fn)
        elif not trainer.checkpoints.restore_latest() and options.init_checkpoint:
            warm_start(model, options.init_checkpoint)

        metrics = {}
        if options.do_eval:
            eval_file = features("eval", pad_to=options.eval_batch_size)
            predictions = trainer.predict(
                dataset_fn(eval_file.path, options.eval_batch_size, False), _PASSTHROUGH)
            logits, labels = combine_windows(predictions)
            metrics = eval_metrics(processor, logits, labels)
            metrics["global_step"] = int(trainer.global_step.numpy())
            write_results(os.path.join(options.output_dir, "eval_results.txt"), metrics)
        if options.do_predict:
            predict_file = features("predict", pad_to=options.predict_batch_size)
            predictions = trainer.predict(
                dataset_fn(predict_file.path, options.predict_batch_size, False), _PASSTHROUGH)
            logits, _ = combine_windows(predictions)
            outputs = logits[:, 0] if processor.is_regression else _softmax(logits)
            classifier_outputs.write_test_results(
                os.path.join(options.output_dir, "test_results.tsv"), outputs)
            if processor.submission_name:
                classifier_outputs.write_glue_submission(
                    classifier_outputs.submission_path(options.output_dir, processor),
                    processor, outputs, label_list)
        if options.export_dir:
            export_classifier(model, options.export_dir, options.vocab_file,
                              options.do_lower_case, options.max_seq_length,
                              _has_sentence_pairs(processor, options.data_dir),
                              is_regression=processor.is_regression,
                              long_text_stride=options.long_text_stride,
                              overwrite=options.overwrite)
        return metrics
