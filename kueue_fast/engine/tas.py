"""Topology Aware Scheduling, the front end both engines share: the
topology of every TAS flavor compiled to dense arrays (:class:`TasSpec`),
what a pod set asks for (:class:`TasPodSetRequest`), which leaves a pod set
may use (:class:`TasClassFlavor`), Kueue's flavor checks for TAS
(:func:`tas_flavor_rejection`), and the v1beta2 encoding of a placement
(:func:`v1beta2_assignment`).

Everything here depends only on names, labels and the input's objects, so it
is decided once, as the rest of the compiler does (engine/inputs.py); the engines
(``engine/reference/tas.py``, ``csrc/src/tas.cpp``) do the counting.

The facts, from kueue (the commit kueue-fast follows):
* a flavor's nodes: the Nodes matching its nodeLabels that carry every level
  label (pkg/util/tas NodeMatchesFlavor), schedulable and Ready (the nodes
  cache keeps only those, pkg/cache/scheduler/tas_nodes_cache.go sync);
* a leaf: its nodes' level values (the hostname alone when the lowest level is
  kubernetes.io/hostname), its capacity the sum of their allocatable minus the
  requests (plus one pod) of the running non-TAS pods on them
  (tas_topology_tree.go newTopologyTree, tas_flavor.go snapshot);
* per pod set and leaf, for hostname-lowest topologies only: the node's
  NoSchedule/NoExecute taints must be tolerated by the pod's and the flavor's
  tolerations, its labels must match the pod's nodeSelector and required node
  affinity (scheduling_simulator_default.go FindFeasibleNodes).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..api.model import (
    HOSTNAME_LABEL,
    ClusterQueue,
    ClusterState,
    Node,
    PodSet,
    ResourceFlavor,
    Taint,
    TopologyAssignment,
    TopologyRequest,
)

# TasPodSetRequest.level / slice_level codes besides a level name id
LEVEL_NONE, LEVEL_HIGHEST, LEVEL_LOWEST = -1, -2, -3
PODS = "pods"


@dataclass
class TasFlavorSpec:
    """One TAS flavor's topology. Domains are numbered level by level, each
    level sorted by the domains' level values, so that comparing two domains
    of one level (kueue compareDomainLevelValues) compares their ids and the
    children of a domain are contiguous."""

    flavor: int  # its id in Topology.flavor_names
    name: str
    topology: str  # the Topology's name, as Kueue's messages name it
    levels: list[int]  # level name ids (TasSpec.level_names), highest first
    hostname_lowest: bool
    level_start: list[int]  # n_levels + 1: level l has domains level_start[l]..level_start[l+1]-1
    parent: list[int]  # per domain, -1 for the highest level
    child_lo: list[int]  # per domain: children child_lo..child_hi-1 (none for leaves)
    child_hi: list[int]
    values: list[tuple[str, ...]]  # per domain: its level values
    free: list[list[int]]  # per leaf, per TAS resource: allocatable minus non-TAS usage
    leaf_host: list[int]  # per leaf: TasSpec.hostnames id (hostname-lowest), else -1
    leaf_node: list[Node]  # per leaf: its (first) node, for the per pod set checks

    @property
    def n_leaves(self) -> int:
        n = len(self.levels)
        return self.level_start[n] - self.level_start[n - 1] if n else 0

    @property
    def first_leaf(self) -> int:
        return self.level_start[len(self.levels) - 1]

    def leaf_values(self, leaf: int) -> tuple[str, ...]:
        return self.values[self.first_leaf + leaf]


@dataclass
class TasClassFlavor:
    """Which leaves of a flavor the pod sets of one flavor class may use, and
    Kueue's static exclusion counts for its not-fit message (formatReasons):
    ``eligible`` None when all."""

    eligible: bytes | None
    total_nodes: int
    static_reasons: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TasPodSetRequest:
    """What a pod set asks of the topology (kueue levelKeyWithImpliedFallback,
    isRequired, isUnconstrained, the slice layer), level names as
    TasSpec.level_names ids or LEVEL_* codes."""

    level: int
    required: bool
    unconstrained: bool
    slice_level: int
    slice_size: int


@dataclass
class TasSpec:
    """Every TAS flavor's topology, by TAS flavor index (flavor name order)."""

    resources: list[str]  # TAS resource names, sorted; "pods" among them
    level_names: list[str]
    flavors: list[TasFlavorSpec]
    flavor_of: dict[int, int]  # flavor id -> TAS flavor index
    hostnames: list[str]  # the leaves of hostname-lowest flavors (usage is shared by hostname)
    # per flavor class id (Topology.flavor_classes): per TAS flavor
    classes: list[list[TasClassFlavor]] = field(default_factory=list)

    def resource_vector(self, requests: dict[str, int]) -> list[int]:
        """Per TAS resource: the amount, -1 where not requested."""
        out = [-1] * len(self.resources)
        for r, v in requests.items():
            out[self._rid[r]] = max(0, v)
        return out

    def knows_resources(self, names: Iterable[str]) -> bool:
        return all(r in self._rid for r in names)

    def __post_init__(self) -> None:
        self._rid = {r: i for i, r in enumerate(self.resources)}
        self._level_id = {n: i for i, n in enumerate(self.level_names)}
        self._host_id = {h: i for i, h in enumerate(self.hostnames)}
        # leaves by domain id: a hostname-lowest flavor's is the hostname alone
        # (the level its topologyAssignments keep), any other's all its values
        self._leaf_index = [
            {
                (f.values[f.first_leaf + k][-1:] if f.hostname_lowest else f.values[f.first_leaf + k]): k
                for k in range(f.n_leaves)
            }
            for f in self.flavors
        ]

    def level_id(self, name: str) -> int:
        """A level name's id, or LEVEL_NONE when no flavor has it."""
        return self._level_id.get(name, LEVEL_NONE)

    def leaf_of(self, f: int, domain_id: str) -> int:
        """The leaf of TAS flavor f whose domain id (kueue TopologyDomainID:
        its values joined by ",") is domain_id, or -1."""
        flavor = self.flavors[f]
        values = (domain_id,) if flavor.hostname_lowest else tuple(domain_id.split(","))
        return self._leaf_index[f].get(values, -1)

    def host_of(self, domain_id: str) -> int:
        return self._host_id.get(domain_id, -1)


