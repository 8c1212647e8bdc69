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

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import pytest
from fake_apiserver import DropConnection, WriteInfo
from kf_harness import JOBS, Harness, cluster_queue, flavor, job, local_queue, priority_class, wait_for
from test_e2e import is_true, running

from kueue_fast.api.quantity import parse_quantity
from kueue_fast.controller.reconciler import default_identity
from kueue_fast.kube.client import LEASES

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
        # kill after decision writes: Events change no decision
        if not info.user_agent.startswith("kueue-fast-controller/") or info.resource in ("leases", "events"):
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


def _start_cli(h: Harness, pod_name: str, *extra: str) -> subprocess.Popen[bytes]:
    """`python -m kueue_fast.controller` in a process of its own, as in a pod."""
    env = dict(os.environ, POD_NAME=pod_name)
    cmd = [sys.executable, "-m", "kueue_fast.controller", "--kubeconfig", h.kubeconfig]
    cmd += ["--lease-namespace", h.lease_ns, "--metrics-bind-address", "0", "--log-level", "warning", *extra]
    # cwd: `-m` puts the current folder first on sys.path; from the checkout it
    # would import the source tree, without the compiled modules of the install.
    return subprocess.Popen(cmd, env=env, cwd=tempfile.gettempdir())


def _holder(h: Harness) -> str:
    lease = h.get(LEASES, "kueue-fast-leader", h.lease_ns)
    return str(((lease or {}).get("spec") or {}).get("holderIdentity") or "")


def test_sigterm_lets_the_last_write_land_then_hands_the_lease_over(fake_cluster: Harness) -> None:
    """A graceful stop (SIGTERM) gives the Lease up, so that the next leader
    starts at once instead of waiting it out; and only after the writes in
    flight have landed, or the next leader could decide on a state they then
    change (two admissions of the same quota)."""
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = h.namespace("term")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "2"}}))
    h.create(local_queue(ns, "lq", "cq"))
    order: list[str] = []

    def hook(info: WriteInfo) -> None:
        if info.resource == "workloads" and info.subresource == "status":
            if ((info.obj or {}).get("status") or {}).get("admission"):
                order.append("admission")
        elif info.resource == "leases" and not ((info.obj or {}).get("spec") or {}).get("holderIdentity"):
            order.append("released")

    api.add_write_hook(hook)
    slow = api.inject(delay=2.0, verb="patch", resource="workloads", subresource="status", count=1)
    proc = _start_cli(h, "pod-a")
    try:
        wait_for(lambda: _holder(h) == "pod-a", timeout=20, what="pod-a leads")
        h.create(job(ns, "j", "lq"))
        wait_for(lambda: slow.hits == 1, timeout=20, what="the admission write in flight")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert order == ["admission", "released"], order
    # the next leader (another pod: another identity) starts at once, not after 15 s
    b = h.controller(identity="pod-b", lease_duration=15.0, renew_deadline=10.0)
    wait_for(lambda: b.is_leader, timeout=5, what="pod-b leads at once")
    wait_for(lambda: running(h, ns, "j"), what="the admitted Job started by pod-b")


def test_a_restarted_pod_takes_its_own_lease_back_at_once(cluster: Harness) -> None:
    """The identity is the pod's name ($POD_NAME from the downward API): a
    container restarted after a crash (SIGKILL: nothing released) is the
    same candidate and need not wait for its own Lease to expire."""
    h = cluster
    proc = _start_cli(h, "pod-a", "--leader-elect=true")
    try:
        wait_for(lambda: _holder(h) == "pod-a", timeout=20, what="pod-a leads")
        proc.kill()
        proc.wait(timeout=10)
        lease = h.get(LEASES, "kueue-fast-leader", h.lease_ns)
        assert lease is not None and lease["spec"]["leaseDurationSeconds"] == 15
        renewed = lease["spec"]["renewTime"]
        t0 = time.monotonic()
        proc = _start_cli(h, "pod-a")
        wait_for(
            lambda: (h.get(LEASES, "kueue-fast-leader", h.lease_ns) or {})["spec"]["renewTime"] != renewed,
            timeout=20,
            what="pod-a renews its Lease again",
        )
        assert time.monotonic() - t0 < 10  # well before the 15 s the Lease had left
        assert _holder(h) == "pod-a"
    finally:
        proc.kill()
        proc.wait(timeout=10)


def test_identity_is_the_pod_name_else_unique_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POD_NAME", "kueue-fast-controller-7d9f-abcde")
    assert default_identity() == "kueue-fast-controller-7d9f-abcde"
    monkeypatch.delenv("POD_NAME")
    a, b = default_identity(), default_identity()
    host = socket.gethostname()
    # client-go's convention off a pod: two processes on one machine must not share an identity
    assert a.startswith(host + "_") and b.startswith(host + "_") and a != b
