"""Every field error of every invalid object in one run, as the API server's
aggregated 422 lists them (issue 21 item 8): a ClusterQueue with three
misspelt fields needed three runs. The first error of an object is the one a
reader that stops at the first error reports (the fast path), with the same
wording; the others follow in the order the fields are read."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_validation import CASES, CONVERTERS

from kueue_fast import loader
from kueue_fast.api.errors import InputError

KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")
B2 = "kueue.x-k8s.io/v1beta2"
Q0 = "spec.resourceGroups[0].flavors[0].resources[0]"


def errors_of(*objs: dict[str, Any]) -> list[tuple[str, str, str]]:
    with pytest.raises(InputError) as e:
        loader.build_state(copy.deepcopy(list(objs)))
    return [(x.obj, x.field, x.message) for x in e.value.errors]


def container(name: str = "c", **requests: Any) -> dict[str, Any]:
    return {"name": name, "resources": {"requests": requests or {"cpu": "1"}}}


def workload(*pod_sets: dict[str, Any], **spec: Any) -> dict[str, Any]:
    spec.setdefault("queueName", "lq")
    spec["podSets"] = list(pod_sets)
    return {"apiVersion": B2, "kind": "Workload", "metadata": {"name": "w", "namespace": "ns"}, "spec": spec}


def pod_set(name: str, *containers: dict[str, Any], count: Any = 1) -> dict[str, Any]:
    return {"name": name, "count": count, "template": {"spec": {"containers": list(containers)}}}


def cluster_queue(**spec: Any) -> dict[str, Any]:
    spec.setdefault("namespaceSelector", {})
    return {"apiVersion": B2, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec}


THREE_TYPOS = cluster_queue(
    queueingStrategi="StrictFIFO",
    preemption={"withinClusterQueu": "LowerPriority"},
    resourceGroups=[
        {
            "coveredResources": ["cpu"],
            "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuoto": 8}]}],
        }
    ],
)


def test_a_cluster_queue_with_three_misspelt_fields_reports_them_in_one_run() -> None:
    assert errors_of(THREE_TYPOS) == [
        (
            "ClusterQueue/cq",
            "spec.queueingStrategi",
            'unknown field "queueingStrategi"; did you mean "queueingStrategy"?',
        ),
        (
            "ClusterQueue/cq",
            f"{Q0}.nominalQuoto",
            'unknown field "nominalQuoto"; did you mean "nominalQuota"?',
        ),
        ("ClusterQueue/cq", f"{Q0}.nominalQuota", "Required value"),
        (
            "ClusterQueue/cq",
            "spec.preemption.withinClusterQueu",
            'unknown field "withinClusterQueu"; did you mean "withinClusterQueue"?',
        ),
    ]


def test_independent_fields_and_list_items_are_all_checked() -> None:
    groups = [
        {
            "coveredResources": ["cpu", "memory"],
            "flavors": [
                {
                    "name": "a",
                    "resources": [
                        {"name": "cpu", "nominalQuota": "-1"},
                        {"name": "memory", "nominalQuota": "x"},
                    ],
                },
                {
                    "name": "b",
                    "resources": [
                        {"name": "cpu", "nominalQuota": 1, "lendingLimit": 2},
                        {"name": "memory", "nominalQuota": 1},
                    ],
                },
            ],
        },
        {
            "coveredResources": ["cpu"],
            "flavors": [{"name": "a", "resources": [{"name": "cpu", "nominalQuota": 1}]}],
        },
    ]
    cq = cluster_queue(resourceGroups=groups, stopPolicy="Later", fairSharing={"weight": "-1"})
    got = [(f, m.split(":")[0]) for _, f, m in errors_of(cq)]
    assert got == [
        ("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota", "Invalid value"),
        ("spec.resourceGroups[0].flavors[0].resources[1].nominalQuota", "Invalid value"),
        ("spec.resourceGroups[0].flavors[1].resources[0].lendingLimit", "Invalid value"),  # no cohort
        ("spec.resourceGroups[0].flavors[1].resources[0].lendingLimit", "Invalid value"),  # above nominal
        ("spec.resourceGroups[1].coveredResources[0]", "Duplicate value"),
        ("spec.resourceGroups[1].flavors[0].name", "Duplicate value"),
        ("spec.stopPolicy", "Unsupported value"),
        ("spec.fairSharing.weight", "Invalid value"),
    ]


def test_a_workload_reports_every_pod_set_and_field() -> None:
    w = workload(
        pod_set("a", container(cpu="one")),
        pod_set("b", container(cpu="-1"), container("d", memory="1x"), count=-2),
        priority="high",
    )
    w["status"] = {"conditions": [{"type": "QuotaReserved", "status": "Maybe", "lastTransitionTime": "x"}]}
    t = "template.spec.containers"
    assert [(f, m.split(":")[0]) for _, f, m in errors_of(w)] == [
        (f"spec.podSets[0].{t}[0].resources.requests[cpu]", "Invalid value"),
        ("spec.podSets[1].count", "Invalid value"),
        (f"spec.podSets[1].{t}[0].resources.requests[cpu]", "Invalid value"),
        (f"spec.podSets[1].{t}[1].resources.requests[memory]", "Invalid value"),
        ("spec.priority", "Invalid value"),
        ("status.conditions[0].status", "Unsupported value"),
    ]


def test_a_jobs_errors_name_the_jobs_fields() -> None:
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "train", "namespace": "ns", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [container(cpu="one"), container("d", cpu="-1")],
                }
            },
        },
        "extra": 1,
    }
    assert [(o, f) for o, f, _ in errors_of(job)] == [
        ("Job/ns/train", "extra"),
        ("Job/ns/train", "spec.template.spec.containers[0].resources.requests[cpu]"),
        ("Job/ns/train", "spec.template.spec.containers[1].resources.requests[cpu]"),
    ]


def test_other_kinds_report_every_error() -> None:
    flavor = {
        "apiVersion": B2,
        "kind": "ResourceFlavor",
        "metadata": {"name": "f", "labels": {"a": "b c"}},
        "spec": {
            "nodeLabels": {"x": "y z"},
            "nodeTaints": [{"key": "k"}],
            "tolerations": [{"operator": "Maybe"}],
        },
    }
    local_queue = {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": "lq", "namespace": "ns"},
        "spec": {"clusterQueue": "Bad_Name", "stopPolicy": "Later"},
    }
    config = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "fairSharing": {"preemptionStrategies": ["Sometimes"]},
        "featureGates": {"NoSuchGate": True},
        "waitForPodsReady": {"timeout": "soon"},
    }
    assert [(o, f) for o, f, _ in errors_of(flavor, local_queue, config)] == [
        ("ResourceFlavor/f", "metadata.labels[a]"),
        ("ResourceFlavor/f", "spec.nodeLabels[x]"),
        ("ResourceFlavor/f", "spec.nodeTaints[0].effect"),
        ("ResourceFlavor/f", "spec.tolerations[0].operator"),
        ("LocalQueue/ns/lq", "spec.clusterQueue"),
        ("LocalQueue/ns/lq", "spec.stopPolicy"),
        ("Configuration", "fairSharing.preemptionStrategies"),
        ("Configuration", "featureGates[NoSuchGate]"),
        ("Configuration", "waitForPodsReady.timeout"),
    ]


@pytest.mark.parametrize(("obj", "ref", "field", "words"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_first_error_of_every_rule_is_the_one_the_fast_path_raises(
    obj: dict[str, Any], ref: str, field: str, words: str
) -> None:
    with pytest.raises(InputError) as fast:
        CONVERTERS[obj["kind"]](copy.deepcopy(obj))
    with pytest.raises(InputError) as every:
        loader.build_state([copy.deepcopy(obj)])
    first = every.value.errors[0]
    assert (first.obj, first.field, first.message) == (fast.value.obj, fast.value.field, fast.value.message)
    assert len({(e.obj, e.field, e.message) for e in every.value.errors}) == len(every.value.errors)


def test_the_command_prints_one_line_per_error_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "cq.yaml"
    path.write_text(yaml.safe_dump(THREE_TYPOS))
    for command in ("schedule", "lint"):
        p = subprocess.run([KUEUE_FAST, command, str(path)], capture_output=True, text=True, timeout=60)
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr
        lines = (p.stderr if command == "schedule" else p.stdout).splitlines()
        errors = [line for line in lines if line.startswith("error: ")]
        assert len(errors) == 4
        assert all(line.startswith(f"error: {path} (document 1): ClusterQueue/cq spec.") for line in errors)


def test_collecting_in_one_thread_leaves_the_others_stopping_at_the_first_error() -> None:
    import threading

    from kueue_fast.api import error_collection as collect

    raised: list[str] = []

    def other_thread() -> None:
        try:
            loader.parse_cluster_queue(copy.deepcopy(THREE_TYPOS))
        except InputError as e:
            raised.append(e.field)

    def read() -> None:  # runs under collect_errors in this thread
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        loader.parse_cluster_queue(copy.deepcopy(THREE_TYPOS))

    found = collect.collect_errors(read, InputError("", "", "unused"))
    assert raised == ["spec.queueingStrategi"]  # the other thread stopped at its first error
    assert len(found) == 4
