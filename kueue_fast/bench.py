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

from .engine_contract import ENGINES, native_available
from .simulate.args import BENCH_CASES
from .simulate.trace import Trace

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


def drain_case(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0, quota_scale: int = 1
) -> Case:
    """The drain benchmark: ClusterQueues in cohorts of equal size, each with
    2 or 3 flavors of cpu, memory and GPUs, and pending workloads of three
    sizes and three priorities (Kueue's own scalability test has the same
    shape) spread evenly over the ClusterQueues.

    quota_scale multiplies the cpu and memory quotas: at 1 a ClusterQueue
    admits about a fifth of its workloads (47 cycles until stable); at 4
    (``long_drain_case``) most of them, one head per cycle, for 100+ cycles."""
    rng = np.random.default_rng(seed)
    cq_names = [f"cq-{i:04d}" for i in range(n_cq)]
    objs = _common(n_cq, cq_names)
    for i, name in enumerate(cq_names):
        n_flavors = 2 + (i % 2)
        flavors = [
            (
                f,
                {
                    "cpu": str((20 + 10 * (i % 3)) * quota_scale),
                    "memory": f"{(64 + 32 * (i % 3)) * quota_scale}Gi",
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


def long_drain_case(
    n_cq: int = 1000, n_cohorts: int = 100, n_workloads: int = 100_000, seed: int = 0
) -> Case:
    """The drain case with quotas close to each ClusterQueue's demand (4x
    the drain case's cpu and memory): most workloads fit, so every queue
    admits a head per cycle and the cycles run 100+ times until stable,
    about 90k heads popped at 100k workloads. (Smaller quotas would not do:
    queues fill sooner and the run is shorter, 30 cycles at half the quota.)"""
    return drain_case(n_cq, n_cohorts, n_workloads, seed, quota_scale=4)


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


def drain_size(n_workloads: int) -> dict[str, int]:
    """The drain case's shape at n_workloads: 100 workloads per ClusterQueue,
    10 ClusterQueues per cohort (at most 1000 and 100)."""
    return {
        "n_cq": min(1000, max(1, n_workloads // 100)) if n_workloads < 100_000 else 1000,
        "n_cohorts": min(100, max(1, n_workloads // 1000)) if n_workloads < 100_000 else 100,
        "n_workloads": n_workloads,
    }


def write_case_files(
    case: Case, directory: str, stem: str = "workloads", json_indent: int | None = 4
) -> dict[str, str]:
    """The case's manifests (Workloads included) as one YAML stream and one
    JSON List: {"yaml": path, "json": path}. json_indent 4 is ``kubectl get
    -o json``'s layout; None writes it compact."""
    import yaml

    objs = drain_objects(case)
    paths = {fmt: os.path.join(directory, f"{stem}.{fmt}") for fmt in ("yaml", "json")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f, indent=json_indent)
    with open(paths["yaml"], "w", encoding="utf-8") as f:
        dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        yaml.dump_all(objs, f, Dumper=dumper, sort_keys=False)
    return paths


def write_load_files(directory: str, n_workloads: int) -> dict[str, str]:
    """The drain case's manifests with n_workloads Workloads as one YAML
    stream and one JSON List (``kubectl get -o json``): {"yaml": path, "json": path}."""
    size = {"n_cq": min(1000, max(1, n_workloads // 10)), "n_cohorts": min(100, max(1, n_workloads // 100))}
    return write_case_files(drain_case(n_workloads=n_workloads, **size), directory)


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
EXTRA = {"load": {"n_workloads": 100_000}, "e2e": {"n_workloads": 100_000}}
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


@dataclass
class ChildRun:
    returncode: int
    out: str
    err: str
    wall_s: float  # process start to exit
    peak_rss_mb: float


def run_child(cmd: list[str], keep_stdout: bool = True) -> ChildRun:
    """Run a command to its end: its output, wall time and peak RSS."""
    import tempfile

    # output through files, not pipes: wait4 (for this child's own rusage)
    # must reap the child, and a full pipe would block it first
    with tempfile.TemporaryFile("w+") as fout, tempfile.TemporaryFile("w+") as ferr:
        # cwd elsewhere: `python -m` puts the working directory first on
        # sys.path, where a source checkout would shadow the installed package
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, text=True, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it
        fout.seek(0)
        ferr.seek(0)
        out = fout.read() if keep_stdout else ""
        err = ferr.read()
    return ChildRun(proc.returncode, out, err, wall, usage.ru_maxrss / 1024.0)  # Linux: KB


def _in_subprocess(name: str, engine: str, size: dict[str, int], repeat: int = 1) -> dict[str, Any]:
    """Run one case in a fresh interpreter, best of `repeat` runs (the
    shortest timed part); add its peak RSS."""
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        child = run_child([sys.executable, "-m", "kueue_fast.bench", "_case", name, engine, json.dumps(size)])
        if child.returncode != 0:
            raise RuntimeError(f"bench case {name}/{engine} failed:\n{child.err.strip()[-2000:]}")
        res: dict[str, Any] = json.loads(child.out.strip().splitlines()[-1])
        res["peak_rss_mb"] = child.peak_rss_mb
        if best is None or res["time_s"] < best["time_s"]:
            best = res
    assert best is not None
    best["runs"] = repeat
    return best


def bench(
    cases: list[str], engines: list[str], quick: bool = False, isolate: bool = True, repeat: int = 3
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for name in cases:
        if name == "e2e":
            rows.extend(bench_e2e(engines, quick=quick, repeat=repeat))
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
                res = _in_subprocess(name, engine, size, repeat)
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


# --- end to end: `kueue-fast schedule` as a user runs it ----------------------------------------------

# The inputs (generators) and their sizes: full, the reference engine's (its
# times scaled to full), and --quick's.
E2E_INPUTS = {"drain": drain_case, "long": long_drain_case}
E2E_FULL, E2E_REFERENCE, E2E_QUICK = 100_000, 10_000, 500
E2E_FORMATS = ("yaml", "json")
# Bump when the generators' output changes: cached files of another version are not used.
E2E_VERSION = 1


def e2e_cache_dir() -> str:
    """Where the e2e inputs are kept between runs: $KUEUE_FAST_BENCH_CACHE,
    else $XDG_CACHE_HOME/kueue-fast/bench (~/.cache by default), else a
    directory under the system's temporary directory."""
    import tempfile

    explicit = os.environ.get("KUEUE_FAST_BENCH_CACHE")
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    candidates = [explicit] if explicit else [os.path.join(xdg, "kueue-fast", "bench")]
    candidates.append(os.path.join(tempfile.gettempdir(), "kueue-fast-bench"))
    for d in candidates:
        try:
            os.makedirs(d, exist_ok=True)
        except OSError:
            continue
        if os.access(d, os.W_OK):
            return d
    raise RuntimeError(f"no writable cache directory among {', '.join(candidates)}")


def e2e_input_files(name: str, n_workloads: int, directory: str | None = None) -> dict[str, str]:
    """The input's manifests at n_workloads (100 per ClusterQueue, 10
    ClusterQueues per cohort) as one YAML stream and one compact JSON List,
    written once into the cache directory: {"yaml": path, "json": path}."""
    import tempfile

    directory = directory or e2e_cache_dir()
    stem = f"{name}-{n_workloads}-v{E2E_VERSION}"
    paths = {fmt: os.path.join(directory, f"{stem}.{fmt}") for fmt in E2E_FORMATS}
    if all(os.path.exists(p) for p in paths.values()):
        return paths
    # written beside, then renamed: a run interrupted halfway leaves no partial input
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        case = E2E_INPUTS[name](**drain_size(n_workloads))
        written = write_case_files(case, tmp, stem, json_indent=None)
        for fmt in E2E_FORMATS:
            os.replace(written[fmt], paths[fmt])
    return paths


def _stats_line(err: str) -> dict[str, Any]:
    for line in reversed(err.strip().splitlines()):
        if line.startswith("{"):
            stats: dict[str, Any] = json.loads(line)
            return stats
    raise RuntimeError(f"no --stats line in the output:\n{err.strip()[-2000:]}")


def run_schedule_e2e(path: str, engine: str, repeat: int = 3) -> dict[str, Any]:
    """``kueue-fast schedule PATH --until-stable -o json --stats`` in a fresh
    process, best of `repeat` (wall time, process start to exit): the
    split from --stats, the rest (interpreter start, imports, exit) as
    ``other_s``, peak RSS from the child's rusage."""
    cmd = [sys.executable, "-m", "kueue_fast", "schedule", path, "--until-stable", "-o", "json", "--stats"]
    cmd += ["--engine", engine]
    best: dict[str, Any] | None = None
    for _ in range(repeat):
        child = run_child(cmd, keep_stdout=False)
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed ({child.returncode}):\n{child.err.strip()[-2000:]}")
        st = _stats_line(child.err)
        res = {
            "engine": st["engine"],
            "wall_s": child.wall_s,
            "parse_s": st["parse_s"],
            "build_s": st["build_s"],
            "schedule_s": st["schedule_s"],
            "output_s": st["output_s"],
            "other_s": max(
                0.0, child.wall_s - st["parse_s"] - st["build_s"] - st["schedule_s"] - st["output_s"]
            ),
            "peak_rss_mb": child.peak_rss_mb,
            "cycles": st["cycles"],
            "admitted": st["admitted"],
            "workloads": st["workloads"],
        }
        if best is None or res["wall_s"] < best["wall_s"]:
            best = res
    assert best is not None
    best["runs"] = repeat
    return best


E2E_PARTS = ("parse_s", "build_s", "schedule_s", "output_s")


def bench_e2e(engines: list[str], quick: bool = False, repeat: int = 3) -> list[dict[str, Any]]:
    """Every e2e input in every format, per engine: one row per (input, format)."""
    rows: list[dict[str, Any]] = []
    for name in E2E_INPUTS:
        for fmt in E2E_FORMATS:
            row: dict[str, Any] = {"case": "e2e", "input": name, "format": fmt}
            for engine in engines:
                n = E2E_QUICK if quick else E2E_REFERENCE if engine == "reference" else E2E_FULL
                full = E2E_QUICK if quick else E2E_FULL
                path = e2e_input_files(name, n)[fmt]
                res = run_schedule_e2e(path, engine, repeat)
                res["bytes"] = os.path.getsize(path)
                res["scale"] = full / n
                # what grows with the workloads scales; process start and exit do not
                res["wall_full_s"] = res["other_s"] + sum(res[k] for k in E2E_PARTS) * res["scale"]
                row[engine] = res
            if "native" in row and "reference" in row:
                nat, ref = row["native"], row["reference"]
                row["ratio"] = ref["wall_full_s"] / max(nat["wall_s"], 1e-9)
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


# --- CLI ----------------------------------------------------------------------------------------------


def run_bench(args: argparse.Namespace) -> int:
    cases = list(args.cases) or list(FULL)
    for c in cases:
        if c not in CASES:
            from .errors import InputError

            raise InputError("", "CASE", f"unknown case {c!r}: expected one of {', '.join(CASES)}")
    engines = list(ENGINES) if args.engine == "both" else [args.engine]
    if "native" in engines and not native_available():
        if args.engine == "native":
            from .errors import EngineError

            raise EngineError("the native engine is not available in this installation")
        engines.remove("native")
    if args.repeat < 1:
        from .errors import InputError

        raise InputError("", "--repeat", f"must be at least 1, got {args.repeat}")
    rows = bench(cases, engines, quick=args.quick, isolate=not args.in_process, repeat=args.repeat)
    if args.json:
        sys.stdout.write(json.dumps({"results": rows}, indent=1, default=str) + "\n")
        return 0
    e2e = [r for r in rows if r["case"] == "e2e"]
    others = [r for r in rows if r["case"] != "e2e"]
    if others:
        sys.stdout.write(format_table(others))
    if e2e:
        sys.stdout.write(("\n" if others else "") + format_e2e_table(e2e))
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
