"""`BertConfig`: the model hyper-parameters, read and written as `bert_config.json`."""

import dataclasses
import difflib
import json
import os

from bert_tf import files
from bert_tf.errors import ConfigError
from bert_tf.files import write_text_atomically

ACTIVATIONS = ("gelu", "gelu_exact", "relu", "tanh", "linear")
"""Supported `hidden_act` values. `gelu` is the original BERT's tanh
approximation; `gelu_exact` is the erf form (what Hugging Face calls `gelu`)."""

# Keys found in some of Google's released bert_config.json files (the
# multilingual models) that the model does not use.
_IGNORED_RELEASE_KEYS = frozenset(
    {
        "directionality",
        "pooler_fc_size",
        "pooler_num_attention_heads",
        "pooler_num_fc_layers",
        "pooler_size_per_head",
        "pooler_type",
    }
)

# Hugging Face `hidden_act` -> ours: its `gelu` is the exact (erf) form.
HF_ACTIVATIONS = {
    "gelu": "gelu_exact",
    "gelu_new": "gelu",
    "gelu_pytorch_tanh": "gelu",
    "relu": "relu",
    "tanh": "tanh",
    "linear": "linear",
}

# Keys only a Hugging Face config.json has; one of them marks the file as one.
_HF_MARKERS = frozenset(
    {"model_type", "architectures", "transformers_version", "_name_or_path", "layer_norm_eps"}
)


