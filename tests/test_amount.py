"""Kueue's quota numbers at and past the int64 range, on both engines.

Kueue at ff69552e (pkg/resources/amount.go, requests.go):

* a quota field (nominalQuota, borrowingLimit, lendingLimit of a ClusterQueue
  or a Cohort) of at least MaxInt64 units, or MaxInt64/1000 cores of cpu, is
  Unlimited (INT64_MAX) (AmountFromQuantity); a request past int64 is clamped
  to INT64_MAX (ResourceValue), a request times a pod count saturates;
* quota arithmetic is resources.Amount's: Unlimited is sticky (Unlimited - x =
  Unlimited, x - Unlimited = MinInt64, Unlimited - Unlimited = 0) and a
  bounded sum saturates onto INT64_MAX, which is then Unlimited;
* messages print an Unlimited amount as "<unlimited>" (AmountQuantityString);
* the webhooks still compare the quantities exactly (lendingLimit <=
  nominalQuota), so inputs Kueue rejects are rejected.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from kueue_fast import Cluster
from kueue_fast.api.errors import ValidationError
from kueue_fast.api.quantity import format_amount
from kueue_fast.cluster.cluster import ENGINES
from kueue_fast.engine.inputs import compile_topology
from kueue_fast.engine.reference import amount
from kueue_fast.loader import build_state

MAX = 2**63 - 1
MIN = -(2**63)
B2 = "kueue.x-k8s.io/v1beta2"
T0 = 1_700_000_000 * 1_000_000_000
X = "example.com/x"
KUEUE_FAST = str(Path(sys.executable).parent / "kueue-fast")
NO_FLAVOR = "couldn't assign flavors to pod set ps0: "


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


# --- builders -----------------------------------------------------------------------------------


def flavor() -> dict[str, Any]:
    return {"apiVersion": B2, "kind": "ResourceFlavor", "metadata": {"name": "f"}}


def cq(
    name: str,
    quota: dict[str, Any],
    *,
    cohort: str | None = None,
    preemption: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """quota: resource -> nominalQuota, or -> {nominalQuota, borrowingLimit, lendingLimit}."""
    resources = [{"name": r, **(q if isinstance(q, dict) else {"nominalQuota": q})} for r, q in quota.items()]
    spec: dict[str, Any] = {
        "namespaceSelector": {},
        "resourceGroups": [
            {"coveredResources": list(quota), "flavors": [{"name": "f", "resources": resources}]}
        ],
    }
    if cohort:
        spec["cohortName"] = cohort
    if preemption:
        spec["preemption"] = preemption
    return {"apiVersion": B2, "kind": "ClusterQueue", "metadata": {"name": name}, "spec": spec}


def lq(name: str) -> dict[str, Any]:
    return {
        "apiVersion": B2,
        "kind": "LocalQueue",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"clusterQueue": name},
    }


def wl(
    name: str,
    queue: str,
    requests: dict[str, str],
    *,
    created: int = 0,
    priority: int = 0,
    admitted: bool = False,
    pod_sets: int = 1,
) -> dict[str, Any]:
    """One pod per pod set; admitted: to the queue's ClusterQueue (same name), flavor f."""
    sets = [
        {
            "name": f"ps{i}",
            "count": 1,
            "template": {"spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]}},
        }
        for i in range(pod_sets)
    ]
    obj: dict[str, Any] = {
        "apiVersion": B2,
        "kind": "Workload",
        "metadata": {
            "name": name,
            "namespace": "ns",
            "creationTimestamp": f"2023-11-14T22:13:{created:02d}Z",
        },
        "spec": {"queueName": queue, "priority": priority, "podSets": sets},
    }
    if admitted:
        obj["status"] = {
            "admission": {
                "clusterQueue": queue,
                "podSetAssignments": [
                    {
                        "name": ps["name"],
                        "count": 1,
                        "flavors": {r: "f" for r in requests},
                        "resourceUsage": dict(requests),
                    }
                    for ps in sets
                ],
            },
            "conditions": [
                {
                    "type": "QuotaReserved",
                    "status": "True",
                    "reason": "QuotaReserved",
                    "message": "",
                    "lastTransitionTime": "2023-11-14T22:13:00Z",
                }
            ],
        }
    return obj


def cluster(objects: list[dict[str, Any]], engine: str) -> Cluster:
    return Cluster.from_objects([flavor(), *objects], engine=engine, start_time_ns=T0)


def usage(c: Cluster, node: str, resource: str = X) -> int:
    """A ClusterQueue's or cohort's usage of (f, resource), as the engine holds it."""
    topo = c.topology
    n = topo.node_names.index(node)
    fr = topo.fr_id(topo.flavor_names.index("f"), topo.resource_names.index(resource))
    if c.engine_name == "native":
        return int(np.asarray(c.engine.usage)[n, fr])
    value: int = c.engine.tree.usage[n].get(fr, 0)
    return value


def states(c: Cluster) -> dict[str, str]:
    return {d.name: d.state for d in c.decisions()}


# --- the arithmetic -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "add", "sub"),
    [
        (2, 3, 5, -1),
        (MAX, 7, MAX, MAX),  # Unlimited is sticky
        (MAX, -7, MAX, MAX),
        (7, MAX, MAX, MIN),  # x - Unlimited: no capacity
        (MAX, MAX, MAX, 0),  # Unlimited - Unlimited: bounded zero
        (MAX - 1, 5, MAX, MAX - 6),  # a saturated sum is Unlimited
        (MIN, -1, MIN, MIN + 1),
        (-5, MAX - 1, MAX - 6, MIN),
    ],
)
def test_amount_add_and_sub_are_kueue_amount(a: int, b: int, add: int, sub: int) -> None:
    assert (amount.add(a, b), amount.sub(a, b)) == (add, sub)


