"""The report folder: metrics.json, five PNG plots, one self-contained HTML
page (plots embedded as base64), and the summary table for the terminal."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .loop import SimResult
from .metrics import Metrics, QueueStats, display_unit

MAX_LINES = 10  # ClusterQueues drawn one by one; the rest are summed as "others"

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
        "Time from entering the queue (arrival, or eviction) to admission, for every admission; "
        "box: p25-p75 with the median, whiskers: p5-p95, dots: p99.",
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
                fmt_duration(q.wait_p50_s),
                fmt_duration(q.wait_p95_s),
                fmt_duration(q.wait_p99_s),
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
        )

    out = [line(TABLE_COLUMNS), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[:-1]]
    out += ["  ".join("-" * w for w in widths), line(rows[-1])]
    return "\n".join(out) + "\n"


# --- plots ------------------------------------------------------------------------------------------


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


def render_plots(metrics: Metrics) -> dict[str, bytes]:
    """PNG bytes per file name (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 100, "font.size": 9, "axes.grid": True, "grid.alpha": 0.3})
    s = metrics.series
    x, xlabel, _ = _x(metrics)
    out: dict[str, bytes] = {}

    def save(fig: Any, name: str) -> None:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", bbox_inches="tight")
        plt.close(fig)
        out[name] = buf.getvalue()

    # 1. utilization per flavor
    res = list(s.utilization)
    fig, axes = plt.subplots(
        len(res) or 1, 1, figsize=(10, 2.3 * max(1, len(res))), sharex=True, squeeze=False
    )
    for ax, r in zip(axes[:, 0], res, strict=False):
        for f, y in s.utilization[r].items():
            ax.plot(x, y * 100, lw=1, label=f)
        ax.set_ylabel(f"{r}\n% of nominal")
        ax.set_ylim(bottom=0)
        ax.legend(loc="upper right", fontsize=7, ncol=4)
    axes[0, 0].set_title(PLOTS[0][1])
    axes[-1, 0].set_xlabel(xlabel)
    save(fig, PLOTS[0][0])

    # 2. pending workloads, stacked
    fig, ax = plt.subplots(figsize=(10, 3.2))
    weight = {k: float(v.sum()) for k, v in s.pending.items()}
    top = _top(list(s.pending), weight)
    ys = [s.pending[k] for k in top]
    labels = list(top)
    rest = [v for k, v in s.pending.items() if k not in top]
    if rest:
        ys.append(np.sum(rest, axis=0))
        labels.append(f"{len(rest)} others")
    if ys:
        ax.stackplot(x, *ys, labels=labels, alpha=0.85)
        ax.legend(loc="upper left", fontsize=7, ncol=3)
    ax.set_title(PLOTS[1][1])
    ax.set_ylabel("pending workloads")
    ax.set_xlabel(xlabel)
    save(fig, PLOTS[1][0])

    # 3. wait-time distribution per ClusterQueue
    names = [q.name for q in metrics.queues if metrics.waits_s.get(q.name, np.zeros(0)).size]
    names = sorted(names, key=lambda n: -float(np.percentile(metrics.waits_s[n], 95)))[: 2 * MAX_LINES]
    fig, ax = plt.subplots(figsize=(10, 0.45 * max(4, len(names)) + 1))
    floor = 1.0  # seconds: a log axis cannot show 0; immediate admissions sit on the floor
    if names:
        data = [np.maximum(metrics.waits_s[n], floor) for n in names]
        ax.boxplot(data, orientation="horizontal", whis=(5, 95), showfliers=False, tick_labels=names)
        for i, d in enumerate(data, start=1):
            ax.plot(np.percentile(d, 99), i, "k.", ms=5)
        ax.set_xscale("log")
    ax.set_title(PLOTS[2][1])
    ax.set_xlabel("wait until admission (seconds, log scale; 1 s floor)")
    ax.invert_yaxis()
    save(fig, PLOTS[2][0])

    # 4. borrowing (above zero) and lending (below zero) per resource
    res = [r for r in s.borrowed if s.borrowed[r]]
    fig, axes = plt.subplots(
        max(1, len(res)), 1, figsize=(10, 2.6 * max(1, len(res))), sharex=True, squeeze=False
    )
    for ax, r in zip(axes[:, 0], res, strict=False):
        _, unit = display_unit(r)
        weight = {k: float(v.sum() + s.lent[r][k].sum()) for k, v in s.borrowed[r].items()}
        top = _top(list(s.borrowed[r]), weight)
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for i, k in enumerate(top):
            col = colors[i % len(colors)]
            ax.plot(x, s.borrowed[r][k], lw=1, color=col, label=k)
            ax.plot(x, -s.lent[r][k], lw=1, color=col, ls="--")
        ax.axhline(0, color="k", lw=0.6)
        ax.set_ylabel(f"{r} ({unit})" if unit else r)
        ax.legend(loc="upper right", fontsize=7, ncol=3)
    axes[0, 0].set_title(PLOTS[3][1] + " (solid: borrowed, dashed: lent)")
    axes[-1, 0].set_xlabel(xlabel)
    save(fig, PLOTS[3][0])

    # 5. preemptions per bin by reason
    fig, ax = plt.subplots(figsize=(10, 3.0))
    width = float(x[1] - x[0]) if x.size > 1 else 1.0
    bottom = np.zeros_like(x)
    for reason, counts in s.preemptions.items():
        ax.bar(x, counts, width=width, bottom=bottom, label=reason, align="center")
        bottom = bottom + counts
    if s.preemptions:
        ax.legend(loc="upper right", fontsize=7)
    else:
        ax.text(0.5, 0.5, "no preemptions", transform=ax.transAxes, ha="center", va="center")
    ax.set_title(PLOTS[4][1])
    ax.set_ylabel("preempted workloads per bin")
    ax.set_xlabel(xlabel)
    save(fig, PLOTS[4][0])
    return out


