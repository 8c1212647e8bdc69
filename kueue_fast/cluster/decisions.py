"""What a Cluster gives (Decision, CycleResult, BulkDecisions...) and keeps
between cycles (WorkloadHistory, PodsReadyState, HeldWorkload): plain records,
apart from the Cluster so that its ledgers and reader share them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from ..api.model import AdmissionCheckState, TopologyAssignment

# Where a workload stands (Decision.state)
WorkloadState = Literal["admitted", "reserved", "pending", "evicted", "finished"]
ADMITTED: Final = "admitted"
# quota reserved, waiting for admission checks (cluster/admission_checks.py)
RESERVED: Final = "reserved"
PENDING: Final = "pending"
EVICTED: Final = "evicted"
FINISHED: Final = "finished"

NS_PER_S = 1_000_000_000


@dataclass
class PodSetDecision:
    """A pod set of an admitted workload: how many pods were admitted and the
    flavor each resource got (Kueue's ``status.admission.podSetAssignments``)."""

    name: str
    count: int
    flavors: dict[str, str] = field(default_factory=dict)  # resource -> flavor
    resource_usage: dict[str, int] = field(default_factory=dict)  # resource -> total
    # Topology Aware Scheduling: where its pods go (None: no placement)
    topology_assignment: TopologyAssignment | None = None


@dataclass
class Decision:
    """Where a workload stands after the cycles run so far."""

    namespace: str
    name: str
    state: WorkloadState
    cluster_queue: str | None = None
    pod_sets: list[PodSetDecision] = field(default_factory=list)
    reason: str = ""
    message: str = ""
    preempted_by: str | None = None
    # why it was preempted (Kueue's Preempted condition reason): InClusterQueue,
    # InCohortReclamation, InCohortFairSharing or InCohortReclaimWhileBorrowing
    preemption_reason: str = ""
    admission_time_ns: int | None = None
    # status.admissionChecks of a workload holding quota (admitted or reserved)
    admission_checks: list[AdmissionCheckState] = field(default_factory=list)

    @property
    def key(self) -> str:
        """``namespace/name``, the key the Cluster's methods take."""
        return f"{self.namespace}/{self.name}"

    @property
    def holds_quota(self) -> bool:
        """Admitted, or reserved and waiting for admission checks."""
        return self.state in (ADMITTED, RESERVED)


# BulkDecisions.kind: which decisions the engine's arrays give
BULK_OTHER, BULK_ADMITTED, BULK_PENDING = 0, 1, 2


@dataclass
class BulkDecisions:
    """decisions() in their order (by key) without a Decision for the common
    ones: admitted to a ClusterQueue of the topology (``shape``: an index
    into ``shapes``, the ClusterQueue's name and the pod sets, flavors by
    resource, no usage) and plain pending (``reasons`` and ``messages``, in
    key order of the pending ones); every other key (``BULK_OTHER``) needs
    ``Cluster.decision``."""

    keys: list[str]
    kind: list[int]
    shape: list[int]
    shapes: list[tuple[str, list[PodSetDecision]]]
    reasons: list[str]
    messages: list[str]


@dataclass
class EvictionRecord:
    """A workload's last eviction (Kueue's Evicted and Preempted conditions)."""

    cycle: int
    time_ns: int
    reason: str  # the Evicted condition's: Preempted, ClusterQueueStopped, LocalQueueStopped, ...
    message: str
    preemption_reason: str = ""  # the Preempted condition's (InClusterQueue, ...); "" when not preempted
    preempted_by: str | None = None
    admitted_ns: int | None = None  # when the admission it ended began


@dataclass
class WorkloadHistory:
    """What Kueue's statuses remember of earlier cycles, bounded per workload:
    the first time the scheduler tried it (QuotaReserved=False since), its
    last eviction and its eviction counts (status.schedulingStats.evictions)."""

    first_attempt_ns: int | None = None
    last_eviction: EvictionRecord | None = None
    evictions: dict[str, int] = field(default_factory=dict)  # Evicted reason -> count
    # seconds admitted before each eviction, summed (status.accumulatedPastExecutionTimeSeconds)
    past_execution_s: int = 0

    def record_eviction(self, ev: EvictionRecord) -> None:
        """Count an eviction and keep it as the last one."""
        self.last_eviction = ev
        self.evictions[ev.reason] = self.evictions.get(ev.reason, 0) + 1
        if ev.admitted_ns is not None:
            self.past_execution_s += max(0, ev.time_ns - ev.admitted_ns) // NS_PER_S


@dataclass
class PodsReadyState:
    """The PodsReady condition of a workload's admission (waitForPodsReady)."""

    admitted_ns: int  # the admission it belongs to (a new admission starts not ready)
    ready: bool
    reason: str = "WaitForStart"  # of PodsReady=False: WaitForStart, WaitForRecovery, ...
    since_ns: int = 0  # its lastTransitionTime


@dataclass
class HeldWorkload:
    """A workload out of its queue after a PodsReady timeout (waitForPodsReady)
    or a Retry check's requeueAfterSeconds: until its backoff ends
    (requeue_at_ns), or for good once deactivated (requeue_at_ns None). The
    engine forgot it; ``wid`` is its old id."""

    wid: int
    evicted_cycle: int
    reason: str  # the Evicted condition's: PodsReadyTimeout or Deactivated
    message: str
    requeue_at_ns: int | None
    evicted_ns: int


@dataclass
class LocalQueueFairSharing:
    """A LocalQueue's admission fair sharing state (Kueue's in-memory usage
    ledger, persisted as status.fairSharing.admissionFairSharingStatus).

    Amounts are exact, in nanos of the base unit (1 cpu = 10**9)."""

    consumed_nanos: dict[str, int]  # the decayed usage history
    pending_penalty_nanos: dict[str, int]  # entry penalties not settled yet
    last_update_ns: int
    usage: float  # weighted usage that orders the ClusterQueue's workloads


@dataclass
class CycleResult:
    """What one scheduling cycle did, by workload key: admitted, preemptions
    issued (the victims), evictions for other reasons, the heads it tried and
    left pending, and those it parked as inadmissible."""

    cycle: int
    admitted: list[str]
    preempted: list[str]
    evicted: list[str]  # evictions for other reasons (HoldAndDrain)
    newly_parked: int
    heads: int
    # heads the cycle tried and left pending: Kueue writes their pending reason now
    attempted: list[str] = field(default_factory=list)
    # heads parked as inadmissible; newly_parked also counts the equivalent
    # workloads parked with them (SchedulingEquivalenceHashing)
    parked: list[str] = field(default_factory=list)
    time_ns: int = 0  # the cycle's clock

    @property
    def changed(self) -> bool:
        """The scheduling contract's "changes something" for --until-stable."""
        return bool(self.admitted or self.preempted or self.evicted or self.newly_parked)
