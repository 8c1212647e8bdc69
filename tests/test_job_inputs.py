# ruff: noqa: E501  (object literals read better on long lines)
"""batch/v1 Jobs as input: the Workloads Kueue's Job integration would create.

Kueue's own site examples (tests/data/kueue-examples) run through the real
command with both engines; the rules (which Jobs Kueue manages, name,
pod set, priority, partial admission, errors naming the Job's field) are
checked on the loaded state. Sources: kueue pkg/controller/jobs/job
(job_controller.go, job_webhook.go), pkg/controller/jobframework
(reconciler.go, defaults.go, validation.go, workload_names.go),
pkg/util/priority/priority.go.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueue_fast import loader
from kueue_fast.api.errors import InputError, MissingReferenceError, ValidationError
from kueue_fast.integrations import framework

EXAMPLES = Path(__file__).parent / "data" / "kueue-examples"
KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")
B2 = "kueue.x-k8s.io/v1beta2"


def run(*args: str, engine: str = "native") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [KUEUE_FAST, "schedule", *args, "--engine", engine], capture_output=True, text=True, timeout=120
    )


def sha5(name: str, uid: str = "") -> str:
    return hashlib.sha1(f"Job\nbatch\n{name}\n{uid}".encode()).hexdigest()[:5]


def queues(cpu: str = "9", **cq_spec: Any) -> list[dict[str, Any]]:
    return [
        {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "default-flavor"}},
        {
            "apiVersion": B2,
            "kind": "ClusterQueue",
            "metadata": {"name": "cq"},
            "spec": {
                "namespaceSelector": {},
                "resourceGroups": [
                    {
                        "coveredResources": ["cpu"],
                        "flavors": [
                            {"name": "default-flavor", "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                        ],
                    }
                ],
                **cq_spec,
            },
        },
        {
            "apiVersion": B2,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "team-a"},
            "spec": {"clusterQueue": "cq"},
        },
    ]


def a_job(
    name: str = "j",
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    namespace: str = "team-a",
    cpu: str = "1",
    **spec: Any,
) -> dict[str, Any]:
    md: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": {"kueue.x-k8s.io/queue-name": "lq", **(labels or {})},
    }
    if annotations:
        md["annotations"] = annotations
    spec.setdefault(
        "template",
        {
            "spec": {
                "restartPolicy": "Never",
                "containers": [{"name": "c", "image": "busybox", "resources": {"requests": {"cpu": cpu}}}],
            }
        },
    )
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": md, "spec": spec}


def only_workload(state: Any) -> Any:
    assert len(state.workloads) == 1, sorted(state.workloads)
    return next(iter(state.workloads.values()))


# --- Kueue's examples through the command ------------------------------------------------------


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_kueues_sample_jobs_are_admitted_as_kueue_would(engine: str) -> None:
    # single-clusterqueue-setup: 9 cpu. sample-job: 3 pods x 1 cpu, generateName.
    # sample-job-partial-admission: 20 pods x 1 cpu, job-min-parallelism 5: the 6 cpu left
    # admit 6 pods (podset_reducer: the largest count that fits).
    p = run(
        str(EXAMPLES / "single-clusterqueue-setup.yaml"),
        str(EXAMPLES / "sample-job.yaml"),
        str(EXAMPLES / "sample-job-partial-admission.yaml"),
        "--until-stable",
        engine=engine,
    )
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    out = json.loads(p.stdout)["workloads"]
    generated = framework.generated_name("sample-job-", "default", 0)
    assert out == [
        {
            "namespace": "default",
            "name": f"job-{generated}-{sha5(generated)}",
            "owner": f"Job/{generated}",
            "state": "admitted",
            "clusterQueue": "cluster-queue",
            "podSets": [
                {"name": "main", "count": 3, "flavors": {"cpu": "default-flavor", "memory": "default-flavor"}}
            ],
        },
        {
            "namespace": "default",
            "name": f"job-sample-job-partial-admission-{sha5('sample-job-partial-admission')}",
            "owner": "Job/sample-job-partial-admission",
            "state": "admitted",
            "clusterQueue": "cluster-queue",
            "podSets": [
                {"name": "main", "count": 6, "flavors": {"cpu": "default-flavor", "memory": "default-flavor"}}
            ],
        },
    ]


def test_a_generated_name_is_deterministic_and_shaped_like_the_api_servers() -> None:
    first = framework.generated_name("sample-job-", "default", 0)
    assert first == framework.generated_name("sample-job-", "default", 0)
    assert first.startswith("sample-job-") and len(first) == len("sample-job-") + 5
    assert set(first[len("sample-job-") :]) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert framework.generated_name("sample-job-", "default", 1) != first
    assert len(framework.generated_name("x" * 80, "default", 0)) == 63  # prefix cut to 58


def test_the_same_sample_created_twice_gives_two_jobs() -> None:
    # kubectl create -f sample-job.yaml twice: two Jobs, two Workloads, in input order
    p = run(
        str(EXAMPLES / "quick-start-setup.yaml"),
        str(EXAMPLES / "sample-job.yaml"),
        str(EXAMPLES / "sample-job.yaml"),
        "--until-stable",
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)["workloads"]
    owners = sorted(w["owner"] for w in out)
    assert owners == sorted(f"Job/{framework.generated_name('sample-job-', 'default', n)}" for n in (0, 1))
    assert sorted(w["state"] for w in out) == ["admitted", "admitted"]  # 6 of 9 cpu, 1.2Gi of 9Gi


def test_shared_quota_example_behaves_as_its_comment_says() -> None:
    # admin/shared-quota-setup.yaml with the Configuration its header comment asks
    # for: a 3-cpu Job also charges 3 cpu_credits (workload.go applyResourceTransformations).
    config = EXAMPLES.parent / "shared-quota-configuration.yaml"
    jobs = [str(EXAMPLES / "shared-quota-sample-job.yaml")] * 5
    p = run(
        str(EXAMPLES / "shared-quota-setup.yaml"), *jobs, str(config), "--until-stable", "--output", "yaml"
    )
    assert p.returncode == 0, p.stderr
    wls = [d for d in yaml.safe_load_all(p.stdout) if d and d.get("kind") == "Workload"]
    usage = [
        w["status"]["admission"]["podSetAssignments"][0]["resourceUsage"]
        for w in wls
        if "admission" in w["status"]
    ]
    # 14 cpu_credits across on-demand (9) and spot (9): four jobs, not five
    assert usage == [{"cpu": "3", "cpu_credits": "3"}] * 4
    # without the transformation all five fit (9 + 6 of 18 cpu)
    p = run(str(EXAMPLES / "shared-quota-setup.yaml"), *jobs, "--until-stable")
    assert p.returncode == 0, p.stderr
    assert [w["state"] for w in json.loads(p.stdout)["workloads"]] == ["admitted"] * 5


def test_a_cronjob_is_skipped_with_a_warning() -> None:
    p = run(str(EXAMPLES / "single-clusterqueue-setup.yaml"), str(EXAMPLES / "sample-cronjob.yaml"))
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["workloads"] == []
    assert p.stderr.startswith("warning: ") and "CronJob/default/sample-cronjob" in p.stderr
    assert "Jobs a CronJob creates" in p.stderr


def test_yaml_output_gives_the_job_as_kueue_leaves_it_and_its_workload() -> None:
    p = run(
        str(EXAMPLES / "single-clusterqueue-setup.yaml"),
        str(EXAMPLES / "sample-job.yaml"),
        "--output",
        "yaml",
    )
    assert p.returncode == 0, p.stderr
    docs = list(yaml.safe_load_all(p.stdout))
    assert [d["kind"] for d in docs] == ["ResourceFlavor", "ClusterQueue", "LocalQueue", "Job", "Workload"]
    j, wl = docs[3], docs[4]
    assert j["spec"]["suspend"] is True  # Kueue's webhook suspends a queued Job
    assert j["metadata"]["name"] == framework.generated_name("sample-job-", "default", 0)
    assert wl["metadata"]["ownerReferences"][0]["name"] == j["metadata"]["name"]
    assert wl["spec"]["podSets"][0]["template"] == j["spec"]["template"]
    assert wl["status"]["admission"]["clusterQueue"] == "cluster-queue"


# --- the Workload ---------------------------------------------------------------------------------


def test_workload_of_a_job_follows_kueues_job_integration() -> None:
    obj = a_job("train", parallelism=4, completions=3, cpu="2")
    obj["metadata"]["uid"] = "6c2f0c4e-1f2a-4f7e-9a53-0c6b2f1d8e11"
    wl = only_workload(loader.build_state([*queues(), obj]))
    assert wl.name == f"job-train-{sha5('train', obj['metadata']['uid'])}"
    assert wl.owner == "Job/train"
    assert wl.queue_name == "lq"
    assert [(ps.name, ps.count, ps.min_count, ps.requests) for ps in wl.pod_sets] == [
        ("main", 3, None, {"cpu": 2000})
    ]
    assert wl.raw["metadata"]["labels"] == {"kueue.x-k8s.io/job-uid": obj["metadata"]["uid"]}
    assert wl.raw["spec"]["priority"] == 0


def test_long_job_names_are_cut_as_kueue_cuts_them() -> None:
    name = "n" * 63
    wl = only_workload(loader.build_state([*queues(), a_job(name)]))
    assert wl.name == f"job-{name}-{sha5(name)}"
    with pytest.raises(ValidationError, match="must be no more than 63 characters"):
        loader.build_state([*queues(), a_job(name + "n")])
    short = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {"ShortWorkloadNames": True},
    }
    wl = only_workload(loader.build_state([*queues(), short, a_job(name)]))
    assert wl.name == f"job-{name}"[:57] + f"-{sha5(name)}" and len(wl.name) == 63


def test_a_job_without_uid_is_hashed_with_an_empty_uid() -> None:
    wl = only_workload(loader.build_state([*queues(), a_job("train")]))
    assert wl.name == f"job-train-{sha5('train')}"
    assert "labels" not in wl.raw["metadata"]


@pytest.mark.parametrize(
    ("spec", "count"),
    [
        ({}, 1),
        ({"parallelism": 5}, 5),
        ({"completions": 2}, 1),
        ({"parallelism": 5, "completions": 2}, 2),
        ({"parallelism": 0}, 0),
    ],
)
def test_pods_count_is_parallelism_capped_by_completions(spec: dict[str, Any], count: int) -> None:
    wl = only_workload(loader.build_state([*queues(), a_job(**spec)]))
    assert wl.pod_sets[0].count == count


def test_pod_requests_follow_kueues_limits_and_overhead_rules() -> None:
    # a limit stands in for a missing request; init containers max; overhead added
    template = {
        "spec": {
            "restartPolicy": "Never",
            "overhead": {"cpu": "250m"},
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "3"}}}],
            "containers": [
                {"name": "a", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "b", "resources": {"requests": {"cpu": "1"}}},
            ],
        }
    }
    wl = only_workload(loader.build_state([*queues(), a_job(template=template)]))
    assert wl.pod_sets[0].requests == {"cpu": 3250, "memory": 1 << 30}


def test_min_parallelism_annotation_allows_partial_admission() -> None:
    obj = a_job(parallelism=10, annotations={"kueue.x-k8s.io/job-min-parallelism": "4"})
    wl = only_workload(loader.build_state([*queues(), obj]))
    assert (wl.pod_sets[0].count, wl.pod_sets[0].min_count) == (10, 4)
    off = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {"PartialAdmission": False},
    }
    wl = only_workload(loader.build_state([*queues(), off, obj]))
    assert wl.pod_sets[0].min_count is None  # prepareWorkload clearMinCountsIfFeatureDisabled


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", 'Invalid value: "abc": strconv.Atoi: parsing "abc": invalid syntax'),
        ("0", "Invalid value: 0: should be between 0 and 9"),
        ("10", "Invalid value: 10: should be between 0 and 9"),
    ],
)
def test_min_parallelism_is_validated_as_kueues_webhook_does(value: str, message: str) -> None:
    obj = a_job(parallelism=10, annotations={"kueue.x-k8s.io/job-min-parallelism": value})
    with pytest.raises(ValidationError) as e:
        loader.build_state([*queues(), obj])
    assert (e.value.obj, e.value.field) == (
        "Job/team-a/j",
        "metadata.annotations[kueue.x-k8s.io/job-min-parallelism]",
    )
    assert e.value.message == message


# --- priority (jobframework ExtractPriority) ---------------------------------------------------


def wpc(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": B2, "kind": "WorkloadPriorityClass", "metadata": {"name": name}, "value": value}


def pc(name: str, value: int, default: bool = False) -> dict[str, Any]:
    obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
    }
    if default:
        obj["globalDefault"] = True
    return obj


def with_pod_class(obj: dict[str, Any], name: str) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["spec"]["template"]["spec"]["priorityClassName"] = name
    return obj


@pytest.mark.parametrize(
    ("objs", "want"),
    [
        pytest.param([wpc("high", 100), pc("pod-high", 50)], (None, 0), id="no class named, no default: 0"),
        pytest.param(
            [pc("low", 5, default=True), pc("lower", 2, default=True)],
            ({"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "lower"}, 2),
            id="globalDefault PriorityClasses: the lowest value",
        ),
        pytest.param(
            [wpc("default", 7), pc("low", 5, default=True)],
            ({"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "default"}, 7),
            id="a WorkloadPriorityClass named default is the default (WorkloadPriorityClassDefaulting)",
        ),
    ],
)
def test_priority_without_a_class_named(objs: list[dict[str, Any]], want: tuple[Any, int]) -> None:
    wl = only_workload(loader.build_state([*queues(), *objs, a_job()]))
    assert (wl.raw["spec"].get("priorityClassRef"), wl.priority) == want


def test_priority_label_wins_over_the_pod_priority_class() -> None:
    obj = with_pod_class(a_job(labels={"kueue.x-k8s.io/priority-class": "high"}), "pod-high")
    wl = only_workload(loader.build_state([*queues(), wpc("high", 100), pc("pod-high", 50), obj]))
    assert (wl.priority, wl.priority_class) == (100, "high")
    assert wl.raw["spec"]["priorityClassRef"]["kind"] == "WorkloadPriorityClass"
    wl = only_workload(
        loader.build_state(
            [*queues(), wpc("high", 100), pc("pod-high", 50), with_pod_class(a_job(), "pod-high")]
        )
    )
    assert (wl.priority, wl.raw["spec"]["priorityClassRef"]["kind"]) == (50, "PriorityClass")
    wl = only_workload(loader.build_state([*queues(), with_pod_class(a_job(), "system-cluster-critical")]))
    assert wl.priority == 2000000000  # every cluster has it


def test_default_workload_priority_class_is_not_applied_when_the_gate_is_off() -> None:
    off = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {"WorkloadPriorityClassDefaulting": False},
    }
    wl = only_workload(loader.build_state([*queues(), off, wpc("default", 7), a_job()]))
    assert wl.priority == 0


def test_a_missing_priority_class_names_the_jobs_field() -> None:
    with pytest.raises(MissingReferenceError) as e:
        loader.build_state([*queues(), with_pod_class(a_job(), "nope")])
    assert (e.value.obj, e.value.field) == ("Job/team-a/j", "spec.template.spec.priorityClassName")
    assert e.value.message == 'PriorityClass "nope" not found'


def test_a_misspelt_priority_class_says_which_one_was_meant() -> None:
    job = a_job(labels={"kueue.x-k8s.io/priority-class": "hihg"})
    with pytest.raises(MissingReferenceError) as e:
        loader.build_state([*queues(), wpc("high", 100), wpc("low", 1), job])
    assert (e.value.obj, e.value.field) == ("Job/team-a/j", "metadata.labels[kueue.x-k8s.io/priority-class]")
    assert e.value.message == 'WorkloadPriorityClass "hihg" not found (did you mean "high"?)'
    with pytest.raises(MissingReferenceError) as e:
        loader.build_state([*queues(), pc("pod-high", 50), with_pod_class(a_job(), "pod-hgih")])
    assert e.value.message == 'PriorityClass "pod-hgih" not found (did you mean "pod-high"?)'
    workload = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": "w", "namespace": "team-a"},
        "spec": {
            "queueName": "lq",
            "priority": 0,
            "priorityClassRef": {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "lwo"},
            "podSets": [{"name": "main", "count": 1, "template": {"spec": {"containers": [{"name": "c"}]}}}],
        },
    }
    # spec.priority is set, as the CRD requires with a class: the class is not looked up
    assert loader.build_state([*queues(), wpc("low", 1), workload]).workloads
    del workload["spec"]["priority"]
    workload["apiVersion"] = "kueue.x-k8s.io/v1beta1"
    workload["spec"].pop("priorityClassRef")
    workload["spec"]["priorityClassName"] = "lwo"
    with pytest.raises(MissingReferenceError) as e:
        loader.build_state([*queues(), wpc("low", 1), workload])
    assert e.value.message == 'WorkloadPriorityClass "lwo" not found (did you mean "low"?)'


# --- which Jobs Kueue manages ---------------------------------------------------------------


def test_job_without_queue_name_is_skipped_with_a_warning() -> None:
    obj = a_job()
    del obj["metadata"]["labels"]
    state = loader.build_state([*queues(), obj])
    assert state.workloads == {}
    (w,) = state.warnings
    assert (w.obj, w.field) == ("Job/team-a/j", "metadata.labels[kueue.x-k8s.io/queue-name]")
    assert "Kueue does not manage it" in w.message


def test_job_without_queue_name_goes_to_the_default_local_queue() -> None:
    obj = a_job()
    del obj["metadata"]["labels"]
    default_lq = {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": "default", "namespace": "team-a"},
        "spec": {"clusterQueue": "cq"},
    }
    state = loader.build_state([*queues(), default_lq, obj])
    assert only_workload(state).queue_name == "default"  # ApplyDefaultLocalQueue
    assert state.warnings == []


def test_manage_jobs_without_queue_name_makes_a_workload_in_no_queue() -> None:
    obj = a_job()
    del obj["metadata"]["labels"]
    cfg = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "manageJobsWithoutQueueName": True,
    }
    assert only_workload(loader.build_state([*queues(), cfg, obj])).queue_name == ""


@pytest.mark.parametrize(
    ("cfg", "namespace", "managed"),
    [
        ({}, "kube-system", False),
        ({}, "kueue-system", False),
        ({"namespace": "kueue"}, "kueue-system", True),
        ({"managedJobsNamespaceSelector": {"matchLabels": {"team": "a"}}}, "team-a", False),
        ({"integrations": {"frameworks": ["jobset.x-k8s.io/jobset"]}}, "team-a", False),
        ({"integrations": {"frameworks": ["batch/job"]}}, "team-a", True),
    ],
)
def test_namespace_selector_and_frameworks_decide_which_jobs_are_managed(
    cfg: dict[str, Any], namespace: str, managed: bool
) -> None:
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration", **cfg}
    state = loader.build_state([*queues(), config, a_job(namespace=namespace)])
    assert bool(state.workloads) == managed
    assert bool(state.warnings) != managed


def test_finished_job_is_skipped_and_running_one_is_queued_with_a_warning() -> None:
    done = a_job("done")
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    running = a_job("running", suspend=False)
    running["status"] = {"startTime": "2025-01-01T00:00:00Z", "active": 1}
    state = loader.build_state([*queues(), done, running])
    assert [wl.owner for wl in state.workloads.values()] == ["Job/running"]
    assert [(w.obj, w.field) for w in state.warnings] == [
        ("Job/team-a/done", "status.conditions"),
        ("Job/team-a/running", "status.startTime"),
    ]


def test_a_job_whose_workload_is_in_the_input_makes_no_second_one() -> None:
    obj = a_job("train")
    obj["metadata"]["uid"] = "u-1"
    made = only_workload(loader.build_state([*queues(), obj]))
    given = copy.deepcopy(made.raw)
    given["metadata"]["name"] = "kept-from-the-cluster"
    state = loader.build_state([*queues(), obj, given])  # kubectl get jobs,workloads -o yaml
    assert list(state.workloads) == ["team-a/kept-from-the-cluster"]
    assert state.workloads["team-a/kept-from-the-cluster"].owner is None


def test_a_job_with_a_prebuilt_workload_runs_as_it() -> None:
    obj = a_job("train", labels={"kueue.x-k8s.io/prebuilt-workload-name": "pre"})
    state = loader.build_state([*queues(), obj])
    assert state.workloads == {}
    assert 'prebuilt Workload "pre"' in state.warnings[0].message


# --- errors name the Job ---------------------------------------------------------------------


def test_errors_in_the_pod_template_name_the_jobs_field() -> None:
    obj = a_job()
    obj["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["pods"] = "1"
    with pytest.raises(ValidationError) as e:
        loader.build_state([*queues(), obj])
    assert (e.value.obj, e.value.field) == (
        "Job/team-a/j",
        "spec.template.spec.containers[0].resources.requests[pods]",
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda j: j["spec"].update(parallelism=-1), "spec.parallelism"),
        (lambda j: j["spec"].update(suspend="yes"), "spec.suspend"),
        (lambda j: j["spec"].pop("template"), "spec.template"),
        (lambda j: j["spec"]["template"]["spec"].pop("containers"), "spec.template.spec.containers"),
        (
            lambda j: j["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "Not_A_Name"}),
            "metadata.labels[kueue.x-k8s.io/queue-name]",
        ),
        (
            lambda j: j["metadata"]["labels"].update({"kueue.x-k8s.io/max-exec-time-seconds": "0"}),
            "metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]",
        ),
        (lambda j: j.update(extra=1), "extra"),
        (
            lambda j: j["spec"]["template"].update(
                metadata={"annotations": {"kueue.x-k8s.io/podset-group-name": "g"}}
            ),
            "spec.template.metadata.annotations[kueue.x-k8s.io/podset-group-name]",
        ),
    ],
)
def test_invalid_jobs_are_rejected_naming_the_field(change: Any, field: str) -> None:
    obj = a_job()
    change(obj)
    with pytest.raises(InputError) as e:
        loader.build_state([*queues(), obj])
    assert (e.value.obj, e.value.field) == ("Job/team-a/j", field)


def test_max_exec_time_label_becomes_the_workloads_limit() -> None:
    obj = a_job(labels={"kueue.x-k8s.io/max-exec-time-seconds": "600"})
    assert (
        only_workload(loader.build_state([*queues(), obj])).raw["spec"]["maximumExecutionTimeSeconds"] == 600
    )


def test_the_job_integration_knows_every_managed_owner_kind() -> None:
    # job.py lists the owner kinds Kueue manages without importing the registry (no import cycle)
    from kueue_fast.integrations import INTEGRATIONS, job

    assert job._MANAGED_OWNER_KINDS == set(INTEGRATIONS)