# --- the topology -----------------------------------------------------------------------------


def tas_flavors(state: ClusterState) -> list[ResourceFlavor]:
    """The TAS flavors whose Topology exists, by name (a flavor naming a
    missing Topology makes its ClusterQueues inactive: cluster/queue_readiness.py)."""
    return [
        rf
        for name, rf in sorted(state.resource_flavors.items())
        if rf.topology_name is not None and rf.topology_name in state.topologies
    ]


def schedulable_and_ready(node: Node) -> bool:
    return not node.unschedulable and node.ready


def node_matches_flavor(node: Node, flavor: ResourceFlavor, levels: list[str]) -> bool:
    """kueue pkg/util/tas NodeMatchesFlavor."""
    labels = node.labels
    return all(labels.get(k) == v for k, v in flavor.node_labels.items()) and all(
        lvl in labels for lvl in levels
    )


def compile_tas(state: ClusterState, flavor_names: list[str]) -> TasSpec | None:
    """The TAS flavors' topologies (None: no TAS flavor). Resources: every one
    a node has allocatable, a non-TAS pod or a pod set requests, and pods."""
    flavors = tas_flavors(state)
    if not flavors:
        return None
    fid = {n: i for i, n in enumerate(flavor_names)}
    resources: set[str] = {PODS}
    nodes = [n for _, n in sorted(state.nodes.items()) if schedulable_and_ready(n)]
    for n in nodes:
        resources.update(n.allocatable)
    for p in state.node_pods:
        resources.update(p.requests)
    for wl in state.workloads.values():
        for ps in wl.pod_sets:
            resources.update(ps.requests)
    res_names = sorted(resources)
    rid = {r: i for i, r in enumerate(res_names)}
    level_names: list[str] = []
    hostnames: set[str] = set()
    specs: list[TasFlavorSpec] = []
    pod_usage: dict[str, list[int]] = {}
    for p in state.node_pods:
        row = pod_usage.setdefault(p.node_name, [0] * len(res_names))
        for r, v in p.requests.items():
            row[rid[r]] += v
        row[rid[PODS]] += 1  # OnePodRequest
    for rf in flavors:
        topo = state.topologies[rf.topology_name or ""]
        for lvl in topo.levels:
            if lvl not in level_names:
                level_names.append(lvl)
        spec = _flavor_spec(rf, fid[rf.name], topo.name, topo.levels, nodes, rid, pod_usage)
        spec.levels = [level_names.index(lvl) for lvl in topo.levels]
        if spec.hostname_lowest:
            hostnames.update(v[-1] for v in spec.values[spec.first_leaf :])
        specs.append(spec)
    host_list = sorted(hostnames)
    host_id = {h: i for i, h in enumerate(host_list)}
    for spec in specs:
        if spec.hostname_lowest:
            spec.leaf_host = [host_id[spec.leaf_values(k)[-1]] for k in range(spec.n_leaves)]
    return TasSpec(
        resources=res_names,
        level_names=level_names,
        flavors=specs,
        flavor_of={s.flavor: i for i, s in enumerate(specs)},
        hostnames=host_list,
    )


