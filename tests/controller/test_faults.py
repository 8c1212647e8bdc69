"""The controller against a misbehaving API server: conflicts, throttling,
server errors, slow answers, dropped and expired watches, a write that fails
for good. Decisions must come out the same, within quota."""

from __future__ import annotations

from kf_harness import JOBS, WORKLOADS, Harness, cluster_queue, flavor, job, local_queue, wait_for
from test_e2e import cond, running

from kueue_fast.controller.job_kinds import workload_name


def setup(h: Harness, cpu: str = "2") -> str:
    ns = h.namespace("faults")
    h.create(flavor("rf", {"pool": "a"}))
    h.create(cluster_queue("cq", {"rf": {"cpu": cpu}}))
    h.create(local_queue(ns, "lq", "cq"))
    return ns


def test_conflicts_throttling_and_server_errors(fake_cluster: Harness) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = setup(h, cpu="3")
    api.inject(status=409, verb="patch", resource="workloads", subresource="status", count=3)
    api.inject(status=429, retry_after=0, verb="patch", resource="jobs", count=2)
    api.inject(status=500, verb="create", resource="workloads", count=2)
    api.inject(status=503, verb="list", resource="workloads", count=1)
    api.inject(delay=0.2, verb="patch", resource="jobs", count=2)
    h.controller()
    for i in range(4):
        h.create(job(ns, f"j{i}", "lq"))
    wait_for(lambda: sum(1 for i in range(4) if running(h, ns, f"j{i}")) == 3, what="three running")
    assert all(f.count == 0 for f in api.faults), [f for f in api.faults if f.count]
    assert len(h.workloads(ns)) == 4


def test_dropped_and_expired_watches(fake_cluster: Harness) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = setup(h, cpu="10")
    ctl = h.controller()
    h.create(job(ns, "a", "lq"))
    wait_for(lambda: running(h, ns, "a"), what="a running")
    lists_before = sum(i.lists for i in ctl.informers)
    api.drop_watches()
    h.create(job(ns, "b", "lq"))
    wait_for(lambda: running(h, ns, "b"), what="b running after the watches dropped")
    api.compact()
    api.drop_watches()
    h.create(job(ns, "c", "lq"))
    wait_for(lambda: running(h, ns, "c"), what="c running after 410 Gone")
    assert sum(i.lists for i in ctl.informers) > lists_before  # relisted after 410
    # a quota change seen only through a relist still takes effect
    api.compact()
    api.drop_watches()
    assert len(h.workloads(ns)) == 3


def test_a_write_failing_for_good_is_undone_and_requeued(fake_cluster: Harness) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = setup(h, cpu="1")
    h.create(job(ns, "doomed", "lq"))
    uid = wait_for(lambda: (j := h.get(JOBS, "doomed", ns)) and j["metadata"]["uid"])
    doomed_wl = workload_name("doomed", uid)
    fault = api.inject(
        status=500, verb="patch", resource="workloads", subresource="status", name=doomed_wl, count=-1
    )
    ctl = h.controller(quarantine=1.0)
    wait_for(lambda: h.get(WORKLOADS, doomed_wl, ns), what="doomed's workload")
    h.create(job(ns, "other", "lq"))
    # "doomed" comes first but its admission cannot be written: the engine
    # forgets it and admits "other"
    wait_for(
        lambda: ctl.metrics.write_failures_total.labels("admit")._value.get() >= 1, what="a failed admission"
    )
    wait_for(lambda: running(h, ns, "other"), what="other admitted instead")
    assert not running(h, ns, "doomed")
    assert "admission" not in ((h.get(WORKLOADS, doomed_wl, ns) or {}).get("status") or {})
    fault.count = 0
    h.finish_job(ns, "other")
    wait_for(lambda: running(h, ns, "doomed"), what="doomed admitted once the API accepts it")


def test_ambiguous_write_is_idempotent(fake_cluster: Harness) -> None:
    """The server commits, then the connection drops: the controller does not
    know whether its write landed, retries, and ends where it should."""
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns = setup(h, cpu="2")
    api.inject(drop=True, after=True, verb="create", resource="workloads", count=1)
    api.inject(drop=True, after=True, verb="patch", resource="workloads", subresource="status", count=1)
    api.inject(drop=True, after=True, verb="patch", resource="jobs", count=1)
    h.controller()
    h.create(job(ns, "x", "lq"))
    h.create(job(ns, "y", "lq"))
    wait_for(lambda: running(h, ns, "x") and running(h, ns, "y"), what="both running")
    wls = h.workloads(ns)
    assert len(wls) == 2
    assert all(cond(w, "Admitted") and cond(w, "Admitted")["status"] == "True" for w in wls)  # type: ignore[index]
