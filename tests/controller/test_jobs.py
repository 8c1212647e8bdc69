"""Jobs as Kueue runs them, and JobSets: partial admission (a Job's
parallelism lowered to the admitted count and restored on stop), priority
from the pod template's PriorityClass, one Workload per JobSet with a pod set
per replicated job (started, preempted and restored, finished), through the
integration interface the reconciler and `kueue-fast schedule` share. Each
end-to-end flow runs on the in-process API server and, when
KUEUE_FAST_TEST_KUBECONFIG names a cluster, on that cluster (JobSet's CRD
installed from tests/data when it lacks it)."""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest
from kf_harness import (
    JOBS,
    JOBSETS,
    WORKLOADS,
    Harness,
    cluster_queue,
    flavor,
    job,
    jobset,
    local_queue,
    pod_priority_class,
    priority_class,
    wait_for,
)
from test_e2e import TOLERATION, cond, is_true, running, setup_queues

from kueue_fast.api.model import WorkloadPriorityClass
from kueue_fast.commands.cli import main
from kueue_fast.controller import job_kinds as J
from kueue_fast.integrations import (
    INTEGRATIONS,
    Environment,
    job as job_integration,
    jobset as jobset_integration,
)
from kueue_fast.integrations.framework import PODSET_LABEL, PodSetConflict, admitted_info
from kueue_fast.loader import build_state

JSON = dict[str, Any]
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"


def jobset_workload(h: Harness, ns: str, name: str) -> JSON | None:
    js = h.get(JOBSETS, name, ns)
    if js is None:
        return None
    return h.get(WORKLOADS, jobset_integration.workload_name(name, js["metadata"]["uid"]), ns)


def jobset_running(h: Harness, ns: str, name: str) -> JSON | None:
    js = h.get(JOBSETS, name, ns)
    return js if js is not None and not js["spec"].get("suspend") else None


def pod_templates(js: JSON) -> list[JSON]:
    return [rj["template"]["spec"]["template"] for rj in js["spec"]["replicatedJobs"]]


# --- the interface -----------------------------------------------------------------------------------


def test_the_controller_runs_the_kinds_schedule_reads() -> None:
    assert {k.integration for k in J.JOB_KINDS} == set(INTEGRATIONS.values())
    assert {(k.integration.API_VERSION, k.integration.KIND) for k in J.JOB_KINDS} == set(INTEGRATIONS)
    assert [k.events_controller for k in J.JOB_KINDS] == [
        "batch/job-kueue-controller",
        "jobset.x-k8s.io/jobset-kueue-controller",
    ]


def test_controller_and_schedule_make_the_same_workload() -> None:
    """The controller creates Workloads with the integration's workloads_for,
    the function the loader reads offline jobs with: priority from the pod
    template's PriorityClass, minCount from job-min-parallelism."""
    obj = job("team-a", "train", "lq", parallelism=4)
    obj["metadata"]["uid"] = "u-1"
    obj["metadata"]["annotations"] = {MIN_PARALLELISM: "2"}
    obj["spec"]["template"]["spec"]["priorityClassName"] = "batch-high"
    pc = pod_priority_class("batch-high", 500)
    env = Environment(priority_classes={"batch-high": WorkloadPriorityClass("batch-high", 500)})
    body = job_integration.workloads_for(copy.deepcopy(obj), env).workloads[0]
    offline = build_state([pc, copy.deepcopy(obj)]).workloads[f"team-a/{body['metadata']['name']}"]
    assert offline.raw["spec"] == body["spec"]
    assert body["spec"]["priority"] == 500
    assert body["spec"]["priorityClassRef"] == {
        "group": "scheduling.k8s.io",
        "kind": "PriorityClass",
        "name": "batch-high",
    }
    assert body["spec"]["podSets"][0]["count"] == 4 and body["spec"]["podSets"][0]["minCount"] == 2