def test_an_unlimited_amount_prints_as_unlimited() -> None:
    assert format_amount("cpu", MAX) == "<unlimited>"
    assert format_amount("cpu", MAX - 1) == "9223372036854775806m"
    assert format_amount("memory", 2**30) == "1Gi"


# --- quota fields past the int64 range ------------------------------------------------------------


@pytest.mark.parametrize(
    ("resource", "quantity", "want"),
    [
        ("cpu", "9223372036854775", MAX),  # MaxInt64/1000 cores: its milli value would not fit
        ("cpu", "9223372036854775807m", MAX),
        ("cpu", "9223372036854774", 9_223_372_036_854_774_000),
        ("cpu", "9223372036854774.9995", 9_223_372_036_854_775_000),  # below the bound, rounded up
        ("cpu", "1E", MAX),  # kueue#9843: 1E cpu was 0
        ("memory", "9223372036854775807", MAX),
        ("memory", "9223372036854775806", MAX - 1),
        ("memory", "8Ei", MAX),
        (X, "1e400", MAX),
        (X, 9223372036854775807, MAX),
    ],
)
def test_a_quota_at_or_past_the_int64_range_is_unlimited(resource: str, quantity: object, want: int) -> None:
    state = build_state(
        [
            flavor(),
            cq("a", {resource: {"nominalQuota": quantity, "borrowingLimit": quantity}}, cohort="co"),
            {
                "apiVersion": B2,
                "kind": "Cohort",
                "metadata": {"name": "co"},
                "spec": {
                    "resourceGroups": [
                        {
                            "coveredResources": [resource],
                            "flavors": [
                                {"name": "f", "resources": [{"name": resource, "nominalQuota": quantity}]}
                            ],
                        }
                    ]
                },
            },
        ]
    )
    topo = compile_topology(state)
    (cq_quota,) = topo.quotas[topo.node_names.index("a")].values()
    (cohort_quota,) = topo.quotas[topo.node_names.index("co")].values()
    assert cq_quota[:2] == (want, want)
    assert cohort_quota[0] == want


def test_lending_limit_past_the_int64_range_is_unlimited_and_still_checked_against_nominal() -> None:
    ok = cq("a", {X: {"nominalQuota": "1e21", "lendingLimit": "1e20"}}, cohort="co")
    topo = compile_topology(build_state([flavor(), ok]))
    assert topo.quotas[0][0] == (MAX, MAX, MAX)
    bad = cq("a", {X: {"nominalQuota": "1e20", "lendingLimit": "1e21"}}, cohort="co")
    with pytest.raises(ValidationError, match=r"lendingLimit.*must be less than or equal to the nominal"):
        build_state([flavor(), bad])


# --- the engines --------------------------------------------------------------------------------


