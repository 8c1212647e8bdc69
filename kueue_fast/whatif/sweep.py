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
import difflib
import itertools
import json
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..api.errors import InputError, raise_all
from ..commands.whatif_args import check_output
from ..loader import read_documents
from ..simulate import scenario
from ..simulate.plots import NO_CHARTS, charts_available
from .overrides import Variant, apply_setting, as_number, parse_target, path_text, read_setting, show_value
from .plan import (
    check_run_arguments,
    execute,
    prepare,
    print_notes,
    run_warnings,
    where_lines,
)
from .run_summary import (
    check_metric,
    smaller_is_better,
)
from .sources import base_variant, changed, print_warnings, validate
from .sweep_report import SweepResult, render_table, to_json, write_report

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