def test_a_conflicting_pod_set_label_is_kueues_permanent_error() -> None:
    obj = job("n", "j", "lq")
    obj["metadata"]["resourceVersion"] = "1"
    obj["spec"]["template"]["metadata"] = {"labels": {PODSET_LABEL: "other"}}
    with pytest.raises(PodSetConflict) as e:
        job_integration.start_patch(obj, [admitted_info("main", 1, [])])
    assert str(e.value) == (
        "invalid admission check PodSetUpdate: conflict for labels: "
        f"conflict for key={PODSET_LABEL}, value1=other, value2=main"
    )


def test_jobset_start_and_stop_are_json_patches_naming_each_field() -> None:
    js = jobset("n", "js", "lq", [("leader", 1, 1, "1"), ("workers", 2, 2, "1")])
    js["metadata"].update(uid="u", resourceVersion="9")
    js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    f = {"spec": {"nodeLabels": {"pool": "x"}, "tolerations": [TOLERATION]}}
    infos = [admitted_info("leader", 1, [f]), admitted_info("workers", 4, [f])]
    patch = jobset_integration.start_patch(js, infos)
    assert patch is not None and patch.content_type == "application/json-patch+json"
    p1 = "/spec/replicatedJobs/1/template/spec/template"
    assert patch.body[:2] == [
        {"op": "replace", "path": "/metadata/resourceVersion", "value": "9"},
        {"op": "add", "path": "/spec/suspend", "value": False},
    ]
    assert {"op": "add", "path": f"{p1}/spec/nodeSelector", "value": {"zone": "a", "pool": "x"}} in patch.body
    assert {
        "op": "add",
        "path": f"{p1}/metadata",
        "value": {"labels": {PODSET_LABEL: "workers"}},
    } in patch.body
    assert {"op": "add", "path": f"{p1}/spec/tolerations", "value": [TOLERATION]} in patch.body
    wl = jobset_integration.workloads_for(copy.deepcopy(js), Environment()).workloads[0]
    assert [(ps["name"], ps["count"]) for ps in wl["spec"]["podSets"]] == [("leader", 1), ("workers", 4)]
    assert "minCount" not in json.dumps(wl)  # no partial admission for JobSets
    started = copy.deepcopy(js)
    started["spec"]["suspend"] = False
    for t, info in zip(pod_templates(started), infos, strict=True):
        t["metadata"] = {"labels": dict(info.labels)}
        t["spec"]["nodeSelector"] = {**t["spec"].get("nodeSelector", {}), "pool": "x"}
        t["spec"]["tolerations"] = [TOLERATION]
    assert jobset_integration.start_patch(started, infos) is None  # it runs so already
    name, stop = jobset_integration.stop_step(started, wl)  # type: ignore[misc]
    assert name == "suspend" and stop.body[1] == {"op": "add", "path": "/spec/suspend", "value": True}
    assert {"op": "add", "path": f"{p1}/spec/nodeSelector", "value": {"zone": "a"}} in stop.body
    assert {"op": "remove", "path": f"{p1}/spec/tolerations"} in stop.body
    assert {"op": "remove", "path": f"{p1}/metadata/labels"} in stop.body
    assert jobset_integration.stop_step(js, wl) is None  # suspended: nothing to do (generic stopJob)


def test_schedule_reads_jobsets(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """Offline, a JobSet is one Workload with a pod set per replicated job
    (it used to be skipped); its child Jobs belong to its Workload."""
    ns, cq, rf = "team-a", "cq", "rf"
    docs = [
        flavor(rf),
        cluster_queue(cq, {rf: {"cpu": "5"}}),
        local_queue(ns, "lq", cq),
        jobset(ns, "train", "lq", [("leader", 1, 1, "1"), ("workers", 2, 2, "1")]),
    ]
    child = job(ns, "train-workers-0", "lq")
    child["metadata"]["ownerReferences"] = [
        {
            "apiVersion": "jobset.x-k8s.io/v1alpha2",
            "kind": "JobSet",
            "name": "train",
            "uid": "u",
            "controller": True,
        }
    ]
    docs.append(child)
    path = tmp_path / "in.json"
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}))
    assert main(["schedule", str(path)]) == 0
    out = capsys.readouterr()
    (wl,) = json.loads(out.out)["workloads"]
    assert wl["owner"] == "JobSet/train" and wl["state"] == "admitted"
    assert [(ps["name"], ps["count"]) for ps in wl["podSets"]] == [("leader", 1), ("workers", 4)]
    assert "it belongs to JobSet/train, whose Workload holds its pods; skipped" in out.err


