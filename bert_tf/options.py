"""Options that are also command-line flags, composed from groups.

A group is a dataclass whose fields each declare a flag's name, type, default
and help text once (`option`); a script's options are a dataclass whose
fields hold the groups it needs (`group`: which of the group's fields the
script exposes, and the defaults or help it changes) beside its own options.
`bert_tf.cli` defines the flags (`flag_fields`) and builds the options from
them (`build`). Library code reads the typed fields and never sees the flags.

A field typed `tuple` is a comma-separated list on the command line; `flag=`
names the flag when the field's name says more (the original's `--input_file`
is `input_patterns`, a tuple of globs), `alias=` gives a second name. A
number's range is declared with it (`at_least=`, `above=`, `at_most=`) and
checked whenever the options are made (`Options`), so a bad value fails at
parse time, the same for a script and for library code.

`ModelOptions`, the group of every script that runs a model, lives here so
that every layer can compose it.
"""

import dataclasses
import math

from bert_tf.errors import InputError

# Without XLA a new batch length costs little (oneDNN kernels are made per
# shape, once): a small multiple keeps most of the padding compute away.
PADDING_MULTIPLE = 8
# Under XLA (--jit_compile), batch lengths and a SavedModel's text requests
# are padded to a multiple of this many tokens: each length is compiled into
# its own XLA program.
XLA_PAD_MULTIPLE = 16

ALLOW_VOCAB_MISMATCH_HELP = (
    "Use --vocab_file although the --init_checkpoint folder has another vocab.txt (e.g. "
    "your copy of it with [unused] lines replaced); by default that is an error."
)

# A `group` default that makes the flag required.
REQUIRED = dataclasses.MISSING


def option(
    default=REQUIRED,
    help="",  # noqa: A002  (absl's word for it)
    flag=None,
    alias=None,
    at_least=None,
    above=None,
    at_most=None,
    below=None,
):
    """A dataclass field that is also a command-line flag with this help text;
    without a default the flag is required. A number may be bounded
    (`at_least` / `above` from below, `at_most` / `below` from above; None,
    where a field allows it, is always valid)."""
    metadata = {"help": help}
    if flag:
        metadata["flag"] = flag
    if alias:
        metadata["alias"] = alias
    bounds = Range(at_least, above, at_most, below)
    if bounds != Range():
        metadata["range"] = bounds
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Range:
    """The values a numeric option takes: finite, and within the bounds that
    are not None."""

    at_least: float | None = None
    above: float | None = None
    at_most: float | None = None
    below: float | None = None

    def holds(self, value):
        return (
            math.isfinite(value)
            and (self.at_least is None or value >= self.at_least)
            and (self.above is None or value > self.above)
            and (self.at_most is None or value <= self.at_most)
            and (self.below is None or value < self.below)
        )

    def describe(self, kind):
        """What the range asks for, e.g. 'a whole number >= 1', 'a number in [0, 1)'."""
        noun = "a whole number" if kind is int else "a number"
        low = [(f"[{b}", f">= {b}") for b in (self.at_least,) if b is not None]
        low += [(f"({b}", f"> {b}") for b in (self.above,) if b is not None]
        high = [(f"{b}]", f"<= {b}") for b in (self.at_most,) if b is not None]
        high += [(f"{b})", f"< {b}") for b in (self.below,) if b is not None]
        if low and high:
            return f"{noun} in {low[0][0]}, {high[0][0]}"
        return f"{noun} {(low or high)[0][1]}"


