"""What a simulation returns: per-workload records, the time series, the
churn, and the result (``SimResult``), with the states a workload ends in."""

from __future__ import annotations

from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from ..api.model import ClusterState
from .series import Bins, CountSeries, EventCounts, StepSeries
from .trace import Trace

if TYPE_CHECKING:
    from .lending import LendingTree

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
NS = 1_000_000_000
NEVER = np.iinfo(np.int64).max

# Admission and eviction times kept per workload (the rest are counted).
TIMES_KEPT = 4

# A workload's state at the end of the run.
PENDING, RUNNING, EVICTING, FINISHED = 0, 1, 2, 3
# quota reserved, waiting for admission checks; deactivated by a Rejected check
RESERVED, REJECTED = 4, 5
# deactivated by waitForPodsReady's backoffLimitCount
DEACTIVATED = 6
STATE_NAMES = ("pending", "running", "evicting", "finished", "reserved", "rejected", "deactivated")
# waitForPodsReady events (pods_heap): pods ready, timeout, backoff over
POD_READY, POD_TIMEOUT, BACKOFF_OVER = 0, 1, 2


@dataclass
class Progress:
    """What the progress bar shows."""

    sim_ns: int
    start_ns: int
    end_ns: int
    arrived: int
    total: int
    running: int
    admissions: int
    preemptions: int
    wall_s: float
    instant_cycles: int = 0  # cycles run so far at the current instant, when it takes long


@dataclass
class WorkloadRecords:
    """Per workload (manifest workloads first, then the trace's rows)."""

    queue_cq: I64  # ClusterQueue of its LocalQueue (-1: none)
    arrival_ns: I64
    state: npt.NDArray[np.int8]  # PENDING, RUNNING, EVICTING, FINISHED, RESERVED, REJECTED at the end
    admitted_cq: I64  # ClusterQueue of its last admission (-1: never admitted)
    admissions: I64  # quota reservations
    evictions: I64  # preemptions suffered
    admitted_at: I64  # (n, TIMES_KEPT): the first admission times, -1 beyond the count
    evicted_at: I64  # (n, TIMES_KEPT): the first eviction times
    last_admitted_ns: I64  # -1: never
    last_evicted_ns: I64  # -1: never
    finished_ns: I64  # -1: not finished
    wait_ns: I64  # time spent in its queue, up to the end when still pending
    censored: npt.NDArray[np.bool_]  # still pending at the end: waited at least wait_ns
    usage: I64  # (n, flavor-resources): the usage of its last admission
    preempted_by: I64  # the workload whose preemption last evicted it (-1: none)
    preempting: I64  # evictions this workload's admissions caused
    lost_ns: I64  # run time thrown away by its evictions
    explanation: npt.NDArray[np.int32]  # index into SimResult.messages (-1: none)
    # waitForPodsReady: evictions by the PodsReady timeout (also in ``evictions``)
    pods_ready_timeouts: I64 = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # admission checks: Retry evictions suffered, time spent reserved waiting for checks
    check_retries: I64 | None = None
    check_wait_ns: I64 | None = None
    # admitted at least once: quota reserved and every admission check Ready
    # (Kueue's Admitted condition); a workload a check rejected never was
    ever_admitted: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=np.bool_))


@dataclass
class UnsettledInstant:
    """An instant whose cycles kept changing something until the limit."""

    t_ns: int
    cycles: int
    admissions: int
    preemptions: int
    # (preemptor ClusterQueue, victim ClusterQueue, reason code) -> evictions
    pairs: dict[tuple[int, int, int], int]
    # the workloads evicted most often in it: (wid, evictions)
    victims: list[tuple[int, int]]
    # the workloads that preempted most often in it: (wid, evictions caused)
    preemptors: list[tuple[int, int]]


