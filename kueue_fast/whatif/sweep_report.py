"""The results of a sweep (sweep.py): the table with each column's best marked,
CSV and Parquet columns, the JSON document, the chart of every metric by
parameter and the HTML report."""

from __future__ import annotations

import csv
import html
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..simulate.plots import Plot, charts_available, palette
from ..simulate.report import figures_html, html_table, page
from .overrides import as_number, show_value
from .plan import (
    Plan,
    run_warnings,
    write_frozen_trace,
)
from .run_summary import (
    COMPARE_METRICS,
    METRICS,
    RunSummary,
    fmt_metric,
    metric_value,
    smaller_is_better,
    split_metric,
)

# --- results ----------------------------------------------------------------------------------------------

if TYPE_CHECKING:
    from .sweep import Configuration, SweepSpec


@dataclass
class SweepResult:
    spec: SweepSpec
    configs: list[Configuration]
    plan: Plan
    results: list[RunSummary]

    def value(self, k: int, metric: str) -> tuple[float, bool]:
        return metric_value(self.results[k], metric)

    def best_in(self, metric: str) -> set[int]:
        vals = [self.value(k, metric)[0] for k in range(len(self.results))]
        target = min(vals) if smaller_is_better(metric) else max(vals)
        return {k for k, v in enumerate(vals) if np.isclose(v, target, rtol=1e-9, atol=1e-9)}

    def best(self) -> set[int]:
        vals = [self.value(k, self.spec.objective)[0] for k in range(len(self.results))]
        target = max(vals) if self.spec.maximize else min(vals)
        return {k for k, v in enumerate(vals) if np.isclose(v, target, rtol=1e-9, atol=1e-9)}


def _short_where(where: str) -> str:
    if where.startswith("dask worker"):
        inside = where.split("(", 1)[1].split(",")[0]  # the worker's address
        named = where.split(" (")[0].replace("dask worker", "").strip()
        return f"dask {named or inside}"
    if "pid " in where:
        return "pid " + where.rsplit("pid ", 1)[1].rstrip(")")
    return where


def table(sr: SweepResult) -> tuple[list[str], list[list[str]]]:
    cols = ["config", *(p.name for p in sr.spec.parameters), *sr.spec.metrics, "took", "ran on", ""]
    best_cols = {m: sr.best_in(m) for m in sr.spec.metrics}
    best = sr.best()
    rows = []
    for k, (c, r) in enumerate(zip(sr.configs, sr.results, strict=True)):
        row = [c.label, *(show_value(c.values.get(p.name)) for p in sr.spec.parameters)]
        for m in sr.spec.metrics:
            row.append(fmt_metric(m, *sr.value(k, m)) + (" *" if k in best_cols[m] else "  "))
        row += [f"{r.wall_s:.1f}s", _short_where(r.where), "<- best" if k in best else ""]
        rows.append(row)
    return cols, rows


def render_table(sr: SweepResult) -> str:
    cols, rows = table(sr)
    widths = [max(len(r[i]) for r in [cols, *rows]) for i in range(len(cols))]
    n_params = len(sr.spec.parameters)

    def line(r: list[str]) -> str:
        cells = []
        for i, (x, w) in enumerate(zip(r, widths, strict=True)):
            cells.append(x.ljust(w) if i <= n_params or i >= len(cols) - 2 else x.rjust(w))
        return "  ".join(cells).rstrip()

    rule = "  ".join("-" * w if c else "" for c, w in zip(cols, widths, strict=True)).rstrip()
    return "\n".join([line(cols), rule, *(line(r) for r in rows)]) + "\n"


def all_metrics(sr: SweepResult) -> list[str]:
    """Every metric, cluster-wide then per ClusterQueue (the CSV's columns)."""
    out = [m for m, _ in COMPARE_METRICS if m != "borrowing"] + ["wait_mean", "lost_work"]
    queues = [q.name for q in sr.results[0].metrics.queues]
    for q in queues:
        out += [f"{m}:{q}" for m, _ in COMPARE_METRICS] + [f"lost_work:{q}"]
    return out


