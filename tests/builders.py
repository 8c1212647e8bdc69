"""Small builders for table-driven tests of the scheduler, and the checks they share.

The tables that port Kueue's unit tests (``test_kueue_*_table.py``) describe
queues and workloads with these builders, run one scheduling cycle through the
public API (:class:`kueue_fast.Cluster`) and compare what happened with what
Kueue's own test expects, failing with a want-versus-got listing.

    cq("c1").cohort("cohort").flavor("default", cpu=quota("6", borrow="6"))
        .preemption(within="LowerPriority", reclaim="LowerPriority")
    wl("low").priority(-1).request(cpu="2").reserve("c1", "default")

Quantities are written as Kubernetes quantities ("500m", "3Gi"); times are
nanoseconds, relative to :data:`NOW` (``NOW - 15 * SECOND``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from kueue_fast import Cluster, Decision
from kueue_fast.api.model import (
    Admission,
    ClusterQueue,
    ClusterState,
    Cohort,
    Configuration,
    FairSharingConfig,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LabelSelectorRequirement,
    LocalQueue,
    Namespace,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PodSet,
    PodSetAssignment,
    Preemption,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    Taint,
    Toleration,
    Workload,
)
from kueue_fast.api.quantity import parse_quantity
from kueue_fast.engine.select import native_available

SECOND = 1_000_000_000
# "now" of every table: Kueue's tests take time.Now(); any fixed instant will do.
NOW = 1_750_000_000 * SECOND

# The human part of the preemption message, per Kueue preemption reason
# (kueue pkg/scheduler/preemption/preemption.go humanReadablePreemptionReasons).
IN_CLUSTER_QUEUE = "prioritization in the ClusterQueue"
IN_COHORT_RECLAMATION = "reclamation within the cohort"
IN_COHORT_RECLAIM_WHILE_BORROWING = "reclamation within the cohort while borrowing"
IN_COHORT_FAIR_SHARING = "Fair Sharing within the cohort"


# --- engines ---------------------------------------------------------------------------------


NATIVE_AVAILABLE = native_available()
ENGINES = ("reference", "native")


def engine_marks(
    engine: str, differs: str | None = None, unverified: str | None = None
) -> list[pytest.MarkDecorator]:
    """Marks for one (case, engine) pair.

    * native, before ``kueue_fast.engine.native`` exists: a lenient xfail (it stops
      applying by itself the day the module imports);
    * a case where the reference engine is known to decide differently from
      Kueue (``differs``): strict xfail on the reference engine, lenient on the
      native one (which may already get it right);
    * a case whose Kueue expectation may be out of date (``unverified``: the
      table it comes from predates a Kueue change that plausibly alters it):
      lenient xfail on both engines, until the current table is checked."""
    marks = []
    if engine == "native" and not NATIVE_AVAILABLE:
        marks.append(pytest.mark.xfail(reason="native engine not built yet", strict=False))
    elif differs:
        strict = engine == "reference"
        marks.append(
            pytest.mark.xfail(reason=f"reference engine differs from Kueue: {differs}", strict=strict)
        )
    elif unverified:
        marks.append(
            pytest.mark.xfail(
                reason=f"Kueue expectation not verified against its current table: {unverified}", strict=False
            )
        )
    return marks


def divergence_marks(
    engine: str, reason: str | None, engines: Sequence[str] = ENGINES
) -> list[pytest.MarkDecorator]:
    """Marks for a case where kueue-fast is known to decide differently from Kueue
    on ``engines``: a strict xfail there (it must fail until the engine is fixed,
    then the mark goes), nothing on the other engines. ``reason`` says what Kueue
    expects, what we do and the Kueue source that decides it."""
    if engine == "native" and not NATIVE_AVAILABLE:
        return [pytest.mark.xfail(reason="native engine not built yet", strict=False)]
    if reason and engine in engines:
        return [pytest.mark.xfail(reason=f"differs from Kueue: {reason}", strict=True)]
    return []


def slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


# --- quantities --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Quota:
    """nominalQuota, borrowingLimit, lendingLimit as Kueue's MakeFlavorQuotas.Resource takes them."""

    nominal: str
    borrow: str | None = None
    lend: str | None = None


