"""Stubs of the native engine module (bindings/register_*.cpp)."""

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, overload

import numpy as np
import numpy.typing as npt

def version() -> str: ...

INTERFACE: int

def format_quantity(resource: str, value: int) -> str: ...

# Admission fair sharing arithmetic (bindings/register_afs.cpp), for tests.
def afs_mul_by_float(v: int, f: float) -> int: ...
def afs_go_pow_half(y: float) -> float: ...
def afs_alpha_rate(sampling_s: float, half_life_s: float) -> float: ...
def afs_go_seconds(ns: int) -> float: ...
def afs_nanos_to_float(v: int) -> float: ...

# Named results (collections.namedtuple at run time, bindings/register_engine.cpp register_result_types).
class CycleResult(NamedTuple):
    cycle: int
    admitted: npt.NDArray[np.int32]
    preempted: npt.NDArray[np.int32]
    newly_parked: int
    heads: int
    attempted: npt.NDArray[np.int32]
    parked: npt.NDArray[np.int32]

class StableRun(NamedTuple):
    cycles: int
    stable: bool
    heads: int
    admitted: npt.NDArray[np.int32]
    admitted_cycle: npt.NDArray[np.int32]
    preempted: npt.NDArray[np.int32]
    preempted_cycle: npt.NDArray[np.int32]

class CyclesRun(NamedTuple):
    cycles: int
    stable: bool
    heads: npt.NDArray[np.int64]
    newly_parked: npt.NDArray[np.int64]
    admitted: npt.NDArray[np.int32]
    admitted_cycle: npt.NDArray[np.int32]
    preempted: npt.NDArray[np.int32]
    preempted_cycle: npt.NDArray[np.int32]
    preempted_admission_ns: npt.NDArray[np.int64]
    attempted: npt.NDArray[np.int32]
    attempted_cycle: npt.NDArray[np.int32]
    parked: npt.NDArray[np.int32]
    parked_cycle: npt.NDArray[np.int32]

class SettledRun(NamedTuple):
    cycles: int
    stable: bool
    heads: int
    admitted: npt.NDArray[np.int32]
    admitted_cycle: npt.NDArray[np.int32]
    preempted: npt.NDArray[np.int32]
    preempted_cycle: npt.NDArray[np.int32]
    attempted: npt.NDArray[np.int32]
    run: int

class AdmittedShapes(NamedTuple):
    shape: npt.NDArray[np.int32]
    shapes: list[tuple[int, list[tuple[str, int, list[tuple[int, int]]]]]]

class AdmittedUsage(NamedTuple):
    cluster_queue: npt.NDArray[np.int32]
    usage: npt.NDArray[np.int64]

class WorkloadSpecRow(NamedTuple):
    namespace: str
    name: str
    uid: str
    cluster_queue: int
    priority: int
    queue_ts: int
    scheduling_hash: int
    pod_sets: list[tuple[str, int, list[tuple[int, int]], int | None, int]]
    block: int
    block_message: str
    local_queue: int

class LedgerEntry(NamedTuple):
    local_queue: int
    consumed: list[tuple[int, int]]
    pending_penalty: list[tuple[int, int]]
    last_update_ns: int
    usage: float

class QueueState(NamedTuple):
    active: list[int]
    parked: list[int]
    sticky: int
    pop_cycle: int
    requeue_cycle: int

class Decisions(NamedTuple):
    state: npt.NDArray[np.int8]
    admitted_cq: npt.NDArray[np.int32]
    admission_time: npt.NDArray[np.int64]

# The topology, typed (bindings/register_topology.cpp; built by
# kueue_fast.engine.native.topology_spec): keyword-only constructors, every field required.
class ResourceGroupSpec:
    def __init__(self, *, resources: Sequence[int], flavors: Sequence[int]) -> None: ...

class ClusterQueueSpec:
    def __init__(
        self,
        *,
        name: str,
        groups: Sequence[ResourceGroupSpec],
        strategy: int,
        within_cluster_queue: int,
        reclaim_within_cohort: int,
        borrow_within_cohort: int,
        max_priority_threshold: int | None,
        when_can_borrow: int,
        when_can_preempt: int,
        preference: int,
        active: bool,
        inactive_message: str,
        fair_weight: float,
        admission_fair_sharing: bool,
    ) -> None: ...

class QuotaEntry:
    def __init__(self, *, fr: int, nominal: int, borrowing_limit: int, lending_limit: int) -> None: ...

