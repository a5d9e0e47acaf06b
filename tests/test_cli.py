"""Options declared once as dataclass fields (`options.option`) and the flags
`cli` makes of them."""

import dataclasses
import os
import runpy
import sys

import pytest
from absl import flags

from bert_tf import cli
from bert_tf.data.pretraining.writer import PretrainingDataOptions
from bert_tf.options import REQUIRED, build, flag_fields, group, option, replace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


@dataclasses.dataclass(frozen=True)
class _Group:
    size: int = option(3, "A size.")
    path: str | None = option(None, "A path.")
    hidden: bool = option(False, "Not a flag of _Composed.")


@dataclasses.dataclass(frozen=True)
class _Other:
    name: str | None = option(None, "A name.")


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Composed:
    first: _Group = group(_Group, exclude=("hidden",), defaults={"size": 5}, help={"size": "Mine."})
    second: _Other = group(_Other, defaults={"name": REQUIRED})
    own: int = option(1, "An own flag.")


def test_groups_expose_the_fields_their_script_names_with_its_defaults_and_help():
    assert [(f.name, f.group, f.default, f.help) for f in flag_fields(_Composed)] == [
        ("size", "first", 5, "Mine."),
        ("path", "first", None, "A path."),
        ("name", "second", REQUIRED, "A name."),
        ("own", None, 1, "An own flag."),
    ]
    flag_values = _parse(_Composed, "--name=n", "--size=7")
    assert cli.options_from_flags(_Composed, flag_values) == _Composed(
        first=_Group(size=7), second=_Other(name="n")
    )
    with pytest.raises(flags.IllegalFlagValueError, match="name"):
        _parse(_Composed)


def test_options_are_built_and_replaced_by_flag_name():
    built = build(_Composed, size=7, own=2, name="n")
    assert built == _Composed(first=_Group(size=7), second=_Other(name="n"), own=2)
    assert build(_Composed, second=_Other("m")).first == _Group(size=5)
    assert replace(built, size=9, path="p").first == _Group(size=9, path="p")
    with pytest.raises(TypeError, match="needs the flag name"):
        build(_Composed)
    with pytest.raises(TypeError, match="no flag hidden"):
        replace(built, hidden=True)
    with pytest.raises(TypeError, match="no option typo"):
        group(_Group, help={"typo": "x"})


def test_every_scripts_options_refuse_an_assignment():
    """A flat name of before the groups (`options.init_checkpoint = ...`) or a
    misspelling is an error, not an attribute nothing reads."""
    from bert_tf.tasks import options as task_options

    built = build(task_options.ClassifierOptions, task_name="mrpc", data_dir="d", output_dir="o")
    for target, name in ((built, "init_checkpoint"), (built.model, "init_checkpoint")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(target, name, "x")
    script_classes = [
        value
        for value in vars(task_options).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value)
    ]
    assert len(script_classes) >= 10
    for options_class in script_classes:
        groups = [
            f.metadata["group"].options_class
            for f in dataclasses.fields(options_class)
            if "group" in f.metadata
        ]
        for frozen_class in (options_class, *groups):
            assert frozen_class.__dataclass_params__.frozen, frozen_class.__name__


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
    instances = options.instances
    assert (
        options.tokenizer.do_lower_case,
        instances.max_seq_length,
        instances.max_predictions_per_seq,
        options.random_seed,
        instances.dupe_factor,
        instances.masked_lm_prob,
        instances.short_seq_prob,
    ) == (True, 128, 20, 12345, 10, 0.15, 0.1)