def quota(nominal: str | int, borrow: str | int | None = None, lend: str | int | None = None) -> Quota:
    return Quota(str(nominal), None if borrow is None else str(borrow), None if lend is None else str(lend))


def amount(resource: str, text: str | int) -> int:
    return parse_quantity(str(text), resource)


def flavor_quotas(name: str, resources: Mapping[str, str | int | Quota]) -> FlavorQuotas:
    out = []
    for res, q in resources.items():
        if not isinstance(q, Quota):
            q = quota(q)
        out.append(
            ResourceQuota(
                res,
                amount(res, q.nominal),
                None if q.borrow is None else amount(res, q.borrow),
                None if q.lend is None else amount(res, q.lend),
            )
        )
    return FlavorQuotas(name, out)


def fq(name: str, **resources: str | int | Quota) -> FlavorQuotas:
    """``fq("default", cpu="6", memory=quota("3Gi", borrow="3Gi"))``; for resource
    names that are not identifiers: ``fq("model-a", **{"example.com/gpu": "20"})``."""
    return flavor_quotas(name, resources)


# --- ResourceFlavor ----------------------------------------------------------------------------


def flavor(
    name: str,
    labels: Mapping[str, str] | None = None,
    taints: Sequence[Taint] = (),
    tolerations: Sequence[Toleration] = (),
) -> ResourceFlavor:
    return ResourceFlavor(name, dict(labels or {}), list(taints), list(tolerations))


# --- ClusterQueue ------------------------------------------------------------------------------


class ClusterQueueBuilder:
    """A ClusterQueue as Kueue's utiltesting.MakeClusterQueue makes it: every
    namespace eligible (``namespaceSelector: {}``), BestEffortFIFO, default
    preemption and fungibility."""

    def __init__(self, name: str) -> None:
        self._cq = ClusterQueue(name, namespace_selector=LabelSelector())

    @property
    def name(self) -> str:
        return self._cq.name

    def cohort(self, name: str) -> ClusterQueueBuilder:
        self._cq.cohort = name
        return self

    def resource_group(self, *flavors: FlavorQuotas) -> ClusterQueueBuilder:
        covered = [r.name for r in flavors[0].resources] if flavors else []
        self._cq.resource_groups.append(ResourceGroup(covered, list(flavors)))
        return self

    def flavor(self, name: str, **resources: str | int | Quota) -> ClusterQueueBuilder:
        """A resource group with a single flavor."""
        return self.resource_group(flavor_quotas(name, resources))

    def preemption(
        self,
        within: str = "Never",
        reclaim: str = "Never",
        borrow_within: str = "Never",
        threshold: int | None = None,
    ) -> ClusterQueueBuilder:
        self._cq.preemption = Preemption(within, reclaim, borrow_within, threshold)
        return self

    def fungibility(
        self,
        when_can_borrow: str = "MayStopSearch",
        when_can_preempt: str = "TryNextFlavor",
        preference: str | None = None,
    ) -> ClusterQueueBuilder:
        self._cq.flavor_fungibility = FlavorFungibility(when_can_borrow, when_can_preempt, preference)
        return self

    def strict_fifo(self) -> ClusterQueueBuilder:
        self._cq.queueing_strategy = "StrictFIFO"
        return self

    def namespace_selector(self, selector: LabelSelector | None) -> ClusterQueueBuilder:
        self._cq.namespace_selector = selector
        return self

    def weight(self, w: float) -> ClusterQueueBuilder:
        self._cq.fair_weight = w
        return self

    def stop(self, policy: str) -> ClusterQueueBuilder:
        self._cq.stop_policy = policy
        return self

    def obj(self) -> ClusterQueue:
        return self._cq


def cq(name: str) -> ClusterQueueBuilder:
    return ClusterQueueBuilder(name)


def selector_in(key: str, *values: str) -> LabelSelector:
    return LabelSelector(match_expressions=(LabelSelectorRequirement(key, "In", tuple(values)),))


