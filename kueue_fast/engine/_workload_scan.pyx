# distutils: language = c++
# cython: language_level=3
"""The whole-state scan of the Cluster's construction, one pass in C (the
compiled twin of kueue_fast.engine.workload_scan.workload_scan_py)."""

# What this module offers Python (kueue_fast/_compiled.py INTERFACES): bump both when it changes.
INTERFACE = 1

def workload_scan(dict workloads):
    """What the Cluster's construction needs of every workload, in one pass
    (workload_scan.WorkloadScan): the latest creation_ns, admission_ns,
    queue_order_ns and pods_ready_ns (None counts as 0; Python ints compared
    as such, a time past 2262 does not fit 64 bits), the resource names the
    pod sets request, the workloads with an admission, and the keys of those
    with a PodsReady time or a requeueAt."""
    cdef object latest = 0, t, ready
    cdef set requested = set()
    cdef list admitted = [], timed = []
    cdef dict requests
    for key, wl in workloads.items():
        t = wl.creation_ns
        if t > latest:
            latest = t
        t = wl.admission_ns
        if t is not None and t > latest:
            latest = t
        t = wl.queue_order_ns
        if t is not None and t > latest:
            latest = t
        ready = wl.pods_ready_ns
        if ready is not None and ready > latest:
            latest = ready
        for ps in wl.pod_sets:
            requests = ps.requests
            for r in requests:
                requested.add(r)
        if wl.admission is not None:
            admitted.append(wl)
        if ready is not None or wl.requeue_at_ns is not None:
            timed.append(key)
    return latest, requested, admitted, timed