def test_cohort_quotas_summing_past_int64_are_unlimited(engine: str) -> None:
    """Three ClusterQueues of INT64_MAX/2 each: the cohort's subtree quota
    saturates onto Unlimited, so a request of INT64_MAX (Unlimited itself)
    still fits after another workload took some (Unlimited - x = Unlimited).
    (Once a strict xfail of tests/test_reference_doubts.py: the reference
    summed without bound, the native engine saturated without the sentinel.)"""
    half = str(MAX // 2)
    objs: list[dict[str, Any]] = []
    for name in ("a", "b", "c"):
        objs += [cq(name, {X: half}, cohort="co"), lq(name)]
    objs += [wl("w1", "a", {X: str(MAX)}), wl("w2", "b", {X: str(MAX // 4)}, created=1)]
    c = cluster(objs, engine)
    topo = c.topology
    fr = topo.fr_id(0, topo.resource_names.index(X))
    if engine == "reference":
        assert c.engine.tree.subtree_quota[topo.node_names.index("co")][fr] == MAX
    c.run_cycle()
    c.run_cycle()
    assert states(c) == {"w1": "admitted", "w2": "admitted"}
    assert usage(c, "co") == MAX


def test_usage_that_reaches_unlimited_is_kueue_15026(engine: str) -> None:
    """kueue#15026 shows Kueue's cache before amounts became exact: a 7-unit
    workload, then one of INT64_MAX (Unlimited): the usage is Unlimited and a
    1-unit workload no longer fits (Unlimited - Unlimited = 0); when the big
    one finishes the usage is 0, and when the small one finishes, -7."""
    objs = [
        cq("q", {X: "1e19"}),
        lq("q"),
        wl("small", "q", {X: "7"}, admitted=True),
        wl("big", "q", {X: str(MAX)}, created=1),
        wl("one", "q", {X: "1"}, created=2),
    ]
    c = cluster(objs, engine)
    assert usage(c, "q") == 7
    assert c.run_cycle().admitted == ["ns/big"]
    assert usage(c, "q") == MAX
    c.run_cycle()
    one = c.decision("ns/one")
    assert one.state == "pending"
    assert one.message == f"{NO_FLAVOR}insufficient unused quota for {X} in flavor f, 1 more needed"
    c.remove_workload("ns/big")
    assert usage(c, "q") == 0
    c.remove_workload("ns/small")
    assert usage(c, "q") == -7
    c.run_cycle()
    assert c.decision("ns/one").state == "admitted"
    assert usage(c, "q") == -6


def test_pod_sets_summing_past_int64_charge_unlimited(engine: str) -> None:
    """Two pod sets of 2^62 on one flavor-resource: the workload's usage is
    their sum as an Amount, Unlimited; it fits an Unlimited quota and, once it
    is there, a request of INT64_MAX needs "<unlimited>" more."""
    objs = [
        cq("q", {X: "1e19"}),
        lq("q"),
        wl("two", "q", {X: str(2**62)}, pod_sets=2),
        wl("max", "q", {X: str(MAX)}, created=1),
    ]
    c = cluster(objs, engine)
    c.run_cycle()
    assert states(c)["two"] == "admitted"
    assert usage(c, "q") == MAX
    c.run_cycle()
    d = c.decision("ns/max")
    assert d.state == "pending"
    assert d.message == (f"{NO_FLAVOR}insufficient unused quota for {X} in flavor f, <unlimited> more needed")


def test_a_reservation_that_saturates_the_cohort_is_released_exactly(engine: str) -> None:
    """A preemptor without candidates (a, borrowing, nothing it may preempt)
    holds its whole request in the cycle's snapshot: the cohort's usage
    saturates onto Unlimited, and c's workload, processed after it, no longer
    fits. Kueue throws that snapshot away and takes the next from its cache;
    so do the engines (removing the 200 again would leave Unlimited - 200 =
    Unlimited), and c's workload is admitted next cycle, a being parked."""
    lower = "LowerPriority"
    preempt: dict[str, Any] = {"withinClusterQueue": lower, "reclaimWithinCohort": lower}
    preempt["borrowWithinCohort"] = {"policy": lower}
    objs = [
        cq("a", {X: "0"}, cohort="co", preemption=preempt),
        cq("b", {X: str(MAX - 1)}, cohort="co"),
        cq("c", {X: "0"}, cohort="co"),
        lq("a"),
        lq("b"),
        lq("c"),
        wl("held", "b", {X: str(MAX - 150)}, priority=10, admitted=True),
        wl("reserver", "a", {X: "200"}, priority=5),
        wl("small", "c", {X: "100"}, created=1),
    ]
    c = cluster(objs, engine)
    assert usage(c, "co") == MAX - 150
    c.run_cycle()
    assert states(c) == {"held": "admitted", "reserver": "pending", "small": "pending"}
    assert c.decision("ns/small").message == "Workload no longer fits after processing another workload"
    assert (usage(c, "a"), usage(c, "co")) == (0, MAX - 150)
    c.run_cycle()
    assert states(c)["small"] == "admitted"
    assert usage(c, "co") == MAX - 50


# --- through the command ----------------------------------------------------------------------------


def test_schedule_command_takes_huge_quotas_and_rejects_negative_ones(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    objs = [flavor(), cq("q", {"cpu": "1E"}), lq("q"), wl("w", "q", {"cpu": "1e15"})]
    good.write_text(yaml.safe_dump_all(objs))
    outs = []
    for eng in ENGINES:
        p = subprocess.run(
            [KUEUE_FAST, "schedule", str(good), "--engine", eng], capture_output=True, text=True, timeout=60
        )
        assert p.returncode == 0, p.stderr
        outs.append(json.loads(p.stdout))
    assert outs[0] == outs[1]
    assert outs[0]["workloads"][0]["state"] == "admitted"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump_all([flavor(), cq("q", {"cpu": "-1e400"}), lq("q")]))
    p = subprocess.run([KUEUE_FAST, "schedule", str(bad)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2
    assert "ClusterQueue/q" in p.stderr
    assert "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