# --- Cohort ------------------------------------------------------------------------------------


class CohortBuilder:
    def __init__(self, name: str) -> None:
        self._co = Cohort(name)

    def parent(self, name: str) -> CohortBuilder:
        self._co.parent = name
        return self

    def flavor(self, name: str, **resources: str | int | Quota) -> CohortBuilder:
        fqs = flavor_quotas(name, resources)
        self._co.resource_groups.append(ResourceGroup([r.name for r in fqs.resources], [fqs]))
        return self

    def resource_group(self, *flavors: FlavorQuotas) -> CohortBuilder:
        """A resource group with several flavors (the first one names the covered resources)."""
        covered = [r.name for r in flavors[0].resources] if flavors else []
        self._co.resource_groups.append(ResourceGroup(covered, list(flavors)))
        return self

    def weight(self, w: float) -> CohortBuilder:
        self._co.fair_weight = w
        return self

    def obj(self) -> Cohort:
        return self._co


def cohort(name: str) -> CohortBuilder:
    return CohortBuilder(name)


# --- Workload ----------------------------------------------------------------------------------


def node_affinity(*terms: Sequence[tuple[str, str, Sequence[str]]]) -> tuple[NodeSelectorTerm, ...]:
    """Required node affinity: each term a list of (key, operator, values); terms are ORed."""
    return tuple(
        NodeSelectorTerm(tuple(NodeSelectorRequirement(k, op, tuple(vals)) for k, op, vals in term))
        for term in terms
    )


@dataclass
class _PodSetSpec:
    name: str
    count: int
    requests: dict[str, str]
    min_count: int | None = None
    node_selector: dict[str, str] = field(default_factory=dict)
    affinity: tuple[NodeSelectorTerm, ...] | None = None
    tolerations: list[Toleration] = field(default_factory=list)


