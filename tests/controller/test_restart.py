"""Kill the controller at many points and start it again: no quota is ever
exceeded (by Workloads holding an admission, nor by running Jobs) and no
workload is lost or admitted twice.

A write hook on the in-process API server kills the controller right after
the server committed its K-th write, before the answer reaches it (the worst
moment: the write landed, the controller never learns it). A new controller
with the same identity (a restarted container) takes the lease at once,
rebuilds the engine from the Workloads and carries on. An invariant check
runs after every committed write of anyone.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from fake_apiserver import DropConnection, WriteInfo
from kf_harness import JOBS, Harness, cluster_queue, flavor, job, local_queue, priority_class, wait_for
from test_e2e import is_true, running

from kueue_fast.quantity import parse_quantity

JSON = dict[str, Any]
QUOTA = 2000  # milli-cpu of the one ClusterQueue


def _finished(obj: JSON) -> bool:
    return is_true(obj, "Finished")


def check_invariants(info: WriteInfo, violations: list[str]) -> None:
    api = info.server
    with api.lock:
        objs = api.snapshot()
        wls = list(objs[("kueue.x-k8s.io", "workloads")].values())
        jobs = list(objs[("batch", "jobs")].values())
        admitted = 0
        for w in wls:
            adm = (w.get("status") or {}).get("admission")
            if adm and not _finished(w):
                for psa in adm.get("podSetAssignments") or []:
                    admitted += parse_quantity((psa.get("resourceUsage") or {}).get("cpu", "0"), "cpu")
        running_cpu = 0
        for j in jobs:
            done = any(
                c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                for c in (j.get("status") or {}).get("conditions") or []
            )
            if not j["spec"].get("suspend") and not done:
                req = j["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["cpu"]
                running_cpu += parse_quantity(req, "cpu") * j["spec"].get("parallelism", 1)
        by_job: dict[str, int] = {}
        for w in wls:
            uid = (w["metadata"].get("labels") or {}).get("kueue.x-k8s.io/job-uid", "")
            by_job[uid] = by_job.get(uid, 0) + 1
    if admitted > QUOTA:
        violations.append(f"after {info.verb} {info.resource}/{info.name}: {admitted}m cpu admitted")
    if running_cpu > QUOTA:
        violations.append(f"after {info.verb} {info.resource}/{info.name}: {running_cpu}m cpu running")
    dup = [u for u, n in by_job.items() if n > 1]
    if dup:
        violations.append(f"two Workloads for one Job: {dup}")


@pytest.mark.parametrize("every", [1, 2, 3, 5, 8])
def test_kill_and_restart_at_many_points(fake_cluster: Harness, every: int) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = h.namespace("restart")
    h.create(flavor("rf", {"pool": "x"}, [{"key": "t", "operator": "Exists", "effect": "NoSchedule"}]))
    h.create(cluster_queue("cq", {"rf": {"cpu": "2"}}, preemption={"withinClusterQueue": "LowerPriority"}))
    h.create(local_queue(ns, "lq", "cq"))
    h.create(priority_class("low", 1))
    h.create(priority_class("high", 100))

    violations: list[str] = []
    lock = threading.Lock()
    state = {"writes": 0, "kills": 0, "ctl": None}

    def hook(info: WriteInfo) -> None:
        check_invariants(info, violations)
        if not info.user_agent.startswith("kueue-fast-controller/") or info.resource == "leases":
            return
        with lock:
            state["writes"] += 1
            ctl = state["ctl"]
            if ctl is None or state["writes"] % every:
                return
            state["kills"] += 1
            state["ctl"] = None
        ctl.kill()  # type: ignore[attr-defined]
        raise DropConnection()  # the answer never reaches it

    api.add_write_hook(hook)

    def ensure_controller() -> None:
        with lock:
            alive = state["ctl"] is not None
        if not alive:
            ctl = h.controller(identity="only")
            with lock:
                state["ctl"] = ctl

    def progress(pred: Any, what: str) -> None:
        def step() -> Any:
            ensure_controller()
            return pred()

        wait_for(step, timeout=60, interval=0.01, what=what)

    lows = [f"low-{i}" for i in range(3)]
    highs = [f"high-{i}" for i in range(2)]
    for name in lows:
        h.create(job(ns, name, "lq", priority="low"))
    progress(lambda: sum(1 for n in lows if running(h, ns, n)) == 2, "two low jobs running")
    for name in highs:
        h.create(job(ns, name, "lq", priority="high"))
    progress(lambda: all(running(h, ns, n) for n in highs), "high jobs running after preemption")
    for name in highs:
        h.finish_job(ns, name)
    progress(lambda: sum(1 for n in lows if running(h, ns, n)) == 2, "low jobs back")
    done: set[str] = set()
    while len(done) < len(lows):
        progress(lambda: any(running(h, ns, n) for n in lows if n not in done), "a low job running")
        for n in lows:
            if n not in done and running(h, ns, n):
                h.finish_job(ns, n)
                done.add(n)
    progress(
        lambda: all((w := h.workload_of(ns, n)) and is_true(w, "Finished") for n in lows + highs),
        "every workload finished",
    )
    api.remove_write_hook(hook)

    assert not violations, violations[:5]
    assert state["kills"] >= 3
    wls = h.workloads(ns)
    assert len(wls) == len(lows) + len(highs)
    for n in lows + highs:
        j = h.get(JOBS, n, ns)
        assert j is not None and any(c["type"] == "Complete" for c in j["status"]["conditions"])