def csv_columns(sr: SweepResult) -> dict[str, list[Any]]:
    """Column -> values: the configuration, its parameter values, every metric
    (counts; seconds for waits; 0-1 shares), then the run."""
    best = sr.best()
    cols: dict[str, list[Any]] = {"config": [c.label for c in sr.configs]}
    for p in sr.spec.parameters:
        cols[p.name] = [show_value(c.values.get(p.name)) for c in sr.configs]
    for m in all_metrics(sr):
        base, _ = split_metric(m)
        unit = "_s" if METRICS[base][2] == "duration" else ""
        cols[f"{m}{unit}"] = [sr.value(k, m)[0] for k in range(len(sr.results))]
        if base.startswith("wait_p"):
            cols[f"{m}_lower_bound"] = [sr.value(k, m)[1] for k in range(len(sr.results))]
    cols["best"] = [k in best for k in range(len(sr.results))]
    cols["wall_s"] = [round(r.wall_s, 3) for r in sr.results]
    cols["cpu_s"] = [round(r.cpu_s, 3) for r in sr.results]
    cols["where"] = [r.where for r in sr.results]
    return cols


def write_csv(path: Path, cols: dict[str, list[Any]]) -> None:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for row in zip(*cols.values(), strict=True):
        w.writerow(["true" if x is True else "false" if x is False else x for x in row])
    path.write_text(buf.getvalue())


