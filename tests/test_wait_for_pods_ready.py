"""waitForPodsReady offline: blockAdmission, the PodsReady timeout, the
requeueing backoff and deactivation, in both engines (the clock advances one
second per cycle; the PodsReady condition comes from the input Workload)."""

from __future__ import annotations

from typing import Any

import pytest

from kueue_fast import Cluster
from kueue_fast.api.errors import ValidationError
from kueue_fast.loader import build_state, parse_configuration

ENGINES = ["native", "reference"]
T0 = "2026-01-01T00:00:00Z"


def config(wait: dict[str, Any] | None, api: str = "config.kueue.x-k8s.io/v1beta2") -> dict[str, Any]:
    doc: dict[str, Any] = {"apiVersion": api, "kind": "Configuration"}
    if wait is not None:
        doc["waitForPodsReady"] = wait
    return doc


def queues(*cqs: tuple[str, str]) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = [
        {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": "default"}}
    ]
    for name, cpu in cqs:
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "ClusterQueue",
                "metadata": {"name": name},
                "spec": {
                    "namespaceSelector": {},
                    "resourceGroups": [
                        {
                            "coveredResources": ["cpu"],
                            "flavors": [
                                {"name": "default", "resources": [{"name": "cpu", "nominalQuota": cpu}]}
                            ],
                        }
                    ],
                },
            }
        )
        objs.append(
            {
                "apiVersion": "kueue.x-k8s.io/v1beta2",
                "kind": "LocalQueue",
                "metadata": {"namespace": "ns", "name": name},
                "spec": {"clusterQueue": name},
            }
        )
    return objs


def workload(
    name: str,
    queue: str,
    cpu: str = "1",
    *,
    created: str = T0,
    admitted_at: str | None = None,
    pods_ready: tuple[str, str, str] | None = None,
    requeue_state: dict[str, Any] | None = None,
) -> dict[str, Any]:
    wl: dict[str, Any] = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "Workload",
        "metadata": {"namespace": "ns", "name": name, "creationTimestamp": created},
        "spec": {
            "queueName": queue,
            "podSets": [
                {
                    "name": "main",
                    "count": 1,
                    "template": {
                        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]}
                    },
                }
            ],
        },
    }
    status: dict[str, Any] = {}
    if admitted_at is not None:
        status["admission"] = {
            "clusterQueue": queue,
            "podSetAssignments": [
                {"name": "main", "count": 1, "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": cpu}}
            ],
        }
        status["conditions"] = [
            {"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": admitted_at}
            for t in ("QuotaReserved", "Admitted")
        ]
    if pods_ready is not None:
        st, reason, at = pods_ready
        status.setdefault("conditions", []).append(
            {"type": "PodsReady", "status": st, "reason": reason, "message": "", "lastTransitionTime": at}
        )
    if requeue_state is not None:
        status["requeueState"] = requeue_state
    if status:
        wl["status"] = status
    return wl


def states(cluster: Cluster) -> dict[str, tuple[str, str]]:
    return {d.name: (d.state, d.reason) for d in cluster.decisions()}


# --- blockAdmission (scheduler.go waitForPodsReadyIfNeeded, cache.go PodsReadyForAllAdmittedWorkloads) ---


