"""The native engine with the reference engine's Python interface.

``NativeEngine`` wraps ``kueue_fast._core.Engine`` (C++17, see
``csrc/include/kueue_fast/scheduler.hpp``) and makes the same decisions as
``kueue_fast.engine.reference.scheduler.ReferenceEngine``, byte for byte: the
facade (``kueue_fast.cluster.cluster``) uses either through the same calls.

Beyond that interface it has a bulk path for simulators and benchmarks:

* ``add_workloads(arrays)`` ingests many pending workloads from flat numpy
  arrays (:class:`WorkloadArrays`) without Python work per workload;
* ``decisions()`` returns state code, admitted ClusterQueue and admission
  time of every workload as numpy arrays;
* ``stage_workloads(arrays)`` keeps a copy of such arrays in the engine,
  ``add_staged(lo, hi)`` adds a range of their rows (one call per arrival
  instant in the simulator) and ``clear_staged()`` frees the copy;
* ``run_cycles(start_ns, step_ns, max_cycles, until_stable)`` runs the
  cycles of ``Cluster.run``/``run_until_stable`` natively (both engines
  have it);
* ``run_until_stable(now_ns, max_cycles)`` runs the cycles of one instant
  natively (``run_until_settled`` when victims keep their quota until
  ``release_eviction``); ``admitted_usage(wids)``, ``eviction_reasons(wids)``,
  ``preempted_by(wids)``, ``messages(wids)``, ``reasons(wids)``, ``queues(wids)``,
  ``admitted_shapes(wids)`` and ``remove_workloads(wids)``
  read and remove many workloads at once;
* ``usage``, ``subtree_quota``, ``nominal``, ``borrowing_limit`` and
  ``lending_limit`` are read-only, zero-copy ``(n_nodes, n_fr)`` int64 views
  of the engine's quota tree.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .. import _core
from ..api.errors import EngineError
from ..api.features import FeatureGates
from .arguments import expect_type, workload_spec
from .contract import (
    STATE_ADMITTED,
    STATE_EVICTED,
    STATE_FINISHED,
    STATE_NAMES,
    STATE_PENDING,
    AdmittedShape,
    CycleReport,
    SettledRun,
    StableRun,
    WorkloadArrays,
    WorkloadView,
)
from .inputs import (
    CyclesRun,
    LedgerState,
    PodSetSpec,
    Topology,
    WorkloadSpec,
    afs_ledger_entries,
    afs_ledger_state,
)

__all__ = [
    "NativeEngine",
    "NativeCycleReport",
    "WorkloadArrays",
    "STATE_NAMES",
    "STATE_PENDING",
    "STATE_ADMITTED",
    "STATE_EVICTED",
    "STATE_FINISHED",
]

NativeCycleReport = CycleReport  # the contract's (engine/contract.py)


def topology_spec(t: Topology) -> _core.TopologySpec:
    """The Topology as the engine's typed input (``_core.TopologySpec``, one
    keyword argument per field: a field left out or of the wrong type is a
    TypeError here)."""
    gates = getattr(t, "gates", None)
    afs = getattr(t, "admission_fair_sharing", None)
    return _core.TopologySpec(
        resource_names=list(t.resource_names),
        flavor_names=list(t.flavor_names),
        fr_pairs=list(t.fr_pairs),
        node_names=list(t.node_names),
        n_cq=t.n_cq,
        node_parent=list(t.node_parent),
        quotas=[
            [
                _core.QuotaEntry(fr=fr, nominal=q[0], borrowing_limit=q[1], lending_limit=q[2])
                for fr, q in d.items()
            ]
            for d in t.quotas
        ],
        fair_weight=[float(w) for w in t.fair_weight],
        cluster_queues=[
            _core.ClusterQueueSpec(
                name=cq.name,
                groups=[
                    _core.ResourceGroupSpec(resources=list(g.resources), flavors=list(g.flavors))
                    for g in cq.groups
                ],
                strategy=cq.strategy,
                within_cluster_queue=cq.within_cluster_queue,
                reclaim_within_cohort=cq.reclaim_within_cohort,
                borrow_within_cohort=cq.borrow_within_cohort,
                max_priority_threshold=cq.max_priority_threshold,
                when_can_borrow=cq.when_can_borrow,
                when_can_preempt=cq.when_can_preempt,
                preference=cq.preference,
                active=cq.active,
                inactive_message=cq.inactive_message,
                fair_weight=float(cq.fair_weight),
                admission_fair_sharing=bool(getattr(cq, "admission_fair_sharing", False)),
            )
            for cq in t.cluster_queues
        ],
        fair_sharing=bool(t.fair_sharing),
        fair_strategies=list(t.fair_strategies),
        gates=_core.FeatureGates() if gates is None else _gates(gates),
        # Admission fair sharing: every LocalQueue, and the configuration (or None).
        local_queues=[
            _core.LocalQueueSpec(
                name=lq.name,
                cluster_queue=lq.cluster_queue,
                fair_weight=float(lq.fair_weight),
                stopped=bool(lq.stopped),
                consumed=list(lq.consumed),
            )
            for lq in getattr(t, "local_queues", [])
        ],
        admission_fair_sharing=None
        if afs is None
        else _core.AfsConfig(
            usage_half_life_s=float(afs.usage_half_life_s),
            usage_sampling_interval_s=float(afs.usage_sampling_interval_s),
            resource_weights=[float(w) for w in afs.resource_weights],
        ),
        block_admission_for_pods_ready=bool(getattr(t, "block_admission_for_pods_ready", False)),
        tas=_tas_spec(t),
    )


def _gates(g: FeatureGates) -> _core.FeatureGates:
    """The gates the engine models (reclaimable_pods and the hashing ones
    beyond scheduling_equivalence_hashing are applied by the compiler)."""
    return _core.FeatureGates(
        partial_admission=bool(g.partial_admission),
        flavor_fungibility=bool(g.flavor_fungibility),
        flavor_fungibility_preserve_scan_progress=bool(g.flavor_fungibility_preserve_scan_progress),
        priority_sorting_within_cohort=bool(g.priority_sorting_within_cohort),
        fair_sharing_preempt_within_nominal=bool(g.fair_sharing_preempt_within_nominal),
        fair_sharing_prioritize_non_borrowing=bool(g.fair_sharing_prioritize_non_borrowing),
        fair_sharing_reevaluate_preemption_candidates=bool(g.fair_sharing_reevaluate_preemption_candidates),
        recompute_assignment_upon_preemption_targets_overlap=bool(
            g.recompute_assignment_upon_preemption_targets_overlap
        ),
        scheduling_equivalence_hashing=bool(g.scheduling_equivalence_hashing),
        prioritize_preemptor_workloads=bool(g.prioritize_preemptor_workloads),
    )


def _tas_spec(t: Topology) -> _core.TasSpec | None:
    """Topology.tas as the engine's input (None: no TAS flavor)."""
    tas = getattr(t, "tas", None)
    if tas is None:
        return None
    return _core.TasSpec(
        resources=list(tas.resources),
        pods=tas.resources.index("pods"),
        level_names=list(tas.level_names),
        n_hosts=len(tas.hostnames),
        flavor_of=[tas.flavor_of.get(f, -1) for f in range(len(t.flavor_names))],
        flavors=[
            _core.TasFlavorSpec(
                flavor=f.flavor,
                name=f.name,
                topology=f.topology,
                levels=list(f.levels),
                hostname_lowest=f.hostname_lowest,
                level_start=list(f.level_start),
                child_lo=list(f.child_lo),
                child_hi=list(f.child_hi),
                free=[v for leaf in f.free for v in leaf],
                leaf_host=list(f.leaf_host),
            )
            for f in tas.flavors
        ],
    )