class WorkloadBuilder:
    """A Workload as Kueue's utiltesting.MakeWorkload makes it; ``request`` adds to
    the single pod set "main" (count 1), ``pod_set`` declares pod sets explicitly."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self.name = name
        self.namespace = namespace
        self._queue: str | None = None
        self._priority = 0
        self._created = NOW
        self._pod_sets: list[_PodSetSpec] = []
        self._reserve: tuple[str, str | dict[str, str], dict[str, str] | None, int] | None = None
        self._explicit: list[tuple[str, dict[str, str], dict[str, str], int | None]] | None = None
        self._reclaimable: dict[str, int] = {}

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def queue(self, name: str) -> WorkloadBuilder:
        self._queue = name
        return self

    def priority(self, p: int) -> WorkloadBuilder:
        self._priority = p
        return self

    def created(self, ns: int) -> WorkloadBuilder:
        self._created = ns
        return self

    def request(self, **requests: str | int) -> WorkloadBuilder:
        if not self._pod_sets:
            self._pod_sets.append(_PodSetSpec("main", 1, {}))
        self._pod_sets[0].requests.update({k: str(v) for k, v in requests.items()})
        return self

    def pod_set(
        self,
        name: str,
        count: int,
        requests: Mapping[str, str | int] | None = None,
        min_count: int | None = None,
        node_selector: Mapping[str, str] | None = None,
        affinity: tuple[NodeSelectorTerm, ...] | None = None,
        tolerations: Sequence[Toleration] = (),
    ) -> WorkloadBuilder:
        self._pod_sets.append(
            _PodSetSpec(
                name,
                count,
                {k: str(v) for k, v in (requests or {}).items()},
                min_count,
                dict(node_selector or {}),
                affinity,
                list(tolerations),
            )
        )
        return self

    def reclaimable(self, pod_set: str, count: int) -> WorkloadBuilder:
        """status.reclaimablePods: ``count`` pods of ``pod_set`` finished for good."""
        self._reclaimable[pod_set] = count
        return self

    def reserve(
        self,
        cluster_queue: str,
        flavors: str | dict[str, str],
        usage: Mapping[str, str | int] | None = None,
        at: int = NOW,
    ) -> WorkloadBuilder:
        """Quota reserved in ``cluster_queue`` at ``at`` (Kueue's ReserveQuotaAt /
        SimpleReserveQuota): every requested resource of every pod set in one
        flavor, or per pod set (``{"one": "on-demand", "two": "spot"}``); usage
        is the request times the count unless ``usage`` overrides it (single pod set)."""
        self._reserve = (
            cluster_queue,
            flavors,
            None if usage is None else {k: str(v) for k, v in usage.items()},
            at,
        )
        return self

    def obj(self) -> Workload:
        pod_sets = [
            PodSet(
                ps.name,
                ps.count,
                {r: amount(r, v) for r, v in ps.requests.items()},
                min_count=ps.min_count,
                node_selector=ps.node_selector,
                required_affinity=ps.affinity,
                tolerations=ps.tolerations,
                reclaimable=self._reclaimable.get(ps.name, 0),
            )
            for ps in self._pod_sets
        ]
        wl = Workload(
            namespace=self.namespace,
            name=self.name,
            queue_name=self._queue or "",
            pod_sets=pod_sets,
            creation_ns=self._created,
            priority=self._priority,
            uid=f"{self.namespace}/{self.name}",
        )
        if self._reserve is not None:
            cq_name, flavors, usage, at = self._reserve
            psas = []
            for ps in pod_sets:
                flv = flavors if isinstance(flavors, str) else flavors[ps.name]
                if usage is not None:
                    totals = {r: amount(r, v) for r, v in usage.items()}
                else:
                    totals = {r: v * ps.count for r, v in ps.requests.items()}
                psas.append(PodSetAssignment(ps.name, ps.count, {r: flv for r in totals}, totals))
            wl.admission = Admission(cq_name, psas)
            wl.admission_ns = at
            if not self._queue:
                wl.queue_name = cq_name
        return wl


def wl(name: str, namespace: str = "default") -> WorkloadBuilder:
    return WorkloadBuilder(name, namespace)


class ManifestWorkload:
    """A Workload read from its manifest by the loader, as ``kueue-fast schedule``
    reads it: for facts that live in the pod template (limits, init containers)
    and the messages the loader derives from them. Offers what the tables use of
    a :class:`WorkloadBuilder` (``name``, ``namespace``, ``key``, ``obj()``)."""

    def __init__(
        self,
        name: str,
        namespace: str,
        queue: str,
        pod_sets: Sequence[Mapping[str, Any]],
        priority: int = 0,
        created: int = NOW,
    ) -> None:
        self.name = name
        self.namespace = namespace
        self._manifest = {
            "apiVersion": "kueue.x-k8s.io/v1beta2",
            "kind": "Workload",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"queueName": queue, "priority": priority, "podSets": list(pod_sets)},
        }
        self._created = created

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def obj(self) -> Workload:
        from kueue_fast.loader import parse_workload

        return parse_workload(self._manifest, default_creation_ns=self._created)


def container_pod_set(
    name: str,
    count: int,
    requests: Mapping[str, str],
    limits: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A manifest pod set with one container of these requests and limits."""
    resources: dict[str, Any] = {"requests": dict(requests)}
    if limits:
        resources["limits"] = dict(limits)
    return {
        "name": name,
        "count": count,
        "template": {"spec": {"containers": [{"name": "c", "resources": resources}]}},
    }


# --- Kueue's pending messages ------------------------------------------------------------------
#
# The words of Kueue's flavor assigner and scheduler (pkg/scheduler/flavorassigner
# Status/Assignment.Message, pkg/scheduler/scheduler.go), for the tables to state
# expected QuotaReserved=False messages compactly.

NO_LONGER_FITS = "Workload no longer fits after processing another workload"


def flavors_message(pod_set: str, *reasons: str, preempting: int = 0) -> str:
    """``couldn't assign flavors to pod set P: <reasons, sorted, comma-joined>``,
    with the scheduler's ``. Pending the preemption of N workload(s)`` when the
    workload issued N preemptions."""
    text = f"couldn't assign flavors to pod set {pod_set}: " + ", ".join(sorted(reasons))
    return text + (f". Pending the preemption of {preempting} workload(s)" if preempting else "")


