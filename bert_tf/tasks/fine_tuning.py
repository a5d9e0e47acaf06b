"""What every fine-tuning task shares (classifier, multiple choice, NER,
SQuAD): `FineTuningRunner`, the plumbing written once (their flags: the
option groups of `tasks.options`).

A task supplies what only it decides (CONTRIBUTING.md has the recipe):

* `make_dataset`: its data module's `make_dataset(path, max_seq_length,
  batch_size, is_training, ...)` over its feature files (a staticmethod);
* `split_features(split, pad_to)`: the feature file of "train", "eval" or
  "predict" (`data.features.FeatureFile`), written or reused;
* `build_model(config)` and `objective()`;
* `score(predictions)`: the eval metrics (eval_results.txt) from
  `predict_split` of the eval split;
* `write_predictions(predictions)`: the prediction files of the predict split;

and, where it has them, `validate()`, `read_inputs()`, `export(model)` and
`dev_metric()` (what a sweep compares runs by).
The runner does the rest: the text settings (`self.text`, a
`model_text.TextSettings` with its tokenizer), every split's features before
training, the epoch schedule, the datasets (with dynamic padding and
grouping by length), and predict-then-score for eval.
"""

from absl import logging

from bert_tf.errors import InputError
from bert_tf.tasks.distillation import teacher_of
from bert_tf.tasks.model_setup import text_settings
from bert_tf.tasks.runner import TaskRunner

# The contract of a fine-tuning task (CONTRIBUTING.md's recipe): the hooks
# every task defines, and those it may add or change where it needs to. The
# rest of `FineTuningRunner` and `TaskRunner` is the skeleton's, which a task
# neither overrides nor needs to know (tests/test_task_recipe.py checks).
TASK_HOOKS = (
    "make_dataset",
    "split_features",
    "build_model",
    "objective",
    "score",
    "write_predictions",
)
OPTIONAL_HOOKS = (
    "validate",
    "read_inputs",
    "dataset_arguments",
    "dev_metric",
    "export",
    "passthrough",
    "predict_split",
    "epoch_of",
    "default_lower_case",
    # Distillation (`tasks.distillation`):
    "fingerprint_labels",
    "unlabeled_features",
    "labelled",
)


def epoch_schedule(num_examples, options):
    """`(num_train_steps, num_warmup_steps)` for `options.training.num_train_epochs` over
    `num_examples` at `options.training.train_batch_size`, with
    `options.training.warmup_proportion` of warm-up, as the original fine-tuning scripts."""
    num_train_steps = max(
        1, int(num_examples / options.training.train_batch_size * options.training.num_train_epochs)
    )
    return num_train_steps, int(num_train_steps * options.training.warmup_proportion)


def pass_name(split):
    """What the progress lines call a pass of the model over `split`."""
    return "evaluating" if split == "eval" else "predicting"