class FeatureGates:
    @overload
    def __init__(self) -> None: ...
    @overload
    def __init__(
        self,
        *,
        partial_admission: bool,
        flavor_fungibility: bool,
        flavor_fungibility_preserve_scan_progress: bool,
        priority_sorting_within_cohort: bool,
        fair_sharing_preempt_within_nominal: bool,
        fair_sharing_prioritize_non_borrowing: bool,
        fair_sharing_reevaluate_preemption_candidates: bool,
        recompute_assignment_upon_preemption_targets_overlap: bool,
        scheduling_equivalence_hashing: bool,
        prioritize_preemptor_workloads: bool,
    ) -> None: ...

class LocalQueueSpec:
    def __init__(
        self,
        *,
        name: str,
        cluster_queue: int,
        fair_weight: float,
        stopped: bool,
        consumed: Sequence[tuple[int, int]],
    ) -> None: ...

class AfsConfig:
    def __init__(
        self, *, usage_half_life_s: float, usage_sampling_interval_s: float, resource_weights: Sequence[float]
    ) -> None: ...

class TasFlavorSpec:
    def __init__(
        self,
        *,
        flavor: int,
        name: str,
        topology: str,
        levels: Sequence[int],
        hostname_lowest: bool,
        level_start: Sequence[int],
        child_lo: Sequence[int],
        child_hi: Sequence[int],
        free: Sequence[int],
        leaf_host: Sequence[int],
    ) -> None: ...

class TasSpec:
    def __init__(
        self,
        *,
        resources: Sequence[str],
        pods: int,
        level_names: Sequence[str],
        n_hosts: int,
        flavor_of: Sequence[int],
        flavors: Sequence[TasFlavorSpec],
    ) -> None: ...

class TopologySpec:
    def __init__(
        self,
        *,
        resource_names: Sequence[str],
        flavor_names: Sequence[str],
        fr_pairs: Sequence[tuple[int, int]],
        node_names: Sequence[str],
        n_cq: int,
        node_parent: Sequence[int],
        quotas: Sequence[Sequence[QuotaEntry]],
        fair_weight: Sequence[float],
        cluster_queues: Sequence[ClusterQueueSpec],
        fair_sharing: bool,
        fair_strategies: Sequence[int],
        gates: FeatureGates,
        local_queues: Sequence[LocalQueueSpec],
        admission_fair_sharing: AfsConfig | None,
        block_admission_for_pods_ready: bool,
        tas: TasSpec | None,
    ) -> None: ...

class WorkloadArraysLike(Protocol):
    """What add_workloads and stage_workloads read, by attribute
    (kueue_fast.engine.native.WorkloadArrays; the optional ones may be None)."""

    @property
    def cluster_queue(self) -> npt.ArrayLike: ...
    @property
    def priority(self) -> npt.ArrayLike: ...
    @property
    def queue_ts(self) -> npt.ArrayLike: ...
    @property
    def scheduling_hash(self) -> npt.ArrayLike: ...
    @property
    def pod_set_offsets(self) -> npt.ArrayLike: ...
    @property
    def pod_set_count(self) -> npt.ArrayLike: ...
    @property
    def pod_set_min_count(self) -> npt.ArrayLike: ...
    @property
    def pod_set_flavor_class(self) -> npt.ArrayLike: ...
    @property
    def request_offsets(self) -> npt.ArrayLike: ...
    @property
    def request_resource(self) -> npt.ArrayLike: ...
    @property
    def request_amount(self) -> npt.ArrayLike: ...
    @property
    def namespaces(self) -> Any: ...
    @property
    def names(self) -> Any: ...
    @property
    def uids(self) -> Any: ...
    @property
    def pod_set_name(self) -> npt.ArrayLike | None: ...
    @property
    def pod_set_names(self) -> Sequence[str] | None: ...
    @property
    def block(self) -> npt.ArrayLike | None: ...
    @property
    def block_message(self) -> npt.ArrayLike | None: ...
    @property
    def block_messages(self) -> Sequence[str] | None: ...
    @property
    def local_queue(self) -> npt.ArrayLike | None: ...