def _tas_pod_set(ps: Any) -> tuple[Any, list[int]]:
    """A pod set's TAS request (None: it asks for none) and per-pod requests."""
    r = ps.tas
    request = None if r is None else (r.level, r.required, r.unconstrained, r.slice_level, r.slice_size)
    return request, list(ps.tas_requests)


class NativeEngine:
    """Kueue's scheduler over a Topology, in C++ (same interface as ReferenceEngine)."""

    name = "native"

    def __init__(self, topology: Topology, release_evictions: bool = True) -> None:
        self.topo = topology
        try:
            spec = topology_spec(topology)
        except TypeError as e:  # a field of the wrong type: the API's typed error, as the engine's checks
            raise EngineError(f"topology: {e}") from None
        self._core = _core.Engine(spec, release_evictions)
        gates = getattr(topology, "gates", None)
        self._queue_ts_moves = gates is not None and not gates.priority_sorting_within_cohort
        self._specs: list[WorkloadSpec | None] = []
        # workloads whose queue-order timestamp an admission check's eviction moved
        self._ts_moved_by_check: set[int] = set()
        self._sync_classes()

    # --- configuration -------------------------------------------------------------------

    def _sync_classes(self) -> None:
        """Flavor classes grow as the compiler meets new pod template shapes."""
        known = self._core.n_classes
        tas = getattr(self.topo, "tas", None)
        for k, row in enumerate(self.topo.flavor_classes[known:], start=known):
            self._core.add_flavor_class(row)
            if tas is not None:  # the leaves the class may use, per TAS flavor
                self._core.add_tas_class(
                    [
                        (None if c.eligible is None else list(c.eligible), c.total_nodes, c.static_reasons)
                        for c in tas.classes[k]
                    ]
                )

    @property
    def cycle(self) -> int:
        return int(self._core.cycle)

    @property
    def evaluations(self) -> int:
        """Preemption candidate evaluations so far (the reference's preemptor.evaluations)."""
        return int(self._core.evaluations)

    @property
    def debug_checks(self) -> bool:
        """Check that every preemption target search leaves the quota tree unchanged."""
        return bool(self._core.debug_checks)

    @debug_checks.setter
    def debug_checks(self, on: bool) -> None:
        self._core.debug_checks = on

    @property
    def skip_settled(self) -> bool:
        """run_until_settled skips the cycles of settled cohort trees (on; off
        runs every cycle in full, for tests that check it changes nothing)."""
        return bool(self._core.skip_settled)

    @skip_settled.setter
    def skip_settled(self, on: bool) -> None:
        self._core.skip_settled = on

    @property
    def n_workloads(self) -> int:
        return int(self._core.n_workloads)

    def stats(self) -> dict[str, int]:
        """Work counters: heads, assignments, quota checks, oracle calls, target searches, evaluations."""
        return dict(self._core.stats())

    def memory_bytes(self) -> int:
        """Bytes held for workloads and queues (capacity of the engine's arrays)."""
        return int(self._core.memory_bytes())

    # --- workloads in and out ----------------------------------------------------------------

    def add_workload(self, spec: WorkloadSpec) -> int:
        expect_type(spec, WorkloadSpec, "add_workload")  # the core checks the rest
        self._sync_classes()
        try:
            pod_sets = [
                (
                    ps.name,
                    ps.count,
                    ps.min_count,
                    ps.flavor_class,
                    ps.requests,
                    _tas_pod_set(ps) if ps.tas_requests is not None else None,
                )
                for ps in spec.pod_sets
            ]
            adm = spec.admission
            admission = None
            if adm is not None:
                tas_uses = adm.tas or []
                admission = (
                    adm.cluster_queue,
                    adm.time_ns,
                    [
                        (count, [(r, f, v) for r, f, v in use], tas_uses[i] if i < len(tas_uses) else [])
                        for i, (count, use) in enumerate(adm.pod_sets)
                    ],
                )
        except (TypeError, ValueError, AttributeError):  # not even shaped as the core reads it
            workload_spec(spec, self.topo)  # the reference's words for what is wrong
            raise
        wid = int(
            self._core.add_workload(
                spec.namespace,
                spec.name,
                spec.uid,
                spec.cluster_queue,
                spec.priority,
                spec.queue_ts,
                spec.scheduling_hash,
                spec.block,
                spec.block_message,
                pod_sets,
                admission,
                spec.job_uid,
                spec.local_queue,
                spec.queue_name,
            )
        )
        self._specs.append(spec)
        if adm is not None and spec.pods_ready:
            self._core.set_pods_ready(wid, True)
        return wid

    def add_workloads(self, arrays: WorkloadArrays) -> range:
        """Bulk ingestion of pending workloads; returns the range of their wids."""
        self._sync_classes()
        first = int(self._core.add_workloads(arrays))  # checks the arrays
        n = len(arrays.names)
        self._specs.extend([None] * n)
        return range(first, first + n)

    def stage_workloads(self, arrays: WorkloadArrays) -> None:
        """Keep workload arrays in the engine (a copy) for :meth:`add_staged`,
        replacing any staged before; nothing is added yet."""
        self._core.stage_workloads(arrays)

    def add_staged(self, lo: int, hi: int) -> range:
        """``add_workloads`` of the staged rows ``[lo, hi)`` (no array
        slicing or conversion per call); returns the range of their wids."""
        self._sync_classes()
        first = int(self._core.add_staged(lo, hi))
        self._specs.extend([None] * (hi - lo))
        return range(first, first + hi - lo)

    def clear_staged(self) -> None:
        """Free the staged rows (added ones stay in the engine)."""
        self._core.clear_staged()

    def remove_workload(self, wid: int) -> None:
        self._core.remove_workload(wid)

    def remove_workloads(self, wids: npt.ArrayLike) -> None:
        """remove_workload for many at once (one requeue per cohort tree that got quota back)."""
        self._core.remove_workloads(wids)

    def release_eviction(self, wid: int) -> None:
        self._core.release_eviction(wid)

    def evict(self, wid: int, reason: str, message: str) -> None:
        self._core.evict(wid, reason, message)

    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None:
        """A pending workload out of its queue until ``until_ns``, then queued by ``queue_ts``."""
        self._core.hold(wid, until_ns, queue_ts)
        self._queue_ts_moves = True  # restored on admission: keep the specs in step
        spec = self._specs[wid]
        if spec is not None:  # a bulk-added workload's spec is built on demand (spec())
            spec.queue_ts = queue_ts

    def end_holds(self, now_ns: int) -> None:
        self._core.end_holds(now_ns)

    def set_pods_ready(self, wid: int, ready: bool) -> None:
        """The PodsReady condition of the workload's current admission (waitForPodsReady)."""
        self._core.set_pods_ready(wid, ready)

    def evict_after_cycle(self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool) -> None:
        self._core.evict_after_cycle(wid, reason, message, queue_ts_ns, requeue)
        if queue_ts_ns >= 0:
            self._ts_moved_by_check.add(wid)
            self._sync_queue_ts([wid])

    # --- the cycle ---------------------------------------------------------------------------------

    def run_cycle(self, now_ns: int) -> CycleReport:
        cycle, admitted, preempted, newly_parked, heads, attempted, parked = self._core.run_cycle(now_ns)
        report = CycleReport(
            cycle,
            admitted.tolist(),
            preempted.tolist(),
            int(newly_parked),
            int(heads),
            sorted(attempted.tolist()),
            sorted(parked.tolist()),
        )
        if self._queue_ts_moves and (report.preempted or report.admitted):
            self._sync_queue_ts(report.preempted + report.admitted)
        elif self._ts_moved_by_check and report.admitted:
            back = [w for w in report.admitted if w in self._ts_moved_by_check]
            self._ts_moved_by_check.difference_update(back)
            self._sync_queue_ts(back)
        return report

    def _sync_queue_ts(self, wids: list[int]) -> None:
        """Without PrioritySortingWithinCohort the engine moves the queue-order
        timestamp of a victim reclaimed while borrowing (and back when it is
        admitted again); the reference engine does it on the WorkloadSpec
        itself, so mirror it on ours."""
        for w in wids:
            spec = self._specs[w]
            if spec is not None:
                _ns, _name, _uid, _cq, _prio, queue_ts, *_rest = self._core.workload_spec(w)
                spec.queue_ts = int(queue_ts)

    def run_until_stable(self, now_ns: int, max_cycles: int) -> StableRun:
        """Cycles at ``now_ns`` until one admits, preempts and newly parks nothing
        (at most ``max_cycles``), natively; none when no ClusterQueue has a head
        to pop. Returns (cycles, stable, heads popped, admitted wids, the cycle
        offset of each admission, preempted wids, the cycle offset of each
        preemption); offsets are 0-based within this call."""
        cycles, stable, heads, adm, adm_cycle, pre, pre_cycle = self._core.run_until_stable(
            now_ns, max_cycles
        )
        if self._queue_ts_moves and (pre.size or adm.size):
            self._sync_queue_ts(pre.tolist() + adm.tolist())
        return StableRun(int(cycles), bool(stable), int(heads), adm, adm_cycle, pre, pre_cycle)

    def run_cycles(
        self,
        start_ns: int,
        step_ns: int,
        max_cycles: int,
        until_stable: bool,
        attempted_mask: npt.NDArray[np.uint8] | None = None,
    ) -> CyclesRun:
        """Cycle k (1, 2, ...) at ``start_ns + k * step_ns``, natively, at most
        ``max_cycles``; with ``until_stable`` up to and including the first
        cycle that admits, preempts and newly parks nothing. Given
        ``attempted_mask`` (uint8 per wid), only the heads whose flag is set
        are reported attempted, and their flag is cleared."""
        run = CyclesRun(*self._core.run_cycles(start_ns, step_ns, max_cycles, until_stable, attempted_mask))
        if self._queue_ts_moves and (run.preempted.size or run.admitted.size):
            self._sync_queue_ts(run.preempted.tolist() + run.admitted.tolist())
        return run

    def run_until_settled(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> SettledRun:
        """run_until_stable for an engine built with ``release_evictions=False``
        (victims keep their quota until ``release_eviction``): a cycle whose
        only preemptions re-issue evictions already under way changes
        nothing, and only victims evicted by a cycle of this call are
        returned. Also returns the wids the cycles tried and left pending
        (``attempted``, in cycle order, repeats included); given
        ``unexplained`` (uint8 per wid), only those whose flag is set, and
        it clears their flag (the simulator reads why they wait once).
        Cohort trees that settled are not run again until something changes
        them (their cycles would replay their last attempts): ``cycles``
        counts every cycle, ``run`` those run."""
        cycles, stable, heads, adm, adm_cycle, pre, pre_cycle, attempted, run = self._core.run_until_settled(
            now_ns, max_cycles, unexplained
        )
        if self._queue_ts_moves and pre.size:
            self._sync_queue_ts(pre.tolist())
        return SettledRun(
            int(cycles), bool(stable), int(heads), adm, adm_cycle, pre, pre_cycle, attempted, int(run)
        )

    # --- the simulator's event loop ------------------------------------------------------------------

    def sim_loop(self, arrays: dict[str, Any], params: dict[str, int]) -> Any:
        """The simulator's native event loop over this engine
        (simulate/native_event_loop.py): the staged rows are its trace."""
        self._sync_classes()
        return _core.SimLoop(self._core, arrays, params)

    def sim_loop_done(self) -> None:
        """After a native event loop: the workloads it added, as add_staged's."""
        self._specs.extend([None] * (int(self._core.n_workloads) - len(self._specs)))
        if self._queue_ts_moves:
            self._sync_queue_ts([w for w, s in enumerate(self._specs) if s is not None])

    def preempted_by(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """Per wid: the workload whose preemption last evicted it (-1: none)."""
        out: npt.NDArray[np.int32] = self._core.preempted_by(wids)
        return out

    def messages(self, wids: npt.ArrayLike) -> list[str]:
        """Per wid: its pending message, as ``workload_view(wid)["message"]``."""
        return list(self._core.messages(wids))

    # --- admission fair sharing ----------------------------------------------------------------------

    def afs_ledger_state(self) -> LedgerState:
        """The usage ledger by LocalQueue name, resources by name (the
        reference's afs_ledger_state): history and pending penalties in nanos,
        LastUpdate and the current usage; {} without admission fair sharing."""
        return afs_ledger_state(self.topo, self._core.afs_ledger_state())

    def restore_afs_ledger(self, state: LedgerState) -> None:
        """Take over a ledger from afs_ledger_state (history and LastUpdate; the
        reference's restore_afs_ledger)."""
        expect_type(state, dict, "restore_afs_ledger")
        self._core.restore_afs_ledger(afs_ledger_entries(self.topo, state))

    # --- decisions -----------------------------------------------------------------------------------

    def reasons(self, wids: npt.ArrayLike) -> list[str]:
        """Per wid: its pending reason, as ``workload_view(wid)["reason"]``."""
        return list(self._core.reasons(wids))

    def queues(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """Per wid: the ClusterQueue it queues in when pending (-1: none), as spec(wid).cluster_queue."""
        out: npt.NDArray[np.int32] = self._core.queues(wids)
        return out

    def admitted_shapes(self, wids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], list[AdmittedShape]]:
        """The admissions of many workloads, each distinct one once: per wid
        an index into the shapes (-1: not admitted to a ClusterQueue of the
        topology), and the shapes: (admitted ClusterQueue, [(pod set name,
        count, [(resource id, flavor id)])]), the flavors of workload_view."""
        shape, shapes = self._core.admitted_shapes(wids)
        return shape, shapes

    def admitted_usage(self, wids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        """Per wid: the ClusterQueue it is admitted to (-1: not admitted) and the
        usage its admission charges, shape (len(wids), n_fr)."""
        cq, usage = self._core.admitted_usage(wids)
        return cq, usage

    def eviction_reasons(self, wids: npt.ArrayLike) -> npt.NDArray[np.int8]:
        """Per wid, why it was last evicted: 0 InClusterQueue, 1 InCohortReclamation,
        2 InCohortFairSharing, 3 InCohortReclaimWhileBorrowing, 4 anything else (or never)."""
        out: npt.NDArray[np.int8] = self._core.eviction_reasons(wids)
        return out

    def spec(self, wid: int) -> WorkloadSpec:
        s = self._specs[wid] if type(wid) is int and 0 <= wid < len(self._specs) else None
        if s is not None:
            return s
        ns, name, uid, cq, prio, ts, h, pod_sets, block, block_message, lq = self._core.workload_spec(wid)
        local_queues = getattr(self.topo, "local_queues", [])
        return WorkloadSpec(
            namespace=ns,
            name=name,
            uid=uid,
            cluster_queue=cq,
            priority=prio,
            queue_ts=ts,
            scheduling_hash=h,
            pod_sets=[PodSetSpec(n, c, list(r), m, k) for n, c, r, m, k in pod_sets],
            block=block,
            block_message=block_message,
            admission=None,
            local_queue=lq,
            queue_name=local_queues[lq].name.split("/", 1)[1] if lq >= 0 else "",
        )

    def workload_view(self, wid: int) -> WorkloadView:
        """The decision fields of one workload, in ids."""
        fields: dict[str, Any] = self._core.workload_view(wid)
        return WorkloadView(spec=self.spec(wid), **fields)

    def queue_state(self, cq: int) -> tuple[list[int], list[int], int]:
        """The pending side of ClusterQueue ``cq``: (wids in its heap, wids
        parked as inadmissible, the sticky head or -1), wids sorted."""
        active, parked, sticky, _, _ = self._core.queue_state(cq)
        return sorted(active), sorted(parked), int(sticky)

    def decisions(self) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        """Per wid: state code (STATE_NAMES), admitted ClusterQueue (-1: none), admission time (ns)."""
        state, cq, time = self._core.decisions()
        return state, cq, time

    # --- the quota tree (read-only, zero-copy) --------------------------------------------------------

    @property
    def usage(self) -> npt.NDArray[np.int64]:
        return self._core.usage

    @property
    def subtree_quota(self) -> npt.NDArray[np.int64]:
        return self._core.subtree_quota

    @property
    def nominal(self) -> npt.NDArray[np.int64]:
        return self._core.nominal

    @property
    def borrowing_limit(self) -> npt.NDArray[np.int64]:
        return self._core.borrowing_limit

    @property
    def lending_limit(self) -> npt.NDArray[np.int64]:
        return self._core.lending_limit
