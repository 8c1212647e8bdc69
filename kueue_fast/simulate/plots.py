"""The report's charts: one function per chart, listed by name in ``PLOTS``
(one run) and ``OVERLAY_PLOTS`` (several runs of one trace, compare).

Every chart gives the run (seed, workloads, offered load) and its bin width;
a ClusterQueue has one colour in every chart and panel, a flavor one colour
in every panel; legends sit beside the plot, never on the data. Drawing a
chart returns its matplotlib figure; ``png`` turns it into bytes.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np

from .metrics import Metrics, display_unit, fmt_bin

MAX_LINES = 10  # ClusterQueues drawn one by one; the rest are summed as "others"
OTHERS_COLOR = "#9e9e9e"

CanvasT = TypeVar("CanvasT")


@dataclass(frozen=True)
class Plot(Generic[CanvasT]):
    """One chart: its file, the heading and caption the HTML page gives it,
    and how it is drawn from what its charts share (``draw(canvas, heading)``
    returns the figure)."""

    file: str
    heading: str
    caption: str
    draw: Callable[[CanvasT, str], Any]


NO_CHARTS = "the report has no charts: they need matplotlib (pip install 'kueue-fast[report]')"


def charts_available() -> bool:
    """matplotlib is the ``report`` extra (an embedding controller does not
    need it); without it a report has everything but the charts."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def palette(n: int) -> list[str]:
    import matplotlib

    cmap = matplotlib.colormaps["tab20" if n > 10 else "tab10"]
    k = 20 if n > 10 else 10
    return [matplotlib.colors.to_hex(cmap(i % k)) for i in range(n)]


def queue_colors(names: Sequence[str]) -> dict[str, str]:
    """One colour per ClusterQueue, the same in every chart."""
    return dict(zip(names, palette(len(names)), strict=True))


def _top(names: Sequence[str], weight: dict[str, float]) -> list[str]:
    return sorted(names, key=lambda n: -weight.get(n, 0.0))[:MAX_LINES]


def _x(metrics: Metrics) -> tuple[np.ndarray[Any, Any], str, float]:
    edges = metrics.series.edges_s
    mid = (edges[:-1] + edges[1:]) / 2
    span = float(edges[-1] - edges[0]) if edges.size else 0.0
    if span > 3 * 86400:
        return mid / 86400, "simulated time (days)", 86400.0
    if span > 3 * 3600:
        return mid / 3600, "simulated time (hours)", 3600.0
    return mid / 60, "simulated time (minutes)", 60.0


def legend_beside(target: Any, handles: Any = None, labels: Any = None) -> None:
    """A legend to the right of the axes (or figure), outside the data."""
    kw = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 7, "frameon": False}
    if handles is None:
        target.legend(**kw)
    else:
        target.legend(handles, labels, **kw)


def pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    return plt


def png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _line_handles(colors: dict[str, str]) -> tuple[list[Any], list[str]]:
    import matplotlib

    return [matplotlib.lines.Line2D([], [], color=c, lw=1.5) for c in colors.values()], list(colors)


WAIT_FLOOR_S = 1.0  # a log axis cannot show 0: immediate admissions sit on the floor
WAIT_XLABEL = "time in the queue until admission (log scale; 1 s floor; censored: waited so far)"
# the wait axis's ticks: (seconds, label)
WAIT_TICKS = (
    (1, "1s"),
    (10, "10s"),
    (60, "1m"),
    (600, "10m"),
    (3600, "1h"),
    (6 * 3600, "6h"),
    (86400, "1d"),
    (7 * 86400, "7d"),
    (30 * 86400, "30d"),
    (365 * 86400, "1y"),
)