def _flavor_spec(
    rf: ResourceFlavor,
    flavor_id: int,
    topology: str,
    levels: list[str],
    nodes: list[Node],
    rid: dict[str, int],
    pod_usage: dict[str, list[int]],
) -> TasFlavorSpec:
    """kueue newTopologyTree over the flavor's nodes, numbered as TasFlavorSpec says."""
    hostname_lowest = bool(levels) and levels[-1] == HOSTNAME_LABEL
    n_res = len(rid)
    leaves: dict[tuple[str, ...], list[int]] = {}
    leaf_node: dict[tuple[str, ...], Node] = {}
    for node in nodes:  # by name (Kueue's node map has no order)
        if not node_matches_flavor(node, rf, levels):
            continue
        node_values = tuple(node.labels[lvl] for lvl in levels)
        # a hostname leaf is known by the hostname alone (two nodes with one hostname share it)
        key = (node_values[-1],) if hostname_lowest else node_values
        cap = leaves.get(key)
        if cap is None:
            cap = leaves[key] = [0] * n_res
            leaf_node[key] = node
        for name, amount in node.allocatable.items():
            cap[rid[name]] += amount
        used = pod_usage.get(node.name)
        if used is not None:
            for i in range(n_res):
                cap[i] -= used[i]
    # the domains of each level, sorted by level values
    n_levels = len(levels)
    full_values = {k: tuple(leaf_node[k].labels[lvl] for lvl in levels) for k in leaves}
    per_level: list[list[tuple[str, ...]]] = []
    for lvl in range(n_levels):
        per_level.append(sorted({v[: lvl + 1] for v in full_values.values()}))
    level_start = [0]
    index: dict[tuple[str, ...], int] = {}
    values: list[tuple[str, ...]] = []
    for lvl in range(n_levels):
        for domain in per_level[lvl]:
            index[domain] = len(values)
            values.append(domain)
        level_start.append(len(values))
    # Sorting leaves by their full values is sorting them by hostname alone
    # only within one parent (kueue compareDomainLevelValues): the full values
    # give the order, the hostname the output.
    parent = [-1] * len(values)
    child_lo = [0] * len(values)
    child_hi = [0] * len(values)
    for d, domain in enumerate(values):
        if len(domain) > 1:
            p = index[domain[:-1]]
            parent[d] = p
            if child_hi[p] == 0:
                child_lo[p] = d
            child_hi[p] = d + 1
    first_leaf = level_start[n_levels - 1] if n_levels else 0
    by_full = {full_values[k]: k for k in leaves}
    leaf_keys = [by_full[values[d]] for d in range(first_leaf, len(values))]
    return TasFlavorSpec(
        flavor=flavor_id,
        name=rf.name,
        topology=topology,
        levels=[],
        hostname_lowest=hostname_lowest,
        level_start=level_start,
        parent=parent,
        child_lo=child_lo,
        child_hi=child_hi,
        values=values,
        free=[leaves[k] for k in leaf_keys],
        leaf_host=[-1] * len(leaf_keys),
        leaf_node=[leaf_node[k] for k in leaf_keys],
    )


