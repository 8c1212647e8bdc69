"""The reference engine's admission fair sharing upkeep around the cycle: the
LocalQueue reconciler samples the usage ledger (localqueue_controller.go
Reconcile), the scheduler pushes entry penalties on assume (scheduler.go
updateEntryPenalty) and the workload controller settles them on admission
(workload_controller.go updateAfsConsumedUsage). The ledger itself is
admission_fair_sharing.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import arguments as A
from ..inputs import LedgerRow, LedgerState, WorkloadSpec, afs_ledger_entries, afs_ledger_state
from . import amount
from .admission_fair_sharing import Amounts, UsageLedger
from .records import ADMITTED

if TYPE_CHECKING:
    from ..inputs import Topology
    from .records import WorkloadRecord


class LocalQueueFairSharing:
    """The engine's admission fair sharing upkeep: the ledger (None without
    admission fair sharing) over the engine's workloads and admitted lists,
    which it reads and never changes."""

    def __init__(
        self,
        ledger: UsageLedger | None,
        topo: Topology,
        workloads: list[WorkloadRecord],
        cq_admitted: list[set[int]],
        resource_of_fr: list[int],
    ) -> None:
        self.afs = ledger
        self.topo = topo
        self.workloads = workloads
        self.cq_admitted = cq_admitted
        self._resource_of_fr = resource_of_fr
        # the LocalQueues of usage-based ClusterQueues, and their usages as of this cycle's snapshot
        self._afs_lqs: list[int] = []
        if ledger is not None:
            self._afs_lqs = [
                i
                for i, lq in enumerate(topo.local_queues)
                if lq.cluster_queue >= 0 and topo.cluster_queues[lq.cluster_queue].admission_fair_sharing
            ]
        self._lq_usage: dict[int, float] = {}

    def _lq_admitted_usage(self, lq: int) -> Amounts:
        """The LocalQueue's admitted usage per resource, flavors summed (the
        scheduler cache's LocalQueue.GetAdmittedUsage)."""
        assert self.afs is not None
        per_resource: dict[int, int] = {}
        for w in self.cq_admitted[self.topo.local_queues[lq].cluster_queue]:
            rec = self.workloads[w]
            if rec.spec.local_queue != lq:
                continue
            for fr, v in rec.usage.items():
                r = self._resource_of_fr[fr]
                per_resource[r] = per_resource.get(r, 0) + v
        return self.afs.to_nanos(per_resource)

    def sample_local_queues(self, now_ns: int) -> None:
        """The LocalQueue reconciler (localqueue_controller.go Reconcile).

        Kueue reconciles a LocalQueue when it is created, on its workloads'
        events and RequeueAfter the rest of the sampling interval; every
        reconcile seeds a missing ledger entry and otherwise samples only once
        the interval has passed since the entry's LastUpdate (or while a penalty
        is pending). Offline that is: at the start of every cycle, each
        LocalQueue whose interval has elapsed by `now` is sampled at `now`.
        Stopped LocalQueues and LocalQueues of inactive ClusterQueues are not
        reconciled past their status, as in Kueue."""
        assert self.afs is not None
        for lq in self._afs_lqs:
            spec = self.topo.local_queues[lq]
            if spec.stopped or not self.topo.cluster_queues[spec.cluster_queue].active:
                continue
            if not self.afs.seeded(lq):
                self.afs.seed(lq, dict(spec.consumed), now_ns)
            elif not self.afs.due(lq, now_ns):
                continue
            self.afs.sample(lq, self._lq_admitted_usage(lq), now_ns)
        self._lq_usage = {lq: self._local_queue_usage(lq) for lq in self._afs_lqs}

    def _local_queue_usage(self, lq: int) -> float:
        """workload.Info.ComputeLocalQueueFSUsage; a missing LocalQueue has weight 1."""
        assert self.afs is not None
        if lq < 0:
            return self.afs.usage(lq, 1.0)
        return self.afs.usage(lq, self.topo.local_queues[lq].fair_weight)

    def queued_lq_usage(self, wid: int) -> float:
        lq = self.workloads[wid].spec.local_queue
        usage = self._lq_usage.get(lq)
        return self._local_queue_usage(lq) if usage is None else usage

    def lq_fs_usage(self, wid: int) -> float | None:
        """workload.Info.LocalQueueFSUsage of an admitted workload: set in the
        snapshot for the workloads of usage-based ClusterQueues only."""
        cq = self.workloads[wid].admitted_cq
        if self.afs is None or cq < 0 or not self.topo.cluster_queues[cq].admission_fair_sharing:
            return None
        return self.queued_lq_usage(wid)

    def afs_ledger_state(self) -> LedgerState:
        """The usage ledger by LocalQueue name, resources by name (to carry it
        over a rebuild of the engine, and for inspection): history, pending
        penalties (nanos), LastUpdate and the current usage."""
        if self.afs is None:
            return {}
        rows: list[LedgerRow] = [
            (
                lq,
                sorted(e.resources.items()),
                sorted(e.pending_penalty().items()),
                e.last_update_ns,
                self._local_queue_usage(lq),
            )
            for lq, e in self.afs.entries.items()
        ]
        return afs_ledger_state(self.topo, rows)

    def restore_afs_ledger(self, state: LedgerState) -> None:
        """Take over a ledger from afs_ledger_state (compiler.afs_ledger_entries)."""
        A.expect_type(state, dict, "restore_afs_ledger")
        if self.afs is None:
            return
        for lq, consumed, last_update in afs_ledger_entries(self.topo, state):
            self.afs.seed(lq, dict(consumed), last_update)

    def _total_requests(self, spec: WorkloadSpec) -> Amounts:
        """workload.Info.SumTotalRequests: per-pod requests times counts, summed
        over pod sets (no `pods`, which only the flavor assigner adds)."""
        assert self.afs is not None
        out: dict[int, int] = {}
        for ps in spec.pod_sets:
            for r, per_pod in ps.requests:
                out[r] = out.get(r, 0) + amount.saturating_mul(per_pod, ps.count)
        return self.afs.to_nanos(out)

    def push_entry_penalty(self, wid: int, cq: int, now_ns: int) -> None:
        """Scheduler.updateEntryPenalty on assume, when shouldApplyEntryPenalty:
        admission fair sharing is on for the ClusterQueue and the workload did
        not hold a quota reservation (always true offline)."""
        if self.afs is None or not self.topo.cluster_queues[cq].admission_fair_sharing:
            return
        spec = self.workloads[wid].spec
        penalty = self.afs.entry_penalty(self._total_requests(spec))
        self.afs.push_penalty(spec.local_queue, wid, penalty, now_ns)

    def settle_entry_penalties(self, admitted: list[int], now_ns: int) -> None:
        """The workload controller sees the admissions of the cycle
        (updateAfsConsumedUsage on the transition into Admitted)."""
        if self.afs is None:
            return
        for wid in admitted:
            rec = self.workloads[wid]
            lq = rec.spec.local_queue
            if rec.status != ADMITTED or not self.topo.cluster_queues[rec.admitted_cq].admission_fair_sharing:
                continue
            admitted_usage = self._lq_admitted_usage(lq) if lq >= 0 else {}
            self.afs.settle(lq, wid, admitted_usage, now_ns)
