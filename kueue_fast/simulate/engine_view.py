"""The simulator's view of an engine: add rows of a batch, remove finished
workloads, release evicted ones once their job stopped, run cycles at one
instant until they settle, read what was admitted and why.

One adapter over the engine contract (contract.Engine), the same for
both engines: trace rows reach the engine as arrays once and are added by
row ranges (``stage_workloads``, ``add_staged``, blocked rows included), the
cycles of an instant run inside the engine (``run_until_settled``), and
admissions, evictions and finishes are read and removed many at a time
(``admitted_usage``, ``eviction_reasons``, ``preempted_by``, ``messages``,
``remove_workloads``).

An instant settles when a cycle admits nothing, evicts nothing new and newly
parks nothing. When victims keep their quota until ``release`` (a
pod-termination delay), a preemptor waiting for them re-issues their
eviction every cycle; that is not a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ..engine.contract import EVICTION_REASONS, Engine, WorkloadArrays
from ..engine.inputs import BLOCK_NONE, Topology, WorkloadSpec
from ..engine.select import make_engine
from .batch import WorkloadBatch

I64 = npt.NDArray[np.int64]

__all__ = ["EVICTION_REASONS", "SimEngine", "Settled", "Step", "make_sim_engine"]

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
    run: int = 0  # cycles run (the others replayed settled cohort trees: contract.SettledRun)


class SimEngine:
    """The simulator's calls over either engine. Workload ids are batch rows in add order."""

    def __init__(self, engine: Engine, topology: Topology) -> None:
        self.engine = engine
        self.name = engine.name
        self.topo = topology
        self.n_fr = len(topology.fr_pairs)
        self._fr = {p: i for i, p in enumerate(topology.fr_pairs)}
        self._next = 0
        # the batch whose rows the engine holds (stage_workloads)
        self._staged: WorkloadBatch | None = None

    def _stage(self, batch: WorkloadBatch) -> None:
        """Hand every row of the batch to the engine once; add() then adds
        row ranges of it (add_staged)."""
        if batch.names is not None:
            names = list(batch.names)
        else:
            idx = np.arange(batch.name_base, batch.name_base + len(batch)).astype(np.str_)
            names = np.char.add("wl-", np.char.zfill(idx, 7)).tolist()
        namespaces = np.asarray(batch.namespaces, dtype=np.str_)[batch.namespace].tolist()
        # rows the compiler blocked (namespace selector) carry their code and
        # message; the rest have BLOCK_NONE
        blocked = bool((batch.block != BLOCK_NONE).any())
        arrays = WorkloadArrays(
            cluster_queue=batch.cluster_queue,
            priority=batch.priority,
            queue_ts=batch.queue_ts,
            scheduling_hash=batch.scheduling_hash,
            pod_set_offsets=batch.ps_offsets,
            pod_set_count=batch.ps_count,
            pod_set_min_count=batch.ps_min_count,
            pod_set_flavor_class=batch.ps_flavor_class,
            request_offsets=batch.req_offsets,
            request_resource=batch.req_resource,
            request_amount=batch.req_amount,
            namespaces=namespaces,
            names=names,
            pod_set_name=batch.ps_name,
            pod_set_names=batch.pod_set_names,
            block=batch.block if blocked else None,
            block_message=batch.block_msg if blocked else None,
            block_messages=batch.block_messages if blocked else None,
            local_queue=batch.local_queue,
        )
        self.engine.stage_workloads(arrays)
        self._staged = batch

    def add(self, batch: WorkloadBatch, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        if self._staged is not batch:
            self._stage(batch)
        wids = self.engine.add_staged(lo, hi)
        if wids.start != self._next:
            raise RuntimeError(f"engine gave workload ids from {wids.start}, expected {self._next}")
        self._next = wids.stop
        if hi == len(batch):
            # the last rows (the loop adds them in order): the copy is no longer needed
            self.engine.clear_staged()
            self._staged = None

    def sim_loop(self, batch: WorkloadBatch, arrays: dict[str, Any], params: dict[str, int]) -> Any:
        """The native event loop (simulate/native_event_loop.py) over the batch's rows."""
        from ..engine.native import NativeEngine

        assert isinstance(self.engine, NativeEngine)
        if self._staged is not batch:
            self._stage(batch)
        return self.engine.sim_loop(arrays, params)

    def sim_loop_done(self, all_added: bool) -> None:
        """The native event loop added rows of the batch; ``all_added``: every one."""
        from ..engine.native import NativeEngine

        assert isinstance(self.engine, NativeEngine)
        self.engine.sim_loop_done()
        self._next = self.engine.n_workloads
        if all_added:
            self.engine.clear_staged()
            self._staged = None

    def add_specs(self, specs: list[WorkloadSpec]) -> None:
        for spec in specs:
            wid = self.engine.add_workload(spec)
            if wid != self._next:
                raise RuntimeError(f"engine gave workload id {wid}, expected {self._next}")
            self._next += 1

    # the engine's calls take lists of wids as they are (no numpy conversion here)

    def remove(self, wids: list[int]) -> None:
        self.engine.remove_workloads(wids)

    def evict_for_check(self, wid: int, reason: str, message: str, queue_ts_ns: int, requeue: bool) -> None:
        """An admission check's Retry (requeue, ordered by queue_ts_ns) or Rejected (never again)."""
        self.engine.evict_after_cycle(wid, reason, message, queue_ts_ns, requeue)

    def release(self, wids: list[int]) -> None:
        # one call per workload: measured, a bulk call would save little next to the cycles it causes
        release = self.engine.release_eviction
        for w in wids:
            release(w)

    def settle(
        self, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
    ) -> Settled:
        self.engine.end_holds(now_ns)
        cycles, stable, heads, adm, adm_cycle, pre, pre_cycle, attempted, run = self.engine.run_until_settled(
            now_ns, max_cycles, unexplained
        )
        out = Settled([], cycles, heads, stable, attempted, run)
        if not (adm.size or pre.size):
            return out
        last = max(int(adm_cycle[-1]) if adm.size else 0, int(pre_cycle[-1]) if pre.size else 0)
        first = min(int(adm_cycle[0]) if adm.size else last, int(pre_cycle[0]) if pre.size else last)
        if first == last:  # the usual case: one cycle changed something
            out.steps.append(Step(adm.tolist(), pre.tolist()))
            return out
        # the steps in cycle order (the offsets are sorted)
        offsets = np.union1d(adm_cycle, pre_cycle)
        a = np.searchsorted(adm_cycle, offsets, side="right").tolist()
        p = np.searchsorted(pre_cycle, offsets, side="right").tolist()
        adm_l, pre_l = adm.tolist(), pre.tolist()
        a0 = p0 = 0
        for a1, p1 in zip(a, p, strict=True):
            out.steps.append(Step(adm_l[a0:a1], pre_l[p0:p1]))
            a0, p0 = a1, p1
        return out

    def admitted_usage(self, wids: list[int]) -> tuple[npt.NDArray[np.int32], I64]:
        cq, usage = self.engine.admitted_usage(wids)
        return cq, usage  # cq as int32: a key, not arithmetic

    def eviction_reasons(self, wids: list[int]) -> I64:
        out: I64 = self.engine.eviction_reasons(np.asarray(wids, dtype=np.int64)).astype(np.int64)
        return out

    def preemptors(self, wids: list[int]) -> I64:
        out: I64 = self.engine.preempted_by(np.asarray(wids, dtype=np.int64)).astype(np.int64)
        return out

    def messages(self, wids: list[int]) -> list[str]:
        out: list[str] = self.engine.messages(np.asarray(wids, dtype=np.int64))
        return out

    def candidate_evaluations(self) -> int:
        return self.engine.evaluations

    # waitForPodsReady

    def evict(self, wid: int, reason: str, message: str) -> None:
        self.engine.evict(wid, reason, message)

    def set_pods_ready(self, wid: int, ready: bool) -> None:
        self.engine.set_pods_ready(wid, ready)

    def hold(self, wid: int, until_ns: int, queue_ts: int) -> None:
        """Out of its queue until ``until_ns`` (requeueAt); settle queues it again."""
        self.engine.hold(wid, until_ns, queue_ts)


def make_sim_engine(name: str, topology: Topology, release_evictions: bool = True) -> SimEngine:
    """An adapter over a fresh engine. With ``release_evictions`` (the
    offline rule) a victim releases its quota at the end of its cycle and
    requeues; without, it holds its quota until ``release(wids)`` (its job
    stopped), as in a cluster."""
    return SimEngine(make_engine(name, topology, release_evictions=release_evictions), topology)