# --- pod sets ------------------------------------------------------------------------------------


def cluster_queue_tas_only(cq: ClusterQueue, state: ClusterState) -> bool:
    """kueue clusterQueue.isTASOnly: every flavor of every resource group is a
    TAS flavor (vacuously true without resource groups)."""
    return all(
        (rf := state.resource_flavors.get(f.name)) is not None and rf.topology_name is not None
        for g in cq.resource_groups
        for f in g.flavors
    )


def pod_set_request(tr: TopologyRequest | None, implied: bool, spec: TasSpec) -> TasPodSetRequest | None:
    """What a pod set asks for, None when it asks for no TAS (kueue
    isTASRequested: explicitly, or implied by a TAS-only ClusterQueue)."""
    if tr is None or not tr.explicit:
        if not implied:
            return None
        return TasPodSetRequest(LEVEL_LOWEST, False, True, LEVEL_LOWEST, 1)
    slice_only = tr.required is None and tr.preferred is None and tr.slice_topology is not None
    if tr.required is not None:
        level = spec.level_id(tr.required)
    elif tr.preferred is not None:
        level = spec.level_id(tr.preferred)
    elif slice_only:
        level = LEVEL_HIGHEST
    elif tr.unconstrained:
        level = LEVEL_LOWEST
    else:
        level = LEVEL_NONE
    unconstrained = bool(tr.unconstrained) or slice_only
    slice_level = spec.level_id(tr.slice_topology) if tr.slice_topology is not None else LEVEL_LOWEST
    return TasPodSetRequest(level, tr.required is not None, unconstrained, slice_level, tr.slice_size or 1)


def has_level(tr: TopologyRequest, levels: list[str]) -> bool:
    """kueue TASFlavorSnapshot.HasLevel: the requested level and the slice
    level are levels of the flavor's topology."""
    if tr.required is not None:
        main: str | None = tr.required
    elif tr.preferred is not None:
        main = tr.preferred
    elif tr.slice_topology is not None:
        main = levels[0] if levels else None
    elif tr.unconstrained:
        main = levels[-1] if levels else None
    else:
        main = None
    if main is None:
        return False
    slice_key = tr.slice_topology if tr.slice_topology is not None else (levels[-1] if levels else None)
    return main in levels and slice_key in levels


def tas_flavor_rejection(
    ps: PodSet,
    rf: ResourceFlavor,
    covered: Iterable[str],
    implied: bool,
    state: ClusterState,
) -> str | None:
    """kueue flavorassigner checkPodSetAndFlavorMatchForTAS for the flavor
    (``covered``: the resources of its resource group in the ClusterQueue)."""
    tr = ps.topology_request
    explicit = tr is not None and tr.explicit
    if explicit or implied:
        if implied and not explicit:
            return None
        assert tr is not None
        if rf.topology_name is None:
            if not set(ps.requests).intersection(covered):
                return None  # the flavor may still give quota-only resources
            return f'Flavor "{rf.name}" does not support TopologyAwareScheduling'
        topo = state.topologies.get(rf.topology_name)
        if topo is None:
            return f'Flavor "{rf.name}" information missing in TAS cache'
        if not has_level(tr, topo.levels):
            return f'Flavor "{rf.name}" does not contain the requested level'
        return None
    if rf.topology_name is not None:
        return f'Flavor "{rf.name}" supports only TopologyAwareScheduling'
    return None