@dataclass
class Churn:
    """Who preempted whom, and the instants that did not settle."""

    # (preemptor ClusterQueue, victim ClusterQueue, reason code) -> evictions
    pairs: dict[tuple[int, int, int], int] = field(default_factory=dict)
    unsettled: list[UnsettledInstant] = field(default_factory=list)  # the first loop.UNSETTLED_KEPT


@dataclass
class Timeline:
    """The run's time series (see series.py), finished at the end of the run."""

    bins: Bins
    usage: StepSeries  # per ClusterQueue x flavor-resource; totals: dominant share, borrowing
    # usage held by evicted workloads whose pods are still stopping, per ClusterQueue x flavor-resource
    stopping: StepSeries
    # usage per quota tree (root), with its peak above the tree's nominal quota (peak_over)
    trees: StepSeries
    pending: CountSeries  # per ClusterQueue
    preemptions: EventCounts  # per eviction reason


@dataclass
class SimResult:
    state: ClusterState
    topology_cq_names: list[str]
    resource_names: list[str]
    flavor_names: list[str]
    fr_pairs: list[tuple[int, int]]
    nominal: I64  # (ClusterQueues, flavor-resources)
    tree: LendingTree  # every node's quota: capacity, reach, lending (lending.py)
    cq_cohort: list[str]
    # per ClusterQueue, why Kueue admits nothing in it: (reason, message) of its Active=False
    # condition; ("", "") when it is active
    inactive: list[tuple[str, str]]
    workloads: WorkloadRecords
    timeline: Timeline
    churn: Churn
    messages: list[str]  # explanations, by WorkloadRecords.explanation
    trace: Trace  # the trace's rows are workloads m.. (in arrival order)
    manifest: list[tuple[str, str, str, int]]  # workloads 0..m-1: (namespace, name, LocalQueue, priority)
    engine: str
    start_ns: int
    end_ns: int
    n_workloads: int
    n_manifest: int
    cycles: int  # Kueue's scheduling cycles of the run
    cycles_run: int  # those the engine ran (the others replayed settled cohort trees: skipped)
    instants: int
    unsettled: int
    preemptions_per_cq: I64  # evictions by the victim's ClusterQueue
    lost_ns_per_cq: F64
    candidate_evaluations: int
    wall_s: float
    schedule_s: float
    termination_delay_ns: int
    max_cycles: int
    drain_limited: bool = False
    notes: list[str] = field(default_factory=list)
    # the manifests' workloads that hold quota at the start: when each releases it (NEVER: never)
    manifest_held_until_ns: list[int] = field(default_factory=list)
    # the manifests' pending workloads with no run time: once admitted they hold quota to the end
    manifest_pending_never_finish: int = 0
    # the manifests' pending workloads with a run time (--existing-runtime): how long each runs
    manifest_pending_run_ns: list[int] = field(default_factory=list)


def usage_measure(nominal: I64, basis: I64, res_of_fr: I64, n_res: int) -> Callable[[int, I64], F64]:
    """Per usage level of ClusterQueue k: (its dominant resource's use over
    ``basis``, its nominal quota or, without any, its reach (capacity.py);
    1 when above nominal quota on some flavor-resource)."""
    onehot = np.zeros((nominal.shape[1], n_res))
    onehot[np.arange(nominal.shape[1]), res_of_fr] = 1.0
    nom_res = basis.astype(np.float64) @ onehot

    def measure(k: int, levels: I64) -> F64:
        out = np.zeros((levels.shape[0], 2))
        has = nom_res[k] > 0
        if has.any():
            out[:, 0] = ((levels.astype(np.float64) @ onehot)[:, has] / nom_res[k][has]).max(axis=1)
        out[:, 1] = (levels > nominal[k]).any(axis=1)
        return out

    return measure


def zeros(code: str, fill: int, size: int) -> array:  # type: ignore[type-arg]
    return array(code, [fill]) * size


def copy(a: array, dtype: type) -> Any:  # type: ignore[type-arg]
    return np.frombuffer(a, dtype=dtype).copy()