# --- files -------------------------------------------------------------------------------------------


def metrics_json(result: SimResult, metrics: Metrics, extra: dict[str, Any]) -> dict[str, Any]:
    s = metrics.series
    return {
        "engine": result.engine,
        "run": {
            "workloads": result.n_workloads,
            "manifest_workloads": result.n_manifest,
            "start": result.start_ns // 1_000_000_000,
            "end": result.end_ns // 1_000_000_000,
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
        "series": {
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


def html_page(
    result: SimResult, metrics: Metrics, pngs: dict[str, bytes], title: str, notes: Sequence[str]
) -> str:
    t = metrics.totals
    rows = table_rows(metrics.queues, t["simulated_s"])
    th = "".join(f"<th>{html.escape(c)}</th>" for c in TABLE_COLUMNS)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    figs = []
    for name, heading, caption in PLOTS:
        if name not in pngs:
            continue
        b64 = base64.b64encode(pngs[name]).decode()
        figs.append(
            f'<figure><h2>{html.escape(heading)}</h2><img alt="{html.escape(heading)}" '
            f'src="data:image/png;base64,{b64}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        )
    facts = [
        f"engine {html.escape(result.engine)}",
        f"{t['workloads']:,} workloads",
        f"{fmt_duration(t['simulated_s'])} simulated",
        f"{t['admissions']:,} admissions",
        f"{t['preemptions']:,} preemptions",
        f"{result.cycles:,} scheduling cycles",
        f"{result.wall_s:.2f} s wall time",
    ]
    note_html = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }}
table {{ border-collapse: collapse; font-size: 0.9em; }}
th, td {{ padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }}
th:first-child, td:first-child {{ text-align: left; }}
figure {{ margin: 2em 0; }} img {{ max-width: 100%; }} figcaption {{ color: #555; font-size: 0.9em; }}
.facts {{ color: #444; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="facts">{" · ".join(facts)}</p>
<ul>{note_html}</ul>
<h2>Per ClusterQueue</h2>
<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>
<p class="facts">admitted: workloads admitted at least once; pending: still waiting at the end;
preempted: evictions of its workloads; wait: per admission, from entering the queue; util: time-mean
use of its dominant resource over its nominal quota (over 100% when borrowing); borrowing: time spent
above its nominal quota. The numbers are in metrics.json.</p>
{"".join(figs)}
</body></html>
"""


def write_report(
    folder: Path, result: SimResult, metrics: Metrics, title: str, notes: Sequence[str], extra: dict[str, Any]
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pngs = render_plots(metrics)
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
    p = folder / "report.html"
    p.write_text(html_page(result, metrics, pngs, title, notes))
    written.append(p)
    return written
