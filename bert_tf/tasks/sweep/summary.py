"""A sweep's summary: per configuration the mean, standard deviation,
minimum and maximum of the dev metric over its restarts and its best run;
the configuration chosen as the paper chooses; the result files and the
table of the log."""

import dataclasses
import json
import math
import os

from bert_tf.files import write_text_atomically

TSV_FILE = "sweep_results.tsv"
JSON_FILE = "sweep_results.json"
TSV_COLUMNS = (
    "configuration",
    "learning_rate",
    "train_batch_size",
    "num_train_epochs",
    "restarts",
    "mean",
    "std",
    "min",
    "max",
    "best_run",
    "chosen",
)


@dataclasses.dataclass(frozen=True)
class Run:
    """A finished run of a sweep: its configuration (`options.Configuration`),
    restart index, seed, folder name and dev metric value."""

    configuration: object
    restart: int
    seed: int
    folder: str
    value: float


def _best(runs, lower_is_better):
    """The best of `runs` by value; the first of equals."""
    return (min if lower_is_better else max)(runs, key=lambda run: run.value)


def summarise(runs, metric, lower_is_better, select):
    """The summary of `runs` (`Run`s in grid order) as a JSON-able dict:
    `configurations` (each with `mean`, `std` (the population's: numpy's
    default), `min`, `max`, `best_run` and its `runs`) and `chosen`, the
    run whose configuration `select` picks: "best", the configuration of the
    best run; "mean", the configuration of the best mean (its best run)."""
    groups = {}
    for run in runs:
        groups.setdefault(run.configuration, []).append(run)
    rows = []
    for configuration, members in groups.items():
        values = [run.value for run in members]
        mean = math.fsum(values) / len(values)
        row = dataclasses.asdict(configuration) | {
            "configuration": configuration.name,
            "restarts": len(members),
            "mean": mean,
            "std": math.sqrt(math.fsum((v - mean) ** 2 for v in values) / len(values)),
            "min": min(values),
            "max": max(values),
            "best_run": _best(members, lower_is_better).folder,
            "runs": [
                {"restart": r.restart, "seed": r.seed, "run": r.folder, "value": r.value}
                for r in members
            ],
        }
        rows.append(row)
    if select == "mean":
        pick = (min if lower_is_better else max)(rows, key=lambda row: row["mean"])
        chosen = pick["best_run"]
    else:
        chosen = _best(runs, lower_is_better).folder
    chosen_row = next(row for row in rows if chosen in (r["run"] for r in row["runs"]))
    return {
        "metric": metric,
        "lower_is_better": lower_is_better,
        "select": select,
        "configurations": rows,
        "chosen": {
            "configuration": chosen_row["configuration"],
            "run": chosen,
            "value": next(r["value"] for r in chosen_row["runs"] if r["run"] == chosen),
        },
    }


def write_results(folder, summary):
    """Writes `sweep_results.tsv` (one line a configuration, `TSV_COLUMNS`)
    and `sweep_results.json` (`summary` whole) into `folder`; returns their paths."""
    chosen = summary["chosen"]["configuration"]
    lines = ["\t".join(TSV_COLUMNS)]
    for row in summary["configurations"]:
        cells = {**row, "chosen": int(row["configuration"] == chosen)}
        lines.append("\t".join(_cell(cells[column]) for column in TSV_COLUMNS))
    tsv, js = os.path.join(folder, TSV_FILE), os.path.join(folder, JSON_FILE)
    write_text_atomically(tsv, "\n".join(lines) + "\n")
    write_text_atomically(js, json.dumps(summary, indent=1) + "\n")
    return tsv, js


def _cell(value):
    # repr: the shortest text that reads back as the same float.
    return repr(value) if isinstance(value, float) else str(value)


def table(summary):
    """The summary as aligned text lines for the log, the chosen configuration marked."""
    chosen = summary["chosen"]
    header = ("", "configuration", "runs", "mean", "std", "min", "max", "best run")
    rows = [header]
    for row in summary["configurations"]:
        mark = "*" if row["configuration"] == chosen["configuration"] else ""
        numbers = [f"{row[k]:.4f}" for k in ("mean", "std", "min", "max")]
        rows.append((mark, row["configuration"], str(row["restarts"]), *numbers, row["best_run"]))
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"sweep over {summary['metric']} (select={summary['select']}):"]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    lines.append(f"chosen: {chosen['run']} ({summary['metric']} {chosen['value']:.4f})")
    return lines
