"""The engine contract's arguments, checked as the native engine's bindings
check them: the reference engine and the Cluster apply these twins, so that
a caller misusing either engine gets the same
:class:`~kueue_fast.api.errors.EngineError`, word for word
(tests/test_api_misuse.py crosses every call with bad arguments on both).

Twins of bindings/convert.cpp (to_i64, to_u64, to_str, to_seq, to_bool,
int_array, str_list), csrc/src/engine_checks.hpp (check_range),
Engine::check_wid, Engine::validate and Engine::add_workloads
(csrc/src/scheduler.cpp), bindings/parse_inputs.cpp (workload_from,
workload_rows), bindings/register_workloads.cpp (add_staged),
bindings/register_decisions.cpp (per_wid, queue_state) and
bindings/register_cycles.cpp (the uint8 masks).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from ..api.errors import EngineError

if TYPE_CHECKING:
    from .contract import WorkloadArrays
    from .inputs import Topology

T = TypeVar("T")

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
UINT64_MAX = (1 << 64) - 1


def expect_type(value: object, cls: type[T], call: str) -> T:
    """``call``'s argument, a ``cls``."""
    if not isinstance(value, cls):
        raise EngineError(f"{call}: expected a {cls.__name__}, got {type(value).__name__}")
    return value


def _index(v: object, what: str) -> int:
    if v is None or isinstance(v, float):
        raise EngineError(f"{what}: expected an integer")
    try:
        return operator.index(v)  # type: ignore[arg-type]
    except TypeError:
        raise EngineError(f"{what}: expected an integer") from None


def i64(v: object, what: str) -> int:
    """convert.cpp to_i64: an integer (or anything with __index__, not a float) of int64."""
    n = _index(v, what)
    if not INT64_MIN <= n <= INT64_MAX:
        raise EngineError(f"{what}: integer out of the int64 range")
    return n


def u64(v: object, what: str) -> int:
    """convert.cpp to_u64."""
    n = _index(v, what)
    if not 0 <= n <= UINT64_MAX:
        raise EngineError(f"{what}: integer out of the uint64 range")
    return n


def text(v: object, what: str) -> str:
    """convert.cpp to_str: a str that UTF-8 can encode."""
    if not isinstance(v, str):
        raise EngineError(f"{what}: expected a str")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        raise EngineError(f"{what}: not encodable as UTF-8") from None
    return v


def seq(v: object, what: str) -> Sequence[Any]:
    """convert.cpp to_seq: PySequence_Check, not a str or bytes."""
    if isinstance(v, (str, bytes, dict)) or not hasattr(type(v), "__getitem__") or not hasattr(v, "__len__"):
        raise EngineError(f"{what}: expected a sequence")
    return v  # type: ignore[return-value]


def flag(v: object, what: str) -> bool:
    """convert.cpp to_bool: True or False (Python's or numpy's)."""
    if not isinstance(v, (bool, np.bool_)):
        raise EngineError(f"{what}: expected a bool")
    return bool(v)


def in_range(v: int, lo: int, hi: int, what: str) -> None:
    """engine_checks.hpp check_range."""
    if not lo <= v <= hi:
        raise EngineError(f"{what} {v} out of range [{lo}, {hi}]")


def wid(v: object) -> int:
    """A workload id (to_i64); known(wid, n) checks it, once the call's other
    arguments are read."""
    return i64(v, "workload id")


def known(w: int, n: int) -> int:
    """Engine::check_wid: one of the ``n`` workloads."""
    if not 0 <= w < n:
        raise EngineError(f"unknown workload id {w}")
    return w


def uint8_mask(v: object, what: str) -> npt.NDArray[np.uint8] | None:
    """register_cycles.cpp's masks (attempted_mask, unexplained): None, or a
    writeable, contiguous 1-D uint8 array (read and cleared in place)."""
    if v is None:
        return None
    if not isinstance(v, np.ndarray) or v.dtype != np.uint8:
        raise EngineError(f"{what}: expected a uint8 array")
    if v.ndim != 1 or not v.flags.c_contiguous or not v.flags.writeable:
        raise EngineError(f"{what}: expected a writeable, contiguous 1-D uint8 array")
    return v


def int_array(obj: object, what: str, expect: int = -1) -> npt.NDArray[np.int64]:
    """convert.cpp int_array: a 1-D integer array as int64 (floats refused)."""
    if obj is None:
        raise EngineError(f"{what}: missing")
    try:
        a = np.asarray(obj)
    except Exception:  # noqa: BLE001 - whatever numpy cannot read is "not an array"
        raise EngineError(f"{what}: not an array") from None
    if a.ndim != 1:
        raise EngineError(f"{what}: expected a 1-D array, got {a.ndim} dimensions")
    if a.size > 0 and a.dtype.kind not in "iu":
        raise EngineError(f"{what}: expected integers, got dtype {a.dtype}")
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size > 0 and int(a.max()) > INT64_MAX:
        raise EngineError(f"{what}: value above the int64 range")
    r = a.astype(np.int64) if a.size > 0 else np.zeros(0, dtype=np.int64)
    if expect >= 0 and r.size != expect:
        raise EngineError(f"{what}: expected {expect} entries, got {r.size}")
    return r


