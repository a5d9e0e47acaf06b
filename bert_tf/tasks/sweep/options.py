"""The flags of a sweep (`SweepOptions`, a group of every fine-tuning
script) and the grid they describe. Free of TensorFlow, so that a bad grid
value is an `error:` line before the script imports it."""

import dataclasses
import itertools
import math

from bert_tf.errors import InputError
from bert_tf.options import Options, option

SELECT_CHOICES = ("best", "mean")
# The grid flags: (flag, the `TrainingOptions` flag each value replaces, the type of a value).
GRID_FLAGS = (
    ("learning_rates", "learning_rate", float),
    ("train_batch_sizes", "train_batch_size", int),
    ("num_train_epochs_grid", "num_train_epochs", float),
)


@dataclasses.dataclass(frozen=True)
class Configuration:
    """One point of the grid."""

    learning_rate: float
    train_batch_size: int
    num_train_epochs: float

    @property
    def name(self):
        """The configuration's part of its runs' folder names, e.g. `lr5e-05_bs32_ep3`."""
        return f"lr{self.learning_rate:g}_bs{self.train_batch_size}_ep{self.num_train_epochs:g}"


@dataclasses.dataclass(frozen=True, kw_only=True)
class SweepOptions(Options):
    """A grid of fine-tuning configurations and random restarts (validated).
    A grid flag left empty holds the value of its single-run flag."""

    learning_rates: tuple = option(
        (),
        "Sweep: learning rates to try, comma-separated (e.g. 5e-5,4e-5,3e-5,2e-5; "
        "default: --learning_rate alone). Each configuration of the grid and each "
        "restart is an ordinary run in its own folder of --output_dir.",
    )
    train_batch_sizes: tuple = option(
        (), "Sweep: training batch sizes to try, comma-separated (default: --train_batch_size)."
    )
    num_train_epochs_grid: tuple = option(
        (), "Sweep: epoch counts to try, comma-separated (default: --num_train_epochs)."
    )
    restarts: int = option(
        1,
        "Sweep: runs of each configuration, restart r seeded with --seed + r (--seed "
        "unset: r); more than 1 makes a sweep even without a grid flag.",
        at_least=1,
    )
    select: str = option(
        "best",
        "Sweep: how the configuration is chosen: best (its best restart beats every "
        "other run) or mean (the best mean over its restarts). Its best restart is "
        "linked as output_dir/best, from which --do_predict and --export_dir run.",
    )
    sweep_metric: str | None = option(
        None,
        "Sweep: the dev metric runs are compared by, as --keep_best_checkpoint names "
        "one (default: the task's: eval_accuracy, matthews_corr for CoLA, pearson for "
        "STS-B, micro_f1 multi-label, f1 for NER and SQuAD, F1 for CMRC 2018).",
    )

    def __post_init__(self):
        super().__post_init__()
        for flag, _, kind in GRID_FLAGS:
            values = [_grid_value(flag, value, kind) for value in getattr(self, flag)]
            if len(set(values)) != len(values):
                given = ",".join(map(str, getattr(self, flag)))
                raise InputError(f"--{flag}={given}: a value is repeated")
        if self.select not in SELECT_CHOICES:
            raise InputError(
                f"unknown --select {self.select!r}; expected one of: {', '.join(SELECT_CHOICES)}"
            )

    @property
    def is_sweep(self):
        """Whether these flags ask for more than the one ordinary run."""
        return self.restarts > 1 or any(getattr(self, flag) for flag, _, _ in GRID_FLAGS)


def _grid_value(flag, value, kind):
    """The grid value `value` (a string from the command line, or a number)
    as `kind`; InputError naming `--flag` unless it is a finite positive `kind`."""
    try:
        number = kind(value)
        whole = number == float(value)
    except (TypeError, ValueError):
        number, whole = None, False
    if number is None or not whole or not 0 < number < math.inf:
        expected = "positive whole numbers" if kind is int else "positive numbers"
        raise InputError(f"--{flag}: {value!r} is not one of the {expected} it expects")
    return number


def configurations(training, sweep):
    """The grid's `Configuration`s in flag order (learning rate slowest):
    each grid flag's values, or the one value of `training`'s (a
    `TrainingOptions`) flag where the grid flag is empty."""
    axes = []
    for flag, single, kind in GRID_FLAGS:
        given = getattr(sweep, flag)
        axes.append([_grid_value(flag, v, kind) for v in given] or [getattr(training, single)])
    return [Configuration(*values) for values in itertools.product(*axes)]


def restart_seed(seed, restart):
    """The seed of restart `restart` (from 0) of a sweep run with `--seed=seed`
    (None: 0): the same for every configuration, so that configurations
    compare on the same shuffles and initial classifiers."""
    return (seed or 0) + restart
