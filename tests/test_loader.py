# ruff: noqa: E501  (object literals read better on long lines)
"""Reading documents, both API versions, Kueue's defaults, Workload details."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from kueue_fast import loader
from kueue_fast.api import model as m
from kueue_fast.api.errors import InputError, InputErrors, ParseError, ValidationError

B1 = "kueue.x-k8s.io/v1beta1"
B2 = "kueue.x-k8s.io/v1beta2"
SCENARIOS = Path(__file__).parent / "scenarios"


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def cq_obj(api: str = B1, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": api, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec}


def wl_obj(
    api: str = B1,
    name: str = "wl",
    status: dict[str, Any] | None = None,
    metadata: dict[str, Any] | None = None,
    template_spec: dict[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    spec.setdefault("queueName", "lq")
    spec.setdefault(
        "podSets",
        [
            {
                "name": "main",
                "count": 2,
                "template": {
                    "spec": template_spec
                    or {
                        "containers": [
                            {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
                        ]
                    }
                },
            }
        ],
    )
    obj = {
        "apiVersion": api,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "team-a", **(metadata or {})},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


# --- reading ----------------------------------------------------------------------------


def test_multi_document_yaml_skips_empty_documents(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "in.yaml",
        "---\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n\n---\n"
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n",
    )
    docs = loader.read_documents([path])
    assert [d.obj["metadata"]["name"] for d in docs] == ["a", "b"]
    assert [d.index for d in docs] == [1, 3]  # 0-based positions among all documents
    assert docs[0].source == path


def test_json_object_and_array(tmp_path: Path) -> None:
    one = write(
        tmp_path, "one.json", json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    )
    many = write(
        tmp_path,
        "many.txt",
        "  ["
        + ",".join(
            json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}) for n in "bc"
        )
        + "]",
    )
    state = loader.load([one, many])
    assert sorted(state.namespaces) == ["a", "b", "c"]


def test_kubectl_lists_are_unpacked(tmp_path: Path) -> None:
    text = yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "List",
            "items": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}],
        }
    )
    typed = json.dumps(
        {
            "apiVersion": B1,
            "kind": "ResourceFlavorList",
            "metadata": {},
            "items": [{"metadata": {"name": "spot"}}, {"metadata": {"name": "on-demand"}}],
        }
    )
    state = loader.load([write(tmp_path, "l.yaml", text), write(tmp_path, "t.json", typed)])
    assert list(state.namespaces) == ["a"]
    assert sorted(state.resource_flavors) == ["on-demand", "spot"]  # items inherit kind and apiVersion


def test_standard_input() -> None:
    docs = loader.read_documents(
        ["-"], stdin=io.StringIO("apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n")
    )
    assert docs[0].source == "<stdin>"


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "w.yaml",
        yaml.safe_dump(wl_obj()).replace(
            "namespace: team-a", "namespace: team-a\n  creationTimestamp: 2026-01-01T00:00:00.123456789Z"
        ),
    )
    state = loader.load([path])
    w = state.workloads["team-a/wl"]
    assert w.raw["metadata"]["creationTimestamp"] == "2026-01-01T00:00:00.123456789Z"
    assert w.creation_ns % 10**9 == 123456789


def test_missing_file_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        loader.read_documents(["/nonexistent/file.yaml"])


def test_errors_name_the_document(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "x.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
        + yaml.safe_dump(cq_obj(stopPolicy="Later")),
    )
    with pytest.raises(ValidationError) as e:
        loader.load([path])
    assert e.value.source == f"{path} (document 2)"
    assert str(e.value).startswith(f"{path} (document 2): ClusterQueue/cq spec.stopPolicy: ")


def test_build_state_accepts_plain_dicts() -> None:
    state = loader.build_state([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}])
    assert state.namespaces["a"].labels == {"kubernetes.io/metadata.name": "a"}
    assert len(state.documents) == 1


# --- ClusterQueue defaults and versions ------------------------------------------------------------


def test_cluster_queue_defaults() -> None:
    q = loader.parse_cluster_queue(cq_obj())
    assert q.queueing_strategy == "BestEffortFIFO"
    assert q.namespace_selector is None  # matches nothing
    assert q.preemption == m.Preemption("Never", "Never", "Never", None)
    assert q.flavor_fungibility == m.FlavorFungibility("MayStopSearch", "TryNextFlavor", None)
    assert q.stop_policy == "None"
    assert q.fair_weight == 1.0
    assert q.cohort is None and q.resource_groups == [] and q.admission_checks == []


def test_empty_namespace_selector_matches_everything() -> None:
    q = loader.parse_cluster_queue(cq_obj(namespaceSelector={}))
    assert q.namespace_selector == m.LabelSelector()
    assert q.namespace_selector.matches({"anything": "x"})


def test_empty_sub_objects_get_defaults() -> None:
    q = loader.parse_cluster_queue(cq_obj(preemption={"borrowWithinCohort": {}}, flavorFungibility={}))
    assert q.preemption.borrow_within_cohort_policy == "Never"
    assert q.flavor_fungibility == m.FlavorFungibility()


@pytest.mark.parametrize(("api", "field"), [(B1, "cohort"), (B2, "cohortName")])
def test_cohort_field_per_version(api: str, field: str) -> None:
    q = loader.parse_cluster_queue(
        cq_obj(
            api,
            **{field: "research"},
            resourceGroups=[
                {
                    "coveredResources": ["cpu", "memory"],
                    "flavors": [
                        {
                            "name": "default",
                            "resources": [
                                {
                                    "name": "cpu",
                                    "nominalQuota": "9",
                                    "borrowingLimit": "1",
                                    "lendingLimit": "500m",
                                },
                                {"name": "memory", "nominalQuota": "36Gi"},
                            ],
                        }
                    ],
                }
            ],
        )
    )
    assert q.cohort == "research"
    fr = q.resource_groups[0].flavors[0].resources
    assert fr[0] == m.ResourceQuota("cpu", 9000, 1000, 500)
    assert fr[1] == m.ResourceQuota("memory", 36 * 2**30, None, None)


def test_deprecated_fungibility_values_mean_may_stop_search() -> None:
    q = loader.parse_cluster_queue(
        cq_obj(flavorFungibility={"whenCanBorrow": "Borrow", "whenCanPreempt": "Preempt"})
    )
    assert q.flavor_fungibility == m.FlavorFungibility("MayStopSearch", "MayStopSearch", None)


def test_preemption_and_other_fields() -> None:
    q = loader.parse_cluster_queue(
        cq_obj(
            cohort="c",
            queueingStrategy="StrictFIFO",
            stopPolicy="HoldAndDrain",
            fairSharing={"weight": "1.5"},
            preemption={
                "reclaimWithinCohort": "Any",
                "withinClusterQueue": "LowerPriority",
                "borrowWithinCohort": {"policy": "LowerPriority", "maxPriorityThreshold": 100},
            },
            namespaceSelector={
                "matchLabels": {"team": "a"},
                "matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}],
            },
            admissionChecks=["prov"],
            admissionScope={"admissionMode": "UsageBasedAdmissionFairSharing"},
        )
    )
    assert q.preemption == m.Preemption("LowerPriority", "Any", "LowerPriority", 100)
    assert (q.queueing_strategy, q.stop_policy, q.fair_weight) == ("StrictFIFO", "HoldAndDrain", 1.5)
    assert q.namespace_selector is not None and q.namespace_selector.matches({"team": "a", "env": "dev"})
    assert q.admission_checks == ["prov"] and q.usage_based_admission_fair_sharing


_TWO_FLAVORS = [
    {
        "coveredResources": ["cpu"],
        "flavors": [
            {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": 1}]},
            {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": 1}]},
        ],
    }
]


def test_admission_checks_strategy_records_the_checks_and_their_flavors() -> None:
    q = loader.parse_cluster_queue(
        cq_obj(
            B2,
            resourceGroups=_TWO_FLAVORS,
            admissionChecksStrategy={
                "admissionChecks": [{"name": "prov", "onFlavors": ["spot"]}, {"name": "all"}]
            },
        )
    )
    assert q.admission_checks == ["prov", "all"]
    assert q.admission_check_flavors == {"prov": ["spot"]}


def test_on_flavors_must_be_flavors_of_the_cluster_queue() -> None:
    # clusterqueue_webhook.go validateAdmissionCheckOnFlavors: field.NotSupported
    with pytest.raises(ValidationError) as e:
        loader.parse_cluster_queue(
            cq_obj(
                B2,
                resourceGroups=_TWO_FLAVORS,
                admissionChecksStrategy={"admissionChecks": [{"name": "prov", "onFlavors": ["spot", "gpu"]}]},
            )
        )
    assert e.value.field == "spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]"
    assert 'Unsupported value: "gpu": supported values: "on-demand", "spot"' in str(e.value)


def test_admission_checks_of_a_strategy_are_unique() -> None:
    with pytest.raises(ValidationError) as e:
        loader.parse_cluster_queue(
            cq_obj(B2, admissionChecksStrategy={"admissionChecks": [{"name": "prov"}, {"name": "prov"}]})
        )
    assert e.value.field == "spec.admissionChecksStrategy.admissionChecks[1].name"


def test_admission_check_objects_are_read_with_their_active_condition() -> None:
    state = loader.build_state(
        [
            {
                "apiVersion": B1,
                "kind": "AdmissionCheck",
                "metadata": {"name": "prov"},
                "spec": {"controllerName": "kueue.x-k8s.io/provisioning-request", "retryDelayMinutes": 15},
                "status": {
                    "conditions": [
                        {
                            "type": "Active",
                            "status": "True",
                            "reason": "Active",
                            "message": "",
                            "lastTransitionTime": "2024-01-01T00:00:00Z",
                        }
                    ]
                },
            },
            {
                "apiVersion": B2,
                "kind": "AdmissionCheck",
                "metadata": {"name": "off"},
                "spec": {"controllerName": "example.com/x"},
            },
        ]
    )
    assert state.admission_checks == {
        "prov": m.AdmissionCheck("prov", "kueue.x-k8s.io/provisioning-request", True),
        "off": m.AdmissionCheck("off", "example.com/x", False),
    }
    assert not state.warnings


def test_an_admission_check_needs_a_controller_name() -> None:
    with pytest.raises(ValidationError) as e:
        loader.build_state(
            [{"apiVersion": B2, "kind": "AdmissionCheck", "metadata": {"name": "x"}, "spec": {}}]
        )
    assert (e.value.obj, e.value.field) == ("AdmissionCheck/x", "spec.controllerName")


def test_workload_check_states_and_admitted_condition_are_read() -> None:
    t = "2024-01-01T00:00:00Z"
    w = loader.parse_workload(
        wl_obj(
            B2,
            status={
                "conditions": [
                    {
                        "type": "Admitted",
                        "status": "True",
                        "reason": "Admitted",
                        "message": "",
                        "lastTransitionTime": t,
                    }
                ],
                "admissionChecks": [
                    {
                        "name": "prov",
                        "state": "Retry",
                        "message": "later",
                        "retryCount": 2,
                        "lastTransitionTime": t,
                    }
                ],
            },
        )
    )
    assert w.admission_checks == [m.AdmissionCheckState("prov", "Retry", "later", 2)]
    assert w.admitted_condition


def test_a_workload_check_state_outside_the_enum_is_refused() -> None:
    with pytest.raises(ValidationError) as e:
        loader.parse_workload(wl_obj(B2, status={"admissionChecks": [{"name": "prov", "state": "Done"}]}))
    assert e.value.field == "status.admissionChecks[0].state" and "Unsupported value" in str(e.value)


def test_priority_class_ref_needs_a_priority() -> None:
    # CEL rule on the v1beta2 WorkloadSpec (apis/kueue/v1beta2/workload_types.go)
    ref = {"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"}
    high = {"high": m.WorkloadPriorityClass("high", 1000)}
    with pytest.raises(ValidationError) as e:
        loader.parse_workload(wl_obj(B2, priorityClassRef=ref), high)
    assert e.value.field == "spec" and "priority should not be nil when priorityClassRef is set" in str(
        e.value
    )
    assert loader.parse_workload(wl_obj(B2, priorityClassRef=ref, priority=7), high).priority == 7


# --- other kinds -------------------------------------------------------------------------------


def test_cohort_versions() -> None:
    for api, field in ((B1, "parentName"), (B2, "parentName"), ("kueue.x-k8s.io/v1alpha1", "parent")):
        co = loader.parse_cohort(
            {
                "apiVersion": api,
                "kind": "Cohort",
                "metadata": {"name": "c"},
                "spec": {field: "root", "fairSharing": {"weight": "0"}},
            }
        )
        assert co.parent == "root" and co.fair_weight == 0.0


def test_resource_flavor() -> None:
    f = loader.parse_resource_flavor(
        {
            "apiVersion": B2,
            "kind": "ResourceFlavor",
            "metadata": {"name": "spot"},
            "spec": {
                "nodeLabels": {"cloud.com/spot": "true"},
                "nodeTaints": [{"key": "spot", "value": "true", "effect": "NoSchedule"}],
                "tolerations": [{"key": "x", "operator": "Exists"}],
            },
        }
    )
    assert f.node_labels == {"cloud.com/spot": "true"}
    assert f.node_taints == [m.Taint("spot", "true", "NoSchedule")]
    assert f.tolerations == [m.Toleration("x", "Exists", "", "")]


def test_local_queue_defaults_namespace() -> None:
    q = loader.parse_local_queue(
        {
            "apiVersion": B1,
            "kind": "LocalQueue",
            "metadata": {"name": "lq"},
            "spec": {"clusterQueue": "cq", "stopPolicy": "Hold"},
        }
    )
    assert (q.namespace, q.name, q.cluster_queue, q.stop_policy) == ("default", "lq", "cq", "Hold")


def test_configuration_versions() -> None:
    off = loader.parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta1",
            "kind": "Configuration",
            "fairSharing": {"enable": False},
        }
    )
    assert off.fair_sharing is None
    on = loader.parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta2",
            "kind": "Configuration",
            "fairSharing": {"preemptionStrategies": ["LessThanInitialShare"]},
            "admissionFairSharing": {
                "usageHalfLifeTime": "168h",
                "usageSamplingInterval": "1m30s",
                "resourceWeights": {"cpu": 2},
            },
            "featureGates": {"PartialAdmission": False},
            "manageJobsWithoutQueueName": True,
        }
    )
    assert on.fair_sharing == m.FairSharingConfig(["LessThanInitialShare"])
    assert on.admission_fair_sharing == m.AdmissionFairSharingConfig(168 * 3600.0, 90.0, {"cpu": 2.0})
    assert on.feature_gates == {"PartialAdmission": False}
    default = loader.parse_configuration(
        {
            "apiVersion": "config.kueue.x-k8s.io/v1beta1",
            "kind": "Configuration",
            "fairSharing": {"enable": True},
        }
    )
    assert default.fair_sharing == m.FairSharingConfig()


def helm_config_map(text: str, name: str = "kueue-manager-config") -> dict[str, Any]:
    """Kueue's ConfigMap as its Helm chart and kustomize install it."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "kueue-system"},
        "data": {"controller_manager_config.yaml": text},
    }