# Literal defaults of every flag of every script. Where google-research/bert has the
# flag, its default (the original's AdamW decays by 0.01); else the current one.
# The differences from the original: --num_tpu_cores (8 there; None here, as
# TPUStrategy uses every core), and --do_lower_case of the scripts that run a
# model (True there; None here: the model's casing, else True, or False for
# run_ner.py, see bert_tf.text.model_text). Each script's dict is complete: a flag added or
# removed fails too.
RUNTIME = {
    "distribution_strategy": "default",
    "num_gpus": 0,
    "use_tpu": False,
    "tpu_name": None,
    "tpu_zone": None,
    "gcp_project": None,
    "master": None,
    "num_tpu_cores": None,
    "dtype": "float32",
    "jit_compile": False,
    "seed": None,
    "deterministic": False,
}
TRAINING = {
    **RUNTIME,
    "iterations_per_loop": 1000,
    "steps_per_loop": 1000,
    "optimizer": "adamw",
    "gradient_accumulation_steps": 1,
    "recompute": "none",
    "weight_decay_rate": 0.01,
}
CLASSIFIER_DATA = {
    "delimiter": None,
    "has_header": None,
    "id_column": None,
    "label_column": None,
    "label_delimiter": None,
    "labels": None,
    "labels_file": None,
    "multi_label": False,
    "regression": None,
    "skip_malformed": None,
    "text_a_column": None,
    "text_b_column": None,
    "xnli_language": None,
}
# A sweep's flags (new: one ordinary run unless one is set), on every fine-tuning script.
SWEEP = {
    "learning_rates": [],
    "train_batch_sizes": [],
    "num_train_epochs_grid": [],
    "restarts": 1,
    "select": "best",
    "sweep_metric": None,
}
# The flags run_classifier.py, run_ner.py and run_multiple_choice.py share.
FINE_TUNING = {
    **TRAINING,
    **SWEEP,
    "bert_config_file": None,
    "vocab_file": None,
    "allow_vocab_mismatch": False,
    "init_checkpoint": None,
    "data_dir": None,
    "output_dir": None,
    "export_dir": None,
    "overwrite": False,
    "do_train": False,
    "do_eval": False,
    "do_predict": False,
    "max_seq_length": 128,
    "train_batch_size": 32,
    "eval_batch_size": 8,
    "predict_batch_size": 8,
    "learning_rate": 5e-5,
    "num_train_epochs": 3.0,
    "warmup_proportion": 0.1,
    "save_checkpoints_steps": 1000,
    "keep_checkpoint_max": 5,
    "keep_best_checkpoint": None,
    "early_stopping_patience": 0,
    "eval_every_epoch": False,
    "eval_every_steps": 0,
    "dynamic_padding": True,
    "padding_multiple": None,
    "group_by_length": False,
}
# The distillation flags of run_classifier.py, run_ner.py and run_squad.py (new here).
DISTILLATION = {
    "teacher": None,
    "teacher_config_file": None,
    "student_num_layers": None,
    "temperature": 2.0,
    "distillation_weight": 0.5,
    "unlabeled_file": None,
    "hidden_distillation_weight": 0.0,
    "cosine_distillation_weight": 0.0,
    "embedding_distillation_weight": 0.0,
    "attention_distillation_weight": 0.0,
    "value_relation_distillation_weight": 0.0,
    "layer_map": None,
    "intermediate_only": False,
}
SCRIPT_DEFAULTS = {
    "run_classifier.py": {
        **FINE_TUNING,
        **DISTILLATION,
        **CLASSIFIER_DATA,
        "task_name": None,
        "do_lower_case": None,
        "class_weights": None,
        "long_text_stride": None,
        "threshold": None,
        "tune_thresholds": False,
    },
    "run_ner.py": {
        **FINE_TUNING,
        **DISTILLATION,
        "do_lower_case": None,  # else False: no run_ner.py in the original
        "combine": "concat",
        "data_format": "conll",
        "document_context": False,
        "feature_based": False,
        "labels": "",
        "layers": "-1,-2,-3,-4",
        "lstm_units": 768,
        "tag_scheme": "auto",
        "use_crf": False,
    },
    "run_multiple_choice.py": {**FINE_TUNING, "do_lower_case": None},
    "run_squad.py": {
        **TRAINING,
        **SWEEP,
        **DISTILLATION,
        "bert_config_file": None,
        "vocab_file": None,
        "allow_vocab_mismatch": False,
        "init_checkpoint": None,
        "train_file": None,
        "predict_file": None,
        "output_dir": None,
        "export_dir": None,
        "overwrite": False,
        "do_lower_case": None,
        "do_train": False,
        "do_predict": False,
        "max_seq_length": 384,
        "doc_stride": 128,
        "max_query_length": 64,
        "train_batch_size": 32,
        "predict_batch_size": 8,
        "learning_rate": 5e-5,
        "num_train_epochs": 3.0,
        "warmup_proportion": 0.1,
        "save_checkpoints_steps": 1000,
        "keep_checkpoint_max": 5,
        "n_best_size": 20,
        "max_answer_length": 30,
        "verbose_logging": False,
        "version_2_with_negative": False,
        "null_score_diff_threshold": 0.0,
        "eval_metric": "squad",
        "dynamic_padding": True,
        "padding_multiple": None,
        "group_by_length": False,
    },
    "run_pretraining.py": {
        **TRAINING,
        "bert_config_file": None,
        "input_file": None,
        "output_dir": None,
        "init_checkpoint": None,
        "max_seq_length": 128,
        "max_predictions_per_seq": 20,
        "do_train": False,
        "do_eval": False,
        "train_batch_size": 32,
        "eval_batch_size": 8,
        "learning_rate": 5e-5,
        "num_train_steps": 100000,
        "num_warmup_steps": 10000,
        "save_checkpoints_steps": 1000,
        "max_eval_steps": 100,
        "keep_checkpoint_max": 5,
        "keep_best_checkpoint": None,
        "early_stopping_patience": 0,
        "eval_every_steps": 0,
        "eval_input_file": None,
        "skip_corrupt_records": False,
        "dynamic_padding": True,
        "padding_multiple": None,
        "group_by_length": False,
    },
    "extract_features.py": {
        **RUNTIME,
        "input_file": None,
        "output_file": None,
        "layers": "-1,-2,-3,-4",
        "bert_config_file": None,
        "max_seq_length": 128,
        "init_checkpoint": None,
        "vocab_file": None,
        "allow_vocab_mismatch": False,
        "do_lower_case": None,
        "batch_size": 32,
        "use_one_hot_embeddings": False,
        "output_format": "jsonl",
        "dynamic_padding": True,
        "padding_multiple": None,
    },
    "create_pretraining_data.py": {
        "input_file": None,
        "output_file": None,
        "vocab_file": None,
        "do_lower_case": True,
        "do_whole_word_mask": False,
        "max_seq_length": 128,
        "max_predictions_per_seq": 20,
        "random_seed": 12345,
        "dupe_factor": 10,
        "masked_lm_prob": 0.15,
        "short_seq_prob": 0.1,
        "num_workers": 1,
        "interleave_blocks": 4,
        "sentences_per_block": 10000,
        "show_progress": True,
        "skip_invalid_utf8": False,
        "word_segmenter": None,
        "runner": None,
        "num_output_shards": 1,
    },
    "export_model.py": {
        **CLASSIFIER_DATA,
        "saved_model_dir": None,
        "export_format": None,
        "output_file": None,
        "int8": False,
        "do_lower_case": True,
        "overwrite": False,
        "task_name": None,
        "data_dir": None,
        "max_accuracy_drop": 1.0,
    },
    "extend_checkpoint.py": {
        "init_checkpoint": None,
        "output_dir": None,
        "bert_config_file": None,
        "vocab_file": None,
        "allow_vocab_mismatch": False,
        "words_file": None,
        "words": [],
        "word_ids": "unused",
        "init": "truncated_normal",
        "seed": 12345,
        "type_vocab_size": None,
        "do_lower_case": None,
        "overwrite": False,
    },
    "build_vocab.py": {
        "input_file": None,
        "output_file": None,
        "vocab_size": 30522,
        "do_lower_case": True,
        "reserved_tokens": ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
        "max_unique_chars": None,
        "skip_invalid_utf8": False,
        "num_workers": 1,
        "runner": None,
    },
}