@pytest.mark.parametrize("engine", ENGINES)
def test_block_admission_waits_for_an_admitted_workload_not_pods_ready(engine: str) -> None:
    objs = [
        config({"blockAdmission": True}),
        *queues(("a", "10"), ("b", "10")),
        workload("running", "a", admitted_at=T0, pods_ready=("False", "WaitForStart", T0)),
        workload("next", "b"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(3)
    d = cluster.decision("ns/next")
    assert (d.state, d.reason) == ("pending", "WaitingForPodsReady")
    assert d.message == "waiting for all admitted workloads to be in PodsReady condition"


@pytest.mark.parametrize("engine", ENGINES)
def test_block_admission_admits_one_then_waits_for_its_pods(engine: str) -> None:
    # "running" is PodsReady: "first" is admitted; offline its pods never start,
    # so "second" (another ClusterQueue, same cycle) waits from then on.
    objs = [
        config({"blockAdmission": True}),
        *queues(("a", "10"), ("b", "10")),
        workload("running", "a", admitted_at=T0, pods_ready=("True", "PodsReady", T0)),
        workload("first", "a", created="2026-01-01T00:00:01Z"),
        workload("second", "b", created="2026-01-01T00:00:02Z"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(1)
    assert states(cluster) == {
        "running": ("admitted", ""),
        "first": ("admitted", ""),
        "second": ("pending", "WaitingForPodsReady"),
    }
    assert cluster.run_until_stable() == 1  # blocked: nothing changes
    cluster.set_pods_ready("ns/first", True)
    cluster.run(1)
    assert states(cluster)["second"] == ("admitted", "")


@pytest.mark.parametrize("engine", ENGINES)
def test_without_block_admission_nothing_waits(engine: str) -> None:
    objs = [
        config({"blockAdmission": False}),
        *queues(("a", "10")),
        workload("running", "a", admitted_at=T0),
        workload("next", "a"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(1)
    assert states(cluster)["next"] == ("admitted", "")


# --- the timeout, the backoff, deactivation (workload_controller.go reconcileNotReadyTimeout) ---


@pytest.mark.parametrize("engine", ENGINES)
def test_timeout_evicts_then_backoff_requeues(engine: str) -> None:
    # admitted at T0, timeout 3s: the cycle at T0+3s evicts it (the clock starts
    # at T0, one second per cycle) and "other" gets the quota. requeueAt = T0+3s
    # + 2s (backoffBaseSeconds) plus Kueue's jitter: queued again at T0+6s,
    # when "other" (admitted at T0+3s) times out and frees the quota.
    objs = [
        config({"timeout": "3s", "requeuingStrategy": {"backoffBaseSeconds": 2}}),
        *queues(("a", "1")),
        workload("slow", "a", admitted_at=T0),
        workload("other", "a", created="2026-01-01T00:00:00Z"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    seen = []
    for _ in range(7):
        cluster.run(1)
        seen.append(states(cluster)["slow"])
    assert seen == [
        ("admitted", ""),
        ("admitted", ""),
        ("evicted", "PodsReadyTimeout"),  # T0+3s; "other" takes the quota in the same cycle
        ("pending", "Pending"),
        ("pending", "Pending"),
        ("admitted", ""),  # T0+6s: queued again as "other" times out in turn
        ("admitted", ""),
    ]
    assert states(cluster)["other"] == ("pending", "Pending")
    assert cluster.decision("ns/other").message == "Exceeded the PodsReady timeout ns/other"
    assert cluster.requeue_state("ns/slow") == (1, None)
    count, requeue_at = cluster.requeue_state("ns/other")
    assert count == 1 and requeue_at is not None


@pytest.mark.parametrize("engine", ENGINES)
def test_requeued_after_backoff_is_admitted_again_and_times_out_again(engine: str) -> None:
    objs = [
        config({"timeout": "2s", "requeuingStrategy": {"backoffBaseSeconds": 1, "backoffLimitCount": 1}}),
        *queues(("a", "1")),
        workload("slow", "a", admitted_at=T0),
    ]
    cluster = Cluster.from_objects(objs, engine)
    seen = [cluster.run(1) and states(cluster)["slow"] for _ in range(7)]
    assert seen == [
        ("admitted", ""),
        ("evicted", "PodsReadyTimeout"),  # T0+2s, requeueAt just after T0+3s
        ("pending", "Pending"),
        ("admitted", ""),  # T0+4s
        ("admitted", ""),
        ("evicted", "Deactivated"),  # T0+6s: a second timeout exceeds backoffLimitCount 1
        ("pending", "Deactivated"),  # workload_controller.go: QuotaReserved=False, reason Deactivated
    ]
    assert cluster.decision("ns/slow").message == "The workload is deactivated"


@pytest.mark.parametrize("engine", ENGINES)
def test_recovery_timeout_counts_from_the_pods_ready_transition(engine: str) -> None:
    objs = [
        config({"timeout": "100s", "recoveryTimeout": "2s"}),
        *queues(("a", "1")),
        workload(
            "failing", "a", admitted_at=T0, pods_ready=("False", "WaitForRecovery", "2026-01-01T00:00:01Z")
        ),
        workload("fine", "a", admitted_at=T0, pods_ready=("True", "PodsReady", T0)),
    ]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(1)  # T0+2s: 1s since the failure
    assert states(cluster)["failing"] == ("admitted", "")
    cluster.run(1)  # T0+3s
    assert states(cluster)["failing"] == ("evicted", "PodsReadyTimeout")
    assert states(cluster)["fine"] == ("admitted", "")


@pytest.mark.parametrize("engine", ENGINES)
def test_a_pending_workload_waits_for_its_input_requeue_at(engine: str) -> None:
    objs = [
        *queues(("a", "1")),
        workload("backing-off", "a", requeue_state={"count": 1, "requeueAt": "2026-01-01T00:00:03Z"}),
        workload("clock", "a", admitted_at=T0, cpu="0"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    seen = [cluster.run(1) and states(cluster)["backing-off"][0] for _ in range(4)]
    assert seen == ["pending", "pending", "admitted", "admitted"]


def test_the_backoff_doubles_up_to_its_maximum() -> None:
    objs = [
        config({"timeout": "1s", "requeuingStrategy": {"backoffBaseSeconds": 1, "backoffMaxSeconds": 3}}),
        *queues(("a", "1")),
        workload("slow", "a", admitted_at=T0),
    ]
    cluster = Cluster.from_objects(objs, "reference")
    evictions = []
    for n in range(1, 30):
        cluster.run(1)
        if cluster.decision("ns/slow").state == "evicted":
            evictions.append(n)
    # evicted 1s after each admission; requeued after 1s, 2s, 3s, 3s... (+ jitter: the next second)
    assert evictions == [1, 4, 8, 13, 18, 23, 28]


# --- configuration ---


def test_defaults_by_api_version() -> None:
    v1 = parse_configuration(config({"enable": True}, "config.kueue.x-k8s.io/v1beta1")).wait_for_pods_ready
    assert v1 is not None
    assert (v1.timeout_s, v1.block_admission, v1.recovery_timeout_s) == (300.0, True, 300.0)
    assert parse_configuration(config({}, "config.kueue.x-k8s.io/v1beta1")).wait_for_pods_ready is None
    v2 = parse_configuration(config({})).wait_for_pods_ready
    assert v2 is not None and (v2.timeout_s, v2.block_admission) == (1800.0, False)
    assert (v2.requeuing_timestamp, v2.backoff_base_s, v2.backoff_max_s, v2.backoff_limit_count) == (
        "Eviction",
        60,
        3600,
        None,
    )
    off = config({})
    off["featureGates"] = {"DisableWaitForPodsReady": True}
    assert parse_configuration(off).wait_for_pods_ready is None


@pytest.mark.parametrize(
    ("wait", "words"),
    [
        ({"timeout": "-1s"}, "waitForPodsReady.timeout"),
        ({"requeuingStrategy": {"timestamp": "Now"}}, "waitForPodsReady.requeuingStrategy.timestamp"),
        (
            {"requeuingStrategy": {"backoffLimitCount": -1}},
            "waitForPodsReady.requeuingStrategy.backoffLimitCount",
        ),
        ({"enable": True}, "waitForPodsReady.enable"),
    ],
)
def test_invalid_wait_for_pods_ready(wait: dict[str, Any], words: str) -> None:
    # pkg/config/validation.go validateWaitForPodsReady
    with pytest.raises(ValidationError) as e:
        build_state([config(wait)])
    assert words in str(e.value)


# --- both engines alike on the new state -----------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_engines_agree_cycle_by_cycle(seed: int) -> None:
    """Random queues and workloads (fixed seeds), some admitted with or without
    PodsReady, timeouts, backoffs, a limit, blockAdmission on or off: both
    engines give the same decisions after every cycle."""
    import random

    rnd = random.Random(seed)
    wait: dict[str, Any] = {
        "timeout": f"{rnd.randint(2, 6)}s",
        "blockAdmission": rnd.random() < 0.5,
        "requeuingStrategy": {
            "backoffBaseSeconds": rnd.randint(1, 3),
            "backoffMaxSeconds": rnd.randint(3, 8),
            "timestamp": rnd.choice(["Eviction", "Creation"]),
        },
    }
    if rnd.random() < 0.5:
        wait["requeuingStrategy"]["backoffLimitCount"] = rnd.randint(0, 3)
    cqs = [(f"cq{i}", str(rnd.randint(2, 6))) for i in range(3)]
    objs = [config(wait), *queues(*cqs)]
    for i in range(12):
        q = rnd.choice(cqs)[0]
        created = f"2026-01-01T00:00:{rnd.randint(0, 9):02d}Z"
        admitted = rnd.random() < 0.3
        ready = None
        if admitted and rnd.random() < 0.6:
            reason = rnd.choice(["PodsReady", "WaitForStart", "WaitForRecovery"])
            ready = (rnd.choice(["True", "False"]), reason, created)
        objs.append(
            workload(
                f"w{i}",
                q,
                str(rnd.randint(1, 3)),
                created=created,
                admitted_at=created if admitted else None,
                pods_ready=ready,
            )
        )
    native, reference = Cluster.from_objects(objs, "native"), Cluster.from_objects(objs, "reference")
    seen: set[str] = set()
    for cycle in range(40):
        native.run(1)
        reference.run(1)
        if cycle == 7:  # the simulator's and the controller's pod start-up
            for c in (native, reference):
                for d in c.decisions():
                    if d.state == "admitted":
                        c.set_pods_ready(d.key, True)
        got = [(d.key, d.state, d.reason, d.message) for d in native.decisions()]
        want = [(d.key, d.state, d.reason, d.message) for d in reference.decisions()]
        assert got == want, f"cycle {cycle + 1}"
        seen.update(reason for _, _, reason, _ in got)
    # the run went through the new paths
    assert "PodsReadyTimeout" in seen or "WaitingForPodsReady" in seen


@pytest.mark.parametrize("engine", ENGINES)
def test_reconfigure_keeps_a_held_workload_held_and_a_ready_one_ready(engine: str) -> None:
    # the controller rebuilds the engine on a configuration change: a workload
    # in its backoff stays out of its queue, a PodsReady one stays ready
    objs = [
        config({"timeout": "2s", "blockAdmission": True, "requeuingStrategy": {"backoffBaseSeconds": 5}}),
        *queues(("a", "4"), ("b", "4")),
        workload("slow", "a", admitted_at=T0),
        workload("ready", "b", admitted_at=T0, pods_ready=("True", "PodsReady", T0)),
    ]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(2)
    assert states(cluster)["slow"] == ("evicted", "PodsReadyTimeout")
    cluster.reconfigure(build_state(objs))
    cluster.run(3)  # T0+5s: the backoff (until just past T0+7s) holds
    assert states(cluster)["slow"] == ("pending", "Pending")
    assert cluster.requeue_state("ns/slow")[1] is not None
    cluster.run(3)  # T0+6s, T0+7s: still held; T0+8s: queued, and "ready" blocks nothing
    assert states(cluster)["slow"] == ("admitted", "")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("timestamp", "first"), [("Eviction", "later"), ("Creation", "evicted"), (None, "later")]
)
def test_queue_order_after_a_pods_ready_timeout(engine: str, timestamp: str | None, first: str) -> None:
    # workload.go Ordering.GetQueueOrderTimestamp: a workload evicted by the
    # PodsReady timeout orders by the eviction time unless requeuingStrategy.
    # timestamp is Creation (Eviction also without waitForPodsReady: main.go)
    wait = None if timestamp is None else {"requeuingStrategy": {"timestamp": timestamp}}
    evicted = workload("evicted", "a", created=T0)
    evicted["status"] = {
        "conditions": [
            {
                "type": "Evicted",
                "status": "True",
                "reason": "PodsReadyTimeout",
                "message": "",
                "lastTransitionTime": "2026-01-01T00:00:09Z",
            }
        ]
    }
    later = workload("later", "a", created="2026-01-01T00:00:05Z")
    objs = [config(wait), *queues(("a", "1")), evicted, later]
    cluster = Cluster.from_objects(objs, engine)
    cluster.run(1)
    assert states(cluster)[first] == ("admitted", "")


@pytest.mark.parametrize("engine", ENGINES)
def test_admitted_again_it_orders_by_its_creation_time(engine: str) -> None:
    # workload.go Ordering.GetQueueOrderTimestamp reads the Evicted condition,
    # which the new admission turns False (SetQuotaReservation): the eviction
    # time orders it only while it waits after the timeout
    objs = [
        config({"timeout": "2s", "requeuingStrategy": {"backoffBaseSeconds": 1}}),
        *queues(("a", "1")),
        workload("slow", "a", created="2026-01-01T00:00:00Z", admitted_at=T0),
    ]
    cluster = Cluster.from_objects(objs, engine)
    creation = cluster.state.workloads["ns/slow"].creation_ns

    def queue_ts() -> int:
        return cluster.engine.spec(cluster.wid_of("ns/slow")).queue_ts

    cluster.run(2)  # T0+2s: evicted
    assert states(cluster)["slow"] == ("evicted", "PodsReadyTimeout")
    assert queue_ts() == creation + 2 * 10**9  # ordered by the eviction
    cluster.run(2)  # T0+4s: requeueAt (just past T0+3s) passed: admitted again
    assert states(cluster)["slow"] == ("admitted", "")
    assert queue_ts() == creation


@pytest.mark.parametrize("engine", ENGINES)
def test_the_timeout_counts_from_the_admitted_condition(engine: str) -> None:
    # workload_controller.go admittedNotReadyWorkload: since the Admitted
    # condition's lastTransitionTime, which may follow QuotaReserved (checks)
    wl = workload("late", "a", admitted_at=T0)
    for c in wl["status"]["conditions"]:
        if c["type"] == "Admitted":
            c["lastTransitionTime"] = "2026-01-01T00:00:02Z"
    cluster = Cluster.from_objects([config({"timeout": "3s"}), *queues(("a", "1")), wl], engine)
    seen = [cluster.run(1) and states(cluster)["late"][0] for _ in range(5)]
    assert seen == ["admitted"] * 4 + ["evicted"]  # T0+5s, not T0+3s


@pytest.mark.parametrize("engine", ENGINES)
def test_a_held_workload_queues_by_its_new_timestamp(engine: str) -> None:
    # the heap entry a held workload left behind (its old timestamp) is stale:
    # back in its queue it orders by the timestamp it came back with
    objs = [
        *queues(("a", "1")),
        workload("first", "a", created=T0),
        workload("second", "a", created="2026-01-01T00:00:01Z"),
    ]
    cluster = Cluster.from_objects(objs, engine)
    wid = cluster.wid_of("ns/first")
    later = cluster.state.workloads["ns/first"].creation_ns + 5 * 10**9
    cluster.engine.hold(wid, cluster.now_ns() + 10**9, later)
    cluster.run(1)
    assert states(cluster) == {"first": ("pending", "Pending"), "second": ("admitted", "")}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_held_workload_survives_heap_compaction(engine: str) -> None:
    # Back from its hold, "target" has two heap entries: the stale one of its
    # creation time and the current one of its new timestamp. Parking the 15
    # equivalent fillers (cluster_queue.go requeueIfNotPresent) leaves their
    # entries stale and compacts the native heap, where the stale entry comes
    # first: the current one must stay, or "target" stays pending for good
    # (found in a 20k-workload simulation under waitForPodsReady).
    early = "2025-12-31T23:59:50Z"
    fillers = [workload(f"f-{i:02d}", "a", "2", created=early) for i in range(15)]
    objs = [*queues(("a", "1")), *fillers, workload("target", "a", created=T0)]
    cluster = Cluster.from_objects(objs, engine)
    wid = cluster.wid_of("ns/target")
    later = cluster.state.workloads["ns/target"].creation_ns + 5 * 10**9
    cluster.engine.hold(wid, cluster.now_ns(), later)
    cluster.run(1)  # end_holds queues "target" again; head f-00 does not fit: all fillers parked
    assert states(cluster)["target"] == ("pending", "Pending")
    cluster.run(1)
    assert states(cluster)["target"] == ("admitted", "")
