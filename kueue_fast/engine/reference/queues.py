"""Pending workloads of one ClusterQueue: the heap, the inadmissible set, requeueing.

Same rules as kueue pkg/cache/queue/cluster_queue.go:

* heap order: the sticky preemptor (BestEffortFIFO) first, then higher
  priority, then older queue-order timestamp, then namespace and name; the
  sticky workload stays sticky until it leaves the queue or another workload
  of the queue issues preemptions, whatever it is later requeued for;
* a head that is not admitted goes back to the heap ("immediate") or to the
  inadmissible set, by queueing strategy and requeue reason (RequeueIfNotPresent);
* under BestEffortFIFO a head parked for NoFit or PreemptionNoCandidates parks
  every heap workload with the same scheduling hash too, and later arrivals
  with that hash go straight to the inadmissible set, until the next requeue
  of inadmissible workloads (SchedulingEquivalenceHashing);
* with admission fair sharing (queueOrderingFunc), the LocalQueue usage of
  each workload comes first, lower first, and only then the order above
  (sticky workload included): the head is the minimum under the usages of the
  moment it is taken.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

STRICT_FIFO = 0
BEST_EFFORT_FIFO = 1

# Requeue reasons (kueue RequeueReason).
REQUEUE_GENERIC = ""
REQUEUE_FAILED_AFTER_NOMINATION = "FailedAfterNomination"
REQUEUE_NAMESPACE_MISMATCH = "NamespaceMismatch"
REQUEUE_PENDING_PREEMPTION = "PendingPreemption"
REQUEUE_PREEMPTION_FAILED = "PreemptionFailed"
REQUEUE_NO_FIT = "NoFit"
REQUEUE_PREEMPTION_NO_CANDIDATES = "PreemptionNoCandidates"


class ClusterQueueQueue:
    """The pending side of one ClusterQueue."""

    def __init__(
        self,
        strategy: int,
        order_key: Callable[[int], tuple[object, ...]],
        afs_usage: Callable[[int], float] | None = None,
        equivalence_hashing: bool = True,
    ) -> None:
        self.strategy = strategy
        # SchedulingEquivalenceHashing (gate): park equivalent workloads together.
        self.equivalence_hashing = equivalence_hashing
        self._order_key = order_key
        # Admission fair sharing: the usage of a workload's LocalQueue. Usages
        # change between pops (sampling, entry penalties), so the head is
        # searched over the active workloads instead of kept in a heap; Kueue
        # re-heapifies for the same reason (ClusterQueue.pop with pending
        # penalties, RebuildClusterQueue after each LocalQueue sample).
        self._afs_usage = afs_usage
        self._heap: list[tuple[tuple[object, ...], int]] = []
        self.active: set[int] = set()
        self.inadmissible: set[int] = set()
        self.parked_hashes: set[int] = set()
        # The sticky workload (BestEffortFIFO): the last one requeued after issuing
        # preemptions (or deferred); it is the head whenever it is in the heap.
        self.sticky: int = -1
        # The workload waiting for the preemptions it issued, under either
        # strategy (Kueue preemptorWorkload; read by PrioritizePreemptorWorkloads).
        self.preemptor: int = -1
        self.pop_cycle = 0
        self.queue_inadmissible_cycle = -1

    def __len__(self) -> int:
        return len(self.active) + len(self.inadmissible)

    def has_active(self) -> bool:
        return bool(self.active)

    def _push_active(self, wid: int) -> None:
        if wid in self.active:
            return
        self.active.add(wid)
        if self._afs_usage is None:
            heapq.heappush(self._heap, (self._order_key(wid), wid))

    def push(self, wid: int, scheduling_hash: int) -> None:
        """A new or updated pending workload (Kueue PushOrUpdate)."""
        self.inadmissible.discard(wid)
        if (
            self.strategy == BEST_EFFORT_FIFO
            and wid not in self.active
            and scheduling_hash in self.parked_hashes
        ):
            self.inadmissible.add(wid)
            return
        self._push_active(wid)

    def may_be_head(self, wid: int) -> bool:
        """Could the next pop return ``wid`` (just pushed)? False only when it
        was parked or another workload is sure to come first (the sticky one,
        or a live top entry): then the head is what it was before the push."""
        if self._afs_usage is not None:
            return True
        if wid not in self.active:
            return False
        if self.sticky >= 0 and self.sticky in self.active:
            return self.sticky == wid
        key, top = self._heap[0]
        return top == wid or top not in self.active or key != self._order_key(top)

    def pop(self) -> int:
        """The head, removed from the heap, or -1."""
        self.pop_cycle += 1
        if self._afs_usage is not None:
            return self._pop_by_usage(self._afs_usage)
        if self.sticky >= 0 and self.sticky in self.active:
            wid = self.sticky
            self.active.discard(wid)
            return wid
        while self._heap:
            key, wid = heapq.heappop(self._heap)
            # an entry left by a workload that left the queue and came back with
            # another queue-order timestamp (waitForPodsReady's hold) is stale,
            # as in queues.cpp
            if wid in self.active and key == self._order_key(wid):
                self.active.discard(wid)
                return wid
        return -1

    def _pop_by_usage(self, usage: Callable[[int], float]) -> int:
        """Kueue queueOrderingFunc: lower LocalQueue usage first, then
        baseCompareFunc (sticky, priority, queue order timestamp, name)."""
        if not self.active:
            return -1

        def key(w: int) -> tuple[object, ...]:
            return (usage(w), 0 if w == self.sticky else 1, *self._order_key(w))

        wid = min(self.active, key=key)
        self.active.discard(wid)
        return wid

    def remove(self, wid: int) -> None:
        """The workload left the queue: deleted or finished (Kueue ClusterQueue.delete)."""
        self.active.discard(wid)
        self.inadmissible.discard(wid)
        self.clear_preemptor(wid)

    def clear_preemptor(self, wid: int) -> None:
        """The workload left the queue (admitted, deleted): it is no longer sticky.

        Kueue ClusterQueue.delete is the only place that clears the sticky workload."""
        if self.sticky == wid:
            self.sticky = -1
        if self.preemptor == wid:
            self.preemptor = -1

    def requeue(
        self,
        wid: int,
        reason: str,
        pending_flavors: bool,
        hash_of: Callable[[int], int],
    ) -> int:
        """A head that was not admitted (Kueue RequeueIfNotPresent).

        Returns how many workloads were newly parked as inadmissible (the head
        and the equivalent workloads parked with it)."""
        if self.strategy == STRICT_FIFO:
            immediate = reason != REQUEUE_NAMESPACE_MISMATCH
        else:
            immediate = reason in (
                REQUEUE_FAILED_AFTER_NOMINATION,
                REQUEUE_PENDING_PREEMPTION,
                REQUEUE_PREEMPTION_FAILED,
            )
        # Kueue requeueIfNotPresent (ff69552): requeued with PendingPreemption, the
        # workload becomes the sticky head of a BestEffortFIFO queue. Requeued for
        # any other reason (skipped, NoFit, no candidates) it stays sticky: only
        # leaving the queue (clear_preemptor) or another workload issuing
        # preemptions ends it. (Clearing on other reasons came with kueue#14863,
        # after ff69552.)
        if reason == REQUEUE_PENDING_PREEMPTION:
            self.preemptor = wid
            if self.strategy == BEST_EFFORT_FIFO:
                self.sticky = wid
        if immediate or self.queue_inadmissible_cycle >= self.pop_cycle or pending_flavors:
            self.inadmissible.discard(wid)
            self._push_active(wid)
            return 0
        if wid in self.inadmissible or wid in self.active:
            return 0
        self.inadmissible.add(wid)
        parked = 1
        if (
            self.equivalence_hashing
            and self.strategy == BEST_EFFORT_FIFO
            and reason in (REQUEUE_NO_FIT, REQUEUE_PREEMPTION_NO_CANDIDATES)
        ):
            h = hash_of(wid)
            self.parked_hashes.add(h)
            for other in [w for w in self.active if hash_of(w) == h]:
                self.active.discard(other)
                self.inadmissible.add(other)
                parked += 1
        return parked

    def queue_inadmissible(self, namespace_ok: Callable[[int], bool]) -> int:
        """Move parked workloads back to the heap (Kueue queueInadmissibleWorkloads).

        Workloads whose namespace no longer matches the selector stay parked."""
        self.queue_inadmissible_cycle = self.pop_cycle
        self.parked_hashes.clear()
        moved = 0
        for wid in sorted(self.inadmissible):
            if namespace_ok(wid):
                self.inadmissible.discard(wid)
                self._push_active(wid)
                moved += 1
        return moved