def duration_axis(ax: Any) -> None:
    """A log axis of durations ticked in s, m, h and d (x axis)."""
    import matplotlib

    lo, hi = ax.get_xlim()
    ticks = [(t, label) for t, label in WAIT_TICKS if lo <= t <= hi] or [(1, "1s")]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator([t for t, _ in ticks]))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FixedFormatter([label for _, label in ticks]))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def _wait_boxes(
    ax: Any, runs: Sequence[tuple[str, Metrics]], names: Sequence[str], colors: dict[str, str]
) -> None:
    """Per ClusterQueue of ``names`` a box of its waits, one per run (grouped,
    coloured per run); with one run, coloured per ClusterQueue (``colors``
    then maps ClusterQueues to colours). Box: p25-p75 with the median,
    whiskers: p5-p95, dot: p99."""
    k = len(runs)
    width = 0.8 / k
    ticks, positions = [], []
    for i, n in enumerate(names, start=1):
        cen = [int(m.waits_censored.get(n, np.zeros(0, dtype=bool)).sum()) for _, m in runs]
        note = f" ({', '.join(f'{c:,}' for c in cen)} censored)" if any(cen) else ""
        if any(not q.active for _, m in runs for q in m.queues if q.name == n):
            note = " (inactive)" + note
        ticks.append(n + note)
        positions.append(i)
        for j, (label, m) in enumerate(runs):
            waits = m.waits_s.get(n, np.zeros(0))
            if not waits.size:
                continue
            d = np.maximum(waits, WAIT_FLOOR_S)
            pos = i + (j - (k - 1) / 2) * width
            box = ax.boxplot(
                [d],
                positions=[pos],
                widths=width * 0.9,
                orientation="horizontal",
                whis=(5, 95),
                showfliers=False,
                patch_artist=True,
                manage_ticks=False,
                medianprops={"color": "k"},
            )
            color = colors.get(label if k > 1 else n, OTHERS_COLOR)
            box["boxes"][0].set_facecolor(color)
            box["boxes"][0].set_alpha(0.7)
            ax.plot(np.percentile(d, 99), pos, "k.", ms=5)
    ax.set_yticks(positions, ticks)
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    ax.set_xlim(max(lo, WAIT_FLOOR_S * 0.8), hi)
    duration_axis(ax)
    ax.set_xlabel(WAIT_XLABEL)
    ax.invert_yaxis()


def _by_p95(runs: Sequence[tuple[str, Metrics]], limit: int) -> list[str]:
    """ClusterQueues with waits, the longest p95 (over the runs) first."""
    p95: dict[str, float] = {}
    for _, m in runs:
        for q in m.queues:
            w = m.waits_s.get(q.name, np.zeros(0))
            if w.size:
                p95[q.name] = max(p95.get(q.name, 0.0), float(np.percentile(w, 95)))
    return sorted(p95, key=lambda n: -p95[n])[:limit]


# --- one run --------------------------------------------------------------------------------------


@dataclass
class RunCanvas:
    """What the charts of one run share. ``queue_names`` fixes the colours;
    ``run_label`` (seed, workloads, load) goes under every title."""

    metrics: Metrics
    queue_names: Sequence[str]
    run_label: str
    plt: Any = field(default_factory=pyplot)

    def __post_init__(self) -> None:
        self.x, self.xlabel, self.x_unit_s = _x(self.metrics)
        self.per_bin = f"per {fmt_bin(self.metrics.series.bin_s)} bin"
        self.colors = queue_colors(self.queue_names)

    def titled(self, ax: Any, title: str) -> None:
        ax.set_title(f"{title}\n{self.run_label}; {self.per_bin}", fontsize=9)


def utilization_plot(c: RunCanvas, heading: str) -> Any:
    """Per resource a panel, one line per flavor (one colour per flavor in every panel)."""
    s = c.metrics.series
    res = list(s.utilization)
    flavors = sorted({f for r in res for f in s.utilization[r]})
    fcolor = dict(zip(flavors, palette(len(flavors)), strict=True))
    fig, axes = c.plt.subplots(
        len(res) or 1, 1, figsize=(10, 2.3 * max(1, len(res)) + 0.6), sharex=True, squeeze=False
    )
    stopping = False
    for ax, r in zip(axes[:, 0], res, strict=False):
        for f, y in s.utilization[r].items():
            ax.plot(c.x, y * 100, lw=1, color=fcolor[f], label=f)
            held = s.utilization_stopping.get(r, {}).get(f)
            if held is not None:  # the top of the line that victims still stopping hold
                ax.fill_between(c.x, (y - held) * 100, y * 100, color=fcolor[f], alpha=0.35, lw=0, step=None)
                stopping = True
        ax.axhline(100, color="k", lw=0.6, ls=":")
        ax.set_ylabel(f"{r}\n% of capacity")
        ax.set_ylim(bottom=0)
    if flavors:
        handles, labels = _line_handles(fcolor)
        if stopping:
            import matplotlib

            handles.append(matplotlib.patches.Patch(color="#555555", alpha=0.35))
            labels.append("held by evicted\nworkloads stopping")
        legend_beside(axes[0, 0], handles, labels)
    c.titled(axes[0, 0], heading)
    axes[-1, 0].set_xlabel(c.xlabel)
    return fig


