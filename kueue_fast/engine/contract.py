"""The engine contract: what the native (``native.NativeEngine``) and the
reference (``reference.scheduler.ReferenceEngine``) engines both implement,
and what every caller (the Cluster, the simulator, the benchmarks, explain
and the schedule command's output) may use of them.

Workloads are dense ids (wids) in add order; bulk calls take sequences of
wids and answer per wid, in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol

if TYPE_CHECKING:  # kept out at run time: the CLI imports ENGINES while it builds its parsers
    import numpy as np
    import numpy.typing as npt

    from .inputs import CyclesRun, LedgerState, Topology, WorkloadSpec

    I8 = npt.NDArray[np.int8]
    I32 = npt.NDArray[np.int32]
    I64 = npt.NDArray[np.int64]
    U8 = npt.NDArray[np.uint8]

ENGINES = ("native", "reference")

# decisions() state codes (csrc/include/kueue_fast/types.hpp ViewState)
STATE_PENDING, STATE_ADMITTED, STATE_EVICTED, STATE_FINISHED = 0, 1, 2, 3
# A workload's state as an engine keeps it (the Cluster adds "reserved": Decision.state)
EngineState = Literal["pending", "admitted", "evicted", "finished"]
STATE_NAMES: tuple[EngineState, ...] = ("pending", "admitted", "evicted", "finished")

# eviction_reasons() codes: why a workload was last evicted (4: anything else, or never)
EVICTION_REASONS = (
    "InClusterQueue",
    "InCohortReclamation",
    "InCohortFairSharing",
    "InCohortReclaimWhileBorrowing",
    "Other",
)

# admitted_shapes(): (admitted ClusterQueue, [(pod set name, count, [(resource id, flavor id)])])
AdmittedShape = tuple[int, list[tuple[str, int, list[tuple[int, int]]]]]


@dataclass
class WorkloadArrays:
    """Many pending workloads as flat arrays (CSR for pod sets and requests).

    Per workload (length n): ``cluster_queue`` (-1: in no queue), ``priority``,
    ``queue_ts`` (ns), ``scheduling_hash``, ``pod_set_offsets`` (length n+1:
    workload i owns pod sets ``pod_set_offsets[i]:pod_set_offsets[i+1]``),
    ``namespaces``/``names`` (the tie-break; sequences of str) and optionally
    ``uids`` (default ``namespace/name``).

    Per pod set: ``pod_set_count``, ``pod_set_min_count`` (-1: none),
    ``pod_set_flavor_class`` (a row of ``Topology.flavor_classes``),
    ``request_offsets`` (length n_pod_sets+1) and optionally ``pod_set_name``
    (indexes into ``pod_set_names``; default every pod set is "main").

    Per request: ``request_resource`` (resource id, strictly increasing within
    a pod set) and ``request_amount`` (per-pod amount, canonical units).

    Optionally, per workload: ``block`` (a compiler ``BLOCK_*`` code, as
    ``WorkloadSpec.block``) and ``block_message`` (an index into
    ``block_messages``, read where ``block`` is not ``BLOCK_NONE``), and
    ``local_queue`` (an id into ``Topology.local_queues``, -1: none; default
    none), which admission fair sharing charges and orders by; the
    workload's ``queue_name`` is that LocalQueue's name.

    (The input of both engines' ``add_workloads``/``stage_workloads``.)
    Integer arrays must have an integer dtype: floats are rejected.
    """

    cluster_queue: npt.ArrayLike
    priority: npt.ArrayLike
    queue_ts: npt.ArrayLike
    scheduling_hash: npt.ArrayLike
    pod_set_offsets: npt.ArrayLike
    pod_set_count: npt.ArrayLike
    pod_set_min_count: npt.ArrayLike
    pod_set_flavor_class: npt.ArrayLike
    request_offsets: npt.ArrayLike
    request_resource: npt.ArrayLike
    request_amount: npt.ArrayLike
    namespaces: Any
    names: Any
    uids: Any = None
    pod_set_name: npt.ArrayLike | None = None
    pod_set_names: list[str] | None = None
    block: npt.ArrayLike | None = None
    block_message: npt.ArrayLike | None = None
    block_messages: list[str] | None = None
    local_queue: npt.ArrayLike | None = None


@dataclass(frozen=True, slots=True)
class WorkloadView:
    """The decision fields of one workload, in ids (the Cluster names them)."""

    spec: WorkloadSpec
    state: EngineState
    admitted_cq: int  # -1: not admitted to a ClusterQueue of the topology
    admission_time: int  # ns
    pod_sets: list[tuple[int, dict[int, int]]]  # per admitted pod set: (count, resource id -> flavor id)
    resource_usage: list[dict[int, int]]  # per admitted pod set: resource id -> total
    reason: str  # the last scheduling attempt
    message: str
    eviction_reason: str  # the last eviction
    eviction_message: str
    preempted_by: int  # wid whose preemption last evicted it, -1: none
    holds_quota: bool
    # Topology Aware Scheduling: per admitted pod set, the placement the
    # engine made (TAS flavor index, [(leaf, pods)]) or None; None for all:
    # the admission is the input's (or there is no TAS)
    topology: list[tuple[int, list[tuple[int, int]]] | None] | None = None


@dataclass
class CycleReport:
    """What one cycle did."""

    cycle: int
    admitted: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)  # victims whose eviction was issued
    newly_parked: int = 0
    heads: int = 0
    attempted: list[int] = field(default_factory=list)  # heads tried and left pending, by wid
    parked: list[int] = field(default_factory=list)  # heads parked as inadmissible, by wid


class StableRun(NamedTuple):
    """run_until_stable: the cycles of one instant; offsets are 0-based within the call."""

    cycles: int
    stable: bool
    heads: int
    admitted: I32
    admitted_cycle: I32
    preempted: I32
    preempted_cycle: I32


class SettledRun(NamedTuple):
    """run_until_settled: run_until_stable plus the heads tried and left
    pending; ``cycles`` counts the cycles of the instant, ``run`` those run
    (the others replayed settled cohort trees: skipped)."""

    cycles: int
    stable: bool
    heads: int
    admitted: I32
    admitted_cycle: I32
    preempted: I32
    preempted_cycle: I32
    attempted: I32
    run: int


class Engine(Protocol):
    """Kueue's scheduler over a Topology (both engines, same decisions)."""

    name: str
    topo: Topology
    # run_until_settled skips the cycles of settled cohort trees (tests turn it off)
    skip_settled: bool

    @property
    def cycle(self) -> int:
        """Cycles run so far."""
        ...

    @property
    def n_workloads(self) -> int:
        """Workload ids handed out so far (removed ones included)."""
        ...

    @property
    def evaluations(self) -> int:
        """Preemption candidate evaluations so far."""
        ...

    # --- workloads in and out
    def add_workload(self, spec: WorkloadSpec) -> int:
        """Add one workload (pending, or admitted when ``spec.admission`` is set); its id."""
        ...

    def add_workloads(self, arrays: WorkloadArrays) -> range:
        """Add many pending workloads at once; the range of their ids."""
        ...

    def stage_workloads(self, arrays: WorkloadArrays) -> None:
        """Keep workload arrays (a copy) for :meth:`add_staged`, replacing any staged before."""
        ...

    def add_staged(self, lo: int, hi: int) -> range:
        """:meth:`add_workloads` of the staged rows ``[lo, hi)``; the range of their ids."""
        ...

    def clear_staged(self) -> None:
        """Free the staged rows (the added ones stay)."""
        ...

    def remove_workload(self, wid: int) -> None:
        """Forget a workload (finished or deleted); the quota it held is released."""
        ...

    def remove_workloads(self, wids: npt.ArrayLike) -> None:
        """:meth:`remove_workload` of many."""
        ...

    def release_eviction(self, wid: int) -> None:
        """An evicted workload's job has stopped: its quota is released and it queues again
        (engines built with ``release_evictions=False``)."""
        ...

    def evict(self, wid: int, reason: str, message: str) -> None:
        """Evict an admitted workload now, with Kueue's Evicted reason and message."""
        ...

    def evict_after_cycle(self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool) -> None:
        """Evict at the end of the next cycle (an admission check's Retry or Rejected);
        ``queue_ts_ns`` >= 0 orders it by that time from then on; ``requeue`` False: never again."""
        ...

    def set_pods_ready(self, wid: int, ready: bool) -> None:
        """The PodsReady condition of the workload's current admission (waitForPodsReady)."""
        ...

    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None:
        """Keep a pending workload out of its queue until ``until_ns``, then queue it by ``queue_ts``."""
        ...

    def end_holds(self, now_ns: int) -> None:
        """Queue again the held workloads whose time has come."""
        ...

    # --- cycles
    def run_cycle(self, now_ns: int) -> CycleReport:
        """One scheduling cycle at time ``now_ns``."""
        ...

    def run_cycles(
        self,
        start_ns: int,
        step_ns: int,
        max_cycles: int,
        until_stable: bool,
        attempted_mask: U8 | None = None,
    ) -> CyclesRun:
        """Up to ``max_cycles`` cycles ``step_ns`` apart without returning in between (or until
        one changes nothing), with per cycle what a caller records; ``attempted_mask`` marks
        the heads tried and left pending."""
        ...

    def run_until_stable(self, now_ns: int, max_cycles: int) -> StableRun:
        """Cycles at one instant until one admits, evicts and parks nothing."""
        ...

    def run_until_settled(self, now_ns: int, max_cycles: int, unexplained: U8 | None = None) -> SettledRun:
        """:meth:`run_until_stable` for victims that keep their quota until
        :meth:`release_eviction`: only new evictions count as a change."""
        ...

    # --- admission fair sharing
    def afs_ledger_state(self) -> LedgerState:
        """Admission fair sharing's usage ledger by LocalQueue ({} without it)."""
        ...

    def restore_afs_ledger(self, state: LedgerState) -> None:
        """Take over a ledger from :meth:`afs_ledger_state`."""
        ...

    # --- one workload
    def spec(self, wid: int) -> WorkloadSpec:
        """The compiled workload behind an id."""
        ...

    def workload_view(self, wid: int) -> WorkloadView:
        """Where one workload stands, in ids."""
        ...

    def queue_state(self, cq: int) -> tuple[list[int], list[int], int]:
        """ClusterQueue ``cq``'s pending side: ids in its heap, ids parked as
        inadmissible, and the sticky head (-1: none)."""
        ...

    # --- many workloads
    def decisions(self) -> tuple[I8, I32, I64]:
        """Per wid: state code (STATE_NAMES), admitted ClusterQueue (-1: none), admission time (ns)."""
        ...

    def reasons(self, wids: npt.ArrayLike) -> list[str]:
        """Kueue's reason for each workload (its pending or eviction reason)."""
        ...

    def messages(self, wids: npt.ArrayLike) -> list[str]:
        """Kueue's message for each workload."""
        ...

    def queues(self, wids: npt.ArrayLike) -> I32:
        """Per wid: the ClusterQueue it queues in (-1: none)."""
        ...

    def preempted_by(self, wids: npt.ArrayLike) -> I32:
        """Per wid: the workload whose preemption last evicted it (-1: none)."""
        ...

    def eviction_reasons(self, wids: npt.ArrayLike) -> I8:
        """Per wid: why it was last evicted (0 InClusterQueue, 1 InCohortReclamation,
        2 InCohortFairSharing, 3 InCohortReclaimWhileBorrowing, 4 anything else or never)."""
        ...

    def admitted_usage(self, wids: npt.ArrayLike) -> tuple[I32, I64]:
        """Per wid: the ClusterQueue it is admitted to (-1: none) and the usage its
        admission charges per flavor-resource."""
        ...

    def admitted_shapes(self, wids: npt.ArrayLike) -> tuple[I32, list[AdmittedShape]]:
        """The admissions of many workloads, each distinct one once: per wid an
        index into the shapes (-1: none), and the shapes."""
        ...

    # --- the quota tree
    @property
    def usage(self) -> I64:
        """Usage per quota-tree node and flavor-resource (read-only)."""
        ...
