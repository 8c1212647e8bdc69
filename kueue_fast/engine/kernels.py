"""The compiled kernels of bindings/_kernels.pyx that the Cluster and the
output call, each with its Python definition: a name here is the compiled
function when this installation's ``_kernels`` is from these sources
(_compiled), else the Python one (the same results, slower). The Python
definitions are also what the tests hold the compiled ones to."""

from __future__ import annotations

from collections.abc import Callable
from json.encoder import encode_basestring_ascii
from typing import Any, NamedTuple

from .. import _compiled


def json_workload_entries_py(
    keys: list[str],
    kinds: list[int],
    shapes: list[int],
    admitted_tails: list[str],
    reasons: list[str],
    messages: list[str],
    owners: dict[str, str],
    other_texts: list[str],
    pending_state: str,
    prefix: str = "",
    suffix: str = "",
    write: Callable[[str], object] | None = None,
    chunk: int = 1 << 20,
) -> str:
    """The "workloads" array of output._bulk_json as json.dumps(doc, indent=2)
    writes it, between prefix and suffix: one entry per key; ``kinds`` (0
    other, 1 admitted, 2 pending) say whether its text is the next of
    other_texts, its shape's admitted tail, or written from the next reason
    and message. Given ``write``, the text goes to it in pieces (each ends
    once it holds ``chunk`` characters) and "" is returned."""
    enc = encode_basestring_ascii
    pending = iter(zip(reasons, messages, strict=True))
    others = iter(other_texts)
    entries: list[str] = []
    for key, kind, shape in zip(keys, kinds, shapes, strict=True):
        if kind == 0:
            entries.append(next(others))
            continue
        ns, name = key.split("/", 1)
        text = '{\n      "namespace": ' + enc(ns) + ',\n      "name": ' + enc(name)
        owner = owners.get(key)
        if owner is not None:
            text += ',\n      "owner": ' + enc(owner)
        if kind == 1:
            entries.append(text + admitted_tails[shape])
        else:
            reason, message = next(pending)
            entries.append(
                f'{text},\n      "state": {enc(pending_state)},\n      "reason": {enc(reason)},'
                f'\n      "message": {enc(message)}\n    }}'
            )
    text = prefix + ("[\n    " + ",\n    ".join(entries) + "\n  ]" if entries else "[]") + suffix
    if write is None:
        return text
    for start in range(0, len(text), chunk):
        write(text[start : start + chunk])
    return ""


class WorkloadScan(NamedTuple):
    """What the Cluster's construction needs of every workload (workload_scan)."""

    latest_ns: int  # the latest creation, admission, queue order and PodsReady time, and 0
    requested: set[str]  # the names of every resource the pod sets request
    admitted: list[Any]  # the workloads with an admission
    timed: list[str]  # the keys of those with a PodsReady time or a requeueAt


def workload_scan_py(workloads: dict[str, Any]) -> WorkloadScan:
    """WorkloadScan of the workloads by key (None times count as 0)."""
    latest = 0
    requested: set[str] = set()
    admitted, timed = [], []
    for key, wl in workloads.items():
        times = (wl.creation_ns, wl.admission_ns, wl.queue_order_ns, wl.pods_ready_ns)
        latest = max(latest, *(t or 0 for t in times))
        requested.update(r for ps in wl.pod_sets for r in ps.requests)
        if wl.admission is not None:
            admitted.append(wl)
        if wl.pods_ready_ns is not None or wl.requeue_at_ns is not None:
            timed.append(key)
    return WorkloadScan(latest, requested, admitted, timed)


def workload_owners_py(workloads: dict[str, Any]) -> dict[str, str]:
    """The owner of every workload that has one, by key (output.to_json)."""
    return {key: wl.owner for key, wl in workloads.items() if wl.owner is not None}


_k = _compiled.module("_kernels")
json_workload_entries: Callable[..., str] = (
    _k.json_workload_entries if _k is not None else json_workload_entries_py
)


def workload_scan(workloads: dict[str, Any]) -> WorkloadScan:
    """WorkloadScan of the workloads by key, in one pass in C when compiled."""
    if _k is None:
        return workload_scan_py(workloads)
    return WorkloadScan(*_k.workload_scan(workloads))


workload_owners: Callable[[dict[str, Any]], dict[str, str]] = (
    _k.workload_owners if _k is not None else workload_owners_py
)
