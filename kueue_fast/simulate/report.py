"""The report folder: metrics.json, workloads.csv, five PNG charts, one
self-contained HTML page (charts embedded as base64), and the summary table
and churn summary for the terminal.

Every chart gives the run (seed, workloads, offered load) and its bin width;
a ClusterQueue has one colour in every chart and panel, a flavor one colour
in every panel; legends sit beside the plot, never on the data.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .loop import STATE_NAMES, TIMES_KEPT, SimResult
from .metrics import Churn, Metrics, QueueStats, display_unit

MAX_LINES = 10  # ClusterQueues drawn one by one; the rest are summed as "others"
OTHERS_COLOR = "#9e9e9e"
NS = 1_000_000_000

PLOTS = (
    (
        "utilization.png",
        "Utilization per flavor over time",
        "Share of each flavor's total nominal quota in use (mean per time bin), one panel per resource.",
    ),
    (
        "pending.png",
        "Pending workloads over time",
        "Workloads waiting in each ClusterQueue's queue (mean per time bin), stacked.",
    ),
    (
        "wait_times.png",
        "Wait-time distribution per ClusterQueue",
        "Per workload, the time it spent in its queue until admission (after an eviction, counted again "
        "from its return to the queue); workloads still pending at the end count with the time waited so "
        "far (censored, a lower bound). Box: p25-p75 with the median, whiskers: p5-p95, dot: p99.",
    ),
    (
        "borrowing.png",
        "Borrowing and lending over time",
        "Quota each ClusterQueue uses beyond its nominal quota (above zero) and lends from its unused "
        "nominal quota (below zero; shared among the cohort's lenders in proportion to what they "
        "leave unused).",
    ),
    ("preemptions.png", "Preemptions over time", "Workloads evicted by preemption per time bin, by reason."),
)


def fmt_duration(s: float) -> str:
    if s < 1:
        return "0s" if s <= 0 else f"{s:.2f}s"
    if s < 60:
        return f"{s:.0f}s"
    if s < 3600:
        return f"{s / 60:.1f}m"
    if s < 86400:
        return f"{s / 3600:.1f}h"
    return f"{s / 86400:.1f}d"


def fmt_bin(s: float) -> str:
    """A bin width in words: 30-min, 1-h, 2-day..."""
    if s < 60:
        return f"{s:g}-s"
    if s < 3600:
        return f"{s / 60:g}-min"
    if s < 86400:
        return f"{s / 3600:g}-h"
    return f"{s / 86400:g}-day"


TABLE_COLUMNS = (
    "ClusterQueue",
    "admitted",
    "pending",
    "preempted",
    "wait p50",
    "p95",
    "p99",
    "util",
    "borrowing",
)

TABLE_LEGEND = (
    "admitted: workloads admitted at least once; pending: still waiting at the end; preempted: evictions "
    "of its workloads; wait: per workload, time in its queue until admission (after an eviction, again "
    "from its return to the queue), percentiles by nearest rank; '>': at least this long, the percentile "
    "falls on a workload still waiting at the end (censored: counted as waiting until the end); util: "
    "time-mean use of its dominant resource over its nominal quota (over 100% when borrowing); borrowing: "
    "time spent above its nominal quota."
)


def _wait(s: float, censored: bool) -> str:
    return (">" if censored else "") + fmt_duration(s)


def table_rows(queues: Sequence[QueueStats], simulated_s: float) -> list[list[str]]:
    rows = []
    for q in queues:
        share = q.borrowing_s / simulated_s if simulated_s > 0 else 0.0
        rows.append(
            [
                q.name,
                f"{q.admitted:,}",
                f"{q.pending:,}",
                f"{q.preemptions:,}",
                _wait(q.wait_p50_s, q.wait_p50_censored),
                _wait(q.wait_p95_s, q.wait_p95_censored),
                _wait(q.wait_p99_s, q.wait_p99_censored),
                f"{q.utilization * 100:.0f}%",
                f"{fmt_duration(q.borrowing_s)} ({share * 100:.0f}%)",
            ]
        )
    return rows


def summary_table(metrics: Metrics) -> str:
    rows = table_rows(metrics.queues, metrics.totals["simulated_s"])
    t = metrics.totals
    rows.append(
        ["total", f"{t['admitted']:,}", f"{t['pending']:,}", f"{t['preemptions']:,}", "", "", "", "", ""]
    )
    widths = [max(len(str(r[i])) for r in [list(TABLE_COLUMNS), *rows]) for i in range(len(TABLE_COLUMNS))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
        ).rstrip()

    out = [line(TABLE_COLUMNS), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    # util above 100% looks like a bug unless the table says what it divides by
    out.append(
        "util: mean use of the dominant resource over nominal quota (above 100% when borrowing); "
        "borrowing: time spent borrowing (share of the run)"
    )
    if t.get("censored_waits"):
        out.append(
            f"'>': a lower bound ({t['censored_waits']:,} workloads still waiting at the end count as "
            "waiting until the end)"
        )
    return "\n".join(out) + "\n"


def churn_lines(c: Churn) -> list[str]:
    """The churn summary as lines of text (terminal, HTML)."""
    if not c:
        return []
    out = []
    if c.churning:
        out.append(
            f"Repeated preemption: {c.churning:,} workloads were evicted {c.threshold} times or more, in "
            f"ClusterQueues {', '.join(c.cluster_queues)}"
            + (f" (cohorts {', '.join(c.cohorts)})" if c.cohorts else "")
            + "."
        )
        out.append(
            "  Evicted most: "
            + ", ".join(
                f"{w['workload']} ({w['cluster_queue']}) {w['evictions']:,} times" for w in c.workloads[:5]
            )
        )
        if c.preemptors:
            out.append(
                "  Caused most evictions: "
                + ", ".join(f"{w['workload']} {w['evictions_caused']:,} evictions" for w in c.preemptors[:5])
            )
        out.append("  Who preempts whom, and the policy that allows it:")
        for p in c.pairs[:8]:
            out.append(
                f"    {p['preemptor_cluster_queue']} -> {p['victim_cluster_queue']} {p['reason']}: "
                f"{p['evictions']:,} evictions; {p['policy']}"
            )
        out.append(
            "  An evicted workload goes back to its queue as soon as its job has stopped, with no backoff "
            "(as in Kueue), is admitted again when quota frees and can be evicted again; policies that let "
            "two queues take quota from each other keep going round (README: preemption churn)."
        )
    if c.unsettled:
        out.append(
            f"{c.unsettled:,} instants did not settle (scheduling cycles kept admitting and evicting until "
            "the limit per instant)."
        )
        for u in c.unsettled_instants[:3]:
            pairs = "; ".join(
                f"{p['preemptor_cluster_queue']} -> {p['victim_cluster_queue']} {p['reason']} "
                f"{p['evictions']:,}x ({p['policy']})"
                for p in u["pairs"][:4]
            )
            victims = ", ".join(f"{v['workload']} {v['evictions']:,}x" for v in u["victims"][:5])
            out.append(
                f"  at {fmt_duration(u['time_s'])}: {u['cycles']:,} cycles, {u['admissions']:,} admissions, "
                f"{u['preemptions']:,} evictions; {pairs}; evicted most: {victims}"
            )
    return out


# --- plots ------------------------------------------------------------------------------------------

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


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    return plt


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _line_handles(colors: dict[str, str]) -> tuple[list[Any], list[str]]:
    import matplotlib

    return [matplotlib.lines.Line2D([], [], color=c, lw=1.5) for c in colors.values()], list(colors)


WAIT_FLOOR_S = 1.0  # a log axis cannot show 0: immediate admissions sit on the floor
WAIT_XLABEL = "time in the queue until admission (seconds, log scale; 1 s floor; censored: waited so far)"


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


def render_plots(metrics: Metrics, queue_names: Sequence[str], run_label: str) -> dict[str, bytes]:
    """PNG bytes per file name (matplotlib, Agg backend). ``queue_names``
    fixes the colours; ``run_label`` (seed, workloads, load) goes under
    every title."""
    plt = _pyplot()
    s = metrics.series
    x, xlabel, _ = _x(metrics)
    per_bin = f"per {fmt_bin(s.bin_s)} bin"
    colors = queue_colors(queue_names)
    out: dict[str, bytes] = {}

    def titled(ax: Any, title: str) -> None:
        ax.set_title(f"{title}\n{run_label}; {per_bin}", fontsize=9)

    # 1. utilization per flavor: one colour per flavor in every panel
    res = list(s.utilization)
    flavors = sorted({f for r in res for f in s.utilization[r]})
    fcolor = dict(zip(flavors, palette(len(flavors)), strict=True))
    fig, axes = plt.subplots(
        len(res) or 1, 1, figsize=(10, 2.3 * max(1, len(res)) + 0.6), sharex=True, squeeze=False
    )
    for ax, r in zip(axes[:, 0], res, strict=False):
        for f, y in s.utilization[r].items():
            ax.plot(x, y * 100, lw=1, color=fcolor[f], label=f)
        ax.set_ylabel(f"{r}\n% of nominal")
        ax.set_ylim(bottom=0)
    if flavors:
        legend_beside(axes[0, 0], *_line_handles(fcolor))
    titled(axes[0, 0], PLOTS[0][1])
    axes[-1, 0].set_xlabel(xlabel)
    out[PLOTS[0][0]] = _png(fig)

    # 2. pending workloads, stacked
    fig, ax = plt.subplots(figsize=(10, 3.4))
    weight = {k: float(v.sum()) for k, v in s.pending.items()}
    top = _top(list(s.pending), weight)
    ys = [s.pending[k] for k in top]
    labels = list(top)
    cols = [colors.get(k, OTHERS_COLOR) for k in top]
    rest = [v for k, v in s.pending.items() if k not in top]
    if rest:
        ys.append(np.sum(rest, axis=0))
        labels.append(f"{len(rest)} others")
        cols.append(OTHERS_COLOR)
    if ys:
        ax.stackplot(x, *ys, labels=labels, colors=cols, alpha=0.85)
        legend_beside(ax)
    titled(ax, PLOTS[1][1])
    ax.set_ylabel(f"pending workloads\n(mean {per_bin})")
    ax.set_xlabel(xlabel)
    out[PLOTS[1][0]] = _png(fig)

    # 3. wait-time distribution per ClusterQueue
    names = _by_p95([("", metrics)], 2 * MAX_LINES)
    fig, ax = plt.subplots(figsize=(10, 0.45 * max(4, len(names)) + 1.2))
    _wait_boxes(ax, [("", metrics)], names, colors)
    ax.set_title(f"{PLOTS[2][1]}\n{run_label}", fontsize=9)
    out[PLOTS[2][0]] = _png(fig)

    # 4. borrowing (above zero) and lending (below zero) per resource; one legend for all panels
    res = [r for r in s.borrowed if s.borrowed[r]]
    fig, axes = plt.subplots(
        max(1, len(res)), 1, figsize=(10, 2.6 * max(1, len(res)) + 0.6), sharex=True, squeeze=False
    )
    shown: list[str] = []
    for ax, r in zip(axes[:, 0], res, strict=False):
        _, unit = display_unit(r)
        weight = {k: float(v.sum() + s.lent[r][k].sum()) for k, v in s.borrowed[r].items()}
        for k in _top(list(s.borrowed[r]), weight):
            col = colors.get(k, OTHERS_COLOR)
            ax.plot(x, s.borrowed[r][k], lw=1, color=col)
            ax.plot(x, -s.lent[r][k], lw=1, color=col, ls="--")
            if k not in shown:
                shown.append(k)
        ax.axhline(0, color="k", lw=0.6)
        ax.set_ylabel(f"{r} ({unit})" if unit else r)
    if shown:
        shown.sort(key=list(queue_names).index)
        legend_beside(axes[0, 0], *_line_handles({k: colors[k] for k in shown}))
    titled(axes[0, 0], PLOTS[3][1] + " (solid: borrowed, dashed: lent; mean amount)")
    axes[-1, 0].set_xlabel(xlabel)
    out[PLOTS[3][0]] = _png(fig)

    # 5. preemptions per bin by reason, stacked (one step outline per reason)
    fig, ax = plt.subplots(figsize=(10, 3.2))
    edges = s.edges_s / _x(metrics)[2]
    bottom = np.zeros(edges.size - 1)
    for reason, counts in s.preemptions.items():
        ax.stairs(bottom + counts, edges, baseline=bottom, fill=True, label=reason)
        bottom = bottom + counts
    if s.preemptions:
        legend_beside(ax)
    else:
        ax.text(0.5, 0.5, "no preemptions", transform=ax.transAxes, ha="center", va="center")
    titled(ax, PLOTS[4][1])
    ax.set_ylabel(f"evicted workloads\n{per_bin}")
    ax.set_xlabel(xlabel)
    out[PLOTS[4][0]] = _png(fig)
    return out


# --- several runs of one trace, overlaid (kueue-fast compare) ------------------------------------------

OVERLAY_PLOTS = (
    (
        "wait_times.png",
        "Wait-time distribution per ClusterQueue, per configuration",
        "Per workload, the time it spent in its queue until admission; workloads still pending at the end "
        "count with the time waited so far (censored). One box per configuration: p25-p75 with the median, "
        "whiskers: p5-p95, dot: p99.",
    ),
    (
        "utilization.png",
        "Utilization over time, per configuration",
        "Share of each flavor's total nominal quota in use (mean per time bin), one panel per resource and "
        "flavor (those that differ most between the configurations).",
    ),
    (
        "pending.png",
        "Pending workloads over time, per configuration",
        "Workloads waiting in each ClusterQueue's queue (mean per time bin), one panel per ClusterQueue "
        "(those with the most pending).",
    ),
)
MAX_PANELS = 12


def run_colors(labels: Sequence[str]) -> dict[str, str]:
    """One colour per run (configuration), the same in every overlay chart."""
    return dict(zip(labels, palette(len(labels)), strict=True))


def _panels(n: int) -> tuple[Any, Any]:
    plt = _pyplot()
    cols = 2 if n > 3 else 1
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(11, 2.1 * rows + 0.9), sharex=True, squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes


def render_overlay_plots(runs: Sequence[tuple[str, Metrics]], subtitle: str) -> dict[str, bytes]:
    """The runs of one trace on several configurations, overlaid: a colour per
    run in every chart (``OVERLAY_PLOTS``); ``subtitle`` names the trace."""
    colors = run_colors([label for label, _ in runs])
    out: dict[str, bytes] = {}
    plt = _pyplot()
    widths = {fmt_bin(m.series.bin_s) for _, m in runs}
    per_bin = f"per {' / '.join(sorted(widths))} bin"

    # 1. waits: per ClusterQueue one box per run
    names = _by_p95(runs, 2 * MAX_LINES)
    fig, ax = plt.subplots(figsize=(10, (0.3 + 0.25 * len(runs)) * max(4, len(names)) + 1.2))
    _wait_boxes(ax, runs, names, colors)
    legend_beside(ax, *_line_handles(colors))
    ax.set_title(f"{OVERLAY_PLOTS[0][1]}\n{subtitle}", fontsize=9)
    out[OVERLAY_PLOTS[0][0]] = _png(fig)

    # 2. utilization: a panel per resource and flavor, those that differ most first
    keys = sorted({(r, f) for _, m in runs for r, d in m.series.utilization.items() for f in d})

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
                ax.plot(x, y * 100, lw=1, color=colors[label])
        ax.set_title(f"{r} in {f}", fontsize=8)
        ax.set_ylabel("% of nominal")
        ax.set_ylim(bottom=0)
    legend_beside(axes[0, -1], *_line_handles(colors))
    fig.suptitle(f"{OVERLAY_PLOTS[1][1]}\n{subtitle}; {per_bin}", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    out[OVERLAY_PLOTS[1][0]] = _png(fig)

    # 3. pending: a panel per ClusterQueue, the most pending first
    weight: dict[str, float] = {}
    for _, m in runs:
        for k, v in m.series.pending.items():
            weight[k] = max(weight.get(k, 0.0), float(v.sum()))
    queues = sorted(weight, key=lambda k: -weight[k])[:MAX_PANELS]
    fig, axes = _panels(max(1, len(queues)))
    for ax, q in zip(axes.ravel(), queues, strict=False):
        for label, m in runs:
            y = m.series.pending.get(q)
            x, xlabel, _ = _x(m)
            ax.plot(x, y if y is not None else np.zeros_like(x), lw=1, color=colors[label])
        ax.set_title(q, fontsize=8)
        ax.set_ylabel("pending")
        ax.set_ylim(bottom=0)
    if not queues:
        axes[0, 0].text(0.5, 0.5, "nothing pending", transform=axes[0, 0].transAxes, ha="center")
    legend_beside(axes[0, -1], *_line_handles(colors))
    fig.suptitle(f"{OVERLAY_PLOTS[2][1]}\n{subtitle}; {per_bin}", fontsize=9)
    for ax in axes[-1]:
        ax.set_xlabel(xlabel)
    out[OVERLAY_PLOTS[2][0]] = _png(fig)
    return out


# --- files -------------------------------------------------------------------------------------------


def metrics_json(result: SimResult, metrics: Metrics, extra: dict[str, Any]) -> dict[str, Any]:
    s = metrics.series
    return {
        "engine": result.engine,
        "run": {
            "workloads": result.n_workloads,
            "manifest_workloads": result.n_manifest,
            "start": result.start_ns // NS,
            "end": result.end_ns // NS,
            "termination_delay_s": result.termination_delay_ns / NS,
            "max_cycles_per_instant": result.max_cycles,
            "cycles": result.cycles,
            "instants": result.instants,
            "unsettled_instants": result.unsettled,
            "candidate_evaluations": result.candidate_evaluations,
            "simulation_wall_s": round(result.wall_s, 4),
            "schedule_s": round(result.schedule_s, 4),
            **extra,
        },
        "totals": metrics.totals,
        "cluster_queues": [q.to_json() for q in metrics.queues],
        "churn": metrics.churn.to_json(),
        "series": {
            "bin_s": s.bin_s,
            "edges_s": s.edges_s.round(3).tolist(),
            "utilization": {
                r: {f: v.round(5).tolist() for f, v in d.items()} for r, d in s.utilization.items()
            },
            "pending": {k: v.round(3).tolist() for k, v in s.pending.items()},
            "borrowed": {r: {k: v.round(4).tolist() for k, v in d.items()} for r, d in s.borrowed.items()},
            "lent": {r: {k: v.round(4).tolist() for k, v in d.items()} for r, d in s.lent.items()},
            "preemptions": {k: v.astype(int).tolist() for k, v in s.preemptions.items()},
        },
    }


WORKLOAD_COLUMNS = (
    "namespace",
    "name",
    "local_queue",
    "cluster_queue",
    "priority",
    "arrival_s",
    "state",
    "admissions",
    "admitted_at_s",
    "evictions",
    "evicted_at_s",
    "last_admitted_s",
    "last_evicted_s",
    "finished_s",
    "wait_s",
    "wait_censored",
    "flavors",
    "preempted_by",
    "lost_work_s",
    "pods_ready_timeouts",
    "explanation",
    "check_retries",
    "check_wait_s",
)


def _csv_field(text: str) -> str:
    """A CSV field (RFC 4180): quoted when it holds a comma, a quote or a line break."""
    if any(c in text for c in ',"\n\r'):
        return '"' + text.replace('"', '""') + '"'
    return text


def write_workloads_csv(path: Path, result: SimResult, chunk: int = 20_000) -> None:
    """One row per workload (see WORKLOAD_COLUMNS and the README): times in
    seconds since the start; ``admitted_at_s``/``evicted_at_s`` list the
    first TIMES_KEPT times separated by spaces (``admissions``/``evictions``
    count them all, ``last_*`` give the last). Written ``chunk`` rows at a
    time (the text of every row at once would take hundreds of MB)."""
    wl = result.workloads
    t0 = result.start_ns
    tr = result.trace
    m = result.n_manifest

    def secs(a: np.ndarray[Any, Any]) -> list[str]:
        """Seconds since the start with 3 decimals; '' where a < 0 (never)."""
        rel = np.where(a >= 0, (a - t0) / NS, -1.0).tolist()
        return [f"{x:.3f}" if x >= 0 else "" for x in rel]

    def times(kept: np.ndarray[Any, Any]) -> list[str]:
        out = secs(kept[:, 0])
        for i in np.flatnonzero(kept[:, 1] >= 0).tolist():  # more than one: few
            out[i] = " ".join(f"{(x - t0) / NS:.3f}" for x in kept[i].tolist() if x >= 0)
        return out

    def key(w: int) -> str:
        if w < m:
            return f"{result.manifest[w][0]}/{result.manifest[w][1]}"
        return f"{tr.namespaces[int(tr.namespace[w - m])]}/{tr.name_of(w - m)}"

    cq_names = [*result.topology_cq_names, ""]  # index -1: none
    state_names = np.array([*STATE_NAMES, "unqueued", "not-arrived"])
    # flavors of each workload's last admission: resource=flavor, per flavor-resource it used
    labels = [f"{result.resource_names[r]}={result.flavor_names[f]}" for f, r in result.fr_pairs]
    order = sorted(range(len(labels)), key=lambda k: labels[k])
    used = wl.usage[:, order] > 0
    if used.shape[1] <= 62:  # each row's pattern as one number: a cheap unique
        codes = used.astype(np.int64) @ (np.int64(1) << np.arange(used.shape[1], dtype=np.int64))
        _, first, which = np.unique(codes, return_index=True, return_inverse=True)
        patterns = used[first]
    else:
        patterns, which = np.unique(used, axis=0, return_inverse=True)
    which = which.ravel()
    pattern_text = [_csv_field(",".join(labels[order[k]] for k in np.flatnonzero(row))) for row in patterns]
    messages = [*(_csv_field(x) for x in result.messages), ""]  # index -1: none
    zeros = np.zeros(result.n_workloads, dtype=np.int64)
    timeouts = wl.pods_ready_timeouts if wl.pods_ready_timeouts.size else zeros
    retries = wl.check_retries if wl.check_retries is not None else zeros
    check_wait = wl.check_wait_ns if wl.check_wait_ns is not None else zeros
    with path.open("w", newline="") as f:
        f.write(",".join(WORKLOAD_COLUMNS) + "\n")
        for lo in range(0, result.n_workloads, chunk):
            hi = min(result.n_workloads, lo + chunk)
            # names, LocalQueues and priorities: the manifest's workloads, then the trace's rows
            manifest = result.manifest[lo : min(hi, m)]
            k0, k1 = max(lo, m) - m, max(hi, m) - m
            namespaces = [x[0] for x in manifest] + [tr.namespaces[k] for k in tr.namespace[k0:k1].tolist()]
            names = [x[1] for x in manifest] + [tr.name_of(k) for k in range(k0, k1)]
            local_queues = [x[2] for x in manifest] + [tr.queues[k] for k in tr.queue[k0:k1].tolist()]
            priorities = [x[3] for x in manifest] + tr.priority[k0:k1].tolist()
            queued = (wl.queue_cq[lo:hi] >= 0) | (wl.admissions[lo:hi] > 0)
            state = np.where(queued, wl.state[lo:hi], len(STATE_NAMES))
            state[wl.arrival_ns[lo:hi] > result.end_ns] = len(STATE_NAMES) + 1  # after --until
            columns = [
                namespaces,
                names,
                local_queues,
                [cq_names[c] for c in wl.queue_cq[lo:hi].tolist()],
                list(map(str, priorities)),
                secs(wl.arrival_ns[lo:hi]),
                state_names[state].tolist(),
                list(map(str, wl.admissions[lo:hi].tolist())),
                times(wl.admitted_at[lo:hi]),
                list(map(str, wl.evictions[lo:hi].tolist())),
                times(wl.evicted_at[lo:hi]),
                secs(wl.last_admitted_ns[lo:hi]),
                secs(wl.last_evicted_ns[lo:hi]),
                secs(wl.finished_ns[lo:hi]),
                [f"{x:.3f}" for x in (wl.wait_ns[lo:hi] / NS).tolist()],
                np.where(wl.censored[lo:hi], "true", "false").tolist(),
                [pattern_text[k] for k in which[lo:hi].tolist()],
                [key(p) if p >= 0 else "" for p in wl.preempted_by[lo:hi].tolist()],
                [f"{x:.3f}" for x in (wl.lost_ns[lo:hi] / NS).tolist()],
                list(map(str, timeouts[lo:hi].tolist())),
                [messages[k] for k in wl.explanation[lo:hi].tolist()],
                list(map(str, retries[lo:hi].tolist())),
                [f"{x:.3f}" for x in (check_wait[lo:hi] / NS).tolist()],
            ]
            # names, numbers and times never need quoting; free text was quoted above
            f.write("\n".join(map(",".join, zip(*columns, strict=True))))
            f.write("\n")


PAGE_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 2em 0; } img { max-width: 100%; } figcaption { color: #555; font-size: 0.9em; }
pre { white-space: pre-wrap; font-size: 0.85em; }
.facts { color: #444; }
"""


