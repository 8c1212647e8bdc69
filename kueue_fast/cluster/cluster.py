"""The embedding API: Kueue's scheduler over a set of Kueue objects.

    >>> from kueue_fast import Cluster
    >>> cluster = Cluster.from_files(["queues.yaml", "workloads.yaml"])
    >>> cluster.run_until_stable()
    >>> cluster.decision("team-a/job-1").state
    'admitted'

A Cluster owns one engine (native by default, or the pure-Python reference)
and the name <-> id mapping around it. Workloads can be added and removed
between cycles; configuration changes rebuild the engine's topology while
keeping every workload and its admission.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from .._gc import no_cyclic_gc
from ..api.errors import EngineError, NotStableError
from ..api.model import (
    AdmissionCheckState,
    ClusterState,
    TopologyAssignment,
    Workload,
    charged_assignments,
    charged_usage,
)
from ..engine import arguments as A
from ..engine.contract import ENGINES, Engine, WorkloadView
from ..engine.inputs import AdmissionSpec, CyclesRun, WorkloadSpec, compile_topology, queue_waiting_reason
from ..engine.select import choose_engine, make_engine
from ..engine.workload_scan import WorkloadScan, workload_scan
from ..engine.workloads import WorkloadCompiler
from . import admission_checks as ac
from .check_ledger import AdmissionChecksMixin
from .counts import BulkCountsMixin
from .decisions import (
    ADMITTED,
    BULK_ADMITTED,
    BULK_OTHER,
    BULK_PENDING,
    EVICTED,
    FINISHED,
    NS_PER_S,
    PENDING,
    RESERVED,
    BulkDecisions,
    CycleResult,
    Decision,
    EvictionRecord,
    HeldWorkload,
    LocalQueueFairSharing,
    PodSetDecision,
    PodsReadyState,
    WorkloadHistory,
)
from .pods_ready import PodsReadyMixin

# the names other modules import from here (the records live in cluster/decisions.py)
__all__ = [
    "ADMITTED",
    "BULK_ADMITTED",
    "BULK_OTHER",
    "BULK_PENDING",
    "ENGINES",
    "EVICTED",
    "FINISHED",
    "NS_PER_S",
    "PENDING",
    "RESERVED",
    "BulkDecisions",
    "Cluster",
    "CycleResult",
    "Decision",
    "EvictionRecord",
    "HeldWorkload",
    "LocalQueueFairSharing",
    "PodSetDecision",
    "PodsReadyState",
    "WorkloadHistory",
]


class Cluster(AdmissionChecksMixin, PodsReadyMixin, BulkCountsMixin):
    """Kueue's scheduler over a ClusterState; its admission checks, waitForPodsReady
    and bulk counts bookkeeping live in the mixins (cluster/base.py says which)."""

    def __init__(
        self,
        state: ClusterState,
        engine: str | None = None,
        *,
        release_evictions: bool = True,
        start_time_ns: int | None = None,
    ) -> None:
        """release_evictions: quota of an evicted workload is released at the end
        of the cycle (offline, the scheduling contract); the controller passes
        False and calls release_eviction() once the workload's job stopped."""
        A.expect_type(state, ClusterState, "Cluster")
        if start_time_ns is not None:
            A.i64(start_time_ns, "start_time_ns")
        self.engine_name, note = choose_engine(engine)
        if note:
            warnings.warn(note, RuntimeWarning, stacklevel=2)
        self.release_evictions = release_evictions
        self.state = state
        self.cycles = 0
        self._wid: dict[str, int] = {}
        self._keys: list[str] = []
        # history (bounded per workload): first attempt time by wid (-1: never
        # tried; grown to the wids in use by _first_attempts), evictions
        self._first_attempt_ns: npt.NDArray[np.int64] = np.full(0, -1, dtype=np.int64)
        self._evictions: dict[str, WorkloadHistory] = {}
        scan = workload_scan(state.workloads)  # one pass over every workload for what follows
        self._clock_ns = start_time_ns if start_time_ns is not None else _start_time(scan.latest_ns)
        self.start_ns = self._clock_ns  # the clock before the first cycle
        # waitForPodsReady: PodsReady conditions by key, requeue counts, and
        # the workloads held out of their queues (by old wid)
        self._pods_ready: dict[str, PodsReadyState] = {}
        self._requeue_count: dict[str, int] = {}
        # set at a timeout eviction, until it is held: (requeueAt or None, eviction time)
        self._requeue_at: dict[str, tuple[int | None, int]] = {}
        self._held: dict[int, HeldWorkload] = {}
        # admission checks (cluster/admission_checks.py): each workload's check
        # states, those holding quota but not admitted yet, those with a
        # Retry or Rejected state still to act on, and those deactivated by one
        self._checks: dict[str, list[AdmissionCheckState]] = {}
        self._reserved: set[str] = set()
        self._check_failures: set[str] = set()
        self._deactivated: set[str] = set()
        # input admissions held with the usage of reclaimed pods released: their
        # decisions report the admission as written (_as_written)
        self._reclaimed: set[str] = set()
        # Topology Aware Scheduling: the placements of the admissions added
        # after a rebuild (reconfigure), by key; else the input's are shown
        self._given_topology: dict[str, dict[str, TopologyAssignment | None]] = {}
        self._build(state, scan)
        # the topology already knows every resource and flavor of the state's workloads;
        # wids follow the sorted keys: the plain pending workloads are staged in the engine
        # as arrays once and each run of them added from there (_add_staged), the others
        # (admitted...) one WorkloadSpec at a time, compiled from the batch's memos
        keys = sorted(state.workloads)
        batch = self.compiler.pending_batch()
        with no_cyclic_gc():
            if batch is None:
                for key in keys:
                    self._add_compiled_input(key, state.workloads[key])
            else:
                batch.prepare(state.workloads)
                rows = batch.rows(keys)
                others = np.flatnonzero(rows < 0).tolist()
                if len(others) < len(keys):
                    self.engine.stage_workloads(batch.arrays(rows[rows >= 0]))
                start = 0
                for n_before, i in enumerate([*others, len(keys)]):
                    if start < i:  # keys[start] is staged row start - n_before
                        self._add_staged(keys[start:i], start - n_before)
                    if i < len(keys):
                        key = keys[i]
                        self._add_compiled_input(key, state.workloads[key], batch.compile)
                    start = i + 1
                self.engine.clear_staged()
        self._read_pods_ready_inputs(state, scan.timed)

    # --- construction ----------------------------------------------------------------------

    @classmethod
    def from_files(
        cls,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        engine: str | None = None,
        **kw: Any,
    ) -> Cluster:
        """A Cluster of the objects in these YAML or JSON files (a path, or
        several; a directory reads its manifests, as ``kubectl apply -f``),
        validated as ``kueue-fast schedule`` validates them: bad input raises
        :class:`~kueue_fast.api.errors.InputError`. ``engine``: ``"native"`` or
        ``"reference"`` (default: native, or ``$KUEUE_FAST_ENGINE``); ``kw`` go
        to :class:`Cluster`."""
        from ..loader import load

        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        elif not isinstance(paths, Sequence):
            raise EngineError(f"from_files: expected file paths, got {type(paths).__name__}")
        return cls(load([os.fspath(p) for p in paths]), engine, **kw)

    @classmethod
    def from_objects(cls, objects: Iterable[dict[str, Any]], engine: str | None = None, **kw: Any) -> Cluster:
        """A Cluster of these Kubernetes objects (dicts as ``yaml.safe_load``
        gives them), validated as :meth:`from_files` does. The dicts are kept
        (``Workload.raw``): treat them as read-only afterwards, or give copies."""
        from ..loader import build_state

        if isinstance(objects, (dict, str, bytes)) or not isinstance(objects, Iterable):
            raise EngineError(f"from_objects: expected objects, got {type(objects).__name__}")
        return cls(build_state(objects), engine, **kw)

    def _build(self, state: ClusterState, scan: WorkloadScan | None = None) -> None:
        self._check_cqs = {name for name, cq in state.cluster_queues.items() if cq.admission_checks}
        self.topology = compile_topology(state, scan=scan)
        self.compiler = WorkloadCompiler(state, self.topology)
        self.engine: Engine = make_engine(self.engine_name, self.topology, self.release_evictions)

    # --- workloads -----------------------------------------------------------------------------

    def add_workload(self, wl: Workload) -> None:
        """Add a pending workload (queued by its LocalQueue) or an admitted one."""
        A.expect_type(wl, Workload, "add_workload")
        if wl.key in self._wid:
            raise EngineError(f"Workload/{wl.key} is already in the cluster")
        self.state.workloads[wl.key] = wl
        self._ensure_known(wl)
        self._add_compiled(wl.key, self.compiler.compile(wl))
        if wl.admission is not None and wl.pods_ready_ns is not None:
            admitted = wl.admission_ns if wl.admission_ns is not None else wl.creation_ns
            ready = PodsReadyState(admitted, wl.pods_ready, wl.pods_ready_reason, wl.pods_ready_ns)
            self._pods_ready[wl.key] = ready
        self._init_checks(wl)

    def _add_staged(self, keys: list[str], lo: int) -> None:
        """Add pending workloads from the engine's staged rows ``lo:lo+len(keys)``, one per key."""
        first = self.engine.add_staged(lo, lo + len(keys))
        self._wid.update(zip(keys, first, strict=True))
        self._keys.extend(keys)

    def _add_compiled_input(
        self, key: str, wl: Workload, compile: Callable[[Workload], WorkloadSpec] | None = None
    ) -> None:
        """An input workload the arrays cannot carry, with its admission checks."""
        self._add_compiled(key, (compile or self.compiler.compile)(wl))
        adm = wl.admission
        if wl.admission_checks or (adm is not None and adm.cluster_queue in self._check_cqs):
            self._init_checks(wl)

    def _add_compiled(self, key: str, spec: WorkloadSpec) -> None:
        self._wid[key] = self.engine.add_workload(spec)
        self._keys.append(key)
        if spec.admission is not None and self._charged_less(self.state.workloads.get(key)):
            self._reclaimed.add(key)

    def _charged_less(self, wl: Workload | None) -> bool:
        """The Workload's admission is charged less than it says (charged_usage)."""
        if wl is None or wl.admission is None:
            return False
        reclaimable = self.topology.gates.reclaimable_pods
        return any(count != psa.count for psa, count, _ in charged_assignments(wl, reclaimable))

    def _ensure_known(self, wl: Workload) -> None:
        """A workload naming a resource or flavor the topology lacks forces a
        rebuild (so does a pod resource the compiled TAS topology lacks)."""
        names = set(self.topology.resource_names)
        flavors = set(self.topology.flavor_names)
        missing = any(r not in names for per_pod in self.compiler.charged_requests(wl) for r in per_pod)
        tas = self.topology.tas
        if tas is not None:
            missing |= not tas.knows_resources(r for ps in wl.pod_sets for r in ps.requests)
        if wl.admission is not None:
            for psa in wl.admission.pod_set_assignments:
                missing |= any(r not in names for r in psa.resource_usage)
                missing |= any(f not in flavors for f in psa.flavors.values())
        if missing:
            self.reconfigure(self.state)

    def remove_workload(self, key: str) -> None:
        """The workload finished or was deleted: its quota (if any) is released
        and the cluster forgets it (the same key may be added again)."""
        wid = self._id(key)
        self._held.pop(wid, None)
        self.engine.remove_workload(wid)
        del self._wid[key]  # its wid (and first attempt) is never used again
        self._pods_ready.pop(key, None)
        self._requeue_count.pop(key, None)
        self._requeue_at.pop(key, None)
        self._evictions.pop(key, None)
        self.state.workloads.pop(key, None)
        self._checks.pop(key, None)
        self._reserved.discard(key)
        self._check_failures.discard(key)
        self._deactivated.discard(key)
        self._reclaimed.discard(key)

    def evict(self, key: str, reason: str, message: str) -> None:
        """Evict an admitted workload (deactivation, a stop policy, an admission
        that could not be written...). Its quota is released at once offline, or
        by release_eviction() when the cluster was built with
        release_evictions=False; it then queues again."""
        before = self.decision(key)
        self.engine.evict(self._id(key), reason, message)
        if before.holds_quota:  # else the engine had nothing to evict
            ev = EvictionRecord(self.cycles + 1, self._clock_ns, reason, message)
            ev.admitted_ns = before.admission_time_ns
            self._record_eviction(key, ev)
            self._checks_evicted(key)

    def release_eviction(self, key: str) -> None:
        """The evicted workload's job stopped: its quota is free, it queues again
        (after a PodsReady timeout, once its backoff ends)."""
        wid = self._id(key)
        if wid in self._held:  # released already, waiting for its requeueAt
            return
        reason = self.engine.workload_view(wid).eviction_reason
        self.engine.release_eviction(wid)
        waits = self.state.configuration.wait_for_pods_ready is not None
        pods_ready = waits and reason in ("PodsReadyTimeout", "Deactivated")
        if pods_ready or key in self._requeue_at:  # a backoff (or deactivation) ahead
            self._hold(key, self.cycles)

    def _id(self, key: str) -> int:
        try:
            return self._wid[key]
        except KeyError:
            raise EngineError(f"Workload/{key} is not in the cluster") from None

    def reconfigure(self, state: ClusterState) -> None:
        """New configuration (quotas, queues, flavors): rebuild the topology and
        re-add every workload, keeping admissions as they are (an eviction still
        holding its quota stays so, until release_eviction())."""
        A.expect_type(state, ClusterState, "reconfigure")
        held = {self._keys[w]: h for w, h in self._held.items()}  # out of their queues: stay so
        old = [self.decision(k) for k in self._wid if k not in held]
        first_attempts = self._first_attempts()
        first_ns = {k: int(first_attempts[w]) for k, w in self._wid.items() if first_attempts[w] >= 0}
        afs_history = self.engine.afs_ledger_state()
        self.state = state
        self._given_topology = {}
        self._build(state)
        if afs_history:
            self.engine.restore_afs_ledger(afs_history)
        self._keys, self._wid = [], {}
        for d in old:
            wl = state.workloads.get(d.key)
            if wl is None or d.state == FINISHED:
                continue
            spec = self.compiler.compile(wl)
            holds_quota = d.holds_quota or (d.state == EVICTED and d.cluster_queue is not None)
            spec.admission = self._admission_of(d, spec) if holds_quota else None
            self._add_compiled(d.key, spec)
            if d.state == EVICTED and holds_quota:
                self.engine.evict(self._wid[d.key], d.preemption_reason or d.reason, d.message)
            if d.state == ADMITTED and d.admission_time_ns is not None:
                if self._pods_ready_state(d.key, d.admission_time_ns).ready:
                    self.engine.set_pods_ready(self._wid[d.key], True)
        self._held = {}
        for key, h in held.items():
            wl = state.workloads.get(key)
            if wl is None:
                continue
            spec = self.compiler.compile(wl)
            spec.admission = None
            self._add_compiled(key, spec)
            wid = self._wid[key]
            self._held[wid] = replace(h, wid=wid)
            self._engine_hold(self._held[wid])
        self._first_attempt_ns = np.full(len(self._keys), -1, dtype=np.int64)
        for key, t in first_ns.items():
            if key in self._wid:
                self._first_attempt_ns[self._wid[key]] = t
        # the checks that apply may have changed (workload_controller.go syncs them on a
        # ClusterQueue update): a reserved workload whose checks are now all Ready is admitted
        for key in sorted(self._reserved):
            self._reserved.discard(key)
            if key in self._wid:
                self._quota_reserved(key, admitted=False)

    def _set_topology_assignments(
        self, d: Decision, placed: list[tuple[int, list[tuple[int, int]]] | None] | None
    ) -> None:
        """The decision's topologyAssignments: the engine's placements, named
        (the hostname alone when it is the lowest level, Kueue's buildAssignment),
        or, for the input's admission, the input's."""
        tas = self.topology.tas
        assert tas is not None
        if placed is None:
            given = self._given_topology.get(d.key)
            if given is None:
                wl = self.state.workloads.get(d.key)
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
        wl = self.state.workloads.get(d.key)
        adm = wl.admission if wl is not None else None
        if adm is None or adm.cluster_queue != d.cluster_queue:
            return
        reclaimable = self.topology.gates.reclaimable_pods
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

    def _admission_of(self, d: Decision, spec: WorkloadSpec) -> AdmissionSpec | None:
        cq_ids = {cq.name: i for i, cq in enumerate(self.topology.cluster_queues)}
        rid = {n: i for i, n in enumerate(self.topology.resource_names)}
        fid = {n: i for i, n in enumerate(self.topology.flavor_names)}
        by_name = {ps.name: ps for ps in d.pod_sets}
        wl = self.state.workloads[d.key]
        reclaimable = self.topology.gates.reclaimable_pods
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
        if self.topology.tas is not None:  # the placements it holds, as the input's would be
            given = {p.name: p.topology_assignment for p in d.pod_sets}
            self._given_topology[d.key] = given
            adm.tas = [
                self.compiler.tas_uses(psd.flavors, given.get(ps.name))
                if (psd := by_name.get(ps.name))
                else []
                for ps in spec.pod_sets
            ]
        return adm

    # --- scheduling ------------------------------------------------------------------------------

    def now_ns(self) -> int:
        """The cluster's clock (ns since the epoch): the time of the last cycle,
        or before the first one the latest time the input holds."""
        return self._clock_ns

    def run_cycle(self, now_ns: int | None = None) -> CycleResult:
        """One scheduling cycle. Offline, the clock advances one second per cycle."""
        if now_ns is None:
            now_ns = self._clock_ns + NS_PER_S
        now_ns = A.i64(now_ns, "now_ns")
        self._clock_ns = now_ns
        evicted = self._drain_stopped_queues()
        self._requeue_after_backoff(now_ns)
        timed_out = self._pods_ready_timeouts(now_ns)
        evicted += timed_out
        report = self.engine.run_cycle(now_ns)
        self.cycles += 1
        keys = self._keys  # by wid, removed workloads included
        result = CycleResult(
            cycle=self.cycles,
            admitted=[keys[w] for w in report.admitted],
            preempted=[keys[w] for w in report.preempted],
            evicted=evicted,
            newly_parked=report.newly_parked,
            heads=report.heads,
            attempted=[keys[w] for w in report.attempted],
            parked=[keys[w] for w in report.parked],
            time_ns=now_ns,
        )
        for key in [*result.preempted, *evicted]:
            self._checks_evicted(key)
        if self._check_cqs:
            cq_names = self.topology.cluster_queues
            for w in report.admitted:
                if cq_names[self.engine.workload_view(w).admitted_cq].name in self._check_cqs:
                    self._quota_reserved(keys[w], admitted=False)
        if self._check_failures:
            result.evicted.extend(self._evict_for_failed_checks(now_ns))
        self._record_cycle(result, report.attempted)
        return result

    def run(self, cycles: int, on_cycle: Callable[[CycleResult], None] | None = None) -> list[CycleResult]:
        """Run `cycles` cycles; their results. on_cycle sees every cycle's
        result as it ends."""
        cycles = _count(cycles, "run", "cycles")
        if cycles == 0:
            return []
        if on_cycle is None and self._bulk_ok():
            return self._cycle_results(self._run_bulk(cycles, until_stable=False))
        out = []
        for _ in range(cycles):
            out.append(self.run_cycle())
            if on_cycle is not None:
                on_cycle(out[-1])
        return out

    def run_until_stable(
        self, max_cycles: int = 100_000, on_cycle: Callable[[CycleResult], None] | None = None
    ) -> int:
        """Run cycles until one changes nothing; return how many ran.
        on_cycle sees every cycle's result as it ends."""
        max_cycles = _count(max_cycles, "run_until_stable", "max_cycles")
        if on_cycle is None and self._bulk_ok():
            run = self._run_bulk(max_cycles, until_stable=True)
            if run.stable:
                return int(run.cycles)
        else:
            # Victims keep their quota until release_eviction(): a preemptor re-issues
            # their evictions each cycle, which changes nothing (the engine's
            # run_until_settled counts it so too).
            under_way = None if self.release_evictions else self._evictions_under_way()
            for n in range(1, max_cycles + 1):
                result = self.run_cycle()
                if on_cycle is not None:
                    on_cycle(result)
                if not self._changed(result, under_way):
                    return n
        raise NotStableError(f"still changing after {max_cycles} cycles (--max-cycles)")

    def _evictions_under_way(self) -> set[str]:
        """Keys of the workloads evicted (holding their quota until release_eviction)."""
        return {d.key for d in self.decisions() if d.state == "evicted"}

    @staticmethod
    def _changed(result: CycleResult, under_way: set[str] | None) -> bool:
        """Did the cycle change anything? Given the evictions under way, an
        eviction issued again is no change (and a new one joins them)."""
        if under_way is None:
            return result.changed
        new = [k for k in (*result.preempted, *result.evicted) if k not in under_way]
        under_way.update(new)
        return bool(result.admitted or new or result.newly_parked)

    # --- many cycles in one engine call ----------------------------------------------------------

    def _bulk_ok(self) -> bool:
        """May the cycles run inside the engine (run_cycles), with nothing to do
        between them? Not when HoldAndDrain queues drain before every cycle,
        nor when victims keep their quota until release_eviction (a victim
        can then be preempted again while its eviction is under way, and its
        eviction record is that of the cycle)."""
        if not self.release_evictions or self._check_cqs or self._check_failures:
            return False  # admission checks act between cycles (_quota_reserved, _evict_for_failed_checks)
        if self.state.configuration.wait_for_pods_ready is not None or self._held:
            return False  # timeouts and backoffs act between cycles (_pods_ready_timeouts)
        return not any(
            cq.stop_policy == "HoldAndDrain" for cq in self.state.cluster_queues.values()
        ) and not any(lq.stop_policy == "HoldAndDrain" for lq in self.state.local_queues.values())

    def _run_bulk(self, max_cycles: int, until_stable: bool) -> CyclesRun:
        """run_cycle's cycles inside the engine, one second apart as run_cycle
        spaces them, then what the history keeps of them (_record_cycle's)."""
        start, step = self._clock_ns, NS_PER_S
        first = self._first_attempts()
        not_tried = (first < 0).view(np.uint8)
        run: CyclesRun = self.engine.run_cycles(start, step, max_cycles, until_stable, not_tried)
        first_cycle = self.cycles
        self.cycles += int(run.cycles)
        self._clock_ns = start + int(run.cycles) * step
        attempted = np.asarray(run.attempted, dtype=np.int64)
        if attempted.size:
            first[attempted] = start + (np.asarray(run.attempted_cycle, dtype=np.int64) + 1) * step
        if len(run.preempted):
            self._record_preemptions(run, first_cycle, start, step)
        return run

    def _record_preemptions(self, run: CyclesRun, first_cycle: int, start: int, step: int) -> None:
        """_record_cycle's eviction records of a bulk run. Every victim was
        preempted (offline: each eviction is a fresh preemption), so the
        engine's eviction fields, read now, are those of its last one."""
        views: dict[int, WorkloadView] = {}
        keys = self._keys
        rows = zip(run.preempted, run.preempted_cycle, run.preempted_admission_ns, strict=True)
        for w, c, admitted_ns in rows:
            w, c = int(w), int(c)
            rec = views.get(w)
            if rec is None:
                rec = views[w] = self.engine.workload_view(w)
            by = rec.preempted_by
            reason = rec.eviction_reason
            ev = EvictionRecord(
                first_cycle + c + 1,
                start + (c + 1) * step,
                "Preempted" if by >= 0 else reason,
                rec.eviction_message,
                reason if by >= 0 else "",
                keys[by] if by >= 0 else None,
            )
            ev.admitted_ns = int(admitted_ns)
            self._record_eviction(keys[w], ev)

    def _cycle_results(self, run: CyclesRun) -> list[CycleResult]:
        """run()'s results of a bulk run, cycle by cycle (wids sorted, as run_cycle gives them)."""
        keys = np.asarray(self._keys, dtype=object)
        first_cycle = self.cycles - int(run.cycles)
        start = self._clock_ns - int(run.cycles) * NS_PER_S

        def per_cycle(wids: Any, cycle_of: Any, sort: bool) -> list[list[str]]:
            w = np.asarray(wids, dtype=np.int64)
            c = np.asarray(cycle_of, dtype=np.int64)
            if sort:
                order = np.lexsort((w, c))
                w, c = w[order], c[order]
            ends = np.searchsorted(c, np.arange(int(run.cycles)), side="right")
            names: list[str] = keys[w].tolist()
            return [names[a:b] for a, b in zip([0, *ends[:-1].tolist()], ends.tolist(), strict=True)]

        admitted = per_cycle(run.admitted, run.admitted_cycle, False)
        preempted = per_cycle(run.preempted, run.preempted_cycle, False)
        attempted = per_cycle(run.attempted, run.attempted_cycle, True)
        parked = per_cycle(run.parked, run.parked_cycle, True)
        return [
            CycleResult(
                cycle=first_cycle + k + 1,
                admitted=admitted[k],
                preempted=preempted[k],
                evicted=[],
                newly_parked=int(run.newly_parked[k]),
                heads=int(run.heads[k]),
                attempted=attempted[k],
                parked=parked[k],
                time_ns=start + (k + 1) * NS_PER_S,
            )
            for k in range(int(run.cycles))
        ]

    # --- history (what Kueue's statuses remember) -------------------------------------------------

    def history(self, key: str) -> WorkloadHistory | None:
        """The workload's first attempt, last eviction and eviction counts; None
        when the scheduler never tried it and it was never evicted."""
        wid = self._wid.get(key)
        first_attempts = self._first_attempts()
        first = int(first_attempts[wid]) if wid is not None and first_attempts[wid] >= 0 else None
        h = self._evictions.get(key)
        if h is None:
            return None if first is None else WorkloadHistory(first_attempt_ns=first)
        return WorkloadHistory(first, h.last_eviction, dict(h.evictions), h.past_execution_s)

    def _record_eviction(self, key: str, ev: EvictionRecord) -> None:
        self._evictions.setdefault(key, WorkloadHistory()).record_eviction(ev)

    def _first_attempts(self) -> npt.NDArray[np.int64]:
        """The first attempt time by wid (-1: never tried), one per wid in use."""
        grow = len(self._keys) - len(self._first_attempt_ns)
        if grow > 0:
            self._first_attempt_ns = np.concatenate(
                [self._first_attempt_ns, np.full(grow, -1, dtype=np.int64)]
            )
        return self._first_attempt_ns

    def _record_cycle(self, result: CycleResult, attempted: list[int]) -> None:
        """Only what this cycle tried or evicted: nothing grows with the cycle count."""
        first = self._first_attempts()
        if attempted:
            tried = np.asarray(attempted, dtype=np.int64)
            first[tried[first[tried] < 0]] = result.time_ns
        for key in [*result.evicted, *result.preempted]:
            d = self.decision(key)
            reason = d.reason if d.preempted_by is None else "Preempted"
            ev = EvictionRecord(
                result.cycle, result.time_ns, reason, d.message, d.preemption_reason, d.preempted_by
            )
            ev.admitted_ns = int(self.engine.workload_view(self._wid[key]).admission_time)
            self._record_eviction(key, ev)

    def _drain_stopped_queues(self) -> list[str]:
        """HoldAndDrain: admitted workloads of a stopped ClusterQueue or
        LocalQueue are evicted (Kueue's workload controller does it)."""
        drained_cqs = {n for n, cq in self.state.cluster_queues.items() if cq.stop_policy == "HoldAndDrain"}
        drained_lqs = {k for k, lq in self.state.local_queues.items() if lq.stop_policy == "HoldAndDrain"}
        if not drained_cqs and not drained_lqs:
            return []
        out = []
        for key in list(self._wid):
            d = self.decision(key)
            if not d.holds_quota:
                continue
            wl = self.state.workloads[key]
            if d.cluster_queue in drained_cqs:
                self.engine.evict(self._wid[key], "ClusterQueueStopped", "The ClusterQueue is stopped")
            elif f"{wl.namespace}/{wl.queue_name}" in drained_lqs:
                self.engine.evict(self._wid[key], "LocalQueueStopped", "The LocalQueue is stopped")
            else:
                continue
            out.append(key)
        return out

    # --- results ----------------------------------------------------------------------------------

    def __contains__(self, key: object) -> bool:
        return key in self._wid

    def keys(self) -> list[str]:
        """The workloads in the cluster, in the order they were added."""
        return list(self._wid)

    def wid_of(self, key: str) -> int:
        """The engine's id of a workload (``Cluster.engine`` speaks in ids)."""
        return self._id(key)

    def key_of(self, wid: int) -> str:
        """The ``namespace/name`` of the workload with engine id ``wid`` (wid_of's inverse)."""
        return self._keys[A.known(A.wid(wid), len(self._keys))]

    def local_queue_fair_sharing(self, key: str) -> LocalQueueFairSharing | None:
        """Admission fair sharing state of LocalQueue ``namespace/name``; None
        when it has none (not configured, or not sampled yet)."""
        entry = self.engine.afs_ledger_state().get(key)
        if entry is None:
            return None
        return LocalQueueFairSharing(
            dict(entry["consumed"]),
            dict(entry["pending_penalty"]),
            entry["last_update_ns"],
            entry["usage"],
        )

    def decision(self, key: str) -> Decision:
        """Where workload ``namespace/name`` stands after the cycles run so far."""
        return self._decision(self._id(key))

    def decisions(self) -> list[Decision]:
        """Every workload's :class:`Decision`, sorted by namespace and name."""
        return [self._decision(self._wid[k]) for k in sorted(self._wid)]

    def pending_reasons(self, keys: Sequence[str]) -> list[tuple[str, str]]:
        """(reason, message) of pending workloads, as ``decision(key)`` gives
        them, read from the engine in one call (a cycle's heads left pending)."""
        keys = [A.text(k, "pending_reasons: keys") for k in A.seq(keys, "pending_reasons: keys")]
        wids = np.fromiter((self._id(k) for k in keys), dtype=np.int64, count=len(keys))
        reasons, messages = self.engine.reasons(wids), self.engine.messages(wids)
        out = []
        for key, wid, reason, message in zip(keys, wids.tolist(), reasons, messages, strict=True):
            if not message or wid in self._held or key in self._deactivated:
                d = self._decision(wid)
                reason, message = d.reason, d.message
            out.append((reason, message))
        return out

    def _decision(self, wid: int) -> Decision:
        held = self._held.get(wid)
        d = self._held_decision(held) if held is not None else self._engine_decision(wid)
        if self._checks and not d.admission_checks:
            d.admission_checks = list(self._checks.get(self._keys[wid], ()))
        return d

    def _engine_decision(self, wid: int) -> Decision:
        rec = self.engine.workload_view(wid)
        spec = rec.spec
        topo = self.topology
        d = Decision(spec.namespace, spec.name, rec.state)
        if d.state == ADMITTED or (d.state == EVICTED and rec.holds_quota):
            # an evicted workload whose job has not stopped yet still holds its admission
            cq = rec.admitted_cq
            if cq >= 0:
                d.cluster_queue = topo.cluster_queues[cq].name
            elif spec.admission is not None:
                wl = self.state.workloads.get(f"{spec.namespace}/{spec.name}")
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
            if adm is not None and rec.admission_time == adm.time_ns and self._keys[wid] in self._reclaimed:
                self._as_written(d)
            if topo.tas is not None:
                self._set_topology_assignments(d, rec.topology)
            if d.state == ADMITTED:
                key = self._keys[wid]
                d.admission_checks = list(self._checks.get(key, ()))
                if key in self._reserved:
                    d.state = RESERVED
                    d.reason, d.message = self._unsatisfied_checks_reason(), ac.UNSATISFIED_CHECKS_MESSAGE
                return d
        if d.state == EVICTED:
            d.reason = rec.eviction_reason
            d.message = rec.eviction_message
            by = rec.preempted_by
            if by >= 0:
                d.preempted_by = self._keys[by]
                d.preemption_reason = d.reason
                d.reason = "Preempted"
            return d
        if d.state == FINISHED:
            d.reason, d.message = "Finished", "The workload is finished"
            return d
        if self._keys[wid] in self._deactivated:
            d.reason, d.message = ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return d
        d.reason, d.message = rec.reason, rec.message
        if not d.message:
            d.reason, d.message = self._waiting_reason(spec)
        return d

    def _waiting_reason(self, spec: WorkloadSpec) -> tuple[str, str]:
        """Why a pending workload the scheduler never tried is still waiting."""
        if spec.cluster_queue < 0:
            # workload_controller.go resolveGranularUnadmittedQuotaReservedCondition
            if spec.unqueued_reason == ac.DEACTIVATED_MESSAGE:
                return ac.DEACTIVATED, ac.DEACTIVATED_MESSAGE
            return ("Misconfigured" if "exist" in spec.unqueued_reason else "Suspended"), spec.unqueued_reason
        return self._queue_waiting_reason(spec.cluster_queue)

    def _queue_waiting_reason(self, cq_id: int) -> tuple[str, str]:
        return queue_waiting_reason(self.topology.cluster_queues[cq_id])


def _count(n: object, call: str, what: str) -> int:
    """A number of cycles: an integer, 0 or more."""
    value = A.i64(n, f"{call}: {what}")
    if value < 0:
        raise EngineError(f"{call}: {what} must be 0 or more, got {value}")
    return value


def _start_time(latest_ns: int) -> int:
    """Offline clock: cycles happen after every timestamp of the input (WorkloadScan.latest_ns)."""
    return (latest_ns // NS_PER_S) * NS_PER_S