def unused_quota(resource: str, flavor_name: str, more: str | int) -> str:
    return f"insufficient unused quota for {resource} in flavor {flavor_name}, {more} more needed"


def over_max_quota(
    resource: str, flavor_name: str, before: str | int, request: str | int, capacity: str | int
) -> str:
    return (
        f"insufficient quota for {resource} in flavor {flavor_name}, previously considered podsets requests "
        f"({before}) + current podset request ({request}) > maximum capacity ({capacity})"
    )


# --- the whole cluster -------------------------------------------------------------------------


def build_state(
    flavors: Iterable[ResourceFlavor | str],
    cluster_queues: Iterable[ClusterQueueBuilder | ClusterQueue],
    workloads: Iterable[WorkloadBuilder],
    cohorts: Iterable[CohortBuilder] = (),
    local_queues: Iterable[tuple[str, str, str]] = (),
    namespaces: Mapping[str, Mapping[str, str]] | None = None,
    fair_sharing: Sequence[str] | bool | None = None,
    default_namespace: str | None = "default",
    feature_gates: Mapping[str, bool] | None = None,
) -> ClusterState:
    """The ClusterState of a case. Every ClusterQueue gets a LocalQueue of its
    own name in ``default_namespace`` (unless None); ``local_queues`` adds
    (namespace, name, cluster queue) triples. ``fair_sharing``: True for
    Kueue's default strategies, or the list of strategies."""
    state = ClusterState()
    for f in flavors:
        rf = f if isinstance(f, ResourceFlavor) else ResourceFlavor(f)
        state.resource_flavors[rf.name] = rf
    for c in cluster_queues:
        obj = c.obj() if isinstance(c, ClusterQueueBuilder) else c
        state.cluster_queues[obj.name] = obj
        if default_namespace is not None:
            state.local_queues[f"{default_namespace}/{obj.name}"] = LocalQueue(
                default_namespace, obj.name, obj.name
            )
    for co in cohorts:
        obj = co.obj()
        state.cohorts[obj.name] = obj
    for ns, name, cq_name in local_queues:
        state.local_queues[f"{ns}/{name}"] = LocalQueue(ns, name, cq_name)
    for ns, labels in (namespaces or {}).items():
        state.namespaces[ns] = Namespace(ns, {"kubernetes.io/metadata.name": ns, **labels})
    for w in workloads:
        obj = w.obj()
        state.workloads[obj.key] = obj
    if fair_sharing:
        cfg = FairSharingConfig() if fair_sharing is True else FairSharingConfig(list(fair_sharing))
        state.configuration = Configuration(fair_sharing=cfg)
    state.configuration.feature_gates.update(feature_gates or {})
    return state


def run_one_cycle(state: ClusterState, engine: str) -> dict[str, Decision]:
    cluster = Cluster(state, engine=engine)
    cluster.run_cycle()
    return {d.key: d for d in cluster.decisions()}


# --- comparing outcomes ------------------------------------------------------------------------


def describe(d: Decision) -> str:
    if d.state == "admitted":
        parts = [
            f"{ps.name}x{ps.count}:" + ",".join(f"{r}={f}" for r, f in sorted(ps.flavors.items()))
            for ps in d.pod_sets
        ]
        return f"admitted in {d.cluster_queue} [{' '.join(parts)}]"
    if d.state == "evicted":
        return f"evicted by {d.preempted_by}: {d.message}"
    return f"{d.state}: {d.message}"


def fail_with_diff(
    title: str, want: Mapping[str, Any], got: Mapping[str, Any], decisions: Mapping[str, Decision]
) -> None:
    lines = [f"{title} (want vs got):"]
    for k in sorted(set(want) | set(got)):
        w, g = want.get(k, "-"), got.get(k, "-")
        mark = "  " if w == g else "! "
        lines.append(f"{mark}{k}: want {w!r}, got {g!r}")
    lines.append("decisions:")
    lines.extend(f"  {k}: {describe(d)}" for k, d in sorted(decisions.items()))
    pytest.fail("\n".join(lines), pytrace=False)


