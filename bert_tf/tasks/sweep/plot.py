"""A sweep's picture: the dev metric of each configuration, a bar at the
mean of its restarts with an error bar of their standard deviation, a dot
for each restart, the chosen run ringed."""

from bert_tf.files import atomic_output

PNG_FILE = "sweep_results.png"


def have_matplotlib():
    """Whether matplotlib (the `plot` extra) is installed."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def figure(summary):
    """`summary` (`summary.summarise`) as a matplotlib Figure on the Agg
    canvas (no display, no pyplot state): 900 pixels wide for up to 9
    configurations, wider beyond, in fonts read without zooming. The dots
    stand left of each bar's middle, the error bar right of it."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = summary["configurations"]
    positions = list(range(len(rows)))
    means = [row["mean"] for row in rows]
    stds = [row["std"] for row in rows]
    runs = [
        (x - 0.12, run["value"], run["run"]) for x, row in enumerate(rows) for run in row["runs"]
    ]
    width = max(9.0, 1.5 + 0.8 * len(rows))  # inches, at 100 pixels each
    figure = Figure(figsize=(width, 5.0), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.bar(positions, means, width=0.6, color="#c6dbef", label="mean of the restarts")
    errors = dict(fmt="none", ecolor="#333333", elinewidth=1.5, capsize=8)
    axes.errorbar(
        [x + 0.12 for x in positions], means, yerr=stds, **errors, label="± standard deviation"
    )
    dots = dict(color="#08519c", markersize=7)
    axes.plot([x for x, _, _ in runs], [v for _, v, _ in runs], "o", **dots, label="a restart")
    ring = dict(markersize=16, fillstyle="none", markeredgewidth=2, color="#d62728")
    for x, value, run in runs:
        if run == summary["chosen"]["run"]:
            axes.plot(x, value, "o", **ring, label="the chosen run")
    shown = [v for _, v, _ in runs]
    shown += [m - s for m, s in zip(means, stds)] + [m + s for m, s in zip(means, stds)]
    low, high = min(shown), max(shown)
    margin = (high - low) * 0.15 or 0.05
    axes.set_ylim(low - margin, high + margin)
    names = [row["configuration"] for row in rows]
    axes.set_xticks(positions, names, rotation=20, ha="right", fontsize=11)
    axes.tick_params(axis="y", labelsize=11)
    axes.set_ylabel(f"dev {summary['metric']}", fontsize=12)
    axes.grid(axis="y", color="#dddddd")
    axes.set_axisbelow(True)
    figure.legend(loc="outside upper center", ncols=4, frameon=False, fontsize=11)
    return figure


def draw(summary, path):
    """Draws `summary` (see `figure`) as a PNG at `path` (atomically)."""
    with atomic_output(path) as tmp:
        figure(summary).savefig(tmp, format="png")