# --- partial admission and priorities in a cluster -------------------------------------------------------


def test_partial_admission_lowers_parallelism_and_restores_it(cluster: Harness) -> None:
    """job_controller.go RunWithPodSetsInfo / RestorePodSetsInfo: a Job with
    job-min-parallelism runs with the admitted count as its parallelism, and
    gets its parallelism back when it is stopped."""
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="2", preemption={"withinClusterQueue": "LowerPriority"})
    low, high = h.name("low"), h.name("high")
    h.create(priority_class(low, 10))
    h.create(priority_class(high, 1000))
    h.controller()
    wide = job(ns, "wide", "lq", parallelism=4, priority=low)
    wide["metadata"]["annotations"] = {MIN_PARALLELISM: "1"}
    h.create(wide)
    j = wait_for(lambda: running(h, ns, "wide"), what="wide running with fewer pods")
    assert j["spec"]["parallelism"] == 2 and j["spec"]["completions"] == 4
    assert j["spec"]["template"]["metadata"]["labels"][PODSET_LABEL] == "main"
    wl = h.workload_of(ns, "wide")
    assert wl is not None and wl["spec"]["podSets"][0]["minCount"] == 1
    (psa,) = wl["status"]["admission"]["podSetAssignments"]
    assert (psa["count"], psa["resourceUsage"]) == (2, {"cpu": "2"})

    h.create(job(ns, "urgent", "lq", cpu="2", priority=high))
    wait_for(lambda: running(h, ns, "urgent"), what="urgent admitted after preempting wide")
    j = h.get(JOBS, "wide", ns)
    assert j is not None and j["spec"]["suspend"] is True and j["spec"]["parallelism"] == 4
    assert PODSET_LABEL not in (j["spec"]["template"].get("metadata") or {}).get("labels", {})


def test_indexed_job_with_completions_equal_parallelism(cluster: Harness) -> None:
    """job-completions-equal-parallelism: completions follow parallelism
    (the API server lets an Indexed Job change both together)."""
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="3")
    h.controller()
    j = job(ns, "indexed", "lq", parallelism=5)
    j["spec"]["completionMode"] = "Indexed"
    j["metadata"]["annotations"] = {
        MIN_PARALLELISM: "2",
        "kueue.x-k8s.io/job-completions-equal-parallelism": "true",
    }
    h.create(j)
    got = wait_for(lambda: running(h, ns, "indexed"), what="indexed running")
    assert (got["spec"]["parallelism"], got["spec"]["completions"]) == (3, 3)


def test_priority_from_the_pod_templates_priority_class(cluster: Harness) -> None:
    """ExtractPriority: no kueue.x-k8s.io/priority-class label, so the pod
    template's priorityClassName's PriorityClass gives the priority."""
    h = cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    pc = h.name("batch-high")
    h.create(pod_priority_class(pc, 12345))
    h.controller()
    j = job(ns, "prio", "lq")
    j["spec"]["template"]["spec"]["priorityClassName"] = pc
    h.create(j)
    wl = wait_for(lambda: h.workload_of(ns, "prio"), what="its workload")
    assert wl["spec"]["priority"] == 12345
    assert wl["spec"]["priorityClassRef"] == {
        "group": "scheduling.k8s.io",
        "kind": "PriorityClass",
        "name": pc,
    }


def test_a_missing_pod_priority_class_waits_for_it(fake_cluster: Harness) -> None:
    h = fake_cluster
    ns, rf, cq = setup_queues(h, cpu="1")
    h.controller()
    j = job(ns, "early", "lq")
    j["spec"]["template"]["spec"]["priorityClassName"] = "later"
    h.create(j)
    time.sleep(0.5)
    assert h.workload_of(ns, "early") is None  # Kueue creates no Workload without its priority
    h.create(pod_priority_class("later", 7))
    wl = wait_for(lambda: h.workload_of(ns, "early"), timeout=20, what="its workload once the class exists")
    assert wl["spec"]["priority"] == 7