KUEUE_MANAGER_CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
health:
  healthProbeBindAddress: :8081
fairSharing:
  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]
waitForPodsReady:
  timeout: 10m
"""


def test_kueues_config_map_is_read_as_its_configuration() -> None:
    # issue 21 item 7: it was skipped ("Kueue does not read ConfigMap"), fair sharing and
    # waitForPodsReady silently dropped out, while --kubeconfig read the cluster's
    for name in ("kueue-manager-config", "my-release-kueue-manager-config"):
        state = loader.build_state([helm_config_map(KUEUE_MANAGER_CONFIG, name)])
        assert state.configuration.fair_sharing == m.FairSharingConfig()
        assert state.configuration.wait_for_pods_ready is not None
        assert state.configuration.wait_for_pods_ready.timeout_s == 600.0
        assert state.warnings == []
    other = helm_config_map(
        "apiVersion: controller-runtime.sigs.k8s.io/v1alpha1\nkind: ControllerManagerConfig\n"
    )
    state = loader.build_state([other, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}])
    assert state.configuration == m.Configuration()  # another operator's: skipped, as any ConfigMap
    assert [w.message.split(";")[0] for w in state.warnings] == ["Kueue does not read ConfigMap (v1)"] * 2


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfairSharing: {preemptionStrategies: [Sometimes]}\n",
            "data[controller_manager_config.yaml].fairSharing.preemptionStrategies",
            'Unsupported value: "Sometimes"',
        ),
        (
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: [\n",
            "data[controller_manager_config.yaml]",
            "invalid YAML",
        ),
        (
            "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n---\napiVersion: v1\nkind: Other\n",
            "data[controller_manager_config.yaml]",
            "expected one Configuration, found 2 objects",
        ),
    ],
)
def test_errors_in_kueues_config_map_name_the_config_map_and_key(text: str, field: str, words: str) -> None:
    with pytest.raises(InputError) as e:
        loader.build_state([helm_config_map(text)])
    assert (e.value.obj, e.value.field) == ("ConfigMap/kueue-system/kueue-manager-config", field)
    assert words in e.value.message


def test_kueues_config_map_and_a_configuration_are_two_configurations() -> None:
    config = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration"}
    with pytest.raises(ValidationError, match="at most one Configuration may be given"):
        loader.build_state([helm_config_map(KUEUE_MANAGER_CONFIG), config])


# --- Workload ---------------------------------------------------------------------------------


def test_workload_basics() -> None:
    w = loader.parse_workload(
        wl_obj(
            metadata={"creationTimestamp": "2026-01-01T01:00:00+01:00", "uid": "u-1"},
            priority=7,
            active=False,
        )
    )
    assert (w.namespace, w.name, w.queue_name, w.priority, w.uid, w.active) == (
        "team-a",
        "wl",
        "lq",
        7,
        "u-1",
        False,
    )
    assert w.creation_ns == 1767225600 * 10**9  # 2026-01-01T00:00:00Z
    ps = w.pod_sets[0]
    assert (ps.name, ps.count, ps.requests) == ("main", 2, {"cpu": 1000, "memory": 2**30})
    assert w.admission is None and not w.finished and w.queue_order_ns is None
    assert w.raw["metadata"]["name"] == "wl"


def test_workload_without_timestamp_or_uid() -> None:
    w = loader.parse_workload(wl_obj(), default_creation_ns=5)
    assert w.creation_ns == 5 and w.uid == "team-a/wl"


def test_file_order_is_fifo_order_without_timestamps() -> None:
    state = loader.build_state(
        [
            wl_obj(name="b"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
            wl_obj(name="a"),
        ]
    )
    assert state.workloads["team-a/b"].creation_ns == 0
    assert state.workloads["team-a/a"].creation_ns == 1


def test_priority_from_classes() -> None:
    state = loader.build_state(
        [
            wl_obj(name="from-wpc", priorityClassName="high"),
            wl_obj(name="explicit", priorityClassName="high", priority=3),
            wl_obj(
                name="from-pod-class",
                priorityClassName="pc",
                priorityClassSource="scheduling.k8s.io/priorityclass",
            ),
            # v1beta2 needs the priority with the ref (CEL rule): the job webhooks copy the class value
            wl_obj(
                B2,
                name="ref",
                priorityClassRef={"group": "kueue.x-k8s.io", "kind": "WorkloadPriorityClass", "name": "high"},
                priority=1000,
            ),
            wl_obj(
                B2,
                name="ref-pod",
                priorityClassRef={"group": "scheduling.k8s.io", "kind": "PriorityClass", "name": "pc"},
                priority=50,
            ),
            {"apiVersion": B1, "kind": "WorkloadPriorityClass", "metadata": {"name": "high"}, "value": 1000},
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": "pc"},
                "value": 50,
                "globalDefault": False,
            },
        ]
    )
    got = {k: (w.priority, w.priority_class) for k, w in state.workloads.items()}
    assert got == {
        "team-a/from-wpc": (1000, "high"),
        "team-a/explicit": (3, "high"),
        "team-a/from-pod-class": (50, "pc"),
        "team-a/ref": (1000, "high"),
        "team-a/ref-pod": (50, "pc"),
    }
    assert state.pod_priority_classes["pc"].value == 50


def test_admitted_workload() -> None:
    w = loader.parse_workload(
        wl_obj(
            metadata={"creationTimestamp": "2026-01-01T00:00:00Z"},
            status={
                "admission": {
                    "clusterQueue": "cq",
                    "podSetAssignments": [
                        {
                            "name": "main",
                            "count": 2,
                            "flavors": {"cpu": "default"},
                            "resourceUsage": {"cpu": "2", "memory": "2Gi"},
                        }
                    ],
                },
                "conditions": [
                    {
                        "type": "QuotaReserved",
                        "status": "True",
                        "reason": "QuotaReserved",
                        "message": "",
                        "lastTransitionTime": "2026-01-01T00:01:00.5Z",
                    }
                ],
                "reclaimablePods": [{"name": "main", "count": 1}],
            },
        )
    )
    assert w.admission == m.Admission(
        "cq", [m.PodSetAssignment("main", 2, {"cpu": "default"}, {"cpu": 2000, "memory": 2 * 2**30})]
    )
    assert w.admission_ns == (1767225600 + 60) * 10**9 + 500_000_000
    assert w.pod_sets[0].reclaimable == 1


def test_admission_without_condition_uses_creation_time() -> None:
    w = loader.parse_workload(
        wl_obj(
            metadata={"creationTimestamp": "2026-01-01T00:00:00Z"},
            status={
                "admission": {
                    "clusterQueue": "cq",
                    "podSetAssignments": [{"name": "main", "resourceUsage": {"cpu": "2"}}],
                }
            },
        )
    )
    assert w.admission is not None and w.admission_ns == w.creation_ns
    assert w.admission.pod_set_assignments[0].count == 2  # from the pod set when absent


def test_finished_and_evicted_conditions() -> None:
    def cond(t: str, reason: str, when: str) -> dict[str, str]:
        return {"type": t, "status": "True", "reason": reason, "message": "", "lastTransitionTime": when}

    done = loader.parse_workload(
        wl_obj(status={"conditions": [cond("Finished", "Succeeded", "2026-01-01T00:00:00Z")]})
    )
    assert done.finished
    timeout = loader.parse_workload(
        wl_obj(status={"conditions": [cond("Evicted", "PodsReadyTimeout", "2026-01-02T00:00:00Z")]})
    )
    assert timeout.queue_order_ns == 1767312000 * 10**9
    preempted = loader.parse_workload(
        wl_obj(status={"conditions": [cond("Evicted", "Preempted", "2026-01-02T00:00:00Z")]})
    )
    assert preempted.queue_order_ns is None


def test_pod_set_scheduling_constraints() -> None:
    w = loader.parse_workload(
        wl_obj(
            template_spec={
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}}
                ],
                "nodeSelector": {"zone": "a"},
                "tolerations": [{"key": "spot", "operator": "Exists", "effect": "NoSchedule"}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "arch", "operator": "In", "values": ["amd64"]}]}
                            ]
                        }
                    }
                },
            }
        )
    )
    ps = w.pod_sets[0]
    assert ps.node_selector == {"zone": "a"}
    assert ps.tolerations == [m.Toleration("spot", "Exists", "", "NoSchedule")]
    assert ps.required_affinity == (
        m.NodeSelectorTerm((m.NodeSelectorRequirement("arch", "In", ("amd64",)),)),
    )
    assert ps.resources_validation_error == (
        "resources validation failed: spec.podSets[0].template.spec.containers[0]: "
        'Invalid value: ["cpu"]: requests must not exceed its limits'
    )


def test_min_count_and_default_pod_set_name() -> None:
    w = loader.parse_workload(
        wl_obj(podSets=[{"count": 4, "minCount": 2, "template": {"spec": {"containers": []}}}])
    )
    assert (w.pod_sets[0].name, w.pod_sets[0].min_count, w.pod_sets[0].requests) == ("main", 2, {})


# --- the shared scenarios all load ------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(SCENARIOS.glob("*.yaml")), ids=lambda p: p.stem)
def test_scenarios_load(path: Path) -> None:
    docs = loader.read_documents([str(path)])
    header, objects = docs[0].obj, docs[1:]
    assert header["kind"] == "Scenario"
    expected_error = (header.get("expect") or {}).get("error")
    if expected_error:
        with pytest.raises(ValidationError, match=expected_error):
            loader.build_state(objects)
    else:
        state = loader.build_state(objects)
        # a Workload each, and one for each queued Job and JobSet
        made = ("Workload", "Job", "JobSet")
        assert len(state.workloads) == sum(1 for d in objects if d.obj.get("kind") in made)


# --- every invalid object at once, warnings ---------------------------------------------------------


def test_every_invalid_object_is_reported_in_order(tmp_path: Path) -> None:
    bad = write(
        tmp_path,
        "bad.yaml",
        "\n---\n".join(
            [
                yaml.safe_dump(cq_obj(stopPolicy="Later")),  # a ClusterQueue error
                yaml.safe_dump(
                    {"apiVersion": B2, "kind": "ClusterQueu", "metadata": {"name": "x"}}
                ),  # a kind error
                yaml.safe_dump(wl_obj(name="w1", podSets=[])),  # a Workload error
                yaml.safe_dump(wl_obj(name="w2")),  # fine
                yaml.safe_dump(wl_obj(name="w3", priorityClassName="none")),  # a missing reference
            ]
        ),
    )
    broken = write(tmp_path, "broken.yaml", "a: [\n")
    with pytest.raises(InputErrors) as e:
        loader.load([bad, broken])
    got = [(type(x).__name__, x.obj, x.field) for x in e.value.errors]
    # file errors, then kinds, then the other objects, then Workloads: a reader that
    # stopped at the first error reported the first of these
    assert got == [
        ("ParseError", "", ""),
        ("ParseError", "ClusterQueu/x", "kind"),
        ("ValidationError", "ClusterQueue/cq", "spec.stopPolicy"),
        ("ValidationError", "Workload/team-a/w1", "spec.podSets"),
    ]  # no MissingReferenceError: the class may be in the file that could not be read
    assert str(e.value) == str(e.value.errors[0])
    assert isinstance(e.value, InputError)


def test_a_single_error_is_raised_as_itself_with_the_warnings() -> None:
    skipped = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    with pytest.raises(ValidationError) as e:
        loader.build_state([skipped, cq_obj(stopPolicy="Later")])
    assert e.value.errors == [e.value]
    assert [w.obj for w in e.value.warnings] == ["ConfigMap/c"]


def test_a_reference_to_an_invalid_priority_class_is_not_a_second_error() -> None:
    bad_class = {
        "apiVersion": B1,
        "kind": "WorkloadPriorityClass",
        "metadata": {"name": "high"},
        "value": "x",
    }
    with pytest.raises(ValidationError) as e:  # one error, not InputErrors
        loader.build_state([bad_class, wl_obj(priorityClassName="high")])
    assert e.value.obj == "WorkloadPriorityClass/high"


def test_kinds_kueue_does_not_read_are_skipped_with_a_warning() -> None:
    state = loader.build_state(
        [
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n"}},
            {
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "clusterqueues.kueue.x-k8s.io"},
            },
            {
                "apiVersion": "ray.io/v1",
                "kind": "RayJob",
                "metadata": {"name": "rj", "labels": {"kueue.x-k8s.io/queue-name": "lq"}},
            },
            {"apiVersion": B2, "kind": "MultiKueueCluster", "metadata": {"name": "t"}},
            {"apiVersion": "v1", "kind": "Namespac", "metadata": {"name": "x"}},
        ]
    )
    got = {w.obj: w.message for w in state.warnings}
    assert list(got) == [
        "ConfigMap/n/c",
        "CustomResourceDefinition/clusterqueues.kueue.x-k8s.io",
        "RayJob/rj",
        "MultiKueueCluster/t",
        "Namespac/x",
    ]
    assert got["ConfigMap/n/c"] == "Kueue does not read ConfigMap (v1); skipped"
    assert (
        "kueue-fast makes Workloads only from batch/v1 Jobs and jobset.x-k8s.io/v1alpha2 JobSets"
        in got["RayJob/rj"]
    )
    assert "it matters only through an AdmissionCheck" in got["MultiKueueCluster/t"]
    assert got["Namespac/x"].endswith('(did you mean "Namespace"?)')
    assert len(state.documents) == 5  # --output yaml still prints them


@pytest.mark.parametrize(
    ("kind", "hint"),
    [
        ("ClusterQueu", "ClusterQueue"),
        ("localqueue", "LocalQueue"),
        ("Flavor", "ResourceFlavor"),
        ("Banana", None),
    ],
)
def test_an_unknown_kind_in_kueues_group_is_an_error_with_a_hint(kind: str, hint: str | None) -> None:
    with pytest.raises(ParseError) as e:
        loader.build_state([{"apiVersion": B2, "kind": kind, "metadata": {"name": "x"}}])
    assert e.value.field == "kind"
    assert e.value.message.startswith(f'unsupported kind "{kind}" (apiVersion "{B2}")')
    assert e.value.message.endswith(f'; did you mean "{hint}"?' if hint else ")")


def test_an_empty_file_and_an_empty_directory_are_warnings(tmp_path: Path) -> None:
    empty = write(tmp_path, "empty.yaml", "# nothing yet\n---\n")
    (tmp_path / "none").mkdir()
    state = loader.load([empty, str(tmp_path / "none")])
    assert [(w.source, w.message) for w in state.warnings] == [
        (empty, "no objects in this file"),
        (str(tmp_path / "none"), "directory has no .json, .yaml or .yml files (-R reads its subdirectories)"),
    ]


def test_a_directory_is_read_like_kubectl_apply_f(tmp_path: Path) -> None:
    def ns(name: str) -> str:
        return yaml.safe_dump({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})

    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    (tmp_path / "b.yaml").write_text(ns("b"))
    (tmp_path / "a.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}})
    )
    (tmp_path / "c.yml").write_text(ns("c"))
    (tmp_path / "notes.txt").write_text("not a manifest")
    (tmp_path / "sub" / "d.yaml").write_text(ns("d"))
    (tmp_path / "sub" / "deeper" / "e.yaml").write_text(ns("e"))
    (tmp_path / "z.yaml").write_text(ns("z"))
    assert loader.manifest_files(str(tmp_path)) == [
        str(tmp_path / n) for n in ("a.json", "b.yaml", "c.yml", "z.yaml")
    ]
    flat = loader.load([str(tmp_path)])
    assert list(flat.namespaces) == ["a", "b", "c", "z"]
    # kubectl says nothing about the subdirectory; a user who forgot -R should hear of it
    assert [(w.source, w.message) for w in flat.warnings] == [
        (str(tmp_path / "sub"), "subdirectory not read (-R reads subdirectories)")
    ]
    deep = loader.load([str(tmp_path)], recursive=True)
    assert list(deep.namespaces) == ["a", "b", "c", "d", "e", "z"]  # filepath.Walk's lexical order
    assert loader.manifest_files(str(tmp_path / "notes.txt")) == [str(tmp_path / "notes.txt")]  # named: read


def test_v1beta1_names_in_v1beta2_objects_get_a_hint() -> None:
    with pytest.raises(ValidationError) as e:
        loader.build_state([cq_obj(B2, cohort="c")])
    assert (
        e.value.message
        == 'unknown field "cohort"; kueue.x-k8s.io/v1beta2 calls it "cohortName" ("cohort" is the v1beta1 name)'
    )
    with pytest.raises(ValidationError) as e:
        loader.build_state([cq_obj(B1, cohortName="c")])
    assert (
        e.value.message
        == 'unknown field "cohortName"; kueue.x-k8s.io/v1beta1 calls it "cohort" ("cohortName" is the v1beta2 name)'
    )
    with pytest.raises(ValidationError) as e:
        loader.build_state(
            [{"apiVersion": B2, "kind": "Cohort", "metadata": {"name": "c"}, "spec": {"parent": "root"}}]
        )
    assert (
        e.value.message
        == 'unknown field "parent"; kueue.x-k8s.io/v1beta2 calls it "parentName" ("parent" is the v1alpha1 name)'
    )
    with pytest.raises(ValidationError) as e:
        loader.build_state([cq_obj(B2, queueingStrategi="StrictFIFO")])
    assert e.value.message == 'unknown field "queueingStrategi"; did you mean "queueingStrategy"?'


def test_a_cluster_queue_without_namespace_selector_is_a_warning() -> None:
    state = loader.build_state(
        [cq_obj(B2), {**cq_obj(B2, namespaceSelector={}), "metadata": {"name": "all"}}]
    )
    (w,) = state.warnings
    assert (w.obj, w.field) == ("ClusterQueue/cq", "spec.namespaceSelector")
    assert "selects no namespace" in w.message


def test_an_admitted_workload_naming_an_unknown_flavor_is_a_warning() -> None:
    status = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "count": 2,
                    "flavors": {"cpu": "defualt", "memory": "default"},
                    "resourceUsage": {"cpu": "2", "memory": "2Gi"},
                }
            ],
        }
    }
    flavor = {"apiVersion": B1, "kind": "ResourceFlavor", "metadata": {"name": "default"}}
    state = loader.build_state([flavor, cq_obj(namespaceSelector={}), wl_obj(status=status)])
    (w,) = state.warnings
    assert (w.obj, w.field) == ("Workload/team-a/wl", "status.admission.podSetAssignments[0].flavors[cpu]")
    assert w.message.startswith('ResourceFlavor "defualt" is not in the input')


def test_sources_are_kept_when_asked(tmp_path: Path) -> None:
    path = write(
        tmp_path, "in.yaml", yaml.safe_dump(cq_obj(namespaceSelector={})) + "---\n" + yaml.safe_dump(wl_obj())
    )
    assert loader.load([path]).sources == {}
    assert loader.load([path], keep_sources=True).sources == {
        "ClusterQueue/cq": f"{path} (document 1)",
        "Workload/team-a/wl": f"{path} (document 2)",
    }


def test_a_check_state_update_must_name_a_pod_set() -> None:
    # workload_webhook.go validatePodSetUpdates
    status = {"admissionChecks": [{"name": "prov", "state": "Ready", "podSetUpdates": [{"name": "workers"}]}]}
    with pytest.raises(ValidationError) as e:
        loader.parse_workload(wl_obj(B2, status=status))
    assert e.value.field == "status.admissionChecks[0].podSetUpdates[0].name"
    assert 'Unsupported value: "workers": supported values: "main"' in str(e.value)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_a_file_reads_as_text_mode_reads_it_whatever_its_line_ends(
    tmp_path: Path, newline: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the parsers get universal newlines' text (the YAML block reader declines a carriage return)
    text = (
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: default\n---\n# end\n"
    )
    path = tmp_path / "f.yaml"
    path.write_bytes(text.replace("\n", newline).encode())
    with open(path, encoding="utf-8") as f:
        want = [d for d in yaml.safe_load_all(f.read()) if d is not None]
    from kueue_fast.loader import documents

    seen: list[str] = []
    parse = documents._parse_text
    monkeypatch.setattr(
        documents, "_parse_text", lambda text, source: seen.append(text) or parse(text, source)
    )
    assert [d.obj for d in loader.read_documents([str(path)])] == want
    assert seen == [text]  # the text the parsers get: "\n" line ends only
    assert list(loader.load([str(path)]).resource_flavors) == ["default"]


def _admitted_workload(name: str, pod_set: str, count: int, at: str) -> dict[str, Any]:
    return {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": "2024-01-01T00:00:00Z"},
        "spec": {
            "queueName": "lq",
            "podSets": [{"name": pod_set, "count": count, "template": {"spec": {"containers": []}}}],
        },
        "status": {
            "conditions": [
                {"type": "QuotaReserved", "status": "True", "reason": "r", "lastTransitionTime": at}
            ],
            "admission": {
                "clusterQueue": "cq",
                "podSetAssignments": [
                    {"name": "main", "count": 2, "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "2"}}
                ],
            },
        },
    }


def test_equal_admissions_and_times_read_once_still_checked_per_workload() -> None:
    """workload_status.read_admission and common.parse_time_ns keep what they read
    by value: equal admissions give equal, separate objects; an admission equal
    to a valid one but for pod sets it does not fit is refused with its own error."""
    a = loader.parse_workload(_admitted_workload("a", "main", 2, "2024-01-01T00:00:05Z"))
    b = loader.parse_workload(_admitted_workload("b", "main", 2, "2024-01-01T00:00:05Z"))
    assert a.admission == b.admission and a.admission is not b.admission
    assert a.admission is not None and b.admission is not None
    assert a.admission.pod_set_assignments[0].flavors is not b.admission.pod_set_assignments[0].flavors
    assert a.admission_ns == b.admission_ns == a.creation_ns + 5 * 10**9
    with pytest.raises(
        InputError, match=r'Workload/ns/c.*status\.admission\.podSetAssignments\[0\]\.name.*"main"'
    ):
        loader.parse_workload(_admitted_workload("c", "other", 2, "2024-01-01T00:00:05Z"))
    # orjson writes NaN as null: a NaN count is not taken for a null one read before
    unset = _admitted_workload("e", "main", 2, "2024-01-01T00:00:05Z")
    unset["status"]["admission"]["podSetAssignments"][0]["count"] = None
    assert loader.parse_workload(unset).admission == a.admission
    nan = _admitted_workload("f", "main", 2, "2024-01-01T00:00:05Z")
    nan["status"]["admission"]["podSetAssignments"][0]["count"] = float("nan")
    with pytest.raises(InputError, match=r"Workload/ns/f.*podSetAssignments\[0\]\.count"):
        loader.parse_workload(nan)
    bad_time = _admitted_workload("d", "main", 2, "2024-01-01T00:00:05Z")
    bad_time["status"]["conditions"][0]["lastTransitionTime"] = "2024-13-01T00:00:05Z"
    with pytest.raises(InputError, match=r"Workload/ns/d.*QuotaReserved.*lastTransitionTime"):
        loader.parse_workload(bad_time)


@pytest.mark.parametrize(
    ("text", "field", "want"),
    [
        # found by the fuzzer (tests/fuzz): Python's type names in a user's error
        (
            '{"apiVersion": "v1", "kind": "List", "items": [null]}',
            "List items[0]",
            "Invalid value: null: must be of type object",
        ),
        (
            '{"apiVersion": "v1", "kind": "List", "items": [[1]]}',
            "List items[0]",
            "Invalid value: array: must be of type object",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n"
            "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
            "      resources:\n      - {name: cpu, nominalQuota: [1]}\n",
            "ClusterQueue/cq spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
            "Invalid value: array: expected a quantity (string or number), got array",
        ),
    ],
)
def test_type_errors_name_json_types(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, field: str, want: str
) -> None:
    from kueue_fast.commands.cli import main

    path = tmp_path / "in.json"
    path.write_text(text)
    assert main(["schedule", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{field}: {want}" in err, err
    for python_word in ("NoneType", "list", "dict"):
        assert python_word not in err.split(": ", 1)[1].replace("List ", ""), err


# Found by the fuzzer (tests/fuzz): times past 2262 (int64 nanoseconds) made
# `schedule` exit 1 ("integer out of the int64 range") or crash in the engine's
# clock; Go's zero time (year 1) as well. Refused with the field named.
_RETRY_WORKLOAD = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: retry
  creationTimestamp: '{created}'
spec:
  podSets:
  - name: main
    count: 2
    template:
      spec:
        containers:
        - name: c
          resources:
            requests:
              cpu: '1'
status:
  admission:
    clusterQueue: cq
  conditions:
  - type: QuotaReserved
    status: 'True'
    reason: QuotaReserved
    message: Quota reserved in ClusterQueue cq
    lastTransitionTime: '{transition}'
"""


