"""``kueue-fast bench``: run the cases per engine, print the tables."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..bench.cases import CASES, FULL, QUICK, REFERENCE, run_case, run_in_subprocess
from ..bench.e2e import E2E_MILLION, E2E_PARTS, bench_e2e
from ..bench.kueue_perf import bench_kueue_perf, format_kueue_perf_table
from ..engine.contract import ENGINES
from ..engine.select import native_available
from .simulate_args import BENCH_CASES


def bench(
    cases: list[str], engines: list[str], quick: bool = False, isolate: bool = True, repeat: int = 3
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in cases:
        if name == "e2e":
            rows.extend(bench_e2e(engines, quick=quick, repeat=repeat))
            continue
        if name == "e2e-1m":
            rows.extend(
                bench_e2e(engines, quick=quick, repeat=repeat, full_size=E2E_MILLION, inputs=("drain",))
            )
            continue
        if name == "kueue-perf":
            rows.extend(bench_kueue_perf(engines, quick=quick, repeat=repeat))
            continue
        row: dict[str, Any] = {"case": name}
        for engine in engines:
            if quick:
                size, scale = QUICK[name]
            elif engine == "reference":
                size, scale = REFERENCE[name]
            else:
                size, scale = CASES[name], 1.0
            if isolate:
                res = run_in_subprocess(name, engine, size, repeat)
            else:
                res = min((run_case(name, engine, size) for _ in range(repeat)), key=lambda r: r["time_s"])
                res["runs"] = repeat
            res["scale"] = scale
            res["time_full_s"] = res["time_s"] * scale
            if name == "simulate":
                # only the event loop grows with the number of workloads; the
                # report's plots and the setup cost the same at any size
                fixed = res["time_s"] - res["simulate_s"]
                res["time_full_s"] = res["simulate_s"] * scale + fixed
            res["decisions_per_s"] = res["decisions"] / res["time_s"] if res["time_s"] > 0 else 0.0
            row[engine] = res
        if "native" in row and "reference" in row:
            row["ratio"] = row["reference"]["time_full_s"] / max(row["native"]["time_s"], 1e-9)
            if name == "simulate":
                # the engines' own share: time inside the scheduling cycles
                ref, nat = row["reference"], row["native"]
                row["engine_ratio"] = ref["schedule_s"] * ref["scale"] / max(nat["schedule_s"], 1e-9)
        rows.append(row)
    return rows


def format_e2e_table(rows: list[dict[str, Any]]) -> str:
    head = ["input", "format", "engine", "workloads", "wall", "parse", "build", "schedule", "output", "other"]
    head += ["peak RSS", "cycles", "notes"]
    lines: list[list[str]] = []
    shown = ""
    for row in rows:
        title = f"{row['input']}: {E2E_TITLES[row['input']]}"
        for engine in ENGINES:
            r = row.get(engine)
            if r is None:
                continue
            scale = r["scale"]
            note = f"{r['bytes'] / 1e6:.0f} MB"
            if scale != 1.0:
                note += f"; measured at {r['workloads']:,} workloads, times but other x{scale:g}"
            lines.append(
                [
                    title if title != shown else "",
                    row["format"].upper(),
                    engine,
                    f"{r['workloads']:,}",
                    _seconds(r["wall_full_s"]),
                    *(_seconds(r[k] * scale) for k in E2E_PARTS),
                    _seconds(r["other_s"]),
                    f"{r['peak_rss_mb']:.0f} MB",
                    f"{r['cycles']:,}",
                    note,
                ]
            )
            shown = title
        if "ratio" in row:
            lines.append(
                [
                    "",
                    "",
                    "ratio",
                    "",
                    f"native {row['ratio']:,.1f}x faster",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    f"engine alone (schedule): native {row['engine_ratio']:,.0f}x faster",
                ]
            )
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in lines]
    runs = max((r[e]["runs"] for r in rows for e in ENGINES if e in r), default=0)
    out.append(
        f"note: `kueue-fast schedule FILE --until-stable -o json --stats` in a fresh process, best of {runs} "
        "by wall time; parse = read and validate, build = the Cluster (compile, add to the engine), "
        "schedule = the cycles, output = the JSON written, other = interpreter start, imports and exit"
    )
    return "\n".join(out) + "\n"


E2E_TITLES = {
    "drain": "the drain case, 47 cycles",
    "long": "quotas close to demand, 100+ cycles",
}


# the table's titles are the cases' help lines (commands/simulate_args.py)
CASE_TITLES = BENCH_CASES


def _seconds(t: float) -> str:
    return f"{t * 1000:.0f} ms" if t < 1 else f"{t:.2f} s"


def _load_note(r: dict[str, Any]) -> str:
    parts = []
    for fmt in ("yaml", "json"):
        x = r[fmt]
        parts.append(
            f"{fmt.upper()} {x['bytes'] / 1e6:.0f} MB: parse {_seconds(x['parse_s'])}"
            f" + state {_seconds(x['build_state_s'])} = {_seconds(x['to_state_s'])}"
            f", + Cluster {_seconds(x['cluster_s'])} = {_seconds(x['to_cluster_s'])}"
        )
    return "; ".join(parts)


def format_table(rows: list[dict[str, Any]]) -> str:
    head = ["case", "engine", "workloads", "wall time", "decisions/s", "peak RSS", "cycles", "notes"]
    lines: list[list[str]] = []
    notes: list[str] = []
    for row in rows:
        for engine in ENGINES:
            r = row.get(engine)
            if r is None:
                continue
            note = []
            if r["scale"] != 1.0:
                note.append(f"measured at {r['workloads']:,} workloads, time x{r['scale']:g}")
            if r["case"] == "preemption":
                note.append(
                    f"{r['victims_per_preemptor']:.2f} victims/preemptor, "
                    f"{r['candidate_evaluations']:,} candidate evaluations"
                )
            if r["case"] == "load":
                note.append(_load_note(r))
            if not r.get("stable", True):
                note.append("NOT STABLE")
            wall = r["time_full_s"]
            lines.append(
                [
                    CASE_TITLES.get(row["case"], row["case"])
                    if engine == "native" or "native" not in row
                    else "",
                    engine,
                    f"{r['workloads']:,}",
                    f"{wall * 1000:.1f} ms" if wall < 1 else f"{wall:.2f} s",
                    f"{r['decisions_per_s']:,.0f}",
                    f"{r.get('peak_rss_mb', 0):.0f} MB",
                    f"{r['cycles']:,}",
                    "; ".join(note),
                ]
            )
        if "ratio" in row:
            extra = ""
            if "engine_ratio" in row:
                extra = f"cycles alone: native {row['engine_ratio']:,.0f}x faster"
            lines.append(["", "ratio", "", f"native {row['ratio']:,.0f}x faster", "", "", "", extra])
    if not any("native" in r for r in rows):
        notes.append("the native engine is not available here: reference only, no ratio")
    widths = [max(len(x[i]) for x in [head, *lines]) for i in range(len(head))]
    out = ["  ".join(c.ljust(w) for c, w in zip(head, widths, strict=True))]
    out.append("  ".join("-" * w for w in widths))
    out += ["  ".join(c.ljust(w) for c, w in zip(x, widths, strict=True)).rstrip() for x in lines]
    out += [f"note: {n}" for n in notes]
    return "\n".join(out) + "\n"


def run_bench(args: argparse.Namespace) -> int:
    cases = list(args.cases) or list(FULL)
    for c in cases:
        if c not in CASES:
            from ..api.errors import InputError

            raise InputError("", "CASE", f"unknown case {c!r}: expected one of {', '.join(CASES)}")
    engines = list(ENGINES) if args.engine == "both" else [args.engine]
    if "native" in engines and not native_available():
        if args.engine == "native":
            from ..api.errors import EngineError

            raise EngineError("the native engine is not available in this installation")
        engines.remove("native")
    if args.repeat < 1:
        from ..api.errors import InputError

        raise InputError("", "--repeat", f"must be at least 1, got {args.repeat}")
    rows = bench(cases, engines, quick=args.quick, isolate=not args.in_process, repeat=args.repeat)
    if args.json:
        sys.stdout.write(json.dumps({"results": rows}, indent=1, default=str) + "\n")
        return 0
    tables = []
    others = [r for r in rows if r["case"] not in ("e2e", "kueue-perf")]
    if others:
        tables.append(format_table(others))
    if e2e := [r for r in rows if r["case"] == "e2e"]:
        tables.append(format_e2e_table(e2e))
    if perf := [r for r in rows if r["case"] == "kueue-perf"]:
        tables.append(format_kueue_perf_table(perf))
    sys.stdout.write("\n".join(tables))
    return 0
