"""What a fresh process prints on stderr, as a user starts it (no
TF_CPP_MIN_LOG_LEVEL of the suite's): a bad input is exactly one `error:`
line, and a Keras user's process prints nothing. test_user_errors runs its
scripts through `script_server`, whose one TensorFlow import per module hides
what an import prints; TensorFlow 2.21 prints notices while it loads
(bert_tf/imports/startup_notices.py). `make test-newest` runs this module too."""

import os
import re
import subprocess
import sys

import pytest
from script_runs import REPO, Finished
from shared import HANG_TIMEOUT, assert_one_error
from test_user_errors import bad_inputs, case_flags, data_dir, error_cases  # noqa: F401

from bert_tf.imports import startup_notices

USER_ENV = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}

# Every case of test_user_errors stops before any work but this one, which
# writes (and logs) the train features before it meets dev.tsv's bad label.
AFTER_WORK = {"bad label in dev.tsv before training"}
# The run's own progress lines: absl's prefix, a bert_tf module's file name.
PROGRESS_LINE = re.compile(r"^I\d{4} [\d:.]+ +\d+ [a-z_]+\.py:\d+\] ")


@pytest.mark.parametrize("case", error_cases(), ids=[c[0] for c in error_cases()])
def test_bad_input_is_one_stderr_line_in_a_fresh_process(
    case, model_files, data_dir, bad_inputs, tmp_path
):  # noqa: F811
    name, script, _, words = case
    flags = case_flags(case, model_files, data_dir, bad_inputs, str(tmp_path / "out"))
    finished = subprocess.run(
        [sys.executable, os.path.join(REPO, script), *flags],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=USER_ENV,
        timeout=HANG_TIMEOUT,
    )
    assert_one_error(Finished(finished.returncode, finished.stdout, finished.stderr), *words)
    lines = finished.stderr.splitlines()
    if name not in AFTER_WORK:
        assert len(lines) == 1, finished.stderr
    others = [line for line in lines if not line.startswith("error: ")]
    assert all(PROGRESS_LINE.match(line) for line in others), finished.stderr


def test_a_keras_process_prints_nothing_on_stderr():
    code = (
        "import bert_tf, keras, numpy as np\n"
        "model = bert_tf.BertClassifier(bert_tf.preset('bert_tiny'), num_labels=2)\n"
        "ids = np.ones((2, 8), 'int32')\n"
        "inputs = {'input_word_ids': ids, 'input_mask': ids, 'input_type_ids': 0 * ids}\n"
        "print(keras.ops.convert_to_numpy(model(inputs)).shape)\n"
    )
    finished = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=USER_ENV,
        timeout=HANG_TIMEOUT,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    assert finished.stdout == "(2, 2)\n"
    assert finished.stderr == ""


NOTICES = [
    b"WARNING: All log messages before absl::InitializeLog() is called are written to STDERR\n",
    b"I0000 00:00:1796529529.976232   27919 port.cc:153] oneDNN custom operations are on.\n",
    b"W0000 00:00:1796529529.976561   27919 cudart_stub.cc:31] a warning\n",
    b"E0000 00:00:1796529529.976561   27919 cuda_platform.cc:52] failed call to cuInit\n",
]
KEPT = [
    b"F0000 00:00:1796529529.976561   27919 cpu_feature_guard.cc:99] fatal\n",
    b"2026-12-06 04:05:03.913525: I tensorflow/core/util/port.cc:153] TensorFlow's own log\n",
    b"Traceback (most recent call last):\n",
    b"I0000 is not a log line\n",
]


@pytest.mark.parametrize(
    "level, hidden", [("3", NOTICES), ("2", NOTICES[:3]), ("1", NOTICES[:2]), ("0", []), ("x", [])]
)
def test_startup_notices_hides_the_lines_below_the_level(level, hidden, capfdbinary, monkeypatch):
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", level)
    with startup_notices.hidden():
        for line in NOTICES + KEPT:
            os.write(2, line)
    assert capfdbinary.readouterr().err == b"".join(
        line for line in NOTICES + KEPT if line not in hidden
    )
