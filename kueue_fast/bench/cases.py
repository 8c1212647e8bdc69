"""The ``drain``, ``preemption``, ``simulate`` and ``load`` cases: their
sizes (full, the reference engine's, --quick's) and how one runs, in this
process (``run_case``) or in a fresh one (``run_in_subprocess``)."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from .child import run_child
from .inputs import BASE_NS, NS, Case, drain_case, preemption_case, write_load_files


def _engine_for(case: Case, engine: str) -> tuple[Any, Any, Any]:
    """(engine, topology, batch) with the case's workloads added: the
    admitted ones (with their admission) and the pending ones."""
    from ..engine.inputs import AdmissionSpec, compile_topology
    from ..engine.workloads import WorkloadCompiler
    from ..loader import build_state
    from ..simulate.batch import batch_from_trace
    from ..simulate.engine_view import make_sim_engine

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


def _run_load(engine: str, size: dict[str, int]) -> dict[str, Any]:
    """Each file: read+parse, build_state, Cluster construction (compile and
    add every workload to the engine), timed apart."""
    import gc
    import tempfile

    from ..cluster.cluster import Cluster
    from ..loader import build_state, read_documents

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

    from ..commands.simulate import run

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


FULL = {
    "drain": {"n_cq": 1000, "n_cohorts": 100, "n_workloads": 100_000},
    "preemption": {"n_cq": 100, "n_admitted": 10_000, "n_arrivals": 1000},
    "simulate": {"n": 100_000},
}
# Cases run only when named (not part of the default set).
EXTRA = {
    "load": {"n_workloads": 100_000},
    "e2e": {"n_workloads": 100_000},
    "e2e-1m": {"n_workloads": 1_000_000},
    "kueue-perf": {},
}
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


def run_in_subprocess(name: str, engine: str, size: dict[str, int], repeat: int = 1) -> dict[str, Any]:
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
