"""Reading a Cluster's decisions: one Decision at a time (the engine's record of
the workload, with what the Cluster keeps between cycles: held by a backoff,
reserved or deactivated by admission checks, an input admission of reclaimed
pods) and in bulk (counts by state or by queue and state, and the common
decisions read from the engine's arrays).

Why both: a Decision carries everything (admission time, usage, placements,
check states) and costs a Python object per workload; the bulk reads give what
``schedule -o json`` and the counts need from the engine's arrays at a million
workloads. The bulk reads are not a second rule: every workload whose state the
Cluster keeps (``kept_mask``), and every one the arrays cannot tell, takes the
one-at-a-time path (BULK_OTHER, or ``decision(wid)`` in the counts)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ..api.model import TopologyAssignment, Workload, charged_assignments, charged_usage
from ..engine import arguments as A
from ..engine.contract import STATE_NAMES
from ..engine.inputs import AdmissionSpec, WorkloadSpec, queue_waiting_reason
from . import admission_checks as ac
from .check_ledger import AdmissionCheckLedger
from .decisions import (
    ADMITTED,
    BULK_ADMITTED,
    BULK_OTHER,
    BULK_PENDING,
    EVICTED,
    FINISHED,
    PENDING,
    RESERVED,
    BulkDecisions,
    Decision,
    HeldWorkload,
    LocalQueueFairSharing,
    PodSetDecision,
    WorkloadState,
)
from .handles import Clock, EngineHandle, WorkloadIndex
from .pods_ready import PodsReadyLedger


class DecisionReader:
    """Builds the Cluster's decisions from the engine and the ledgers. Owns
    what only the decisions need: the input admissions held with the usage of
    reclaimed pods released (reported as written, _as_written) and, after a
    rebuild, the placements of the admissions re-added (given_topology)."""

    def __init__(
        self,
        built: EngineHandle,
        index: WorkloadIndex,
        clock: Clock,
        checks: AdmissionCheckLedger,
        pods_ready: PodsReadyLedger,
    ) -> None:
        self._built = built
        self._index = index
        self._clock = clock
        self._checks = checks
        self._pods_ready = pods_ready
        self.reclaimed: set[str] = set()
        # Topology Aware Scheduling: the placements of the admissions added
        # after a rebuild (reconfigure), by key; else the input's are shown
        self.given_topology: dict[str, dict[str, TopologyAssignment | None]] = {}

    def local_queue_fair_sharing(self, key: str) -> LocalQueueFairSharing | None:
        """Admission fair sharing state of LocalQueue ``key`` (None: none)."""
        entry = self._built.engine.afs_ledger_state().get(key)
        if entry is None:
            return None
        return LocalQueueFairSharing(
            dict(entry["consumed"]),
            dict(entry["pending_penalty"]),
            entry["last_update_ns"],
            entry["usage"],
        )

    def decisions(self) -> list[Decision]:
        """Every workload's Decision, sorted by key."""
        wid = self._index.wid
        return [self.decision(wid[k]) for k in sorted(wid)]

    def pending_reasons(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """Cluster.pending_reasons (documented there)."""
        keys = [A.text(k, "pending_reasons: keys") for k in A.seq(keys, "pending_reasons: keys")]
        wids = np.fromiter((self._index.id(k) for k in keys), dtype=np.int64, count=len(keys))
        reasons, messages = self._built.engine.reasons(wids), self._built.engine.messages(wids)
        out = []
        for key, wid, reason, message in zip(keys, wids.tolist(), reasons, messages, strict=True):
            if not message or wid in self._pods_ready.held or key in self._checks.deactivated:
                d = self.decision(wid)
                reason, message = d.reason, d.message
            out.append((reason, message))
        return out

    def decision(self, wid: int) -> Decision:
        held = self._pods_ready.held.get(wid)
        d = self._held_decision(held) if held is not None else self._engine_decision(wid)
        if self._checks.states and not d.admission_checks:
            d.admission_checks = list(self._checks.states.get(self._index.keys[wid], ()))
        return d

    def _engine_decision(self, wid: int) -> Decision:
        rec = self._built.engine.workload_view(wid)
        spec = rec.spec
        topo = self._built.topology
        d = Decision(spec.namespace, spec.name, rec.state)
        if d.state == ADMITTED or (d.state == EVICTED and rec.holds_quota):
            # an evicted workload whose job has not stopped yet still holds its admission
            cq = rec.admitted_cq
            if cq >= 0:
                d.cluster_queue = topo.cluster_queues[cq].name
            elif spec.admission is not None:
                wl = self._built.state.workloads.get(f"{spec.namespace}/{spec.name}")
                d.cluster_queue = wl.admission.cluster_queue if wl and wl.admission else None
            d.admission_time_ns = rec.admission_time
            rows = zip(spec.pod_sets, rec.pod_sets, rec.resource_usage, strict=True)
            for ps, (count, flavors), usage in rows:
                d.pod_sets.append(
                    PodSetDecision(
                        ps.name,
                        count,
                        {topo.resource_names[r]: topo.flavor_names[f] for r, f in sorted(flavors.items())},
                        {topo.resource_names[r]: v for r, v in sorted(usage.items())},
                    )
                )
            adm = spec.admission
            if (
                adm is not None
                and rec.admission_time == adm.time_ns
                and self._index.keys[wid] in self.reclaimed
            ):
                self._as_written(d)
            if topo.tas is not None:
                self._set_topology_assignments(d, rec.topology)
            if d.state == ADMITTED:
                key = self._index.keys[wid]
                d.admission_checks = list(self._checks.states.get(key, ()))
                if key in self._checks.reserved:
                    d.state = RESERVED
                    d.reason, d.message = self._checks.unsatisfied_reason(), ac.UNSATISFIED_CHECKS_MESSAGE
                return d
        if d.state == EVICTED:
            d.reason = rec.eviction_reason
            d.message = rec.eviction_message
            by = rec.preempted_by
            if by >= 0:
                d.preempted_by = self._index.keys[by]
                d.preemption_reason = d.reason
                d.reason = "Preempted"
            return d
        if d.state == FINISHED:
            d.reason, d.message = "Finished", "The workload is finished"
            return d
        if self._index.keys[wid] in self._checks.deactivated:
            d.reason, d.message = ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return d
        d.reason, d.message = rec.reason, rec.message
        if not d.message:
            d.reason, d.message = self.waiting_reason(spec)
        return d

    def waiting_reason(self, spec: WorkloadSpec) -> tuple[str, str]:
        """Why a pending workload the scheduler never tried is still waiting."""
        if spec.cluster_queue < 0:
            # workload_controller.go resolveGranularUnadmittedQuotaReservedCondition
            if spec.unqueued_reason == ac.DEACTIVATED_MESSAGE:
                return ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return ("Misconfigured" if "exist" in spec.unqueued_reason else "Suspended"), spec.unqueued_reason
        return self._queue_waiting_reason(spec.cluster_queue)

    def _queue_waiting_reason(self, cq_id: int) -> tuple[str, str]:
        return queue_waiting_reason(self._built.topology.cluster_queues[cq_id])

    def _held_decision(self, held: HeldWorkload) -> Decision:
        key = self._index.keys[held.wid]
        ns, name = key.split("/", 1)
        if held.evicted_cycle == self._clock.cycles and self._clock.cycles > 0:
            return Decision(ns, name, EVICTED, reason=held.reason, message=held.message)
        if held.requeue_at_ns is None:  # deactivated: in no queue, as an inactive workload
            reason, message = self.waiting_reason(
                self._built.compiler.compile(self._built.state.workloads[key])
            )
            return Decision(ns, name, PENDING, reason=reason, message=message)
        # QuotaReserved=False as the job reconciler leaves an evicted workload
        reason = "Pending" if held.evicted_cycle >= 0 else held.reason
        return Decision(ns, name, PENDING, reason=reason, message=held.message)

    def _set_topology_assignments(
        self, d: Decision, placed: list[tuple[int, list[tuple[int, int]]] | None] | None
    ) -> None:
        """The decision's topologyAssignments: the engine's placements, named
        (the hostname alone when it is the lowest level, Kueue's buildAssignment),
        or, for the input's admission, the input's."""
        tas = self._built.topology.tas
        assert tas is not None
        if placed is None:
            given = self.given_topology.get(d.key)
            if given is None:
                wl = self._built.state.workloads.get(d.key)
                adm = wl.admission if wl is not None else None
                given = {p.name: p.topology_assignment for p in adm.pod_set_assignments} if adm else {}
            for psd in d.pod_sets:
                psd.topology_assignment = given.get(psd.name)
            return
        for psd, placement in zip(d.pod_sets, placed, strict=False):
            if placement is None:
                continue
            f, leaves = placement
            flavor = tas.flavors[f]
            names = [tas.level_names[lvl] for lvl in flavor.levels]
            first = len(names) - 1 if flavor.hostname_lowest else 0
            domains = tuple((flavor.leaf_values(leaf)[first:], pods) for leaf, pods in leaves)
            psd.topology_assignment = TopologyAssignment(tuple(names[first:]), domains)

    def _as_written(self, d: Decision) -> None:
        """The input's admission, held with the usage of its reclaimed pods
        released (charged_usage), is reported as the Workload's status holds
        it: Kueue does not rewrite status.admission when pods are reclaimed."""
        wl = self._built.state.workloads.get(d.key)
        adm = wl.admission if wl is not None else None
        if adm is None or adm.cluster_queue != d.cluster_queue:
            return
        reclaimable = self._built.topology.gates.reclaimable_pods
        given = {psa.name: psa for psa in adm.pod_set_assignments}
        assert wl is not None
        for psd in d.pod_sets:
            psa = given.get(psd.name)
            if psa is None or psa.flavors != psd.flavors:
                return
            charged = charged_usage(wl.pod_sets, psa.name, psa.count, psa.resource_usage, reclaimable)
            if charged != (psd.count, psd.resource_usage):
                return
        for psd in d.pod_sets:
            psa = given[psd.name]
            psd.count, psd.resource_usage = psa.count, dict(psa.resource_usage)

    def charged_less(self, wl: Workload | None) -> bool:
        """The Workload's admission is charged less than it says (charged_usage)."""
        if wl is None or wl.admission is None:
            return False
        reclaimable = self._built.topology.gates.reclaimable_pods
        return any(count != psa.count for psa, count, _ in charged_assignments(wl, reclaimable))

    def state_counts(self) -> dict[WorkloadState, int]:
        """Cluster.state_counts (documented there)."""
        wids, rest = self._bulk_countable()
        codes = np.bincount(self._built.engine.decisions()[0][wids], minlength=len(STATE_NAMES))
        counts: dict[WorkloadState, int] = {
            name: int(n) for name, n in zip(STATE_NAMES, codes.tolist(), strict=False) if n
        }
        for wid in rest:
            state = self.decision(wid).state
            counts[state] = counts.get(state, 0) + 1
        return counts

    def _bulk_countable(self) -> tuple[npt.NDArray[np.int64], list[int]]:
        """The wids whose decision the engine's state alone gives, and the
        rest: the workloads whose state the Cluster keeps between cycles
        (reserved or checked by admission checks, deactivated, held by
        waitForPodsReady's backoff, holding an input admission of reclaimed
        pods) need their decision."""
        wids = np.fromiter(self._index.wid.values(), dtype=np.int64, count=len(self._index.wid))
        mask = self._kept_mask(wids)
        if mask is None:
            return wids, []
        return wids[~mask], wids[mask].tolist()

    def _kept_mask(self, wids: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_] | None:
        """Which of ``wids`` are workloads whose state the Cluster keeps
        (_bulk_countable); None when there are none."""
        own = set(self._pods_ready.held)
        for keys in (self._checks.reserved, self._checks.deactivated, self._checks.states, self.reclaimed):
            own.update(self._index.wid[k] for k in keys if k in self._index.wid)
        if not own:
            return None
        return np.isin(wids, np.fromiter(own, dtype=np.int64, count=len(own)))

    def bulk_decisions(self) -> BulkDecisions:
        """Cluster.bulk_decisions (documented there)."""
        keys = sorted(self._index.wid)
        if keys == self._index.keys:  # none removed, all added by key (a built Cluster): wid i is keys[i]
            wids = np.arange(len(keys), dtype=np.int64)
        else:
            ids = self._index.wid
            wids = np.fromiter((ids[k] for k in keys), dtype=np.int64, count=len(keys))
        codes, admitted_cq, _ = self._built.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids]
        plain = ~kept if (kept := self._kept_mask(wids)) is not None else np.ones(len(wids), dtype=bool)
        kind = np.full(len(wids), BULK_OTHER, dtype=np.int8)
        shape = np.full(len(wids), -1, dtype=np.int32)
        admitted = plain & (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        if self._built.topology.tas is not None:  # placements are no part of the shapes: one decision each
            admitted[:] = False
        admitted_shape, raw_shapes = self._built.engine.admitted_shapes(wids[admitted])
        shape[admitted] = admitted_shape
        kind[admitted & (shape >= 0)] = BULK_ADMITTED
        pending = np.flatnonzero(plain & (codes == STATE_NAMES.index(PENDING)))
        pending_wids = wids[pending]
        reasons, messages = (
            self._built.engine.reasons(pending_wids),
            self._built.engine.messages(pending_wids),
        )
        # one the scheduler never tried has no message: why it waits in its queue (_waiting_reason)
        waiting = [self._queue_waiting_reason(cq) for cq in range(len(self._built.topology.cluster_queues))]
        queues = self._built.engine.queues(pending_wids).tolist()
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
        topo = self._built.topology
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
        """Cluster.queue_state_counts (documented there)."""
        names = [cq.name for cq in self._built.topology.cluster_queues]
        counts: dict[tuple[str | None, str], int] = {}

        def add(cqs: npt.NDArray[np.int64], state: str) -> None:
            ids, ns = np.unique(cqs, return_counts=True)
            for cq, n in zip(ids.tolist(), ns.tolist(), strict=True):
                key = (names[cq] if cq >= 0 else None, state)
                counts[key] = counts.get(key, 0) + n

        wids, own = self._bulk_countable()
        codes, admitted_cq, _ = self._built.engine.decisions()
        codes, admitted_cq = codes[wids], admitted_cq[wids].astype(np.int64)
        admitted = (codes == STATE_NAMES.index(ADMITTED)) & (admitted_cq >= 0)
        pending = codes == STATE_NAMES.index(PENDING)
        add(admitted_cq[admitted], ADMITTED)
        add(
            self._built.engine.queues(wids[pending]).astype(np.int64), PENDING
        )  # spec(w).cluster_queue, in bulk
        rest = wids[~(admitted | pending)]
        for wid in rest.tolist() + own:
            d = self.decision(wid)
            queue = d.cluster_queue
            if queue is None:
                cq = self._built.engine.spec(wid).cluster_queue
                queue = names[cq] if cq >= 0 else None
            counts[(queue, d.state)] = counts.get((queue, d.state), 0) + 1
        return counts

    def admission_of(self, d: Decision, spec: WorkloadSpec) -> AdmissionSpec | None:
        """The admission ``d`` holds, as the engine takes it back after a rebuild
        (reconfigure), with the usage of reclaimed pods released; under TAS its
        placements, which the decision shows from then on (given_topology)."""
        cq_ids = {cq.name: i for i, cq in enumerate(self._built.topology.cluster_queues)}
        rid = {n: i for i, n in enumerate(self._built.topology.resource_names)}
        fid = {n: i for i, n in enumerate(self._built.topology.flavor_names)}
        by_name = {ps.name: ps for ps in d.pod_sets}
        wl = self._built.state.workloads[d.key]
        reclaimable = self._built.topology.gates.reclaimable_pods
        pod_sets: list[tuple[int, list[tuple[int, int, int]]]] = []
        for ps in spec.pod_sets:
            psd = by_name.get(ps.name)
            if psd is None:
                pod_sets.append((0, []))
                continue
            count, usage = charged_usage(wl.pod_sets, psd.name, psd.count, psd.resource_usage, reclaimable)
            use = [(rid[r], fid[psd.flavors[r]] if r in psd.flavors else -1, v) for r, v in usage.items()]
            pod_sets.append((count, use))
        adm = AdmissionSpec(cq_ids.get(d.cluster_queue or "", -1), pod_sets, d.admission_time_ns or 0)
        if self._built.topology.tas is not None:  # the placements it holds, as the input's would be
            given = {p.name: p.topology_assignment for p in d.pod_sets}
            self.given_topology[d.key] = given
            adm.tas = [
                self._built.compiler.tas_uses(psd.flavors, given.get(ps.name))
                if (psd := by_name.get(ps.name))
                else []
                for ps in spec.pod_sets
            ]
        return adm
