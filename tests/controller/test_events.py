"""Kueue's Events: on Workloads and Jobs, with Kueue's reasons, types and
messages, through events.k8s.io/v1 with client-go's series and a rate limit
of their own. The flows run on the in-process API server and, when
KUEUE_FAST_TEST_KUBECONFIG names a cluster, on that cluster."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_apiserver import FakeAPIServer
from kf_harness import Harness, cluster_queue, flavor, job, local_queue, priority_class, wait_for
from test_e2e import running, setup_queues

from kueue_fast.controller.events import (
    ADMISSION,
    JOB_CONTROLLER,
    WORKLOAD_CONTROLLER,
    EventRecorder,
    truncate_note,
)
from kueue_fast.controller.job_kinds import workload_name
from kueue_fast.kube.client import CLUSTER_QUEUES, EVENTS, JOBS, NAMESPACES, KubeClient

JSON = dict[str, Any]


def events(h: Harness, ns: str, name: str | None = None, reason: str | None = None) -> list[JSON]:
    out = []
    for ev in h.kube.list(EVENTS, namespace=ns)["items"]:
        if name is not None and ev["regarding"].get("name") != name:
            continue
        if reason is not None and ev["reason"] != reason:
            continue
        out.append(ev)
    return out


def one_event(h: Harness, ns: str, name: str, reason: str) -> JSON:
    got = wait_for(lambda: events(h, ns, name, reason), what=f"{reason} on {name}")
    assert len(got) == 1, got
    return got[0]


def test_admission_records_kueues_events(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    h.create(job(ns, "first", "lq"))
    wait_for(lambda: running(h, ns, "first"), what="first running")
    j = h.get(JOBS, "first", ns)
    assert j is not None
    wl = workload_name("first", j["metadata"]["uid"])

    created = one_event(h, ns, "first", "CreatedWorkload")
    assert (created["type"], created["note"]) == ("Normal", f"Created Workload: {ns}/{wl}")
    assert created["reportingController"] == JOB_CONTROLLER and created["action"] == "CreatedWorkload"
    assert created["regarding"]["kind"] == "Job" and created["regarding"]["uid"] == j["metadata"]["uid"]
    started = one_event(h, ns, "first", "Started")
    assert started["note"] == f"Admitted by clusterQueue {cq}"

    reserved = one_event(h, ns, wl, "QuotaReserved")
    assert reserved["type"] == "Normal" and reserved["reportingController"] == ADMISSION
    assert re.fullmatch(
        rf"Quota reserved in ClusterQueue {cq}, wait time since queued was \d+s", reserved["note"]
    )
    assert reserved["regarding"]["kind"] == "Workload" and reserved["regarding"]["apiVersion"].startswith(
        "kueue"
    )
    admitted = one_event(h, ns, wl, "Admitted")
    assert admitted["note"] == f"Admitted by ClusterQueue {cq}, wait time since reservation was 0s"
    assert reserved["reportingInstance"].startswith(ADMISSION + "-") and reserved["eventTime"]

    # the second waits: Kueue's Warning with the pending reason and message
    h.create(job(ns, "second", "lq"))
    pending = wait_for(lambda: [e for e in events(h, ns) if e["type"] == "Warning"], what="a pending Warning")
    assert pending[0]["reason"] == "WaitingForQuota" and pending[0]["reportingController"] == ADMISSION
    assert "insufficient unused quota for cpu in flavor" in pending[0]["note"]
    assert pending[0]["regarding"]["name"].startswith("job-second-")

    h.finish_job(ns, "first")
    finished = one_event(h, ns, "first", "FinishedWorkload")
    assert finished["note"] == f"Workload '{ns}/{wl}' is declared finished"
    wait_for(lambda: running(h, ns, "second"), what="second admitted")


def test_preemption_records_kueues_events(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1", preemption={"withinClusterQueue": "LowerPriority"})
    low, high = h.name("low"), h.name("high")
    h.create(priority_class(low, 10))
    h.create(priority_class(high, 1000))
    ctl = h.controller()
    h.create(job(ns, "victim", "lq", priority=low))
    wait_for(lambda: running(h, ns, "victim"), what="victim running")
    h.create(job(ns, "urgent", "lq", priority=high))
    wait_for(lambda: running(h, ns, "urgent"), what="urgent admitted after preemption")
    # the preemptor re-issues the eviction each cycle until the victim's job
    # stops: one preemption, counted once (the loop spun on the re-issues)
    assert ctl.preemptions == 1
    victim = h.workload_of(ns, "victim")
    urgent = h.workload_of(ns, "urgent")
    assert victim is not None and urgent is not None
    vname, uname = victim["metadata"]["name"], urgent["metadata"]["name"]
    message = next(c["message"] for c in victim["status"]["conditions"] if c["type"] == "Evicted")

    evicted = one_event(h, ns, vname, "EvictedDueToPreempted")
    assert (evicted["type"], evicted["note"]) == ("Normal", message)
    preempted = one_event(h, ns, vname, "Preempted")
    priorities = (
        "; preemptor effective priority: 1000 (base: 1000, boost: 0); "
        "preemptee effective priority: 10 (base: 10, boost: 0)"
    )
    assert preempted["note"] == message + priorities
    by = one_event(h, ns, uname, "PreemptedWorkload")
    assert by["note"] == (
        f"Preempted workload {ns}/{vname} (UID: {victim['metadata']['uid']}) in ClusterQueue {cq}{priorities}"
    )
    stopped = one_event(h, ns, "victim", "Stopped")
    assert stopped["note"] == message and stopped["reportingController"] == JOB_CONTROLLER


def test_hold_and_drain_eviction_is_the_workload_controllers(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    h.create(job(ns, "a", "lq"))
    wait_for(lambda: running(h, ns, "a"), what="a running")
    h.patch(CLUSTER_QUEUES, cq, {"spec": {"stopPolicy": "HoldAndDrain"}})
    wait_for(lambda: not running(h, ns, "a"), what="a stopped")
    wl = h.workload_of(ns, "a")
    assert wl is not None
    message = next(c["message"] for c in wl["status"]["conditions"] if c["type"] == "Evicted")
    ev = one_event(h, ns, wl["metadata"]["name"], "EvictedDueToClusterQueueStopped")
    assert (ev["type"], ev["note"], ev["reportingController"]) == ("Normal", message, WORKLOAD_CONTROLLER)
    assert one_event(h, ns, "a", "Stopped")["note"] == message
    assert not events(h, ns, wl["metadata"]["name"], "Preempted")


def test_events_off(fake_cluster: Harness) -> None:
    h = fake_cluster
    api = h.fake
    assert api is not None
    ns, rf, cq = setup_queues(h, cpu="1")
    ctl = h.controller(identity="quiet", events=False)
    h.create(job(ns, "a", "lq"))
    h.create(job(ns, "b", "lq"))
    wait_for(lambda: running(h, ns, "a") or running(h, ns, "b"), what="one running")
    time.sleep(0.5)
    assert events(h, ns) == []
    assert not [k for k in api.counts("kueue-fast-controller/quiet") if k[1] == "events"]
    assert ctl.metrics.api_writes_total.labels("event")._value.get() == 0
    assert ctl.metrics.api_writes_total.labels("decision")._value.get() >= 3


def test_missing_priority_class_is_a_warning_on_the_job(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns, rf, cq = setup_queues(h)
    h.controller()
    h.create(job(ns, "orphan", "lq", priority="no-such-class"))
    ev = one_event(h, ns, "orphan", "WorkloadPriorityClassNotFound")
    assert (ev["type"], ev["note"]) == ("Warning", 'WorkloadPriorityClass "no-such-class" not found')


# --- the recorder on its own: series, rate limit --------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.ns = 1_700_000_000 * 10**9

    def __call__(self) -> int:
        return self.ns

    def advance(self, seconds: float) -> None:
        self.ns += int(seconds * 1e9)


@pytest.fixture
def recorder_env(fake_api: FakeAPIServer, tmp_path: Path) -> Iterator[tuple[FakeAPIServer, KubeClient]]:
    client = KubeClient.from_config(fake_api.write_kubeconfig(str(tmp_path / "kc")), max_retries=0)
    client.create(NAMESPACES, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    try:
        yield fake_api, client
    finally:
        client.close()


def wl(name: str, rv: str = "7") -> JSON:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "uid": "u-" + name, "resourceVersion": rv},
    }


def writes(api: FakeAPIServer) -> dict[str, int]:
    return {verb: n for (verb, res), n in api.counts().items() if res == "events"}


def test_series_as_client_go(recorder_env: tuple[FakeAPIServer, KubeClient]) -> None:
    """First occurrence: create; second: patch count 2; later ones counted in
    memory and written when the series ends (6 minutes without one). A write
    still queued sends the latest count. The note is not part of an Event's
    identity; the object's resourceVersion is."""
    api, client = recorder_env
    clock = Clock()
    rec = EventRecorder(client, time_ns=clock, sweep_interval=3600).start()
    try:
        rec.record(wl("w"), "Warning", "Pending", "try 0", controller=ADMISSION)
        wait_for(lambda: writes(api) == {"create": 1}, what="created")
        clock.advance(1)
        rec.record(wl("w"), "Warning", "Pending", "try 1", controller=ADMISSION)
        wait_for(lambda: writes(api) == {"create": 1, "patch": 1}, what="patched")
        [ev] = api.list("events", "ns", group="events.k8s.io")
        assert ev["note"] == "try 0" and ev["series"]["count"] == 2
        for i in range(2, 5):
            clock.advance(1)
            rec.record(wl("w"), "Warning", "Pending", f"try {i}", controller=ADMISSION)
        time.sleep(0.2)
        assert writes(api) == {"create": 1, "patch": 1}  # counted in memory
        clock.advance(359)
        rec.sweep()
        time.sleep(0.2)
        assert writes(api) == {"create": 1, "patch": 1}  # still going on: nothing written
        clock.advance(2)
        rec.sweep()  # six minutes without an occurrence: the final count
        wait_for(lambda: api.list("events", "ns", group="events.k8s.io")[0]["series"]["count"] == 5)
        assert writes(api) == {"create": 1, "patch": 2}
        assert (
            ev["series"]["lastObservedTime"]
            <= api.list("events", "ns", group="events.k8s.io")[0]["series"]["lastObservedTime"]
        )
        # the series is over: the next occurrence is a new Event; another resourceVersion too
        rec.record(wl("w"), "Warning", "Pending", "again", controller=ADMISSION)
        rec.record(wl("w", rv="8"), "Warning", "Pending", "again", controller=ADMISSION)
        wait_for(lambda: writes(api).get("create") == 3, what="two new Events")
        assert rec.recorded == 7
    finally:
        rec.stop()


