"""The option groups of the scripts that run (`RuntimeOptions`) and train
(`TrainingOptions`) a model. Free of TensorFlow, so that a script parses its
flags before importing it; `training.distribution` sets up what they say."""

import dataclasses

from bert_tf.errors import InputError
from bert_tf.options import option

STRATEGY_NAMES = ("tpu", "mirrored", "multi_worker_mirrored", "one_device", "off", "default")
DTYPES = ("float32", "mixed_float16", "mixed_bfloat16")
# The keys of `optimization.OPTIMIZERS` (a test keeps them equal).
OPTIMIZER_NAMES = ("adamw", "bert_adam", "lamb")


def check_choice(flag_name, value, choices):
    """Raises InputError naming `--flag_name` unless `value` is one of `choices`."""
    if value not in choices:
        raise InputError(f"unknown --{flag_name} {value!r}; expected one of: {', '.join(choices)}")


@dataclasses.dataclass(frozen=True)
class RuntimeOptions:
    """Where and how a model runs: strategy, precision, XLA and seeds
    (validated)."""

    distribution_strategy: str = option("default", f"One of: {', '.join(STRATEGY_NAMES)}.")
    num_gpus: int = option(0, "GPUs to mirror over (0: the CPU).")
    use_tpu: bool = option(False, "Run on a TPU (same as --distribution_strategy=tpu).")
    tpu_name: str | None = option(None, "Cloud TPU name or grpc:// address; 'local' on a VM.")
    tpu_zone: str | None = option(None, "GCE zone of the Cloud TPU (detected if unset).")
    gcp_project: str | None = option(None, "GCP project of the Cloud TPU (detected if unset).")
    master: str | None = option(None, "TPU address, used when --tpu_name is unset.")
    num_tpu_cores: int | None = option(None, "Expected TPU cores (TPUStrategy uses all).")
    dtype: str = option("float32", f"Compute precision, one of: {', '.join(DTYPES)}.")
    jit_compile: bool = option(
        False,
        "Compile the model with XLA: in the train, eval and predict steps and in an "
        "exported SavedModel (TF Serving on CPU then needs "
        "--xla_cpu_compilation_enabled).",
    )
    seed: int | None = option(None, "Random seed (Python, NumPy, TensorFlow, Keras).")
    deterministic: bool = option(False, "Make TensorFlow ops deterministic (needs --seed).")

    def __post_init__(self):
        check_choice("distribution_strategy", self.distribution_strategy, STRATEGY_NAMES)
        check_choice("dtype", self.dtype, DTYPES)
        if self.num_gpus < 0:
            raise InputError(f"--num_gpus must be >= 0, got {self.num_gpus}")
        if self.use_tpu and self.distribution_strategy not in ("default", "tpu"):
            raise InputError(
                f"--use_tpu conflicts with --distribution_strategy={self.distribution_strategy}"
            )
        if self.deterministic and self.seed is None:
            raise InputError("--deterministic needs --seed")


@dataclasses.dataclass(frozen=True)
class TrainingOptions:
    """The optimizer, its schedule and the batches (validated). The schedule
    is in epochs (fine-tuning) or in updates (pre-training): a script exposes
    one of the two."""

    learning_rate: float = option(5e-5, "Peak learning rate.")
    optimizer: str = option("adamw", f"One of: {', '.join(OPTIMIZER_NAMES)}.")
    weight_decay_rate: float = option(0.01, "Weight decay (not on LayerNorm or biases).")
    num_train_epochs: float = option(3.0, "Training epochs.")
    warmup_proportion: float = option(0.1, "Share of training for linear warm-up.")
    num_train_steps: int = option(100000, "Optimizer updates to train for.")
    num_warmup_steps: int = option(10000, "Linear warm-up updates.")
    train_batch_size: int = option(32, "Global training batch size.")
    eval_batch_size: int = option(8, "Global evaluation batch size.")
    predict_batch_size: int = option(8, "Global prediction batch size.")
    gradient_accumulation_steps: int = option(1, "Batches averaged per update.")
    steps_per_loop: int = option(
        1000,
        "At most this many train steps per tf.function call (fewer when a progress "
        "line, about every 10 s, or a checkpoint is due).",
        alias="iterations_per_loop",
    )

    def __post_init__(self):
        check_choice("optimizer", self.optimizer, OPTIMIZER_NAMES)
        if self.weight_decay_rate < 0:
            raise InputError(f"--weight_decay_rate must be >= 0, got {self.weight_decay_rate}")
        for name in ("steps_per_loop", "gradient_accumulation_steps"):
            if getattr(self, name) < 1:
                raise InputError(f"--{name} must be >= 1, got {getattr(self, name)}")
