"""The GPU throughput script runs (tiny config, on CPU) and reports consistent figures."""

import json
import os
import subprocess
import sys

import pytest
from shared import HANG_TIMEOUT

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


def memory_bench(*flags):
    run = subprocess.run(
        [sys.executable, os.path.join(REPO, "bench", "memory.py"), *flags],
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        cwd=os.path.join(REPO, "bench"),
    )
    assert run.returncode == 0, (run.stdout[-3000:], run.stderr[-3000:])
    return run.stdout


@pytest.mark.large
def test_memory_bench_finds_the_largest_batch_and_recomputing_keeps_less(tmp_path):
    """On a tiny model at seq 512, where the attention's activations are most
    of what a step keeps: the largest batch within a budget is one whose peak
    fits and whose successor's does not (up to --max_batch), and recomputing
    keeps less at batch 16 and fits at least as large a batch. (A process's
    peak at a small batch varies between runs, so the budget is set between
    batch 1's and batch 16's peaks, not just above batch 1's.)"""
    peaks = [
        json.loads(memory_bench(f"--step=tiny,512,{batch},none,float32").splitlines()[-1])
        for batch in (1, 16)
    ]
    budget = (peaks[0]["peak_gb"] + peaks[1]["peak_gb"]) / 2
    output = tmp_path / "memory.json"
    memory_bench(
        "--models=tiny",
        "--seq_lengths=512",
        "--recompute=none,layer",
        "--batches=16",
        f"--budget_gb={budget}",
        "--max_batch=32",
        f"--output={output}",
    )
    rows = {row["recompute"]: row for row in json.loads(output.read_text())}
    for row in rows.values():
        largest, runs = row["largest_batch"], row["runs"]
        if largest:
            assert runs[str(largest)]["peak_gb"] <= budget
        if largest < 32:  # else the search stopped at --max_batch
            assert runs[str(largest + 1)]["peak_gb"] > budget
    assert rows["layer"]["runs"]["16"]["peak_gb"] < rows["none"]["runs"]["16"]["peak_gb"]
    assert rows["layer"]["largest_batch"] >= rows["none"]["largest_batch"]