def pending_plot(c: RunCanvas, heading: str) -> Any:
    """Pending workloads per ClusterQueue, stacked (the smallest summed as others)."""
    s = c.metrics.series
    fig, ax = c.plt.subplots(figsize=(10, 3.4))
    weight = {k: float(v.sum()) for k, v in s.pending.items()}
    top = _top(list(s.pending), weight)
    ys = [s.pending[k] for k in top]
    labels = list(top)
    cols = [c.colors.get(k, OTHERS_COLOR) for k in top]
    rest = [v for k, v in s.pending.items() if k not in top]
    if rest:
        ys.append(np.sum(rest, axis=0))
        labels.append(f"{len(rest)} others")
        cols.append(OTHERS_COLOR)
    if ys:
        ax.stackplot(c.x, *ys, labels=labels, colors=cols, alpha=0.85)
        legend_beside(ax)
    c.titled(ax, heading)
    ax.set_ylabel(f"pending workloads\n(mean {c.per_bin})")
    ax.set_xlabel(c.xlabel)
    return fig


def wait_times_plot(c: RunCanvas, heading: str) -> Any:
    """A box of waits per ClusterQueue, the longest p95 first."""
    names = _by_p95([("", c.metrics)], 2 * MAX_LINES)
    fig, ax = c.plt.subplots(figsize=(10, 0.45 * max(4, len(names)) + 1.2))
    _wait_boxes(ax, [("", c.metrics)], names, c.colors)
    ax.set_title(f"{heading}\n{c.run_label}", fontsize=9)
    return fig


