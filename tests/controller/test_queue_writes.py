"""How the controller writes what only informs (queues.py): pending reasons on
Workloads and ClusterQueue / LocalQueue status, by Kueue's rules and with
the budget the decisions leave, and the queue counts kept one Workload at a
time."""

from __future__ import annotations

import collections
import threading
import time
from typing import Any

import pytest
from fake_apiserver import WriteInfo
from kf_harness import (
    CLUSTER_QUEUES,
    JOBS,
    LOCAL_QUEUES,
    WORKLOADS,
    Harness,
    cluster_queue,
    flavor,
    job,
    local_queue,
    wait_for,
)
from test_e2e import cond, running

from kueue_fast.controller.kube import KUEUE_API, ClientClosed, TokenBucket
from kueue_fast.controller.queues import QueueCounts

JSON = dict[str, Any]


def _kind_of_write(info: WriteInfo) -> str:
    """pending reason, cq status, lq status, or other."""
    if info.subresource == "status" and info.resource in ("clusterqueues", "localqueues"):
        return {"clusterqueues": "cq status", "localqueues": "lq status"}[info.resource]
    if info.resource == "workloads" and info.subresource == "status" and info.obj is not None:
        qr = cond(info.obj, "QuotaReserved")
        if (
            qr is not None
            and qr.get("status") == "False"
            and not (info.obj.get("status") or {}).get("admission")
        ):
            return "pending reason"
    return "other"


# --- the spare budget ----------------------------------------------------------------------------


def test_spare_tokens_are_the_ones_nobody_waits_for() -> None:
    now = [0.0]
    b = TokenBucket(10, 4, clock=lambda: now[0])
    assert b.try_spare() == 0.0 and b.try_spare() == 0.0  # saved beyond half the burst (2)
    assert b.try_spare() == pytest.approx(0.1)  # the other half stays for ordinary writes
    assert b.reserve() == 0.0 and b.reserve() == 0.0  # which take it
    assert b.reserve() == pytest.approx(0.1)  # and the next one on credit
    assert b.try_spare() == pytest.approx(0.4)  # the spare one: once the debt is paid and half saved
    now[0] = 0.4
    assert b.try_spare() == 0.0
    assert b.reserve() == 0.0


def test_a_write_out_of_patience_takes_its_ordinary_turn() -> None:
    b = TokenBucket(1000, 1)
    b.reserve()
    b.reserve()  # in debt: no token is spare for a while
    stop = threading.Event()
    b.take_spare(stop, 0.0)  # no patience: it queues behind the ordinary ones
    assert b.tokens < -1.5
    stop.set()
    slow = TokenBucket(1, 1, clock=lambda: 0.0)
    slow.reserve()
    with pytest.raises(ClientClosed):  # the client closing ends the wait
        slow.take_spare(stop, 5.0)


# --- Kueue's rules ---------------------------------------------------------------------------------


def _queues(h: Harness, n: int) -> tuple[str, list[str]]:
    ns = h.namespace("team")
    rf = h.name("rf")
    h.create(flavor(rf))
    cqs = []
    for i in range(n):
        cq = h.name(f"cq-{i}")
        h.create(cluster_queue(cq, {rf: {"cpu": "1"}}))
        h.create(local_queue(ns, f"lq-{i}", cq))
        cqs.append(cq)
    return ns, cqs


