"""The native engine through its bulk calls (``NativeEngine.add_workloads``,
``run_cycle_arrays``): trace rows reach the engine as array slices."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..compiler import BLOCK_NONE, Topology, WorkloadSpec
from .batch import WorkloadBatch
from .engine import EVICTION_REASONS, Settled, Step

I64 = npt.NDArray[np.int64]
_REASON_CODE = {r: i for i, r in enumerate(EVICTION_REASONS)}


class BulkAdapter:
    def __init__(self, engine: Any, topology: Topology) -> None:
        from .._native import WorkloadArrays

        self._arrays = WorkloadArrays
        self.engine = engine
        self.name = "native"
        self.topo = topology
        self.n_fr = len(topology.fr_pairs)
        self._fr = {p: i for i, p in enumerate(topology.fr_pairs)}
        self._next = 0
        # names and namespaces of every row of the batch last seen (made once)
        self._names_of: tuple[int, list[str], list[str]] | None = None

    def _batch_names(self, batch: WorkloadBatch) -> tuple[list[str], list[str]]:
        """Names and namespaces of every row, made once per batch with numpy."""
        if self._names_of is None or self._names_of[0] != id(batch):
            if batch.names is not None:
                names = list(batch.names)
            else:
                idx = np.arange(batch.name_base, batch.name_base + len(batch)).astype(np.str_)
                names = np.char.add("wl-", np.char.zfill(idx, 7)).tolist()
            namespaces = np.asarray(batch.namespaces, dtype=np.str_)[batch.namespace].tolist()
            self._names_of = (id(batch), names, namespaces)
        return self._names_of[1], self._names_of[2]

    def add(self, batch: WorkloadBatch, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        blocked = np.flatnonzero(batch.block[lo:hi] != BLOCK_NONE)
        if blocked.size:
            # rows the compiler blocked (namespace selector): their reason
            # travels in a WorkloadSpec; the rest go in bulk around them
            start = lo
            for b in (blocked + lo).tolist():
                self._add_rows(batch, start, b)
                self.add_specs([batch.spec(b)])
                start = b + 1
            self._add_rows(batch, start, hi)
            return
        self._add_rows(batch, lo, hi)

    def _add_rows(self, batch: WorkloadBatch, lo: int, hi: int) -> None:
        if hi <= lo:
            return
        names, namespaces = self._batch_names(batch)
        p0, p1 = int(batch.ps_offsets[lo]), int(batch.ps_offsets[hi])
        r0 = int(batch.req_offsets[p0])
        arrays = self._arrays(
            cluster_queue=batch.cluster_queue[lo:hi],
            priority=batch.priority[lo:hi],
            queue_ts=batch.queue_ts[lo:hi],
            scheduling_hash=batch.scheduling_hash[lo:hi],
            pod_set_offsets=batch.ps_offsets[lo : hi + 1] - p0,
            pod_set_count=batch.ps_count[p0:p1],
            pod_set_min_count=batch.ps_min_count[p0:p1],
            pod_set_flavor_class=batch.ps_flavor_class[p0:p1],
            request_offsets=batch.req_offsets[p0 : p1 + 1] - r0,
            request_resource=batch.req_resource[r0 : int(batch.req_offsets[p1])],
            request_amount=batch.req_amount[r0 : int(batch.req_offsets[p1])],
            namespaces=namespaces[lo:hi],
            names=names[lo:hi],
            pod_set_name=batch.ps_name[p0:p1],
            pod_set_names=batch.pod_set_names,
        )
        wids = self.engine.add_workloads(arrays)
        if wids.start != self._next:
            raise RuntimeError(f"engine gave workload ids from {wids.start}, expected {self._next}")
        self._next = wids.stop

    def add_specs(self, specs: list[WorkloadSpec]) -> None:
        for spec in specs:
            wid = self.engine.add_workload(spec)
            if wid != self._next:
                raise RuntimeError(f"engine gave workload id {wid}, expected {self._next}")
            self._next += 1

    def remove(self, wids: list[int]) -> None:
        rm = self.engine.remove_workload
        for w in wids:
            rm(w)

    def settle(self, now_ns: int, max_cycles: int) -> Settled:
        out = Settled()
        run = self.engine.run_cycle_arrays
        while out.cycles < max_cycles:
            _, admitted, preempted, newly_parked, heads = run(now_ns)
            out.cycles += 1
            out.heads += heads
            if admitted.size or preempted.size:
                out.steps.append(Step(admitted.tolist(), preempted.tolist()))
            elif not newly_parked:
                return out
        out.stable = False
        return out

    def admitted_usage(self, wids: list[int]) -> tuple[I64, I64]:
        cq = np.empty(len(wids), dtype=np.int64)
        usage = np.zeros((len(wids), self.n_fr), dtype=np.int64)
        view = self.engine._core.workload_view
        fr = self._fr
        for k, w in enumerate(wids):
            v = view(w)
            cq[k] = v["admitted_cq"]
            for (_, flavors), per_res in zip(v["pod_sets"], v["resource_usage"], strict=True):
                for r, f in flavors.items():
                    usage[k, fr[(f, r)]] += per_res[r]
        return cq, usage

    def eviction_reasons(self, wids: list[int]) -> I64:
        view = self.engine._core.workload_view
        out = np.empty(len(wids), dtype=np.int64)
        for k, w in enumerate(wids):
            out[k] = _REASON_CODE.get(str(view(w)["eviction_reason"]), len(EVICTION_REASONS) - 1)
        return out

    def candidate_evaluations(self) -> int:
        return int(self.engine.evaluations)
