"""Kueue's TestFindTopologyAssignments, ported: where the pods of a pod set go.

Facts from kueue ``pkg/cache/scheduler/tas_cache_test.go``
``TestFindTopologyAssignments`` (the commit kueue-fast follows): its cases
with required, preferred, unconstrained (explicit or implied) and slice
requests, node selectors, tolerations and taints, non-TAS pods, not-ready and
unschedulable nodes, several pod sets. Each case's nodes, levels and pod sets
are Kueue's; the flavor is Kueue's test flavor (``topologyName: default``,
the case's nodeLabels). The expected placement (levels, and per domain its
values and pod count, in Kueue's order) or failure reason is Kueue's.

Each case runs twice: on the reference placement directly (``TasState``,
the specification) and, through the public API, on both engines: one
Workload in a ClusterQueue whose only flavor is the TAS flavor with quota for
everything, one cycle. There the placement is the admission's
``topologyAssignment``; a failure leaves the workload pending with
``couldn't assign flavors to pod set NAME: REASON`` (the reason first: no
candidates to preempt).

Not ported: "slice size is required when slice topology is requested"
(Kueue's Workload webhook rejects such a pod set, TASValidateWorkloadSliceSize:
tests/bad_inputs/workload-slice-size-missing.yaml and, for Jobs,
tests/test_tas_inputs.py), the cases of features outside the slice kueue-fast
covers and refuses (balanced placement, pod-set groups/leaders, multi-layer slice
constraints, node replacement, elastic workloads, preferred node affinity),
and the two cases seeding Kueue's caches directly (``priorFlavorUsage``,
``priorOwnUsage``): admitted workloads' usage is covered by
tests/test_kueue_tas_schedule_table.py.
"""

# ruff: noqa: E501  (Kueue's messages, whole)

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from kueue_fast import Cluster
from kueue_fast.api import model as m
from kueue_fast.api.quantity import parse_quantity
from kueue_fast.engine.contract import ENGINES
from kueue_fast.engine.reference.tas import TasPodSetAsk, TasState
from kueue_fast.engine.select import native_available
from kueue_fast.engine.tas import class_flavors, compile_tas, pod_set_request

BLOCK = "cloud.com/topology-block"
RACK = "cloud.com/topology-rack"
HOST = "kubernetes.io/hostname"
SUBBLOCK = "cloud.com/topology-subblock"
DATACENTER = "cloud.com/datacenter"
AIZONE = "cloud.com/aizone"


def node(
    name: str,
    labels: dict[str, str],
    *,
    cpu: str | None = None,
    memory: str | None = None,
    pods: str | None = None,
    alloc: dict[str, str] | None = None,
    ready: bool = True,
    unschedulable: bool = False,
    taints: list[m.Taint] | None = None,
) -> m.Node:
    allocatable = dict(alloc or {})
    for r, q in (("cpu", cpu), ("memory", memory), ("pods", pods)):
        if q is not None:
            allocatable[r] = q
    return m.Node(
        name,
        dict(labels),
        list(taints or []),
        {r: parse_quantity(q, r) for r, q in allocatable.items()},
        unschedulable,
        ready,
    )


def taint(key: str, value: str, effect: str) -> m.Taint:
    return m.Taint(key, value, effect)


def toleration(key: str, value: str, operator: str, effect: str) -> m.Toleration:
    return m.Toleration(key, operator or "Equal", value, effect)


@dataclass
class PodSpec:
    """A running (or pending, failed, succeeded) pod Kueue's test puts on a node."""

    name: str
    node: str | None
    requests: dict[str, str]
    phase: str | None


def pod(name: str, *, node: str | None, requests: dict[str, str], phase: str | None) -> PodSpec:
    return PodSpec(name, node, requests, phase)


@dataclass
class PodSetCase:
    name: str
    count: int
    requests: dict[str, int]  # Kueue's per-pod requests, canonical units (milli-cpu, bytes)
    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    slice_topology: str | None = None
    slice_size: int | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: list[m.Toleration] = field(default_factory=list)
    want: tuple[list[str], list[tuple[tuple[str, ...], int]]] | None = None
    reason: str | None = None

    @property
    def topology_request(self) -> m.TopologyRequest | None:
        tr = m.TopologyRequest(
            self.required, self.preferred, self.unconstrained, self.slice_topology, self.slice_size
        )
        return tr if tr.explicit else None