def test_one_write_of_each_informing_kind_at_a_time(fake_cluster: Harness) -> None:
    """Kueue's queue controllers reconcile one queue at a time
    (groupKindConcurrency 1) and its scheduler writes pending reasons one
    after the other (scheduler.go requeueAndUpdate, in its loop): six queues
    changing at once are written one by one."""
    h = fake_cluster
    assert h.fake is not None
    n = 6
    ns, cqs = _queues(h, n)
    lock = threading.Lock()
    now: collections.Counter[str] = collections.Counter()
    most: collections.Counter[str] = collections.Counter()
    seen: collections.Counter[str] = collections.Counter()

    def hook(info: WriteInfo) -> None:
        kind = _kind_of_write(info)
        if kind == "other" or not info.user_agent.startswith("kueue-fast-controller/"):
            return
        with lock:
            now[kind] += 1
            seen[kind] += 1
            most[kind] = max(most[kind], now[kind])
        time.sleep(0.05)  # the answer takes a while: writes sent meanwhile overlap
        with lock:
            now[kind] -= 1

    h.fake.add_write_hook(hook)
    for i in range(n):
        h.create(job(ns, f"run-{i}", f"lq-{i}", cpu="1"))
        h.create(job(ns, f"wait-{i}", f"lq-{i}", cpu="1"))
    h.controller(workers=8)

    def settled() -> bool:
        for cq in cqs:
            st = (h.get(CLUSTER_QUEUES, cq) or {}).get("status") or {}
            if (st.get("admittedWorkloads"), st.get("pendingWorkloads")) != (1, 1):
                return False
        return all(
            ((h.get(LOCAL_QUEUES, f"lq-{i}", ns) or {}).get("status") or {}).get("pendingWorkloads") == 1
            for i in range(n)
        )

    wait_for(settled, timeout=30, what="every queue's status")
    wait_for(lambda: seen["pending reason"] >= n, timeout=30, what="the pending reasons")
    assert seen["cq status"] >= n and seen["lq status"] >= n
    assert dict(most) == {"pending reason": 1, "cq status": 1, "lq status": 1}


def _workload(ns: str, name: str, queue: str, cpu: str) -> JSON:
    """A Workload of its own, as Kueue's performance test creates them."""
    container = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    return {
        "apiVersion": KUEUE_API,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "queueName": queue,
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [container]}}}],
        },
    }


def _admitted(h: Harness, ns: str, name: str) -> bool:
    qr = cond(h.get(WORKLOADS, name, ns), "QuotaReserved")
    return qr is not None and qr.get("status") == "True"