class Options:
    """The base of every options dataclass: making one checks each field's
    declared `Range` (InputError naming the flag). A subclass with its own
    `__post_init__` calls this one first."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            bounds = field.metadata.get("range")
            value = getattr(self, field.name)
            if bounds is None or value is None or bounds.holds(value):
                continue
            flag = field.metadata.get("flag", field.name)
            raise InputError(f"--{flag}={value}: expected {bounds.describe(_number_kind(field))}")


def _number_kind(field):
    """`float` for a field typed float (or float | None), else `int`."""
    return float if float in getattr(field.type, "__args__", (field.type,)) else int


@dataclasses.dataclass(frozen=True)
class _Group:
    options_class: type
    names: tuple  # the fields that are flags
    defaults: dict
    help: dict


def group(options_class, flags=None, exclude=(), defaults=None, help=None):  # noqa: A002
    """A field holding the option group `options_class`. Its `option` fields
    named in `flags` (default: all), less those in `exclude`, are the
    script's flags; `defaults` and `help` ({field name: value}) change theirs
    for this script (`REQUIRED`: no default). The field's default is the
    group with those defaults, unless one is required."""
    defaults, help = dict(defaults or {}), dict(help or {})
    declared = [f.name for f in dataclasses.fields(options_class) if "help" in f.metadata]
    unknown = set(flags or ()) | set(exclude) | set(defaults) | set(help)
    unknown -= set(declared)
    if unknown:
        raise TypeError(f"{options_class.__name__} has no option {', '.join(sorted(unknown))}")
    names = tuple(n for n in declared if (flags is None or n in flags) and n not in exclude)
    spec = _Group(options_class, names, defaults, help)
    metadata = {"group": spec}
    required = [
        f.name
        for f in dataclasses.fields(options_class)
        if defaults.get(f.name, f.default) is REQUIRED and f.default_factory is REQUIRED
    ]
    if required:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default_factory=lambda: options_class(**defaults), metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Flag:
    """One flag of a script's options: its `name`, the `field` that declares
    it, the `group` field holding that one (None: the script's own), and
    its `default` and `help` for this script."""

    name: str
    field: dataclasses.Field
    group: str | None
    default: object
    help: str


def flag_fields(options_class):
    """The flags of the dataclass `options_class`: its own `option` fields and
    those its groups expose, as `Flag`s."""
    found = []
    for field in dataclasses.fields(options_class):
        if "help" in field.metadata:
            found.append(_flag(field, None, field.default, field.metadata["help"]))
        elif "group" in field.metadata:
            spec = field.metadata["group"]
            for member in dataclasses.fields(spec.options_class):
                if member.name in spec.names:
                    default = spec.defaults.get(member.name, member.default)
                    help_text = spec.help.get(member.name, member.metadata["help"])
                    found.append(_flag(member, field.name, default, help_text))
    return found


def _flag(field, group_name, default, help_text):
    bounds = field.metadata.get("range")
    if bounds is not None:  # `--help` and the docs' tables say the range
        help_text = (
            f"{help_text.rstrip().removesuffix('.')}; {bounds.describe(_number_kind(field))}."
        )
    return Flag(field.metadata.get("flag", field.name), field, group_name, default, help_text)


def flag_names(options_class):
    """The names of the flags of `options_class`."""
    return [flag.name for flag in flag_fields(options_class)]


def _by_field(options_class, values):
    """`values` ({flag name: value}) as `({own field: value}, {group field:
    {field: value}})`; names that are not flags stay in `values`."""
    own, grouped = {}, {}
    for flag in flag_fields(options_class):
        if flag.name in values:
            target = own if flag.group is None else grouped.setdefault(flag.group, {})
            target[flag.field.name] = values.pop(flag.name)
    return own, grouped


def build(options_class, **values):
    """The options a command line with these flags gives: each of `values`
    ({flag name: value}) to the field that declares it, the other flags and
    fields their defaults; a group field's value may also be given whole,
    by the field's name."""
    own, grouped = _by_field(options_class, values)
    for flag in flag_fields(options_class):
        given = flag.field.name in grouped.get(flag.group, {}) or flag.group in values
        if flag.default is REQUIRED and flag.group is not None and not given:
            raise TypeError(f"{options_class.__name__} needs the flag {flag.name}")
    for field in dataclasses.fields(options_class):
        if "group" in field.metadata and field.name not in values:
            spec = field.metadata["group"]
            if field.name in grouped or field.default_factory is REQUIRED:
                given = {k: v for k, v in spec.defaults.items() if v is not REQUIRED}
                values[field.name] = spec.options_class(**(given | grouped.get(field.name, {})))
    return options_class(**own, **values)


def replace(options, **values):
    """`options` with the flags in `values` ({flag name: value}) changed, as
    `dataclasses.replace` changes fields."""
    own, grouped = _by_field(type(options), values)
    if values:
        raise TypeError(f"{type(options).__name__} has no flag {', '.join(sorted(values))}")
    for name, changes in grouped.items():
        own[name] = dataclasses.replace(getattr(options, name), **changes)
    return dataclasses.replace(options, **own)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ModelOptions(Options):
    """The model, its vocabulary and how its inputs are padded: the group of
    every script that runs a model."""

    bert_config_file: str | None = option(
        None,
        "bert_config.json of the model: its architecture. Not needed when "
        "--init_checkpoint is a folder with one (Google's release, Hugging Face).",
    )
    init_checkpoint: str | None = option(
        None,
        "Checkpoint to start from: Google's bert_model.ckpt, a bert_tf or Model "
        "Garden checkpoint, or a Hugging Face folder.",
    )
    vocab_file: str | None = option(
        None, "The vocab.txt of the BERT model (default: the one in the --init_checkpoint folder)."
    )
    allow_vocab_mismatch: bool = option(False, ALLOW_VOCAB_MISMATCH_HELP)
    do_lower_case: bool | None = option(
        None,
        "Lower-case the input (uncased models). Default: what the model says (a Hugging "
        "Face tokenizer_config.json, a Google release's name), else true.",
    )
    max_seq_length: int = option(
        128, "Tokens per sequence after WordPiece, with [CLS]/[SEP].", at_least=3
    )
    dynamic_padding: bool = option(
        True,
        "Pad each batch only to its longest example, rounded up to --padding_multiple, "
        "not to --max_seq_length (same results, less compute). Off under TPUStrategy, "
        "which needs static shapes; pre-training and SQuAD always pad fully.",
    )
    padding_multiple: int | None = option(
        None,
        f"With --dynamic_padding: batch lengths are multiples of this. Default "
        f"{PADDING_MULTIPLE}, or {XLA_PAD_MULTIPLE} under --jit_compile (each length is "
        "compiled into its own XLA program).",
        at_least=1,
    )
    group_by_length: bool = option(
        False,
        "With --dynamic_padding: train on batches of similar lengths (sorted within "
        "windows of 32 batches, the batches then shuffled). Eval and predict always "
        "do so, and write results in the original order.",
    )