def wids(obj: object, n: int) -> list[int]:
    """register_decisions.cpp per_wid: an integer array of known workload ids."""
    out: list[int] = int_array(obj, "wids").tolist()
    for w in out:
        if not 0 <= w < n:
            raise EngineError(f"unknown workload id {w}")
    return out


def str_list(obj: object, what: str, expect: int) -> list[str]:
    """convert.cpp str_list."""
    if obj is None:
        raise EngineError(f"{what}: missing")
    s = seq(obj, what)
    if len(s) != expect:
        raise EngineError(f"{what}: expected {expect} entries, got {len(s)}")
    return [text(x, what) for x in s]


def cluster_queue(v: object, topo: Topology) -> int:
    """register_decisions.cpp queue_state: a ClusterQueue id of the topology."""
    cq = i64(v, "cluster_queue")
    if not 0 <= cq < topo.n_cq:
        raise EngineError(f"unknown cluster_queue {cq}")
    return cq


def staged_rows(lo: object, hi: object, staged: int) -> tuple[int, int]:
    """register_workloads.cpp add_staged: rows [lo, hi) of the staged ones."""
    lo_, hi_ = i64(lo, "lo"), i64(hi, "hi")
    if lo_ < 0 or hi_ < lo_ or hi_ > staged:
        raise EngineError(f"add_staged: rows [{lo_}, {hi_}) outside the {staged} staged workloads")
    return lo_, hi_


def workload_spec(value: object, topo: Topology) -> None:
    """A WorkloadSpec as the native engine reads it (parse_inputs.cpp
    workload_from, then Engine::validate)."""
    from .inputs import WorkloadSpec

    spec = expect_type(value, WorkloadSpec, "add_workload")
    text(spec.namespace, "namespace")
    text(spec.name, "name")
    text(spec.uid, "uid")
    cq = i64(spec.cluster_queue, "cluster_queue")
    priority = i64(spec.priority, "priority")
    i64(spec.queue_ts, "queue_ts")
    u64(spec.scheduling_hash, "scheduling_hash")
    block = i64(spec.block, "block")
    text(spec.block_message, "block_message")
    pod_sets = []
    for ps in seq(spec.pod_sets, "pod_sets"):
        count = i64(ps.count, "pod set count")
        min_count = -1 if ps.min_count is None else i64(ps.min_count, "pod set min_count")
        if ps.min_count is not None and min_count < 0:
            raise EngineError("pod set min_count must be >= 0")
        flavor_class = i64(ps.flavor_class, "flavor_class")
        requests = []
        for rq in seq(ps.requests, "requests"):
            pair = seq(rq, "request")
            if len(pair) != 2:
                raise EngineError("request: expected (resource, amount)")
            requests.append((i64(pair[0], "request resource"), i64(pair[1], "request amount")))
        pod_sets.append((count, min_count, flavor_class, requests))
    adm = spec.admission
    admission: list[tuple[int, list[tuple[int, int]]]] = []
    adm_cq = -1
    if adm is not None:
        adm_cq = i64(adm.cluster_queue, "admission cluster_queue")
        i64(adm.time_ns, "admission time")
        for p in seq(adm.pod_sets, "admission pod sets"):
            admitted = seq(p, "admitted pod set")
            if len(admitted) != 2:
                raise EngineError("admitted pod set: expected (count, use)")
            uses = []
            for u in seq(admitted[1], "admitted use"):
                entry = seq(u, "admitted use entry")
                if len(entry) != 3:
                    raise EngineError("admitted use entry: expected (resource, flavor, amount)")
                uses.append((i64(entry[0], "admitted resource"), i64(entry[1], "admitted flavor")))
                i64(entry[2], "admitted amount")
            admission.append((i64(admitted[0], "admitted count"), uses))
    text(spec.job_uid, "job_uid")
    local_queue = i64(spec.local_queue, "local_queue")
    text(spec.queue_name, "queue_name")
    # Engine::validate
    in_range(cq, -1, topo.n_cq - 1, "cluster_queue")
    in_range(priority, INT32_MIN, INT32_MAX, "priority")
    in_range(block, 0, 2, "block")
    in_range(local_queue, -1, len(topo.local_queues) - 1, "local_queue")
    if "\0" in spec.namespace:
        raise EngineError("namespace contains a NUL character")
    if len(pod_sets) > 0xFFFF:
        raise EngineError("too many pod sets")
    for count, min_count, flavor_class, requests in pod_sets:
        in_range(count, 0, INT32_MAX, "pod set count")
        in_range(min_count, -1, INT32_MAX, "pod set min_count")
        in_range(flavor_class, 0, len(topo.flavor_classes) - 1, "flavor class")
        for r, _ in requests:
            in_range(r, 0, len(topo.resource_names) - 1, "resource id")
    if adm is not None:
        in_range(adm_cq, -1, topo.n_cq - 1, "admission cluster_queue")
        for count, uses in admission:
            in_range(count, INT32_MIN, INT32_MAX, "admitted count")
            for r, f in uses:
                in_range(r, 0, len(topo.resource_names) - 1, "admitted resource id")
                in_range(f, -1, len(topo.flavor_names) - 1, "admitted flavor id")
                if f >= 0 and topo.fr_id(f, r) < 0:
                    raise EngineError("admitted flavor-resource pair has no fr id")


