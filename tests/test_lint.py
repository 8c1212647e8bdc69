# ruff: noqa: E501  (object literals read better on long lines)
"""`kueue-fast lint`: each check on a small input that shows it, the same input
without the mistake, and the command's output and exit status."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueue_fast import loader
from kueue_fast.commands.lint import lint

KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")
B2 = "kueue.x-k8s.io/v1beta2"
EXAMPLES = Path(__file__).parent / "data" / "kueue-examples"


def flavor(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": spec}


def cq(
    name: str, quotas: dict[str, dict[str, Any]], *, cohort: str | None = None, **spec: Any
) -> dict[str, Any]:
    """quotas: flavor -> {resource: nominal or {nominalQuota..., borrowingLimit...}}; one group per resource set."""
    resources = sorted({r for q in quotas.values() for r in q})
    flavors = [
        {
            "name": f,
            "resources": [
                q[r] | {"name": r} if isinstance(q[r], dict) else {"name": r, "nominalQuota": q[r]}
                for r in resources
            ],
        }
        for f, q in quotas.items()
    ]
    spec = {
        "namespaceSelector": {},
        "resourceGroups": [{"coveredResources": resources, "flavors": flavors}],
        **spec,
    }
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def lq(name: str, cluster_queue: str, namespace: str = "team-a") -> dict[str, Any]:
    return {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"clusterQueue": cluster_queue},
    }


def wl(
    name: str,
    cpu: str,
    count: int = 1,
    *,
    queue: str = "lq",
    priority: int = 0,
    ts: int = 0,
    tolerations: list[dict[str, Any]] | None = None,
    min_count: int | None = None,
) -> dict[str, Any]:
    tspec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
    if tolerations:
        tspec["tolerations"] = tolerations
    ps: dict[str, Any] = {"name": "main", "count": count, "template": {"spec": tspec}}
    if min_count is not None:
        ps["minCount"] = min_count
    return {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "team-a", "creationTimestamp": f"2025-01-01T00:00:{ts:02d}Z"},
        "spec": {"queueName": queue, "priority": priority, "podSets": [ps]},
    }


def findings(objs: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(w.obj, w.field, w.message) for w in lint(loader.build_state(copy.deepcopy(objs)))]


BASE = [flavor("default"), cq("cq", {"default": {"cpu": "8"}}), lq("lq", "cq")]


def test_a_sound_configuration_has_no_findings() -> None:
    assert findings([*BASE, wl("w", "2", 3)]) == []


def test_missing_flavor() -> None:
    objs = [flavor("default"), cq("cq", {"default": {"cpu": "8"}, "spot": {"cpu": "8"}}), lq("lq", "cq")]
    assert findings(objs) == [
        (
            "ClusterQueue/cq",
            "spec.resourceGroups[0].flavors[1].name",
            'ResourceFlavor "spot" does not exist: the ClusterQueue is inactive and admits nothing',
        )
    ]


def test_queues_no_namespace_can_reach() -> None:
    selective = cq("cq", {"default": {"cpu": "8"}}, namespaceSelector={"matchLabels": {"team": "a"}})
    objs = [
        flavor("default"),
        selective,
        lq("lq", "cq"),
        lq("lost", "nope"),
        cq("alone", {"default": {"cpu": "1"}}),
    ]
    assert findings(objs) == [
        (
            "LocalQueue/team-a/lq",
            "metadata.namespace",
            "ClusterQueue cq's namespaceSelector does not select namespace team-a: workloads submitted here are never admitted",
        ),
        (
            "LocalQueue/team-a/lost",
            "spec.clusterQueue",
            'ClusterQueue "nope" does not exist: workloads submitted here stay pending',
        ),
        (
            "ClusterQueue/alone",
            "",
            "no LocalQueue points to it and it is in no cohort: nothing can use its quota",
        ),
    ]
    labelled = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "team-a", "labels": {"team": "a"}},
    }
    assert findings([*objs[:3], labelled]) == []


def test_workloads_naming_a_local_queue_that_does_not_exist() -> None:
    # a typo in the queue-name label: Kueue keeps the Job suspended with
    # QuotaReserved=False, Misconfigured (workload_controller.go)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "typo", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lqq"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                }
            }
        },
    }
    assert findings([*BASE, wl("w", "1", queue="nope"), job, wl("ok", "1")]) == [
        (
            "Job/team-a/typo",
            "metadata.labels[kueue.x-k8s.io/queue-name]",
            'LocalQueue "lqq" does not exist in namespace team-a (did you mean "lq"?): it stays pending',
        ),
        (
            "Workload/team-a/w",
            "spec.queueName",
            'LocalQueue "nope" does not exist in namespace team-a: it stays pending',
        ),
    ]


def test_a_lender_without_local_queue_is_fine() -> None:
    objs = [
        flavor("default"),
        cq("cq", {"default": {"cpu": "8"}}, cohort="c"),
        lq("lq", "cq"),
        cq("lender", {"default": {"cpu": "8"}}, cohort="c"),
    ]
    assert findings(objs) == []


def test_workload_bigger_than_its_queue_can_ever_hold() -> None:
    # 3 pods x 4 cpu = 12 > 8 (no cohort to borrow from)
    assert findings([*BASE, wl("big", "4", 3)]) == [
        (
            "Workload/team-a/big",
            "spec.podSets[0]",
            "pod set main needs 12 cpu (3 pods), more than its ClusterQueue can ever get (at most 8 in flavor default): "
            "it can never be admitted to ClusterQueue cq",
        )
    ]
    # it fits by borrowing from an idle cohort member, or at its minCount
    lender = cq("lender", {"default": {"cpu": "4"}}, cohort="c")
    borrowing = [flavor("default"), cq("cq", {"default": {"cpu": "8"}}, cohort="c"), lq("lq", "cq"), lender]
    assert findings([*borrowing, wl("big", "4", 3)]) == []
    assert findings([*BASE, wl("partial", "4", 3, min_count=2)]) == []


def test_workload_needing_a_resource_its_queue_does_not_cover() -> None:
    gpu = wl("gpu", "1")
    gpu["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"][
        "nvidia.com/gpu"
    ] = 1
    assert findings([*BASE, gpu]) == [
        (
            "Workload/team-a/gpu",
            "spec.podSets[0]",
            "pod set main requests nvidia.com/gpu, which the ClusterQueue does not cover: it can never be admitted to ClusterQueue cq",
        )
    ]


def test_a_jobs_findings_name_the_job() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "parallelism": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}],
                }
            },
        },
    }
    ((obj, field, message),) = findings([*BASE, job])
    assert (obj, field) == ("Job/team-a/train", "spec.template")
    assert message.startswith("pod set main needs 12 cpu (3 pods)")
    (w,) = lint(loader.build_state(copy.deepcopy([*BASE, job]), keep_sources=True))
    assert w.source == "<input> (document 4)"  # where the Job is


TAINTED = [
    flavor("spot", nodeTaints=[{"key": "spot", "value": "true", "effect": "NoSchedule"}]),
    cq("cq", {"spot": {"cpu": "8"}}),
    lq("lq", "cq"),
]


def test_flavor_taint_no_workload_tolerates() -> None:
    got = findings([*TAINTED, wl("a", "1"), wl("b", "1")])
    assert (
        "ResourceFlavor/spot",
        "spec.nodeTaints[0]",
        "taint spot=true:NoSchedule: none of the 2 workload(s) queued to the ClusterQueues that use this flavor (cq) "
        "tolerates it, so none is ever assigned to it",
    ) in got
    tolerant = wl("b", "1", tolerations=[{"key": "spot", "operator": "Exists"}])
    assert findings([*TAINTED, wl("a", "1"), tolerant]) == [
        (
            "Workload/team-a/a",
            "spec.podSets[0]",
            "pod set main needs 1 cpu (1 pods), more than its ClusterQueue can ever get "
            "(untolerated taint {spot true NoSchedule <nil>} in flavor spot): it can never be admitted to ClusterQueue cq",
        )
    ]


def test_strict_fifo_queue_blocked_by_a_head_that_never_fits() -> None:
    strict = [
        flavor("default"),
        cq("cq", {"default": {"cpu": "8"}}, queueingStrategy="StrictFIFO"),
        lq("lq", "cq"),
    ]
    got = findings([*strict, wl("head", "16", ts=1), wl("small", "1", ts=2), wl("smaller", "1", ts=3)])
    assert got[-1] == (
        "ClusterQueue/cq",
        "spec.queueingStrategy",
        "StrictFIFO: its head, Workload/team-a/head, can never be admitted, so the 2 workload(s) behind it are never admitted either",
    )
    # BestEffortFIFO lets the others through; a higher-priority fitting workload is the head
    assert len(findings([*BASE, wl("head", "16", ts=1), wl("small", "1", ts=2)])) == 1
    assert len(findings([*strict, wl("head", "16", ts=1), wl("small", "1", ts=2, priority=5)])) == 1


def test_borrowing_limit_above_what_the_cohort_lends() -> None:
    borrower = cq("b", {"default": {"cpu": {"nominalQuota": "4", "borrowingLimit": "6"}}}, cohort="c")
    lender = cq("l", {"default": {"cpu": {"nominalQuota": "8", "lendingLimit": "2"}}}, cohort="c")
    objs = [flavor("default"), borrower, lender, lq("lq", "b"), lq("lq2", "l")]
    assert findings(objs) == [
        (
            "ClusterQueue/b",
            "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
            "borrowingLimit 6 is never reached: the rest of the cohort lends at most 2 for cpu in flavor default",
        )
    ]
    lender["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] = "0"
    assert findings(objs)[0][2] == (
        "borrowingLimit 6 can never be used: the rest of the cohort lends nothing for cpu in "
        "flavor default (no quota there, or lendingLimit 0)"
    )
    lender["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["lendingLimit"] = "6"
    assert findings(objs) == []


def test_cohort_quota_no_cluster_queue_can_use() -> None:
    cohort = {
        "apiVersion": B2,
        "kind": "Cohort",
        "metadata": {"name": "c"},
        "spec": {
            "resourceGroups": [
                {
                    "coveredResources": ["cpu"],
                    "flavors": [{"name": "spot", "resources": [{"name": "cpu", "nominalQuota": "10"}]}],
                }
            ]
        },
    }
    objs = [
        flavor("default"),
        flavor("spot"),
        cq("cq", {"default": {"cpu": "8"}}, cohort="c"),
        lq("lq", "cq"),
        cohort,
    ]
    assert findings(objs) == [
        (
            "Cohort/c",
            "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
            "no ClusterQueue below this cohort has quota for cpu in flavor spot, so none can use it",
        )
    ]


def cohort(name: str, parent: str | None = None) -> dict[str, Any]:
    spec = {"parentName": parent} if parent else {}
    return {"apiVersion": B2, "kind": "Cohort", "metadata": {"name": name}, "spec": spec}


def test_cohort_cycle() -> None:
    # issue 21 item 9: schedule explained it (CohortCycle), lint said nothing. Kueue keeps the
    # ClusterQueues of a cohort in a cycle Active but leaves them out of scheduling
    # (snapshot.go skipInactiveCQReason); one warning per cycle, on its first cohort by name
    objs = [
        *BASE,
        cq("in-cycle", {"default": {"cpu": "8"}}, cohort="b"),
        cq("outside", {"default": {"cpu": "8"}}, cohort="d"),
        lq("lq2", "in-cycle"),
        lq("lq3", "outside"),
        cohort("a", "c"),
        cohort("b", "a"),
        cohort("c", "b"),
        cohort("d", "a"),
    ]
    assert findings(objs) == [
        (
            "Cohort/a",
            "spec.parentName",
            "cohorts a -> c -> b -> a form a cycle: Kueue leaves the ClusterQueues of these cohorts "
            "(in-cycle) out of scheduling, they admit nothing",
        )
    ]


def test_admission_scope_without_admission_fair_sharing_in_the_configuration() -> None:
    # issue 21 item 9: Kueue's afs.Enabled needs the Configuration's admissionFairSharing (and the
    # AdmissionFairSharing gate); without them the queue orders by priority and creation time
    scoped = cq(
        "cq", {"default": {"cpu": "8"}}, admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"}
    )
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    why = (
        "admissionScope asks for admission fair sharing, but {}: Kueue orders this ClusterQueue's "
        "workloads by priority and creation time, as without it"
    )
    assert findings([flavor("default"), scoped, lq("lq", "cq")]) == [
        (
            "ClusterQueue/cq",
            "spec.admissionScope",
            why.format("the Configuration has no admissionFairSharing"),
        )
    ]
    gate_off = {**config, "admissionFairSharing": {}, "featureGates": {"AdmissionFairSharing": False}}
    assert findings([flavor("default"), scoped, lq("lq", "cq"), gate_off]) == [
        ("ClusterQueue/cq", "spec.admissionScope", why.format("the AdmissionFairSharing feature gate is off"))
    ]
    on = {**config, "admissionFairSharing": {}}
    assert findings([flavor("default"), scoped, lq("lq", "cq"), on]) == []
    not_scoped = cq(
        "cq", {"default": {"cpu": "8"}}, admissionScope={"admissionMode": "NoAdmissionFairSharing"}
    )
    assert findings([flavor("default"), not_scoped, lq("lq", "cq")]) == []


# --- the command ------------------------------------------------------------------------------------


def lint_cli(
    tmp_path: Path, objs: list[dict[str, Any]] | None, *args: str, text: str | None = None
) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "in.yaml"
    path.write_text(text if text is not None else yaml.safe_dump_all(objs))
    return subprocess.run([KUEUE_FAST, "lint", str(path), *args], capture_output=True, text=True, timeout=120)


def test_command_exits_0_with_warnings_and_2_with_strict(tmp_path: Path) -> None:
    no_selector = cq("cq", {"default": {"cpu": "8"}})
    del no_selector["spec"]["namespaceSelector"]
    objs = [
        *BASE[:1],
        no_selector,
        BASE[2],
        wl("big", "4", 3),
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
    ]
    p = lint_cli(tmp_path, objs)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[-1] == "0 error(s), 2 warning(s)"
    assert lines[0].startswith(
        f"warning: {tmp_path / 'in.yaml'} (document 2): ClusterQueue/cq spec.namespaceSelector: not set"
    )
    assert lines[1].startswith(
        f"warning: {tmp_path / 'in.yaml'} (document 5): ConfigMap/x: Kueue does not read ConfigMap"
    )
    # the selector selects nothing: "big" is not pending in an open queue, so no size finding
    assert lint_cli(tmp_path, objs, "--strict").returncode == 2
    assert lint_cli(tmp_path, BASE, "--strict").returncode == 0


def test_command_reports_every_error_and_the_warnings(tmp_path: Path) -> None:
    bad_cq = cq("bad", {"default": {"cpu": "-1"}})
    p = lint_cli(
        tmp_path,
        [*BASE, bad_cq, wl("w", "x"), {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}],
    )
    assert p.returncode == 2
    lines = p.stdout.splitlines()
    assert [line.split(": ")[0] for line in lines[:-1]] == ["warning", "error", "error"]
    assert "ClusterQueue/bad spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in lines[1]
    assert "Workload/team-a/w spec.podSets[0].template.spec.containers[0].resources.requests[cpu]" in lines[2]
    assert lines[-1] == "2 error(s), 1 warning(s)"


def test_command_on_kueues_examples_is_clean(tmp_path: Path) -> None:
    p = subprocess.run(
        [
            KUEUE_FAST,
            "lint",
            str(EXAMPLES / "single-clusterqueue-setup.yaml"),
            str(EXAMPLES / "sample-job.yaml"),
            str(EXAMPLES / "sample-job-partial-admission.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (p.returncode, p.stdout) == (0, "0 error(s), 0 warning(s)\n")


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.yaml")), ids=lambda p: p.name)
def test_lint_never_fails_on_an_example(path: Path) -> None:
    p = subprocess.run([KUEUE_FAST, "lint", str(path)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout
    assert "Traceback" not in p.stderr


def test_admission_checks_missing_or_inactive() -> None:
    # clusterqueue.go updateWithAdmissionChecks: AdmissionCheckNotFound / AdmissionCheckInactive
    checked = cq(
        "cq",
        {"default": {"cpu": "8"}},
        admissionChecksStrategy={"admissionChecks": [{"name": "gone"}, {"name": "off"}, {"name": "on"}]},
    )
    active = {
        "type": "Active",
        "status": "True",
        "reason": "Active",
        "message": "",
        "lastTransitionTime": "2025-01-01T00:00:00Z",
    }
    checks = [
        {
            "apiVersion": B2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "off"},
            "spec": {"controllerName": "x"},
        },
        {
            "apiVersion": B2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "on"},
            "spec": {"controllerName": "x"},
            "status": {"conditions": [active]},
        },
    ]
    got = findings([flavor("default"), checked, lq("lq", "cq"), *checks])
    assert got == [
        (
            "ClusterQueue/cq",
            "spec",
            'AdmissionCheck "gone" does not exist: the ClusterQueue is inactive and admits nothing',
        ),
        (
            "ClusterQueue/cq",
            "spec",
            'AdmissionCheck "off" is not Active (no Active=True condition: is its '
            "controller running?): the ClusterQueue is inactive and admits nothing",
        ),
    ]


def test_a_need_beyond_int64_is_named_saturated(tmp_path: Path) -> None:
    # issue 21 item 10: 2 pods x 4Ei of memory crashed lint (format_quantity outside the int64 range)
    big = wl("w", "1", 2)
    big["spec"]["podSets"][0]["template"]["spec"]["containers"][0]["resources"]["requests"]["memory"] = "4Ei"
    objs = [flavor("default"), cq("cq", {"default": {"cpu": "8", "memory": "16Gi"}}), lq("lq", "cq"), big]
    assert findings(objs) == [
        (
            "Workload/team-a/w",
            "spec.podSets[0]",
            "pod set main needs 9223372036854775807 memory (2 pods), more than its ClusterQueue can ever "
            "get (at most 16Gi in flavor default): it can never be admitted to ClusterQueue cq",
        )
    ]
    p = lint_cli(tmp_path, objs)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr


def test_misspelt_references_say_which_name_was_meant() -> None:
    # a name close to one that exists is most likely a typo of it (as misspelt field names get)
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "typo", "namespace": "team-a", "labels": {"kueue.x-k8s.io/queue-name": "lqq"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                }
            }
        },
    }
    objs = [
        flavor("on-demand"),
        cq(
            "cq",
            {"on-demnad": {"cpu": "8"}},
            admissionChecksStrategy={"admissionChecks": [{"name": "provisoning"}]},
        ),
        {
            "apiVersion": B2,
            "kind": "AdmissionCheck",
            "metadata": {"name": "provisioning"},
            "spec": {"controllerName": "x"},
        },
        lq("lq", "cq"),
        lq("other", "cqq"),
        job,
        wl("far", "1", queue="something-else"),  # nothing close: no guess
    ]
    got = {(obj, field): message for obj, field, message in findings(objs)}
    assert got[("ClusterQueue/cq", "spec.resourceGroups[0].flavors[0].name")] == (
        'ResourceFlavor "on-demnad" does not exist (did you mean "on-demand"?): the ClusterQueue is inactive and admits nothing'
    )
    assert got[("LocalQueue/team-a/other", "spec.clusterQueue")] == (
        'ClusterQueue "cqq" does not exist (did you mean "cq"?): workloads submitted here stay pending'
    )
    assert got[("Job/team-a/typo", "metadata.labels[kueue.x-k8s.io/queue-name]")] == (
        'LocalQueue "lqq" does not exist in namespace team-a (did you mean "lq"?): it stays pending'
    )
    assert got[("ClusterQueue/cq", "spec")] == (
        'AdmissionCheck "provisoning" does not exist (did you mean "provisioning"?): '
        "the ClusterQueue is inactive and admits nothing"
    )
    assert got[("Workload/team-a/far", "spec.queueName")] == (
        'LocalQueue "something-else" does not exist in namespace team-a: it stays pending'
    )
