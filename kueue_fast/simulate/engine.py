"""The simulator's view of an engine: add rows of a batch, remove finished
workloads, release evicted ones once their job stopped, run cycles at one
instant until they settle, read what was admitted and why.

Two adapters:

* ``SpecAdapter`` drives any engine through the per-workload API
  (``add_workload(spec)``, ``run_cycle(now)``, ``workload_view(wid)``): the
  reference engine;
* ``BulkAdapter`` uses the native engine's array calls (``add_staged``,
  ``run_until_settled``, ``admitted_usage``, ``eviction_reasons``,
  ``preempted_by``, ``messages``, ``remove_workloads``).

Both settle an instant by the same rule: cycles until one admits nothing,
evicts nothing new and newly parks nothing. When victims keep their quota
until ``release`` (a pod-termination delay), a preemptor waiting for them
re-issues their eviction every cycle; that is not a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from ..cluster import make_engine
from ..compiler import Topology, WorkloadSpec
from .batch import WorkloadBatch

I64 = npt.NDArray[np.int64]

# Why a workload was evicted (victims of preemption), as small codes.
EVICTION_REASONS = (
    "InClusterQueue",
    "InCohortReclamation",
    "InCohortFairSharing",
    "InCohortReclaimWhileBorrowing",
    "Other",
)
_REASON_CODE = {r: i for i, r in enumerate(EVICTION_REASONS)}
_NONE = np.zeros(0, dtype=np.int64)


@dataclass(slots=True)
class Step:
    """What one cycle that changed something did: workloads admitted, and
    workloads newly evicted by preemption."""

    admitted: list[int]
    preempted: list[int]


@dataclass(slots=True)
class Settled:
    steps: list[Step] = field(default_factory=list)
    cycles: int = 0
    heads: int = 0  # workloads the cycles decided on (each popped head is one decision)
    stable: bool = True
    # wids tried and left pending, by every cycle (repeats included); with
    # settle's unexplained mask, only those whose flag was set (then cleared)
    attempted: npt.NDArray[np.integer[Any]] = field(default_factory=lambda: _NONE)


class SimEngine(Protocol):
    name: str
    n_fr: int

    def add(self, batch: WorkloadBatch, lo: int, hi: int) -> None: ...
    def add_specs(self, specs: list[WorkloadSpec]) -> None: ...
    def remove(self, wids: list[int]) -> None: ...
    def release(self, wids: list[int]) -> None: ...
    def evict_for_check(
        self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool
    ) -> None: ...
    def settle(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> Settled: ...
    def admitted_usage(self, wids: list[int]) -> tuple[I64, I64]: ...
    def eviction_reasons(self, wids: list[int]) -> I64: ...
    def preemptors(self, wids: list[int]) -> I64: ...
    def messages(self, wids: list[int]) -> list[str]: ...
    def candidate_evaluations(self) -> int: ...
    # waitForPodsReady
    def evict(self, wid: int, reason: str, message: str) -> None: ...
    def set_pods_ready(self, wid: int, ready: bool) -> None: ...
    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None: ...


class PodsReadyCalls:
    """waitForPodsReady's calls, the same for both adapters (``self.engine``)."""

    engine: Any

    def evict(self, wid: int, reason: str, message: str) -> None:
        self.engine.evict(wid, reason, message)

    def set_pods_ready(self, wid: int, ready: bool) -> None:
        self.engine.set_pods_ready(wid, ready)

    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None:
        """Out of its queue until ``until_ns`` (requeueAt); settle queues it again."""
        self.engine.hold(wid, until_ns, queue_ts)


