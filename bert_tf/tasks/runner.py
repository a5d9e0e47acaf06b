"""`TaskRunner`: what a task supplies to `tasks.run.run_task` (a fine-tuning
task: `fine_tuning.FineTuningRunner`)."""

from absl import logging

from bert_tf.tasks.model_setup import load_model_config, warm_start, with_model_text


class TaskRunner:
    """What a task supplies to `run_task`. `self.options` holds the option
    groups `model`, `run`, `training`, `runtime` and `export` (see
    `tasks.options`), the model's vocab and casing already resolved
    (`model_setup.with_model_text`) for a task that `reads_text`; the hooks
    are called in the order listed."""

    # The batch sizes of `TrainingOptions` that every replica count must divide.
    batch_size_options = ("train_batch_size", "eval_batch_size")
    # Whether the task's batches may be padded only to their longest example
    # (--dynamic_padding); pre-training and SQuAD always pad to --max_seq_length.
    pads_dynamically = True
    # Whether the task tokenizes text (its options name a vocab and a casing,
    # resolved by `with_model_text`), and its casing when neither
    # --do_lower_case nor the model says one.
    reads_text = False
    default_lower_case = True
    # Whether the options hold a `sweep` group (`tasks.sweep`): fine-tuning tasks.
    sweeps = False
    # A distilled run's `tasks.distillation.Teacher` (fine-tuning tasks).
    teacher = None
    # `labelled(features)`: float32 `[batch]`, 1 on an example with a label,
    # for a task whose distillation mixes in unlabelled examples (None: its
    # loss already skips them).
    labelled = None

    def __init__(self, options):
        if self.reads_text:
            options = with_model_text(options, self.default_lower_case)
        self.options = options
        self.written = []  # (what, path) of each output, listed when the run ends
        # Set by run_task: the multiple batches are padded to under
        # --dynamic_padding, None for static --max_seq_length shapes.
        self.length_multiple = None

    def wrote(self, what, path):
        """Records an output file or folder for the run's closing list."""
        logging.info("wrote %s", path)
        self.written.append((what, path))

    def validate(self):
        """Checks the options before any work (raise InputError)."""

    def model_config(self):
        """The model's `BertConfig` (after `validate`), checked against the
        other files the options name (`model_setup.load_model_config`)."""
        return load_model_config(self.options)

    def initial_weights(self, model):
        """Training's `init_fn`: sets the model's weights when there is no
        checkpoint to resume; None keeps them as initialised. Default: the
        warm start from `--init_checkpoint`, if given."""
        checkpoint = self.options.model.init_checkpoint
        return (lambda: warm_start(model, checkpoint)) if checkpoint else None

    def prepare(self, config):
        """Work before the strategy: read inputs, write feature files."""

    def train_schedule(self):
        """`(num_train_steps, num_warmup_steps)` (called with do_train only)."""
        raise NotImplementedError

    def train_dataset_fn(self):
        """`dataset_fn(input_context)` of the training batches."""
        raise NotImplementedError

    def dataset_fn(self, make_dataset, path, batch_size, is_training, **task_arguments):
        """The Trainer's `dataset_fn(input_context)` over a feature file:
        `make_dataset(path, max_seq_length, batch_size, is_training, ...)` of
        the task's data module, with the run's seed and, for a task that
        `pads_dynamically`, its batch lengths and grouping."""
        options = self.options
        if self.pads_dynamically:
            task_arguments.update(
                length_multiple=self.length_multiple,
                # Grouped by length (dynamic padding only): eval and predict
                # always, training with --group_by_length. A task puts eval and
                # predict results back in example order (the classifier and
                # multiple choice by example_index, NER by sentence_index).
                group_by_length=self.length_multiple is not None
                and (options.model.group_by_length or not is_training),
            )

        def dataset_fn(input_context):
            return make_dataset(
                path,
                options.model.max_seq_length,
                batch_size,
                is_training,
                input_context=input_context,
                seed=options.runtime.seed,
                **task_arguments,
            )

        return dataset_fn

    def build_model(self, config):
        """The Keras model (called inside the strategy scope)."""
        raise NotImplementedError

    def objective(self):
        """The model's `training.loop.Objective`: its loss (and eval sums)."""
        raise NotImplementedError

    def evaluate(self, trainer):
        """With do_eval: the metrics to write to `eval_results.txt`."""
        raise NotImplementedError

    def steps_per_epoch(self, num_train_steps):
        """Updates in an epoch of training (a task with --eval_every_epoch)."""
        raise NotImplementedError

    def predict_and_write(self, trainer):
        """With do_predict (where the task has it): writes the prediction files."""

    # What to do about a damaged file of `record_files` (the end of its error line).
    damaged_file_remedy = "delete it and run again: the run writes it anew"

    def record_files(self):
        """The TFRecord files the run reads: when their reader fails, the first
        damaged one is named (see `features.damaged_file_error`)."""
        return []

    def export(self, model):
        """With export_dir (where the task has it): writes the SavedModel;
        returns its folder."""