def script_flag_defaults(script, monkeypatch):
    """`{flag: default}` as `script`, run as `__main__`, defines its flags, onto
    a fresh FlagValues (cli's define functions default to the global one);
    `run_main`, which would parse them and run the script, does nothing."""
    flag_values = flags.FlagValues()
    defaults = tuple(flag_values if d is flags.FLAGS else d for d in cli.define_flags.__defaults__)
    monkeypatch.setattr(cli.define_flags, "__defaults__", defaults)
    monkeypatch.setattr(cli, "run_main", lambda main, known_only=False: None)
    monkeypatch.setattr(sys.modules["__main__"], "__doc__", None)  # run_script sets it
    global_flags = set(flags.FLAGS)
    runpy.run_path(os.path.join(REPO, script), run_name="__main__")
    assert set(flags.FLAGS) == global_flags, f"{script} defines flags past bert_tf.cli's functions"
    return {name: flag_values[name].default for name in flag_values}


@pytest.mark.parametrize("script", sorted(SCRIPT_DEFAULTS))
def test_every_flag_default_of_every_script_is_pinned(script, monkeypatch):
    defaults, expected = script_flag_defaults(script, monkeypatch), SCRIPT_DEFAULTS[script]
    changed = [
        f"--{name}: {defaults[name]!r}, expected {want!r}"
        for name, want in expected.items()
        if name in defaults and (defaults[name] != want or type(defaults[name]) is not type(want))
    ]
    assert not changed, f"{script}: " + "; ".join(changed)
    unpinned, gone = sorted(set(defaults) - set(expected)), sorted(set(expected) - set(defaults))
    assert not unpinned and not gone, (
        f"{script}: flags not pinned {unpinned}, pinned but gone {gone}"
    )
