"""``kueue-fast bench``: the standard benchmarks, native against reference.

Cases:

* ``drain``: 100k pending workloads over 1000 ClusterQueues in 100 cohorts
  (3 resources, 2-3 flavors per ClusterQueue), cycles until stable;
* ``preemption``: one cohort of 100 ClusterQueues holding 10k admitted
  low-priority workloads, then 1k high-priority arrivals that must preempt
  within their ClusterQueue and by reclaiming borrowed quota;
* ``simulate``: the default simulation (report included);
* ``load`` (only when named): 100k Workloads (the drain case's manifests) read
  from one YAML file and from one JSON List (``kubectl get -o json``), to a
  parsed ClusterState and to a Cluster on the engine, with the split per
  stage (read+parse, build_state, Cluster construction).

Each case runs in a fresh subprocess per engine, so that its peak RSS is its
own. Where the reference engine would take too long it runs a smaller
instance of the same generator; its time is scaled to the full size and the
table says so. The generators are public (``drain_case``,
``preemption_case``, ``drain_objects``) for ``bench/`` to import.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .simulate.args import BENCH_CASES
from .trace import Trace

NS = 1_000_000_000
# Creation times of generated workloads: 2025-01-06 00:00 UTC plus their index.
BASE_NS = 1736121600 * NS
GI = 1 << 30
RESOURCES = ("cpu", "memory", "nvidia.com/gpu")
FLAVORS = ("on-demand", "spot", "reserved")
PRIORITIES = (50, 100, 200)


# --- generators ---------------------------------------------------------------------------------------


@dataclass
class Case:
    """Queues as manifests, workloads as a trace (arrival = creation order)."""

    objects: list[dict[str, Any]]
    trace: Trace
    admitted: int = 0  # the first `admitted` workloads of the trace hold quota from the start
    admitted_cq: list[str] = field(default_factory=list)
    admitted_flavor: str = ""


def _cq(
    name: str,
    cohort: str,
    flavors: list[tuple[str, dict[str, str]]],
    within: str = "LowerPriority",
    reclaim: str = "Any",
) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta1",
        "kind": "ClusterQueue",
        "metadata": {"name": name},
        "spec": {
            "cohort": cohort,
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": list(RESOURCES),
                    "flavors": [
                        {"name": f, "resources": [{"name": r, "nominalQuota": q[r]} for r in RESOURCES]}
                        for f, q in flavors
                    ],
                }
            ],
            "preemption": {"withinClusterQueue": within, "reclaimWithinCohort": reclaim},
        },
    }


def _common(n_cq: int, cq_names: list[str]) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": f}}
        for f in FLAVORS
    ]
    for i, name in enumerate(cq_names):
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "LocalQueue",
                "metadata": {"name": "lq", "namespace": f"ns-{i:04d}"},
                "spec": {"clusterQueue": name},
            }
        )
    del n_cq
    return objs


def _trace(
    ns_of: np.ndarray[Any, Any],
    n_ns: int,
    priority: np.ndarray[Any, Any],
    count: np.ndarray[Any, Any],
    requests: np.ndarray[Any, Any],
) -> Trace:
    n = ns_of.size
    return Trace(
        arrival_s=np.arange(n, dtype=np.float64),
        duration_s=np.full(n, 600.0),
        namespace=ns_of.astype(np.int32),
        queue=np.zeros(n, dtype=np.int32),
        priority=priority.astype(np.int64),
        ps_offsets=np.arange(n + 1, dtype=np.int64),
        ps_name=np.zeros(n, dtype=np.int32),
        count=count.astype(np.int32),
        min_count=np.full(n, -1, dtype=np.int32),
        requests=requests.astype(np.int64),
        resources=list(RESOURCES),
        namespaces=[f"ns-{i:04d}" for i in range(n_ns)],
        queues=["lq"],
    )


def drain_case(n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0) -> Case:
    """The drain benchmark: ClusterQueues in cohorts of equal size, each with
    2 or 3 flavors of cpu, memory and GPUs, and pending workloads of three
    sizes and three priorities (Kueue's own scalability test has the same
    shape) spread evenly over the ClusterQueues."""
    rng = np.random.default_rng(seed)
    cq_names = [f"cq-{i:04d}" for i in range(n_cq)]
    objs = _common(n_cq, cq_names)
    for i, name in enumerate(cq_names):
        n_flavors = 2 + (i % 2)
        flavors = [
            (
                f,
                {
                    "cpu": str(20 + 10 * (i % 3)),
                    "memory": f"{64 + 32 * (i % 3)}Gi",
                    "nvidia.com/gpu": str(2 * k),
                },
            )
            for k, f in enumerate(FLAVORS[:n_flavors])
        ]
        # Reclaim Any would not settle on this input (Kueue keeps evicting and
        # re-admitting the same borrowers, cycle after cycle): LowerPriority does.
        objs.append(_cq(name, f"cohort-{i % n_cohorts:03d}", flavors, reclaim="LowerPriority"))
    # three workload classes: small (60%), medium (30%), large (10%)
    cls = rng.choice(3, size=n_workloads, p=[0.6, 0.3, 0.1])
    cpu = np.array([500, 2000, 8000])[cls]
    mem = np.array([1, 4, 16])[cls] * GI
    gpu = np.where((cls == 2) & (rng.random(n_workloads) < 0.5), 1, 0)
    count = np.array([1, 2, 4])[cls]
    prio = np.asarray(PRIORITIES)[rng.choice(3, size=n_workloads, p=[0.5, 0.3, 0.2])]
    ns_of = np.arange(n_workloads) % n_cq
    return Case(objs, _trace(ns_of, n_cq, prio, count, np.stack([cpu, mem, gpu], axis=1)))


def preemption_case(n_cq: int = 100, n_admitted: int = 10_000, n_arrivals: int = 1000) -> Case:
    """The preemption-heavy case (issue 3): one cohort of n_cq ClusterQueues,
    each with 100 cpu of nominal quota; n_admitted 1-cpu low-priority
    workloads hold the whole cohort, the first half of the ClusterQueues
    borrowing what the second half lends; then n_arrivals 4-cpu
    high-priority workloads, spread evenly, must preempt: in borrowing
    ClusterQueues within the queue, in lending ones by reclaim."""
    cq_names = [f"cq-{i:04d}" for i in range(n_cq)]
    objs = _common(n_cq, cq_names)
    per_cq = n_admitted // n_cq
    nominal = per_cq  # one cpu per admitted workload fills the cohort exactly
    for name in cq_names:
        q = {"cpu": str(nominal), "memory": f"{4 * nominal}Gi", "nvidia.com/gpu": "0"}
        objs.append(_cq(name, "cohort", [("on-demand", q)]))
    # admitted: half the queues hold 1.5x their nominal quota, the other half 0.5x
    half = n_cq // 2
    held = np.array([per_cq + per_cq // 2] * half + [per_cq - per_cq // 2] * (n_cq - half))
    adm_ns = np.repeat(np.arange(n_cq), held)
    adm_ns = adm_ns[:n_admitted]
    arr_ns = np.arange(n_arrivals) % n_cq
    ns_of = np.concatenate([adm_ns, arr_ns])
    n = ns_of.size
    prio = np.concatenate([np.full(adm_ns.size, 10), np.full(n_arrivals, 1000)])
    cpu = np.concatenate([np.full(adm_ns.size, 1000), np.full(n_arrivals, 4000)])
    mem = cpu // 1000 * GI
    req = np.stack([cpu, mem, np.zeros(n, dtype=np.int64)], axis=1)
    case = Case(objs, _trace(ns_of, n_cq, prio, np.ones(n), req))
    case.admitted = int(adm_ns.size)
    case.admitted_cq = [cq_names[i] for i in adm_ns.tolist()]
    case.admitted_flavor = "on-demand"
    return case


def drain_objects(case: Case) -> list[dict[str, Any]]:
    """The case as Kueue manifests, Workloads included (for loading benchmarks)."""
    from .quantity import format_quantity

    t = case.trace
    objs = list(case.objects)
    text = {
        r: {int(v): format_quantity(r, int(v)) for v in np.unique(t.requests[:, j]).tolist()}
        for j, r in enumerate(t.resources)
    }
    for i in range(len(t)):
        requests = {r: text[r][int(t.requests[i, j])] for j, r in enumerate(t.resources) if t.requests[i, j]}
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(BASE_NS // NS + i))
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta1",
                "kind": "Workload",
                "metadata": {
                    "name": f"wl-{i:07d}",
                    "namespace": t.namespaces[t.namespace[i]],
                    "creationTimestamp": ts,
                },
                "spec": {
                    "queueName": "lq",
                    "priority": int(t.priority[i]),
                    "podSets": [
                        {
                            "name": "main",
                            "count": int(t.count[i]),
                            "template": {
                                "spec": {
                                    "containers": [
                                        {"name": "c", "image": "busybox", "resources": {"requests": requests}}
                                    ]
                                }
                            },
                        }
                    ],
                },
            }
        )
    return objs


# --- running one case in this process ------------------------------------------------------------------


def _engine_for(case: Case, engine: str) -> tuple[Any, Any, Any]:
    """(engine, topology, batch) with the case's workloads added: the
    admitted ones (with their admission) and the pending ones."""
    from .compiler import AdmissionSpec, WorkloadCompiler, compile_topology
    from .loader import build_state
    from .simulate.batch import batch_from_trace
    from .simulate.engine import make_sim_engine

    state = build_state(case.objects)
    topo = compile_topology(state, extra_resources=set(case.trace.resources))
    compiler = WorkloadCompiler(state, topo)
    sim = make_sim_engine(engine, topo)
    batch = batch_from_trace(case.trace, compiler, BASE_NS)
    if case.admitted:
        cq_id = {c.name: i for i, c in enumerate(topo.cluster_queues)}
        fid = topo.flavor_names.index(case.admitted_flavor)
        specs = []
        for i in range(case.admitted):
            spec = batch.spec(i)
            use = [(r, fid, v * spec.pod_sets[0].count) for r, v in spec.pod_sets[0].requests]
            spec.admission = AdmissionSpec(
                cq_id[case.admitted_cq[i]], [(spec.pod_sets[0].count, use)], BASE_NS
            )
            specs.append(spec)
        sim.add_specs(specs)
    return sim, topo, batch


def write_load_files(directory: str, n_workloads: int) -> dict[str, str]:
    """The drain case's manifests with n_workloads Workloads as one YAML
    stream and one JSON List (``kubectl get -o json``): {"yaml": path, "json": path}."""
    import yaml

    size = {"n_cq": min(1000, max(1, n_workloads // 10)), "n_cohorts": min(100, max(1, n_workloads // 100))}
    objs = drain_objects(drain_case(n_workloads=n_workloads, **size))
    paths = {fmt: os.path.join(directory, f"workloads.{fmt}") for fmt in ("yaml", "json")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f, indent=4)
    with open(paths["yaml"], "w", encoding="utf-8") as f:
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        yaml.dump_all(objs, f, Dumper=dumper, sort_keys=False)
    return paths


def _run_load(engine: str, size: dict[str, int]) -> dict[str, Any]:
    """Each file: read+parse, build_state, Cluster construction (compile and
    add every workload to the engine), timed apart."""
    import gc
    import tempfile

    from .cluster import Cluster
    from .loader import build_state, read_documents

    n = size["n_workloads"]
    out: dict[str, Any] = {"case": "load", "size": size, "workloads": n, "cycles": 0, "decisions": 0}
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = write_load_files(tmp, n)
        out["generate_s"] = time.perf_counter() - t0
        for fmt in ("yaml", "json"):
            gc.collect()
            t0 = time.perf_counter()
            docs = read_documents([paths[fmt]])
            t1 = time.perf_counter()
            state = build_state(docs)
            t2 = time.perf_counter()
            cluster = Cluster(state, engine)
            t3 = time.perf_counter()
            out["engine"] = cluster.engine.name
            out[fmt] = {
                "bytes": os.path.getsize(paths[fmt]),
                "parse_s": t1 - t0,
                "build_state_s": t2 - t1,
                "cluster_s": t3 - t2,
                "to_state_s": t2 - t0,
                "to_cluster_s": t3 - t0,
                "workloads": len(state.workloads),
            }
            del docs, state, cluster
    out["decisions"] = out["yaml"]["workloads"] + out["json"]["workloads"]  # objects loaded
    out["time_s"] = out["yaml"]["to_cluster_s"] + out["json"]["to_cluster_s"]
    return out


def run_case(name: str, engine: str, size: dict[str, int]) -> dict[str, Any]:
    """One case in this process: setup, then the timed part."""
    if name == "simulate":
        return _run_simulate(engine, size)
    if name == "load":
        return _run_load(engine, size)
    t0 = time.perf_counter()
    case = drain_case(**size) if name == "drain" else preemption_case(**size)
    t1 = time.perf_counter()
    sim, _topo, batch = _engine_for(case, engine)
    t2 = time.perf_counter()
    # drain: every workload is pending; preemption: the admitted ones are in,
    # the high-priority ones arrive now
    sim.add(batch, case.admitted, len(batch))
    t_add = time.perf_counter()
    evals0 = sim.candidate_evaluations()
    settled = sim.settle(BASE_NS + len(case.trace) * NS, 1_000_000)
    t3 = time.perf_counter()
    admitted = sum(len(s.admitted) for s in settled.steps)
    preempted = sum(len(s.preempted) for s in settled.steps)
    out: dict[str, Any] = {
        "case": name,
        "engine": sim.name,
        "size": size,
        "workloads": len(case.trace),
        "generate_s": t1 - t0,
        "setup_s": t2 - t1,
        "add_s": t_add - t2,
        "time_s": t3 - t_add,
        "cycles": settled.cycles,
        "stable": settled.stable,
        "admitted": admitted,
        "preempted": preempted,
        "decisions": settled.heads,
        "candidate_evaluations": sim.candidate_evaluations() - evals0,
    }
    if name == "preemption":
        preemptors = len({w for s in settled.steps for w in s.admitted if w >= case.admitted})
        out["preemptors_admitted"] = preemptors
        out["victims_per_preemptor"] = preempted / preemptors if preemptors else 0.0
    return out


def _run_simulate(engine: str, size: dict[str, int]) -> dict[str, Any]:
    import tempfile

    from .simulate.command import run

    with tempfile.TemporaryDirectory() as tmp, open(os.devnull, "w") as quiet:
        t0 = time.perf_counter()
        out = run(n=size["n"], engine=engine, report_dir=os.path.join(tmp, "report"), err=quiet)
        t1 = time.perf_counter()
    r = out.result
    return {
        "case": "simulate",
        "engine": r.engine,
        "size": size,
        "workloads": r.n_workloads,
        "time_s": t1 - t0,
        "schedule_s": r.schedule_s,  # inside settle(): the engine's cycles
        "simulate_s": r.wall_s,
        "cycles": r.cycles,
        "admitted": out.metrics.totals["admissions"],
        "preempted": out.metrics.totals["preemptions"],
        "decisions": out.metrics.totals["admissions"] + out.metrics.totals["preemptions"],
        "candidate_evaluations": r.candidate_evaluations,
        "timings": out.timings,
    }


# --- the table ------------------------------------------------------------------------------------------

FULL = {
    "drain": {"n_cq": 1000, "n_cohorts": 100, "n_workloads": 100_000},
    "preemption": {"n_cq": 100, "n_admitted": 10_000, "n_arrivals": 1000},
    "simulate": {"n": 100_000},
}
# Cases run only when named (not part of the default set).
EXTRA = {"load": {"n_workloads": 100_000}}
CASES = {**FULL, **EXTRA}
# The reference engine's instance of each case, and how its time scales to FULL.
REFERENCE = {
    # the reference engine's add path is Python: 10k workloads, time x10
    "load": ({"n_workloads": 10_000}, 10.0),
    # the reference drains the full input in about 10 s: same input, no scaling
    "drain": (FULL["drain"], 1.0),
    # every preemptor searches the same 10k admitted workloads: time is linear in arrivals
    "preemption": ({"n_cq": 100, "n_admitted": 10_000, "n_arrivals": 100}, 10.0),
    "simulate": ({"n": 5000}, 20.0),
}
QUICK = {
    "drain": ({"n_cq": 20, "n_cohorts": 4, "n_workloads": 400}, 1.0),
    "preemption": ({"n_cq": 10, "n_admitted": 200, "n_arrivals": 20}, 1.0),
    "simulate": ({"n": 200}, 1.0),
    "load": ({"n_workloads": 300}, 1.0),
}


def _in_subprocess(name: str, engine: str, size: dict[str, int]) -> dict[str, Any]:
    """Run one case in a fresh interpreter; add its peak RSS."""
    import tempfile

    cmd = [sys.executable, "-m", "kueue_fast.bench", "_case", name, engine, json.dumps(size)]
    # output through files, not pipes: wait4 (for this child's own rusage)
    # must reap the child, and a full pipe would block it first
    with tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr:
        # cwd elsewhere: `python -m` puts the working directory first on
        # sys.path, where a source checkout would shadow the installed package
        proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, text=True, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        fout.seek(0)
        ferr.seek(0)
        out, err = fout.read(), ferr.read()
    if proc.returncode != 0:
        raise RuntimeError(f"bench case {name}/{engine} failed:\n{err.strip()[-2000:]}")
    res: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    res["peak_rss_mb"] = usage.ru_maxrss / 1024.0  # Linux: kilobytes
    return res


def bench(
    cases: list[str], engines: list[str], quick: bool = False, isolate: bool = True
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in cases:
        row: dict[str, Any] = {"case": name}
        for engine in engines:
            if quick:
                size, scale = QUICK[name]
            elif engine == "reference":
                size, scale = REFERENCE[name]
            else:
                size, scale = CASES[name], 1.0
            res = _in_subprocess(name, engine, size) if isolate else run_case(name, engine, size)
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


# the table's titles are the cases' help lines (simulate/args.py)
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
        for engine in ("native", "reference"):
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


# --- CLI ----------------------------------------------------------------------------------------------


def run_bench(args: argparse.Namespace) -> int:
    from .simulate.engine import native_available

    cases = list(args.cases) or list(FULL)
    for c in cases:
        if c not in CASES:
            from .errors import InputError

            raise InputError("", "CASE", f"unknown case {c!r}: expected one of {', '.join(CASES)}")
    engines = ["native", "reference"] if args.engine == "both" else [args.engine]
    if "native" in engines and not native_available():
        if args.engine == "native":
            from .errors import EngineError

            raise EngineError("the native engine is not available in this installation")
        engines.remove("native")
    rows = bench(cases, engines, quick=args.quick, isolate=not args.in_process)
    if args.json:
        sys.stdout.write(json.dumps({"results": rows}, indent=1, default=str) + "\n")
    else:
        sys.stdout.write(format_table(rows))
    return 0


def _main(argv: list[str]) -> int:
    """``python -m kueue_fast.bench _case NAME ENGINE SIZE_JSON``: one case, one JSON line."""
    if len(argv) == 4 and argv[0] == "_case":
        res = run_case(argv[1], argv[2], json.loads(argv[3]))
        sys.stdout.write(json.dumps(res, default=str) + "\n")
        return 0
    print("usage: python -m kueue_fast.bench _case NAME ENGINE SIZE_JSON", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