def workload_arrays(arrays: WorkloadArrays, topo: Topology) -> None:
    """WorkloadArrays as the native engine reads them (parse_inputs.cpp
    workload_rows, then Engine::add_workloads' checks)."""

    def field(name: str) -> Any:
        return getattr(arrays, name, None)  # a missing attribute reads as None

    cq = int_array(field("cluster_queue"), "cluster_queue")
    n = cq.size
    prio = int_array(field("priority"), "priority", n)
    int_array(field("queue_ts"), "queue_ts", n)
    int_array(field("scheduling_hash"), "scheduling_hash", n)
    pso = int_array(field("pod_set_offsets"), "pod_set_offsets", n + 1)
    psc = int_array(field("pod_set_count"), "pod_set_count")
    n_ps = psc.size
    psm = int_array(field("pod_set_min_count"), "pod_set_min_count", n_ps)
    psf = int_array(field("pod_set_flavor_class"), "pod_set_flavor_class", n_ps)
    rqo = int_array(field("request_offsets"), "request_offsets", n_ps + 1)
    rqr = int_array(field("request_resource"), "request_resource")
    int_array(field("request_amount"), "request_amount", rqr.size)

    def offsets_ok(o: npt.NDArray[np.int64], end: int) -> bool:
        return bool(o[0] == 0 and o[-1] == end and (o.size < 2 or (np.diff(o) >= 0).all()))

    if not offsets_ok(pso, n_ps):
        raise EngineError("pod_set_offsets must start at 0, not decrease and end at the number of pod sets")
    if not offsets_ok(rqo, rqr.size):
        raise EngineError("request_offsets must start at 0, not decrease and end at the number of requests")
    namespaces = str_list(field("namespaces"), "namespaces", n)
    str_list(field("names"), "names", n)
    if field("uids") is not None:
        str_list(field("uids"), "uids", n)
    psn = None
    names: list[str] = []
    if field("pod_set_name") is not None:
        psn = int_array(field("pod_set_name"), "pod_set_name", n_ps)
        if field("pod_set_names") is None:
            raise EngineError("pod_set_name needs pod_set_names")
        names = [text(x, "pod set name") for x in seq(field("pod_set_names"), "pod_set_names")]
    blk = blk_msg = None
    messages: list[str] = []
    if field("block") is not None:
        blk = int_array(field("block"), "block", n)
        blk_msg = int_array(field("block_message"), "block_message", n)
        if field("block_messages") is not None:
            messages = [text(x, "block message") for x in seq(field("block_messages"), "block_messages")]
    lq = int_array(field("local_queue"), "local_queue", n) if field("local_queue") is not None else None
    # Engine::add_workloads
    for i in range(n):
        in_range(int(cq[i]), -1, topo.n_cq - 1, "cluster_queue")
        in_range(int(prio[i]), INT32_MIN, INT32_MAX, "priority")
        if lq is not None:
            in_range(int(lq[i]), -1, len(topo.local_queues) - 1, "local_queue")
        if "\0" in namespaces[i]:
            raise EngineError("namespace contains a NUL character")
        if blk is not None and blk_msg is not None:
            in_range(int(blk[i]), 0, 2, "block")
            if blk[i] != 0:
                in_range(int(blk_msg[i]), 0, len(messages) - 1, "block message index")
    for p in range(n_ps):
        in_range(int(psc[p]), 0, INT32_MAX, "pod set count")
        in_range(int(psm[p]), -1, INT32_MAX, "pod set min_count")
        in_range(int(psf[p]), 0, len(topo.flavor_classes) - 1, "flavor class")
        if psn is not None:
            in_range(int(psn[p]), 0, len(names) - 1, "pod set name index")
        for k in range(int(rqo[p]), int(rqo[p + 1])):
            in_range(int(rqr[k]), 0, len(topo.resource_names) - 1, "resource id")
            if k > rqo[p] and rqr[k] <= rqr[k - 1]:
                raise EngineError("requests of a pod set must have strictly increasing resource ids")
