"""``kueue-fast sweep``: a grid of changes to a base configuration, each
simulated on the same frozen trace.

The sweep spec (YAML)::

    parameters:                     # what varies (at least one)
      - name: a100                  # the column's name (default: from the path)
        set: clusterqueue/team-llm.spec.resourceGroups[*].flavors[a100].resources[nvidia.com/gpu].nominalQuota
        values: [24, 32, 40, 48]
      - name: reclaim
        set:                        # several fields that take the same value
          - clusterqueue/team-vision.spec.preemption.reclaimWithinCohort
          - clusterqueue/team-speech.spec.preemption.reclaimWithinCohort
        values: [Never, LowerPriority, Any]
      - name: moved                 # targets with values of their own (moving quota between queues)
        values: [0, 8]              # the column
        set:
          clusterqueue/a.spec.resourceGroups[0].flavors[gpu].resources[nvidia.com/gpu].nominalQuota: [32, 24]
          clusterqueue/b.spec.resourceGroups[0].flavors[gpu].resources[nvidia.com/gpu].nominalQuota: [8, 16]
    combine: grid                   # grid: every combination (default); zip: the i-th values together
    base: true                      # also run the base unchanged, as the first row (default: true)
    metrics: [wait_p95:team-llm, wait_p95, preemptions, utilization]
    objective: {minimize: wait_p95:team-llm}

``set`` paths are ``--set`` targets (overrides.py). ``metrics`` are the
table's columns (results.METRICS: ``wait_p95`` over all workloads,
``wait_p95:CQ`` for one ClusterQueue...); by default the cluster-wide wait
p95 and p99, preemptions, utilization, and the wait p95 of each
ClusterQueue the parameters change. The best value of each column is marked
``*``, the best configuration by the objective (default: the first metric)
``<- best``. Every configuration is built and validated before anything runs.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import html
import io
import itertools
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..api.errors import InputError, QuantityError, raise_all
from ..api.quantity import quantity_nanos
from ..commands.whatif_args import check_output
from ..loader import read_documents
from ..simulate import scenario
from ..simulate.plots import NO_CHARTS, Plot, charts_available, palette
from ..simulate.report import figures_html, html_table, page
from .overrides import Variant, apply_setting, parse_target, path_text, read_setting, show_value
from .plan import (
    Plan,
    check_run_arguments,
    execute,
    prepare,
    print_notes,
    run_warnings,
    where_lines,
    write_frozen_trace,
)
from .run_summary import (
    COMPARE_METRICS,
    METRICS,
    RunSummary,
    check_metric,
    fmt_metric,
    metric_value,
    smaller_is_better,
    split_metric,
)
from .sources import base_variant, changed, print_warnings, validate

SPEC_KEYS = ("parameters", "combine", "base", "metrics", "objective")
PARAMETER_KEYS = ("name", "set", "values")
DEFAULT_METRICS = ("wait_p95", "wait_p99", "preemptions", "utilization")
MAX_DEFAULT_QUEUES = 4


@dataclass
class Parameter:
    name: str
    targets: list[str]  # --set targets without the value
    values: list[Any]  # the column's values
    # target -> its own values, aligned with values (set given as a map); None: every target takes values
    per_target: dict[str, list[Any]] | None = None

    def value_for(self, target: str, k: int) -> Any:
        return self.per_target[target][k] if self.per_target is not None else self.values[k]


@dataclass
class SweepSpec:
    source: str
    parameters: list[Parameter]
    combine: str = "grid"
    include_base: bool = True
    metrics: list[str] = field(default_factory=list)
    objective: str = ""
    maximize: bool = False

    def combinations(self) -> list[tuple[int, ...]]:
        """Per configuration, the index of each parameter's value."""
        ranges = [range(len(p.values)) for p in self.parameters]
        if self.combine == "zip":
            return list(zip(*ranges, strict=True))
        return list(itertools.product(*ranges))


# --- reading the spec -----------------------------------------------------------------------------------


def _err(source: str, path: str, message: str) -> InputError:
    return InputError("sweep spec", path, message, source=source)


def _unknown(d: dict[str, Any], allowed: tuple[str, ...], source: str, where: str) -> None:
    for k in d:
        if k not in allowed:
            close = difflib.get_close_matches(str(k), allowed, n=1)
            hint = f' (did you mean "{close[0]}"?)' if close else f" (fields: {', '.join(allowed)})"
            raise _err(source, f"{where}{'.' if where else ''}{k}", f"unknown field{hint}")


def _default_name(target: str) -> str:
    """A column name from a target: the object's name, the named list elements and the field."""
    kind_name, _, path = target.partition(".")
    name = kind_name.split("/")[-1]
    named = [s for s in path.replace("]", "[").split("[")[1::2] if s not in ("*",) and not s.isdigit()]
    last = path.rsplit(".", 1)[-1] if "." in path else path
    return "/".join([name, *named, last])