def test_a_queued_write_sends_the_latest_count(recorder_env: tuple[FakeAPIServer, KubeClient]) -> None:
    api, client = recorder_env
    rec = EventRecorder(client, sweep_interval=3600)
    for i in range(5):  # before the writer runs: one write waits, the count goes on
        rec.record(wl("w"), "Warning", "Pending", f"try {i}", controller=ADMISSION)
    rec.start()
    try:
        wait_for(lambda: writes(api) == {"create": 1}, what="one create")
        [ev] = api.list("events", "ns", group="events.k8s.io")
        assert ev["series"]["count"] == 5 and ev["note"] == "try 0"
    finally:
        rec.stop()


def test_expired_series_is_created_again(recorder_env: tuple[FakeAPIServer, KubeClient]) -> None:
    api, client = recorder_env
    rec = EventRecorder(client, sweep_interval=3600).start()
    try:
        rec.record(wl("w"), "Normal", "Started", "n", controller=JOB_CONTROLLER)
        wait_for(lambda: writes(api).get("create") == 1)
        [ev] = api.list("events", "ns", group="events.k8s.io")
        client.delete(EVENTS, ev["metadata"]["name"], "ns")  # the Event's TTL ran out
        rec.record(wl("w"), "Normal", "Started", "n", controller=JOB_CONTROLLER)
        wait_for(lambda: writes(api).get("create") == 2, what="created again")
        [again] = api.list("events", "ns", group="events.k8s.io")
        assert again["series"]["count"] == 2 and again["metadata"]["name"] == ev["metadata"]["name"]
    finally:
        rec.stop()