def write_parquet(path: Path, cols: dict[str, list[Any]]) -> bool:
    """sweep.parquet when pyarrow is installed (kueue-fast[parquet])."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return False
    pq.write_table(pa.table(cols), path)
    return True


def metrics_by_parameter_plot(sr: SweepResult, heading: str) -> Any:
    """Each metric against each parameter (``PLOT``)."""
    from ..simulate.plots import pyplot

    plt = pyplot()
    params, metrics = sr.spec.parameters, sr.spec.metrics[:6]
    fig, axes = plt.subplots(
        len(metrics), len(params), figsize=(3.6 * len(params) + 1.5, 2.4 * len(metrics) + 0.8), squeeze=False
    )
    for j, p in enumerate(params):
        xs_raw = [c.values.get(p.name) for c in sr.configs]
        numbers = [as_number(x) for x in xs_raw]
        numeric = all(x is not None for x in numbers)
        cats = list(dict.fromkeys(show_value(x) for x in xs_raw))
        xs = [
            x if x is not None else float(cats.index(show_value(r)))
            for x, r in zip(numbers, xs_raw, strict=True)
        ]
        if not numeric:
            xs = [float(cats.index(show_value(r))) for r in xs_raw]
        other = params[1 - j] if len(params) == 2 else None
        for i, m in enumerate(metrics):
            ax = axes[i, j]
            kind = METRICS[split_metric(m)[0]][2]
            scale = 100.0 if kind == "share" else (1 / 3600 if kind == "duration" else 1.0)
            ys = [sr.value(k, m)[0] * scale for k in range(len(sr.results))]
            if other is not None:
                groups = list(dict.fromkeys(show_value(c.values.get(other.name)) for c in sr.configs))
                colors = dict(zip(groups, palette(len(groups)), strict=True))
                for g in groups:
                    pts = sorted(
                        (x, y)
                        for x, y, c in zip(xs, ys, sr.configs, strict=True)
                        if show_value(c.values.get(other.name)) == g
                    )
                    ax.plot(
                        [a for a, _ in pts],
                        [b for _, b in pts],
                        "o-",
                        ms=3,
                        lw=1,
                        color=colors[g],
                        label=f"{other.name}={g}",
                    )
                if i == 0:
                    ax.legend(fontsize=6, loc="best", frameon=False)
            else:
                ax.plot(xs, ys, "o", ms=3, color="#1f77b4", alpha=0.6)
                uniq = sorted(set(xs))
                means = [float(np.mean([y for x, y in zip(xs, ys, strict=True) if x == u])) for u in uniq]
                ax.plot(uniq, means, "-", lw=1, color="#1f77b4")
            if not numeric:
                ax.set_xticks(range(len(cats)), cats, fontsize=7)
            unit = {"share": " (%)", "duration": " (h)"}.get(kind, "")
            if j == 0:
                ax.set_ylabel(f"{m}{unit}", fontsize=8)
            if i == len(metrics) - 1:
                ax.set_xlabel(p.name, fontsize=8)
    fig.suptitle(f"{heading}\n{sr.plan.label}", fontsize=9)
    # the default top margin is a share of the height: on a tall grid it leaves inches above the panels
    fig.subplots_adjust(top=1 - 0.7 / fig.get_figheight())
    return fig


PLOT: Plot[SweepResult] = Plot(
    "metrics_by_parameter.png",
    "Metrics against each swept parameter",
    "One panel per metric (rows) and swept parameter (columns): every configuration as a dot; the line joins "
    "the means at each value (with two parameters, one line per value of the other).",
    metrics_by_parameter_plot,
)


def render_plot(sr: SweepResult) -> bytes:
    """The PNG of ``PLOT``."""
    from ..simulate.plots import png

    return png(PLOT.draw(sr, PLOT.heading))


def to_json(sr: SweepResult) -> dict[str, Any]:
    best = sr.best()
    return {
        "trace": {"label": sr.plan.label, "workloads": len(sr.plan.trace)},
        "parameters": [{"name": p.name, "set": p.targets, "values": p.values} for p in sr.spec.parameters],
        "combine": sr.spec.combine,
        "metrics": sr.spec.metrics,
        "objective": {("maximize" if sr.spec.maximize else "minimize"): sr.spec.objective},
        "configurations": [
            {
                "config": c.label,
                "values": c.values,
                "changes": c.variant.changes if c.label != "base" else [],
                "metrics": {m: sr.value(k, m)[0] for m in sr.spec.metrics},
                "lower_bounds": [m for m in sr.spec.metrics if sr.value(k, m)[1]],
                "best": k in best,
                "wall_s": round(r.wall_s, 3),
                "cpu_s": round(r.cpu_s, 3),
                "where": r.where,
                "overall": r.overall,
                "cluster_queues": [q.to_json() for q in r.metrics.queues],
            }
            for k, (c, r) in enumerate(zip(sr.configs, sr.results, strict=True))
        ],
        "best": [sr.configs[k].label for k in sorted(best)],
        "warnings": run_warnings(sr.results) + sr.plan.warnings,
    }


def write_report(folder: Path, sr: SweepResult, doc: dict[str, Any]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    cols = csv_columns(sr)
    write_csv(folder / "sweep.csv", cols)
    written.append(folder / "sweep.csv")
    if write_parquet(folder / "sweep.parquet", cols):
        written.append(folder / "sweep.parquet")
    (folder / "sweep.json").write_text(json.dumps(doc, indent=1, default=str) + "\n")
    written.append(folder / "sweep.json")
    written.append(write_frozen_trace(sr.plan, folder))
    pngs = {PLOT.file: render_plot(sr)} if charts_available() else {}
    for name, data in pngs.items():
        (folder / name).write_bytes(data)
        written.append(folder / name)
    head, rows = table(sr)
    params = "".join(
        f"<li><b>{html.escape(p.name)}</b>: {html.escape(', '.join(p.targets))} in "
        f"{html.escape(', '.join(show_value(v) for v in p.values))}</li>"
        for p in sr.spec.parameters
    )
    goal = f"{'maximize' if sr.spec.maximize else 'minimize'} {sr.spec.objective}"
    body = f"""<p class="facts">{html.escape(sr.plan.label)} · engine {html.escape(sr.plan.options.engine)} ·
{len(sr.configs)} configurations ({html.escape(sr.spec.combine)}) · objective: {html.escape(goal)}</p>
<h2>Parameters</h2><ul>{params}</ul>
<h2>Results</h2>
{html_table(head, rows)}
<p class="facts">'*': the best value of its column; '&lt;- best': the best configuration by the objective;
'>': a wait that is a lower bound. Every metric, cluster-wide and per ClusterQueue, is in sweep.csv
{"and sweep.parquet" if (folder / "sweep.parquet") in written else "(sweep.parquet: install pyarrow)"}; the
trace every configuration ran is trace.csv.</p>
{figures_html([PLOT], pngs)}"""
    (folder / "report.html").write_text(page(f"Sweep of {len(sr.configs)} configurations", body))
    written.append(folder / "report.html")
    return written
