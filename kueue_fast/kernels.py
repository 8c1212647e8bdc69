"""The compiled kernels of bindings/_kernels.pyx that the Cluster and the
output call, each with its Python definition: a name here is the compiled
function when this installation's ``_kernels`` is from these sources
(_compiled), else the Python one (the same results, slower). The Python
definitions are also what the tests hold the compiled ones to."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from json.encoder import encode_basestring_ascii
from typing import Any

from . import _compiled


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
) -> str:
    """The "workloads" array of output._bulk_json as json.dumps(doc, indent=2)
    writes it, between prefix and suffix: one entry per key; ``kinds`` (0
    other, 1 admitted, 2 pending) say whether its text is the next of
    other_texts, its shape's admitted tail, or written from the next reason
    and message."""
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
    return prefix + ("[\n    " + ",\n    ".join(entries) + "\n  ]" if entries else "[]") + suffix


def latest_time_ns_py(workloads: Iterable[Any]) -> int:
    """The latest of every workload's creation, admission, queue order and
    PodsReady times (None counts as 0), and 0."""
    latest = 0
    for wl in workloads:
        times = (wl.creation_ns, wl.admission_ns, wl.queue_order_ns, wl.pods_ready_ns)
        latest = max(latest, *(t or 0 for t in times))
    return latest


def workload_owners_py(workloads: dict[str, Any]) -> dict[str, str]:
    """The owner of every workload that has one, by key (output.to_json)."""
    return {key: wl.owner for key, wl in workloads.items() if wl.owner is not None}


def requested_resources_py(workloads: Iterable[Any]) -> set[str]:
    """The names of every resource the workloads' pod sets request."""
    return {r for wl in workloads for ps in wl.pod_sets for r in ps.requests}


_k = _compiled.module("_kernels")
json_workload_entries: Callable[..., str] = (
    _k.json_workload_entries if _k is not None else json_workload_entries_py
)
latest_time_ns: Callable[[Iterable[Any]], int] = _k.latest_time_ns if _k is not None else latest_time_ns_py
requested_resources: Callable[[Iterable[Any]], set[str]] = (
    _k.requested_resources if _k is not None else requested_resources_py
)
workload_owners: Callable[[dict[str, Any]], dict[str, str]] = (
    _k.workload_owners if _k is not None else workload_owners_py
)
