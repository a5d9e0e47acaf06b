"""The option groups of the scripts that run (`RuntimeOptions`) and train
(`TrainingOptions`) a model. Free of TensorFlow, so that a script parses its
flags before importing it; `training.distribution` sets up what they say."""

import dataclasses

from bert_tf.errors import InputError
from bert_tf.options import Options, option

STRATEGY_NAMES = ("tpu", "mirrored", "multi_worker_mirrored", "one_device", "off", "default")
DTYPES = ("float32", "mixed_float16", "mixed_bfloat16")
# The keys of `optimization.OPTIMIZERS` (a test keeps them equal).
OPTIMIZER_NAMES = ("adamw", "bert_adam", "lamb")
# `modeling.layers.RECOMPUTE_MODES` (a test keeps them equal).
RECOMPUTE_MODES = ("none", "layer", "attention")


def check_choice(flag_name, value, choices):
    """Raises InputError naming `--flag_name` unless `value` is one of `choices`."""
    if value not in choices:
        raise InputError(f"unknown --{flag_name} {value!r}; expected one of: {', '.join(choices)}")


@dataclasses.dataclass(frozen=True)
class RuntimeOptions(Options):
    """Where and how a model runs: strategy, precision, XLA and seeds
    (validated)."""

    distribution_strategy: str = option("default", f"One of: {', '.join(STRATEGY_NAMES)}.")
    num_gpus: int = option(0, "GPUs to mirror over (0: the CPU).", at_least=0)
    use_tpu: bool = option(False, "Run on a TPU (same as --distribution_strategy=tpu).")
    tpu_name: str | None = option(None, "Cloud TPU name or grpc:// address; 'local' on a VM.")
    tpu_zone: str | None = option(None, "GCE zone of the Cloud TPU (detected if unset).")
    gcp_project: str | None = option(None, "GCP project of the Cloud TPU (detected if unset).")
    master: str | None = option(None, "TPU address, used when --tpu_name is unset.")
    num_tpu_cores: int | None = option(
        None, "Expected TPU cores (TPUStrategy uses all).", at_least=1
    )
    dtype: str = option("float32", f"Compute precision, one of: {', '.join(DTYPES)}.")
    jit_compile: bool = option(
        False,
        "Compile the model with XLA: in the train, eval and predict steps and in an "
        "exported SavedModel (TF Serving on CPU then needs "
        "--xla_cpu_compilation_enabled).",
    )
    seed: int | None = option(
        None, "Random seed (Python, NumPy, TensorFlow, Keras).", at_least=0, at_most=2**32 - 1
    )
    deterministic: bool = option(False, "Make TensorFlow ops deterministic (needs --seed).")

    def __post_init__(self):
        super().__post_init__()
        check_choice("distribution_strategy", self.distribution_strategy, STRATEGY_NAMES)
        check_choice("dtype", self.dtype, DTYPES)
        if self.use_tpu and self.distribution_strategy not in ("default", "tpu"):
            raise InputError(
                f"--use_tpu conflicts with --distribution_strategy={self.distribution_strategy}"
            )
        if self.deterministic and self.seed is None:
            raise InputError("--deterministic needs --seed")


@dataclasses.dataclass(frozen=True)
class TrainingOptions(Options):
    """The optimizer, its schedule and the batches (validated). The schedule
    is in epochs (fine-tuning) or in updates (pre-training): a script exposes
    one of the two."""

    learning_rate: float = option(5e-5, "Peak learning rate.", above=0)
    optimizer: str = option("adamw", f"One of: {', '.join(OPTIMIZER_NAMES)}.")
    weight_decay_rate: float = option(
        0.01, "Weight decay (not on LayerNorm or biases).", at_least=0
    )
    num_train_epochs: float = option(3.0, "Training epochs.", above=0)
    warmup_proportion: float = option(
        0.1, "Share of training for linear warm-up.", at_least=0, at_most=1
    )
    num_train_steps: int = option(100000, "Optimizer updates to train for.", at_least=1)
    num_warmup_steps: int = option(10000, "Linear warm-up updates.", at_least=0)
    train_batch_size: int = option(32, "Global training batch size.", at_least=1)
    eval_batch_size: int = option(8, "Global evaluation batch size.", at_least=1)
    predict_batch_size: int = option(8, "Global prediction batch size.", at_least=1)
    gradient_accumulation_steps: int = option(1, "Batches averaged per update.", at_least=1)
    recompute: str = option(
        "none",
        "Recompute activations in the backward pass instead of keeping them, to train "
        "larger batches or longer sequences in less memory: layer (each transformer "
        "layer's; the least memory), attention (the attention scores alone), none.",
    )
    steps_per_loop: int = option(
        1000,
        "At most this many train steps per tf.function call (fewer when a progress "
        "line, about every 10 s, or a checkpoint is due).",
        alias="iterations_per_loop",
        at_least=1,
    )

    def __post_init__(self):
        super().__post_init__()
        check_choice("optimizer", self.optimizer, OPTIMIZER_NAMES)
        check_choice("recompute", self.recompute, RECOMPUTE_MODES)
