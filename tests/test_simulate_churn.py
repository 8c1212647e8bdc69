"""Preemption churn in the simulator: a preemption storm in four workloads.

The product cohort of a GPU cluster: ClusterQueue ``inference-batch``
(16 GPUs, withinClusterQueue LowerPriority, reclaimWithinCohort Any,
borrowWithinCohort LowerPriority up to priority 1000) and ``eval`` (8 GPUs,
may borrow 8 more, preempts nothing). Four workloads keep going round, as
they would in Kueue:

* P (inference-batch, priority 1000, 16 GPUs) preempts L (inference-batch,
  priority 100, 4 GPUs): withinClusterQueue LowerPriority;
* when L's pods are gone, E (eval, priority 10000, 16 GPUs) and P both need
  to borrow for the freed quota; Kueue's cycle takes the higher priority
  first (scheduler.go makeClassicalIterator) and admits E, P no longer fits;
* L, back in its queue and within inference-batch's nominal quota, reclaims
  from E, which borrows: reclaimWithinCohort Any ignores E's priority;
* when E's pods are gone, L fits again, and P preempts it again.

B (inference-batch, priority 10000, 8 GPUs) makes P borrow, so P can take
nothing from E (borrowWithinCohort only reaches priority 1000).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kueue_fast.engine.select import native_available
from kueue_fast.loader import build_state
from kueue_fast.simulate import event_loop as loop
from kueue_fast.simulate.event_loop import Progress, simulate
from kueue_fast.simulate.metrics import compute
from kueue_fast.simulate.report import churn_lines
from kueue_fast.simulate.trace_files import parse_csv

ENGINES = ["reference"] + (["native"] if native_available() else [])
NS = 1_000_000_000
START = 1_700_000_000 * NS
API = "kueue.x-k8s.io/v1beta2"
GPU = "nvidia.com/gpu"

STORM = (
    "arrival,namespace,queue,name,priority,duration,count,nvidia.com/gpu\n"
    "0,inference,default,B,10000,90000,8,1\n"
    "0,inference,default,L,100,90000,4,1\n"
    "0,eval,default,E,10000,90000,16,1\n"
    "1,inference,default,P,1000,90000,16,1\n"
)


def product_cohort(eval_borrowing_limit: int = 8) -> list[dict[str, Any]]:
    def cq(
        name: str, nominal: int, extra: dict[str, Any], preemption: dict[str, Any] | None
    ) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "cohortName": "product",
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": [GPU],
                    "flavors": [
                        {"name": "a100", "resources": [{"name": GPU, "nominalQuota": nominal, **extra}]}
                    ],
                }
            ],
        }
        if preemption:
            spec["preemption"] = preemption
        return {"apiVersion": API, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}

    def lq(ns: str, cq_name: str) -> dict[str, Any]:
        return {
            "apiVersion": API,
            "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": ns},
            "spec": {"clusterQueue": cq_name},
        }

    return [
        {"apiVersion": API, "kind": "ResourceFlavor", "metadata": {"name": "a100"}},
        cq(
            "inference-batch",
            16,
            {},
            {
                "withinClusterQueue": "LowerPriority",
                "reclaimWithinCohort": "Any",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 1000},
            },
        ),
        cq("eval", 8, {"borrowingLimit": eval_borrowing_limit}, None),
        lq("inference", "inference-batch"),
        lq("eval", "eval"),
    ]


def run(engine: str, delay_s: int = 30, until_s: int = 600, limit: int = 8, **kw: Any):  # type: ignore[no-untyped-def]
    result = simulate(
        build_state(product_cohort(limit)),
        parse_csv(STORM),
        engine=engine,
        start_ns=START,
        until_ns=START + until_s * NS,
        termination_delay_ns=delay_s * NS,
        bins=10,
        **kw,
    )
    return result, compute(result)


def secs(a: np.ndarray[Any, Any]) -> list[int]:
    return [int((t - START) // NS) for t in a.tolist() if t >= 0]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_storm_goes_round_at_the_pace_of_pod_termination(engine: str) -> None:
    result, m = run(engine)
    wl = result.workloads
    B, L, E, P = range(4)
    assert result.unsettled == 0, "with a termination delay every instant settles"
    # E is admitted and reclaimed by L every 60 s; L admitted and preempted by P 30 s later
    assert secs(wl.admitted_at[E]) == [0, 60, 120, 180]
    assert secs(wl.admitted_at[L]) == [30, 90, 150, 210]
    assert wl.evictions[E] == 11 and wl.evictions[L] == 10  # 0, 60, ..., 600 and 30, ..., 570
    assert wl.admissions[P] == 0 and wl.admissions[B] == 1 and wl.evictions[B] == 0
    assert wl.preempted_by[E] == L and wl.preempted_by[L] == P
    # who preempts whom, and the policy that allows it
    churn = m.churn
    assert churn.churning == 2
    assert [w["workload"] for w in churn.workloads] == ["eval/E", "inference/L"]
    pairs = {(p["preemptor_cluster_queue"], p["victim_cluster_queue"], p["reason"]): p for p in churn.pairs}
    assert set(pairs) == {
        ("inference-batch", "eval", "InCohortReclamation"),
        ("inference-batch", "inference-batch", "InClusterQueue"),
    }
    assert "reclaimWithinCohort: Any" in pairs[("inference-batch", "eval", "InCohortReclamation")]["policy"]
    assert (
        "withinClusterQueue: LowerPriority"
        in pairs[("inference-batch", "inference-batch", "InClusterQueue")]["policy"]
    )
    assert churn.cluster_queues == ["eval", "inference-batch"] and churn.cohorts == ["product"]
    # pending over time, past the admissions and evictions each record keeps:
    # E waits [30, 60), [90, 120), ... [570, 600); L [0, 30), [60, 90), ... [540, 570); P throughout
    width = np.diff(m.series.edges_s)
    waited = {q: float((m.series.pending[q] * width).sum()) for q in ("eval", "inference-batch")}
    assert waited == pytest.approx({"eval": 10 * 30.0, "inference-batch": 30.0 + 9 * 30.0 + 599.0})
    text = "\n".join(churn_lines(churn))
    assert "eval/E (eval) 11 times" in text and "reclaimWithinCohort: Any" in text


@pytest.mark.parametrize("engine", ENGINES)
def test_a_borrowing_limit_that_cannot_hold_the_job_ends_the_storm(engine: str) -> None:
    """The issue's 8 -> 4: E (16 GPUs) never fits in eval's 8 + 4, so nobody reclaims."""
    result, m = run(engine, limit=4)
    assert result.workloads.evictions.tolist() == [0, 1, 0, 0]  # P preempts L once, and runs
    assert not m.churn


def test_both_engines_make_the_same_storm() -> None:
    if len(ENGINES) < 2:
        pytest.skip("native engine not built")
    a, _ = run("reference")
    b, _ = run("native")
    for name in ("admitted_at", "evicted_at", "state", "wait_ns", "preempted_by", "usage"):
        np.testing.assert_array_equal(getattr(a.workloads, name), getattr(b.workloads, name), err_msg=name)
    assert a.churn.pairs == b.churn.pairs


@pytest.mark.parametrize("engine", ENGINES)
def test_without_a_termination_delay_the_instant_never_settles_and_the_report_says_why(engine: str) -> None:
    """Quota released at the end of the cycle (the offline rule): the storm
    runs inside one instant until the cycle limit; the per-ClusterQueue
    preemptions still add up to the total (admissions undone within the
    instant count under their ClusterQueue)."""
    result, m = run(engine, delay_s=0, max_cycles=60)
    assert result.unsettled >= 1
    assert sum(q.preemptions for q in m.queues) == m.totals["preemptions"] > 20
    assert {q.name: q.preemptions for q in m.queues}["eval"] > 10
    first = m.churn.unsettled_instants[0]
    assert first["time_s"] in (0, 1) and first["cycles"] == 60
    assert {v["workload"] for v in first["victims"]} >= {"eval/E", "inference/L"}
    reasons = {(p["preemptor_cluster_queue"], p["victim_cluster_queue"], p["reason"]) for p in first["pairs"]}
    assert ("inference-batch", "eval", "InCohortReclamation") in reasons
    assert any("did not settle" in line for line in churn_lines(m.churn))


@pytest.mark.parametrize("engine", ENGINES)
def test_memory_does_not_grow_with_churn(engine: str) -> None:
    """Ten times the cycles of churn, ten times the preemptions: the run keeps
    exactly as many bytes (per-workload records and fixed time bins)."""

    def kept_bytes(result: loop.SimResult) -> int:
        arrays = [
            *vars(result.workloads).values(),
            result.timeline.usage.integral,
            result.timeline.pending.steps,
            result.timeline.pending.moments,
        ]
        arrays.append(result.timeline.preemptions.counts)
        return sum(a.nbytes for a in arrays) + len(result.churn.pairs) + len(result.messages)

    small, ms = run(engine, delay_s=0, max_cycles=20)
    big, mb = run(engine, delay_s=0, max_cycles=200)
    assert mb.totals["preemptions"] > 5 * ms.totals["preemptions"]
    assert kept_bytes(big) == kept_bytes(small)


def test_the_progress_bar_moves_inside_a_long_instant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(loop, "INSTANT_SLICE", 10)
    monkeypatch.setattr(loop, "PROGRESS_INTERVAL_S", 0.0)
    seen: list[Progress] = []
    run(ENGINES[-1], delay_s=0, max_cycles=100, progress=seen.append)
    inside = [p.instant_cycles for p in seen if p.instant_cycles]
    assert inside[:3] == [10, 20, 30]
    assert seen[-1].instant_cycles == 0 and seen[-1].preemptions > 0


def test_drain_gives_up_when_churn_never_lets_the_workloads_finish(monkeypatch: pytest.MonkeyPatch) -> None:
    """E and L never run 90000 s uninterrupted: --drain stops DRAIN_LIMIT_NS
    after the last arrival and says so."""
    monkeypatch.setattr(loop, "DRAIN_LIMIT_NS", 900 * NS)
    result = simulate(
        build_state(product_cohort()),
        parse_csv(STORM),
        engine=ENGINES[-1],
        start_ns=START,
        drain=True,
        bins=10,
    )
    assert result.drain_limited
    assert (result.end_ns - START) // NS <= 901
    assert compute(result).totals["finished"] == 0