def read_spec(path: str) -> SweepSpec:
    docs = read_documents([path])
    if len(docs) != 1:
        raise _err(path, "", f"expected one YAML document, found {len(docs)}")
    d = docs[0].obj
    _unknown(d, SPEC_KEYS, path, "")
    raw = d.get("parameters")
    if not isinstance(raw, list) or not raw:
        raise _err(path, "parameters", "a list of at least one {name, set, values}")
    params: list[Parameter] = []
    for i, p in enumerate(raw):
        where = f"parameters[{i}]"
        if not isinstance(p, dict):
            raise _err(path, where, "expected {name, set, values}")
        _unknown(p, PARAMETER_KEYS, path, where)
        raw_set = p.get("set")
        per_target: dict[str, list[Any]] | None = None
        if isinstance(raw_set, dict):  # each target with its own values
            per_target = {}
            for t, vs in raw_set.items():
                if not isinstance(t, str) or not isinstance(vs, list) or not vs:
                    raise _err(path, f"{where}.set", "a map of targets to lists of values")
                per_target[t] = list(vs)
            raw_set = list(per_target)
        targets = [raw_set] if isinstance(raw_set, str) else raw_set
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t for t in targets):
            raise _err(
                path,
                f"{where}.set",
                "a --set target (KIND/NAME.PATH), a list of them, or a map of them to values",
            )
        for t in targets:
            if "=" in t.split("]")[-1]:
                raise _err(path, f"{where}.set", f"{t!r}: a target without =VALUE (the values are in values)")
        values = p.get("values")
        if values is None and per_target is not None:
            values = per_target[targets[0]]
        if not isinstance(values, list) or not values:
            raise _err(path, f"{where}.values", "a list of at least one value")
        if per_target is not None and any(len(v) != len(values) for v in per_target.values()):
            raise _err(
                path,
                f"{where}.set",
                f"every target needs {len(values)} values, one per value of the parameter",
            )
        name = p.get("name", _default_name(targets[0]))
        if not isinstance(name, str) or not name:
            raise _err(path, f"{where}.name", "a non-empty string")
        if any(q.name == name for q in params):
            raise _err(path, f"{where}.name", f"{name!r} names two parameters")
        params.append(Parameter(name, list(targets), list(values), per_target))
    combine = d.get("combine", "grid")
    if combine not in ("grid", "zip"):
        raise _err(path, "combine", f"grid or zip, not {combine!r}")
    if combine == "zip" and len({len(p.values) for p in params}) > 1:
        raise _err(path, "combine", "zip needs the same number of values in every parameter")
    include_base = d.get("base", True)
    if not isinstance(include_base, bool):
        raise _err(path, "base", "true or false")
    metrics = d.get("metrics", [])
    if not isinstance(metrics, list) or not all(isinstance(m, str) for m in metrics):
        raise _err(path, "metrics", "a list of metric names (METRIC or METRIC:CLUSTERQUEUE)")
    spec = SweepSpec(path, params, combine, include_base, list(metrics))
    obj = d.get("objective")
    if obj is not None:
        if not isinstance(obj, dict) or len(obj) != 1 or next(iter(obj)) not in ("minimize", "maximize"):
            raise _err(path, "objective", "{minimize: METRIC} or {maximize: METRIC}")
        key, value = next(iter(obj.items()))
        if not isinstance(value, str):
            raise _err(path, f"objective.{key}", "a metric name")
        spec.objective, spec.maximize = value, key == "maximize"
    return spec


def finish_spec(spec: SweepSpec, cluster_queues: list[str]) -> None:
    """Default metrics and objective, and every metric checked against the ClusterQueues."""
    if not spec.metrics:
        touched = []
        for p in spec.parameters:
            for t in p.targets:
                kind, _, rest = t.partition("/")
                name = rest.split(".")[0]
                if kind.lower() in ("clusterqueue", "cq") and name in cluster_queues and name not in touched:
                    touched.append(name)
        spec.metrics = [f"wait_p95:{q}" for q in touched[:MAX_DEFAULT_QUEUES]] + list(DEFAULT_METRICS)
    for i, m in enumerate(spec.metrics):
        why = check_metric(m, cluster_queues)
        if why:
            raise _err(spec.source, f"metrics[{i}]", why)
    if not spec.objective:
        spec.objective = spec.metrics[0]
        spec.maximize = not smaller_is_better(spec.objective)
    why = check_metric(spec.objective, cluster_queues)
    if why:
        raise _err(spec.source, "objective", why)


# --- expansion --------------------------------------------------------------------------------------------


@dataclass
class Configuration:
    label: str  # "base", "#1", ...
    values: dict[str, Any]  # parameter name -> value (the base: what it has)
    variant: Variant


