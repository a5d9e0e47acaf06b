"""What a script does before its work starts: it parses and checks its flags
without importing TensorFlow or Keras (a bad flag answers in a fraction of a
second, not after TensorFlow's seconds of start-up), and `--help` exits 0.
All runs go through one `startup_probe.py` process."""

import glob
import json
import os
import re
import subprocess
import sys

import pytest
from script_runs import REPO, Finished
from shared import HANG_TIMEOUT, assert_one_error

from bert_tf.scripts import SCRIPTS as TABLE

SCRIPTS = sorted(
    os.path.basename(path)
    for path in glob.glob(os.path.join(REPO, "*.py"))
    if os.path.basename(path) != "setup.py"
)
TRAINING_SCRIPTS = [s for s in SCRIPTS if s.startswith("run_")]
# Each script as `python -m bert_tf.scripts.<script>` (what the installed
# `bert-tf-<script>` command runs too: tests/test_wheel.py).
MODULES = {script: f"-m bert_tf.scripts.{script[: -len('.py')]}" for script in SCRIPTS}
# Flags these scripts do not define are Beam's pipeline options, so
# --bogus_flag is no error there: their required --input_file is missing.
BEAM_SCRIPTS = ("build_vocab.py", "create_pretraining_data.py")
RUNS = {
    **{(script, "--bogus_flag=1"): (script, ["--bogus_flag=1"]) for script in SCRIPTS},
    **{(script, "--help"): (script, ["--help"]) for script in SCRIPTS},
    **{(module, "--help"): (module, ["--help"]) for module in MODULES.values()},
    **{(module, "--bogus_flag=1"): (module, ["--bogus_flag=1"]) for module in MODULES.values()},
    ("run_classifier.py", "--helpfull"): ("run_classifier.py", ["--helpfull"]),
    ("run_classifier.py", "--dtype=float16"): (
        "run_classifier.py",
        ["--task_name=MRPC", "--data_dir=d", "--vocab_file=v", "--output_dir=o", "--dtype=float16"],
    ),
}


@pytest.fixture(scope="module")
def runs():
    """{(script, flag): (Finished, the modules of tensorflow / keras it imported)}."""
    finished = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, "tests", "startup_probe.py"),
            json.dumps(list(RUNS.values())),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=HANG_TIMEOUT,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    results = [json.loads(line) for line in finished.stdout.splitlines()]
    return {
        key: (Finished(r["status"], r["stdout"], r["stderr"]), r["imported"])
        for key, r in zip(RUNS, results, strict=True)
    }


def test_every_script_is_probed():
    assert len(SCRIPTS) == 10 and "run_classifier.py" in SCRIPTS and "build_vocab.py" in SCRIPTS
    # ... and each has a module in bert_tf/scripts and a row in its table.
    modules = glob.glob(os.path.join(REPO, "bert_tf", "scripts", "*.py"))
    assert sorted(os.path.basename(m) for m in modules if not m.endswith("__init__.py")) == SCRIPTS
    assert sorted(f"{name}.py" for name in TABLE) == SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_a_bad_flag_is_one_error_line_before_tensorflow_is_imported(runs, script):
    finished, imported = runs[script, "--bogus_flag=1"]
    named = "input_file" if script in BEAM_SCRIPTS else "bogus_flag"
    assert_one_error(finished, named, f"(see {script} --help)")
    assert imported == [], f"{script} imported {imported} before parsing its flags"


def _own_flags(finished, heading):
    """The flag names `--help` lists under `heading`: the script's as typed."""
    own = finished.stdout.split(f"\n{heading}:\n", 1)[1]
    own = re.split(r"^\S", own, maxsplit=1, flags=re.M)[0]  # up to the next heading
    return re.findall(r"^  --(?:\[no\])?(\w+):", own, flags=re.M)


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_exits_0_and_lists_the_scripts_flags_without_tensorflow(runs, script):
    finished, imported = runs[script, "--help"]
    assert finished.status == 0, finished.stderr[-3000:]
    assert finished.stderr == ""
    listed = _own_flags(finished, script)
    assert {"output_dir", "output_file"} & set(listed), listed
    if script in TRAINING_SCRIPTS:
        assert {"do_train", "distribution_strategy", "learning_rate"} <= set(listed), listed
    assert imported == [], f"{script} imported {imported} for --help"


def test_helpfull_exits_0_and_lists_absls_flags_too(runs):
    finished, _ = runs["run_classifier.py", "--helpfull"]
    assert finished.status == 0, finished.stderr[-3000:]
    assert "task_name" in _own_flags(finished, "run_classifier.py")
    assert re.search(r"^absl\.logging:\n(  .*\n)*  -v,--verbosity:", finished.stdout, flags=re.M)


def test_a_bad_flag_value_is_found_before_tensorflow_is_imported(runs):
    finished, imported = runs["run_classifier.py", "--dtype=float16"]
    assert_one_error(finished, "--dtype 'float16'")
    assert imported == []


def _module_file(script):
    return os.path.join(REPO, "bert_tf", "scripts", script)


@pytest.mark.parametrize("script", SCRIPTS)
def test_python_m_runs_the_script_with_the_same_help_and_flag_errors(runs, script):
    by_path, _ = runs[script, "--help"]
    finished, imported = runs[MODULES[script], "--help"]
    assert finished.status == 0, finished.stderr[-3000:]
    assert imported == [], f"{MODULES[script]} imported {imported} for --help"
    # python -m's sys.argv[0] is the module's file, which absl files the flags under.
    assert _own_flags(finished, _module_file(script)) == _own_flags(by_path, script)
    usage = by_path.stdout.split("\nflags:\n", 1)[0]
    assert finished.stdout.split("\nflags:\n", 1)[0] == usage
    assert f"python -m bert_tf.scripts.{script[: -len('.py')]} --flag=value" in usage
    finished, imported = runs[MODULES[script], "--bogus_flag=1"]
    named = "input_file" if script in BEAM_SCRIPTS else "bogus_flag"
    assert_one_error(finished, named, f"(see python -m bert_tf.scripts.{script[:-3]} --help)")
    assert imported == []
