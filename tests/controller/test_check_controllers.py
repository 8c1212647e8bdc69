"""Admission checks against the in-process API server: the controller
reserves quota (QuotaReserved=True, Admitted=False, status.admissionChecks
Pending), waits for the states another controller writes, starts the Job
once every check is Ready; Retry evicts and requeues, Rejected deactivates
(pkg/controller/core/workload_controller.go reconcileCheckBasedEviction)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from kf_harness import (
    ADMISSION_CHECKS,
    JOBS,
    WORKLOADS,
    Harness,
    cluster_queue,
    flavor,
    job,
    local_queue,
    wait_for,
)

from kueue_fast.kube.client import CLUSTER_QUEUES, EVENTS

JSON = dict[str, Any]
T0 = "2024-01-01T00:00:00Z"


def cond(obj: JSON | None, ctype: str) -> JSON:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c  # type: ignore[no-any-return]
    return {}


def checks(wl: JSON | None) -> dict[str, str]:
    return {c["name"]: c["state"] for c in ((wl or {}).get("status") or {}).get("admissionChecks") or []}


def setup(h: Harness, cpu: str = "1") -> str:
    ns = h.namespace("team-a")
    h.create(
        {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "AdmissionCheck",
            "metadata": {"name": "prov"},
            "spec": {"controllerName": "example.com/provisioning"},
        }
    )
    active = {"type": "Active", "status": "True", "reason": "Active", "message": "", "lastTransitionTime": T0}
    h.patch(ADMISSION_CHECKS, "prov", {"status": {"conditions": [active]}}, sub="status")
    h.create(flavor("rf", {}, []))
    cq = cluster_queue("cq", {"rf": {"cpu": cpu}})
    cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": "prov"}]}
    h.create(cq)
    h.create(local_queue(ns, "lq", "cq"))
    return ns


def reserved_pending(h: Harness, ns: str, name: str) -> JSON | None:
    w = h.workload_of(ns, name)
    if w is None or cond(w, "QuotaReserved").get("status") != "True":
        return None
    return w if checks(w) == {"prov": "Pending"} else None


def suspended(h: Harness, ns: str, name: str) -> bool:
    j = h.get(JOBS, name, ns)
    return j is not None and bool(j["spec"].get("suspend"))


def set_check(h: Harness, wl: JSON, state: str) -> None:
    """What an admission check controller writes."""
    entry = {"name": "prov", "state": state, "message": "", "lastTransitionTime": T0}
    md = wl["metadata"]
    h.patch(WORKLOADS, md["name"], {"status": {"admissionChecks": [entry]}}, md["namespace"], sub="status")


def test_the_job_starts_once_the_check_is_ready(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns = setup(h)
    h.controller()
    h.create(job(ns, "a", "lq", cpu="1"))
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="quota reserved, check pending")
    assert (cond(wl, "QuotaReserved").get("status"), cond(wl, "Admitted").get("reason")) == (
        "True",
        "UnsatisfiedAdmissionChecks",
    )
    assert suspended(h, ns, "a")
    set_check(h, wl, "Ready")
    wait_for(lambda: not suspended(h, ns, "a"), what="the job started")
    assert cond(h.workload_of(ns, "a"), "Admitted").get("status") == "True"


def test_retry_requeues_and_rejected_deactivates(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns = setup(h)
    h.controller()
    h.create(job(ns, "a", "lq", cpu="1"))
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="quota reserved")
    set_check(h, wl, "Retry")
    # evicted (reason AdmissionCheck), states reset, reserved again; Requeued False (AdmissionCheck) at
    # the requeue (jobframework reconciler.go), True BackoffFinished once no backoff is ahead
    # (workload_controller.go Reconcile)
    wait_for(
        lambda: cond(h.workload_of(ns, "a"), "Requeued").get("reason") == "BackoffFinished",
        what="evicted by the check and requeued",
    )
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="reserved again")
    assert (cond(wl, "Requeued")["status"], cond(wl, "Requeued")["message"]) == (
        "True",
        "The workload backoff was finished",
    )
    assert suspended(h, ns, "a")
    h.create(job(ns, "b", "lq", cpu="1"))
    set_check(h, wl, "Rejected")
    wait_for(
        lambda: (h.workload_of(ns, "a") or {}).get("spec", {}).get("active") is False, what="deactivated"
    )
    # its quota goes to b
    wait_for(lambda: checks(h.workload_of(ns, "b")) == {"prov": "Pending"}, what="b reserved")
    a = h.workload_of(ns, "a")
    assert cond(a, "Evicted").get("reason") == "DeactivatedDueToAdmissionCheck"
    assert suspended(h, ns, "a")


def test_a_retry_with_requeue_after_seconds_waits_out_its_backoff(fake_cluster: Harness) -> None:
    # workload_controller.go Reconcile: NeedsRequeueAtUpdate -> SetRequeueState(lastTransitionTime +
    # requeueAfterSeconds, no count); the evicted workload queues again only once requeueAt passed
    h = fake_cluster
    ns = setup(h)
    h.controller()
    h.create(job(ns, "a", "lq", cpu="1"))
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="quota reserved")
    now = datetime.now(timezone.utc).replace(microsecond=0)
    entry = {
        "name": "prov",
        "state": "Retry",
        "message": "",
        "requeueAfterSeconds": 2,
        "lastTransitionTime": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    md = wl["metadata"]
    h.patch(WORKLOADS, md["name"], {"status": {"admissionChecks": [entry]}}, ns, sub="status")
    requeue_at = (now + timedelta(seconds=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    wl = wait_for(
        lambda: (
            cond(h.workload_of(ns, "a"), "Evicted").get("reason") == "AdmissionCheck"
            and h.workload_of(ns, "a")
        ),
        what="evicted by the check",
    )
    assert (wl.get("status") or {}).get("requeueState") == {"requeueAt": requeue_at}
    # the eviction itself still holds the reservation with the states reset to Pending: wait
    # for the reservation made after it (Evicted turns False then)
    wl = wait_for(
        lambda: (
            cond(h.workload_of(ns, "a"), "Evicted").get("status") == "False" and reserved_pending(h, ns, "a")
        ),
        what="reserved again after the backoff",
    )
    assert (cond(wl, "Requeued")["status"], cond(wl, "Requeued")["reason"]) == ("True", "BackoffFinished")
    assert "requeueAt" not in (wl["status"].get("requeueState") or {})


def events(h: Harness, ns: str, name: str, reason: str) -> list[JSON]:
    return [
        e
        for e in h.kube.list(EVENTS, namespace=ns)["items"]
        if e["regarding"].get("name") == name and e["reason"] == reason
    ]


def test_checks_ready_records_admitted_only_with_the_wait_since_reservation(fake_cluster: Harness) -> None:
    # workload_controller.go Reconcile (Admitted transition): one "Admitted" Event, "Admitted by ClusterQueue
    # cq, wait time since reservation was Ns" (since QuotaReserved's lastTransitionTime); the scheduler's
    # QuotaReserved Event is not repeated
    h = fake_cluster
    ns = setup(h)
    h.controller()
    h.create(job(ns, "a", "lq", cpu="1"))
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="quota reserved")
    name = wl["metadata"]["name"]
    wait_for(lambda: events(h, ns, name, "QuotaReserved"), what="the QuotaReserved Event")
    set_check(h, wl, "Ready")
    [admitted] = wait_for(lambda: events(h, ns, name, "Admitted"), what="the Admitted Event")
    assert admitted["note"].startswith("Admitted by ClusterQueue cq, wait time since reservation was ")
    assert len(events(h, ns, name, "QuotaReserved")) == 1
    assert events(h, ns, name, "QuotaReserved")[0].get("series") is None


def test_a_rejected_check_records_admission_check_rejected(fake_cluster: Harness) -> None:
    # workload_controller.go reconcileCheckBasedEviction: Warning "AdmissionCheckRejected",
    # "Deactivated due to AdmissionCheck in Rejected state: ..." (buildAdmissionChecksMessage)
    h = fake_cluster
    ns = setup(h)
    h.controller()
    h.create(job(ns, "a", "lq", cpu="1"))
    wl = wait_for(lambda: reserved_pending(h, ns, "a"), what="quota reserved")
    set_check(h, wl, "Rejected")
    name = wl["metadata"]["name"]
    [ev] = wait_for(lambda: events(h, ns, name, "AdmissionCheckRejected"), what="AdmissionCheckRejected")
    note = 'Deactivated due to AdmissionCheck in Rejected state: "prov"'
    assert (ev["type"], ev["note"]) == ("Warning", note)


def test_missing_flavors_are_named_as_kueue_joins_them(fake_cluster: Harness) -> None:
    # pkg/cache/scheduler/clusterqueue.go inactiveReason: "references missing ResourceFlavor(s): a,b."
    # (stringsutils.Join in the ClusterQueue's order, a period at the end)
    h = fake_cluster
    h.create(flavor("rf", {}, []))
    h.create(cluster_queue("cq", {"rf": {"cpu": "1"}, "h200": {"cpu": "1"}, "b100": {"cpu": "1"}}))
    h.controller()

    def active() -> JSON:
        return cond(h.get(CLUSTER_QUEUES, "cq"), "Active")

    got = wait_for(lambda: active().get("reason") == "FlavorNotFound" and active(), what="FlavorNotFound")
    assert got["message"] == "Can't admit new workloads: references missing ResourceFlavor(s): h200,b100."