def cluster_queue_path(state: ClusterState, cluster_queue: str) -> str:
    """Kueue's path of a ClusterQueue in its cohort tree, as preemption messages
    print it: ``/root/.../cohort/cq`` (``/cq`` without a cohort)."""
    names = [cluster_queue]
    parent = state.cluster_queues[cluster_queue].cohort
    seen: set[str] = set()
    while parent and parent not in seen:
        seen.add(parent)
        names.append(parent)
        co = state.cohorts.get(parent)
        parent = co.parent if co else None
    return "/" + "/".join(reversed(names))


def preemption_outcome(decisions: Mapping[str, Decision], incoming: str) -> dict[str, str]:
    """Victim key -> "<human reason> (<preemptor path> -> <preemptee path>)", read
    from the eviction message, plus the incoming workload's own state under its key."""
    got: dict[str, str] = {}
    for k, d in decisions.items():
        if k == incoming:
            got[k] = d.state
        elif d.state == "evicted":
            m = re.search(r" due to (.*?); preemptor path: (\S+); preemptee path: (\S+)$", d.message)
            text = (
                f"{m.group(1)} ({m.group(2)} -> {m.group(3)})" if m else f"<unexpected message {d.message!r}>"
            )
            by = "" if d.preempted_by == incoming else f" (preempted by {d.preempted_by})"
            got[k] = text + by
    return got


def expected_victims(state: ClusterState, incoming: Workload, victims: Mapping[str, str]) -> dict[str, str]:
    """Victim key -> the text :func:`preemption_outcome` reads for it: the reason and
    the paths of the incoming workload's ClusterQueue and of the victim's."""
    lq = state.local_queues[f"{incoming.namespace}/{incoming.queue_name}"]
    preemptor = cluster_queue_path(state, lq.cluster_queue)
    out = {}
    for key, reason in victims.items():
        victim = state.workloads[key]
        assert victim.admission is not None, key
        out[key] = f"{reason} ({preemptor} -> {cluster_queue_path(state, victim.admission.cluster_queue)})"
    return out


@dataclass
class Admitted:
    """Expected admission: the ClusterQueue and, per pod set, the flavor of each
    resource and (optionally) the admitted count."""

    cluster_queue: str
    flavors: dict[str, dict[str, str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)


def admitted(
    cluster_queue: str, counts: Mapping[str, int] | None = None, **pod_sets: Mapping[str, str]
) -> Admitted:
    """``admitted("eng-beta", one={"cpu": "on-demand"}, two={"cpu": "spot"})``."""
    return Admitted(cluster_queue, {k: dict(v) for k, v in pod_sets.items()}, dict(counts or {}))


def schedule_outcome(
    decisions: Mapping[str, Decision], want_admitted: Mapping[str, Admitted]
) -> dict[str, str]:
    """Every workload's state, as a comparable string: admitted ones with their
    ClusterQueue, flavors and counts (only the details the expectation names)."""
    got: dict[str, str] = {}
    for k, d in decisions.items():
        if d.state != "admitted":
            got[k] = d.state
            continue
        want = want_admitted.get(k)
        text = f"admitted in {d.cluster_queue}"
        if want is not None:
            by_name = {ps.name: ps for ps in d.pod_sets}
            for ps_name, flavors in sorted(want.flavors.items()):
                ps = by_name.get(ps_name)
                got_flavors = {r: ps.flavors.get(r, "?") for r in flavors} if ps else {}
                text += f" {ps_name}={sorted(got_flavors.items())}"
            for ps_name in sorted(want.counts):
                ps = by_name.get(ps_name)
                text += f" {ps_name}.count={ps.count if ps else '?'}"
        got[k] = text
    return got


def expected_admission_text(a: Admitted) -> str:
    text = f"admitted in {a.cluster_queue}"
    for ps_name, flavors in sorted(a.flavors.items()):
        text += f" {ps_name}={sorted(flavors.items())}"
    for ps_name, count in sorted(a.counts.items()):
        text += f" {ps_name}.count={count}"
    return text


Builder = Callable[[], list[ClusterQueueBuilder]]