class SpecAdapter(PodsReadyCalls):
    """Per-workload engine API. Workload ids are batch rows in add order."""

    def __init__(self, engine: Any, topology: Topology) -> None:
        self.engine = engine
        self.name = str(engine.name)
        self.topo = topology
        self.n_fr = len(topology.fr_pairs)
        self._fr = {p: i for i, p in enumerate(topology.fr_pairs)}
        self._next = 0
        # The reference engine exposes its records and queues; reading them
        # directly avoids building a view dict per admitted workload.
        self._records = getattr(engine, "workloads", None) if self.name == "reference" else None
        self._queues = getattr(engine, "queues", None) if self.name == "reference" else None

    def add(self, batch: WorkloadBatch, lo: int, hi: int) -> None:
        for i in range(lo, hi):
            wid = self.engine.add_workload(batch.spec(i))
            if wid != self._next:
                raise RuntimeError(f"engine gave workload id {wid}, expected {self._next}")
            self._next += 1

    def add_specs(self, specs: list[WorkloadSpec]) -> None:
        for spec in specs:
            wid = self.engine.add_workload(spec)
            if wid != self._next:
                raise RuntimeError(f"engine gave workload id {wid}, expected {self._next}")
            self._next += 1

    def remove(self, wids: list[int]) -> None:
        for w in wids:
            self.engine.remove_workload(w)

    def release(self, wids: list[int]) -> None:
        for w in wids:
            self.engine.release_eviction(w)

    def evict_for_check(self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool) -> None:
        """An admission check's Retry (requeue, ordered by queue_ts_ns) or Rejected (never again)."""
        self.engine.evict_after_cycle(wid, reason, message, queue_ts_ns, requeue)

    def _has_heads(self) -> bool:
        """Would a cycle pop a head? (An active ClusterQueue with an active
        workload: the native engine's run_until_settled asks the same.)"""
        if self._queues is None:
            return True
        cqs = self.topo.cluster_queues
        return any(q.active and cqs[k].active for k, q in enumerate(self._queues))

    def _fresh(self, victims: list[int], cycle: int) -> list[int]:
        """The victims this cycle evicted (not those whose eviction was under way)."""
        if self._records is None:
            return victims
        return [w for w in victims if self._records[w].evicted_cycle == cycle]

    def settle(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> Settled:
        out = Settled(stable=False)
        attempted: list[int] = []
        self.engine.end_holds(now_ns)
        while out.cycles < max_cycles:
            # A cycle with no head to pop changes nothing: skip it.
            if not self._has_heads():
                out.stable = True
                break
            report = self.engine.run_cycle(now_ns)
            out.cycles += 1
            out.heads += report.heads
            attempted.extend(report.attempted)
            fresh = self._fresh(list(report.preempted), report.cycle)
            if report.admitted or fresh:
                out.steps.append(Step(list(report.admitted), fresh))
            elif not report.newly_parked:
                out.stable = True
                break
        if unexplained is not None:
            attempted = [w for w in dict.fromkeys(attempted) if unexplained[w]]
            unexplained[attempted] = 0
        out.attempted = np.asarray(attempted, dtype=np.int64)
        return out

    def admitted_usage(self, wids: list[int]) -> tuple[I64, I64]:
        """(ClusterQueue, usage per flavor-resource) charged for each admitted wid."""
        cq = np.empty(len(wids), dtype=np.int64)
        usage = np.zeros((len(wids), self.n_fr), dtype=np.int64)
        for k, w in enumerate(wids):
            if self._records is not None:
                rec = self._records[w]
                cq[k] = rec.admitted_cq
                for fr, v in rec.usage.items():
                    usage[k, fr] = v
                continue
            view = self.engine.workload_view(w)
            cq[k] = view["admitted_cq"]
            for (count, flavors), per_res in zip(view["pod_sets"], view["resource_usage"], strict=True):
                del count
                for r, f in flavors.items():
                    usage[k, self._fr[(f, r)]] += per_res[r]
        return cq, usage

    def eviction_reasons(self, wids: list[int]) -> I64:
        out = np.empty(len(wids), dtype=np.int64)
        for k, w in enumerate(wids):
            if self._records is not None:
                reason = self._records[w].eviction_reason
            else:
                reason = str(self.engine.workload_view(w)["eviction_reason"])
            out[k] = _REASON_CODE.get(reason, len(EVICTION_REASONS) - 1)
        return out

    def preemptors(self, wids: list[int]) -> I64:
        if self._records is not None:
            return np.array([self._records[w].preempted_by for w in wids], dtype=np.int64)
        return np.array([int(self.engine.workload_view(w)["preempted_by"]) for w in wids], dtype=np.int64)

    def messages(self, wids: list[int]) -> list[str]:
        if self._records is not None:
            return [self._records[w].message for w in wids]
        return [str(self.engine.workload_view(w)["message"]) for w in wids]

    def candidate_evaluations(self) -> int:
        pre = getattr(self.engine, "preemptor", None)
        if pre is not None:
            return int(getattr(pre, "evaluations", 0))
        fn = getattr(self.engine, "candidate_evaluations", None)
        return int(fn()) if callable(fn) else -1


def native_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("kueue_fast._native") is not None


def make_sim_engine(name: str, topology: Topology, release_evictions: bool = True) -> SimEngine:
    """An adapter over a fresh engine. With ``release_evictions`` (the
    offline rule) a victim releases its quota at the end of its cycle and
    requeues; without, it holds its quota until ``release(wids)`` (its job
    stopped), as in a cluster."""
    engine = make_engine(name, topology, release_evictions=release_evictions)
    if name == "native" and hasattr(engine, "add_workloads"):
        import importlib

        bulk = importlib.import_module("kueue_fast.simulate.bulk")
        adapter: SimEngine = bulk.BulkAdapter(engine, topology)
        return adapter
    return SpecAdapter(engine, topology)


def resolve_sim_engine(requested: str | None) -> tuple[str, str]:
    """(engine, note): native unless asked otherwise; when the native engine
    is not in this installation and none was asked for, the reference, with
    a note saying so."""
    from ..cluster import resolve_engine_name

    name = resolve_engine_name(requested)
    if name == "native" and not native_available():
        if requested == "native":
            from ..errors import EngineError

            raise EngineError("the native engine is not available in this installation (kueue_fast._native)")
        return "reference", "the native engine is not available here; using the reference engine"
    return name, ""
