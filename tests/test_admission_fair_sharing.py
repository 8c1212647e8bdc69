# ruff: noqa: E501  (table rows read better on long lines)
"""Admission fair sharing (AFS): LocalQueues ordered by their decaying usage history.

Kueue at ff69552e: a ClusterQueue with spec.admissionScope.admissionMode
UsageBasedAdmissionFairSharing, under a Configuration with admissionFairSharing,
orders its pending workloads by their LocalQueues' usage (history + pending entry
penalties, resource-weighted, divided by the LocalQueue's weight) before the usual
order; within such a ClusterQueue, preemption takes candidates of the busier
LocalQueue first. Every case goes through the public API (Cluster, reference
engine); where a case restates one of Kueue's own tests, ``source`` names it.
"""

from __future__ import annotations

import calendar
import time
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from kueue_fast import Cluster, _core, loader
from kueue_fast.api.errors import EngineError, ValidationError
from kueue_fast.cluster.cluster import ENGINES
from kueue_fast.engine.reference import admission_fair_sharing as afs

B2 = "kueue.x-k8s.io/v1beta2"
SECOND = 1_000_000_000
MINUTE = 60 * SECOND
NANO = 1_000_000_000  # nanos of one unit (one cpu)
T0 = calendar.timegm(time.strptime("2026-01-01T00:00:00", "%Y-%m-%dT%H:%M:%S")) * SECOND


def at(offset_s: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0 // SECOND + offset_s))


# --- object builders --------------------------------------------------------------------------


def flavor(name: str = "default") -> dict[str, Any]:
    return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": name}}


def cq(
    name: str = "cq",
    quota: dict[str, str] | None = None,
    *,
    afs: bool = True,
    cohort: str | None = None,
    strategy: str = "BestEffortFIFO",
    preemption: dict[str, str] | None = None,
) -> dict[str, Any]:
    quota = quota or {"cpu": "8"}
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "queueingStrategy": strategy,
        "resourceGroups": [
            {
                "coveredResources": list(quota),
                "flavors": [
                    {
                        "name": "default",
                        "resources": [{"name": r, "nominalQuota": q} for r, q in quota.items()],
                    }
                ],
            }
        ],
    }
    if afs:
        spec["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
    if cohort:
        spec["cohortName"] = cohort
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def lq(
    name: str,
    cluster_queue: str = "cq",
    *,
    weight: str | None = None,
    consumed: dict[str, str] | None = None,
    ns: str = "default",
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"clusterQueue": cluster_queue},
    }
    if weight is not None:
        obj["spec"]["fairSharing"] = {"weight": weight}
    if consumed is not None:
        obj["status"] = {
            "fairSharing": {
                "weightedShare": 0,
                "admissionFairSharingStatus": {"consumedResources": consumed, "lastUpdate": at(-300)},
            }
        }
    return obj


def wl(
    name: str,
    queue: str,
    requests: dict[str, str],
    *,
    created: int = 0,
    priority: int | None = None,
    admitted_to: str | None = None,
    ns: str = "default",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "queueName": queue,
        "podSets": [
            {
                "name": "main",
                "count": 1,
                "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}},
            }
        ],
    }
    if priority is not None:
        spec["priority"] = priority
    obj: dict[str, Any] = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns, "creationTimestamp": at(created)},
        "spec": spec,
    }
    if admitted_to is not None:
        obj["status"] = {
            "admission": {
                "clusterQueue": admitted_to,
                "podSetAssignments": [
                    {
                        "name": "main",
                        "count": 1,
                        "flavors": dict.fromkeys(requests, "default"),
                        "resourceUsage": requests,
                    }
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": at(created),
                },
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "",
                    "lastTransitionTime": at(created),
                },
            ],
        }
    return obj


