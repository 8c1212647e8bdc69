"""The reference engine's bulk calls (contract.py's Engine): the native
engine's array calls as plain loops over the reference's own records, one
workload at a time, so that every caller drives either engine the same way."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from .. import arguments as A
from ..contract import (
    EVICTION_REASONS,
    STATE_NAMES,
    AdmittedShape,
    EngineState,
    SettledRun,
    StableRun,
    WorkloadView,
)
from ..inputs import BLOCK_NONE, CyclesRun, PodSetSpec, WorkloadSpec
from .records import ADMITTED, FINISHED, PENDING

if TYPE_CHECKING:
    from ..contract import WorkloadArrays
    from ..inputs import Topology
    from .records import WorkloadRecord
    from .scheduler import ReferenceEngine

_REASON_CODE = {r: i for i, r in enumerate(EVICTION_REASONS)}


def _ints(a: npt.ArrayLike) -> list[int]:
    out: list[int] = np.asarray(a, dtype=np.int64).tolist()
    return out


def specs_of_arrays(
    arrays: WorkloadArrays, topo: Topology, lo: int = 0, hi: int | None = None
) -> list[WorkloadSpec]:
    """Rows [lo, hi) of WorkloadArrays as the WorkloadSpecs the native
    engine makes of them (NativeEngine.spec of a bulk-added workload)."""
    names = list(arrays.names)
    hi = len(names) if hi is None else hi
    namespaces = list(arrays.namespaces)
    uids = list(arrays.uids) if arrays.uids is not None else None
    cq, prio, ts, h = (
        _ints(a) for a in (arrays.cluster_queue, arrays.priority, arrays.queue_ts, arrays.scheduling_hash)
    )
    ps_off, ps_count, ps_min, ps_class, req_off = (
        _ints(a)
        for a in (
            arrays.pod_set_offsets,
            arrays.pod_set_count,
            arrays.pod_set_min_count,
            arrays.pod_set_flavor_class,
            arrays.request_offsets,
        )
    )
    req_res, req_amount = _ints(arrays.request_resource), _ints(arrays.request_amount)
    ps_name = _ints(arrays.pod_set_name) if arrays.pod_set_name is not None else None
    ps_names = arrays.pod_set_names or []
    block = _ints(arrays.block) if arrays.block is not None else None
    block_msg = _ints(arrays.block_message) if arrays.block_message is not None else None
    block_messages = arrays.block_messages or []
    lqs = _ints(arrays.local_queue) if arrays.local_queue is not None else None
    local_queues = topo.local_queues
    out = []
    for i in range(lo, hi):
        pod_sets = []
        for k in range(ps_off[i], ps_off[i + 1]):
            requests = list(
                zip(
                    req_res[req_off[k] : req_off[k + 1]], req_amount[req_off[k] : req_off[k + 1]], strict=True
                )
            )
            name = ps_names[ps_name[k]] if ps_name is not None else "main"
            pod_sets.append(
                PodSetSpec(name, ps_count[k], requests, None if ps_min[k] < 0 else ps_min[k], ps_class[k])
            )
        code = block[i] if block is not None else BLOCK_NONE
        lq = lqs[i] if lqs is not None else -1
        ns, name = str(namespaces[i]), str(names[i])
        out.append(
            WorkloadSpec(
                namespace=ns,
                name=name,
                uid=str(uids[i]) if uids is not None else f"{ns}/{name}",
                cluster_queue=cq[i],
                priority=prio[i],
                queue_ts=ts[i],
                scheduling_hash=h[i],
                pod_sets=pod_sets,
                block=code,
                block_message=block_messages[block_msg[i]]
                if code != BLOCK_NONE and block_msg is not None
                else "",
                local_queue=lq,
                queue_name=local_queues[lq].name.split("/", 1)[1] if lq >= 0 else "",
            )
        )
    return out


# --- cycles at one instant


def _has_heads(eng: ReferenceEngine, dirty_only: bool = False) -> bool:
    """Would a cycle pop a head? (An active ClusterQueue with an active
    workload; ``dirty_only``: in a cohort tree that has not settled.)"""
    cqs = eng.topo.cluster_queues
    return any(
        q.active and cqs[k].active and (not dirty_only or eng.tree_dirty[eng.tree.root_of(k)])
        for k, q in enumerate(eng.cq_queues)
    )


def run_cycles(
    eng: ReferenceEngine,
    start_ns: int,
    step_ns: int,
    max_cycles: int,
    until_stable: bool,
    attempted_mask: np.ndarray | None = None,
) -> CyclesRun:
    """run_cycle at start_ns + k * step_ns (k = 1, 2, ...), at most
    max_cycles; with until_stable up to and including the first cycle
    that admits, preempts and newly parks nothing. With attempted_mask
    (uint8 per wid), only heads whose flag is set are reported attempted,
    and their flag is cleared (the native engine's bulk call)."""
    start_ns, step_ns = A.i64(start_ns, "start_ns"), A.i64(step_ns, "step_ns")
    max_cycles, until_stable = A.i64(max_cycles, "max_cycles"), A.flag(until_stable, "until_stable")
    attempted_mask = A.uint8_mask(attempted_mask, "attempted_mask")
    run = CyclesRun(0, False, [], [], [], [], [], [], [], [], [], [], [])
    while run.cycles < max_cycles:
        offset = run.cycles
        report = eng.run_cycle(start_ns + (offset + 1) * step_ns)
        run.cycles += 1
        run.heads.append(report.heads)
        run.newly_parked.append(report.newly_parked)
        run.admitted += report.admitted
        run.admitted_cycle += [offset] * len(report.admitted)
        run.preempted += report.preempted
        run.preempted_cycle += [offset] * len(report.preempted)
        run.preempted_admission_ns += [eng.workloads[w].admission_time for w in report.preempted]
        for w in report.attempted:
            if attempted_mask is not None:
                if w >= len(attempted_mask) or not attempted_mask[w]:
                    continue
                attempted_mask[w] = 0
            run.attempted.append(w)
            run.attempted_cycle.append(offset)
        run.parked += report.parked
        run.parked_cycle += [offset] * len(report.parked)
        if until_stable and not (report.admitted or report.preempted or report.newly_parked):
            run.stable = True
            break
    return run


def run_until_stable(eng: ReferenceEngine, now_ns: int, max_cycles: int) -> StableRun:
    """Cycles at now_ns until one admits, preempts and newly parks nothing
    (at most max_cycles); none when no ClusterQueue has a head to pop."""
    run = _run_until(eng, now_ns, max_cycles, None, every_victim=True, skip_settled=False)
    return StableRun(*run[:7])


def run_until_settled(
    eng: ReferenceEngine, now_ns: int, max_cycles: int, unexplained: npt.NDArray[np.uint8] | None = None
) -> SettledRun:
    """run_until_stable where a victim whose eviction was already under way
    (victims keep their quota until release_eviction) is no change, and
    only victims a cycle of this call evicted are returned; also the wids
    tried and left pending (with ``unexplained``, those whose flag is
    set, clearing it). Cohort trees that settled are not run again until
    something changes them (scheduler.py _tree_dirty): ``cycles`` counts
    every cycle, ``run`` those run."""
    return _run_until(eng, now_ns, max_cycles, unexplained, every_victim=False, skip_settled=True)


def _run_until(
    eng: ReferenceEngine,
    now_ns: int,
    max_cycles: int,
    unexplained: npt.NDArray[np.uint8] | None,
    every_victim: bool,
    skip_settled: bool,
) -> SettledRun:
    now_ns, max_cycles = A.i64(now_ns, "now_ns"), A.i64(max_cycles, "max_cycles")
    unexplained = A.uint8_mask(unexplained, "unexplained")
    cycles, heads, stable, run = 0, 0, False, 0
    admitted: list[int] = []
    admitted_cycle: list[int] = []
    preempted: list[int] = []
    preempted_cycle: list[int] = []
    attempted: list[int] = []
    while cycles < max_cycles:
        if not _has_heads(eng):  # a cycle with no head to pop changes nothing
            stable = True
            break
        if skip_settled and not _has_heads(eng, dirty_only=True):
            # every tree with a head settled: the cycle would replay each
            # tree's last attempts and change nothing; counted (cycle
            # numbers are read by _scan_state), not run
            eng.cycle += 1
            cycles += 1
            stable = True
            break
        report = eng.run_cycle(now_ns, dirty_only=skip_settled)
        run += 1
        heads += report.heads
        attempted.extend(report.attempted)
        fresh = [
            w for w in report.preempted if every_victim or eng.workloads[w].evicted_cycle == report.cycle
        ]
        admitted += report.admitted
        admitted_cycle += [cycles] * len(report.admitted)
        preempted += fresh
        preempted_cycle += [cycles] * len(fresh)
        cycles += 1
        if not (report.admitted or fresh or report.newly_parked):
            stable = True
            break
    if unexplained is not None:
        attempted = [w for w in dict.fromkeys(attempted) if unexplained[w]]
        unexplained[attempted] = 0

    def i32(xs: list[int]) -> npt.NDArray[np.int32]:
        return np.asarray(xs, dtype=np.int32)

    return SettledRun(
        cycles,
        stable,
        heads,
        i32(admitted),
        i32(admitted_cycle),
        i32(preempted),
        i32(preempted_cycle),
        i32(attempted),
        run,
    )


# --- reading decisions


def view_of(rec: WorkloadRecord, cycle: int) -> WorkloadView:
    """The decision fields of one workload as of cycle ``cycle``, in ids (the Cluster names them)."""
    state: EngineState
    if rec.status == FINISHED:
        state = "finished"
    elif rec.evicting or (rec.status == PENDING and rec.evicted_cycle == cycle and cycle > 0):
        state = "evicted"
    elif rec.status == ADMITTED:
        state = "admitted"
    else:
        state = "pending"
    return WorkloadView(
        spec=rec.spec,
        state=state,
        admitted_cq=rec.admitted_cq,
        admission_time=rec.admission_time,
        pod_sets=rec.admitted_pod_sets,
        resource_usage=rec.admitted_resource_usage,
        reason=rec.reason,
        message=rec.message,
        eviction_reason=rec.eviction_reason,
        eviction_message=rec.eviction_message,
        preempted_by=rec.preempted_by,
        holds_quota=rec.status == ADMITTED,
        topology=rec.topology,
    )


# --- many workloads


def decisions(
    workloads: list[WorkloadRecord], cycle: int
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Per wid: state code (STATE_NAMES), admitted ClusterQueue (-1: none), admission time (ns)."""
    views = [view_of(rec, cycle) for rec in workloads]
    return (
        np.array([STATE_NAMES.index(v.state) for v in views], dtype=np.int8),
        np.array([v.admitted_cq for v in views], dtype=np.int32),
        np.array([v.admission_time for v in views], dtype=np.int64),
    )


def reasons(workloads: list[WorkloadRecord], wids: npt.ArrayLike) -> list[str]:
    return [workloads[w].reason for w in A.wids(wids, len(workloads))]


def messages(workloads: list[WorkloadRecord], wids: npt.ArrayLike) -> list[str]:
    return [workloads[w].message for w in A.wids(wids, len(workloads))]


def queues(workloads: list[WorkloadRecord], wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
    return np.array([workloads[w].spec.cluster_queue for w in A.wids(wids, len(workloads))], dtype=np.int32)


def preempted_by(workloads: list[WorkloadRecord], wids: npt.ArrayLike) -> npt.NDArray[np.int32]:
    return np.array([workloads[w].preempted_by for w in A.wids(wids, len(workloads))], dtype=np.int32)


def eviction_reasons(workloads: list[WorkloadRecord], wids: npt.ArrayLike) -> npt.NDArray[np.int8]:
    other = len(EVICTION_REASONS) - 1
    return np.array(
        [_REASON_CODE.get(workloads[w].eviction_reason, other) for w in A.wids(wids, len(workloads))],
        dtype=np.int8,
    )


def admitted_usage(
    workloads: list[WorkloadRecord], n_fr: int, wids: npt.ArrayLike
) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int64]]:
    """Per wid: the ClusterQueue it is admitted to (-1: none) and the usage
    its admission charges, shape (len(wids), n_fr)."""
    ws = A.wids(wids, len(workloads))
    cq = np.empty(len(ws), dtype=np.int32)
    usage = np.zeros((len(ws), n_fr), dtype=np.int64)
    for k, w in enumerate(ws):
        rec = workloads[w]
        cq[k] = rec.admitted_cq
        for fr, v in rec.usage.items():
            usage[k, fr] = v
    return cq, usage


def admitted_shapes(
    workloads: list[WorkloadRecord], wids: npt.ArrayLike
) -> tuple[npt.NDArray[np.int32], list[AdmittedShape]]:
    """Per wid an index into the shapes (-1: not admitted to a ClusterQueue
    of the topology), and each distinct admission once."""
    index: dict[Any, int] = {}
    shapes: list[AdmittedShape] = []
    ws = A.wids(wids, len(workloads))
    out = np.full(len(ws), -1, dtype=np.int32)
    for k, w in enumerate(ws):
        rec = workloads[w]
        if rec.admitted_cq < 0:
            continue
        shape: AdmittedShape = (
            rec.admitted_cq,
            [
                (ps.name, count, sorted(flavors.items()))
                for ps, (count, flavors) in zip(rec.spec.pod_sets, rec.admitted_pod_sets, strict=True)
            ],
        )
        key = (shape[0], tuple((n, c, tuple(f)) for n, c, f in shape[1]))
        if key not in index:
            index[key] = len(shapes)
            shapes.append(shape)
        out[k] = index[key]
    return out, shapes
