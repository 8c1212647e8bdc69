"""``kueue-fast compare``: one frozen trace against several configurations.

The first configuration is the base: the trace is generated once from it (or
read with ``--trace``) and every configuration runs it with the same options.
Output: what differs between the configurations (their specs), a table per
ClusterQueue with every configuration side by side and its change against
the base, the biggest changes, how long each run took and where; the report
folder adds overlaid charts, comparison.json, the frozen trace and one HTML
page.
"""

from __future__ import annotations

import argparse
import html
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..api.errors import InputError
from ..commands.whatif_args import check_output
from ..simulate.plots import NO_CHARTS, OVERLAY_PLOTS, charts_available, render_overlay_plots
from ..simulate.report import figures_html, html_table, page
from .diff import Change, spec_diff
from .overrides import Variant
from .plan import (
    Plan,
    check_run_arguments,
    check_shared_local_queues,
    execute,
    prepare,
    print_notes,
    run_warnings,
    where_lines,
    write_frozen_trace,
)
from .run_summary import COMPARE_METRICS, EVICTION_COUNTS, RunSummary, fmt_delta, fmt_metric, metric_value
from .sources import base_variant, changed, print_warnings, read_variant, validate

ALL = "all ClusterQueues"
# cluster-wide rows of the table (borrowing is per ClusterQueue)
OVERALL_METRICS = tuple((m, t) for m, t in COMPARE_METRICS if m != "borrowing")
BIGGEST = 8
# How "biggest changes" weighs a change: relative to the base's value, with
# floors (waits: 5 minutes; counts: 20 and 1% of the queue's workloads;
# shares: 25 points), then weighted: waits first, then counts, then shares.
WAIT_FLOOR_S = 300.0
COUNT_FLOOR = 20.0
COUNT_FLOOR_SHARE = 0.01
SHARE_FLOOR = 0.25
WEIGHTS = {"wait": 1.0, "count": 0.8, "share": 0.6}
MIN_SCORE = 0.1


