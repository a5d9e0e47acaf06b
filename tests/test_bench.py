"""The GPU throughput script runs (tiny config, on CPU) and reports consistent figures."""

import json
import os
import subprocess
import sys

import pytest
from conftest import HANG_TIMEOUT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.large
def test_gpu_throughput_smoke_runs_and_reports_utilisation(tmp_path):
    output = tmp_path / "results.json"
    run = subprocess.run(
        [
            sys.executable,
            os.path.join(REPO, "bench", "gpu_throughput.py"),
            "--smoke",
            "--peak_tflops=0.5",
            f"--output_json={output}",
        ],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
    )
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    report = json.loads(output.read_text())
    assert (report["dtype"], report["jit_compile"]) == ("mixed_bfloat16", True)
    [result] = report["results"]
    assert (result["model"], result["seq_length"], result["batch_size"]) == ("tiny", 32, 2)
    assert result["sequences_per_second"] > 0
    assert result["mfu"] == pytest.approx(result["tflops"] / 0.5)
    assert set(result["forward_sequences_per_second"]) == {"plain", "xla"}
    assert min(result["forward_sequences_per_second"].values()) > 0
    assert "peak 0.5 TFLOP/s" in run.stdout
