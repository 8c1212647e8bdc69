"""Proof that the simulator decides as ``kueue-fast schedule`` does.

At random instants of a simulation, the state of the cluster just before
that instant's cycles (the ClusterQueues' configuration, the workloads
holding quota with their ClusterQueue, flavors and admission time, the
pending ones with their priority and creation time) is written as the
Workload manifests Kueue would hold; ``kueue-fast schedule --until-stable``
on them must admit exactly the workloads the simulator holds admitted once
the instant settled, with the same ClusterQueue, flavors and counts. The
cluster has nested cohorts with a cohort-owned pool, borrowing and lending
limits, several flavors per resource group, StrictFIFO and BestEffortFIFO,
and every kind of classical preemption.

What "the state of an instant" must hold to be exact:

* With ``--termination-delay 0`` a preempted workload gives its quota back at
  the end of the cycle (the offline rule of ``schedule``), so no workload is
  between admitted and pending at the start of an instant.
* Kueue keeps some state only in memory, which no manifest can carry: the
  workloads a BestEffortFIFO ClusterQueue set aside as inadmissible until
  quota is released in their cohort tree, the "sticky" preemptor, and the
  flavor a pending workload's next flavor scan resumes from
  (LastAssignment). A restarted Kueue (and ``schedule``) starts with none;
  the instants compared are drawn among those where the simulator has none
  either (seen on the reference engine, which shows all three; most
  instants qualify without a termination delay, about half with one).
* The simulator runs the cycles of an instant at its time; ``schedule``
  runs them one second apart. Kueue preempts the most recently admitted
  candidates first, so where a workload admitted in one cycle is a
  candidate in a later cycle of the same instant the two clocks can choose
  differently (rarely: none in the CI runs). The engine behind
  ``schedule`` (``Cluster``) run at the simulator's clock must agree at
  every instant; ``schedule`` itself too, or else with that engine run at
  its own clock.
* With a termination delay, workloads whose pods are still stopping hold
  quota: the manifests carry them as Kueue does (``status.admission`` kept,
  ``Evicted=True``), and the controller's engine (``Cluster`` with
  ``release_evictions=False``, as ``kueue-fast controller`` runs it)
  decides on them; ``schedule``'s offline rule releases quota at once and so
  answers another question.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from hypothesis import settings

from kueue_fast import Cluster
from kueue_fast.api.quantity import format_quantity
from kueue_fast.commands.cli import main
from kueue_fast.engine.contract import STATE_ADMITTED
from kueue_fast.engine.reference.scheduler import ReferenceEngine
from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate import event_loop as loop
from kueue_fast.simulate.result import EVICTING, FINISHED, SimResult
from kueue_fast.simulate.trace_files import parse_csv

NS = 1_000_000_000
START = 1_736_121_600 * NS  # Monday 2025-01-06 00:00 UTC
SCALE = max(1, settings.default.max_examples // 100)
# the engines that can run here (the native one once built)
ENGINES = ["reference"] + (["native"] if native_available() else [])
V1B1 = "kueue.x-k8s.io/v1beta1"


# --- the cluster -------------------------------------------------------------------------------------


def _res(name: str, nominal: str, borrow: str | None = None, lend: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "nominalQuota": nominal}
    if borrow is not None:
        out["borrowingLimit"] = borrow
    if lend is not None:
        out["lendingLimit"] = lend
    return out


def _flavor(name: str, *resources: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "resources": list(resources)}


def _cq(
    name: str, cohort: str, groups: list[tuple[list[str], list[dict[str, Any]]]], **spec: Any
) -> dict[str, Any]:
    body = {
        "namespaceSelector": {},
        "cohort": cohort,
        "resourceGroups": [{"coveredResources": covered, "flavors": flavors} for covered, flavors in groups],
        **spec,
    }
    return {"apiVersion": V1B1, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": body}


CPU_MEM = ["cpu", "memory"]
GPU = ["nvidia.com/gpu"]
# (namespace, LocalQueue, ClusterQueue): "analytics" has two namespaces
LOCAL_QUEUES = [
    ("llm", "q", "llm"),
    ("vision", "q", "vision"),
    ("etl", "q", "etl"),
    ("bi", "q", "analytics"),
    ("finance", "q", "analytics"),
    ("ci", "q", "ci"),
]


def cluster_objects() -> list[dict[str, Any]]:
    """Cohort ``org`` (a pool of spot cpu of its own) over ``research`` (llm,
    vision) and ``platform`` (etl, analytics, ci). Flavors are tried in
    order; llm and etl list two per group."""
    flavors = ["on-demand", "spot", "a100", "h100"]
    objs: list[dict[str, Any]] = [
        {"apiVersion": V1B1, "kind": "ResourceFlavor", "metadata": {"name": f}} for f in flavors
    ]
    objs += [
        {
            "apiVersion": V1B1,
            "kind": "Cohort",
            "metadata": {"name": "org"},
            "spec": {
                "resourceGroups": [
                    {
                        "coveredResources": CPU_MEM,
                        "flavors": [_flavor("spot", _res("cpu", "8"), _res("memory", "32Gi"))],
                    }
                ]
            },
        },
        *(
            {"apiVersion": V1B1, "kind": "Cohort", "metadata": {"name": n}, "spec": {"parentName": "org"}}
            for n in ("research", "platform")
        ),
        _cq(
            "llm",
            "research",
            [
                (
                    CPU_MEM,
                    [
                        _flavor("on-demand", _res("cpu", "16"), _res("memory", "64Gi")),
                        _flavor("spot", _res("cpu", "4"), _res("memory", "16Gi")),
                    ],
                ),
                (
                    GPU,
                    [
                        _flavor("a100", _res("nvidia.com/gpu", "8", borrow="4")),
                        _flavor("h100", _res("nvidia.com/gpu", "4")),
                    ],
                ),
            ],
            preemption={
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            },
        ),
        _cq(
            "vision",
            "research",
            [
                (CPU_MEM, [_flavor("on-demand", _res("cpu", "8"), _res("memory", "32Gi"))]),
                (GPU, [_flavor("a100", _res("nvidia.com/gpu", "4", lend="2"))]),
            ],
            preemption={
                "withinClusterQueue": "LowerOrNewerEqualPriority",
                "reclaimWithinCohort": "LowerPriority",
            },
        ),
        _cq(
            "etl",
            "platform",
            [
                (
                    CPU_MEM,
                    [
                        _flavor("spot", _res("cpu", "8", borrow="8"), _res("memory", "32Gi")),
                        _flavor("on-demand", _res("cpu", "4"), _res("memory", "16Gi")),
                    ],
                ),
            ],
            preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "LowerPriority"},
            flavorFungibility={"whenCanBorrow": "TryNextFlavor"},
        ),
        _cq(
            "analytics",
            "platform",
            [(CPU_MEM, [_flavor("on-demand", _res("cpu", "8", lend="4"), _res("memory", "32Gi"))])],
            preemption={"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Never"},
        ),
        _cq(
            "ci",
            "platform",
            [(CPU_MEM, [_flavor("on-demand", _res("cpu", "4", borrow="2"), _res("memory", "16Gi"))])],
            queueingStrategy="StrictFIFO",
        ),
    ]
    objs += [
        {
            "apiVersion": V1B1,
            "kind": "LocalQueue",
            "metadata": {"name": q, "namespace": ns},
            "spec": {"clusterQueue": c},
        }
        for ns, q, c in LOCAL_QUEUES
    ]
    return objs


# per namespace: arrivals per hour, and shapes (pods, cpu, memory, gpus per pod,
# mean run time s, weight). Each ClusterQueue is offered 0.8-0.95 of its
# nominal quota on its scarcest resource: queues form, cohorts lend and
# reclaim, priorities preempt.
SHAPES: dict[str, tuple[float, list[tuple[int, str, str, int, float, float]]]] = {
    "llm": (3, [(1, "1", "4Gi", 1, 1800, 4), (2, "2", "8Gi", 2, 3600, 2), (1, "4", "16Gi", 4, 5400, 1)]),
    "vision": (5, [(1, "2", "8Gi", 1, 1200, 3), (2, "2", "8Gi", 1, 2400, 1)]),
    "etl": (6, [(4, "1", "4Gi", 0, 900, 3), (8, "1", "4Gi", 0, 1800, 1)]),
    "bi": (6, [(1, "2", "8Gi", 0, 600, 2), (2, "2", "8Gi", 0, 1200, 1)]),
    "finance": (3, [(1, "4", "16Gi", 0, 900, 1)]),
    "ci": (20, [(1, "1", "2Gi", 0, 300, 4), (3, "1", "2Gi", 0, 600, 1)]),
}
PRIORITIES = (0, 100, 1000)


def trace_csv(seed: int, hours: float) -> str:
    """Poisson arrivals per LocalQueue over ``hours``, shapes drawn by
    weight, exponential run times, priorities uniform; times in ms."""
    rng = np.random.default_rng(seed)
    rows = []
    for ns, q, _ in LOCAL_QUEUES:
        rate, shapes = SHAPES[ns]
        w = np.array([s[5] for s in shapes])
        arrivals = np.sort(rng.uniform(0, hours * 3600, rng.poisson(rate * hours)))
        for k, t in enumerate(arrivals.tolist()):
            pods, cpu, mem, gpu, mean, _ = shapes[int(rng.choice(len(shapes), p=w / w.sum()))]
            run = max(1.0, round(float(rng.exponential(mean)), 3))
            prio = int(rng.choice(PRIORITIES))
            rows.append((round(t, 3), f"{ns},{q},{ns}-{k:05d},{prio},{run},{pods},{cpu},{mem},{gpu or ''}"))
    rows.sort(key=lambda r: r[0])
    head = "arrival,namespace,queue,name,priority,duration,count,cpu,memory,nvidia.com/gpu"
    return "\n".join([head, *(f"{t},{rest}" for t, rest in rows)]) + "\n"


# --- the state of an instant as manifests ------------------------------------------------------------


def rfc3339(ns: int) -> str:
    """metav1.Time with nanoseconds (Kueue writes them with seconds; the
    simulator's clock has nanoseconds, and ordering needs them all)."""
    secs, frac = divmod(ns, NS)
    return np.datetime_as_string(np.datetime64(secs, "s"), unit="s") + f".{frac:09d}Z"


@dataclass
class Instant:
    t_ns: int
    index: int
    manifests: list[dict[str, Any]]  # the cluster's objects and its Workloads before the cycles
    evicting: list[str]  # keys of workloads whose pods are still stopping (they hold quota)
    admitted: dict[str, Any]  # after the cycles: key -> (ClusterQueue, pod sets)

    def __str__(self) -> str:
        return f"instant {self.index} (t={(self.t_ns - START) / NS} s)"


def _admitted(run: loop._Run) -> dict[str, Any]:
    """Workloads holding quota and not being evicted: key -> (ClusterQueue, [(pod set, count, flavors)])."""
    eng = run.sim.engine
    state, _, _ = eng.decisions()
    wids = np.flatnonzero(state == STATE_ADMITTED).tolist()
    index, shapes = eng.admitted_shapes(wids)
    topo = run.topo
    out = {}
    for w, k in zip(wids, index.tolist(), strict=True):
        cq, pod_sets = shapes[k]
        out[run.key_of(w)] = (
            topo.cluster_queues[cq].name,
            sorted(
                (ps, n, {topo.resource_names[r]: topo.flavor_names[f] for r, f in rf})
                for ps, n, rf in pod_sets
            ),
        )
    return out


def _workload(run: loop._Run, w: int) -> dict[str, Any]:
    """Workload w as Kueue holds it: spec and, when it holds quota, status.admission."""
    eng, topo = run.sim.engine, run.topo
    spec = eng.spec(w)
    trace, m = run.trace, run.m
    queue = trace.queues[int(trace.queue[w - m])]
    pod_sets = []
    for ps in spec.pod_sets:
        requests = {
            topo.resource_names[r]: format_quantity(topo.resource_names[r], v) for r, v in ps.requests
        }
        template = {"spec": {"containers": [{"name": "main", "resources": {"requests": requests}}]}}
        pod_sets.append({"name": ps.name, "count": ps.count, "template": template})
    obj: dict[str, Any] = {
        "apiVersion": V1B1,
        "kind": "Workload",
        "metadata": {
            "name": spec.name,
            "namespace": spec.namespace,
            "creationTimestamp": rfc3339(spec.queue_ts),
        },
        "spec": {"queueName": queue, "priority": spec.priority, "podSets": pod_sets},
    }
    view = eng.workload_view(w)
    if not view.holds_quota:
        return obj
    per_pod = {ps.name: dict(ps.requests) for ps in spec.pod_sets}
    assignments = []
    for (count, flavors), ps in zip(view.pod_sets, spec.pod_sets, strict=True):
        assignments.append(
            {
                "name": ps.name,
                "count": count,
                "flavors": {topo.resource_names[r]: topo.flavor_names[f] for r, f in flavors.items()},
                "resourceUsage": {
                    topo.resource_names[r]: format_quantity(topo.resource_names[r], v * count)
                    for r, v in per_pod[ps.name].items()
                },
            }
        )
    cq = topo.cluster_queues[view.admitted_cq].name
    at = rfc3339(view.admission_time)
    conditions = [
        {
            "type": "QuotaReserved",
            "status": "True",
            "reason": "QuotaReserved",
            "message": f"Quota reserved in ClusterQueue {cq}",
            "lastTransitionTime": at,
        },
        {
            "type": "Admitted",
            "status": "True",
            "reason": "Admitted",
            "message": "The workload is admitted",
            "lastTransitionTime": at,
        },
    ]
    if run.state_of[w] == EVICTING:
        conditions.append(
            {
                "type": "Evicted",
                "status": "True",
                "reason": "Preempted",
                "message": view.eviction_message or "Preempted",
                "lastTransitionTime": rfc3339(run.last_evi[w]),
            }
        )
    obj["status"] = {
        "admission": {"clusterQueue": cq, "podSetAssignments": assignments},
        "conditions": conditions,
    }
    return obj


def hidden_state(run: loop._Run) -> str:
    """What Kueue holds only in memory and changes what it decides:
    workloads set aside as inadmissible, a sticky preemptor that is not the
    head its queue would have anyway (cluster_queue.go: it goes first), and,
    visible in the reference engine only, a flavor scan a pending workload
    will resume rather than start over (LastAssignment: kept when recorded
    in the cycle just before, or when its ClusterQueue's generation has not
    moved since; flavorassigner.go)."""
    eng = run.sim.engine

    def order(w: int) -> tuple[int, int, str, str]:
        s = eng.spec(w)
        return (-s.priority, s.queue_ts, s.namespace, s.name)

    parts = []
    for c, name in enumerate(run.cq_names):
        active, parked, sticky = eng.queue_state(c)
        if parked:
            parts.append(f"{name}: {len(parked)} set aside")
        if sticky >= 0 and (sticky not in active or min(active, key=order) != sticky):
            parts.append(f"{name}: sticky {run.key_of(sticky)}")
        if isinstance(eng, ReferenceEngine):
            for w in active:
                last = eng.workloads[w].last_state
                kept = last is not None and (
                    last.cycle >= eng.cycle or eng.cq_generation[c] <= last.generation
                )
                if kept and any(i >= 0 for tried in last.tried for i in tried.values()):  # type: ignore[union-attr]
                    parts.append(f"{name}: {run.key_of(w)} resumes its flavor scan")
    return "; ".join(parts)


def simulate_with(
    run_class: type[loop._Run], engine: str, delay_s: float, objects: list[dict[str, Any]], trace: str
) -> SimResult:
    """loop.simulate (until every workload finished) with its run made by
    ``run_class``, a subclass of the loop's run that looks at each instant:
    the Python loop's instants (tests/test_simulate_native_loop.py checks the
    native loop against it)."""
    original, applies = loop._Run, loop.native_loop_applies
    loop._Run = run_class  # type: ignore[misc]
    loop.native_loop_applies = lambda run: False  # type: ignore[assignment]
    try:
        return loop.simulate(
            build_state(objects),
            parse_csv(trace),
            engine=engine,
            start_ns=START,
            drain=True,
            termination_delay_ns=int(delay_s * NS),
        )
    finally:
        loop._Run = original  # type: ignore[misc]
        loop.native_loop_applies = applies  # type: ignore[assignment]


@dataclass
class Observation:
    """What an observed run noted: per kind, the instants (by index) without
    hidden state, whose cycles preempted, that started with pods stopping;
    at the ``wanted`` instants, the state before and after."""

    wanted: list[int]
    eligible: list[int] = field(default_factory=list)
    with_preemptions: list[int] = field(default_factory=list)
    with_stopping: list[int] = field(default_factory=list)
    unsettled: list[int] = field(default_factory=list)
    taken: list[Instant] = field(default_factory=list)


def observe(engine: str, delay_s: float, trace: str, wanted: list[int]) -> tuple[SimResult, Observation]:
    notes = Observation(sorted(wanted))
    documents = cluster_objects()

    class Observed(loop._Run):
        def settle(self, t: int, first_slice: int) -> None:
            index = self.instants - 1
            hidden = hidden_state(self)
            if not hidden:
                notes.eligible.append(index)
            if self.releases:  # evicted workloads whose pods have not stopped yet
                notes.with_stopping.append(index)
            before = None
            if notes.wanted and index == notes.wanted[0]:
                notes.wanted.pop(0)
                assert not hidden, hidden
                live = [w for w in range(self.m + self.arrived) if self.state_of[w] != FINISHED]
                before = [_workload(self, w) for w in live]
                evicting = [self.key_of(w) for w in live if self.state_of[w] == EVICTING]
            preemptions, unsettled = self.preemptions, self.unsettled
            super().settle(t, first_slice)
            if self.preemptions > preemptions:
                notes.with_preemptions.append(index)
            if self.unsettled > unsettled:
                notes.unsettled.append(index)
            if before is not None:
                notes.taken.append(Instant(t, index, [*documents, *before], evicting, _admitted(self)))

    return simulate_with(Observed, engine, delay_s, documents, trace), notes


def instants_of(delay_s: float, trace: str, k: int, seed: int) -> tuple[list[int], int]:
    """Instants without hidden state drawn at random: k among all, k among
    those whose cycles preempted, k among those that start with pods
    stopping (if any); and how many instants had hidden state. Chosen on the
    reference engine, which shows all of it (both engines hold the same
    state: test_simulate.py compares them). Instants whose cycles never
    settled (preemption churn: the simulator moved on after
    --max-cycles-per-instant, ``schedule --until-stable`` gives up too) are
    left out."""
    result, first = observe("reference", delay_s, trace, [])
    rng = np.random.default_rng(seed)
    wanted: set[int] = set()
    comparable = set(first.eligible) - set(first.unsettled)
    for pool in (first.eligible, first.with_preemptions, first.with_stopping):
        choices = sorted(comparable & set(pool))
        if choices:
            wanted.update(rng.choice(choices, size=k, replace=False).tolist())
    return sorted(wanted), result.instants - len(first.eligible)


def admitted_by_schedule(
    tmp: Path, manifests: list[dict[str, Any]], engine: str, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    path = tmp / "state.yaml"
    path.write_text(yaml.safe_dump_all(manifests))
    capsys.readouterr()
    code = main(["schedule", str(path), "--until-stable", "--engine", engine, "-o", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    doc = json.loads(out)
    return {
        f"{w['namespace']}/{w['name']}": (
            w["clusterQueue"],
            sorted((ps["name"], ps["count"], ps["flavors"]) for ps in w["podSets"]),
        )
        for w in doc["workloads"]
        if w["state"] == "admitted"
    }


def admitted_by_cluster(
    manifests: list[dict[str, Any]], evicting: list[str], engine: str, now_ns: int | None, release: bool
) -> dict[str, Any]:
    """What the engine behind ``schedule`` (``Cluster``) decides on those
    manifests, its cycles until one changes nothing at ``now_ns`` (None: one
    second apart, as ``schedule`` runs them). ``release`` False: victims keep
    their quota until their pods are gone, as ``kueue-fast controller`` runs
    the engine, and the ``evicting`` Workloads (Evicted=True, an admission)
    are such victims."""
    cluster = Cluster.from_objects(manifests, engine, release_evictions=release)
    stopping = set(evicting)
    for key in evicting:
        cluster.evict(key, "Preempted", "pods still stopping")
    # a preemptor waiting for its victims names them again every cycle: no
    # change (Cluster.run_until_stable counts it as one, and with victims
    # that keep their quota never returns then)
    for _ in range(10_000):
        cycle = cluster.run_cycle(now_ns)
        fresh = [k for k in cycle.preempted if k not in stopping]
        if not release:
            stopping.update(fresh)
        if not (cycle.admitted or fresh or cycle.evicted or cycle.newly_parked):
            break
    else:
        raise AssertionError("the cycles did not settle")
    return {
        d.key: (d.cluster_queue, sorted((ps.name, ps.count, dict(ps.flavors)) for ps in d.pod_sets))
        for d in cluster.decisions()
        if d.state == "admitted"
    }


def diff(sim: dict[str, Any], other: dict[str, Any]) -> str:
    lines = []
    for key in sorted(set(sim) | set(other)):
        if sim.get(key) != other.get(key):
            lines.append(f"  {key}: simulator {sim.get(key)}, other {other.get(key)}")
    return "\n".join(lines[:20])


# --- the tests --------------------------------------------------------------------------------------


def test_at_random_instants_the_admitted_set_is_what_schedule_decides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a termination delay. The simulator runs an instant's cycles
    at its time, ``schedule`` one second apart: a workload admitted in a
    later cycle counts as admitted later, and Kueue takes the most recently
    admitted candidates first when it preempts. So the engine behind
    ``schedule``, run on the manifests at the simulator's clock, must give
    the simulator's answer at every instant, and ``schedule`` itself the
    same unless that clock decides (then the engine at schedule's clock
    gives schedule's answer)."""
    trace = trace_csv(seed=3, hours=24 * SCALE)
    wanted, _ = instants_of(0, trace, k=8 * SCALE, seed=1)
    assert len(wanted) >= 12 * SCALE  # draws that land on one instant count once
    admitted = {}
    for engine in ENGINES:
        result, notes = observe(engine, 0, trace, wanted)
        assert [inst.index for inst in notes.taken] == wanted
        assert result.preemptions_per_cq.sum() > 0
        clock_decided = 0
        for inst in notes.taken:
            at_instant = admitted_by_cluster(inst.manifests, [], engine, inst.t_ns, release=True)
            assert at_instant == inst.admitted, f"{engine}, {inst}:\n{diff(inst.admitted, at_instant)}"
            got = admitted_by_schedule(tmp_path, inst.manifests, engine, capsys)
            if got != inst.admitted:
                a_second_apart = admitted_by_cluster(inst.manifests, [], engine, None, release=True)
                assert a_second_apart == got, f"{engine}, {inst}:\n{diff(a_second_apart, got)}"
                clock_decided += 1
        assert clock_decided <= len(wanted) // 10
        admitted[engine] = [inst.admitted for inst in notes.taken]
    assert len({str(a) for a in admitted.values()}) == 1  # and the engines agree


def test_with_pods_stopping_the_admitted_set_is_what_the_controller_decides() -> None:
    """A 30 s termination delay: at instants where preempted workloads still
    hold their quota, the engine run as the controller runs it (victims
    keep their quota), given the cluster as manifests and the simulator's
    clock, admits what the simulator admits."""
    trace = trace_csv(seed=4, hours=24 * SCALE)
    wanted, _ = instants_of(30, trace, k=8 * SCALE, seed=2)
    assert len(wanted) >= 12 * SCALE
    for engine in ENGINES:
        _, notes = observe(engine, 30, trace, wanted)
        assert [inst.index for inst in notes.taken] == wanted
        assert sum(bool(inst.evicting) for inst in notes.taken) >= 6 * SCALE  # pods stopping at many
        for inst in notes.taken:
            got = admitted_by_cluster(inst.manifests, inst.evicting, engine, inst.t_ns, release=False)
            assert got == inst.admitted, f"{engine}, {inst}:\n{diff(inst.admitted, got)}"