# --- JobSets ------------------------------------------------------------------------------------------------


def test_jobset_admitted_preempted_restored_and_finished(cluster: Harness) -> None:
    """jobset_controller.go: one Workload, a pod set per replicated job;
    started with each replicated job's pod template merged with its flavor's
    nodeLabels and tolerations and the pod set label; stopped and restored
    when preempted; Finished from the JobSet's Completed condition."""
    h = cluster
    h.ensure_jobset_crd()
    ns, rf, cq = setup_queues(h, cpu="4", preemption={"withinClusterQueue": "LowerPriority"})
    low, high = h.name("low"), h.name("high")
    h.create(priority_class(low, 10))
    h.create(priority_class(high, 1000))
    h.controller()
    h.create(
        jobset(
            ns,
            "train",
            "lq",
            [("leader", 1, 1, "1"), ("workers", 1, 3, "1")],
            priority=low,
            node_selector={"team": "a"},
        )
    )
    js = wait_for(lambda: jobset_running(h, ns, "train"), what="the JobSet started")
    for t, name in zip(pod_templates(js), ("leader", "workers"), strict=True):
        assert t["spec"]["nodeSelector"] == {"team": "a", "kubernetes.io/os": "linux"}
        assert t["spec"]["tolerations"] == [TOLERATION]
        assert t["metadata"]["labels"] == {PODSET_LABEL: name}
    wl = jobset_workload(h, ns, "train")
    assert wl is not None
    assert [(ps["name"], ps["count"]) for ps in wl["spec"]["podSets"]] == [("leader", 1), ("workers", 3)]
    owner = wl["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("JobSet", "train", True)
    assert wl["metadata"]["name"].startswith("jobset-train-")
    assert [p["name"] for p in wl["status"]["admission"]["podSetAssignments"]] == ["leader", "workers"]

    # a higher-priority Job takes the quota: the JobSet is suspended, its templates restored
    h.create(job(ns, "urgent", "lq", cpu="2", priority=high))
    wait_for(lambda: running(h, ns, "urgent"), what="urgent admitted after preempting the JobSet")
    js = h.get(JOBSETS, "train", ns)
    assert js is not None and js["spec"]["suspend"] is True
    for t in pod_templates(js):
        assert t["spec"]["nodeSelector"] == {"team": "a"} and not t["spec"].get("tolerations")
        assert not (t.get("metadata") or {}).get("labels")
    wl = jobset_workload(h, ns, "train")
    assert wl is not None and "admission" not in wl["status"]
    assert (cond(wl, "Preempted") or {}).get("reason") == "InClusterQueue"

    # the Job finishes: the JobSet runs again, then finishes
    h.finish_job(ns, "urgent")
    wait_for(lambda: jobset_running(h, ns, "train"), what="the JobSet admitted again")
    h.finish_jobset(ns, "train")
    wl = wait_for(
        lambda: (w := jobset_workload(h, ns, "train")) and is_true(w, "Finished") and w, what="Finished"
    )
    assert (cond(wl, "Finished") or {}).get("reason") == "Succeeded"


def test_jobset_crd_installed_after_the_controller_started(fake_cluster: Harness) -> None:
    """Without JobSet's CRD the controller is ready and runs Jobs; once the
    CRD is installed it manages JobSets too."""
    h = fake_cluster
    ns, rf, cq = setup_queues(h, cpu="2")
    ctl = h.controller()
    wait_for(ctl.ready, what="ready without JobSets")
    h.create(job(ns, "plain", "lq"))
    wait_for(lambda: running(h, ns, "plain"), what="a Job admitted")
    h.ensure_jobset_crd()
    h.create(jobset(ns, "late", "lq", [("w", 1, 1, "1")]))
    wait_for(lambda: jobset_running(h, ns, "late"), timeout=20, what="the JobSet admitted")