def ps(*, name: str = "main", **kw: Any) -> PodSetCase:
    return PodSetCase(name=name, **kw)


@dataclass
class FindCase:
    name: str
    nodes: list[m.Node]
    levels: list[str]
    pod_sets: list[PodSetCase]
    node_labels: dict[str, str] = field(default_factory=dict)
    pods: list[PodSpec] = field(default_factory=list)
    # Kueue's flavor check rejects the flavor before any placement is tried
    # (checkPodSetAndFlavorMatchForTAS): a scheduling run reports this instead.
    flavor_rejection: str = ""


FIND_CASES = [
    FindCase(
        "minimize the number of used racks before optimizing the number of nodes; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="2", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="2", pods="20"),
            node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, cpu="1", pods="10"),
            node("b1-r3-x6", {BLOCK: "b1", RACK: "r3", HOST: "x6"}, cpu="1", pods="10"),
            node("b1-r3-x2", {BLOCK: "b1", RACK: "r3", HOST: "x2"}, cpu="1", pods="10"),
            node("b1-r3-x4", {BLOCK: "b1", RACK: "r3", HOST: "x4"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                want=([HOST], [(("x1",), 1), (("x2",), 1), (("x4",), 1), (("x6",), 1)]),
            ),
        ],
    ),
    FindCase(
        "choose the node that can accommodate all Pods",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="2", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=2, requests={"cpu": 1000}, required=BLOCK, want=([HOST], [(("x3",), 2)])),
        ],
    ),
    FindCase(
        "no annotation; implied default to unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="4", memory="1Gi", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, cpu="2", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                want=([HOST], [(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]),
            ),
        ],
    ),
    FindCase(
        "unconstrained; 6 pods fit into hosts scattered across the whole datacenter even they could fit into single rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="4", memory="1Gi", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, cpu="2", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                unconstrained=True,
                want=([HOST], [(("x1",), 1), (("x3",), 1), (("x5",), 1), (("x2",), 1), (("x6",), 2)]),
            ),
        ],
    ),
    FindCase(
        "unconstrained; a single pod fits into each host; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, unconstrained=True, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "unconstrained; a single pod fits into each host; LeastFreeCapacity; TASProfileMixed",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, unconstrained=True, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "block required; 4 pods fit into one host each; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r1-x4", {BLOCK: "b2", RACK: "r1", HOST: "x4"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x7", {BLOCK: "b2", RACK: "r2", HOST: "x7"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x8", {BLOCK: "b2", RACK: "r2", HOST: "x8"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                want=([HOST], [(("x3",), 1), (("x5",), 1), (("x1",), 1), (("x6",), 1)]),
            ),
        ],
    ),
    FindCase(
        "host required; single Pod fits in the host; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "host required; single Pod fits in the host; BestFit; TASProfileMixed",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "host preferred; single Pod fits in the host; BestFit; TASProfileMixed",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "rack required; single Pod fits in a rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=RACK, want=([BLOCK, RACK], [(("b1", "r1"), 1)])),
        ],
    ),
    FindCase(
        "rack required; multiple Pods fit in a rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(count=3, requests={"cpu": 1000}, required=RACK, want=([BLOCK, RACK], [(("b1", "r2"), 3)])),
        ],
    ),
    FindCase(
        "block preferred; Pods fit in 2 blocks; BestFit",
        nodes=[
            node("b1", {BLOCK: "b1"}, cpu="2", pods="20"),
            node("b2", {BLOCK: "b2"}, cpu="1", pods="10"),
            node("b3", {BLOCK: "b3"}, cpu="4", pods="40"),
        ],
        levels=[BLOCK],
        pod_sets=[
            ps(
                count=5, requests={"cpu": 1000}, preferred=BLOCK, want=([BLOCK], [(("b2",), 1), (("b3",), 4)])
            ),
        ],
    ),
    FindCase(
        "rack required; multiple Pods fit in some racks; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(count=2, requests={"cpu": 1000}, required=RACK, want=([BLOCK, RACK], [(("b2", "r2"), 2)])),
        ],
    ),
    FindCase(
        "rack required; too many pods to fit in any rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=RACK,
                reason='topology "default" allows to fit only 3 out of 4 pod(s)',
            ),
        ],
    ),
    FindCase(
        "block required; single Pod fits in a block and a single rack; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=BLOCK, want=([BLOCK, RACK], [(("b2", "r1"), 1)])),
        ],
    ),
    FindCase(
        "block required; single Pod fits in a block spread across two racks; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1), (("b1", "r2"), 3)]),
            ),
        ],
    ),
    FindCase(
        "block required; Pods fit in a block spread across two racks; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1), (("b1", "r2"), 3)]),
            ),
        ],
    ),
    FindCase(
        "block required; single Pod which cannot be split; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 4000},
                required=BLOCK,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource "cpu": 4',
            ),
        ],
    ),
    FindCase(
        "block required; too many Pods to fit requested; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=5,
                requests={"cpu": 1000},
                required=BLOCK,
                reason='topology "default" allows to fit only 4 out of 5 pod(s)',
            ),
        ],
    ),
    FindCase(
        "rack required; single Pod requiring memory; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(count=4, requests={"memory": 1024}, required=RACK, want=([BLOCK, RACK], [(("b1", "r1"), 4)])),
        ],
    ),
    FindCase(
        "rack preferred; but only block can accommodate the workload; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                preferred=RACK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1), (("b1", "r2"), 3)]),
            ),
        ],
    ),
    FindCase(
        "rack preferred; but only multiple blocks can accommodate the workload; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                preferred=RACK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)]),
            ),
        ],
    ),
    FindCase(
        "block preferred; but only multiple blocks can accommodate the workload; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                preferred=BLOCK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1), (("b1", "r2"), 3), (("b2", "r2"), 2)]),
            ),
        ],
    ),
    FindCase(
        "block preferred; but the workload cannot be accommodate in entire topology; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                count=10,
                requests={"cpu": 1000},
                preferred=BLOCK,
                reason='topology "default" allows to fit only 7 out of 10 pod(s)',
            ),
        ],
    ),
    FindCase(
        "only nodes with matching labels are considered; no matching node; BestFit",
        nodes=[
            node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, cpu="1", memory="1Gi", pods="10", ready=False),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-b"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                reason="no topology domains at level: kubernetes.io/hostname",
            ),
        ],
    ),
    FindCase(
        "only nodes with matching labels are considered; matching node is found; BestFit",
        nodes=[
            node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "only nodes with matching levels are considered; no host label on node; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=RACK,
                reason="no topology domains at level: cloud.com/topology-rack",
            ),
        ],
    ),
    FindCase(
        "don't consider unscheduled Pods when computing capacity; BestFit",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        pods=[pod("test-unscheduled", node=None, requests={"cpu": "600m"}, phase=None)],
        pod_sets=[
            ps(count=1, requests={"cpu": 600}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "don't consider terminal pods when computing the capacity; BestFit",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        pods=[
            pod("test-failed", node="x3", requests={"cpu": "600m"}, phase="Failed"),
            pod("test-succeeded", node="x3", requests={"cpu": "600m"}, phase="Succeeded"),
        ],
        pod_sets=[
            ps(count=1, requests={"cpu": 600}, required=HOST, want=([HOST], [(("x3",), 1)])),
        ],
    ),
    FindCase(
        "include usage from pending scheduled non-TAS pods, blocked assignment; BestFit",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        pods=[pod("test-pending", node="x3", requests={"cpu": "600m"}, phase="Pending")],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 600},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    FindCase(
        "include usage from running non-TAS pods, blocked assignment; BestFit",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        pods=[pod("test-running", node="x3", requests={"cpu": "600m"}, phase="Running")],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 600},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    FindCase(
        "node allocatable capacity completely used by non-TAS pod; empty remainingCapacity",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", pods="1"),
        ],
        levels=[HOST],
        pods=[pod("running1", node="x3", requests={"cpu": "1"}, phase="Running")],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 100},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    FindCase(
        "include usage from non-TAS pods; pod usage",
        nodes=[
            node("x3", {HOST: "x3"}, pods="10"),
        ],
        levels=[HOST],
        pods=[
            pod("running1", node="x3", requests={}, phase="Running"),
            pod("running2", node="x3", requests={}, phase="Running"),
        ],
        pod_sets=[
            ps(
                count=9,
                requests={"cpu": 0},
                required=HOST,
                reason='topology "default" allows to fit only 8 out of 9 pod(s)',
            ),
        ],
    ),
    FindCase(
        "include usage from running non-TAS pods, found free capacity on another node; BestFit",
        nodes=[
            node("x3", {HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("x5", {HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        pods=[pod("test-pod", node="x3", requests={"cpu": "600m"}, phase=None)],
        pod_sets=[
            ps(count=1, requests={"cpu": 600}, required=HOST, want=([HOST], [(("x5",), 1)])),
        ],
    ),
    FindCase(
        "no assignment as node is not ready; BestFit",
        nodes=[
            node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, cpu="1", memory="1Gi", pods="10", ready=False),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                reason="no topology domains at level: kubernetes.io/hostname",
            ),
        ],
    ),
    FindCase(
        "no assignment as node is unschedulable; BestFit",
        nodes=[
            node(
                "b1-r1-x3",
                {"zone": "zone-a", HOST: "x3"},
                cpu="1",
                memory="1Gi",
                pods="10",
                unschedulable=True,
            ),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                reason="no topology domains at level: kubernetes.io/hostname",
            ),
        ],
    ),
    FindCase(
        "skip node which has untolerated taint; BestFit",
        nodes=[
            node(
                "x3",
                {"zone": "zone-a", HOST: "x3"},
                cpu="1",
                memory="1Gi",
                pods="10",
                taints=[taint("example.com/gpu", "present", "NoSchedule")],
            ),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: taint "example.com/gpu=present:NoSchedule": 1',
            ),
        ],
    ),
    FindCase(
        "detailed failure message with exclusion stats",
        nodes=[
            node("x1", {HOST: "x1"}, cpu="1", pods="10", taints=[taint("key", "value", "NoSchedule")]),
            node("x2", {HOST: "x2", "zone": "zone-b"}, cpu="1", pods="10"),
            node("x3", {HOST: "x3", "zone": "zone-b"}, cpu="2", pods="10"),
            node("x4", {HOST: "x4", "zone": "zone-a"}, cpu="100m", pods="10"),
        ],
        levels=[HOST],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                node_selector={"zone": "zone-a"},
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 4; excluded: nodeSelector: 2, resource "cpu": 1, taint "key=value:NoSchedule": 1',
            ),
        ],
    ),
    FindCase(
        "resource exclusion picks most restrictive resource",
        nodes=[
            node(
                "dual-shortage",
                {HOST: "dual-shortage"},
                cpu="500m",
                pods="10",
                alloc={"example.com/gpu": "0"},
            ),
        ],
        levels=[HOST],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000, "example.com/gpu": 1},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1',
            ),
        ],
    ),
    FindCase(
        "allow to schedule on node with tolerated taint; BestFit",
        nodes=[
            node(
                "b1-r1-x3",
                {"zone": "zone-a", HOST: "x3"},
                cpu="1",
                memory="1Gi",
                pods="10",
                taints=[taint("example.com/gpu", "present", "NoSchedule")],
            ),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                tolerations=[toleration("example.com/gpu", "present", "Equal", "")],
                want=([HOST], [(("x3",), 1)]),
            ),
        ],
    ),
    FindCase(
        "no assignment as node does not have enough allocatable pods (.status.allocatable['pods']); BestFit",
        nodes=[
            node("b1-r1-x3", {"zone": "zone-a", HOST: "x3"}, cpu="1000m", pods="1"),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pods=[pod("test-running", node="b1-r1-x3", requests={"cpu": "300m"}, phase="Running")],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 300},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "pods": 1',
            ),
        ],
    ),
    FindCase(
        "multiple PodSets account assumed pod usage against allocatable pods; BestFit",
        nodes=[
            node("x1", {HOST: "x1"}, cpu="2", pods="1"),
        ],
        levels=[HOST],
        pod_sets=[
            ps(name="one", count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x1",), 1)])),
            ps(
                name="two",
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "pods": 1',
            ),
        ],
    ),
    FindCase(
        "skip node which doesn't match node selector, missing label; BestFit",
        nodes=[
            node("x3", {"zone": "zone-a", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 300},
                required=HOST,
                node_selector={"custom-label-1": "custom-value-1"},
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: nodeSelector: 1',
            ),
        ],
    ),
    FindCase(
        "skip node which doesn't match node selector, label exists, value doesn't match; BestFit",
        nodes=[
            node(
                "x3",
                {"zone": "zone-a", HOST: "x3", "custom-label-1": "value-1"},
                cpu="1",
                memory="1Gi",
                pods="10",
            ),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 300},
                required=HOST,
                node_selector={"custom-label-1": "value-2"},
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 1; excluded: nodeSelector: 1',
            ),
        ],
    ),
    FindCase(
        "allow to schedule on node which matches node; BestFit",
        nodes=[
            node(
                "b1-r1-x3",
                {"zone": "zone-a", HOST: "x3", "custom-label-1": "value-1"},
                cpu="1",
                memory="1Gi",
                pods="10",
            ),
            node(
                "b1-r1-x5",
                {"zone": "zone-a", HOST: "x5", "custom-label-1": "value-2"},
                cpu="1",
                memory="1Gi",
                pods="10",
            ),
        ],
        levels=[HOST],
        node_labels={"zone": "zone-a"},
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                node_selector={"custom-label-1": "value-2"},
                want=([HOST], [(("x5",), 1)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; host required for slices; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="3", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="3", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x1",), 2), (("x3",), 2), (("x5",), 2)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; host required for slices; prioritize more free slice capacity first and then tight fit; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="6", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="5", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="4", pods="10"),
            node("b1-r1-x6", {BLOCK: "b1", RACK: "r1", HOST: "x6"}, cpu="2", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=12,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x1",), 4), (("x3",), 6), (("x6",), 2)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; host required for slices; select domains with tight fit; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="2", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="2", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x1",), 2), (("x5",), 2)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; rack required for slices; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", pods="10"),
            node("b1-r2-x2", {BLOCK: "b1", RACK: "r2", HOST: "x2"}, cpu="1", pods="10"),
            node("b2-r1-x4", {BLOCK: "b2", RACK: "r1", HOST: "x4"}, cpu="1", pods="10"),
            node("b2-r1-x7", {BLOCK: "b2", RACK: "r1", HOST: "x7"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=RACK,
                slice_size=2,
                want=([HOST], [(("x3",), 1), (("x5",), 1), (("x1",), 1), (("x2",), 1)]),
            ),
        ],
    ),
    FindCase(
        "block preferred for podset; rack required for slices; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                preferred=BLOCK,
                slice_topology=RACK,
                slice_size=2,
                want=([HOST], [(("x1",), 1), (("x5",), 1), (("x4",), 2)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; host required for slices; optimize last domain; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="4", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="3", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="2", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x1",), 2), (("x3",), 4)]),
            ),
        ],
    ),
    FindCase(
        "block preferred for podset; host required for slices; 2 blocks with unbalanced subdomains; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="3", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="3", pods="10"),
            node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, cpu="6", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=12,
                requests={"cpu": 1000},
                preferred=BLOCK,
                slice_topology=HOST,
                slice_size=3,
                want=([HOST], [(("x1",), 3), (("x3",), 3), (("x6",), 6)]),
            ),
        ],
    ),
    FindCase(
        "block required for podset; rack required for slices; podset fits in a block, but slices do not fit in racks",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="2", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="2", pods="10"),
            node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, cpu="2", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=RACK,
                slice_size=3,
                reason='topology "default" doesn\'t allow to fit any of 2 slice(s)',
            ),
        ],
    ),
    FindCase(
        "block required for podset; rack required for slices; only 1 out of 2 slices fit the topology",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", pods="10"),
            node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, cpu="1", pods="10"),
            node("b1-r4-x6", {BLOCK: "b1", RACK: "r4", HOST: "x6"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=RACK,
                slice_size=3,
                reason='topology "default" allows to fit only 1 out of 2 slice(s)',
            ),
        ],
    ),
    FindCase(
        "block required for podset; rack required for slices; podset fits in both blocks, but slices fit in only one block",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="2", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="2", pods="10"),
            node("b1-r3-x1", {BLOCK: "b1", RACK: "r3", HOST: "x1"}, cpu="2", pods="10"),
            node("b2-r4-x6", {BLOCK: "b2", RACK: "r4", HOST: "x6"}, cpu="3", pods="10"),
            node("b2-r5-x2", {BLOCK: "b2", RACK: "r5", HOST: "x2"}, cpu="3", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=RACK,
                slice_size=3,
                want=([HOST], [(("x6",), 3), (("x2",), 3)]),
            ),
        ],
    ),
    FindCase(
        "slice required topology level cannot be above the main required topology level",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=HOST,
                slice_topology=BLOCK,
                slice_size=1,
                reason="podset slice topology cloud.com/topology-block is above the podset topology kubernetes.io/hostname",
            ),
        ],
    ),
    FindCase(
        "cannot request not existing slice topology",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=1,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology="not-existing-topology-level",
                slice_size=1,
                reason="no requested topology level for slices: not-existing-topology-level",
            ),
        ],
        # not reached by a scheduling run: the flavor is rejected first (HasLevel)
        flavor_rejection='Flavor "tas" does not contain the requested level',
    ),
    FindCase(
        "no topology for podset; host required for slices; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="3", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="3", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x1",), 2), (("x3",), 2), (("x5",), 2)]),
            ),
        ],
    ),
    FindCase(
        "no topology for podset; host required for slices; multiple blocks; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="4", memory="1Gi", pods="10"),
            node("b1-r1-x5", {BLOCK: "b1", RACK: "r1", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r1-x6", {BLOCK: "b2", RACK: "r1", HOST: "x6"}, cpu="2", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=6,
                requests={"cpu": 1000},
                slice_topology=HOST,
                slice_size=2,
                want=([HOST], [(("x3",), 4), (("x6",), 2)]),
            ),
        ],
    ),
    FindCase(
        "no topology for podset; rack required for slices; multiple blocks; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=4,
                requests={"cpu": 1000},
                slice_topology=RACK,
                slice_size=2,
                want=([HOST], [(("x1",), 1), (("x5",), 1), (("x4",), 2)]),
            ),
        ],
    ),
    FindCase(
        "find topology assignment for two podsets with overlapping domain",
        nodes=[
            node("b1", {BLOCK: "b1"}, cpu="2", pods="10"),
            node("b2", {BLOCK: "b2"}, cpu="2", pods="10"),
            node("b3", {BLOCK: "b3"}, cpu="2", pods="10"),
        ],
        levels=[BLOCK],
        pod_sets=[
            ps(
                name="podset1",
                count=3,
                requests={"cpu": 1000},
                preferred=BLOCK,
                want=([BLOCK], [(("b1",), 2), (("b2",), 1)]),
            ),
            ps(
                name="podset2",
                count=3,
                requests={"cpu": 1000},
                preferred=BLOCK,
                want=([BLOCK], [(("b2",), 1), (("b3",), 2)]),
            ),
        ],
    ),
    FindCase(
        "multiple podsets: rack required for both, different resource requests; BestFit",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="10", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="10", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="20", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                name="podset1",
                count=2,
                requests={"cpu": 1000},
                required=RACK,
                want=([BLOCK, RACK], [(("b1", "r1"), 2)]),
            ),
            ps(
                name="podset2",
                count=1,
                requests={"memory": 1024},
                required=RACK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1)]),
            ),
        ],
    ),
    FindCase(
        "multiple podsets: block required for one, unconstrained for another; TASProfileMixed",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="10", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="10", memory="1Gi", pods="10"),
            node("b2-r1-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="10", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="20", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                name="podset1", count=8, requests={"cpu": 1000}, required=BLOCK, want=([HOST], [(("x2",), 8)])
            ),
            ps(
                name="podset2",
                count=2,
                requests={"cpu": 1000},
                unconstrained=True,
                want=([HOST], [(("x2",), 2)]),
            ),
        ],
    ),
    FindCase(
        "temporary state cleanup prevents leakage across PodSets",
        nodes=[
            node("n1", {HOST: "x1"}, cpu="4", memory="4Gi", pods="10"),
            node("n2", {HOST: "x2"}, cpu="4", memory="4Gi", pods="10"),
        ],
        levels=[HOST],
        pod_sets=[
            ps(name="ps1", count=1, requests={"cpu": 1000, "memory": 1000}, want=([HOST], [(("x1",), 1)])),
            ps(
                name="ps2",
                count=1,
                requests={"cpu": 1000, "memory": 1000},
                node_selector={"never": "match"},
                reason='topology "default" doesn\'t allow to fit any of 1 pod(s). Total nodes: 2; excluded: nodeSelector: 2',
            ),
        ],
    ),
    FindCase(
        "multi-layer topology: no feature gate; additional layers ignored",
        nodes=[
            node("b1-r1-x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", pods="10"),
            node("b1-r1-x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, cpu="4", pods="10"),
            node("b1-r2-x3", {BLOCK: "b1", RACK: "r2", HOST: "x3"}, cpu="3", pods="10"),
            node("b1-r2-x4", {BLOCK: "b1", RACK: "r2", HOST: "x4"}, cpu="4", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(
                count=8,
                requests={"cpu": 1000},
                required=BLOCK,
                slice_topology=RACK,
                slice_size=4,
                want=([HOST], [(("x1",), 1), (("x2",), 3), (("x3",), 3), (("x4",), 1)]),
            ),
        ],
    ),
    FindCase(
        "non-hostname-leaf topology: nil aggregatedDomainUsages preserves per-flavor behavior",
        nodes=[
            node("b1-r1-x3", {BLOCK: "b1", RACK: "r1", HOST: "x3"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x5", {BLOCK: "b1", RACK: "r2", HOST: "x5"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x1", {BLOCK: "b1", RACK: "r2", HOST: "x1"}, cpu="1", memory="1Gi", pods="10"),
            node("b1-r2-x6", {BLOCK: "b1", RACK: "r2", HOST: "x6"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x2", {BLOCK: "b2", RACK: "r1", HOST: "x2"}, cpu="1", memory="1Gi", pods="10"),
            node("b2-r2-x4", {BLOCK: "b2", RACK: "r2", HOST: "x4"}, cpu="2", memory="4Gi", pods="40"),
        ],
        levels=[BLOCK, RACK],
        pod_sets=[
            ps(
                name="main",
                count=1,
                requests={"cpu": 1000},
                required=RACK,
                want=([BLOCK, RACK], [(("b1", "r1"), 1)]),
            ),
        ],
    ),
    FindCase(
        "stable tie break on identical nodes: TASBalancedPlacement disabled",
        nodes=[
            node("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, cpu="1", pods="10"),
            node("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x1",), 1)])),
        ],
    ),
    FindCase(
        "stable tie break on identical nodes: reversed order, TASBalancedPlacement disabled",
        nodes=[
            node("x1", {BLOCK: "b1", RACK: "r1", HOST: "x1"}, cpu="1", pods="10"),
            node("x2", {BLOCK: "b1", RACK: "r1", HOST: "x2"}, cpu="1", pods="10"),
        ],
        levels=[BLOCK, RACK, HOST],
        pod_sets=[
            ps(count=1, requests={"cpu": 1000}, required=HOST, want=([HOST], [(("x1",), 1)])),
        ],
    ),
]


def running_pods(case: FindCase) -> list[m.NodePod]:
    """The pods that use node capacity (kueue belongsToNonTASCache: on a node, not finished)."""
    return [
        m.NodePod("test-ns", p.name, p.node, {r: parse_quantity(q, r) for r, q in p.requests.items()})
        for p in case.pods
        if p.node and p.phase not in ("Failed", "Succeeded")
    ]


def model_pod_set(p: PodSetCase) -> m.PodSet:
    return m.PodSet(
        name=p.name,
        count=p.count,
        requests=dict(p.requests),
        node_selector=dict(p.node_selector),
        tolerations=list(p.tolerations),
        topology_request=p.topology_request,
    )


def place_on_reference(case: FindCase) -> dict[str, object]:
    """The case on the reference placement (``TasState``) alone, as Kueue's
    test calls FindTopologyAssignmentsForFlavor: per pod set its placement
    (levels, domains) or its failure reason; pod sets after a failure get none."""
    state = m.ClusterState()
    state.topologies["default"] = m.Topology("default", list(case.levels))
    state.resource_flavors["tas"] = m.ResourceFlavor("tas", dict(case.node_labels), topology_name="default")
    state.nodes = {n.name: n for n in case.nodes}
    state.node_pods = running_pods(case)
    pod_sets = [model_pod_set(p) for p in case.pod_sets]
    wl = m.Workload("default", "wl", "q", pod_sets, 0)
    state.workloads[wl.key] = wl
    spec = compile_tas(state, ["tas"])
    assert spec is not None
    flavor = spec.flavors[0]
    asks = []
    for i, p in enumerate(pod_sets):
        spec.classes.append(class_flavors(p, spec, state))
        request = pod_set_request(p.topology_request, True, spec)
        assert request is not None
        asks.append(
            TasPodSetAsk(i, p.count, request, spec.resource_vector(p.requests), len(spec.classes) - 1)
        )
    tas = TasState(spec)
    placed, failure = tas.find_for_workload([(0, asks)], simulate_empty=False)
    levels = [HOST] if flavor.hostname_lowest else list(case.levels)
    out: dict[str, object] = {}
    for i, p in enumerate(pod_sets):
        if i in placed:
            values = [flavor.leaf_values(leaf)[-len(levels) :] for leaf, _ in placed[i][1]]
            out[p.name] = (levels, [(v, n) for v, (_, n) in zip(values, placed[i][1], strict=True)])
        elif failure is not None and failure.pod_set == i:
            out[p.name] = failure.text
    return out


def wanted(case: FindCase) -> dict[str, object]:
    out: dict[str, object] = {}
    for p in case.pod_sets:
        if p.want is not None:
            out[p.name] = (list(p.want[0]), [(tuple(v), n) for v, n in p.want[1]])
        elif p.reason is not None:
            out[p.name] = p.reason
    return out


@pytest.mark.parametrize("case", FIND_CASES, ids=[c.name for c in FIND_CASES])
def test_reference_placement(case: FindCase) -> None:
    if case.flavor_rejection:
        pytest.skip("the placement is not reached: " + case.flavor_rejection)
    got = place_on_reference(case)
    assert got == wanted(case)


# --- through the engines ------------------------------------------------------------------------


def scheduling_state(case: FindCase) -> m.ClusterState:
    """The case as a cluster: the TAS flavor as the only flavor of a
    ClusterQueue with quota for all its pods ask for (so that a TAS-only
    ClusterQueue makes a pod set without a request ask for TAS implicitly,
    as Kueue's test sets Implied), one Workload with the case's pod sets."""
    state = m.ClusterState()
    state.topologies["default"] = m.Topology("default", list(case.levels))
    state.resource_flavors["tas"] = m.ResourceFlavor("tas", dict(case.node_labels), topology_name="default")
    state.nodes = {n.name: n for n in case.nodes}
    state.node_pods = running_pods(case)
    resources = sorted({r for p in case.pod_sets for r in p.requests})
    quotas = [m.ResourceQuota(r, 10**15) for r in resources]
    group = m.ResourceGroup(resources, [m.FlavorQuotas("tas", quotas)])
    state.cluster_queues["cq"] = m.ClusterQueue("cq", [group], namespace_selector=m.LabelSelector())
    state.local_queues["default/q"] = m.LocalQueue("default", "q", "cq")
    wl = m.Workload("default", "wl", "q", [model_pod_set(p) for p in case.pod_sets], 0)
    state.workloads[wl.key] = wl
    return state


def scheduled(case: FindCase, engine: str) -> dict[str, object]:
    """One cycle on ``engine``: the admitted pod sets' placements, or the
    failing pod set's reason as its pending message says it."""
    cluster = Cluster(scheduling_state(case), engine=engine)
    cluster.run_cycle()
    d = cluster.decision("default/wl")
    if d.state == "admitted":
        out: dict[str, object] = {}
        for psd in d.pod_sets:
            ta = psd.topology_assignment
            assert ta is not None, f"pod set {psd.name} admitted without a placement"
            out[psd.name] = (list(ta.levels), list(ta.domains))
        return out
    prefix = "couldn't assign flavors to pod set "
    assert d.message.startswith(prefix), d.message
    name, _, reason = d.message[len(prefix) :].partition(": ")
    return {name: reason}


def wanted_from_a_cycle(case: FindCase) -> dict[str, object]:
    """What one cycle shows of Kueue's expectation: every placement, or only
    the first failure (the workload is not admitted)."""
    want = wanted(case)
    if case.flavor_rejection:
        return {case.pod_sets[0].name: case.flavor_rejection}
    failed = [p.name for p in case.pod_sets if p.reason is not None]
    return {failed[0]: want[failed[0]]} if failed else want


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", FIND_CASES, ids=[c.name for c in FIND_CASES])
def test_placement_through_a_scheduling_cycle(case: FindCase, engine: str) -> None:
    if engine == "native" and not native_available():
        pytest.skip("the native engine is not built")
    assert scheduled(case, engine) == wanted_from_a_cycle(case)