@pytest.mark.parametrize("engine", ["native", "reference"])
@pytest.mark.parametrize(
    ("created", "transition", "field"),
    [
        ("2262-04-12T00:00:00Z", "2026-01-01T00:00:00Z", "metadata.creationTimestamp"),
        ("2262-04-11T23:47:16Z", "2026-01-01T00:00:00Z", "metadata.creationTimestamp"),
        ("9999-12-31T23:59:59Z", "2026-01-01T00:00:00Z", "metadata.creationTimestamp"),
        ("0001-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "metadata.creationTimestamp"),
        (
            "2026-01-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "status.conditions[QuotaReserved].lastTransitionTime",
        ),
        (
            "2026-01-01T00:00:00Z",
            "0001-01-01T00:00:00Z",
            "status.conditions[QuotaReserved].lastTransitionTime",
        ),
    ],
)
def test_times_beyond_what_int64_nanoseconds_hold_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, created: str, transition: str, field: str
) -> None:
    from kueue_fast.commands.cli import main

    path = tmp_path / "in.yaml"
    path.write_text(_RETRY_WORKLOAD.format(created=created, transition=transition))
    assert main(["schedule", str(path), "--engine", engine, "--cycles", "2"]) == 2
    err = capsys.readouterr().err
    assert f"Workload/default/retry {field}: Invalid value:" in err and "1900" in err and "2200" in err, err