def config(
    half_life: str = "10s",
    sampling: str = "1s",
    weights: dict[str, float] | None = None,
    *,
    fair_sharing: bool = False,
    gate: bool | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "admissionFairSharing": {"usageHalfLifeTime": half_life, "usageSamplingInterval": sampling},
    }
    if weights is not None:
        obj["admissionFairSharing"]["resourceWeights"] = weights
    if fair_sharing:
        obj["fairSharing"] = {}
    if gate is not None:
        obj["featureGates"] = {"AdmissionFairSharing": gate}
    return obj


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def cluster(objects: list[dict[str, Any]], engine: str) -> Cluster:
    return Cluster.from_objects([flavor(), *objects], engine=engine, start_time_ns=T0)


def states(c: Cluster) -> dict[str, str]:
    return {d.name: d.state for d in c.decisions()}


# --- ordering: which LocalQueue's workload is admitted first ------------------------------------


@dataclass
class OrderCase:
    objects: list[dict[str, Any]]
    cycles: int
    want: dict[str, str]  # workload name -> admitted | pending | evicted
    source: str = ""


CPU8 = {"cpu": "8"}
CPU4 = {"cpu": "4"}

ORDER_CASES = {
    "the workload of the LocalQueue with less history is admitted first, though it is newer": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "pending", "wl-b1": "admitted"},
        source="TestScheduleForAFS 'admits workload from less active localqueue'",
    ),
    "without admissionFairSharing in the Configuration, history is ignored: the older workload wins": OrderCase(
        [
            cq(),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "admitted", "wl-b1": "pending"},
        source="TestScheduleForAFS 'without AFS: classic admission decision ignores queue usage'",
    ),
    "with the AdmissionFairSharing feature gate off, history is ignored": OrderCase(
        [
            config(gate=False),
            cq(),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "admitted", "wl-b1": "pending"},
        source="TestScheduleForAFS 'without AFS: classic admission decision ignores queue usage'",
    ),
    "a ClusterQueue that does not opt in (no UsageBasedAdmissionFairSharing) ignores history": OrderCase(
        [
            config(),
            cq(afs=False),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "admitted", "wl-b1": "pending"},
        source="admissionfairsharing.ResourceWeights: AFS needs the config and the ClusterQueue's admission mode",
    ),
    "a LocalQueue of weight 0 goes last even while idle (infinite usage, not 0/0)": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", weight="1", consumed={"cpu": "0"}),
            lq("lq-zero", weight="0", consumed={"cpu": "0"}),
            wl("wl-z1", "lq-zero", CPU8, created=0),
            wl("wl-a1", "lq-a", CPU8, created=1),
        ],
        1,
        {"wl-a1": "admitted", "wl-z1": "pending"},
        source="TestScheduleForAFS 'does not prioritize a zero-weight localqueue' (kueue#13481)",
    ),
    "a LocalQueue without persisted history starts from zero and goes first": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b"),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "pending", "wl-b1": "admitted"},
        source="TestScheduleForAFS 'admits workload from lq-b with uninitialized cache'",
    ),
    "with equal history the usual order decides and everything that fits is admitted": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", consumed={"cpu": "2"}),
            lq("lq-b", consumed={"cpu": "2"}),
            lq("lq-c", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU4),
            wl("wl-b1", "lq-b", {"cpu": "3"}),
            wl("wl-c1", "lq-c", {"cpu": "1"}),
        ],
        3,
        {"wl-a1": "admitted", "wl-b1": "admitted", "wl-c1": "admitted"},
        source="TestScheduleForAFS 'schedules normally when queues have equal usage'",
    ),
    "the entry penalty of an admission sends the next turn to the other LocalQueue": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", consumed={"cpu": "4"}),
            lq("lq-b", consumed={"cpu": "4"}),
            wl("wl-a1", "lq-a", CPU4, created=0),
            wl("wl-a2", "lq-a", CPU4, created=1),
            wl("wl-b1", "lq-b", CPU4, created=2),
            wl("wl-b2", "lq-b", CPU4, created=3),
        ],
        4,
        {"wl-a1": "admitted", "wl-b1": "admitted", "wl-a2": "pending", "wl-b2": "pending"},
        source="TestScheduleForAFS 'admits one workload from each localqueue when quota is limited'",
    ),
    "the same without sampling in between: the penalty alone flips the order": OrderCase(
        [
            config(sampling="5m"),
            cq(),
            lq("lq-a", consumed={"cpu": "4"}),
            lq("lq-b", consumed={"cpu": "4"}),
            wl("wl-a1", "lq-a", CPU4, created=0),
            wl("wl-a2", "lq-a", CPU4, created=1),
            wl("wl-b1", "lq-b", CPU4, created=2),
            wl("wl-b2", "lq-b", CPU4, created=3),
        ],
        2,
        {"wl-a1": "admitted", "wl-b1": "admitted", "wl-a2": "pending", "wl-b2": "pending"},
        source="TestScheduleForAFS 'admits one workload from each localqueue when quota is limited'",
    ),
    "without admission fair sharing the same queue admits its two oldest workloads": OrderCase(
        [
            cq(),
            lq("lq-a", consumed={"cpu": "4"}),
            lq("lq-b", consumed={"cpu": "4"}),
            wl("wl-a1", "lq-a", CPU4, created=0),
            wl("wl-a2", "lq-a", CPU4, created=1),
            wl("wl-b1", "lq-b", CPU4, created=2),
            wl("wl-b2", "lq-b", CPU4, created=3),
        ],
        2,
        {"wl-a1": "admitted", "wl-a2": "admitted", "wl-b1": "pending", "wl-b2": "pending"},
    ),
    "LocalQueue usage comes before priority": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, priority=100),
            wl("wl-b1", "lq-b", CPU8, priority=0),
        ],
        1,
        {"wl-a1": "pending", "wl-b1": "admitted"},
        source="cluster_queue.go queueOrderingFunc: LocalQueue usage, then baseCompareFunc",
    ),
    "a LocalQueue's weight divides its usage: twice the history at four times the weight goes first": OrderCase(
        [
            config(),
            cq(),
            lq("lq-a", weight="4", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "4"}),
            wl("wl-a1", "lq-a", CPU8, created=1),
            wl("wl-b1", "lq-b", CPU8, created=0),
        ],
        1,
        {"wl-a1": "admitted", "wl-b1": "pending"},
        source="admissionfairsharing.CalculateUsage: usage / LocalQueue weight",
    ),
    "resource weights: a GPU-heavy history outweighs a CPU-heavy one": OrderCase(
        [
            config(weights={"cpu": 0.1, "example.com/gpu": 10}),
            cq(quota={"cpu": "8", "example.com/gpu": "4"}),
            lq("lq-a", consumed={"cpu": "10"}),
            lq("lq-b", consumed={"example.com/gpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=1),
            wl("wl-b1", "lq-b", CPU8, created=0),
        ],
        1,
        {"wl-a1": "admitted", "wl-b1": "pending"},
        source="admissionfairsharing.CalculateUsage: sum of resourceWeights[r] x amount (default weight 1)",
    ),
    "without resource weights every resource counts 1 per unit: the CPU history is the larger": OrderCase(
        [
            config(),
            cq(quota={"cpu": "8", "example.com/gpu": "4"}),
            lq("lq-a", consumed={"cpu": "10"}),
            lq("lq-b", consumed={"example.com/gpu": "2"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "pending", "wl-b1": "admitted"},
        source="admissionfairsharing.CalculateUsage",
    ),
    "memory history counts in bytes: 1Gi outweighs 8 cpu": OrderCase(
        [
            config(),
            cq(quota={"cpu": "8", "memory": "8Gi"}),
            lq("lq-a", consumed={"memory": "1Gi"}),
            lq("lq-b", consumed={"cpu": "8"}),
            wl("wl-a1", "lq-a", CPU8, created=0),
            wl("wl-b1", "lq-b", CPU8, created=1),
        ],
        1,
        {"wl-a1": "pending", "wl-b1": "admitted"},
        source="Quantity.AsApproximateFloat64 in base units (cores, bytes)",
    ),
    "a StrictFIFO head is chosen by usage too": OrderCase(
        [
            config(),
            cq(strategy="StrictFIFO"),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b", consumed={"cpu": "2"}),
            wl("wl-a1", "lq-a", {"cpu": "2"}, created=0),
            wl("wl-b1", "lq-b", {"cpu": "9"}, created=1),
        ],
        3,
        {"wl-a1": "pending", "wl-b1": "pending"},
    ),
}


@pytest.mark.parametrize("case", ORDER_CASES.values(), ids=list(ORDER_CASES))
def test_admission_order(case: OrderCase, engine: str) -> None:
    c = cluster(case.objects, engine)
    c.run(case.cycles)
    assert {k: v for k, v in states(c).items() if k in case.want} == case.want


# --- the usage ledger: sampling and decay (LocalQueue reconciler) ------------------------------


@dataclass
class LedgerCase:
    objects: list[dict[str, Any]]
    cycle_times_s: list[int]  # cycles at T0 + these seconds (the first seeds the ledger)
    want_consumed_nanos: dict[str, int]
    source: str = ""


LQ8 = lq("lq", consumed={"cpu": "8"})
RUNNING4 = wl("running", "lq", CPU4, admitted_to="cq")

LEDGER_CASES = {
    "the history halves over one half-life when nothing runs": LedgerCase(
        [config("5m", "5m"), cq(), LQ8],
        [0, 300],
        {"cpu": 4 * NANO},
        source="TestLocalQueueReconcile 'local queue decaying usage decays if there is no running workloads'",
    ),
    "the history moves half-way to what runs over one half-life": LedgerCase(
        [config("5m", "5m"), cq(), LQ8, RUNNING4],
        [0, 300],
        {"cpu": 6 * NANO},
        source="TestLocalQueueReconcile 'local queue decaying usage sums the previous state and running workloads'",
    ),
    "a half-life of twice the interval: 8*0.5^0.5 + 4*(1-0.5^0.5), rounded down to nanos": LedgerCase(
        [config("10m", "5m"), cq(), LQ8, RUNNING4],
        [0, 300],
        {"cpu": 6_828_427_124},
        source="TestLocalQueueReconcile '... half time twice larger than sampling' (6828427124n)",
    ),
    "a long half-life decays little": LedgerCase(
        [config("24h", "5m"), cq(), LQ8],
        [0, 300],
        {"cpu": 7_980_769_063},
        source="TestLocalQueueReconcile '... with long half time' (7980769063n)",
    ),
    "usage of several flavors adds up per resource name": LedgerCase(
        [
            config("5m", "5m"),
            cq(quota={"cpu": "8", "example.com/gpu": "8"}),
            lq("lq", consumed={"cpu": "8", "example.com/gpu": "16"}),
            wl("w1", "lq", {"cpu": "2"}, admitted_to="cq"),
            wl("w2", "lq", {"cpu": "2"}, admitted_to="cq"),
            wl("w3", "lq", {"example.com/gpu": "4"}, admitted_to="cq"),
        ],
        [0, 300],
        {"cpu": 6 * NANO, "example.com/gpu": 10 * NANO},
        source="TestLocalQueueReconcile '... sums the usage from different flavors and resources'",
    ),
    "a half-life of 0 keeps no history": LedgerCase(
        [config("0s", "5m"), cq(), LQ8, RUNNING4],
        [0],
        {},
        source="TestLocalQueueReconcile 'local queue decaying usage resets to 0 when half life is 0'",
    ),
    "no sample before the interval has passed": LedgerCase(
        [config("5m", "5m"), cq(), LQ8, RUNNING4],
        [0, 240, 299],
        {"cpu": 8 * NANO},
        source="TestLocalQueueReconcile 'local queue decaying usage is not reconciled if not enough time has passed'",
    ),
    "the persisted history is taken as it is, whatever its lastUpdate": LedgerCase(
        [config("5m", "5m"), cq(), LQ8, RUNNING4],
        [0],
        {"cpu": 8 * NANO},
        source="TestLocalQueueReconcile 'local queue with uninitialized cache seeds from persisted status usage'",
    ),
    "without persisted history the ledger starts empty, not from what runs": LedgerCase(
        [config("5m", "5m"), cq(), lq("lq"), RUNNING4],
        [0],
        {"cpu": 0},
        source="TestLocalQueueReconcile 'local queue with uninitialized cache and no prior status seeds empty usage' (kueue#12891)",
    ),
    "a sample happens at the first cycle after the interval, over the time really elapsed": LedgerCase(
        [config("5m", "5m"), cq(), LQ8], [0, 250, 600], {"cpu": 2 * NANO}
    ),
}


@pytest.mark.parametrize("case", LEDGER_CASES.values(), ids=list(LEDGER_CASES))
def test_usage_history(case: LedgerCase, engine: str) -> None:
    c = cluster(case.objects, engine)
    for t in case.cycle_times_s:
        c.run_cycle(T0 + t * SECOND)
    fs = c.local_queue_fair_sharing("default/lq")
    assert fs is not None
    assert fs.consumed_nanos == case.want_consumed_nanos
    assert fs.pending_penalty_nanos == {}


# --- entry penalties (scheduler) and their settlement (workload controller) ---------------------


def test_an_admission_charges_alpha_times_the_requests_and_settles_it_in_the_same_cycle(engine: str) -> None:
    """alpha = 1 - 0.5^(1s/10s); 4 cpu x alpha = 0.267868033 cpu (kueue
    CalculateEntryPenalty, TestScheduleForAFS config). The workload controller
    settles it as soon as the admission is seen: the history holds it, nothing
    stays pending; before the admission the history is empty."""
    c = cluster([config("10s", "1s"), cq(), lq("lq"), wl("w", "lq", CPU4)], engine)
    first = c.run_cycle(T0)
    assert first.admitted == ["default/w"]
    fs = c.local_queue_fair_sharing("default/lq")
    assert fs is not None
    assert fs.consumed_nanos == {"cpu": 267_868_033}
    assert fs.pending_penalty_nanos == {}
    assert fs.usage == pytest.approx(0.267868033, abs=1e-12)
    assert fs.last_update_ns == T0


def test_settlement_decays_towards_the_admitted_usage_since_the_last_update(engine: str) -> None:
    """updateAfsConsumedUsage: decayed(history, admitted usage incl. the new
    workload, elapsed) + penalty. Seeded at T0 with 8 cpu, admitted 4 cpu at
    T0+5m (sampling 10m, half-life 5m): decayed 8*0.5 + 4*0.5 = 6, penalty
    4 * (1 - 0.5^(10m/5m)) = 3."""
    c = cluster(
        [
            config("5m", "10m"),
            cq(),
            lq("lq", consumed={"cpu": "8"}),
            lq("other"),
            wl("blocker", "other", CPU8, admitted_to="cq"),
            wl("w", "lq", CPU4),
        ],
        engine,
    )
    c.run_cycle(T0)
    c.remove_workload("default/blocker")
    assert c.run_cycle(T0 + 5 * MINUTE).admitted == ["default/w"]
    fs = c.local_queue_fair_sharing("default/lq")
    assert fs is not None
    assert fs.consumed_nanos == {"cpu": 9 * NANO}
    assert fs.last_update_ns == T0 + 5 * MINUTE


# --- decay over time changes the order ----------------------------------------------------------


@pytest.mark.parametrize(
    ("blocker_done_after_s", "want_admitted"),
    [
        (1, "wl-b1"),  # lq-b's history is still low: its workload goes first
        (121, "wl-a1"),  # two half-lives later lq-a's idle history decayed below lq-b's busy one
    ],
    ids=[
        "right away the idle-so-far LocalQueue goes first",
        "after two half-lives the LocalQueue that stopped using the ClusterQueue goes first",
    ],
)
def test_decay_over_time(blocker_done_after_s: int, want_admitted: str, engine: str) -> None:
    """lq-a: 8 cpu of history, nothing running; lq-b: no history, 8 cpu running
    (half-life and sampling 60s). Samples at T0+60 and T0+120 move lq-a 8 -> 4 -> 2
    and lq-b 0 -> 4 -> 6. When the running workload finishes, the head of the
    ClusterQueue is the workload of the LocalQueue with the lower usage."""
    c = cluster(
        [
            config("60s", "60s"),
            cq(quota={"cpu": "16"}),
            lq("lq-a", consumed={"cpu": "8"}),
            lq("lq-b"),
            wl("b-run", "lq-b", CPU8, admitted_to="cq"),
            wl("wl-a1", "lq-a", {"cpu": "12"}, created=0),
            wl("wl-b1", "lq-b", {"cpu": "12"}, created=1),
        ],
        engine,
    )
    for t in range(0, blocker_done_after_s):
        c.run_cycle(T0 + t * SECOND)
    c.remove_workload("default/b-run")
    result = c.run_cycle(T0 + blocker_done_after_s * SECOND)
    assert result.admitted == [f"default/{want_admitted}"]


# --- preemption within a usage-based ClusterQueue ------------------------------------------------


def _reclaim_case(engine: str, *, afs: bool, fair_sharing: bool) -> Cluster:
    """Kueue integration test 'Scheduler when Using AdmissionFairSharing at Cohort
    level should preempt a workload from LQ with higher recent usage': cq1 (16
    cpu, StrictFIFO, usage-based) borrows 16 from cq2 for lq-a's 20 cpu (priority
    10) and lq-b's 12 cpu (priority 1); then lq-c's 10 cpu reclaims cq2's quota."""
    objs = [
        cq(
            "cq1",
            {"cpu": "16"},
            afs=afs,
            cohort="all",
            strategy="StrictFIFO",
            preemption={"withinClusterQueue": "Never"},
        ),
        cq(
            "cq2",
            {"cpu": "16"},
            afs=False,
            cohort="all",
            preemption={"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
        ),
        lq("lq-a", "cq1", weight="1"),
        lq("lq-b", "cq1", weight="1"),
        lq("lq-c", "cq2", weight="1"),
        wl("high-a", "lq-a", {"cpu": "20"}, priority=10, created=0),
        wl("low-b", "lq-b", {"cpu": "12"}, priority=1, created=1),
        config("1s", "1s", fair_sharing=fair_sharing),
    ]
    if not afs:
        objs = objs[:-1] + (
            [{"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", "fairSharing": {}}]
            if fair_sharing
            else []
        )
    c = cluster(objs, engine)
    c.run(2)
    assert states(c) == {"high-a": "admitted", "low-b": "admitted"}
    c.add_workload(loader.parse_workload(wl("c", "lq-c", {"cpu": "10"}, created=5)))
    c.run_cycle()
    return c


@pytest.mark.parametrize(
    "fair_sharing", [False, True], ids=["classical preemption", "fair-sharing preemption"]
)
def test_the_busier_local_queue_is_preempted_first_despite_its_higher_priority(
    fair_sharing: bool, engine: str
) -> None:
    c = _reclaim_case(engine, afs=True, fair_sharing=fair_sharing)
    a = c.local_queue_fair_sharing("default/lq-a")
    b = c.local_queue_fair_sharing("default/lq-b")
    assert a is not None and b is not None and a.usage > b.usage
    assert c.decision("default/high-a").preempted_by == "default/c"
    assert c.decision("default/low-b").state == "admitted"


@pytest.mark.parametrize(
    "fair_sharing", [False, True], ids=["classical preemption", "fair-sharing preemption"]
)
def test_without_admission_fair_sharing_the_lower_priority_is_preempted(
    fair_sharing: bool, engine: str
) -> None:
    c = _reclaim_case(engine, afs=False, fair_sharing=fair_sharing)
    assert c.decision("default/low-b").preempted_by == "default/c"
    assert c.decision("default/high-a").state == "admitted"


@dataclass
class PreemptCase:
    objects: list[dict[str, Any]]
    preemptor: dict[str, Any]
    want_victim: str
    source: str = ""
    extra: list[str] = field(default_factory=list)


WITHIN = {"withinClusterQueue": "LowerPriority"}
PREEMPT_CASES = {
    "within the ClusterQueue the LocalQueue with more history loses first, before priority counts": PreemptCase(
        [
            config(),
            cq(quota={"cpu": "8"}, preemption=WITHIN),
            lq("busy", consumed={"cpu": "50"}),
            lq("idle", consumed={"cpu": "1"}),
            lq("new"),
            wl("busy-w", "busy", CPU4, priority=5, admitted_to="cq"),
            wl("idle-w", "idle", CPU4, priority=1, admitted_to="cq"),
        ],
        wl("p", "new", CPU4, priority=10, created=5),
        "busy-w",
        source="preemption TestCandidatesOrdering (AFS): lower LocalQueue usage last, whatever the priority",
    ),
    "the same without admission fair sharing: the lowest priority loses": PreemptCase(
        [
            cq(quota={"cpu": "8"}, preemption=WITHIN),
            lq("busy", consumed={"cpu": "50"}),
            lq("idle", consumed={"cpu": "1"}),
            lq("new"),
            wl("busy-w", "busy", CPU4, priority=5, admitted_to="cq"),
            wl("idle-w", "idle", CPU4, priority=1, admitted_to="cq"),
        ],
        wl("p", "new", CPU4, priority=10, created=5),
        "idle-w",
    ),
    "LocalQueues of the same name in different namespaces are not told apart: priority decides": PreemptCase(
        [
            config(),
            cq(quota={"cpu": "8"}, preemption=WITHIN),
            lq("lq", ns="ns-a", consumed={"cpu": "50"}),
            lq("lq", ns="ns-b", consumed={"cpu": "1"}),
            lq("new"),
            wl("a-w", "lq", CPU4, priority=5, admitted_to="cq", ns="ns-a"),
            wl("b-w", "lq", CPU4, priority=1, admitted_to="cq", ns="ns-b"),
        ],
        wl("p", "new", CPU4, priority=10, created=5),
        "b-w",
        source="preemption common/ordering.go resourceUsagePreemptionEnabled compares spec.queueName",
    ),
}


@pytest.mark.parametrize("case", PREEMPT_CASES.values(), ids=list(PREEMPT_CASES))
def test_preemption_order_within_the_cluster_queue(case: PreemptCase, engine: str) -> None:
    c = cluster(case.objects, engine)
    c.run_cycle()
    c.add_workload(loader.parse_workload(case.preemptor))
    result = c.run_cycle()
    assert [k.split("/")[1] for k in result.preempted] == [case.want_victim]


# --- the history outlives a configuration change -------------------------------------------------


def test_a_reconfiguration_keeps_the_local_queue_history(engine: str) -> None:
    objs = [config("10s", "1s"), cq(), lq("lq", consumed={"cpu": "8"}), wl("w", "lq", CPU4)]
    c = cluster(objs, engine)
    c.run_cycle(T0)
    before = c.local_queue_fair_sharing("default/lq")
    c.reconfigure(
        loader.build_state(
            [
                flavor(),
                config("10s", "1s"),
                cq(quota={"cpu": "16"}),
                lq("lq", consumed={"cpu": "8"}),
                wl("w", "lq", CPU4),
            ]
        )
    )
    assert c.local_queue_fair_sharing("default/lq") == before


# --- reading LocalQueue status ------------------------------------------------------------------


def test_local_queue_status_history_is_read_exactly() -> None:
    q = loader.parse_local_queue(lq("lq", consumed={"cpu": "6828427124n", "memory": "1Gi"}))
    assert q.afs_consumed_nanos == {"cpu": 6_828_427_124, "memory": 2**30 * NANO}
    assert loader.parse_local_queue(lq("lq")).afs_consumed_nanos == {}


def test_a_bad_history_quantity_is_rejected_with_its_path() -> None:
    with pytest.raises(
        ValidationError, match=r"status\.fairSharing\.admissionFairSharingStatus\.consumedResources\[cpu\]"
    ):
        loader.parse_local_queue(lq("lq", consumed={"cpu": "a lot"}))


# --- preemption order when Kueue's comparison is not transitive ------------------------------------


@pytest.mark.parametrize(
    "order", [(0, 1, 2), (2, 1, 0), (1, 0, 2), (2, 0, 1)], ids=lambda o: "added " + ",".join(map(str, o))
)
def test_a_cyclic_candidate_order_does_not_depend_on_the_order_of_arrival(
    order: tuple[int, ...], engine: str
) -> None:
    """Busy ns-a/lq (usage 5, priority 1), idle ns-b/lq (usage 1, priority 0) and
    ns-c/other (usage 3, priority 5): a before b by priority (same queue name),
    c before b and a before c by usage; the comparison goes round in a circle.
    Kueue's answer then depends on its map order; kueue-fast sorts by the plain
    order (priority here: b, a, c) and then merge-sorts with the comparison,
    which keeps b first. The result must not depend on the workloads' ids."""
    objs = [
        config(),
        cq(quota={"cpu": "12"}, preemption=WITHIN),
        lq("lq", ns="ns-a", consumed={"cpu": "5"}),
        lq("lq", ns="ns-b", consumed={"cpu": "1"}),
        lq("other", ns="ns-c", consumed={"cpu": "3"}),
        lq("new"),
    ]
    admitted = [
        wl("a-w", "lq", CPU4, priority=1, admitted_to="cq", ns="ns-a"),
        wl("b-w", "lq", CPU4, priority=0, admitted_to="cq", ns="ns-b"),
        wl("c-w", "other", CPU4, priority=5, admitted_to="cq", ns="ns-c"),
    ]
    c = cluster(objs, engine)
    for i in order:
        c.add_workload(loader.parse_workload(admitted[i]))
    c.run_cycle()
    c.add_workload(loader.parse_workload(wl("p", "new", CPU4, priority=10, created=5)))
    assert c.run_cycle().preempted == ["ns-b/b-w"]


# --- the native arithmetic against the reference's ---------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(
    v=st.integers(-(2**110), 2**110) | st.integers(0, 10**21),
    f=st.floats(0, 1) | st.floats(-1e6, 1e6) | st.floats(1e-30, 1e-5),
    y=st.floats(-3, 60),
    sampling=st.floats(0, 1e5),
    half_life=st.just(0.0) | st.floats(1e-3, 1e6),
    n=st.integers(-(2**127), 2**127 - 1),
    ns=st.integers(-(10**19), 10**19),
)
def test_native_ledger_arithmetic_is_the_reference_arithmetic(
    v: int, f: float, y: float, sampling: float, half_life: float, n: int, ns: int
) -> None:
    """Exact products with the float's shortest decimal rounded towards zero,
    Go's Pow(0.5, y), correctly rounded int -> float, Duration.Seconds()."""
    assert _core.afs_mul_by_float(v, f) == afs.mul_by_float({0: v}, f)[0]
    assert _core.afs_go_pow_half(y) == afs.go_pow_half(y)
    assert _core.afs_alpha_rate(sampling, half_life) == afs.alpha_rate(sampling, half_life)
    assert _core.afs_nanos_to_float(n) == float(n)
    assert _core.afs_go_seconds(ns) == afs.go_seconds(ns)


def test_native_ledger_amounts_beyond_128_bits_are_an_engine_error() -> None:
    with pytest.raises(EngineError, match="128-bit"):
        _core.afs_mul_by_float(2**126, 3.0)
    with pytest.raises(EngineError):
        _core.afs_mul_by_float(2**130, 0.5)
