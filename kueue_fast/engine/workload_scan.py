"""What the Cluster's construction needs of every workload, in one pass
(:func:`workload_scan`).

Two implementations on purpose: ``kueue_fast.engine._workload_scan``
(engine/_workload_scan.pyx) is the compiled twin of :func:`workload_scan_py`,
used when this installation's module is from these sources (_compiled); an
install without it runs the Python one (the same results, slower). The tests
hold the compiled one to the Python one."""

from __future__ import annotations

from typing import Any, NamedTuple

from .. import _compiled


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


_compiled_scan = _compiled.module("engine._workload_scan")


def workload_scan(workloads: dict[str, Any]) -> WorkloadScan:
    """WorkloadScan of the workloads by key, in one pass in C when compiled."""
    if _compiled_scan is None:
        return workload_scan_py(workloads)
    return WorkloadScan(*_compiled_scan.workload_scan(workloads))