COHORT_COLORS = ("#4d4d4d", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2")
OVER_QUOTA_COLOR = "#d62728"


def borrowing_plot(c: RunCanvas, heading: str) -> Any:
    """Per resource a panel: borrowing above zero, lending below, for
    ClusterQueues and cohorts (a cohort lends its own quota; its borrowing is
    what its subtree takes from its parent); one legend for all panels."""
    s = c.metrics.series
    res = [r for r in s.borrowed if s.borrowed[r] or s.cohort_borrowed.get(r) or s.cohort_lent.get(r)]
    fig, axes = c.plt.subplots(
        max(1, len(res)), 1, figsize=(10, 2.6 * max(1, len(res)) + 0.6), sharex=True, squeeze=False
    )
    shown: dict[str, tuple[str, float]] = {}  # legend label -> colour, line width
    cohorts = sorted({k for r in res for k in (*s.cohort_borrowed.get(r, {}), *s.cohort_lent.get(r, {}))})
    cohort_color = {k: COHORT_COLORS[i % len(COHORT_COLORS)] for i, k in enumerate(cohorts)}
    for ax, r in zip(axes[:, 0], res, strict=False):
        _, unit = display_unit(r)
        lines = [
            (k, s.borrowed[r][k], s.lent[r][k], c.colors.get(k, OTHERS_COLOR), 1.0, k) for k in s.borrowed[r]
        ]
        lines += [
            (f"cohort {k}", s.cohort_borrowed[r][k], s.cohort_lent[r][k], cohort_color[k], 2.0, k)
            for k in s.cohort_borrowed.get(r, {})
        ]
        weight = {label: float(b.sum() + lt.sum()) for label, b, lt, *_ in lines}
        top = set(_top(list(weight), weight))
        for label, b, lt, col, lw, _ in lines:
            if label not in top:
                continue
            z = 2 if lw > 1 else 3  # a ClusterQueue's thin line stays visible on its cohort's thick one
            ax.plot(c.x, b, lw=lw, color=col, zorder=z)
            ax.plot(c.x, -lt, lw=lw, color=col, ls="--", zorder=z)
            shown[label] = (col, lw)
        over = s.over_quota.get(r)
        if over is not None:
            ax.plot(c.x, over, lw=1.2, color=OVER_QUOTA_COLOR, ls=":")
            shown["above the tree's quota (victims stopping)"] = (OVER_QUOTA_COLOR, 1.2)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_ylabel(f"{r} ({unit})" if unit else r)
    if shown:
        import matplotlib

        order = sorted(shown, key=lambda k: (k.startswith("above"), k.startswith("cohort "), k))
        handles = [matplotlib.lines.Line2D([], [], color=shown[k][0], lw=shown[k][1] * 1.5) for k in order]
        legend_beside(axes[0, 0], handles, order)
    c.titled(axes[0, 0], heading + " (solid: borrowed, dashed: lent; mean amount)")
    axes[-1, 0].set_xlabel(c.xlabel)
    return fig


def preemptions_plot(c: RunCanvas, heading: str) -> Any:
    """Evictions per bin by reason, stacked (one step outline per reason)."""
    s = c.metrics.series
    fig, ax = c.plt.subplots(figsize=(10, 3.2))
    edges = s.edges_s / c.x_unit_s
    bottom = np.zeros(edges.size - 1)
    for reason, counts in s.preemptions.items():
        ax.stairs(bottom + counts, edges, baseline=bottom, fill=True, label=reason)
        bottom = bottom + counts
    if s.preemptions:
        legend_beside(ax)
    else:
        ax.text(0.5, 0.5, "no preemptions", transform=ax.transAxes, ha="center", va="center")
    c.titled(ax, heading)
    ax.set_ylabel(f"evicted workloads\n{c.per_bin}")
    ax.set_xlabel(c.xlabel)
    return fig


PLOTS: list[Plot[RunCanvas]] = [
    Plot(
        "utilization.png",
        "Utilization per flavor over time",
        "Share of each flavor's capacity in use (mean per time bin), one panel per resource: the capacity is "
        "the nominal quota of the whole tree, ClusterQueues' and Cohorts'. The shaded band at the top of a "
        "line is what evicted workloads hold while their pods stop; above 100% (dotted) is quota Kueue "
        "reserved for a later workload of a cycle that preempted, before the victims were gone.",
        utilization_plot,
    ),
    Plot(
        "pending.png",
        "Pending workloads over time",
        "Workloads waiting in each ClusterQueue's queue (mean per time bin), stacked.",
        pending_plot,
    ),
    Plot(
        "wait_times.png",
        "Wait-time distribution per ClusterQueue",
        "Per workload, the time it spent in its queue until admission (after an eviction, counted again "
        "from its return to the queue); workloads still pending at the end count with the time waited so "
        "far (censored, a lower bound). Box: p25-p75 with the median, whiskers: p5-p95, dot: p99.",
        wait_times_plot,
    ),
    Plot(
        "borrowing.png",
        "Borrowing and lending over time",
        "Quota each ClusterQueue uses beyond its nominal quota (above zero, solid) and lends of its own "
        "nominal quota (below zero, dashed); a cohort (thick) lends its own quota and borrows what its "
        "subtree takes from its parent. Borrowing is covered nearest first: in the borrower's cohort, by "
        "its members' unused quota and the cohort's own, then up the tree; lenders that meet one cohort's "
        "borrowing share it in proportion to what each has to lend. Borrowed = lent + what is above the "
        "tree's quota.",
        borrowing_plot,
    ),
    Plot(
        "preemptions.png",
        "Preemptions over time",
        "Workloads evicted by preemption per time bin, by reason.",
        preemptions_plot,
    ),
]


def render_plots(metrics: Metrics, queue_names: Sequence[str], run_label: str) -> dict[str, bytes]:
    """PNG bytes per file name of every chart of ``PLOTS`` (matplotlib, Agg backend)."""
    canvas = RunCanvas(metrics, queue_names, run_label)
    return {p.file: png(p.draw(canvas, p.heading)) for p in PLOTS}


# --- several runs of one trace, overlaid (kueue-fast compare) ------------------------------------------


MAX_PANELS = 12


def run_colors(labels: Sequence[str]) -> dict[str, str]:
    """One colour per run (configuration), the same in every overlay chart."""
    return dict(zip(labels, palette(len(labels)), strict=True))


def _panels(n: int) -> tuple[Any, Any]:
    plt = pyplot()
    cols = 2 if n > 3 else 1
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 2.1 * rows + 0.9), sharex=True, squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes


def suptitle(fig: Any, text: str) -> None:
    """The figure's title above its panels' titles (the PNG's tight box takes it in)."""
    fig.suptitle(text, fontsize=9, y=1.0 + 0.1 / fig.get_figheight(), va="bottom")


@dataclass
class OverlayCanvas:
    """What the overlaid charts share: a colour per run in every chart;
    ``subtitle`` names the trace."""

    runs: Sequence[tuple[str, Metrics]]
    subtitle: str
    plt: Any = field(default_factory=pyplot)

    def __post_init__(self) -> None:
        self.colors = run_colors([label for label, _ in self.runs])
        widths = {fmt_bin(m.series.bin_s) for _, m in self.runs}
        self.per_bin = f"per {' / '.join(sorted(widths))} bin"


