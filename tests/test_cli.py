"""Options declared once as dataclass fields (`options.option`) and the flags
`cli` makes of them."""

import dataclasses

import pytest
from absl import flags

from bert_tf import cli
from bert_tf.data.pretraining.writer import PretrainingDataOptions
from bert_tf.options import option


@dataclasses.dataclass(frozen=True)
class _Options:
    name: str = option(help="Required: no default.")
    patterns: tuple = option(("a", "b"), "A list flag named apart.", flag="pattern")
    count: int | None = option(None, "An optional int.")
    internal: str = "not a flag"


def _parse(options_class, *argv):
    flag_values = flags.FlagValues()
    cli.define_flags(options_class, flag_values)
    flag_values(["prog", *argv])
    return flag_values


def test_fields_become_flags_with_their_defaults_names_and_types():
    flag_values = _parse(_Options, "--name=x")
    assert sorted(flag_values) == ["count", "name", "pattern"]
    assert cli.options_from_flags(_Options, flag_values) == _Options(name="x")
    flag_values = _parse(_Options, "--name=x", "--pattern=p, q", "--count=3")
    assert cli.options_from_flags(_Options, flag_values) == _Options(
        name="x", patterns=("p", "q"), count=3
    )
    assert cli.options_from_flags(_Options, flag_values, count=7).count == 7


def test_a_field_without_a_default_is_a_required_flag():
    with pytest.raises(flags.IllegalFlagValueError, match="name"):
        _parse(_Options)


def test_create_pretraining_data_flags_keep_the_original_names_and_defaults():
    flag_values = _parse(
        PretrainingDataOptions,
        "--input_file=a.txt,,b*.txt",
        "--output_file=out.tfrecord,",
        "--vocab_file=vocab.txt",
    )
    options = cli.options_from_flags(PretrainingDataOptions, flag_values)
    assert options.input_patterns == ("a.txt", "b*.txt")
    assert options.output_files == ("out.tfrecord",)
    # The original create_pretraining_data.py's defaults.
    assert (
        options.do_lower_case,
        options.max_seq_length,
        options.max_predictions_per_seq,
        options.random_seed,
        options.dupe_factor,
        options.masked_lm_prob,
        options.short_seq_prob,
    ) == (True, 128, 20, 12345, 10, 0.15, 0.1)
