"""One decider: two controllers, one Lease; only the leader schedules and
writes, the standby takes over when the leader dies."""

from __future__ import annotations

import logging
import urllib.error
import urllib.request

import pytest
from kf_harness import Harness, cluster_queue, flavor, job, local_queue, wait_for
from test_e2e import running

from kueue_fast.controller.prometheus import HealthServer
from kueue_fast.kube.client import LEASES

WRITE_VERBS = ("create", "update", "patch", "delete")


def writes(h: Harness, identity: str, exclude_leases: bool = True) -> int:
    assert h.fake is not None
    counts = h.fake.counts(user_agent=f"kueue-fast-controller/{identity}")
    return sum(
        n
        for (verb, res), n in counts.items()
        if verb in WRITE_VERBS and not (exclude_leases and res == "leases")
    )


def test_two_controllers_one_leader(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns = h.namespace("le")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "2"}}))
    h.create(local_queue(ns, "lq", "cq"))
    a = h.controller(identity="a")
    wait_for(lambda: a.is_leader, what="a leads")
    b = h.controller(identity="b")
    wait_for(lambda: b.ready(), what="b synced")
    for i in range(3):
        h.create(job(ns, f"j{i}", "lq"))
    wait_for(lambda: sum(1 for i in range(3) if running(h, ns, f"j{i}")) == 2, what="two running")
    assert not b.is_leader
    assert writes(h, "a") > 0 and writes(h, "b") == 0
    lease = h.get(LEASES, "kueue-fast-leader", h.lease_ns)
    assert lease is not None and lease["spec"]["holderIdentity"] == "a"

    # the leader dies without giving the lease up: b takes over after it expires
    a.kill()
    wait_for(lambda: b.is_leader, timeout=10, what="b leads")
    h.finish_job(ns, "j0")
    wait_for(lambda: running(h, ns, "j2"), what="j2 admitted by b")
    assert writes(h, "b") > 0
    lease = h.get(LEASES, "kueue-fast-leader", h.lease_ns)
    assert (
        lease is not None
        and lease["spec"]["holderIdentity"] == "b"
        and lease["spec"]["leaseTransitions"] == 1
    )
    assert len(h.workloads(ns)) == 3


def test_clean_stop_hands_over_at_once(fake_cluster: Harness) -> None:
    h = fake_cluster
    a = h.controller(identity="a", lease_duration=30.0, renew_deadline=20.0)
    wait_for(lambda: a.is_leader, what="a leads")
    b = h.controller(identity="b", lease_duration=30.0, renew_deadline=20.0)
    wait_for(lambda: b.ready(), what="b synced")
    a.stop(release_lease=True)
    # a 30 s lease, released: b does not wait for it to expire
    wait_for(lambda: b.is_leader, timeout=5, what="b leads")


def test_leader_that_cannot_renew_stops_writing(fake_cluster: Harness) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    a = h.controller(identity="a")
    wait_for(lambda: a.is_leader, what="a leads")
    fault = api.inject(status=500, resource="leases", user_agent="kueue-fast-controller/a", count=-1)
    wait_for(lambda: not a.leader, timeout=10, what="a steps down")
    fault.count = 0
    wait_for(lambda: a.is_leader, timeout=10, what="a leads again (engine rebuilt)")
    assert a.metrics.engine_rebuilds_total._value.get() == 2


def _leader_records(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [
        r
        for r in caplog.records
        if r.name.startswith("kueue_fast.controller")
        and r.levelno >= logging.WARNING
        and text in r.getMessage()
    ]


def test_missing_lease_namespace_is_said_loudly_once_and_not_ready(
    cluster: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Without the Lease's namespace the controller can never lead: it says
    so at the default log level with the fix, not at every retry, and
    /readyz fails with the reason; creating the namespace fixes it."""
    h = cluster
    caplog.set_level(logging.INFO)
    nowhere = h.name("nowhere")
    a = h.controller(identity="a", lease_namespace=nowhere)
    srv = HealthServer("127.0.0.1:0", a.metrics, a.healthy, a.readiness)
    srv.start()
    try:
        wait_for(lambda: _leader_records(caplog, nowhere), what="the error logged")
        wait_for(lambda: a.elector is not None and a.elector.failures >= 8, what="eight failed attempts")
        records = _leader_records(caplog, nowhere)
        assert len(records) == 1, [r.getMessage() for r in records]
        msg = records[0].getMessage()
        assert records[0].levelno == logging.ERROR
        assert f"namespace {nowhere}" in msg and "--lease-namespace" in msg and "create" in msg
        assert not a.is_leader and not a.ready()
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://{srv.address}/readyz")
        body = e.value.read().decode()
        assert e.value.code == 503 and "[-]leader-election failed" in body and f"namespace {nowhere}" in body
        assert "[+]informers-synced ok" in body
        metrics = urllib.request.urlopen(f"http://{srv.address}/metrics").read().decode()
        assert "kueue_fast_is_leader 0.0" in metrics

        h.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": nowhere}})
        wait_for(lambda: a.is_leader, what="a leads once the namespace exists")
        wait_for(a.ready, what="ready")
        assert urllib.request.urlopen(f"http://{srv.address}/readyz").read() == b"ok"
        assert (
            "kueue_fast_is_leader 1.0"
            in urllib.request.urlopen(f"http://{srv.address}/metrics").read().decode()
        )
        assert any("reachable again" in r.getMessage() for r in caplog.records)
    finally:
        srv.stop()


def test_forbidden_lease_is_said_with_the_rbac_fix(
    fake_cluster: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    caplog.set_level(logging.INFO)
    api.inject(status=403, resource="leases", user_agent="kueue-fast-controller/a", count=-1)
    a = h.controller(identity="a")
    records = wait_for(lambda: _leader_records(caplog, "403"), what="the error logged")
    assert "Role" in records[0].getMessage() and records[0].levelno == logging.ERROR
    wait_for(lambda: not a.ready() and a.readiness()[-1][1], what="not ready")
    assert "forbidden" in dict(a.readiness())["leader-election"]


def test_standby_behind_a_live_leader_is_ready(fake_cluster: Harness) -> None:
    """Kubernetes convention (kube-scheduler, controller-manager): readiness
    never requires leading, or a rolling update of two replicas would wait
    forever for the new pod."""
    h = fake_cluster
    a = h.controller(identity="a")
    wait_for(lambda: a.is_leader, what="a leads")
    b = h.controller(identity="b")
    wait_for(b.ready, what="b ready")
    assert not b.is_leader
    assert dict(b.readiness()) == {"informers-synced": "", "leader-election": ""}


def test_no_leader_election_reports_leading(fake_cluster: Harness) -> None:
    ctl = fake_cluster.controller(leader_elect=False)
    wait_for(lambda: ctl.is_leader, what="deciding")
    assert ctl.metrics.is_leader._value.get() == 1
