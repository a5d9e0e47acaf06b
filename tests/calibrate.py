"""Calibrates the bounds of the learning tests (pytest marker `learning`).

Runs them (or the tests of another --marker, such as `numerics` for the
tolerances of the output pins) once per training seed under each CPU setting of
`shared.CPU_SETTINGS` (each its own pytest process: oneDNN reads its
environment at start-up), collects the metrics they bound through
`--calibration-log`, and prints each metric's range per CPU setting and over
all. A bound belongs clearly below the worst value seen (above the worst, for
a loss) and clearly past chance; write the range next to it.

Usage (from the repository root):
  python tests/calibrate.py [--seeds=5] [--first_seed=0] [--cpus=default,avx2,eigen]
                            [--log=calibration.jsonl] [--jobs=1] [--marker=learning]
                            [-- PYTEST_ARGS]
  python tests/calibrate.py --log=calibration.jsonl --summary_only
"""

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys

from shared import CPU_SETTINGS

TESTS = os.path.dirname(os.path.abspath(__file__))


def run_one(marker, cpu, seed_offset, log, pytest_args):
    """One pytest process over the marked tests; returns its last line. Its
    whole output goes to `<log>.<cpu>.<seed_offset>.out`."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--run-large",
        "-m",
        marker,
        f"--seed-offset={seed_offset}",
        f"--calibration-log={log}",
        *pytest_args,
    ]
    env = {**os.environ, **CPU_SETTINGS[cpu]}
    output = f"{log}.{cpu}.{seed_offset}.out"
    with open(output, "w") as f:
        subprocess.run(
            command, cwd=os.path.dirname(TESTS), env=env, stdout=f, stderr=subprocess.STDOUT
        )
    with open(output) as f:
        lines = f.read().strip().splitlines() or ["(no output)"]
    return f"{cpu} seed+{seed_offset}: {lines[-1]}  ({output})"


def summary(log):
    """Lines `test metric: cpu min..max (n) ... | all min..max, spread`."""
    values = collections.defaultdict(lambda: collections.defaultdict(list))
    with open(log) as f:
        for line in f:
            entry = json.loads(line)
            for key, value in entry.items():
                if key not in ("test", "seed_offset", "cpu"):
                    values[(entry["test"], key)][entry["cpu"]].append(value)
    lines = []
    for (test, metric), by_cpu in sorted(values.items()):
        every = [v for vs in by_cpu.values() for v in vs]
        ranges = "  ".join(
            f"{cpu} {min(vs):.4g}..{max(vs):.4g} ({len(vs)})" for cpu, vs in sorted(by_cpu.items())
        )
        spread = max(every) - min(every)
        relative = spread / max(abs(v) for v in every) if any(every) else 0.0
        lines.append(
            f"{test} {metric}: {ranges}  | all {min(every):.6g}..{max(every):.6g}, "
            f"spread {spread:.2g} ({relative:.2g} relative)"
        )
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--marker", default="learning", help="pytest marker of the tests")
    parser.add_argument("--seeds", type=int, default=5, help="how many seed offsets")
    parser.add_argument("--first_seed", type=int, default=0, help="the first seed offset")
    parser.add_argument(
        "--cpus",
        default=",".join(CPU_SETTINGS),
        help=f"comma-separated CPU settings of {sorted(CPU_SETTINGS)}",
    )
    parser.add_argument("--log", default="calibration.jsonl", help="metrics log (appended to)")
    parser.add_argument("--jobs", type=int, default=1, help="pytest processes at once")
    parser.add_argument("--summary_only", action="store_true", help="summarise --log only")
    args, pytest_args = parser.parse_known_args()
    pytest_args = [a for a in pytest_args if a != "--"]
    log = os.path.abspath(args.log)
    if not args.summary_only:
        cpus = args.cpus.split(",")
        unknown = sorted(set(cpus) - set(CPU_SETTINGS))
        if unknown:
            parser.error(f"--cpus: unknown setting(s) {unknown}; known: {sorted(CPU_SETTINGS)}")
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            runs = [
                pool.submit(run_one, args.marker, cpu, offset, log, pytest_args)
                for offset in range(args.first_seed, args.first_seed + args.seeds)
                for cpu in cpus
            ]
            for run in concurrent.futures.as_completed(runs):
                print(run.result(), flush=True)
    print("\n".join(summary(log)))


if __name__ == "__main__":
    main()