@dataclasses.dataclass(frozen=True)
class BertConfig:
    """The fields of the original `bert_config.json`, with its defaults.

    Args:
        vocab_size: Number of tokens in the WordPiece vocabulary (required).
        hidden_size: Width of the embeddings and of every layer's output.
        num_hidden_layers: Number of transformer layers.
        num_attention_heads: Attention heads per layer; must divide `hidden_size`.
        intermediate_size: Width of each layer's feed-forward hidden layer.
        hidden_act: The feed-forward activation, one of `ACTIVATIONS`.
        hidden_dropout_prob: Dropout rate of the embeddings and of each layer's
            attention and feed-forward outputs.
        attention_probs_dropout_prob: Dropout rate of the attention probabilities.
        max_position_embeddings: The longest sequence the model takes.
        type_vocab_size: Number of token type (segment) ids.
        initializer_range: Standard deviation of the truncated normal initializer.

    Raises:
        ConfigError: A size is not a positive integer, a dropout rate is
            outside [0, 1), `initializer_range` is not positive, `hidden_act`
            is unknown, or `hidden_size` is not a multiple of
            `num_attention_heads`.

    Examples:
        >>> import bert_tf
        >>> config = bert_tf.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
        ...                             num_attention_heads=2, intermediate_size=64)
        >>> config.attention_head_size
        16
        >>> bert_tf.BertConfig(vocab_size=100, hidden_size=30, num_attention_heads=4)
        Traceback (most recent call last):
        ...
        bert_tf.errors.ConfigError: hidden_size (30) is not a multiple of num_attention_heads (4)
    """

    vocab_size: int
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 16
    initializer_range: float = 0.02

    def __post_init__(self):
        for name in (
            "vocab_size",
            "hidden_size",
            "num_hidden_layers",
            "num_attention_heads",
            "intermediate_size",
            "max_position_embeddings",
            "type_vocab_size",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"{name}: expected a positive integer, got {value!r}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0.0 <= value < 1.0:
                raise ConfigError(f"{name}: expected a probability in [0, 1), got {value!r}")
        if not isinstance(self.initializer_range, (int, float)) or self.initializer_range <= 0:
            raise ConfigError(
                f"initializer_range: expected a positive number, got {self.initializer_range!r}"
            )
        if self.hidden_act not in ACTIVATIONS:
            raise ConfigError(
                f"hidden_act: unknown activation {self.hidden_act!r}; "
                f"expected one of {', '.join(ACTIVATIONS)}"
            )
        if self.hidden_size % self.num_attention_heads:
            raise ConfigError(
                f"hidden_size ({self.hidden_size}) is not a multiple of "
                f"num_attention_heads ({self.num_attention_heads})"
            )

    @property
    def attention_head_size(self):
        """Width of one attention head: `hidden_size // num_attention_heads`."""
        return self.hidden_size // self.num_attention_heads

    @classmethod
    def from_dict(cls, values, source="config"):
        """Builds a config from a dict with the original's keys.

        `vocab_size` is required (as in the original); an unknown key is an
        error, except the unused pooler keys of Google's multilingual configs.
        A Hugging Face `config.json` is recognised and translated
        (`from_hf_dict`).

        Args:
            values: The dict, e.g. a parsed `bert_config.json`.
            source: What `values` came from, to name in error messages.

        Returns:
            The `BertConfig`.

        Raises:
            ConfigError: `values` is not a dict, has an unknown key (the
                message suggests the closest field), lacks `vocab_size`, or
                holds an invalid value.

        Examples:
            >>> from bert_tf import BertConfig
            >>> BertConfig.from_dict({"vocab_size": 100, "num_hidden_layers": 4}).hidden_size
            768
            >>> BertConfig.from_dict({"vocab_size": 100, "num_hiden_layers": 4})
            Traceback (most recent call last):
            ...
            bert_tf.errors.ConfigError: config: unknown field 'num_hiden_layers' (did you mean 'num_hidden_layers'?)
        """
        if not isinstance(values, dict):
            raise ConfigError(f"{source}: expected a JSON object, got {type(values).__name__}")
        if _HF_MARKERS & set(values):
            return cls.from_hf_dict(values, source)
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - fields - _IGNORED_RELEASE_KEYS)
        if unknown:
            key = unknown[0]
            close = difflib.get_close_matches(key, sorted(fields), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{source}: unknown field {key!r}{hint}")
        if "vocab_size" not in values:
            raise ConfigError(f"{source}: missing field 'vocab_size'")
        try:
            return cls(**{k: v for k, v in values.items() if k in fields})
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_hf_dict(cls, values, source="config.json"):
        """Maps a Hugging Face BERT `config.json` dict to a BertConfig: its
        `gelu` becomes `gelu_exact` (`gelu_new` is the original's tanh
        `gelu`); keys the model does not use are dropped, settings it cannot
        honour are errors.

        Args:
            values: The parsed `config.json`.
            source: What `values` came from, to name in error messages.

        Returns:
            The `BertConfig`.

        Raises:
            ConfigError: An unsupported `hidden_act`, a `layer_norm_eps` other
                than 1e-12, position embeddings other than absolute, a missing
                `vocab_size` or an invalid value.

        Examples:
            >>> from bert_tf import BertConfig
            >>> BertConfig.from_hf_dict({"model_type": "bert", "vocab_size": 100}).hidden_act
            'gelu_exact'
        """
        act = values.get("hidden_act", "gelu")
        if act not in HF_ACTIVATIONS:
            raise ConfigError(f"{source}: unsupported hidden_act {act!r}")
        eps = values.get("layer_norm_eps", 1e-12)
        if eps != 1e-12:
            raise ConfigError(f"{source}: layer_norm_eps {eps} is not BERT's 1e-12")
        if values.get("position_embedding_type", "absolute") != "absolute":
            raise ConfigError(f"{source}: only absolute position embeddings are supported")
        fields = [f.name for f in dataclasses.fields(cls)]
        kept = {k: values[k] for k in fields if k in values}
        if "vocab_size" not in kept:
            raise ConfigError(f"{source}: missing field 'vocab_size'")
        try:
            return cls(**{**kept, "hidden_act": HF_ACTIVATIONS[act]})
        except ConfigError as e:
            raise ConfigError(f"{source}: {e}") from None

    @classmethod
    def from_json_file(cls, path):
        """Reads an original `bert_config.json` (or a Hugging Face `config.json`).

        Args:
            path: The file (local, or any path `tf.io.gfile` reads).

        Returns:
            The `BertConfig` (see `from_dict`).

        Raises:
            ConfigError: The file does not exist, is not valid JSON, or its
                contents are not a valid config.

        Examples:
            >>> import os, tempfile
            >>> from bert_tf import BertConfig
            >>> path = os.path.join(tempfile.mkdtemp(), "bert_config.json")
            >>> BertConfig(vocab_size=100, hidden_size=64, num_attention_heads=2).to_json_file(path)
            >>> BertConfig.from_json_file(path).hidden_size
            64
        """
        if not files.exists(path) or files.isdir(path):
            raise ConfigError(f"bert config: no such file {path!r}")
        with files.open_file(path) as f:
            try:
                values = json.load(f)
            except json.JSONDecodeError as e:
                raise ConfigError(f"{path}: not valid JSON ({e})") from None
        return cls.from_dict(values, source=path)

    def to_dict(self):
        """Returns the fields as a dict with the original's keys."""
        return dataclasses.asdict(self)

    def to_json_string(self):
        """Returns the `bert_config.json` text: sorted keys, indented, a final newline."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"

    def to_json_file(self, path):
        """Writes the config atomically, in the original's format.

        Args:
            path: Where to write it, e.g. `<folder>/bert_config.json`.

        Examples:
            >>> import os, tempfile
            >>> from bert_tf import BertConfig
            >>> path = os.path.join(tempfile.mkdtemp(), "bert_config.json")
            >>> BertConfig(vocab_size=100).to_json_file(path)
            >>> BertConfig.from_json_file(path) == BertConfig(vocab_size=100)
            True
        """
        write_text_atomically(path, self.to_json_string())

    def replace(self, **changes):
        """Returns a copy with some fields changed (validated).

        Args:
            **changes: The fields to change, by name.

        Returns:
            The new `BertConfig`.

        Raises:
            ConfigError: A changed value is invalid.

        Examples:
            >>> import bert_tf
            >>> bert_tf.preset("bert_base").replace(num_hidden_layers=6).num_hidden_layers
            6
        """
        return dataclasses.replace(self, **changes)


def _preset(layers, hidden, heads=None):
    return dict(
        num_hidden_layers=layers,
        hidden_size=hidden,
        num_attention_heads=heads or hidden // 64,
        intermediate_size=4 * hidden,
        type_vocab_size=2,
    )


# Google's 24 small BERTs (L-{2..12}_H-{128..768}) plus base and large, with
# the 30522-token uncased English vocabulary.
PRESETS = {
    f"bert_uncased_L-{layers}_H-{hidden}_A-{hidden // 64}": _preset(layers, hidden)
    for layers in (2, 4, 6, 8, 10, 12)
    for hidden in (128, 256, 512, 768)
}
PRESETS.update(
    {
        "bert_tiny": _preset(2, 128),
        "bert_mini": _preset(4, 256),
        "bert_small": _preset(4, 512),
        "bert_medium": _preset(8, 512),
        "bert_base": _preset(12, 768),
        "bert_large": _preset(24, 1024, heads=16),
    }
)


def preset(name, vocab_size=30522, **overrides):
    """Returns the BertConfig of a released model size, e.g. `preset("bert_base")`.

    Args:
        name: One of `PRESETS`: Google's small BERTs
            (`bert_uncased_L-{2..12}_H-{128..768}_A-{2..12}`), `bert_tiny`,
            `bert_mini`, `bert_small`, `bert_medium`, `bert_base` or `bert_large`.
        vocab_size: The vocabulary size, by default that of the uncased
            English vocabulary.
        **overrides: `BertConfig` fields to change.

    Returns:
        The `BertConfig`.

    Raises:
        ConfigError: `name` is not a preset, or an override is invalid.

    Examples:
        >>> import bert_tf
        >>> config = bert_tf.preset("bert_tiny", vocab_size=1000)
        >>> config.num_hidden_layers, config.hidden_size, config.num_attention_heads
        (2, 128, 2)
    """
    if name not in PRESETS:
        raise ConfigError(f"unknown preset {name!r}; expected one of {', '.join(sorted(PRESETS))}")
    return BertConfig(vocab_size=vocab_size, **{**PRESETS[name], **overrides})


# Config files beside a checkpoint: Google's releases, then Hugging Face folders.
CONFIG_FILE_NAMES = ("bert_config.json", "config.json")


def checkpoint_folder(checkpoint):
    """The folder `checkpoint`, or the folder of the checkpoint prefix `checkpoint`."""
    return checkpoint if files.isdir(checkpoint) else os.path.dirname(checkpoint)


def config_file_beside(checkpoint):
    """The config file in the folder `checkpoint` or beside the checkpoint
    prefix `checkpoint` (the first of CONFIG_FILE_NAMES there), or None."""
    folder = checkpoint_folder(checkpoint)
    for name in CONFIG_FILE_NAMES:
        if files.exists(os.path.join(folder, name)):
            return os.path.join(folder, name)
    return None