class Engine:
    """The native engine over one topology (see kueue_fast.engine.native.NativeEngine)."""

    def __init__(self, topology: TopologySpec, release_evictions: bool = True) -> None: ...
    def add_flavor_class(self, row: Sequence[str | None]) -> int: ...
    def add_tas_class(
        self, per_flavor: Sequence[tuple[Sequence[int] | None, int, Sequence[str]]]
    ) -> None: ...
    @property
    def n_tas_classes(self) -> int: ...
    @property
    def n_classes(self) -> int: ...
    def add_workload(
        self,
        namespace: str,
        name: str,
        uid: str,
        cluster_queue: int,
        priority: int,
        queue_ts: int,
        scheduling_hash: int,
        block: int,
        block_message: str,
        pod_sets: Sequence[
            tuple[str, int, int | None, int, Sequence[tuple[int, int]]]
            | tuple[
                str,
                int,
                int | None,
                int,
                Sequence[tuple[int, int]],
                tuple[tuple[int, bool, bool, int, int] | None, Sequence[int]] | None,
            ]
        ],
        admission: tuple[
            int,
            int,
            Sequence[
                tuple[int, Sequence[tuple[int, int, int]]]
                | tuple[int, Sequence[tuple[int, int, int]], Sequence[tuple[int, int, int, int]]]
            ],
        ]
        | None,
        job_uid: str = "",
        local_queue: int = -1,
        queue_name: str = "",
    ) -> int: ...
    def add_workloads(self, arrays: WorkloadArraysLike) -> int: ...
    def stage_workloads(self, arrays: WorkloadArraysLike) -> None: ...
    def add_staged(self, lo: int, hi: int) -> int: ...
    def clear_staged(self) -> None: ...
    def remove_workload(self, wid: int) -> None: ...
    def remove_workloads(self, wids: npt.ArrayLike) -> None: ...
    def run_until_stable(self, now_ns: int, max_cycles: int) -> StableRun: ...
    def run_cycles(
        self,
        start_ns: int,
        step_ns: int,
        max_cycles: int,
        until_stable: bool,
        attempted_mask: npt.NDArray[np.uint8] | None = None,
    ) -> CyclesRun: ...
    def run_until_settled(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> SettledRun: ...
    def preempted_by(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]: ...
    def messages(self, wids: npt.ArrayLike) -> list[str]: ...
    def reasons(self, wids: npt.ArrayLike) -> list[str]: ...
    def queues(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]: ...
    def admitted_shapes(self, wids: npt.ArrayLike) -> AdmittedShapes: ...
    def admitted_usage(self, wids: npt.ArrayLike) -> AdmittedUsage: ...
    def eviction_reasons(self, wids: npt.ArrayLike) -> npt.NDArray[np.int8]: ...
    def release_eviction(self, wid: int) -> None: ...
    def evict(self, wid: int, reason: str, message: str) -> None: ...
    def set_pods_ready(self, wid: int, ready: bool) -> None: ...
    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None: ...
    def end_holds(self, now_ns: int) -> None: ...
    def evict_after_cycle(
        self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool
    ) -> None: ...
    def run_cycle(self, now_ns: int) -> CycleResult: ...
    @property
    def cycle(self) -> int: ...
    @property
    def evaluations(self) -> int: ...
    @property
    def n_workloads(self) -> int: ...
    debug_checks: bool
    skip_settled: bool
    def stats(self) -> dict[str, int]: ...
    def memory_bytes(self) -> int: ...
    def workload_view(self, wid: int) -> dict[str, Any]: ...
    def workload_spec(self, wid: int) -> WorkloadSpecRow: ...
    # Entries are LedgerEntry at run time; typed as the plain tuples that
    # compiler.afs_ledger_state takes (a list is invariant).
    def afs_ledger_state(
        self,
    ) -> list[tuple[int, list[tuple[int, int]], list[tuple[int, int]], int, float]]: ...
    def restore_afs_ledger(self, entries: Sequence[tuple[int, Sequence[tuple[int, int]], int]]) -> None: ...
    def queue_state(self, cluster_queue: int) -> QueueState: ...
    def decisions(self) -> Decisions: ...
    @property
    def usage(self) -> npt.NDArray[np.int64]: ...
    @property
    def subtree_quota(self) -> npt.NDArray[np.int64]: ...
    @property
    def nominal(self) -> npt.NDArray[np.int64]: ...
    @property
    def borrowing_limit(self) -> npt.NDArray[np.int64]: ...
    @property
    def lending_limit(self) -> npt.NDArray[np.int64]: ...

class SimLoop:
    """The simulator's event loop over a native engine (simulate/native_event_loop.py)."""

    def __init__(self, engine: Engine, arrays: dict[str, Any], params: dict[str, int]) -> None: ...
    def resume_from(
        self,
        arrived: int,
        finishes: Sequence[tuple[int, int, int]],
        running: int,
        admissions: int,
        preemptions: int,
    ) -> None: ...
    def advance(self, budget_s: float, log_rows: int) -> int: ...
    def log(self) -> tuple[Any, ...]: ...
    def pairs(self) -> list[tuple[tuple[int, int, int], int]]: ...
    def unsettled(
        self,
    ) -> list[
        tuple[
            int,
            int,
            int,
            int,
            list[tuple[tuple[int, int, int], int]],
            list[tuple[int, int]],
            list[tuple[int, int]],
        ]
    ]: ...
    def counters(self) -> dict[str, Any]: ...