def page(title: str, body: str) -> str:
    """A self-contained HTML page (the report's style)."""
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>\n'
        f"<style>{PAGE_CSS}</style></head><body>\n<h1>{html.escape(title)}</h1>\n{body}\n</body></html>\n"
    )


def html_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    th = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def figures_html(plots: Sequence[tuple[str, str, str]], pngs: dict[str, bytes], note: str = "") -> str:
    """The charts of ``plots`` (file, heading, caption) that were drawn, embedded."""
    if not charts_available():
        return f'<p class="facts">{html.escape(NO_CHARTS)}</p>'
    figs = []
    for name, heading, caption in plots:
        if name not in pngs:
            continue
        b64 = base64.b64encode(pngs[name]).decode()
        figs.append(
            f'<figure><h2>{html.escape(heading)}</h2><img alt="{html.escape(heading)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{html.escape(caption)}'
            f"{html.escape(note)}</figcaption></figure>"
        )
    return "".join(figs)


def html_page(
    result: SimResult,
    metrics: Metrics,
    pngs: dict[str, bytes],
    title: str,
    run_label: str,
    notes: Sequence[str],
) -> str:
    t = metrics.totals
    rows = table_rows(metrics.queues, t["simulated_s"])
    facts = [
        html.escape(run_label),
        f"engine {html.escape(result.engine)}",
        f"{fmt_duration(t['simulated_s'])} simulated",
        f"pod termination {result.termination_delay_ns / NS:g} s",
        f"{t['admissions']:,} admissions",
        f"{t['preemptions']:,} preemptions",
        f"{result.cycles:,} scheduling cycles",
        f"simulated in {result.wall_s:.1f} s",
    ]
    note_html = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    churn = churn_lines(metrics.churn)
    churn_html = "<h2>Preemption churn</h2><pre>" + html.escape("\n".join(churn)) + "</pre>" if churn else ""
    figs = figures_html(PLOTS, pngs, f" Bins of {fmt_bin(metrics.series.bin_s)}.")
    return page(
        title,
        f"""<p class="facts">{" · ".join(facts)}</p>
<ul>{note_html}</ul>
<h2>Per ClusterQueue</h2>
{html_table(TABLE_COLUMNS, rows)}
<p class="facts">{html.escape(TABLE_LEGEND)} The numbers are in metrics.json; every workload is in
workloads.csv.</p>
{churn_html}
{figs}""",
    )


