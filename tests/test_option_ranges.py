"""Numeric flags declare their range (`options.option(at_least=, above=,
at_most=, below=)`), and making the options refuses a value outside it with
one line naming the flag: at parse time for a script, and the same for
library code that builds options itself."""

import dataclasses
import importlib
import math

import pytest
from flag_tables import SCRIPT_OPTIONS
from hypothesis import given
from hypothesis import strategies as st

from bert_tf.errors import InputError
from bert_tf.options import REQUIRED, Options, Range, build, flag_fields

# Numeric flags every value of which is meaningful.
UNBOUNDED = {
    "random_seed",  # create_pretraining_data seeds random.Random with its text
    "null_score_diff_threshold",  # SQuAD 2.0: a margin of either sign
}


def _options_classes():
    found = {}
    for specs in SCRIPT_OPTIONS.values():
        for spec in specs:
            module, name = spec.split(":")
            found[spec] = getattr(importlib.import_module(module), name)
    return found


def _numeric_flags():
    """(options class, Flag) of every int or float flag of every script."""
    seen = {}
    for options_class in _options_classes().values():
        for flag in flag_fields(options_class):
            kinds = set(getattr(flag.field.type, "__args__", (flag.field.type,)))
            if kinds & {int, float} and bool not in kinds:
                seen.setdefault((options_class, flag.name), flag)
    return [(options_class, flag) for (options_class, _), flag in seen.items()]


NUMERIC_FLAGS = _numeric_flags()


def _flag_id(case):
    options_class, flag = case
    return f"{options_class.__name__}.{flag.name}"


def test_every_scripts_options_are_checked_when_made():
    def groups(options_class):
        yield options_class
        for field in dataclasses.fields(options_class):
            if "group" in field.metadata:
                yield field.metadata["group"].options_class

    for options_class in _options_classes().values():
        for checked in groups(options_class):
            assert issubclass(checked, Options), checked.__name__


def test_numeric_flags_are_found():
    names = {flag.name for _, flag in NUMERIC_FLAGS}
    assert {"train_batch_size", "learning_rate", "num_train_epochs", "max_seq_length"} <= names
    assert len(names) > 40


@pytest.mark.parametrize("case", NUMERIC_FLAGS, ids=_flag_id)
def test_every_numeric_flag_declares_its_range(case):
    _, flag = case
    if flag.name in UNBOUNDED:
        assert "range" not in flag.field.metadata
    else:
        assert isinstance(flag.field.metadata.get("range"), Range), flag.name


def _required_values(options_class):
    """A value for each required flag: a path or a name will do here."""
    values = {}
    for flag in flag_fields(options_class):
        if flag.default is REQUIRED:
            values[flag.name] = ("x",) if flag.field.type is tuple else "x"
    return values


def _outside(bounds, kind):
    """Values just outside each bound of `bounds`, and non-finite ones."""
    step = 1 if kind is int else 1e-6
    values = [] if kind is int else [math.nan, math.inf, -math.inf]
    if bounds.at_least is not None:
        values.append(kind(bounds.at_least - step))
    if bounds.above is not None:
        values.append(kind(bounds.above))
    if bounds.at_most is not None:
        values.append(kind(bounds.at_most + step))
    if bounds.below is not None:
        values.append(kind(bounds.below))
    return values


BOUNDED = [case for case in NUMERIC_FLAGS if "range" in case[1].field.metadata]


@pytest.mark.parametrize("case", BOUNDED, ids=_flag_id)
def test_a_value_outside_the_range_is_one_line_naming_the_flag(case):
    options_class, flag = case
    bounds = flag.field.metadata["range"]
    kind = float if float in getattr(flag.field.type, "__args__", (flag.field.type,)) else int
    for value in _outside(bounds, kind):
        with pytest.raises(InputError) as raised:
            build(options_class, **_required_values(options_class), **{flag.name: value})
        message = str(raised.value)
        assert message.startswith(f"--{flag.name}={value}: expected "), message
        assert "\n" not in message


@pytest.mark.parametrize("case", BOUNDED, ids=_flag_id)
def test_the_range_bounds_themselves_are_accepted_where_inclusive(case):
    options_class, flag = case
    bounds = flag.field.metadata["range"]
    required = _required_values(options_class)
    for value in (bounds.at_least, bounds.at_most):
        if value is None:
            continue
        # Other flags' checks may still refuse the pair; the range must not.
        try:
            build(options_class, **required, **{flag.name: value})
        except InputError as e:
            assert not str(e).startswith(f"--{flag.name}="), str(e)


@given(
    st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.one_of(st.none(), st.integers(-3, 3)),
    st.floats(allow_nan=True, allow_infinity=True),
)
def test_range_holds_as_its_description_says(at_least, above, at_most, below, value):
    bounds = Range(at_least, above, at_most, below)
    expected = math.isfinite(value) and all(
        (
            at_least is None or value >= at_least,
            above is None or value > above,
            at_most is None or value <= at_most,
            below is None or value < below,
        )
    )
    assert bounds.holds(value) == expected


def test_range_descriptions():
    assert Range(at_least=1).describe(int) == "a whole number >= 1"
    assert Range(above=0).describe(float) == "a number > 0"
    assert Range(at_most=1).describe(float) == "a number <= 1"
    assert Range(at_least=0, at_most=1).describe(float) == "a number in [0, 1]"
    assert Range(above=0, below=1).describe(float) == "a number in (0, 1)"
    assert Range(above=0, at_most=1).describe(float) == "a number in (0, 1]"


def test_library_code_making_options_gets_the_same_check():
    from bert_tf.training.options import TrainingOptions

    with pytest.raises(InputError, match=r"^--train_batch_size=0: expected a whole number >= 1$"):
        TrainingOptions(train_batch_size=0)
    with pytest.raises(InputError, match=r"^--learning_rate=-1\.0: expected a number > 0$"):
        TrainingOptions(learning_rate=-1.0)
    # A float flag given a Python int is still described as a number.
    with pytest.raises(InputError, match=r"^--learning_rate=0: expected a number > 0$"):
        TrainingOptions(learning_rate=0)
    assert TrainingOptions(num_train_epochs=0.5).num_train_epochs == 0.5
