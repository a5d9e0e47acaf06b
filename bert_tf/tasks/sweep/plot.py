"""A sweep's picture: the dev metric of each configuration, a bar at the
mean of its restarts and a dot for each restart, the chosen run ringed."""

from bert_tf.files import atomic_output

PNG_FILE = "sweep_results.png"


def have_matplotlib():
    """Whether matplotlib (the `plot` extra) is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def draw(summary, path):
    """Draws `summary` (`summary.summarise`) as a PNG at `path` (atomically),
    with matplotlib's Agg canvas: no display, no pyplot state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = summary["configurations"]
    chosen = summary["chosen"]
    figure = Figure(figsize=(2.0 + 0.9 * len(rows), 3.6), dpi=80, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = range(len(rows))
    axes.bar(positions, [row["mean"] for row in rows], width=0.6, color="#c6dbef", label="mean")
    for x, row in zip(positions, rows):
        values = [run["value"] for run in row["runs"]]
        axes.plot([x] * len(values), values, "o", color="#08519c", markersize=4)
        for run in row["runs"]:
            if run["run"] == chosen["run"]:
                axes.plot(x, run["value"], "o", markersize=10, fillstyle="none", color="#d62728")
    values = [run["value"] for row in rows for run in row["runs"]]
    low, high = min(values), max(values)
    margin = (high - low) * 0.2 or 0.05
    axes.set_ylim(low - margin, high + margin)
    names = [row["configuration"] for row in rows]
    axes.set_xticks(list(positions), names, rotation=30, ha="right", fontsize="small")
    axes.set_ylabel(f"dev {summary['metric']}")
    axes.set_title("dots: restarts, bars: mean, ring: chosen", fontsize="small")
    with atomic_output(path) as tmp:
        figure.savefig(tmp, format="png")