# --- which leaves a pod set may use -------------------------------------------------------------


def _taint_text(t: Taint) -> str:
    """corev1 Taint.ToString."""
    return f"{t.key}:{t.effect}" if not t.value else f"{t.key}={t.value}:{t.effect}"


def class_flavors(ps: PodSet, spec: TasSpec, state: ClusterState) -> list[TasClassFlavor]:
    """Per TAS flavor, the leaves pods of this pod set may go to (kueue
    defaultSimulatorSnapshot.FindFeasibleNodes: taints, then nodeSelector, then
    required node affinity; hostname-lowest topologies only) and the counts
    of the leaves left out, as Kueue's message lists them."""
    from ..api.node_affinity import node_matches_affinity

    out: list[TasClassFlavor] = []
    for flavor in spec.flavors:
        n = flavor.n_leaves
        if not flavor.hostname_lowest:
            out.append(TasClassFlavor(None, n))
            continue
        rf = state.resource_flavors[flavor.name]
        tolerations = list(ps.tolerations) + list(rf.tolerations)
        eligible = bytearray(n)
        selector = affinity = 0
        taints: dict[str, int] = {}
        for k, node in enumerate(flavor.leaf_node):
            bad = next(
                (
                    t
                    for t in node.taints
                    if t.effect in ("NoSchedule", "NoExecute")
                    and not any(tol.tolerates(t) for tol in tolerations)
                ),
                None,
            )
            if bad is not None:
                key = _taint_text(bad)
                taints[key] = taints.get(key, 0) + 1
                continue
            if any(node.labels.get(lk) != lv for lk, lv in ps.node_selector.items()):
                selector += 1
                continue
            if not node_matches_affinity(ps.required_affinity, node.labels, node.name):
                affinity += 1
                continue
            eligible[k] = 1
        reasons = []
        if selector:
            reasons.append(f"nodeSelector: {selector}")
        if affinity:
            reasons.append(f"affinity: {affinity}")
        reasons += [f"taint {json.dumps(t)}: {c}" for t, c in sorted(taints.items())]
        out.append(TasClassFlavor(None if all(eligible) else bytes(eligible), n, reasons))
    return out


# --- the v1beta2 encoding (pkg/util/tas/tas_assignment.go V1Beta2From) ----------------------------

# the v1beta2 slice limits (maxDomainsPerTopologyAssignmentSlice, maxTopologyAssignmentSlices)
_MAX_DOMAINS_PER_SLICE = 100_000
_MAX_SLICES = 1_000


def _compact_values(values: list[str]) -> dict[str, object]:
    """fillSingleCompactSliceValues: one value for all, or a common prefix
    and suffix around each root."""
    prefix = suffix = values[0]
    max_len = min_len = len(values[0])
    for s in values[1:]:
        n = len(s)
        min_len, max_len = min(min_len, n), max(max_len, n)
        prefix = prefix[:n]
        if n < len(suffix):
            suffix = suffix[len(suffix) - n :]
        i = 0
        while i < len(prefix) and s[i] == prefix[i]:
            i += 1
        prefix = prefix[:i]
        i = 0
        while i < len(suffix) and s[len(s) - 1 - i] == suffix[len(suffix) - 1 - i]:
            i += 1
        suffix = suffix[len(suffix) - i :]
    if len(prefix) == max_len:
        return {"universal": prefix}
    if len(prefix) + len(suffix) > min_len:
        prefix = prefix[: min_len - len(suffix)]
    ind: dict[str, object] = {}
    if prefix:
        ind["prefix"] = prefix
    if suffix:
        ind["suffix"] = suffix
    roots = [s[len(prefix) : len(s) - len(suffix)] for s in values]
    if roots:
        ind["roots"] = roots
    return {"individual": ind}