def test_no_pending_reason_for_a_workload_admitted_before_it_is_due(fake_cluster: Harness) -> None:
    """A pending reason is written pending_interval after the try that gave
    it, with the reason of that moment: a Workload admitted meanwhile gets
    none (its admission would overwrite it)."""
    h = fake_cluster
    assert h.fake is not None
    ns, _ = _queues(h, 1)
    pending: list[str] = []

    def hook(info: WriteInfo) -> None:
        if _kind_of_write(info) == "pending reason":
            pending.append(info.name)

    h.fake.add_write_hook(hook)
    for name in ("first", "second"):
        h.create(_workload(ns, name, "lq-0", "1"))
    h.controller(pending_interval=30.0)
    wait_for(lambda: _admitted(h, ns, "first") or _admitted(h, ns, "second"), what="one admitted")
    first, second = ("first", "second") if _admitted(h, ns, "first") else ("second", "first")
    # the second was tried and left pending: Kueue's Warning Event says so at once
    wait_for(
        lambda: any(
            e.get("reason") == "WaitingForQuota" and (e.get("regarding") or {}).get("name") == second
            for e in h.fake.list("events", ns)  # type: ignore[union-attr]
        ),
        what="the pending Event",
    )
    finished = {"type": "Finished", "status": "True", "reason": "ByTest", "message": "done"}
    finished["lastTransitionTime"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    body = {"apiVersion": KUEUE_API, "kind": "Workload", "metadata": {"name": first, "namespace": ns}}
    h.kube.apply(
        WORKLOADS, {**body, "status": {"conditions": [finished]}}, field_manager="test", sub="status"
    )
    wait_for(lambda: _admitted(h, ns, second), what="the second admitted")
    assert pending == []


def test_a_pending_reason_whose_write_failed_is_written_again(fake_cluster: Harness) -> None:
    """A 409 (the Workload changed since) or a failure leaves the reason to
    write: it is written on the next look, not only when it changes."""
    h = fake_cluster
    assert h.fake is not None
    ns, _ = _queues(h, 1)
    for name in ("first", "second"):
        h.create(_workload(ns, name, "lq-0", "1"))
        h.fake.inject(status=409, verb="patch", resource="workloads", subresource="status", name=name)
    h.controller()
    wait_for(lambda: _admitted(h, ns, "first") or _admitted(h, ns, "second"), what="one admitted")
    second = "second" if _admitted(h, ns, "first") else "first"

    def reason() -> str | None:
        qr = cond(h.get(WORKLOADS, second, ns), "QuotaReserved")
        return qr.get("reason") if qr is not None else None

    assert wait_for(reason, what="the pending reason") == "WaitingForQuota"


# --- the counts ----------------------------------------------------------------------------------------


def test_queue_counts_kept_one_workload_at_a_time_are_the_recount() -> None:
    u = (("rf", "cpu", 1000),)
    c = QueueCounts()
    assert c.set("ns/a", ("ns/lq", "cq", False, ())) == [("lq", "ns/lq"), ("cq", "cq")]
    assert c.set("ns/a", ("ns/lq", "cq", False, ())) == []  # the same: nothing changed
    c.set("ns/b", ("ns/lq", None, False, ()))  # its LocalQueue names no ClusterQueue
    c.set("ns/a", ("ns/lq", "cq", True, u))  # admitted
    c.set("ns/c", ("ns/lq2", "cq", True, u))
    c.set("ns/c", None)  # gone
    assert (c.cq["cq"].pending, c.cq["cq"].admitted, c.cq["cq"].usage) == (0, 1, {"rf": {"cpu": 1000}})
    assert (c.lq["ns/lq"].pending, c.lq["ns/lq"].admitted) == (1, 1)
    assert (c.lq["ns/lq2"].admitted, c.lq["ns/lq2"].usage) == (0, {"rf": {"cpu": 0}})


def test_counts_after_churn_are_a_full_recount(fake_cluster: Harness) -> None:
    """Admissions, finishes, deletions and a LocalQueue pointed elsewhere:
    the counts the controller kept are those of counting every Workload."""
    h = fake_cluster
    ns, cqs = _queues(h, 2)
    ctl = h.controller()
    for i in range(4):
        h.create(job(ns, f"a-{i}", "lq-0", cpu="1"))
        h.create(job(ns, f"b-{i}", "lq-1", cpu="1"))
    wait_for(lambda: running(h, ns, "a-0") or running(h, ns, "a-1"), what="a job running")
    for i in range(4):
        if running(h, ns, f"a-{i}"):
            h.finish_job(ns, f"a-{i}")
    h.delete(JOBS, "b-3", ns)
    h.patch(LOCAL_QUEUES, "lq-1", {"spec": {"clusterQueue": cqs[0]}}, ns)
    wait_for(
        lambda: (
            ((h.get(LOCAL_QUEUES, "lq-1", ns) or {}).get("status") or {}).get("admittedWorkloads") is not None
        ),
        what="the LocalQueue's status",
    )
    time.sleep(1.0)  # let the churn run a while
    ctl.stop(release_lease=False)
    for key in ctl.touched:
        ctl.counts.set(key, ctl._counted(key))
    recount = QueueCounts()
    for key in ctl.tracks:
        recount.set(key, ctl._counted(key))

    def tallies(c: QueueCounts) -> JSON:
        out = {}
        for kind, by_name in (("cq", c.cq), ("lq", c.lq)):
            for name, t in by_name.items():
                usage = {f: {r: v for r, v in rs.items() if v} for f, rs in t.usage.items()}
                usage = {f: rs for f, rs in usage.items() if rs}
                if t.pending or t.admitted or usage:
                    out[f"{kind}/{name}"] = (t.pending, t.admitted, usage)
        return out

    assert tallies(ctl.counts) == tallies(recount)
    assert tallies(recount)  # something was counted
