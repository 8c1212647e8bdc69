"""The native engine against the reference engine with Topology Aware Scheduling.

Hypothesis draws clusters with topologies: one to three levels (block, rack,
and the hostname or not), nodes with random label values, capacity, taints,
readiness and schedulability, running pods on them, one or two TAS flavors
(with node labels, taints and tolerations; sharing nodes or not) beside an
ordinary flavor, ClusterQueues in a cohort with preemption policies, and
workloads with one or two pod sets asking for a required, preferred or
unconstrained level, a slice (level and size), nothing (implied TAS when the
ClusterQueue has only TAS flavors), with minCount, node selectors and
tolerations; admitted ones hold placements on existing (or deleted) nodes.
Both engines run the same cycles with workloads added and removed and the
configuration reapplied between them, and we compare after every step what
tests/test_native_differential.py compares (every workload's view, with its
topology assignments, usage, queues, preemption evaluations, decisions).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st
from test_native_differential import EXAMPLES, SECOND, SLOW_OK, T0, Scenario, run_both

from kueue_fast.api import model as m

BLOCK, RACK, HOST = "cloud.com/block", "cloud.com/rack", m.HOSTNAME_LABEL
LEVEL_SETS = [[BLOCK, RACK, HOST], [RACK, HOST], [HOST], [BLOCK, RACK], [RACK]]
MILLI, GI = 500, 1 << 30
FLAVORS = ("tas-a", "tas-b")


@st.composite
def nodes(draw: Any) -> list[m.Node]:
    out = []
    for i in range(draw(st.integers(1, 10))):
        labels = {
            "pool": draw(st.sampled_from(["a", "b", "ab"])),
            BLOCK: f"b{draw(st.integers(0, 1))}",
            RACK: f"r{draw(st.integers(0, 2))}",
            # Now and then two nodes share a hostname value (Kueue keys its
            # leaves by the label values, not the node name).
            HOST: f"h{draw(st.integers(0, 12)) if draw(st.integers(0, 9)) == 0 else i}",
        }
        alloc = {"cpu": draw(st.integers(0, 8)) * MILLI, "memory": draw(st.integers(0, 4)) * GI}
        if draw(st.integers(0, 5)):
            alloc["pods"] = draw(st.integers(0, 8))
        if draw(st.integers(0, 3)):  # mostly nodes with room
            alloc["cpu"] += 4 * MILLI
            alloc["memory"] += 2 * GI
        taints = [m.Taint("dedicated", "x", "NoSchedule")] if draw(st.integers(0, 6)) == 0 else []
        out.append(
            m.Node(
                f"n{i}",
                labels,
                taints,
                alloc,
                unschedulable=draw(st.integers(0, 9)) == 0,
                ready=draw(st.integers(0, 9)) != 0,
            )
        )
    return out


@st.composite
def topology_request(draw: Any, levels: list[str]) -> m.TopologyRequest | None:
    kind = draw(st.sampled_from(["none", "required", "preferred", "unconstrained", "slice"]))
    anywhere = [*levels, "cloud.com/missing"]
    if kind == "none":
        return None
    if kind == "unconstrained":
        return m.TopologyRequest(unconstrained=True)
    level = draw(st.sampled_from(anywhere))
    if kind == "required":
        return m.TopologyRequest(required=level)
    if kind == "preferred":
        return m.TopologyRequest(preferred=level)
    inner = draw(st.sampled_from(anywhere))
    outer = draw(st.sampled_from([None, *levels]))
    return m.TopologyRequest(required=outer, slice_topology=inner, slice_size=draw(st.integers(1, 3)))


@st.composite
def pod_set(draw: Any, name: str, levels: list[str]) -> m.PodSet:
    count = draw(st.integers(0, 6)) if draw(st.integers(0, 5)) == 0 else draw(st.integers(1, 4))
    requests = {"cpu": draw(st.integers(0, 4)) * MILLI}
    if draw(st.booleans()):
        requests["memory"] = draw(st.integers(0, 2)) * GI
    tr = draw(topology_request(levels))
    if tr is not None and tr.slice_size is not None and tr.slice_size > count:
        tr = m.TopologyRequest(
            required=tr.required, slice_topology=tr.slice_topology, slice_size=max(1, count)
        )
        if count == 0:
            tr = None
    return m.PodSet(
        name,
        count,
        requests,
        min_count=draw(st.sampled_from([None, None, 1, 2])) if name == "main" else None,
        node_selector={"pool": "a"} if draw(st.integers(0, 6)) == 0 else {},
        tolerations=[m.Toleration("dedicated", "Exists", "", "NoSchedule")]
        if draw(st.integers(0, 3)) == 0
        else [],
        topology_request=tr,
    )


def leaf_values(node: m.Node, levels: list[str]) -> tuple[str, ...]:
    return tuple(node.labels.get(lv, "") for lv in levels)


@st.composite
def placement(draw: Any, count: int, levels: list[str], nodes_: list[m.Node]) -> m.TopologyAssignment:
    """Some domains of existing nodes (or of a deleted one), ``count`` pods in all."""
    lv = [HOST] if levels[-1] == HOST else levels
    domains: dict[tuple[str, ...], int] = {}
    for _ in range(count):
        if nodes_ and draw(st.integers(0, 7)):
            values = leaf_values(draw(st.sampled_from(nodes_)), lv)
        else:
            values = tuple("gone" for _ in lv)
        domains[values] = domains.get(values, 0) + 1
    return m.TopologyAssignment(tuple(lv), tuple(sorted(domains.items())))


@st.composite
def workload(
    draw: Any, i: int, levels: list[str], nodes_: list[m.Node], cqs: list[m.ClusterQueue], admitted: bool
) -> m.Workload:
    names = ["main"] if draw(st.integers(0, 2)) else ["main", "aux"]
    pod_sets = [draw(pod_set(n, levels)) for n in names]
    cq = draw(st.sampled_from(cqs))
    wl = m.Workload(
        "default",
        f"w{i}",
        cq.name,
        pod_sets,
        T0 - draw(st.integers(0, 100)) * SECOND,
        # admitted ones mostly below the pending ones: preemption is the usual case
        priority=draw(st.integers(0, 1)) if admitted else draw(st.integers(0, 3)),
        uid=f"uid-w{i}",
    )
    if admitted:
        flavor_names = [f.name for g in cq.resource_groups for f in g.flavors]
        psas = []
        for ps in pod_sets:
            flv = draw(st.sampled_from(flavor_names))
            usage = {r: v * ps.count for r, v in ps.requests.items()}
            ta = draw(placement(ps.count, levels, nodes_)) if flv in FLAVORS and ps.count else None
            psas.append(m.PodSetAssignment(ps.name, ps.count, dict.fromkeys(usage, flv), usage, ta))
        wl.admission = m.Admission(cq.name, psas)
        wl.admission_ns = T0 - draw(st.integers(0, 50)) * SECOND
    return wl


@st.composite
def tas_scenarios(draw: Any) -> Scenario:
    state = m.ClusterState()
    levels = draw(st.sampled_from(LEVEL_SETS))
    state.topologies["topo"] = m.Topology("topo", list(levels))
    # a second topology over the same nodes, for the second flavor, now and then
    other = draw(st.sampled_from([None, *LEVEL_SETS]))
    if other is not None:
        state.topologies["other"] = m.Topology("other", list(other))
    ns = draw(nodes())
    state.nodes = {n.name: n for n in ns}
    for j in range(draw(st.integers(0, 4))):
        n = draw(st.sampled_from(ns))
        state.node_pods.append(
            m.NodePod("kube-system", f"p{j}", n.name, {"cpu": draw(st.integers(1, 4)) * MILLI})
        )
    state.resource_flavors["tas-a"] = m.ResourceFlavor("tas-a", {"pool": "a"}, topology_name="topo")
    b_labels = draw(st.sampled_from([{"pool": "b"}, {}]))
    b_tolerations = [m.Toleration("dedicated", "Exists", "", "NoSchedule")] if draw(st.booleans()) else []
    state.resource_flavors["tas-b"] = m.ResourceFlavor(
        "tas-b", b_labels, [], b_tolerations, topology_name="other" if other is not None else "topo"
    )
    state.resource_flavors["plain"] = m.ResourceFlavor("plain")
    cqs = []
    for c in range(draw(st.integers(1, 3))):
        flavors = draw(
            st.lists(st.sampled_from(["tas-a", "tas-b", "plain"]), min_size=1, max_size=3, unique=True)
        )
        quotas = [
            m.FlavorQuotas(
                f,
                [
                    m.ResourceQuota("cpu", draw(st.integers(0, 24)) * MILLI),
                    m.ResourceQuota("memory", draw(st.integers(0, 12)) * GI),
                ],
            )
            for f in flavors
        ]
        cq = m.ClusterQueue(
            f"cq{c}",
            [m.ResourceGroup(["cpu", "memory"], quotas)],
            cohort="co" if draw(st.booleans()) else None,
            namespace_selector=m.LabelSelector(),
            preemption=m.Preemption(
                draw(st.sampled_from(["Never", "LowerPriority", "LowerPriority"])),
                draw(st.sampled_from(["Never", "LowerPriority", "Any", "Any"])),
                "Never",
            ),
            flavor_fungibility=m.FlavorFungibility(
                draw(st.sampled_from(["MayStopSearch", "TryNextFlavor"])),
                draw(st.sampled_from(["TryNextFlavor", "MayStopSearch"])),
            ),
        )
        state.cluster_queues[cq.name] = cq
        state.local_queues[f"default/{cq.name}"] = m.LocalQueue("default", cq.name, cq.name)
        cqs.append(cq)
    n_wl = draw(st.integers(1, 8))
    for i in range(n_wl):
        wl = draw(workload(i, levels, ns, cqs, admitted=draw(st.booleans())))
        state.workloads[wl.key] = wl
    extra = [
        draw(workload(n_wl + i, levels, ns, cqs, admitted=False)) for i in range(draw(st.integers(0, 3)))
    ]
    ops: list[tuple[str, int]] = []
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["cycle", "cycle", "cycle", "add", "remove", "reconfigure", "evict"]))
        ops.append((op, draw(st.integers(0, 5))))
    added: set[int] = set()
    ops = [(op, i) for op, i in ops if op != "add" or (i < len(extra) and not (i in added or added.add(i)))]
    return Scenario(state, extra, ops)


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(tas_scenarios())
def test_native_matches_reference_with_topologies(sc: Scenario) -> None:
    run_both(sc)


@st.composite
def contended_tas_scenarios(draw: Any) -> Scenario:
    """tas_scenarios() narrowed to contention on the nodes: ready nodes of
    the first flavor's pool, ClusterQueues of that flavor alone (in one cohort,
    preempting), admitted workloads below the pending ones, several cycles."""
    sc: Scenario = draw(tas_scenarios())
    state = sc.state
    for n in state.nodes.values():
        n.labels["pool"] = "a"
        n.ready, n.unschedulable, n.taints = True, False, []
    for cq in state.cluster_queues.values():
        group = cq.resource_groups[0]
        group.flavors = [m.FlavorQuotas("tas-a", group.flavors[0].resources)]
        cq.cohort = "co"
        cq.preemption = m.Preemption(
            "LowerPriority", draw(st.sampled_from(["LowerPriority", "Any"])), "Never"
        )
    for wl in [*state.workloads.values(), *sc.extra]:
        for ps in wl.pod_sets:
            ps.node_selector = {}
        if wl.admission is not None:
            for psa in wl.admission.pod_set_assignments:
                psa.flavors = dict.fromkeys(psa.flavors, "tas-a")
            wl.priority = 0
        else:
            wl.priority = draw(st.integers(1, 3))
    sc.ops = [("cycle", 1)] * draw(st.integers(2, 4)) + sc.ops
    return sc


@settings(max_examples=EXAMPLES, suppress_health_check=SLOW_OK, deadline=None)
@given(contended_tas_scenarios())
def test_native_matches_reference_with_topologies_under_contention(sc: Scenario) -> None:
    run_both(sc)
