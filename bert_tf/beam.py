"""Running a data tool as an Apache Beam pipeline (the `beam` extra).

`--runner` picks Beam's runner; the command line's other flags that the
script does not define are Beam's pipeline options (`--direct_num_workers`,
`--project`, `--region`, `--temp_location`, ...) and go to it unchanged.
apache_beam is imported only by what runs a pipeline, so the default path
needs no Beam.

A user error (`errors.InputError`) raised on a worker reaches this process
as text inside the runner's own exception: `worker_input_errors` marks its
message there and `run_pipeline` raises it again as an InputError, so the
script prints the same one line as without Beam.
"""

import contextlib
import dataclasses
import re

from bert_tf.errors import InputError
from bert_tf.options import Options, option

_MARK = "bert_tf.InputError"
_MARKED = re.compile(re.escape(_MARK) + r"<<(.*?)>>")


@dataclasses.dataclass(frozen=True)
class BeamOptions(Options):
    """`--runner` and the Beam pipeline options after it."""

    runner: str | None = option(
        None,
        "Run as an Apache Beam pipeline on this runner (DirectRunner, DataflowRunner, "
        "FlinkRunner, SparkRunner, ...); the flags this script does not define are "
        "Beam's pipeline options (--direct_num_workers, --project, --region, "
        "--temp_location, ...). Needs the beam extra. Default: no Beam.",
    )
    pipeline_args: tuple = ()  # Beam's flags, as given on the command line


def beam_options(runner, argv):
    """BeamOptions from `--runner` and the arguments absl left unparsed
    (`argv[1:]`, see `cli.run_main(known_only=True)`). Without a runner, any
    such argument is an error, as absl reports an unknown flag."""
    extra = tuple(argv[1:])
    if runner is None and extra:
        raise InputError(
            f"unknown arguments {' '.join(extra)} (Beam's pipeline options need --runner)"
        )
    return BeamOptions(runner, extra)


def import_beam():
    """apache_beam, or InputError naming the extra to install."""
    try:
        import apache_beam  # The beam extra: pip install 'bert_tf[beam]'.
    except ImportError:
        raise InputError("--runner needs Apache Beam: pip install 'bert_tf[beam]'") from None
    return apache_beam


def pipeline(options):
    """A new `beam.Pipeline` for BeamOptions `options`."""
    beam = import_beam()
    from apache_beam.options.pipeline_options import PipelineOptions

    pipeline_options = PipelineOptions(list(options.pipeline_args), runner=options.runner)
    return beam.Pipeline(options=pipeline_options)


@contextlib.contextmanager
def worker_input_errors():
    """On a worker: an InputError raised in the block leaves it marked (see
    the module docstring)."""
    try:
        yield
    except InputError as e:
        raise RuntimeError(f"{_MARK}<<{e}>>") from None


def run_pipeline(p):
    """Runs pipeline `p` to its end; a failure caused by a marked InputError
    raises that InputError."""
    try:
        p.run().wait_until_finish()
    except Exception as e:
        message = _marked_message(e)
        if message is None:
            raise
        raise InputError(message) from None


def _marked_message(exception):
    """The first marked InputError message in `exception` or its causes."""
    seen = set()
    while exception is not None and id(exception) not in seen:
        seen.add(id(exception))
        found = _MARKED.search(str(exception))
        if found:
            return found.group(1)
        exception = exception.__cause__ or exception.__context__
    return None
