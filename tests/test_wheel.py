"""bert_tf as a user installs it: a wheel built from this checkout, installed
into a fresh virtualenv with the runtime requirements pinned by
constraints.txt, and run from a folder outside the checkout. Every script
answers `--help` as its console script and as `python -m`, word for word as
the checkout's script does, and a tiny classifier run from the wheel writes
the eval_results.txt that the checkout's library writes.

Large tier: the install takes a minute or two (pip's wheels are cached after
the first time), and the virtualenv about 2.3 GB while the tests run."""

import glob
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile

import pytest
from script_runs import REPO
from shared import HANG_TIMEOUT, write_mrpc

from bert_tf.options import build
from bert_tf.tasks.classifier_options import ClassifierOptions

pytestmark = pytest.mark.large

SCRIPTS = sorted(
    os.path.basename(path)[: -len(".py")]
    for path in glob.glob(os.path.join(REPO, "*.py"))
    if os.path.basename(path) != "setup.py"
)


def _command(name):
    return "bert-tf-" + name.replace("_", "-")


def _check(command, **kwargs):
    finished = subprocess.run(
        command, capture_output=True, text=True, timeout=HANG_TIMEOUT, **kwargs
    )
    assert finished.returncode == 0, f"{command}: {finished.stderr[-3000:]}"
    return finished


@pytest.fixture(scope="module")
def installed():
    """`(wheel, run)`: the wheel's path and `run(*command)`, which runs a
    command in the fresh virtualenv (its bin/ first on PATH, as activated),
    in a folder outside the checkout."""
    root = tempfile.mkdtemp(prefix="bert_tf_wheel_")
    assert not os.path.abspath(root).startswith(REPO + os.sep)
    try:
        # The wheel from a copy of what setup.py packs, so that the build
        # leaves nothing (build/, *.egg-info) in the checkout.
        source = os.path.join(root, "source")
        shutil.copytree(
            os.path.join(REPO, "bert_tf"),
            os.path.join(source, "bert_tf"),
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        shutil.copy(os.path.join(REPO, "setup.py"), source)
        dist = os.path.join(root, "dist")
        pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
        _check([*pip, "wheel", "--quiet", "--no-deps", "--wheel-dir", dist, source])
        (wheel,) = glob.glob(os.path.join(dist, "bert_tf-*.whl"))
        venv = os.path.join(root, "venv")
        _check(["python3.11", "-m", "venv", venv])
        constraints = os.path.join(REPO, "constraints.txt")
        python = os.path.join(venv, "bin", "python")
        _check(
            [python, "-m", "pip", "install", "--quiet", "--no-compile", "-c", constraints, wheel]
        )
        work = os.path.join(root, "work")
        os.makedirs(work)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env["PATH"]
        env.pop("TF_CPP_MIN_LOG_LEVEL", None)  # the scripts' own default, as for a user

        def run(*command):
            return _check(list(command), cwd=work, env=env)

        where = run("python", "-c", "import bert_tf; print(bert_tf.__file__)").stdout
        assert where.startswith(os.path.join(venv, "lib")), where
        yield wheel, run
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_the_wheel_holds_every_module_and_a_command_for_every_script(installed):
    wheel, _ = installed
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        declared = archive.read(entry_points).decode()
    modules = {
        os.path.relpath(path, REPO)
        for path in glob.glob(os.path.join(REPO, "bert_tf", "**", "*.py"), recursive=True)
    }
    assert modules - names == set()
    expected = [f"{_command(s)} = bert_tf.scripts.{s}:run" for s in SCRIPTS]
    assert declared.split("\n", 1)[0] == "[console_scripts]"
    assert sorted(line for line in declared.splitlines()[1:] if line) == expected


def _help_without_heading(stdout, program):
    """`--help`'s text with the heading of the script's own flags (absl's:
    the program as started) left out."""
    assert f"\n{program}:\n" in stdout, stdout[:2000]
    return stdout.replace(f"\n{program}:\n", "\n")


def test_every_script_answers_help_from_the_wheel_as_in_the_checkout(installed):
    _, run = installed
    where = run("python", "-c", "import bert_tf; print(bert_tf.__file__)").stdout
    package = os.path.dirname(where.strip())
    for script in SCRIPTS:
        checkout = _check([sys.executable, f"{script}.py", "--help"], cwd=REPO)
        expected = _help_without_heading(checkout.stdout, f"{script}.py")
        # A command found on PATH gets its full path as sys.argv[0].
        command = run("which", _command(script)).stdout.strip()
        console = run(_command(script), "--help")
        assert _help_without_heading(console.stdout, command) == expected, script
        # python -m: the module's file.
        module = run("python", "-m", f"bert_tf.scripts.{script}", "--help")
        module_file = os.path.join(package, "scripts", f"{script}.py")
        assert _help_without_heading(module.stdout, module_file) == expected, script


def test_a_classifier_run_from_the_wheel_writes_the_checkouts_eval_results(
    installed, model_files, tmp_path
):
    _, run = installed
    vocab, config = model_files
    data = str(tmp_path / "mrpc")
    write_mrpc(data, random.Random(5), sizes=(64, 16, 8))
    values = dict(
        task_name="MRPC",
        data_dir=data,
        vocab_file=vocab,
        bert_config_file=config,
        max_seq_length=32,
        train_batch_size=16,
        eval_batch_size=8,
        learning_rate=1e-3,
        num_train_epochs=2.0,
        seed=7,
        do_train=True,
        do_eval=True,
    )
    wheel_dir, library_dir = tmp_path / "wheel_run", tmp_path / "library_run"
    flags = [f"--{name}={value}" for name, value in values.items()]
    run(_command("run_classifier"), *flags, f"--output_dir={wheel_dir}")

    from bert_tf.tasks.classifier import run_classifier  # the checkout's, in this process

    run_classifier(build(ClassifierOptions, **values, output_dir=str(library_dir)))
    got, want = (_key_values(d / "eval_results.txt") for d in (wheel_dir, library_dir))
    assert set(got) == set(want) and {"eval_accuracy", "eval_loss"} <= set(got)
    assert got["eval_accuracy"] == want["eval_accuracy"]
    assert got == pytest.approx(want, rel=1e-4)


def _key_values(path):
    with open(path) as f:
        return {key: float(value) for key, value in (line.split(" = ") for line in f)}
