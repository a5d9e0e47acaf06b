"""The command-line scripts, one module per script, each with its `main` and
the `run` that setup.py's console scripts (`bert-tf-run-classifier`, ...),
`python -m bert_tf.scripts.<script>` and the checkout's top-level
`<script>.py` call.

A script module imports no TensorFlow before its flags are parsed: `--help`
and a bad flag answer at once. `import bert_tf` sets TensorFlow's C++ log
level first (`TF_CPP_MIN_LOG_LEVEL`, unless set).

What the scripts differ in is one row each of `SCRIPTS`; a script's module
holds its docstring (the `--help` text, to which `script` adds the three
ways to start it) and `main, run = script(name, __doc__)`. A script with steps of its own (the Beam scripts: `--runner`
picks the function, Beam's flags come from `argv`) passes its own `main`.
"""

import dataclasses
import importlib
from collections.abc import Callable

from absl import flags

from bert_tf.cli import options_from_flags, run_script

# How a script shows what its function returned: `prints(results, options)`.


def _nothing(results, options):
    """The function itself printed where its outputs went."""
    del results, options


def _key_values(results, options):
    """The metrics, one `key = value` line each."""
    del options
    for key, value in results.items():
        print(f"{key} = {value}")


def _sorted_key_values(results, options):
    _key_values(dict(sorted(results.items())), options)


def _extension(report, options):
    """extend_checkpoint's report: the words added or not, and the new sizes."""
    del options
    if report.known:
        print(f"already in the vocab, skipped: {' '.join(report.known)}")
    if report.added:
        ids = sorted(report.added.values())
        print(f"added {len(ids)} words as ids {ids[0]}..{ids[-1]}")
    if report.split:
        print(f"split by the tokenizer (reachable only by id): {' '.join(report.split)}")
    print(
        f"model: {report.output_dir} (vocab_size {report.vocab_size}, "
        f"type_vocab_size {report.type_vocab_size})"
    )


def _conversion(report, options):
    """The dev accuracy check (when there was one) and the model's file."""
    from bert_tf.export.deploy.conversion import accuracy_summary

    if report is not None:
        print(accuracy_summary(report))
    print(f"model: {options.output_file}")


@dataclasses.dataclass(frozen=True)
class Script:
    """A row of `SCRIPTS`."""

    # "module:Class" of each options dataclass whose flags the script defines,
    # in --help's order; `main` builds the first from the parsed flags.
    options: tuple[str, ...]
    # "module:function" that `main` calls with those options, imported only
    # once the flags are parsed (it imports TensorFlow). None: the script
    # module has a `main` of its own.
    function: str | None = None
    # `prints(results, options)` shows what the function returned.
    prints: Callable = _nothing
    # Flags the script does not define reach `main` in `argv` (Beam's).
    known_only: bool = False


# Script (its module's name) -> its row; tests/flag_tables.py makes the flag
# table of each script's page (docs/scripts/) from its options.
SCRIPTS = {
    "build_vocab": Script(
        options=("bert_tf.text.vocab:VocabOptions", "bert_tf.beam:BeamOptions"),
        known_only=True,
    ),
    "create_pretraining_data": Script(
        options=(
            "bert_tf.data.pretraining.writer:PretrainingDataOptions",
            "bert_tf.beam:BeamOptions",
            "bert_tf.data.pretraining.beam_pipeline:ShardOptions",
        ),
        known_only=True,
    ),
    "run_pretraining": Script(
        options=("bert_tf.tasks.pretraining_options:PretrainingOptions",),
        function="bert_tf.tasks.pretraining:run_pretraining",
    ),
    "run_classifier": Script(
        options=("bert_tf.tasks.classifier_options:ClassifierOptions",),
        function="bert_tf.tasks.classifier:run_classifier",
    ),
    "run_squad": Script(
        options=("bert_tf.tasks.squad_options:SquadOptions",),
        function="bert_tf.tasks.squad:run_squad",
        prints=_key_values,
    ),
    "run_multiple_choice": Script(
        options=("bert_tf.tasks.multiple_choice_options:MultipleChoiceOptions",),
        function="bert_tf.tasks.multiple_choice:run_multiple_choice",
    ),
    "run_ner": Script(
        options=("bert_tf.tasks.ner_options:NerOptions",),
        function="bert_tf.tasks.ner:run_ner",
        prints=_sorted_key_values,
    ),
    "extract_features": Script(
        options=("bert_tf.tasks.extract_options:FeatureOptions",),
        function="bert_tf.tasks.extract:extract_features",
    ),
    "export_model": Script(
        options=("bert_tf.tasks.options:ExportModelOptions",),
        function="bert_tf.export.deploy.conversion:convert_saved_model",
        prints=_conversion,
    ),
    "extend_checkpoint": Script(
        options=("bert_tf.tasks.options:ExtendOptions",),
        function="bert_tf.checkpoints.surgery:extend_checkpoint",
        prints=_extension,
    ),
}


def _load(spec):
    """The object "module:name" names."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def _run_it_as(command, name):
    """The end of every script's `--help`: the three ways to start it."""
    return (
        "\nRun it as (the same flags each way):\n"
        f"  {command} --flag=value ...\n"
        f"  python -m bert_tf.scripts.{name} --flag=value ...\n"
        f"  python {name}.py --flag=value ...   (in a checkout)\n"
    )


def script(name, doc, main=None):
    """`(main, run)` of the script `name`, from its row of `SCRIPTS`. `main`
    (absl's, given `argv`) builds the options from the parsed flags, calls
    the row's function and prints what it returned; a script with a `main`
    of its own passes it. `run()` is the `bert-tf-...` command: it defines
    the flags, `--help` shows `doc` and the ways to start the script, and
    runs `main` (`cli.run_script`)."""
    row = SCRIPTS[name]
    options_classes = [_load(spec) for spec in row.options]
    if main is None:

        def main(argv):
            del argv
            options = options_from_flags(options_classes[0], flags.FLAGS)
            # TensorFlow is imported here, once the flags are parsed and checked.
            results = _load(row.function)(options)
            row.prints(results, options)

    command = "bert-tf-" + name.replace("_", "-")
    help_text = doc + _run_it_as(command, name)

    def run():
        run_script(main, help_text, *options_classes, known_only=row.known_only)

    run.__doc__ = f"The `{command}` command: parses the flags, then runs `main`."
    return main, run
