"""End-to-end flows: Jobs queued, admitted within quota with the flavor's
nodeSelector and tolerations, preempted and restored, finished and released;
configuration changes. Each runs on the in-process API server and, when
KUEUE_FAST_TEST_KUBECONFIG names a cluster (Kueue's CRDs installed, Kueue's
controller not running), on that cluster."""

from __future__ import annotations

from typing import Any

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
    priority_class,
    wait_for,
)

from kueue_fast.controller.job_kinds import JOB_UID_LABEL, RESOURCE_IN_USE, STOPPING_ANNOTATION, workload_name

JSON = dict[str, Any]
TOLERATION = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def cond(obj: JSON | None, ctype: str) -> JSON | None:
    for c in ((obj or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c  # type: ignore[no-any-return]
    return None


def is_true(obj: JSON | None, ctype: str) -> bool:
    c = cond(obj, ctype)
    return c is not None and c.get("status") == "True"


def running(h: Harness, ns: str, name: str) -> JSON | None:
    j = h.get(JOBS, name, ns)
    return j if j is not None and not j["spec"].get("suspend") else None


def setup_queues(h: Harness, cpu: str = "2", *, preemption: JSON | None = None) -> tuple[str, str, str]:
    ns = h.namespace("team-a")
    rf = h.name("spot")
    cq = h.name("cq-a")
    h.create(flavor(rf, {"kubernetes.io/os": "linux"}, [TOLERATION]))
    h.create(cluster_queue(cq, {rf: {"cpu": cpu}}, preemption=preemption))
    h.create(local_queue(ns, "lq", cq))
    return ns, rf, cq


def test_jobs_admitted_within_quota_with_flavor_injected(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="2")
    h.controller()
    for i in range(3):
        h.create(job(ns, f"job-{i}", "lq", cpu="1"))

    # two fit in 2 cpu, the third waits
    names = [f"job-{i}" for i in range(3)]
    wait_for(lambda: sum(1 for n in names if running(h, ns, n)) == 2, what="two jobs running")
    first = [n for n in names if running(h, ns, n)][0]
    waiting = [n for n in names if not running(h, ns, n)][0]
    j0 = h.get(JOBS, first, ns)
    assert j0 is not None
    pod = j0["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"kubernetes.io/os": "linux"}
    assert pod["tolerations"] == [TOLERATION]

    wl = h.get(WORKLOADS, workload_name(first, j0["metadata"]["uid"]), ns)
    assert wl is not None
    md = wl["metadata"]
    assert md["name"].startswith(f"job-{first}-") and len(md["name"]) == len(f"job-{first}-") + 5
    assert md["labels"][JOB_UID_LABEL] == j0["metadata"]["uid"]
    assert RESOURCE_IN_USE in md["finalizers"]
    owner = md["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"], owner["blockOwnerDeletion"]) == (
        "Job",
        first,
        True,
        True,
    )
    assert wl["spec"]["queueName"] == "lq" and wl["spec"]["podSets"][0]["count"] == 1
    adm = wl["status"]["admission"]
    assert adm["clusterQueue"] == cq
    assert adm["podSetAssignments"] == [
        {"name": "main", "flavors": {"cpu": rf}, "resourceUsage": {"cpu": "1"}, "count": 1}
    ]
    qr = cond(wl, "QuotaReserved")
    assert qr is not None and (qr["status"], qr["reason"], qr["message"]) == (
        "True",
        "QuotaReserved",
        f"Quota reserved in ClusterQueue {cq}",
    )
    ad = cond(wl, "Admitted")
    assert ad is not None and (ad["status"], ad["reason"], ad["message"]) == (
        "True",
        "Admitted",
        "The workload is admitted",
    )
    assert qr["observedGeneration"] == wl["metadata"]["generation"]

    # the third is pending with Kueue's reason, its Job suspended
    wl2 = wait_for(
        lambda: (w := h.workload_of(ns, waiting)) and cond(w, "QuotaReserved") and w, what="pending reason"
    )
    qr2 = cond(wl2, "QuotaReserved")
    assert qr2 is not None and qr2["status"] == "False" and qr2["reason"] == "WaitingForQuota"
    assert "insufficient unused quota for cpu in flavor" in qr2["message"]
    assert h.get(JOBS, waiting, ns)["spec"]["suspend"] is True  # type: ignore[index]
    # the pod template the Workload carries is the Job's, with the labels the API server put on it
    assert wl["spec"]["podSets"][0]["template"]["metadata"]["labels"]["batch.kubernetes.io/job-name"] == first

    # queue status
    def cq_status() -> JSON | None:
        st = (h.get(CLUSTER_QUEUES, cq) or {}).get("status") or {}
        return st if st.get("admittedWorkloads") == 2 and st.get("pendingWorkloads") == 1 else None

    st = wait_for(cq_status, what="ClusterQueue status")
    assert st["reservingWorkloads"] == 2
    assert st["flavorsReservation"] == [
        {"name": rf, "resources": [{"name": "cpu", "total": "2", "borrowed": "0"}]}
    ]
    assert st["flavorsUsage"] == st["flavorsReservation"]
    active = [c for c in st["conditions"] if c["type"] == "Active"][0]
    assert (active["status"], active["reason"], active["message"]) == (
        "True",
        "Ready",
        "Can admit new workloads",
    )
    lst = wait_for(
        lambda: (
            (s := (h.get(LOCAL_QUEUES, "lq", ns) or {}).get("status") or {}).get("admittedWorkloads") == 2
            and s
        ),
        what="LocalQueue status",
    )
    assert lst["flavorsUsage"] == [{"name": rf, "resources": [{"name": "cpu", "total": "2"}]}]
    la = [c for c in lst["conditions"] if c["type"] == "Active"][0]
    assert la["message"] == "Can submit new workloads to localQueue"


def test_finished_job_releases_quota(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    h.create(job(ns, "first", "lq"))
    wait_for(lambda: running(h, ns, "first"), what="first running")
    h.create(job(ns, "second", "lq"))
    wait_for(lambda: h.workload_of(ns, "second"), what="second's workload")
    assert h.get(JOBS, "second", ns)["spec"]["suspend"] is True  # type: ignore[index]
    h.finish_job(ns, "first")
    wl = wait_for(lambda: (w := h.workload_of(ns, "first")) and is_true(w, "Finished") and w, what="Finished")
    fin = cond(wl, "Finished")
    assert fin is not None and fin["reason"] == "Succeeded"
    # Kueue keeps the admission on a finished Workload; the finalizer goes
    wait_for(
        lambda: (
            RESOURCE_IN_USE
            not in ((h.workload_of(ns, "first") or {}).get("metadata", {}).get("finalizers") or [])
        ),
        what="finalizer removed",
    )
    assert wl["status"]["admission"]["clusterQueue"] == cq
    wait_for(lambda: running(h, ns, "second"), what="second admitted after the first finished")


def test_deactivated_workload_is_evicted_and_not_admitted_until_reactivated(cluster: Harness) -> None:
    """kueue workload_controller.go Reconcile: a Workload with spec.active false
    is evicted (reason Deactivated, "The workload is deactivated"), its Job
    stopped, and it is never admitted while inactive; active true again
    requeues it (Requeued=True, Reactivated) and it is admitted."""
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    h.create(job(ns, "first", "lq"))
    wait_for(lambda: running(h, ns, "first"), what="first running")
    wl = h.workload_of(ns, "first")
    assert wl is not None
    name = wl["metadata"]["name"]
    h.patch(WORKLOADS, name, {"spec": {"active": False}}, ns)
    wait_for(lambda: not running(h, ns, "first"), what="first stopped")
    wait_for(
        lambda: not (h.workload_of(ns, "first") or {}).get("status", {}).get("admission"), what="released"
    )
    # its quota is free: the second job (created only now) takes it, the first stays out
    h.create(job(ns, "second", "lq"))
    wait_for(lambda: running(h, ns, "second"), what="second running in the quota the first released")
    wl = h.workload_of(ns, "first")
    assert not is_true(wl, "QuotaReserved") and not is_true(wl, "Admitted")
    ev = cond(wl, "Evicted")
    assert ev is not None and (ev["status"], ev["reason"], ev["message"]) == (
        "True",
        "Deactivated",
        "The workload is deactivated",
    )
    rq = cond(wl, "Requeued")
    assert rq is not None and (rq["status"], rq["reason"]) == ("False", "Deactivated")
    assert not running(h, ns, "first")

    h.patch(WORKLOADS, name, {"spec": {"active": True}}, ns)
    wait_for(
        lambda: (c := cond(h.workload_of(ns, "first"), "Requeued")) and c["status"] == "True",
        what="Requeued=True",
    )
    rq = cond(h.workload_of(ns, "first"), "Requeued")
    assert rq is not None and (rq["reason"], rq["message"]) == ("Reactivated", "The workload was reactivated")
    h.finish_job(ns, "second")
    wait_for(lambda: running(h, ns, "first"), what="first running again once reactivated")
    assert is_true(h.workload_of(ns, "first"), "Admitted")


def test_workload_deactivated_while_no_controller_ran_is_evicted(cluster: Harness) -> None:
    """An admitted Workload found inactive when the controller starts is evicted
    (Deactivated) and its Job stopped, as one deactivated while it runs."""
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    ctl = h.controller()
    h.create(job(ns, "first", "lq"))
    wait_for(lambda: running(h, ns, "first"), what="first running")
    ctl.stop()
    wl = h.workload_of(ns, "first")
    assert wl is not None
    h.patch(WORKLOADS, wl["metadata"]["name"], {"spec": {"active": False}}, ns)
    h.controller()
    wait_for(lambda: not running(h, ns, "first"), what="first stopped")
    wl = wait_for(
        lambda: (w := h.workload_of(ns, "first")) and not w.get("status", {}).get("admission") and w,
        what="released",
    )
    ev = cond(wl, "Evicted")
    assert ev is not None and (ev["status"], ev["reason"]) == ("True", "Deactivated")


def test_queued_job_created_unsuspended_is_suspended(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.create(job(ns, "blocker", "lq"))
    h.controller()
    wait_for(lambda: running(h, ns, "blocker"), what="blocker running")
    h.create(job(ns, "eager", "lq", suspend=False))
    wait_for(
        lambda: (
            (j := h.get(JOBS, "eager", ns))
            and j["spec"]["suspend"] is True
            and not (j.get("status") or {}).get("startTime")
        ),
        what="eager suspended",
    )
    wait_for(lambda: h.workload_of(ns, "eager"), what="its workload")


def test_unqueued_job_is_left_alone(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h)
    h.controller()
    h.create(job(ns, "mine", None, suspend=False))
    h.create(job(ns, "queued", "lq"))
    wait_for(lambda: running(h, ns, "queued"), what="queued job admitted")
    assert not h.get(JOBS, "mine", ns)["spec"]["suspend"]  # type: ignore[index]
    assert [w["spec"]["queueName"] for w in h.workloads(ns)] == ["lq"]


def test_preemption_stops_and_restores_the_job(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1", preemption={"withinClusterQueue": "LowerPriority"})
    low, high = h.name("low"), h.name("high")
    h.create(priority_class(low, 10))
    h.create(priority_class(high, 1000))
    h.controller()
    h.create(job(ns, "victim", "lq", priority=low, node_selector={"team": "a"}))
    wait_for(lambda: running(h, ns, "victim"), what="victim running")
    v = h.get(JOBS, "victim", ns)
    assert v is not None and v["spec"]["template"]["spec"]["nodeSelector"] == {
        "team": "a",
        "kubernetes.io/os": "linux",
    }
    h.create(job(ns, "urgent", "lq", priority=high))
    wait_for(lambda: running(h, ns, "urgent"), what="urgent admitted after preemption")

    v = h.get(JOBS, "victim", ns)
    assert v is not None and v["spec"]["suspend"] is True
    pod = v["spec"]["template"]["spec"]
    assert pod.get("nodeSelector") == {"team": "a"}  # the original template is back
    assert not pod.get("tolerations")
    assert STOPPING_ANNOTATION not in (v["metadata"].get("annotations") or {})
    vw = h.workload_of(ns, "victim")
    assert vw is not None and "admission" not in vw["status"]
    ev, pre, rq = cond(vw, "Evicted"), cond(vw, "Preempted"), cond(vw, "Requeued")
    assert ev is not None and (ev["status"], ev["reason"]) == ("True", "Preempted")
    assert pre is not None and (pre["status"], pre["reason"]) == ("True", "InClusterQueue")
    assert "Preempted to accommodate a workload" in pre["message"] and "JobUID: " in pre["message"]
    assert "UNKNOWN" not in pre["message"]
    assert rq is not None and (rq["status"], rq["reason"]) == ("True", "Preempted")
    assert (cond(vw, "QuotaReserved") or {}).get("status") == "False"
    ad = cond(vw, "Admitted")
    assert ad is not None and (ad["status"], ad["reason"]) == ("False", "NoReservation")
    assert vw["status"]["schedulingStats"]["evictions"] == [
        {"reason": "Preempted", "underlyingCause": "", "count": 1}
    ]
    assert vw["spec"]["priority"] == 10 and vw["spec"]["priorityClassRef"]["name"] == low

    # the urgent job finishes: the victim comes back, Evicted/Preempted turn False
    h.finish_job(ns, "urgent")
    wait_for(lambda: running(h, ns, "victim"), what="victim admitted again")
    vw = wait_for(
        lambda: (w := h.workload_of(ns, "victim")) and is_true(w, "Admitted") and w, what="readmitted"
    )
    ev = cond(vw, "Evicted")
    assert ev is not None and (ev["status"], ev["reason"]) == ("False", "QuotaReserved")
    assert ev["message"].startswith("Previously: Preempted to accommodate")


def test_configuration_changes_take_effect(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    for i in range(3):
        h.create(job(ns, f"j{i}", "lq"))
    wait_for(lambda: sum(1 for i in range(3) if running(h, ns, f"j{i}")) == 1, what="one running")
    # quota edited: 3 cpu
    c = h.get(CLUSTER_QUEUES, cq)
    assert c is not None
    c["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "3"
    h.kube.update(CLUSTER_QUEUES, c)
    wait_for(lambda: all(running(h, ns, f"j{i}") for i in range(3)), what="all three running")
    # the ClusterQueue deleted: new jobs stay pending; running ones keep running
    h.delete(CLUSTER_QUEUES, cq)
    h.create(job(ns, "late", "lq"))
    wl = wait_for(
        lambda: (w := h.workload_of(ns, "late")) and cond(w, "QuotaReserved") and w, what="late pending"
    )
    assert (cond(wl, "QuotaReserved") or {}).get("status") == "False"
    assert all(running(h, ns, f"j{i}") for i in range(3))
    # a new ClusterQueue under the same name admits it
    for i in range(3):
        h.finish_job(ns, f"j{i}")
    wait_for(lambda: h.get(CLUSTER_QUEUES, cq) is None, what="ClusterQueue gone once unused")
    h.create(cluster_queue(cq, {rf: {"cpu": "1"}}))
    wait_for(lambda: running(h, ns, "late"), what="late admitted by the new ClusterQueue")


def test_namespace_selector_and_foreign_local_queue(cluster: Harness) -> None:
    """Security: a workload is admitted only to the ClusterQueue its own
    namespace's LocalQueue names, and only if the namespaceSelector selects
    the namespace."""
    h = cluster
    team = h.namespace("sel-team", {"team": "yes"})
    other = h.namespace("sel-other")
    rf = h.name("rf-sel")
    cq = h.name("cq-sel")
    h.create(flavor(rf))
    h.create(cluster_queue(cq, {rf: {"cpu": "4"}}, namespace_selector={"matchLabels": {"team": "yes"}}))
    h.create(local_queue(team, "lq", cq))
    h.create(local_queue(other, "lq", cq))
    h.controller()
    h.create(job(other, "intruder", "lq"))
    h.create(job(team, "member", "lq"))
    wait_for(lambda: running(h, team, "member"), what="member admitted")
    wl = wait_for(
        lambda: (w := h.workload_of(other, "intruder")) and cond(w, "QuotaReserved") and w,
        what="intruder's reason",
    )
    assert (cond(wl, "QuotaReserved") or {}).get("status") == "False"
    assert "namespace" in (cond(wl, "QuotaReserved") or {}).get("message", "").lower()
    assert h.get(JOBS, "intruder", other)["spec"]["suspend"] is True  # type: ignore[index]
    # a Job naming a LocalQueue that its namespace does not have is never admitted
    h.create(job(team, "nowhere", "no-such-queue"))
    wl = wait_for(
        lambda: (w := h.workload_of(team, "nowhere")) and cond(w, "QuotaReserved") and w, what="nowhere"
    )
    assert "doesn't exist" in (cond(wl, "QuotaReserved") or {}).get("message", "")


def test_hold_and_drain_stops_jobs_and_requeues(cluster: Harness) -> None:
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="2")
    h.controller()
    h.create(job(ns, "a", "lq"))
    wait_for(lambda: running(h, ns, "a"), what="a running")
    h.patch(CLUSTER_QUEUES, cq, {"spec": {"stopPolicy": "HoldAndDrain"}})
    wait_for(
        lambda: (
            (j := h.get(JOBS, "a", ns))
            and j["spec"]["suspend"] is True
            and not j["spec"]["template"]["spec"].get("nodeSelector")
        ),
        what="a stopped and restored",
    )
    wl = wait_for(
        lambda: (w := h.workload_of(ns, "a")) and "admission" not in (w.get("status") or {}) and w,
        what="admission removed",
    )
    ev = cond(wl, "Evicted")
    assert ev is not None and (ev["status"], ev["reason"]) == ("True", "ClusterQueueStopped")
    assert cond(wl, "Preempted") is None
    st = wait_for(
        lambda: (
            (s := (h.get(CLUSTER_QUEUES, cq) or {}).get("status") or {}).get("pendingWorkloads") == 1 and s
        ),
        what="pending in the stopped queue",
    )
    active = [c for c in st["conditions"] if c["type"] == "Active"][0]
    assert active["status"] == "False"
    h.patch(CLUSTER_QUEUES, cq, {"spec": {"stopPolicy": "None"}})
    wait_for(lambda: running(h, ns, "a"), what="a admitted again")


def test_configuration_resource_transformations_charge_quota(cluster: Harness) -> None:
    # --config: Kueue's Configuration resources.transformations (workload.go
    # applyResourceTransformations): each cpu also charges a credit; 2 credits for 4 cpu
    from kueue_fast.loader import parse_configuration

    h = cluster
    ns = h.namespace("team-t")
    rf, cq = h.name("default"), h.name("cq-t")
    h.create(flavor(rf, {}, []))
    h.create(cluster_queue(cq, {rf: {"cpu": "4", "credits": "2"}}))
    h.create(local_queue(ns, "lq", cq))
    rules = parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "resources": {"transformations": [{"input": "cpu", "outputs": {"credits": "1"}}]},
        }
    ).resources
    h.controller(resources=rules)
    names = [f"job-{i}" for i in range(3)]
    for n in names:
        h.create(job(ns, n, "lq", cpu="1"))
    wait_for(lambda: sum(1 for n in names if running(h, ns, n)) == 2, what="two jobs running")
    first = [n for n in names if running(h, ns, n)][0]
    waiting = [n for n in names if not running(h, ns, n)][0]
    wl = h.workload_of(ns, first)
    assert wl is not None
    assert wl["status"]["admission"]["podSetAssignments"][0]["resourceUsage"] == {"cpu": "1", "credits": "1"}
    wl2 = wait_for(
        lambda: (w := h.workload_of(ns, waiting)) and cond(w, "QuotaReserved") and w, what="pending reason"
    )
    qr = cond(wl2, "QuotaReserved")
    assert qr is not None and "insufficient unused quota for credits" in qr["message"]


def test_wait_for_pods_ready_block_admission_and_pods_ready_from_the_job(cluster: Harness) -> None:
    # jobframework/reconciler.go generatePodsReadyCondition from the Job's ready
    # pods (job_controller.go PodsReady); scheduler.go waitForPodsReadyIfNeeded
    from kueue_fast.api.model import WaitForPodsReadyConfig

    h = cluster
    ns, _, _ = setup_queues(h, cpu="4")
    h.controller(wait_for_pods_ready=WaitForPodsReadyConfig(timeout_s=600.0, block_admission=True))
    h.create(job(ns, "first", "lq", cpu="1"))
    wait_for(lambda: running(h, ns, "first"), what="first running")
    h.create(job(ns, "second", "lq", cpu="1"))
    wl = wait_for(
        lambda: (w := h.workload_of(ns, "first")) and cond(w, "PodsReady") and w, what="PodsReady written"
    )
    pr = cond(wl, "PodsReady")
    assert pr is not None and (pr["status"], pr["reason"], pr["message"]) == (
        "False",
        "WaitForStart",
        "Not all pods are ready or succeeded",
    )
    blocked = wait_for(
        lambda: (
            (w := h.workload_of(ns, "second"))
            and (c := cond(w, "QuotaReserved"))
            and c.get("reason") == "WaitingForPodsReady"
            and w
        ),
        what="second waiting for PodsReady",
    )
    assert cond(blocked, "QuotaReserved")["message"] == (  # type: ignore[index]
        "waiting for all admitted workloads to be in PodsReady condition"
    )
    assert not running(h, ns, "second")
    h.patch(JOBS, "first", {"status": {"ready": 1}}, ns, sub="status")
    wait_for(lambda: running(h, ns, "second"), what="second running once first's pods are ready")
    pr = cond(h.workload_of(ns, "first"), "PodsReady")
    assert pr is not None and (pr["status"], pr["reason"]) == ("True", "Started")


def test_wait_for_pods_ready_timeout_evicts_the_job(cluster: Harness) -> None:
    from kueue_fast.api.model import WaitForPodsReadyConfig

    h = cluster
    ns, _, _ = setup_queues(h, cpu="4")
    h.controller(wait_for_pods_ready=WaitForPodsReadyConfig(timeout_s=1.0, backoff_base_s=600))
    h.create(job(ns, "slow", "lq", cpu="1"))
    wl = wait_for(
        lambda: (w := h.workload_of(ns, "slow")) and is_true(w, "Evicted") and w,
        what="timeout eviction",
        timeout=30,
    )
    ev = cond(wl, "Evicted")
    assert ev is not None and (ev["reason"], ev["message"]) == (
        "PodsReadyTimeout",
        f"Exceeded the PodsReady timeout {ns}/{wl['metadata']['name']}",
    )
    rs = wl["status"]["requeueState"]  # workload.go UpdateRequeueState, with the eviction
    assert rs["count"] == 1 and rs["requeueAt"] > ev["lastTransitionTime"]
    wait_for(lambda: not running(h, ns, "slow"), what="the job stopped")