def overlay_wait_times_plot(c: OverlayCanvas, heading: str) -> Any:
    """Per ClusterQueue one box per run."""
    names = _by_p95(c.runs, 2 * MAX_LINES)
    fig, ax = c.plt.subplots(figsize=(10, (0.3 + 0.25 * len(c.runs)) * max(4, len(names)) + 1.2))
    _wait_boxes(ax, c.runs, names, c.colors)
    legend_beside(ax, *_line_handles(c.colors))
    ax.set_title(f"{heading}\n{c.subtitle}", fontsize=9)
    return fig


def overlay_utilization_plot(c: OverlayCanvas, heading: str) -> Any:
    """A panel per resource and flavor, those that differ most between the runs."""
    runs = c.runs
    # the flavors some configuration uses (a flavor no run touches says nothing)
    keys = sorted(
        {(r, f) for _, m in runs for r, d in m.series.utilization.items() for f, y in d.items() if y.any()}
    )

    def spread(key: tuple[str, str]) -> float:
        means = [float(m.series.utilization.get(key[0], {}).get(key[1], np.zeros(1)).mean()) for _, m in runs]
        return max(means) - min(means)

    keys = sorted(keys, key=lambda k: (-spread(k), k))[:MAX_PANELS]
    keys.sort()
    fig, axes = _panels(max(1, len(keys)))
    xlabel = ""
    for ax, (r, f) in zip(axes.ravel(), keys, strict=False):
        for label, m in runs:
            y = m.series.utilization.get(r, {}).get(f)
            if y is not None:
                x, xlabel, _ = _x(m)
                ax.plot(x, y * 100, lw=1, color=c.colors[label])
        ax.set_title(f"{r} in {f}", fontsize=8)
        ax.set_ylabel("% of capacity")
        ax.set_ylim(bottom=0)
    legend_beside(axes[0, -1], *_line_handles(c.colors))
    suptitle(fig, f"{heading}\n{c.subtitle}; {c.per_bin}")
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    return fig


def overlay_pending_plot(c: OverlayCanvas, heading: str) -> Any:
    """A panel per ClusterQueue, the most pending first."""
    weight: dict[str, float] = {}
    for _, m in c.runs:
        for k, v in m.series.pending.items():
            weight[k] = max(weight.get(k, 0.0), float(v.sum()))
    queues = sorted(weight, key=lambda k: -weight[k])[:MAX_PANELS]
    fig, axes = _panels(max(1, len(queues)))
    xlabel = _x(c.runs[-1][1])[1] if c.runs else ""  # nothing pending: the runs' time axis still
    for ax, q in zip(axes.ravel(), queues, strict=False):
        for label, m in c.runs:
            y = m.series.pending.get(q)
            x, xlabel, _ = _x(m)
            ax.plot(x, y if y is not None else np.zeros_like(x), lw=1, color=c.colors[label])
        ax.set_title(q, fontsize=8)
        ax.set_ylabel("pending")
        ax.set_ylim(bottom=0)
    if not queues:
        axes[0, 0].text(0.5, 0.5, "nothing pending", transform=axes[0, 0].transAxes, ha="center")
    legend_beside(axes[0, -1], *_line_handles(c.colors))
    suptitle(fig, f"{heading}\n{c.subtitle}; {c.per_bin}")
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    return fig


OVERLAY_PLOTS: list[Plot[OverlayCanvas]] = [
    Plot(
        "wait_times.png",
        "Wait-time distribution per ClusterQueue, per configuration",
        "Per workload, the time it spent in its queue until admission; workloads still pending at the end "
        "count with the time waited so far (censored). One box per configuration: p25-p75 with the median, "
        "whiskers: p5-p95, dot: p99.",
        overlay_wait_times_plot,
    ),
    Plot(
        "utilization.png",
        "Utilization over time, per configuration",
        "Share of each flavor's total nominal quota in use (mean per time bin), one panel per resource and "
        "flavor (those that differ most between the configurations).",
        overlay_utilization_plot,
    ),
    Plot(
        "pending.png",
        "Pending workloads over time, per configuration",
        "Workloads waiting in each ClusterQueue's queue (mean per time bin), one panel per ClusterQueue "
        "(those with the most pending).",
        overlay_pending_plot,
    ),
]


def render_overlay_plots(runs: Sequence[tuple[str, Metrics]], subtitle: str) -> dict[str, bytes]:
    """The runs of one trace on several configurations, overlaid: PNG bytes
    per file name of every chart of ``OVERLAY_PLOTS``."""
    canvas = OverlayCanvas(runs, subtitle)
    return {p.file: png(p.draw(canvas, p.heading)) for p in OVERLAY_PLOTS}
