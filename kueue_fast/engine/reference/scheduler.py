"""The reference engine: Kueue's scheduling cycle in plain Python.

This is the specification as code. It follows kueue pkg/scheduler/scheduler.go
(schedule, nominate, processEntry, updateAssignmentIfNeeded, requeueAndUpdate)
and is the oracle the native engine is tested against, decision by decision.

One cycle:
  1. heads: one workload from the heap of every active ClusterQueue;
  2. snapshot: the working quota tree itself (changes that only live for the
     cycle, like capacity reserved by a waiting preemptor, are recorded and
     undone at the end: no copies);
  3. nominate: flavor assignment and, when needed, preemption targets;
  4. order the entries (classical, or the fair-sharing tournament);
     (steps 3 and 4: nomination.py)
  5. process entries in that order against the filling snapshot (an
     admission adds its usage to it, not the workload: no later entry of the
     cycle can pick it as a victim; processing.py);
  6. requeue every head that was not admitted;
  7. (offline mode) evictions issued in the cycle take effect: quota is
     released, the victims go back to their queues, and the inadmissible
     workloads of their cohort trees are requeued.

With admission fair sharing (admission_fair_sharing.py), Kueue's controllers
keep the LocalQueues' usage ledger around the cycles: before step 1 the
LocalQueue reconciler samples every LocalQueue that is due, admissions push
entry penalties in step 5, and at the end of the cycle the workload controller
settles the penalties of the workloads it admitted (lq_fair_sharing.py).

ReferenceEngine owns every piece of the engine's state; the phases are
functions over it in their own modules (nomination.py, processing.py, the
bulk calls in bulk.py), the way csrc/src/scheduler.cpp's Engine methods read
and write one Engine. Admission fair sharing is a part,
LocalQueueFairSharing, constructed with what it reads.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from .. import arguments as A
from ..contract import AdmittedShape, CycleReport, SettledRun, StableRun, WorkloadView
from ..inputs import BLOCK_NAMESPACE_MISMATCH, CyclesRun, LedgerState, Topology, WorkloadSpec
from . import bulk, nomination, processing
from .admission_fair_sharing import UsageLedger
from .fair_sharing import DRS, dominant_resource_share
from .lq_fair_sharing import LocalQueueFairSharing
from .preemption import Preemptor, Target
from .queues import (
    REQUEUE_FAILED_AFTER_NOMINATION,
    REQUEUE_GENERIC,
    ClusterQueueQueue,
)
from .quota import QuotaTree
from .records import (
    ADMITTED,
    FINISHED,
    PENDING,
    Entry,
    WorkloadRecord,
    admission_usage,
    admitted_record,
)
from .tas import TasState, TasUse

if TYPE_CHECKING:
    from ..contract import WorkloadArrays


class ReferenceEngine:
    """Kueue's scheduler over a Topology, in pure Python (contract.Engine)."""

    name = "reference"

    def __init__(self, topology: Topology, release_evictions: bool = True) -> None:
        self.topo = topology
        self.tree = QuotaTree(topology)
        # Topology Aware Scheduling: the TAS flavors' cache and snapshot (None without TAS flavors)
        self.tas = TasState(topology.tas) if topology.tas is not None else None
        self.release_evictions = release_evictions
        self.workloads: list[WorkloadRecord] = []
        self.cq_admitted: list[set[int]] = [set() for _ in range(topology.n_cq)]
        self.cq_generation: list[int] = [1] * topology.n_cq
        self.snapshot_generation = list(self.cq_generation)
        self.resource_of_fr = [r for _, r in topology.fr_pairs]
        # Admission fair sharing: the usage ledger, kept for the LocalQueues of
        # usage-based ClusterQueues (None without any).
        afs = topology.admission_fair_sharing
        self.afs: UsageLedger | None = None
        if afs is not None and any(cq.admission_fair_sharing for cq in topology.cluster_queues):
            self.afs = UsageLedger(afs, topology.resource_names)
        self.lq_fs = LocalQueueFairSharing(
            self.afs, topology, self.workloads, self.cq_admitted, self.resource_of_fr
        )
        self.cq_queues = [
            ClusterQueueQueue(
                cq.strategy,
                self._heap_key,
                self.lq_fs.queued_lq_usage if cq.admission_fair_sharing and self.afs is not None else None,
                equivalence_hashing=topology.gates.scheduling_equivalence_hashing,
            )
            for cq in topology.cluster_queues
        ]
        self.cycle = 0
        self.preemptor = Preemptor(self)
        self._staged: list[WorkloadSpec] | None = None  # stage_workloads
        # Queue-order timestamps moved by a preemption (reclaim while
        # borrowing, without PrioritySortingWithinCohort), to restore on admission.
        self.queue_ts_before_preemption: dict[int, int] = {}
        # Workloads deactivated while holding quota: their release queues nothing.
        self._deactivated: set[int] = set()
        # waitForPodsReady: workloads whose current admission is PodsReady
        self.pods_ready: set[int] = set()
        # pending workloads out of their queues until a time (requeueAt): (time, wid)
        self._holds: list[tuple[int, int]] = []
        # Settled cohort trees (run_until_settled): per quota-tree root, True
        # until a cycle would replay the last attempt of each of its heads
        # exactly, and changed nothing (the native engine's tree_dirty_ says
        # when); anything that changes a tree's queues, quota or admitted
        # workloads makes it dirty again (_touch_tree).
        self.tree_dirty = [True] * topology.n_nodes
        self._tree_roots = list(dict.fromkeys(self.tree.root_of(c) for c in range(topology.n_cq)))
        self._skip_settled = True

    # --- workloads in and out ----------------------------------------------------------------

    @property
    def skip_settled(self) -> bool:
        """run_until_settled skips the cycles of settled cohort trees (on; off
        runs every cycle in full, for tests that check it changes nothing)."""
        return self._skip_settled

    @skip_settled.setter
    def skip_settled(self, on: bool) -> None:
        self._skip_settled = on
        self.tree_dirty = [True] * self.topo.n_nodes

    def _touch_tree(self, cq: int) -> None:
        if cq >= 0:
            self.tree_dirty[self.tree.root_of(cq)] = True

    def _touch_head(self, cq: int, wid: int) -> None:
        """wid was pushed into cq's queue: its tree is touched only if it may
        be the head now (otherwise the next pop returns what it would have)."""
        if self.cq_queues[cq].may_be_head(wid):
            self._touch_tree(cq)

    def _trees_can_settle(self) -> bool:
        """Not with admission fair sharing (pops follow usages that move with
        time), Topology Aware Scheduling (the trees share the nodes' capacity),
        waitForPodsReady's blockAdmission (one head blocks the others of every
        tree) or saturated amounts (fits removes victims of any tree)."""
        return (
            self._skip_settled
            and self.afs is None
            and self.tas is None
            and not self.topo.block_admission_for_pods_ready
            and not self.tree.may_saturate()
        )

    def _heap_key(self, wid: int) -> tuple[object, ...]:
        s = self.workloads[wid].spec
        return (-s.priority, s.queue_ts, s.namespace, s.name)

    def add_workload(self, spec: WorkloadSpec) -> int:
        A.workload_spec(spec, self.topo)  # each call's arguments as the native engine checks them
        wid = len(self.workloads)
        rec = WorkloadRecord(spec) if spec.admission is None else admitted_record(spec, spec.admission)
        self.workloads.append(rec)
        if spec.admission is not None and spec.admission.cluster_queue >= 0:
            adm = spec.admission
            self.admit(wid, adm.cluster_queue, admission_usage(adm, self.topo), adm.time_ns)
            if spec.pods_ready:
                self.pods_ready.add(wid)
        elif spec.admission is not None:
            # Admitted to a ClusterQueue that does not exist: it holds nothing.
            rec.status = ADMITTED
        elif spec.cluster_queue >= 0:
            self.cq_queues[spec.cluster_queue].push(wid, spec.scheduling_hash)
            self._touch_head(spec.cluster_queue, wid)
        return wid

    def admit(self, wid: int, cq: int, usage: dict[int, int], time_ns: int, listed: bool = True) -> None:
        """Charge the workload's usage to cq. `listed`: it also joins cq's
        admitted list, where preemption candidates come from; an admission in
        a cycle joins it only when the cycle ends (run_cycle)."""
        rec = self.workloads[wid]
        rec.status = ADMITTED
        rec.admitted_cq = cq
        rec.usage = usage
        rec.admission_time = time_ns
        rec.last_state = None
        # The admission turns the Preempted condition False (workload.go
        # SetQuotaReservation): the creation time orders the workload again.
        rec.spec.queue_ts = self.queue_ts_before_preemption.pop(wid, rec.spec.queue_ts)
        self.tree.charge(cq, usage)
        if rec.tas_uses and self.tas is not None:
            self.tas.charge(rec.tas_uses, +1)
        if listed:
            self.cq_admitted[cq].add(wid)
        self._touch_tree(cq)

    def _release(self, wid: int) -> None:
        """Take an admitted workload's usage out of its ClusterQueue."""
        rec = self.workloads[wid]
        cq = rec.admitted_cq
        if cq >= 0 and wid in self.cq_admitted[cq]:
            self.tree.charge(cq, rec.usage, -1)
            if rec.tas_uses and self.tas is not None:
                self.tas.charge(rec.tas_uses, -1)
            self.cq_admitted[cq].discard(wid)
            self.cq_generation[cq] += 1
            self._touch_tree(cq)
        rec.usage = {}
        rec.tas_uses = []
        if rec.topology is not None:  # the placements go with the quota (pod sets stay listed)
            rec.topology = [None] * len(rec.topology)
        rec.admitted_cq = -1
        rec.evicting = False

    def remove_workload(self, wid: int) -> None:
        """A workload finished or was deleted: free its quota, drop it from its
        queue; its LocalQueue's parked workloads may fit now (_requeue_tree)."""
        rec = self.workloads[A.known(A.wid(wid), len(self.workloads))]
        self.queue_ts_before_preemption.pop(wid, None)
        self._deactivated.discard(wid)
        if rec.status == ADMITTED:
            self._release(wid)
        elif rec.spec.cluster_queue >= 0:
            self.cq_queues[rec.spec.cluster_queue].remove(wid)
        rec.status = FINISHED
        self._requeue_tree(rec.spec.cluster_queue)

    def set_pods_ready(self, wid: int, ready: bool) -> None:
        """The PodsReady condition of the workload's current admission (the
        simulator's pod start-up, the controller's job status)."""
        wid, ready = A.wid(wid), A.flag(ready, "ready")
        A.known(wid, len(self.workloads))
        if ready:
            self.pods_ready.add(wid)
        else:
            self.pods_ready.discard(wid)

    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None:
        """A pending workload leaves its queue until ``until_ns`` (its requeueAt:
        workload_controller.go queues it again once the backoff passed), then
        queues by ``queue_ts`` (the eviction or the creation time)."""
        wid, until_ns, queue_ts = A.wid(wid), A.i64(until_ns, "until_ns"), A.i64(queue_ts, "queue_ts")
        rec = self.workloads[A.known(wid, len(self.workloads))]
        if rec.status != PENDING:
            return
        if rec.spec.cluster_queue >= 0:
            self.cq_queues[rec.spec.cluster_queue].remove(wid)
            self._touch_tree(rec.spec.cluster_queue)
        # admitted again, it orders as before (Evicted=False: workload.go Ordering)
        self.queue_ts_before_preemption.setdefault(wid, rec.spec.queue_ts)
        rec.spec.queue_ts = queue_ts
        heapq.heappush(self._holds, (until_ns, wid))

    def end_holds(self, now_ns: int) -> None:
        """Held workloads whose time came queue again (also at every cycle's start)."""
        now_ns = A.i64(now_ns, "now_ns")
        while self._holds and self._holds[0][0] <= now_ns:
            _, wid = heapq.heappop(self._holds)
            rec = self.workloads[wid]
            if rec.status == PENDING and rec.spec.cluster_queue >= 0:
                self.cq_queues[rec.spec.cluster_queue].push(wid, rec.spec.scheduling_hash)
                self._touch_head(rec.spec.cluster_queue, wid)

    def pods_ready_for_all_admitted(self) -> bool:
        """cache.go PodsReadyForAllAdmittedWorkloads: every workload in the
        cache (holding quota in an existing ClusterQueue, evicting ones and this
        cycle's admissions included) is PodsReady."""
        return all(
            wid in self.pods_ready
            for wid, rec in enumerate(self.workloads)
            if rec.status == ADMITTED and rec.admitted_cq >= 0
        )

    def release_eviction(self, wid: int) -> None:
        """Controller mode: an evicted workload stopped; its quota is free and it is pending again."""
        rec = self.workloads[A.known(A.wid(wid), len(self.workloads))]
        if rec.status != ADMITTED or not rec.evicting:
            return
        self._release(wid)
        rec.status = PENDING
        self._requeue_tree(rec.spec.cluster_queue)
        if rec.spec.cluster_queue >= 0 and wid not in self._deactivated:
            self.cq_queues[rec.spec.cluster_queue].push(wid, rec.spec.scheduling_hash)

    def evict(self, wid: int, reason: str, message: str) -> None:
        """Evict an admitted workload for a reason other than preemption (HoldAndDrain)."""
        wid, reason, message = A.wid(wid), A.text(reason, "reason"), A.text(message, "message")
        rec = self.workloads[A.known(wid, len(self.workloads))]
        if rec.status != ADMITTED or rec.evicting:
            return
        self._evict_now(wid, self.cycle + 1, reason, message)  # called before the cycle it belongs to

    def evict_after_cycle(self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool) -> None:
        """An eviction a controller issued after the cycle just run (an
        admission check's Retry or Rejected): it belongs to that cycle.
        queue_ts_ns >= 0: the workload queues by it until admitted again
        (workload.go GetQueueOrderTimestamp, Evicted by AdmissionCheck);
        requeue False: it is deactivated and never queues again."""
        wid, reason, message = A.wid(wid), A.text(reason, "reason"), A.text(message, "message")
        queue_ts_ns, requeue = A.i64(queue_ts_ns, "queue_ts_ns"), A.flag(requeue, "requeue")
        rec = self.workloads[A.known(wid, len(self.workloads))]
        if rec.status != ADMITTED or rec.evicting:
            return
        if not requeue:
            self._deactivated.add(wid)
        if queue_ts_ns >= 0:
            self.queue_ts_before_preemption.setdefault(wid, rec.spec.queue_ts)
            rec.spec.queue_ts = queue_ts_ns
        self._evict_now(wid, self.cycle, reason, message)

    def _evict_now(self, wid: int, cycle: int, reason: str, message: str) -> None:
        """An eviction other than a preemption, belonging to ``cycle``."""
        rec = self.workloads[wid]
        self.set_evicting(wid)
        rec.evicted_cycle, rec.eviction_reason, rec.eviction_message = cycle, reason, message
        rec.preempted_by = -1
        if self.release_evictions:
            self.release_eviction(wid)

    def set_evicting(self, wid: int) -> None:
        """Eviction issued; the quota stays until release_eviction. Kueue's
        workload controller re-adds the workload (Evicted=True) to the cache
        at once, which moves its ClusterQueue's generation (clusterqueue.go
        deleteWorkload)."""
        rec = self.workloads[wid]
        rec.evicting = True
        if rec.admitted_cq >= 0:
            self.cq_generation[rec.admitted_cq] += 1
        self._touch_tree(rec.admitted_cq)

    def _requeue_tree(self, cq: int) -> None:
        """A workload of a LocalQueue of cq finished, was deleted (pending or
        not) or gave its quota back: the parked workloads of cq's cohort tree
        may fit now. Kueue's workload controller finds cq through the
        workload's LocalQueue, not its admission (manager.go
        QueueAssociatedInadmissibleWorkloadsAfter): a workload in no queue (its
        LocalQueue stopped or missing, cq -1) requeues nothing."""
        if cq < 0:
            return
        self._touch_tree(cq)
        root = self.tree.root_of(cq)
        cqs = self.tree.subtree_cqs(root) if root != cq else [cq]
        for c in cqs:
            self.cq_queues[c].queue_inadmissible(self._namespace_ok)

    def tas_snapshot(self, uses: list[tuple[TasUse, list[int]]], sign: int) -> None:
        """TAS usage that changes only the cycle's snapshot (a simulated removal)."""
        if self.tas is not None:
            self.tas.add_snapshot(uses, sign)

    def _scheduling_hash_of(self, wid: int) -> int:
        return self.workloads[wid].spec.scheduling_hash

    def _namespace_ok(self, wid: int) -> bool:
        return self.workloads[wid].spec.block != BLOCK_NAMESPACE_MISMATCH

    def drs(self, node: int) -> DRS:
        """The node's dominant resource share (fair sharing) on the working tree."""
        return dominant_resource_share(
            self.tree, node, self.topo.fair_weight[node], self.resource_of_fr, self.topo.resource_names
        )

    @property
    def evaluations(self) -> int:
        """Preemption candidate evaluations so far."""
        return self.preemptor.evaluations

    @property
    def n_workloads(self) -> int:
        return len(self.workloads)

    def workload_view(self, wid: int) -> WorkloadView:
        """The decision fields of one workload, in ids (the Cluster names them)."""
        return bulk.view_of(self.workloads[A.known(A.wid(wid), len(self.workloads))], self.cycle)

    def spec(self, wid: int) -> WorkloadSpec:
        return self.workloads[A.known(A.wid(wid), len(self.workloads))].spec

    def queue_state(self, cq: int) -> tuple[list[int], list[int], int]:
        """The pending side of ClusterQueue ``cq``: (wids in its heap, wids
        parked as inadmissible, the sticky head or -1), wids sorted."""
        q = self.cq_queues[A.cluster_queue(cq, self.topo)]
        return sorted(q.active), sorted(q.inadmissible), q.sticky

    @property
    def usage(self) -> np.ndarray:
        """Usage per node and flavor-resource (n_nodes x n_fr, the native
        engine's ``usage`` view) as Kueue's cache holds it."""
        out = np.zeros((self.topo.n_nodes, len(self.topo.fr_pairs)), dtype=np.int64)
        for node, row in enumerate(self.tree.cache_usage):
            for fr, v in row.items():
                out[node, fr] = v
        return out

    # --- the cycle ---------------------------------------------------------------------------------

    def run_cycle(self, now_ns: int, dirty_only: bool = False) -> CycleReport:
        """One cycle; ``dirty_only``: heads only from the cohort trees that
        have not settled (run_until_settled)."""
        now_ns = A.i64(now_ns, "now_ns")
        if self._holds:
            self.end_holds(now_ns)
        self.cycle += 1
        report = CycleReport(self.cycle)
        self.snapshot_generation = list(self.cq_generation)
        if self.afs is not None:
            self.lq_fs.sample_local_queues(now_ns)
        if self.tas is not None:
            self.tas.take_snapshot()
        # 1. heads
        heads = self._pop_heads(dirty_only)
        # the trees popped settle anew by the end of the cycle (below)
        settling = self._trees_can_settle()
        if settling:
            for root in self._tree_roots:
                if not dirty_only or self.tree_dirty[root]:
                    self.tree_dirty[root] = False
        report.heads = len(heads)
        # 2-3. nominate against the snapshot as it is at the start of the cycle
        entries: list[Entry] = []
        inadmissible: list[Entry] = []
        for wid, sticky, preemptor in heads:
            e, nominated = nomination.nominate(self, wid)
            e.is_preemptor = self.cq_queues[e.cq].preemptor == wid
            e.sticky_before, e.preemptor_before = sticky, preemptor
            (entries if nominated else inadmissible).append(e)
        # 4-5. order and process
        victims: dict[int, Target] = {}
        blocked = False  # the scheduler waits for PodsReady (waitForPodsReadyIfNeeded)
        for e in nomination.ordered(self, entries):
            if blocked:
                e.status = "waiting"
            else:
                blocked = processing.process(self, e, victims, report, now_ns)
        # 6. requeue the heads that were not admitted
        self._requeue_heads(entries + inadmissible, report)
        report.attempted.sort()
        report.parked.sort()
        self._end_cycle(report, now_ns)
        if settling:
            # a tree stays settled unless a head of it was admitted, evicted a
            # workload, parked workloads, was not processed (blocked), or its
            # attempt would not replay exactly; changes made during the cycle stand
            for e in entries + inadmissible:
                if not e.settled:
                    self.tree_dirty[self.tree.root_of(e.cq)] = True
        return report

    def _pop_heads(self, dirty_only: bool) -> list[tuple[int, int, int]]:
        """Step 1: the head of every active ClusterQueue (of the cohort trees
        not settled, with ``dirty_only``), each with its queue's sticky
        workload and preemptor as they were before the pop."""
        heads: list[tuple[int, int, int]] = []
        for cq, q in enumerate(self.cq_queues):
            if (
                self.topo.cluster_queues[cq].active
                and q.has_active()
                and (not dirty_only or self.tree_dirty[self.tree.root_of(cq)])
            ):
                before = (q.sticky, q.preemptor)
                wid = q.pop()
                if wid >= 0:
                    heads.append((wid, *before))
        return heads

    def _requeue_heads(self, heads: list[Entry], report: CycleReport) -> None:
        """Step 6: every head not admitted goes back to its queue (Kueue
        requeueAndUpdate), its attempt recorded in the report."""
        for e in heads:
            if e.status == "assumed":
                continue
            if e.status == "waiting":
                # never processed: no status written, back in the queue as it was
                self.cq_queues[e.cq].requeue(
                    e.wid, REQUEUE_FAILED_AFTER_NOMINATION, False, self._scheduling_hash_of
                )
                continue
            rec = self.workloads[e.wid]
            rec.attempted = True
            rec.reason, rec.message = e.reason, e.message
            report.attempted.append(e.wid)
            reason = e.requeue_reason
            if e.status == "skipped" and reason == REQUEUE_GENERIC:
                reason = REQUEUE_FAILED_AFTER_NOMINATION
            pending_flavors = rec.last_state is not None and rec.last_state.pending_flavors()
            q = self.cq_queues[e.cq]
            parked = q.requeue(e.wid, reason, pending_flavors, self._scheduling_hash_of)
            if parked:
                report.parked.append(e.wid)  # the head is the first one parked
            report.newly_parked += parked
            # (its admission or new evictions touched the tree)
            e.settled = (
                not parked
                and not e.resumed
                and not (self.topo.gates.flavor_fungibility and pending_flavors)
                and (q.sticky, q.preemptor) == (e.sticky_before, e.preemptor_before)
            )

    def _end_cycle(self, report: CycleReport, now_ns: int) -> None:
        """The cycle's end, and step 7."""
        # the snapshot is gone (capacity reserved for this cycle only is free
        # again); the cycle's admissions join the admitted lists
        self.tree.discard_snapshot()
        if self.tas is not None:
            self.tas.discard_snapshot()
        for wid in report.admitted:
            self.cq_admitted[self.workloads[wid].admitted_cq].add(wid)
        self.lq_fs.settle_entry_penalties(report.admitted, now_ns)
        # 7. evictions take effect (offline)
        if self.release_evictions:
            for wid in report.preempted:
                self.release_eviction(wid)

    # --- the bulk calls (bulk.py), admission fair sharing's ledger (lq_fair_sharing.py) ----------

    def add_workloads(self, arrays: WorkloadArrays) -> range:
        """Pending workloads from arrays, one add_workload each; the range of their wids."""
        A.workload_arrays(arrays, self.topo)  # all or nothing, as the native engine
        return self._add_all(bulk.specs_of_arrays(arrays, self.topo))

    def stage_workloads(self, arrays: WorkloadArrays) -> None:
        """Keep the rows, as specs, for add_staged (replacing any staged before)."""
        A.workload_arrays(arrays, self.topo)
        self._staged = bulk.specs_of_arrays(arrays, self.topo)

    def add_staged(self, lo: int, hi: int) -> range:
        """add_workloads of the staged rows [lo, hi)."""
        lo, hi = A.staged_rows(lo, hi, len(self._staged or ()))
        return self._add_all((self._staged or [])[lo:hi])

    def _add_all(self, specs: list[WorkloadSpec]) -> range:
        first = len(self.workloads)
        for spec in specs:
            self.add_workload(spec)
        return range(first, len(self.workloads))

    def clear_staged(self) -> None:
        self._staged = None

    def remove_workloads(self, wids: npt.ArrayLike) -> None:
        for w in A.wids(wids, len(self.workloads)):
            self.remove_workload(w)

    def run_cycles(
        self,
        start_ns: int,
        step_ns: int,
        max_cycles: int,
        until_stable: bool,
        attempted_mask: np.ndarray | None = None,
    ) -> CyclesRun:
        return bulk.run_cycles(self, start_ns, step_ns, max_cycles, until_stable, attempted_mask)

    def run_until_stable(self, now_ns: int, max_cycles: int) -> StableRun:
        return bulk.run_until_stable(self, now_ns, max_cycles)

    def run_until_settled(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> SettledRun:
        return bulk.run_until_settled(self, now_ns, max_cycles, unexplained)

    def decisions(self) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        return bulk.decisions(self.workloads, self.cycle)

    def reasons(self, wids: npt.ArrayLike) -> list[str]:
        return bulk.reasons(self.workloads, wids)

    def messages(self, wids: npt.ArrayLike) -> list[str]:
        return bulk.messages(self.workloads, wids)

    def queues(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        return bulk.queues(self.workloads, wids)

    def preempted_by(self, wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        return bulk.preempted_by(self.workloads, wids)

    def eviction_reasons(self, wids: npt.ArrayLike) -> npt.NDArray[np.int8]:
        return bulk.eviction_reasons(self.workloads, wids)

    def admitted_usage(self, wids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
        return bulk.admitted_usage(self.workloads, len(self.topo.fr_pairs), wids)

    def admitted_shapes(self, wids: npt.ArrayLike) -> tuple[npt.NDArray[np.int32], list[AdmittedShape]]:
        return bulk.admitted_shapes(self.workloads, wids)

    def afs_ledger_state(self) -> LedgerState:
        return self.lq_fs.afs_ledger_state()

    def restore_afs_ledger(self, state: LedgerState) -> None:
        self.lq_fs.restore_afs_ledger(state)