def _compact_slice(levels: tuple[str, ...], domains: list[tuple[tuple[str, ...], int]]) -> dict[str, object]:
    """compactSliceEncoding."""
    counts = [c for _, c in domains]
    pod_counts: dict[str, object] = (
        {"universal": counts[0]} if all(c == counts[0] for c in counts) else {"individual": counts}
    )
    return {
        "domainCount": len(domains),
        "valuesPerLevel": [_compact_values([v[i] for v, _ in domains]) for i in range(len(levels))],
        "podCounts": pod_counts,
    }


def _reusable_prefix_keys(domains: list[tuple[tuple[str, ...], int]]) -> list[str] | None:
    """reusableHostnamePrefixKeys: per domain its longest '-'-ended hostname
    prefix found at least twice, backing off to shorter ones until the runs
    fit the slice limit; None when none does."""
    hosts = [v[-1] for v, _ in domains]
    ends: list[list[int]] = []
    seen: dict[str, int] = {}
    for h in hosts:
        mine = [e + 1 for e in range(len(h) - 1) if h[e] == "-"]
        ends.append(mine)
        for e in mine:
            seen[h[:e]] = min(2, seen.get(h[:e], 0) + 1)
    max_depth = max((len(e) for e in ends), default=0)
    for depth in range(max_depth, 0, -1):
        keys = []
        for h, mine in zip(hosts, ends, strict=True):
            key = ""
            for j in range(min(len(mine), depth) - 1, -1, -1):
                if seen[h[: mine[j]]] >= 2:
                    key = h[: mine[j]]
                    break
            keys.append(key)
        count, start = 0, 0
        for i in range(1, len(keys)):
            if keys[i] != keys[start]:
                count += -(-(i - start) // _MAX_DOMAINS_PER_SLICE)
                start = i
        count += -(-(len(keys) - start) // _MAX_DOMAINS_PER_SLICE)
        if count <= _MAX_SLICES:
            return keys
    return None


def _go_json_len(obj: object) -> int:
    """The length of Go's json.Marshal of the same value (compact; the
    values here are ASCII label values, which neither escapes)."""
    return len(json.dumps(obj, separators=(",", ":")).encode())


def v1beta2_assignment(ta: TopologyAssignment) -> dict[str, object]:
    """kueue V1Beta2From with TASAssignmentsEncodingByHostnamePrefix (beta,
    on): runs of hostnames sharing a reusable prefix as slices, unless one
    slice for all is shorter in JSON."""
    levels = ta.levels
    domains = list(ta.domains)
    out: dict[str, object] = {"levels": list(levels)}
    if not domains:
        return out
    keys = (
        _reusable_prefix_keys(domains)
        if len(domains) > 1 and levels and levels[-1] == HOSTNAME_LABEL
        else None
    )
    runs: list[list[tuple[tuple[str, ...], int]]] = []
    if not keys:
        runs = [domains]
    else:
        start = 0
        for i in range(1, len(domains)):
            if keys[i] != keys[start]:
                runs.append(domains[start:i])
                start = i
        runs.append(domains[start:])
    slices = [
        _compact_slice(levels, run[i : i + _MAX_DOMAINS_PER_SLICE])
        for run in runs
        for i in range(0, len(run), _MAX_DOMAINS_PER_SLICE)
    ]
    prefixed = {"levels": list(levels), "slices": slices}
    if len(slices) <= 1 or len(domains) > _MAX_DOMAINS_PER_SLICE:
        return prefixed
    single = {"levels": list(levels), "slices": [_compact_slice(levels, domains)]}
    return single if _go_json_len(single) < _go_json_len(prefixed) else prefixed