def test_times_within_the_range_are_read() -> None:
    assert loader.common.parse_time_ns("1900-01-01T00:00:00Z", "o", "f") == -2208988800 * 10**9
    assert loader.common.parse_time_ns("2199-12-31T23:59:59.999999999Z", "o", "f") == 7258118399999999999


@pytest.mark.parametrize("engine", ["native", "reference"])
def test_an_admitted_conditions_time_is_checked_when_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    """Found by the fuzzer (tests/fuzz): with waitForPodsReady, the Admitted
    condition's lastTransitionTime was read only during the cycles, so a bad
    one was an error without its file, after the warnings."""
    from kueue_fast.commands.cli import main

    path = tmp_path / "in.yaml"
    path.write_text(
        "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\nwaitForPodsReady: {enable: true}\n---\n"
        f"apiVersion: {B2}\nkind: ResourceFlavor\nmetadata: {{name: default}}\n---\n"
        f"apiVersion: {B2}\nkind: ClusterQueue\nmetadata: {{name: cq}}\nspec:\n  namespaceSelector: {{}}\n"
        "  resourceGroups:\n  - coveredResources: [cpu]\n"
        "    flavors: [{name: default, resources: [{name: cpu, nominalQuota: '4'}]}]\n---\n"
        f"apiVersion: {B2}\nkind: LocalQueue\nmetadata: {{name: lq, namespace: default}}\n"
        "spec: {clusterQueue: cq}\n---\n"
        f"apiVersion: {B2}\nkind: Workload\nmetadata: {{name: w, namespace: default}}\nspec:\n"
        "  queueName: lq\n  podSets:\n  - name: main\n    count: 1\n    template:\n      spec:\n"
        "        containers: [{name: c, resources: {requests: {cpu: '2'}}}]\nstatus:\n  admission:\n"
        "    clusterQueue: cq\n    podSetAssignments:\n    - {name: main, count: 1, flavors: {cpu: default}, "
        "resourceUsage: {cpu: '2'}}\n  conditions:\n"
        "  - {type: QuotaReserved, status: 'True', reason: QuotaReserved, message: '', "
        "lastTransitionTime: '2026-01-01T00:00:05Z'}\n"
        "  - {type: Admitted, status: 'True', reason: Admitted, message: '', lastTransitionTime: '2026-01-01T00:00:00'}\n"
    )
    assert main(["schedule", str(path), "--engine", engine]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: {path} (document 5): Workload/default/w status.conditions[Admitted].lastTransitionTime"
    )
    assert err.count("\n") == 1, err
