"""Mutation testing of the pure-Python modules, one module at a time (`make mutation`).

Runs mutmut 3.8 (configured in setup.cfg's [mutmut] section: the modules it
mutates and the fast unit tests it may run) on one core, module by module, and
prints per module the mutants' count, how many the tests killed, how many
survived or timed out, the score (killed / total) and the time taken. mutmut
runs for each mutant only the selected tests that reach the mutated function.

Here, next to tests/calibrate.py, because it measures the tests rather than
the code: it is never collected by pytest (no test_ prefix), and mutmut's
copy of tests/ in mutants/ carries it harmlessly.

    python tests/mutation.py                       # every module, every mutant
    python tests/mutation.py --modules=packing     # some modules
    python tests/mutation.py --rerun=survivors     # after adding tests: rerun
                                                   # only what survived
    python tests/mutation.py --save_survivors=DIR  # DIR/<module>.txt: diffs

Results stay in mutants/ (git-ignored); `mutmut show <name>` prints a mutant.
"""

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# In the order of setup.cfg's only_mutate.
MODULES = {
    "classification": "bert_tf/metrics/classification.py",
    "entities": "bert_tf/metrics/entities.py",
    "cmrc2018": "bert_tf/metrics/cmrc2018.py",
    "squad": "bert_tf/metrics/squad.py",
    "tags": "bert_tf/text/tags.py",
    "packing": "bert_tf/text/packing.py",
    "tokenization": "bert_tf/text/tokenization.py",
}


def one_core_env():
    """Environment for mutmut: one thread per library, the process on one CPU."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    env = dict(os.environ)
    for name in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"):
        env[name] = "1"
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return env


def mutmut(*args, env, log=None):
    command = [str(Path(sys.executable).parent / "mutmut"), *args]
    if log is None:
        return subprocess.run(
            command, cwd=ROOT, env=env, check=True, capture_output=True, text=True
        ).stdout
    with open(log, "w") as out:
        subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=out, stderr=out)
    return None


def prefix(module):
    """The start of the names mutmut gives this module's mutants."""
    return MODULES[module].removesuffix(".py").replace("/", ".") + "."


def statuses(env):
    """{mutant name: status} of every mutant mutmut has results for."""
    result = {}
    for line in mutmut("results", "--all", "True", env=env).splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep and name.startswith("bert_tf."):
            result[name] = status
    return result


def summary(module, by_name):
    mine = {k: v for k, v in by_name.items() if k.startswith(prefix(module))}
    count = {s: sum(v == s for v in mine.values()) for s in ("killed", "survived", "timeout")}
    return mine, len(mine), count


HEADER = (
    f"{'module':<14}{'total':>7}{'killed':>8}{'survived':>10}{'timeout':>9}{'other':>7}"
    f"{'score':>8}{'time':>8}"
)


def row(module, total, count, seconds):
    other = total - sum(count.values())
    score = count["killed"] / total if total else float("nan")
    return (
        f"{module:<14}{total:>7}{count['killed']:>8}{count['survived']:>10}"
        f"{count['timeout']:>9}{other:>7}{score:>8.1%}{seconds:>7.0f}s"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--modules", default=",".join(MODULES), help="comma-separated")
    parser.add_argument(
        "--rerun",
        choices=("all", "survivors"),
        default="all",
        help="all: every mutant of each module; survivors: only those not killed "
        "last time (new tests cannot revive a killed mutant)",
    )
    parser.add_argument("--save_survivors", default=None, help="folder for <module>.txt")
    args = parser.parse_args()
    modules = [m.strip() for m in args.modules.split(",") if m.strip()]
    unknown = [m for m in modules if m not in MODULES]
    if unknown:
        parser.error(f"unknown modules {unknown}: use some of {', '.join(MODULES)}")
    env = one_core_env()
    (ROOT / "mutants").mkdir(exist_ok=True)
    rows = []
    for module in modules:
        names = [prefix(module) + "*"]
        if args.rerun == "survivors" and (ROOT / "mutants" / (MODULES[module] + ".meta")).exists():
            mine, _, _ = summary(module, statuses(env))
            names = sorted(k for k, v in mine.items() if v != "killed")
        log = ROOT / "mutants" / f"{module}.log"
        start = time.monotonic()
        if names:
            mutmut("run", "--max-children", "1", *names, env=env, log=log)
        seconds = time.monotonic() - start
        mine, total, count = summary(module, statuses(env))
        rows.append(row(module, total, count, seconds))
        # Printed as each module ends: a stopped run keeps the finished ones.
        print(("" if len(rows) > 1 else HEADER + "\n") + rows[-1], flush=True)
        if args.save_survivors:
            folder = Path(args.save_survivors)
            folder.mkdir(parents=True, exist_ok=True)
            with open(folder / f"{module}.txt", "w") as f:
                for name, status in sorted(mine.items()):
                    if status != "killed":
                        f.write(mutmut("show", name, env=env) + "\n")
    print(f"\n{HEADER}\n" + "\n".join(rows))
    print("score: killed / total; time: mutmut's run of the module (logs in mutants/<module>.log)")


if __name__ == "__main__":
    main()