def write_report(
    folder: Path,
    result: SimResult,
    metrics: Metrics,
    title: str,
    run_label: str,
    notes: Sequence[str],
    extra: dict[str, Any],
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pngs = render_plots(metrics, result.topology_cq_names, run_label) if charts_available() else {}
    written = []
    for name, data in pngs.items():
        p = folder / name
        p.write_bytes(data)
        written.append(p)
    doc = metrics_json(result, metrics, extra)
    doc["notes"] = list(notes)
    p = folder / "metrics.json"
    p.write_text(json.dumps(doc, indent=1) + "\n")
    written.append(p)
    p = folder / "workloads.csv"
    write_workloads_csv(p, result)
    written.append(p)
    p = folder / "report.html"
    p.write_text(html_page(result, metrics, pngs, title, run_label, notes))
    written.append(p)
    return written


__all__ = [
    "OVERLAY_PLOTS",
    "PLOTS",
    "TABLE_LEGEND",
    "NO_CHARTS",
    "TIMES_KEPT",
    "WORKLOAD_COLUMNS",
    "charts_available",
    "churn_lines",
    "figures_html",
    "html_page",
    "html_table",
    "legend_beside",
    "metrics_json",
    "page",
    "palette",
    "queue_colors",
    "render_overlay_plots",
    "render_plots",
    "run_colors",
    "summary_table",
    "write_report",
    "write_workloads_csv",
]
