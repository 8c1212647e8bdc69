"""Workloads as arrays: the input of the engines' bulk path.

A ``WorkloadBatch`` holds what ``WorkloadSpec`` holds, for many workloads at
once, as flat typed arrays (CSR for the variable-length parts), so that a
trace of 100k workloads reaches the engine with no per-workload Python work.
The native engine's ``add_workloads`` takes these arrays; the per-workload
adapter (reference engine) turns one row at a time into a ``WorkloadSpec``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import numpy.typing as npt

from ..api.model import PodSet, ResourceRules, Workload
from ..api.requests import quota_requests
from ..engine.inputs import BLOCK_NONE, PodSetSpec, WorkloadSpec
from ..engine.workloads import WorkloadCompiler
from .trace import Trace, default_name

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]


@dataclass
class WorkloadBatch:
    """n workloads, P pod sets, R requests.

    Per workload: ``cluster_queue`` (-1: queued nowhere), ``priority``,
    ``queue_ts`` (ns), ``scheduling_hash`` (>= 0), ``block`` (compiler BLOCK_*
    code, message in ``block_messages[block_msg]``), ``ps_offsets`` (n+1),
    ``namespace`` (index into ``namespaces``); names are ``names[i]`` or, when
    ``names`` is None, ``default_name(name_base + i)``. Per pod set:
    ``ps_count``, ``ps_min_count`` (-1: none), ``ps_flavor_class``,
    ``ps_name`` (index into ``pod_set_names``), ``req_offsets`` (P+1). Per
    request: ``req_resource`` (topology resource id, ascending within a pod
    set) and ``req_amount`` (per pod, canonical units). Optionally per
    workload its LocalQueue (``local_queue``, a topology id, -1: none) and
    ``queue`` (index into ``queue_names``, its spec.queueName), which
    admission fair sharing charges and orders by."""

    cluster_queue: I32
    priority: I64
    queue_ts: I64
    scheduling_hash: I64
    block: I32
    block_msg: I32
    ps_offsets: I64
    ps_count: I32
    ps_min_count: I32
    ps_flavor_class: I32
    ps_name: I32
    req_offsets: I64
    req_resource: I32
    req_amount: I64
    namespace: I32
    namespaces: list[str]
    pod_set_names: list[str]
    names: list[str] | None = None
    name_base: int = 0
    block_messages: list[str] = field(default_factory=lambda: [""])
    unqueued_reasons: list[str] = field(default_factory=lambda: [""])
    local_queue: I32 | None = None
    queue: I32 | None = None
    queue_names: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.cluster_queue.shape[0])

    def name_of(self, i: int) -> str:
        return self.names[i] if self.names is not None else default_name(self.name_base + i)

    def spec(self, i: int) -> WorkloadSpec:
        """Row i as the WorkloadSpec the per-workload engine API takes."""
        pod_sets = []
        for k in range(int(self.ps_offsets[i]), int(self.ps_offsets[i + 1])):
            lo, hi = int(self.req_offsets[k]), int(self.req_offsets[k + 1])
            mc = int(self.ps_min_count[k])
            pod_sets.append(
                PodSetSpec(
                    self.pod_set_names[int(self.ps_name[k])],
                    int(self.ps_count[k]),
                    list(
                        zip(self.req_resource[lo:hi].tolist(), self.req_amount[lo:hi].tolist(), strict=True)
                    ),
                    None if mc < 0 else mc,
                    int(self.ps_flavor_class[k]),
                )
            )
        name = self.name_of(i)
        ns = self.namespaces[int(self.namespace[i])]
        cq = int(self.cluster_queue[i])
        return WorkloadSpec(
            namespace=ns,
            name=name,
            uid=f"{ns}/{name}",
            cluster_queue=cq,
            priority=int(self.priority[i]),
            queue_ts=int(self.queue_ts[i]),
            scheduling_hash=int(self.scheduling_hash[i]),
            pod_sets=pod_sets,
            block=int(self.block[i]),
            block_message=self.block_messages[int(self.block_msg[i])],
            unqueued_reason=self.unqueued_reasons[int(self.block_msg[i])] if cq < 0 else "",
            local_queue=-1 if self.local_queue is None else int(self.local_queue[i]),
            queue_name="" if self.queue is None else self.queue_names[int(self.queue[i])],
        )


def _mix(x: U64) -> U64:
    """splitmix64 finalizer, vectorized (uint64 arithmetic wraps)."""
    x = x ^ (x >> np.uint64(30))
    x = x * np.uint64(0xBF58476D1CE4E5B9)
    x = x ^ (x >> np.uint64(27))
    x = x * np.uint64(0x94D049BB133111EB)
    out: U64 = x ^ (x >> np.uint64(31))
    return out


def scheduling_hashes(
    priority: I64,
    ps_offsets: I64,
    ps_name: I32,
    count: I32,
    min_count: I32,
    requests: I64,
    placement: I32 | None = None,
) -> I64:
    """Kueue's scheduling equivalence as a 63-bit hash: equal priority and
    equal pod sets (name, count, minCount, per-pod requests, placement: the
    pod template Kueue hashes holds its node selector, tolerations and
    affinity) hash equal."""
    p = count.shape[0]
    h = _mix(count.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15))
    h = _mix(h ^ min_count.astype(np.int64).view(np.uint64))
    h = _mix(h ^ ps_name.astype(np.uint64))
    if placement is not None:
        h = _mix(h ^ (placement.astype(np.uint64) * np.uint64(0xD6E8FEB86659FD93)))
    for j in range(requests.shape[1]):
        h = _mix(h ^ _mix(requests[:, j].view(np.uint64) + np.uint64(j + 1)))
    # position of the pod set in its workload, so that order matters
    pos = np.arange(p, dtype=np.int64) - np.repeat(ps_offsets[:-1], np.diff(ps_offsets))
    h = _mix(h + pos.astype(np.uint64) * np.uint64(0x632BE59BD9B4E019))
    per_wl = np.add.reduceat(h, ps_offsets[:-1]) if len(priority) else h[:0]
    out: I64 = (_mix(per_wl ^ _mix(priority.view(np.uint64))) >> np.uint64(1)).view(np.int64)
    return out


def trace_ns(seconds: npt.NDArray[np.float64]) -> I64:
    """Trace times (seconds, as doubles) in ns, exact to the microsecond: a
    double holds a time months into a trace only to about a nanosecond
    (8400000.291 s is 8400000290999999.9 ns), so rounding straight to ns
    can be one off; microseconds are exact for 285 years."""
    out: I64 = np.round(seconds * 1e6).astype(np.int64) * 1000
    return out


def batch_from_trace(trace: Trace, compiler: WorkloadCompiler, start_ns: int) -> WorkloadBatch:
    """The trace's workloads against a compiled topology: LocalQueues resolved
    to ClusterQueues (once per distinct namespace/queue pair), requests
    mapped to resource ids, each pod set's flavor class from its placement
    (one per distinct placement of the trace)."""
    # 1. queues: resolve each distinct (namespace, queue) pair through the compiler
    pairs, inverse = np.unique(
        trace.namespace.astype(np.int64) * (len(trace.queues) + 1) + trace.queue, return_inverse=True
    )
    pair_cq = np.empty(len(pairs), dtype=np.int32)
    pair_lq = np.empty(len(pairs), dtype=np.int32)
    pair_block = np.empty(len(pairs), dtype=np.int32)
    pair_msg = np.empty(len(pairs), dtype=np.int32)
    messages: list[str] = [""]
    reasons: list[str] = [""]
    probe_ps = PodSet("main", 1)
    for k, code in enumerate(pairs.tolist()):
        ns, q = (
            trace.namespaces[code // (len(trace.queues) + 1)],
            trace.queues[code % (len(trace.queues) + 1)],
        )
        spec = compiler.compile(Workload(ns, "probe", q, [probe_ps], start_ns))
        pair_cq[k] = spec.cluster_queue
        pair_lq[k] = spec.local_queue
        pair_block[k] = spec.block
        pair_msg[k] = 0
        if spec.block != BLOCK_NONE or spec.cluster_queue < 0:
            pair_msg[k] = len(messages)
            messages.append(spec.block_message)
            reasons.append(spec.unqueued_reason)
    inv = inverse.ravel()
    # 2. requests: trace columns -> topology resource ids, ascending per pod set
    rid = np.array([compiler.resource_id(r) for r in trace.resources], dtype=np.int32)
    order = np.argsort(rid, kind="stable")
    req = trace.requests[:, order]
    rows, cols = np.nonzero(req)
    req_offsets = np.zeros(trace.n_pod_sets + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=trace.n_pod_sets), out=req_offsets[1:])
    # 3. placement: the flavor class of each distinct placement
    classes = np.array([compiler.flavor_class(p.pod_set()) for p in trace.placements], dtype=np.int32)
    ts = start_ns + trace_ns(trace.arrival_s)
    return WorkloadBatch(
        cluster_queue=pair_cq[inv],
        priority=trace.priority.astype(np.int64),
        queue_ts=ts,
        scheduling_hash=scheduling_hashes(
            trace.priority,
            trace.ps_offsets,
            trace.ps_name,
            trace.count,
            trace.min_count,
            trace.requests,
            trace.ps_placement,
        ),
        block=pair_block[inv],
        block_msg=pair_msg[inv],
        ps_offsets=trace.ps_offsets.astype(np.int64),
        ps_count=trace.count.astype(np.int32),
        ps_min_count=trace.min_count.astype(np.int32),
        ps_flavor_class=classes[trace.placement_ids()],
        ps_name=trace.ps_name.astype(np.int32),
        req_offsets=req_offsets,
        req_resource=rid[order][cols].astype(np.int32),
        req_amount=req[rows, cols].astype(np.int64),
        namespace=trace.namespace.astype(np.int32),
        namespaces=list(trace.namespaces),
        pod_set_names=list(trace.pod_set_names),
        names=trace.names,
        block_messages=messages,
        unqueued_reasons=reasons,
        local_queue=pair_lq[inv],
        queue=trace.queue.astype(np.int32),
        queue_names=list(trace.queues),
    )


def charged_trace(trace: Trace, rules: ResourceRules) -> Trace:
    """The trace with each pod set's requests replaced by what Kueue charges to
    quota under the Configuration's resources section (requests.quota_requests:
    excluded prefixes, transformations), computed once per distinct row. A
    charge of 0 is dropped (0 means not requested in a trace)."""
    if not rules or not trace.n_pod_sets:
        return trace
    rows, inverse = np.unique(trace.requests, axis=0, return_inverse=True)
    charged = [
        quota_requests({r: int(n) for r, n in zip(trace.resources, row.tolist(), strict=True) if n}, rules)
        for row in rows
    ]
    names = sorted({r for c in charged for r in c})
    col = {r: j for j, r in enumerate(names)}
    table = np.zeros((len(rows), len(names)), dtype=np.int64)
    for i, c in enumerate(charged):
        for r, n in c.items():
            table[i, col[r]] = n
    return replace(trace, requests=table[inverse.ravel()], resources=names)


def unqueued_warnings(batch: WorkloadBatch, trace: Trace, shown: int = 3) -> list[str]:
    """One line per LocalQueue of the trace that puts its rows in no
    ClusterQueue (a missing LocalQueue, or one that is stopped or points at a
    missing ClusterQueue): how many rows, why, and the first few names.
    ``batch`` is ``batch_from_trace(trace, ...)``."""
    rows = np.flatnonzero(batch.cluster_queue < 0)
    if not rows.size:
        return []
    pair = trace.namespace[rows].astype(np.int64) * (len(trace.queues) + 1) + trace.queue[rows]
    out = []
    for code in np.unique(pair).tolist():
        mine = rows[pair == code]
        ns = trace.namespaces[code // (len(trace.queues) + 1)]
        q = trace.queues[code % (len(trace.queues) + 1)]
        why = batch.unqueued_reasons[int(batch.block_msg[mine[0]])] or "no ClusterQueue"
        names = ", ".join(trace.name_of(int(i)) for i in mine[:shown])
        more = ", ..." if mine.size > shown else ""
        out.append(f"{mine.size:,} trace workloads of LocalQueue {ns}/{q} never run ({why}): {names}{more}")
    return out
