"""Admission checks (Kueue's two-phase admission): what each input state
yields after N cycles, in both engines (kueue_fast/cluster/admission_checks.py,
cluster/cluster.py). Kueue paths are in kubernetes-sigs/kueue at commit ff69552e."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from kueue_fast import Cluster
from kueue_fast.api.model import AdmissionCheckState, ClusterQueue, FlavorQuotas, ResourceGroup
from kueue_fast.cluster import admission_checks as ac
from kueue_fast.commands.schedule_output import decision_json, to_json, to_yaml

B2 = "kueue.x-k8s.io/v1beta2"
T0 = "2024-01-01T00:00:00Z"
ENGINES = ("native", "reference")


PROVISIONING = "kueue.x-k8s.io/provisioning-request"


def check(name: str, active: bool = True, controller: str = PROVISIONING) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": B2,
        "kind": "AdmissionCheck",
        "metadata": {"name": name},
        "spec": {"controllerName": controller},
    }
    if active:
        active_cond = {
            "type": "Active",
            "status": "True",
            "reason": "Active",
            "message": "",
            "lastTransitionTime": T0,
        }
        obj["status"] = {"conditions": [active_cond]}
    return obj


def queues(
    strategy: list[dict[str, Any]] | None = None, on_demand: int = 2, spot: int = 10, **cq_spec: Any
) -> list[dict[str, Any]]:
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {
                "coveredResources": ["cpu"],
                "flavors": [
                    {"name": "on-demand", "resources": [{"name": "cpu", "nominalQuota": on_demand}]},
                    {"name": "spot", "resources": [{"name": "cpu", "nominalQuota": spot}]},
                ],
            }
        ],
        **cq_spec,
    }
    if strategy is not None:
        spec["admissionChecksStrategy"] = {"admissionChecks": strategy}
    return [
        {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "on-demand"}},
        {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "spot"}},
        {"apiVersion": B2, "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": spec},
        {
            "apiVersion": B2,
            "kind": "LocalQueue",
            "metadata": {"name": "lq", "namespace": "ns"},
            "spec": {"clusterQueue": "cq"},
        },
    ]


def wl(
    name: str,
    cpus: int,
    *,
    second: int = 1,
    flavor: str | None = None,
    checks: list[tuple[str, str]] | None = None,
    admitted: bool = False,
    priority: int | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {"name": name, "namespace": "ns", "creationTimestamp": f"2024-01-01T00:00:{second:02d}Z"},
        "spec": {
            "queueName": "lq",
            "podSets": [
                {
                    "name": "main",
                    "count": cpus,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]}
                    },
                }
            ],
        },
    }
    if priority is not None:
        obj["spec"]["priority"] = priority
    status: dict[str, Any] = {}
    if flavor is not None:
        status["admission"] = {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {
                    "name": "main",
                    "flavors": {"cpu": flavor},
                    "resourceUsage": {"cpu": str(cpus)},
                    "count": cpus,
                }
            ],
        }
        status["conditions"] = [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "QuotaReserved",
                "message": "",
                "lastTransitionTime": T0,
            }
        ]
        if admitted:
            status["conditions"].append(
                {
                    "type": "Admitted",
                    "status": "True",
                    "reason": "Admitted",
                    "message": "",
                    "lastTransitionTime": T0,
                }
            )
    if checks:
        status["admissionChecks"] = [
            {"name": n, "state": s, "message": "", "lastTransitionTime": T0} for n, s in checks
        ]
    if status:
        obj["status"] = status
    return obj


def run(objs: list[dict[str, Any]], engine: str, cycles: int = 1) -> Cluster:
    c = Cluster.from_objects(objs, engine)
    c.run(cycles)
    return c


def state(c: Cluster, key: str) -> str:
    return c.decision(f"ns/{key}").state


ALL_FLAVORS = [{"name": "prov"}]


# --- the functions -------------------------------------------------------------------------------


def _cq(checks: dict[str, list[str]]) -> ClusterQueue:
    cq = ClusterQueue("cq", [ResourceGroup(["cpu"], [FlavorQuotas("a", []), FlavorQuotas("b", [])])])
    cq.admission_checks = list(checks)
    cq.admission_check_flavors = {n: f for n, f in checks.items() if f}
    return cq


def test_checks_apply_by_assigned_flavor() -> None:
    # workload.go admissionChecksForAdmission / AdmissionChecksForWorkload
    cq = _cq({"z-all": [], "only-b": ["b"], "both": ["a", "b"]})
    assert ac.checks_for_flavors(cq, {"a"}) == ["both", "z-all"]
    assert ac.checks_for_flavors(cq, {"b"}) == ["both", "only-b", "z-all"]
    assert ac.checks_for_pending(cq) == ["both", "z-all"]


def test_sync_adds_pending_drops_the_rest_and_sorts() -> None:
    # workload_controller.go syncAdmissionCheckConditions
    got = ac.sync_states([AdmissionCheckState("old", "Ready"), AdmissionCheckState("b", "Ready")], ["b", "a"])
    assert got == [AdmissionCheckState("a", "Pending"), AdmissionCheckState("b", "Ready")]


def test_eviction_resets_states_and_counts_retries() -> None:
    # evict.go resetChecksOnEviction
    got = ac.reset_on_eviction(
        [
            AdmissionCheckState("a", "Retry", "x", 1),
            AdmissionCheckState("b", "Pending", "m"),
            AdmissionCheckState("c", "Ready"),
        ]
    )
    reset = "Reset to Pending after eviction. Previously: "
    assert got == [
        AdmissionCheckState("a", "Pending", reset + "Retry", 2),
        AdmissionCheckState("b", "Pending", "m"),
        AdmissionCheckState("c", "Pending", reset + "Ready"),
    ]


def test_eviction_drops_the_retry_count_of_a_state_not_in_retry() -> None:
    # evict.go resetChecksOnEviction: RetryCount is set only for a Retry (nil, i.e. 0, otherwise)
    states = [AdmissionCheckState("a", "Ready", "", 3), AdmissionCheckState("b", "Rejected", "", 1)]
    got = ac.reset_on_eviction(states)
    assert [s.retry_count for s in got] == [0, 0]


def test_check_eviction_messages() -> None:
    # workload_controller.go reconcileCheckBasedEviction, buildAdmissionChecksMessage
    retry = [AdmissionCheckState("b", "Retry"), AdmissionCheckState("a", "Retry", "busy")]
    assert ac.check_eviction(retry) == (
        "AdmissionCheck",
        'Evicted due to AdmissionChecks in Retry state: "a" (busy); "b"',
        True,
    )
    both = [*retry, AdmissionCheckState("c", "Rejected")]
    assert ac.check_eviction(both) == (
        "DeactivatedDueToAdmissionCheck",
        'The workload is deactivated due to AdmissionCheck in Rejected state: "c"',
        False,
    )
    assert ac.check_eviction([AdmissionCheckState("a", "Ready")]) is None


# --- ClusterQueue readiness ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "objs, reason, message",
    [
        ([], "AdmissionCheckNotFound", "references missing AdmissionCheck(s): prov"),
        (
            [check("prov", active=False)],
            "AdmissionCheckInactive",
            "references inactive AdmissionCheck(s): prov",
        ),
    ],
)
def test_a_missing_or_inactive_check_makes_the_cluster_queue_inactive(
    objs: list[dict[str, Any]], reason: str, message: str
) -> None:
    # cache/scheduler/clusterqueue.go updateWithAdmissionChecks, inactiveReason
    c = run([*queues(ALL_FLAVORS), *objs, wl("a", 1)], "reference")
    d = c.decision("ns/a")
    assert (d.state, d.reason, d.message) == ("pending", "Suspended", "ClusterQueue cq is inactive")
    from kueue_fast.cluster.queue_readiness import cluster_queue_readiness

    r = cluster_queue_readiness(c.state.cluster_queues["cq"], c.state)
    assert (r.active, r.reason, r.message) == (False, reason, f"Can't admit new workloads: {message}.")


def test_multikueue_checks_have_extra_rules() -> None:
    # clusterqueue.go: two MultiKueue checks, one per flavor, or with a ProvisioningRequest one
    mk = "kueue.x-k8s.io/multikueue"
    objs = [
        *queues([{"name": "mk1", "onFlavors": ["spot"]}, {"name": "mk2"}, {"name": "prov"}]),
        check("mk1", controller=mk),
        check("mk2", controller=mk),
        check("prov"),
    ]
    c = Cluster.from_objects(objs, "reference")
    from kueue_fast.cluster.queue_readiness import cluster_queue_readiness

    r = cluster_queue_readiness(c.state.cluster_queues["cq"], c.state)
    assert (r.active, r.reason) == (False, "MultipleMultiKueueAdmissionChecks")
    assert r.message == (
        "Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
        "found: mk1,mk2, Cannot specify MultiKueue AdmissionCheck per flavor, found: mk1, "
        "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: mk1,mk2, prov."
    )


# --- reservation and admission ---------------------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
def test_a_workload_is_reserved_until_its_checks_are_ready(engine: str) -> None:
    # scheduler.go prepareWorkload: QuotaReserved; Admitted only with every check Ready
    c = run([*queues(ALL_FLAVORS), check("prov"), wl("a", 1)], engine)
    out = decision_json(c.decision("ns/a"))
    assert out == {
        "namespace": "ns",
        "name": "a",
        "state": "reserved",
        "clusterQueue": "cq",
        "podSets": [{"name": "main", "count": 1, "flavors": {"cpu": "on-demand"}}],
        "reason": "UnsatisfiedAdmissionChecks",
        "message": "The workload has not all checks ready",
        "admissionChecks": [{"name": "prov", "state": "Pending"}],
    }
    c.set_check_state("ns/a", "prov", "Ready")  # the check's controller; SyncAdmittedCondition
    assert state(c, "a") == "admitted"
    assert c.decision("ns/a").admission_checks == [AdmissionCheckState("prov", "Ready")]


@pytest.mark.parametrize("engine", ENGINES)
def test_checks_apply_only_on_their_flavors(engine: str) -> None:
    # onFlavors: a workload on on-demand needs no check; one on spot does
    objs = [
        *queues([{"name": "prov", "onFlavors": ["spot"]}]),
        check("prov"),
        wl("small", 2, second=1),
        wl("big", 3, second=2),
    ]
    c = run(objs, engine, cycles=2)
    assert (state(c, "small"), state(c, "big")) == ("admitted", "reserved")
    assert c.decision("ns/big").pod_sets[0].flavors == {"cpu": "spot"}


@pytest.mark.parametrize("engine", ENGINES)
def test_input_workloads_with_quota(engine: str) -> None:
    # all Ready -> admitted; some Pending -> reserved (holds quota); Admitted=True stays admitted
    # (workload_controller.go syncs Admitted only for workloads not admitted); no status for a
    # check -> Pending (syncAdmissionCheckConditions)
    objs = [
        *queues(ALL_FLAVORS, spot=0, on_demand=4),
        check("prov"),
        wl("ready", 1, flavor="on-demand", checks=[("prov", "Ready")]),
        wl("waiting", 1, flavor="on-demand", checks=[("prov", "Pending")]),
        wl("bare", 1, flavor="on-demand"),
        wl("kept", 1, flavor="on-demand", checks=[("prov", "Pending")], admitted=True),
        wl("new", 1, second=9),
    ]
    c = run(objs, engine)
    got = {k: state(c, k) for k in ("ready", "waiting", "bare", "kept", "new")}
    assert got == {
        "ready": "admitted",
        "waiting": "reserved",
        "bare": "reserved",
        "kept": "admitted",
        "new": "pending",
    }
    assert c.decision("ns/new").reason == "WaitingForQuota"  # reserved ones hold their quota


@pytest.mark.parametrize("engine", ENGINES)
def test_retry_evicts_at_the_end_of_the_cycle_and_requeues_by_the_eviction_time(engine: str) -> None:
    # workload_controller.go reconcileCheckBasedEviction (Retry -> Evict, reason AdmissionCheck);
    # evict.go resetChecksOnEviction; workload.go GetQueueOrderTimestamp (Evicted by AdmissionCheck)
    objs = [
        *queues(ALL_FLAVORS, on_demand=2, spot=0),
        check("prov"),
        wl("retry", 2, second=1, flavor="on-demand", checks=[("prov", "Retry")]),
        wl("later", 2, second=5),
    ]
    c = run(objs, engine)
    d = c.decision("ns/retry")
    assert (d.state, d.reason, d.message) == (
        "evicted",
        "AdmissionCheck",
        'Evicted due to AdmissionCheck in Retry state: "prov"',
    )
    assert state(c, "later") == "pending"  # the quota was held during the cycle
    assert c.check_states("ns/retry") == [
        AdmissionCheckState("prov", "Pending", "Reset to Pending after eviction. Previously: Retry", 1)
    ]
    c.run(1)
    # created first, but it queues by its eviction time: the later workload goes first
    assert (state(c, "later"), state(c, "retry")) == ("reserved", "pending")


def test_retry_time_is_the_latest_retry_transition_plus_its_requeue_after_seconds() -> None:
    # admissionchecks.go GetMaxRetryTime: Retry states with requeueAfterSeconds and a lastTransitionTime
    s = 1_000_000_000
    states = [
        AdmissionCheckState("a", "Retry", requeue_after_s=10, last_transition_ns=100 * s),
        AdmissionCheckState("b", "Retry", requeue_after_s=5, last_transition_ns=120 * s),
        AdmissionCheckState("c", "Ready", requeue_after_s=60, last_transition_ns=120 * s),
        AdmissionCheckState("d", "Retry", last_transition_ns=130 * s),
    ]
    assert ac.retry_time_ns(states) == 125 * s
    assert ac.retry_time_ns(states[2:]) is None


def test_eviction_keeps_requeue_after_seconds() -> None:
    # evict.go resetChecksOnEviction copies RequeueAfterSeconds into the Pending state
    got = ac.reset_on_eviction([AdmissionCheckState("a", "Retry", requeue_after_s=30)], 7)
    assert (got[0].state, got[0].requeue_after_s, got[0].last_transition_ns) == ("Pending", 30, 7)


def _retry_after(seconds: int, transition: str = T0) -> dict[str, Any]:
    obj = wl("retry", 2, second=1, flavor="on-demand", checks=[("prov", "Retry")])
    obj["status"]["admissionChecks"][0].update(requeueAfterSeconds=seconds, lastTransitionTime=transition)
    return obj


@pytest.mark.parametrize("engine", ENGINES)
def test_retry_with_requeue_after_seconds_holds_the_workload_until_requeue_at(engine: str) -> None:
    # workload_controller.go Reconcile: NeedsRequeueAtUpdate sets requeueState.requeueAt to the check's
    # lastTransitionTime + requeueAfterSeconds (SetRequeueState, count unchanged); Update does not queue
    # the evicted workload before it; Reconcile queues it once it passed
    c = run([*queues(ALL_FLAVORS), check("prov"), _retry_after(10)], engine)  # cycle 1 at 00:00:02
    assert state(c, "retry") == "evicted"
    requeue_at = c.state.workloads["ns/retry"].creation_ns - 1_000_000_000 + 10 * 1_000_000_000
    assert c.requeue_state("ns/retry") == (0, requeue_at)
    c.run(7)  # 00:00:03 .. 00:00:09
    d = c.decision("ns/retry")
    assert (d.state, d.reason) == ("pending", "Pending")
    assert d.message == 'Evicted due to AdmissionCheck in Retry state: "prov"'
    assert d.admission_checks[0].requeue_after_s == 10
    c.run(1)  # 00:00:10: the backoff ended
    assert state(c, "retry") == "reserved"


def test_yaml_of_a_workload_in_a_retry_backoff() -> None:
    # SetRequeueState(wl, requeueAt, false): requeueAt without a count; resetChecksOnEviction keeps
    # requeueAfterSeconds and stamps the eviction time
    c = run([*queues(ALL_FLAVORS), check("prov"), _retry_after(10)], "native")
    st = next(d for d in yaml.safe_load_all(to_yaml(c)) if d["kind"] == "Workload")["status"]
    assert st["requeueState"] == {"requeueAt": "2024-01-01T00:00:10Z"}
    assert st["admissionChecks"] == [
        {
            "name": "prov",
            "state": "Pending",
            "message": "Reset to Pending after eviction. Previously: Retry",
            "lastTransitionTime": "2024-01-01T00:00:02Z",
            "requeueAfterSeconds": 10,
            "retryCount": 1,
        }
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_retry_time_already_past_requeues_at_once(engine: str) -> None:
    # NeedsRequeueAtUpdate: a retry time not after now sets nothing
    c = run([*queues(ALL_FLAVORS), check("prov"), _retry_after(1)], engine)
    assert c.requeue_state("ns/retry") == (0, None)
    c.run(1)
    assert state(c, "retry") == "reserved"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_held_retry_queues_by_its_eviction_time_under_creation_requeuing(engine: str) -> None:
    # workload.go GetQueueOrderTimestamp: Evicted by AdmissionCheck orders by the eviction time,
    # whatever waitForPodsReady.requeuingStrategy.timestamp says
    conf = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "waitForPodsReady": {"timeout": "600s", "requeuingStrategy": {"timestamp": "Creation"}},
    }
    c = run(
        [
            conf,
            *queues(ALL_FLAVORS, on_demand=2, spot=0),
            check("prov"),
            _retry_after(10),
            wl("later", 2, second=5),
        ],
        engine,
    )  # cycle 1 at 00:00:06, requeueAt 00:00:10
    c.run(4)  # 00:00:10: retry queues again, by its eviction time: after "later"
    assert (state(c, "later"), state(c, "retry")) == ("reserved", "pending")
    spec = c.engine.spec(c.wid_of("ns/retry"))
    assert spec.queue_ts == c.start_ns + 1_000_000_000


@pytest.mark.parametrize("engine", ENGINES)
def test_set_check_state_retry_backoff_waits_for_the_release(engine: str) -> None:
    # the controller's flow: the eviction holds quota until the job stopped (release_eviction), then the
    # workload waits out the backoff counted from the Retry's transition (the API call's clock)
    objs = [*queues(ALL_FLAVORS), check("prov"), wl("a", 1)]
    c = Cluster.from_objects(objs, engine, release_evictions=False)
    c.run(1)
    assert state(c, "a") == "reserved"
    c.set_check_state("ns/a", "prov", "Retry", "busy", requeue_after_s=30)
    retried_ns = c.now_ns()
    c.run(1)
    assert state(c, "a") == "evicted"
    assert c.requeue_state("ns/a") == (0, retried_ns + 30 * 1_000_000_000)
    c.release_eviction("ns/a")
    c.run(28)
    assert state(c, "a") == "pending"
    c.run(1)
    assert state(c, "a") == "reserved"


@pytest.mark.parametrize("engine", ENGINES)
def test_readmission_restores_the_creation_time_for_ordering(engine: str) -> None:
    # workload.go SetQuotaReservation turns Evicted False: GetQueueOrderTimestamp is the creation time again
    objs = [
        *queues(ALL_FLAVORS, on_demand=2, spot=0, preemption={"withinClusterQueue": "LowerPriority"}),
        check("prov"),
        wl("retry", 2, second=1, flavor="on-demand", checks=[("prov", "Retry")]),
        wl("other", 2, second=5),
    ]
    c = run(objs, engine, cycles=1)
    c.run(1)  # "other" (earlier in the queue now) is reserved; retry waits
    c.remove_workload("ns/other")
    c.run(1)
    assert state(c, "retry") == "reserved"
    spec = c.engine.spec(c.wid_of("ns/retry"))
    assert spec.queue_ts == c.state.workloads["ns/retry"].creation_ns


@pytest.mark.parametrize("engine", ENGINES)
def test_rejected_deactivates_the_workload(engine: str) -> None:
    # reconcileCheckBasedEviction: Rejected -> DeactivationTarget -> spec.active=false -> Evict with
    # reason DeactivatedDueToAdmissionCheck; a deactivated workload never queues again
    objs = [
        *queues(ALL_FLAVORS),
        check("prov"),
        wl("rejected", 2, flavor="on-demand", checks=[("prov", "Rejected")]),
    ]
    c = run(objs, engine)
    d = c.decision("ns/rejected")
    assert (d.state, d.reason) == ("evicted", "DeactivatedDueToAdmissionCheck")
    assert d.message == 'The workload is deactivated due to AdmissionCheck in Rejected state: "prov"'
    assert c.run_until_stable() == 1
    d = c.decision("ns/rejected")
    assert (d.state, d.reason, d.message) == ("pending", "Deactivated", "The workload is deactivated")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_reserved_workload_is_a_preemption_candidate(engine: str) -> None:
    # Kueue's cache holds every workload with quota reserved (clusterqueue.go addOrUpdateWorkload):
    # preemption.go findCandidates sees reserved workloads like admitted ones
    objs = [
        *queues(ALL_FLAVORS, on_demand=2, spot=0, preemption={"withinClusterQueue": "LowerPriority"}),
        check("prov"),
        wl("low", 2, flavor="on-demand", checks=[("prov", "Pending")], priority=0),
        wl("high", 2, second=5, priority=10),
    ]
    c = run(objs, engine)
    assert (state(c, "low"), c.decision("ns/low").preempted_by) == ("evicted", "ns/high")
    c.run(1)
    assert state(c, "high") == "reserved"


@pytest.mark.parametrize("engine", ENGINES)
def test_a_check_added_later_reaches_reserved_workloads_only(engine: str) -> None:
    # a pending workload's input state for a check that no longer applies to every flavor is dropped
    # before its reservation (workload.go AdmissionChecksForWorkload without an admission)
    objs = [
        *queues([{"name": "prov", "onFlavors": ["on-demand"]}]),
        check("prov"),
        wl("a", 1, checks=[("prov", "Ready")]),
    ]
    c = run(objs, engine)
    assert state(c, "a") == "reserved"


def test_json_and_yaml_of_a_reserved_workload() -> None:
    c = run([*queues(ALL_FLAVORS), check("prov"), wl("a", 1)], "native")
    doc = json.loads(to_json(c))
    assert doc["workloads"][0]["state"] == "reserved"
    import yaml

    docs = list(yaml.safe_load_all(to_yaml(c)))
    w = next(d for d in docs if d["kind"] == "Workload")
    conds = {x["type"]: (x["status"], x["reason"]) for x in w["status"]["conditions"]}
    assert conds == {
        "QuotaReserved": ("True", "QuotaReserved"),
        "Admitted": ("False", "UnsatisfiedAdmissionChecks"),
    }
    assert [(x["name"], x["state"]) for x in w["status"]["admissionChecks"]] == [("prov", "Pending")]
    cq = next(d for d in docs if d["kind"] == "ClusterQueue")
    assert (cq["status"]["reservingWorkloads"], cq["status"]["admittedWorkloads"]) == (1, 0)


def test_the_legacy_reason_without_unadmitted_workloads_observability() -> None:
    cfg = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "featureGates": {"UnadmittedWorkloadsObservability": False},
    }
    c = run([*queues(ALL_FLAVORS), check("prov"), wl("a", 1), cfg], "reference")
    assert c.decision("ns/a").reason == "UnsatisfiedChecks"


def test_an_input_workload_given_deactivated_waits_as_deactivated() -> None:
    # workload_controller.go resolveGranularUnadmittedQuotaReservedCondition: !IsActive -> Deactivated
    obj = wl("off", 1)
    obj["spec"]["active"] = False
    c = run([*queues(), obj], "reference")
    d = c.decision("ns/off")
    assert (d.state, d.reason, d.message) == ("pending", "Deactivated", "The workload is deactivated")


def test_the_explanation_of_a_workload_deactivated_by_a_check() -> None:
    from kueue_fast.cluster.explain import ClusterView

    objs = [
        *queues(ALL_FLAVORS),
        check("prov"),
        wl("rejected", 2, flavor="on-demand", checks=[("prov", "Rejected")]),
    ]
    c = run(objs, "reference", cycles=2)
    e = ClusterView(c).explain(c.decision("ns/rejected"))
    assert e is not None and e.summary == "The workload is deactivated: it is in no ClusterQueue's queue"


@pytest.mark.parametrize("engine", ENGINES)
def test_removing_the_checks_of_a_cluster_queue_admits_its_reserved_workloads(engine: str) -> None:
    # workload_controller.go syncAdmissionCheckConditions drops the states, SyncAdmittedCondition admits
    c = run([*queues(ALL_FLAVORS), check("prov"), wl("a", 1)], engine)
    assert state(c, "a") == "reserved"
    new = c.state
    new.cluster_queues["cq"].admission_checks = []
    c.reconfigure(new)
    assert state(c, "a") == "admitted" and c.check_states("ns/a") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_bulk_counts_see_reserved_and_deactivated_workloads(engine: str) -> None:
    # --stats and -o summary count without making every decision: the states
    # kept in the Cluster (reserved, deactivated) must count as decisions() shows them
    from collections import Counter

    from kueue_fast.cluster.explain import ClusterView
    from kueue_fast.commands.schedule_output import NONE, _queued_in

    objs = [
        *queues(ALL_FLAVORS),
        check("prov"),
        wl("new", 2, second=3),
        wl("other", 1, second=4),
        wl("rejected", 2, flavor="on-demand", checks=[("prov", "Rejected")]),
    ]
    c = run(objs, engine, cycles=2)
    decisions = c.decisions()
    assert {d.state for d in decisions} == {"reserved", "pending"}
    assert c.state_counts() == dict(Counter(d.state for d in decisions))
    view = ClusterView(c)
    want = Counter((_queued_in(view, d), d.state) for d in decisions)
    got = {(q if q is not None else NONE, s): n for (q, s), n in c.queue_state_counts().items()}
    assert got == dict(want)


def test_the_controllers_eviction_counts_retries_as_kueue() -> None:
    # evict.go resetChecksOnEviction: retryCount only for a Retry (one more); nil for any other state;
    # requeueAfterSeconds kept
    from kueue_fast.cluster import status_writer as S

    wl_obj = {
        "metadata": {"name": "a", "namespace": "ns"},
        "status": {
            "admissionChecks": [
                {"name": "a", "state": "Ready", "message": "", "lastTransitionTime": T0, "retryCount": 2},
                {
                    "name": "b",
                    "state": "Retry",
                    "message": "",
                    "lastTransitionTime": T0,
                    "retryCount": 1,
                    "requeueAfterSeconds": 30,
                },
            ]
        },
    }
    st = S.evicted_status(wl_obj, "AdmissionCheck", "m", None, 0)
    reset, t = "Reset to Pending after eviction. Previously: ", "1970-01-01T00:00:00Z"
    assert st["admissionChecks"] == [
        {"name": "a", "state": "Pending", "message": reset + "Ready", "lastTransitionTime": t},
        {
            "name": "b",
            "state": "Pending",
            "message": reset + "Retry",
            "lastTransitionTime": t,
            "retryCount": 2,
            "requeueAfterSeconds": 30,
        },
    ]
