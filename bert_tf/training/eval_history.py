"""The evaluations during training as curves: `eval_history.csv` in the
output folder, one row per evaluation (the step, then each metric), and
`eval_history.png` of them when training ends (with the `plot` extra).

A run resumed from a checkpoint continues the same file: rows after the
step it resumes from (evaluations whose steps it trains again) are dropped
first. Rows are written atomically, the whole file each time."""

import csv
import importlib.util
import io
import math
import numbers
import os

from bert_tf.files import atomic_output, exists, open_file, write_text_atomically

CSV_FILE = "eval_history.csv"
PNG_FILE = "eval_history.png"


class EvalHistory:
    """The rows of `output_dir/eval_history.csv`: dicts of `step` and the
    numeric metrics of one evaluation."""

    def __init__(self, output_dir):
        self.path = os.path.join(output_dir, CSV_FILE)
        self.rows = _read(self.path) if exists(self.path) else []

    def resume(self, step):
        """Drops the rows after `step`, the step training resumes from."""
        kept = [row for row in self.rows if row["step"] <= step]
        if len(kept) != len(self.rows):
            self.rows = kept
            self._write()

    def append(self, step, metrics):
        """Adds the evaluation at `step` (its numeric metrics) and rewrites the file."""
        row = {k: float(v) for k, v in metrics.items() if isinstance(v, numbers.Real)}
        self.rows.append({"step": int(step), **row})
        self._write()

    def _write(self):
        names = sorted({k for row in self.rows for k in row} - {"step"})
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["step", *names])
        for row in self.rows:
            writer.writerow([row["step"], *(repr(row[k]) if k in row else "" for k in names)])
        write_text_atomically(self.path, text.getvalue())

    def draw(self):
        """Writes `eval_history.png` beside the CSV: losses on the left,
        the other metrics on the right, against the step. Returns its path,
        or None without rows or without matplotlib (the `plot` extra)."""
        if not self.rows or importlib.util.find_spec("matplotlib") is None:
            return None
        path = os.path.join(os.path.dirname(self.path), PNG_FILE)
        with atomic_output(path) as tmp:
            figure(self.rows).savefig(tmp, format="png")
        return path


def _read(path):
    with open_file(path) as f:
        return [
            {k: int(float(v)) if k == "step" else float(v) for k, v in row.items() if v != ""}
            for row in csv.DictReader(f)
        ]


def figure(rows):
    """`rows` as a matplotlib Figure on the Agg canvas (no pyplot state),
    900 x 450 pixels: a panel of the metrics named `*loss`, one of the rest."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    names = sorted({k for row in rows for k in row} - {"step"})
    panels = [
        ("loss", [n for n in names if n.endswith("loss")]),
        ("metric", [n for n in names if not n.endswith("loss")]),
    ]
    panels = [(label, members) for label, members in panels if members]
    figure = Figure(figsize=(9.0, 4.5), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    for index, (label, members) in enumerate(panels):
        axes = figure.add_subplot(1, len(panels), index + 1)
        for name in members:
            points = [(row["step"], row[name]) for row in rows if _finite(row.get(name))]
            if points:
                axes.plot(*zip(*points), "o-", markersize=3, label=name)
        # Few, comma-grouped steps: a long run's 5-digit ticks ran together.
        axes.xaxis.set_major_locator(MaxNLocator(nbins=5, integer=True))
        axes.xaxis.set_major_formatter(FuncFormatter(lambda step, _: f"{step:,.0f}"))
        axes.set_xlabel("step", fontsize=11)
        axes.set_ylabel(f"eval {label}", fontsize=11)
        axes.grid(color="#dddddd")
        axes.legend(fontsize=10)
    return figure


def _finite(value):
    return value is not None and math.isfinite(value)