def test_rate_limit_and_bounded_queue(recorder_env: tuple[FakeAPIServer, KubeClient]) -> None:
    """A storm of distinct Events is written at --events-qps at most, apart
    from the client's budget; beyond the queue's bound they are dropped."""
    api, client = recorder_env
    dropped: list[int] = []
    rec = EventRecorder(
        client, qps=20, burst=1, max_queued=10, sweep_interval=3600, on_drop=lambda: dropped.append(1)
    )
    for i in range(30):  # queued before the writer starts: 10 kept, 20 dropped
        rec.record(wl(f"w{i}"), "Normal", "QuotaReserved", "n", controller=ADMISSION)
    assert (rec.depth(), rec.dropped, len(dropped)) == (10, 20, 20)
    t0 = time.monotonic()
    rec.start()
    try:
        wait_for(lambda: writes(api).get("create") == 10, what="the queued ten written")
        assert time.monotonic() - t0 >= 9 / 20 * 0.9  # 20 a second after a burst of one
        assert client.bucket.tokens > client.bucket.burst - 2  # the client's own budget untouched
    finally:
        rec.stop()


def test_warnings_and_evictions_go_first_and_are_dropped_last(
    recorder_env: tuple[FakeAPIServer, KubeClient],
) -> None:
    api, client = recorder_env
    rec = EventRecorder(client, max_queued=3, sweep_interval=3600)
    for i in range(3):
        rec.record(wl(f"ok{i}"), "Normal", "QuotaReserved", "n", controller=ADMISSION)
    rec.record(wl("late"), "Warning", "WaitingForQuota", "n", controller=ADMISSION)
    rec.record(wl("victim"), "Normal", "EvictedDueToPreempted", "n", controller=ADMISSION)
    rec.record(wl("one-more"), "Normal", "QuotaReserved", "n", controller=ADMISSION)
    assert (rec.depth(), rec.dropped) == (3, 3)
    rec.start()
    try:
        wait_for(lambda: writes(api).get("create") == 3, what="three written")
        got = sorted(
            api.list("events", "ns", group="events.k8s.io"),
            key=lambda e: int(e["metadata"]["resourceVersion"]),
        )
        assert [e["regarding"]["name"] for e in got] == ["late", "victim", "ok0"]
    finally:
        rec.stop()


def test_long_notes_are_cut_as_kueue_does() -> None:
    assert truncate_note("x" * 1024) == "x" * 1024
    cut = truncate_note("é" * 600)  # 1200 bytes
    assert len(cut.encode()) <= 1024 and cut.endswith(" ...")


def test_job_events_name_the_job(fake_cluster: Harness) -> None:
    """A queued Job created unsuspended is stopped: Stopped on the Job."""
    h = fake_cluster
    ns = h.namespace("ev")
    h.create(flavor("rf"))
    h.create(cluster_queue("cq", {"rf": {"cpu": "1"}}))
    h.create(local_queue(ns, "lq", "cq"))
    h.create(job(ns, "blocker", "lq"))
    h.controller()
    wait_for(lambda: running(h, ns, "blocker"), what="blocker running")
    h.create(job(ns, "eager", "lq", suspend=False))
    ev = one_event(h, ns, "eager", "Stopped")
    assert ev["note"] == "Missing Workload; unable to restore pod templates"