def describe(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={show_value(v)}" for k, v in values.items())


def base_value(p: Parameter, base: Variant, targets: dict[str, Any]) -> Any:
    """The parameter's value in the base: what its target holds; for targets
    with values of their own, the value whose targets all hold what the base
    has (else "-")."""
    if p.per_target is None:
        return read_setting(base.documents, targets[p.targets[0]])
    held = {t: read_setting(base.documents, targets[t]) for t in p.targets}

    def same(a: Any, b: Any) -> bool:
        x, y = as_number(a), as_number(b)
        return x == y if x is not None and y is not None else show_value(a) == show_value(b)

    for i, v in enumerate(p.values):
        if all(same(held[t], p.value_for(t, i)) for t in p.targets):
            return v
    return "-"


def expand(spec: SweepSpec, base: Variant, changed_base: Variant | None = None) -> list[Configuration]:
    """Every configuration of the sweep, built (not validated yet): the base
    as given (the reference), then the grid on ``changed_base`` (the base
    with --set/--patch; default: the base); a target that does not resolve
    is an error naming the configuration."""
    out: list[Configuration] = []
    option = f"{spec.source} parameters"
    start = changed_base if changed_base is not None else base
    targets = {t: parse_target(t, start.documents, option) for p in spec.parameters for t in p.targets}
    if spec.include_base:
        now = {p.name: base_value(p, base, targets) for p in spec.parameters}
        out.append(Configuration("base", now, base))
    errors: list[InputError] = []
    for k, combo in enumerate(spec.combinations(), start=1):
        values = {p.name: p.values[i] for p, i in zip(spec.parameters, combo, strict=True)}
        v = start.derive(f"#{k}")
        what = f"sweep configuration #{k} ({describe(values)})"
        try:
            for p, i in zip(spec.parameters, combo, strict=True):
                for t in p.targets:
                    s = replace(targets[t], value=p.value_for(t, i))
                    apply_setting(v.documents, s, f"{spec.source} {p.name}")
                    v.changes.append(f"{s.ref} {path_text(s.steps)}={show_value(s.value)}")
        except InputError as e:
            errors.append(InputError(e.obj, e.field, e.message, source=what))
            continue
        out.append(Configuration(f"#{k}", values, v))
    raise_all(errors)
    return out


def validate_all(configs: list[Configuration]) -> list[Any]:
    """Every configuration as Kueue would take it; all errors at once, each naming its configuration."""
    states, errors = [], []
    for c in configs:
        what = "sweep base" if c.label == "base" else f"sweep configuration {c.label} ({describe(c.values)})"
        try:
            states.append(validate(c.variant, what))
        except InputError as e:
            errors += e.errors
    raise_all(errors)
    return states


# --- results ----------------------------------------------------------------------------------------------


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


def as_number(v: Any) -> float | None:
    """A parameter value as a number for a plot axis (quantities too: ``100Gi``); None if it is not one."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return quantity_nanos(v) / 1e9
        except QuantityError:
            return None
    return None


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


# --- the command -----------------------------------------------------------------------------------------


def run_sweep(args: argparse.Namespace) -> int:
    fmt = check_output(args.output)
    check_run_arguments(args)
    *base_files, spec_path = args.files
    spec = read_spec(spec_path)
    found = base_variant(args, base_files)
    builtin = found is None
    base = found if found is not None else _builtin_variant()
    base.label = "base"
    # --set/--patch: as in compare, the configurations under test are changed; the base runs as given
    under_test = changed(base, args)
    configs = expand(spec, base, under_test)
    states = validate_all(configs)
    print_warnings(states[0])
    finish_spec(spec, list(states[0].cluster_queues))
    print(f"{len(configs)} configurations, all valid", file=sys.stderr)
    if args.dry_run:
        for c in configs:
            sys.stdout.write(f"{c.label}: {describe(c.values)}\n")
        return 0
    plan = prepare(args, [c.variant for c in configs], states, builtin=builtin)
    print_notes(plan)
    results = execute(plan, args)
    sr = SweepResult(spec, configs, plan, results)
    doc = to_json(sr)
    files: list[Path] = []
    if not args.no_report:
        files = write_report(Path(args.report), sr, doc)
    if fmt == "json":
        sys.stdout.write(json.dumps(doc, indent=1, default=str) + "\n")
    else:
        goal = f"{'maximize' if spec.maximize else 'minimize'} {spec.objective}"
        out = [
            f"Sweep of {len(configs)} configurations on one trace ({plan.label}); objective: {goal}",
            *(
                [f"Every configuration but the base has: {'; '.join(under_test.changes)}"]
                if under_test.changes
                else []
            ),
            "",
            render_table(sr).rstrip("\n"),
            "",
            "'*': best in its column; '>': a lower bound (workloads still waiting at the end)",
            "",
            "Runs:",
            *where_lines(results),
        ]
        for w in run_warnings(results):
            out += ["", f"warning: {w}"]
        sys.stdout.write("\n".join(out) + "\n")
    if files:
        print(f"report: {Path(args.report) / 'report.html'}", file=sys.stderr)
        if not charts_available():
            print(f"note: {NO_CHARTS}", file=sys.stderr)
    return 0


def _builtin_variant() -> Variant:
    from ..loader import Document

    docs = [Document("built-in scenario", i, d) for i, d in enumerate(scenario.default_objects())]
    return Variant("base", docs)
