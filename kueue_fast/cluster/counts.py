"""The Cluster's decisions in bulk: counts by state or by queue and state, and
the common decisions, read from the engine's arrays without a Decision each."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..engine.contract import STATE_NAMES
from .base import ClusterBase
from .decisions import (
    ADMITTED,
    BULK_ADMITTED,
    BULK_OTHER,
    BULK_PENDING,
    PENDING,
    BulkDecisions,
    PodSetDecision,
    WorkloadState,
)


class BulkCountsMixin(ClusterBase):
    def state_counts(self) -> dict[WorkloadState, int]:
        """How many of decisions() are in each state, without making them (the
        engine's state codes, read in bulk)."""
        wids, rest = self._bulk_countable()
        codes = np.bincount(self.engine.decisions()[0][wids], minlength=len(STATE_NAMES))
        counts: dict[WorkloadState, int] = {
            name: int(n) for name, n in zip(STATE_NAMES, codes.tolist(), strict=False) if n
        }
        for wid in rest:
            state = self._decision(wid).state
            counts[state] = counts.get(state, 0) + 1
        return counts

    def _bulk_countable(self) -> tuple[npt.NDArray[np.int64], list[int]]:
        """The wids whose decision the engine's state alone gives, and the
        rest: the workloads whose state the Cluster keeps between cycles
        (reserved or checked by admission checks, deactivated, held by
        waitForPodsReady's backoff, holding an input admission of reclaimed
        pods) need their decision."""
        wids = np.fromiter(self._wid.values(), dtype=np.int64, count=len(self._wid))
        mask = self._kept_mask(wids)
        if mask is None:
            return wids, []
        return wids[~mask], wids[mask].tolist()

    def _kept_mask(self, wids: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
        """Which of ``wids`` are workloads whose state the Cluster keeps
        (_bulk_countable); None when there are none."""
        own = set(self._held)
        for keys in (self._reserved, self._deactivated, self._checks, self._reclaimed):
            own.update(self._wid[k] for k in keys if k in self._wid)
        if not own:
            return None
        return np.isin(wids, np.fromiter(own, dtype=np.int64, count=len(own)))

    def bulk_decisions(self) -> BulkDecisions:
        """decisions() from the engine's arrays where they tell (BulkDecisions)."""
        keys = sorted(self._wid)
        if keys == self._keys:  # none removed, all added by key (a built Cluster): wid i is keys[i]
            wids = np.arange(len(keys), dtype=np.int64)
        else:
            ids = self._wid
            wids = np.fromiter((ids[k] for k in keys), dtype=np.int64, count=len(keys))
        codes, admitted_cq, _ = self.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids]
        plain = ~kept if (kept := self._kept_mask(wids)) is not None else np.ones(len(wids), dtype=bool)
        kind = np.full(len(wids), BULK_OTHER, dtype=np.int8)
        shape = np.full(len(wids), -1, dtype=np.int32)
        admitted = plain & (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        if self.topology.tas is not None:  # placements are no part of the shapes: one decision each
            admitted[:] = False
        admitted_shape, raw_shapes = self.engine.admitted_shapes(wids[admitted])
        shape[admitted] = admitted_shape
        kind[admitted & (shape >= 0)] = BULK_ADMITTED
        pending = np.flatnonzero(plain & (codes == STATE_NAMES.index(PENDING)))
        pending_wids = wids[pending]
        reasons, messages = self.engine.reasons(pending_wids), self.engine.messages(pending_wids)
        # one the scheduler never tried has no message: why it waits in its queue (_waiting_reason)
        waiting = [self._queue_waiting_reason(cq) for cq in range(len(self.topology.cluster_queues))]
        queues = self.engine.queues(pending_wids).tolist()
        unqueued = []  # in no queue: their decision says why
        for i, (message, cq) in enumerate(zip(messages, queues, strict=True)):
            if not message:
                if cq < 0:
                    unqueued.append(i)
                else:
                    reasons[i], messages[i] = waiting[cq]
        kind[pending] = BULK_PENDING
        if unqueued:
            kind[pending[unqueued]] = BULK_OTHER
            for i in reversed(unqueued):
                del reasons[i], messages[i]
        topo = self.topology
        shapes = [
            (
                topo.cluster_queues[cq].name,
                [
                    PodSetDecision(
                        name,
                        count,
                        {topo.resource_names[r]: topo.flavor_names[f] for r, f in sorted(flavors)},
                    )
                    for name, count, flavors in pod_sets
                ],
            )
            for cq, pod_sets in raw_shapes
        ]
        return BulkDecisions(
            keys,
            kind.tolist(),
            shape.tolist(),
            shapes,
            reasons,
            messages,
        )

    def queue_state_counts(self) -> dict[tuple[str | None, str], int]:
        """How many of decisions() are in each (ClusterQueue the workload is
        admitted to, else the one it queues in, or None; state), without
        making them where the native engine's arrays tell (pending, admitted
        to a ClusterQueue of the topology); the rest one decision at a time."""
        names = [cq.name for cq in self.topology.cluster_queues]
        counts: dict[tuple[str | None, str], int] = {}

        def add(cqs: npt.NDArray[np.int64], state: str) -> None:
            ids, ns = np.unique(cqs, return_counts=True)
            for cq, n in zip(ids.tolist(), ns.tolist(), strict=True):
                key = (names[cq] if cq >= 0 else None, state)
                counts[key] = counts.get(key, 0) + n

        wids, own = self._bulk_countable()
        codes, admitted_cq, _ = self.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids].astype(np.int64)
        admitted = (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        pending = codes == STATE_NAMES.index(PENDING)
        add(admitted_cq[admitted], ADMITTED)
        add(self.engine.queues(wids[pending]).astype(np.int64), PENDING)  # spec(w).cluster_queue, in bulk
        rest = wids[~(admitted | pending)]
        for wid in rest.tolist() + own:
            d = self._decision(wid)
            queue = d.cluster_queue
            if queue is None:
                cq = self.engine.spec(wid).cluster_queue
                queue = names[cq] if cq >= 0 else None
            counts[(queue, d.state)] = counts.get((queue, d.state), 0) + 1
        return counts
