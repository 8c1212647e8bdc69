"""One decider: two controllers, one Lease; only the leader schedules and
writes, the standby takes over when the leader dies."""

from __future__ import annotations

from kf_harness import Harness, cluster_queue, flavor, job, local_queue, wait_for
from test_e2e import running

from kueue_fast.controller.kube import LEASES

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