class FineTuningRunner(TaskRunner):
    """A fine-tuning task on the run skeleton (see the module docstring for
    what a task supplies). `self.options` holds the groups of `TaskRunner`'s."""

    batch_size_options = ("train_batch_size", "eval_batch_size", "predict_batch_size")
    reads_text = True
    # The feature keys `predict_split` returns beside the model's outputs.
    passthrough = ("label_ids", "is_real_example", "example_index")
    # What an epoch goes over: "num_examples" (the original's steps) or
    # "num_features" (every window of a long example counts).
    epoch_of = "num_examples"

    make_dataset = None
    # A sweep (`tasks.sweep`) runs fine-tuning tasks; it reads each run's
    # dev metrics from this file, written by this mode.
    sweeps = True
    dev_results = ("do_eval", "eval_results.txt")

    def __init__(self, options):
        super().__init__(options)
        self.text = None  # a TextSettings, from `prepare`
        self.train_file = None  # the train split's FeatureFile, with do_train
        self.teacher = teacher_of(options)
        self.unlabeled_file = None  # a distilled run's --unlabeled_file, with do_train
        self.feature_paths = []  # every feature file a dataset was made of
        # Where the feature files are cached; a sweep's runs share its folder.
        self.features_dir = options.run.output_dir

    def split_features(self, split, pad_to):
        """The split's `FeatureFile`, its examples padded with padding rows
        to a multiple of `pad_to` (None: no padding rows)."""
        raise NotImplementedError

    def dev_metric(self):
        """The dev metric (a `--keep_best_checkpoint` spec) a sweep compares
        runs by unless --sweep_metric names one (called after `validate`)."""
        return "eval_accuracy"

    def read_inputs(self):
        """Work after `self.text` is set, before any feature file (e.g.
        the label list)."""

    def fingerprint_labels(self):
        """The task's labels as its train features' fingerprint lists them,
        checked against a `--teacher`'s (None: the task has none)."""
        return None

    def unlabeled_features(self, paths):
        """The `FeatureFile` of the unlabelled text files `paths` (a
        distilled run's `--unlabeled_file`): records of the train set's
        schema without labels."""
        raise InputError("--unlabeled_file: this task reads no unlabelled text")

    def dataset_arguments(self):
        """More keyword arguments of `make_dataset`."""
        return {}

    def score(self, predictions):
        """The eval metrics from `predict_split` of the eval split."""
        raise NotImplementedError

    def write_predictions(self, predictions):
        """Writes the prediction files from `predict_split` of the predict split."""
        raise NotImplementedError

    def prepare(self, config):
        """`self.text`, `read_inputs`, then the features of every split
        the run uses, so that bad data in any split stops the run before
        training, not after it."""
        options = self.options
        self.text = text_settings(options)
        self.read_inputs()
        if self.teacher is not None:
            self.teacher.check_labels(self.fingerprint_labels())
        if options.run.do_train:
            self.train_file = self.split_features("train", None)
        if options.run.do_eval:
            self.split_features("eval", options.training.eval_batch_size)
        if options.run.do_predict:
            self.split_features("predict", options.training.predict_batch_size)
        self.text.tokenizer.check_unknown_share()

    def split_dataset_fn(self, path, batch_size, is_training):
        """The Trainer's `dataset_fn` over the feature file at `path` (or the
        list of files `path`, read together)."""
        paths = [path] if isinstance(path, str) else path
        self.feature_paths.extend(p for p in paths if p not in self.feature_paths)
        return self.dataset_fn(
            self.make_dataset, path, batch_size, is_training, **self.dataset_arguments()
        )

    def record_files(self):
        return self.feature_paths

    def train_schedule(self):
        train, unlabeled = self.train_file, self.unlabeled_file
        if unlabeled is None:
            schedule = epoch_schedule(getattr(train, self.epoch_of), self.options)
            logging.info(
                "training on %d features of %d examples for %d steps",
                train.num_features,
                train.num_examples,
                schedule[0],
            )
            return schedule
        size = getattr(train, self.epoch_of) + getattr(unlabeled, self.epoch_of)
        schedule = epoch_schedule(size, self.options)
        logging.info(
            "training on %d labelled and %d unlabelled %s for %d steps",
            getattr(train, self.epoch_of),
            getattr(unlabeled, self.epoch_of),
            self.epoch_of.removeprefix("num_"),
            schedule[0],
        )
        return schedule

    def steps_per_epoch(self, num_train_steps):
        return max(1, round(num_train_steps / self.options.training.num_train_epochs))

    def train_dataset_fn(self):
        """Batches of the train set (and a distilled run's unlabelled text,
        drawn in proportion to the sizes: `features.make_dataset`)."""
        path = self.train_file.path
        if self.unlabeled_file is not None:
            path = [path, self.unlabeled_file.path]
        return self.split_dataset_fn(path, self.options.training.train_batch_size, True)

    def predict_split(self, trainer, split, batch_size):
        """What `score` and `write_predictions` take. Default: the model's
        outputs and the `passthrough` features of every record of the split's
        feature file, as numpy arrays, in record order."""
        feature_file = self.split_features(split, batch_size)
        return trainer.predict(
            self.split_dataset_fn(feature_file.path, batch_size, False),
            self.passthrough,
            pass_name(split),
        )

    def evaluate(self, trainer):
        return self.score(
            self.predict_split(trainer, "eval", self.options.training.eval_batch_size)
        )

    def predict_and_write(self, trainer):
        self.write_predictions(
            self.predict_split(trainer, "predict", self.options.training.predict_batch_size)
        )