@dataclass
class Comparison:
    plan: Plan
    results: list[RunSummary]
    diffs: list[list[Change]]  # per configuration after the base

    @property
    def labels(self) -> list[str]:
        return [r.label for r in self.results]

    def queue_names(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.results:
            for q in r.metrics.queues:
                seen.setdefault(q.name)
        return list(seen)

    def metrics(self, cq: str) -> list[tuple[str, str]]:
        """The table's rows for ``cq`` (ALL: cluster-wide): the counts of
        admission checks and waitForPodsReady only when some configuration has them."""
        rows = OVERALL_METRICS if cq == ALL else COMPARE_METRICS
        return [
            (m, t)
            for m, t in rows
            if m not in EVICTION_COUNTS or any(r.metrics.totals.get(m) for r in self.results)
        ]

    def inactive_note(self, cq: str) -> str:
        """' (inactive in X, Y)' for a ClusterQueue some configuration leaves inactive."""
        where = [r.label for r in self.results for q in r.metrics.queues if q.name == cq and not q.active]
        return f" (inactive in {', '.join(where)})" if where else ""

    def value(self, k: int, cq: str, metric: str) -> tuple[float, bool] | None:
        """Configuration k's value of a metric (cluster-wide when cq is ALL); None if it has no such queue."""
        r = self.results[k]
        if cq == ALL:
            return metric_value(r, metric)
        if not any(q.name == cq for q in r.metrics.queues):
            return None
        return metric_value(r, f"{metric}:{cq}")


def unique_labels(variants: list[Variant]) -> None:
    """Configurations named alike (two files called cluster.yaml) get their paths."""
    seen: dict[str, int] = {}
    for v in variants:
        seen[v.label] = seen.get(v.label, 0) + 1
    for i, v in enumerate(variants):
        if seen[v.label] > 1:
            v.label = v.files[0] if len(v.files) == 1 else f"{v.label}#{i + 1}"


def compare_variants(args: argparse.Namespace) -> list[Variant]:
    """The configurations: the live cluster (``--kubeconfig``) or the first
    CONFIG as the base, the other CONFIGs, then the base with ``--set`` and
    ``--patch`` as one more."""
    configs = list(args.configs)
    variants: list[Variant] = []
    if args.kubeconfig is not None:
        base = base_variant(args, [])
        assert base is not None
        variants.append(base)
    variants += [read_variant([c], recursive=args.recursive) for c in configs]
    if not variants:
        raise InputError(
            "", "CONFIG", "give at least two configurations (files or directories), or one and --set"
        )
    if args.settings or args.patches:
        variants.append(changed(variants[0], args))
    if len(variants) < 2:
        raise InputError(
            "",
            "CONFIG",
            "one configuration is nothing to compare: give another, or a change with --set/--patch",
        )
    unique_labels(variants)
    return variants


# --- the table -------------------------------------------------------------------------------------------


def table_rows(c: Comparison) -> list[list[str]]:
    """Rows: a heading per ClusterQueue (cluster-wide first), then a row per
    metric with every configuration's value and its change against the base."""
    rows: list[list[str]] = []
    for cq in [ALL, *c.queue_names()]:
        rows.append([cq + c.inactive_note(cq)] + [""] * len(c.results))
        for metric, title in c.metrics(cq):
            name = metric if cq == ALL else f"{metric}:{cq}"
            base = c.value(0, cq, metric)
            row = [
                f"  {title}"
                + (
                    f" ({c.results[0].overall['dominant_resource']})"
                    if cq == ALL and metric == "utilization"
                    else ""
                )
            ]
            for k in range(len(c.results)):
                got = c.value(k, cq, metric)
                if got is None:
                    row.append("-")
                    continue
                text = fmt_metric(name, *got)
                if k and base is not None:
                    d = fmt_delta(name, base[0], got[0])
                    if d:
                        text += f" ({d})"
                row.append(text)
            rows.append(row)
    return rows


def render_table(c: Comparison) -> str:
    header = ["", *c.labels]
    rows = table_rows(c)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    out = []
    for r in [header, *rows]:
        out.append(
            "  ".join(
                x.ljust(w) if i == 0 else x.rjust(w) for i, (x, w) in enumerate(zip(r, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(out) + "\n"


# --- the biggest changes ---------------------------------------------------------------------------------


def biggest_changes(c: Comparison, limit: int = BIGGEST) -> list[dict[str, Any]]:
    """The largest changes against the base, scored so that waits, counts and
    shares compare (see WEIGHTS and the floors above)."""
    found: list[dict[str, Any]] = []
    workloads = {q.name: q.workloads for q in c.results[0].metrics.queues}
    workloads[ALL] = int(c.results[0].metrics.totals["workloads"])
    for k in range(1, len(c.results)):
        for cq in [ALL, *c.queue_names()]:
            count_floor = max(COUNT_FLOOR, COUNT_FLOOR_SHARE * workloads.get(cq, 0))
            for metric, title in c.metrics(cq):
                base, got = c.value(0, cq, metric), c.value(k, cq, metric)
                if base is None or got is None:
                    continue
                d = got[0] - base[0]
                if metric.startswith("wait"):
                    score = WEIGHTS["wait"] * abs(d) / max(base[0], WAIT_FLOOR_S)
                elif metric in ("utilization", "borrowing"):
                    score = WEIGHTS["share"] * abs(d) / max(base[0], SHARE_FLOOR)
                else:
                    score = WEIGHTS["count"] * abs(d) / max(base[0], count_floor)
                if score < MIN_SCORE:
                    continue
                name = metric if cq == ALL else f"{metric}:{cq}"
                found.append(
                    {
                        "configuration": c.results[k].label,
                        "cluster_queue": cq if cq != ALL else "",
                        "metric": metric,
                        "title": title,
                        "base": base[0],
                        "value": got[0],
                        "base_text": fmt_metric(name, *base),
                        "value_text": fmt_metric(name, *got),
                        "delta_text": fmt_delta(name, base[0], got[0]),
                        "score": round(score, 4),
                    }
                )
    found.sort(key=lambda x: -x["score"])
    return found[:limit]


def change_line(x: dict[str, Any], several: bool) -> str:
    where = x["cluster_queue"] or "all ClusterQueues"
    who = f"{x['configuration']}: " if several else ""
    return f"{who}{where} {x['title']}: {x['base_text']} -> {x['value_text']} ({x['delta_text']})"


# --- output ----------------------------------------------------------------------------------------------


def diff_lines(c: Comparison) -> list[str]:
    out = []
    base = c.results[0].label
    for r, diff in zip(c.results[1:], c.diffs, strict=True):
        if not diff:
            out.append(f"  {r.label}: the same specs as {base}")
            continue
        out.append(f"  {r.label}:")
        out += [f"    {ch}" for ch in diff[:40]]
        if len(diff) > 40:
            out.append(f"    ... and {len(diff) - 40} more (comparison.json has them all)")
    return out


def to_json(c: Comparison, biggest: list[dict[str, Any]]) -> dict[str, Any]:
    base = c.results[0]
    configs = []
    for k, (r, v) in enumerate(zip(c.results, c.plan.variants, strict=True)):
        deltas: dict[str, dict[str, float]] = {}
        if k:
            for cq in [ALL, *c.queue_names()]:
                for metric, _ in c.metrics(cq):
                    a, b = c.value(0, cq, metric), c.value(k, cq, metric)
                    if a is not None and b is not None:
                        deltas.setdefault(cq if cq != ALL else "", {})[metric] = b[0] - a[0]
        configs.append(
            {
                "label": r.label,
                "files": v.files,
                "changes": v.changes,
                "diff_from_base": [ch.__dict__ for ch in c.diffs[k - 1]] if k else [],
                "engine": r.engine,
                "cycles": r.cycles,
                "unsettled_instants": r.unsettled,
                "wall_s": round(r.wall_s, 3),
                "cpu_s": round(r.cpu_s, 3),
                "where": r.where,
                "overall": r.overall,
                "totals": r.metrics.totals,
                "cluster_queues": [q.to_json() for q in r.metrics.queues],
                "churn": r.metrics.churn.to_json(),
                "deltas_from_base": deltas,
            }
        )
    return {
        "base": base.label,
        "trace": {"label": c.plan.label, "workloads": len(c.plan.trace)},
        "options": {
            "engine": c.plan.options.engine,
            "termination_delay_s": c.plan.options.termination_delay_ns / 1e9,
            "drain": c.plan.options.drain,
            "max_cycles_per_instant": c.plan.options.max_cycles,
        },
        "configurations": configs,
        "biggest_changes": biggest,
        "warnings": run_warnings(c.results) + c.plan.warnings,
    }


def write_report(
    folder: Path, c: Comparison, biggest: list[dict[str, Any]], doc: dict[str, Any]
) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    pngs: dict[str, bytes] = {}
    if charts_available():
        pngs = render_overlay_plots([(r.label, r.metrics) for r in c.results], f"one trace: {c.plan.label}")
    written = []
    for name, data in pngs.items():
        (folder / name).write_bytes(data)
        written.append(folder / name)
    (folder / "comparison.json").write_text(json.dumps(doc, indent=1) + "\n")
    written.append(folder / "comparison.json")
    written.append(write_frozen_trace(c.plan, folder))
    several = len(c.results) > 2
    facts = [
        c.plan.label,
        f"engine {c.plan.options.engine}",
        f"pod termination {c.plan.options.termination_delay_ns / 1e9:g} s",
    ]
    changes = "".join(f"<li>{html.escape(change_line(x, several))}</li>" for x in biggest)
    where = html_table(
        ["configuration", "took", "CPU", "where"],
        [[r.label, f"{r.wall_s:.1f} s", f"{r.cpu_s:.1f} s", r.where] for r in c.results],
    )
    body = f"""<p class="facts">{html.escape(" · ".join(facts))}</p>
<h2>What differs from {html.escape(c.results[0].label)}</h2>
<pre>{html.escape(chr(10).join(diff_lines(c)))}</pre>
<h2>Biggest changes</h2>
<ul>{changes or "<li>none</li>"}</ul>
<h2>Per ClusterQueue</h2>
{html_table(["", *c.labels], table_rows(c))}
<p class="facts">Changes in parentheses are against {html.escape(c.results[0].label)}; '>' marks a wait
that is a lower bound (it falls on a workload still waiting at the end). The numbers are in comparison.json;
the trace all configurations ran is trace.csv (kueue-fast simulate CONFIG --trace trace.csv replays one).</p>
<h2>Runs</h2>
{where}
{figures_html(OVERLAY_PLOTS, pngs)}"""
    p = folder / "report.html"
    p.write_text(page(f"Comparison of {len(c.results)} configurations", body))
    written.append(p)
    return written


def run_compare(args: argparse.Namespace) -> int:
    fmt = check_output(args.output)
    check_run_arguments(args)
    variants = compare_variants(args)
    states = []
    for v in variants:
        st = validate(v, f"configuration {v.label}")
        print_warnings(st, v.label)
        states.append(st)
    check_shared_local_queues(variants)
    diffs = [spec_diff(variants[0].documents, v.documents) for v in variants[1:]]
    plan = prepare(args, variants, states)
    print_notes(plan)
    results = execute(plan, args)
    c = Comparison(plan, results, diffs)
    biggest = biggest_changes(c)
    doc = to_json(c, biggest)
    report_files: list[Path] = []
    if not args.no_report:
        report_files = write_report(Path(args.report), c, biggest, doc)
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=1) + "\n")
    else:
        sys.stdout.write(render_text(c, biggest))
    if report_files:
        print(f"report: {next(p for p in report_files if p.suffix == '.html')}", file=sys.stderr)
        if not charts_available():
            print(f"note: {NO_CHARTS}", file=sys.stderr)
    return 0


def render_text(c: Comparison, biggest: Sequence[dict[str, Any]]) -> str:
    several = len(c.results) > 2
    out = [
        f"Comparison of {len(c.results)} configurations on one trace ({c.plan.label})",
        "",
        f"What differs from {c.results[0].label}:",
        *diff_lines(c),
        "",
        render_table(c).rstrip("\n"),
        "",
        "Biggest changes:" if biggest else "No change stands out.",
        *(f"  {change_line(x, several)}" for x in biggest),
        "",
        "Runs:",
        *where_lines(list(c.results)),
    ]
    for w in run_warnings(list(c.results)):
        out += ["", f"warning: {w}"]
    for r in c.results:
        if r.unsettled:
            out += ["", f"note: {r.label}: {r.unsettled:,} instants did not settle (preemption churn)"]
    return "\n".join(out) + "\n"
