"""Why a workload waits: kueue-fast's own explanation, next to Kueue's words.

Kueue's ``reason`` and ``message`` stay as Kueue writes them; this module adds
what a user asks next: which head a workload waits behind and whether that
head can ever fit, which head blocks a StrictFIFO queue, and, for a workload
that does not fit, per flavor what it needs and what is free, nominal and
borrowable. It reads only what both engines expose (the topology, the usage
table, the queues, the decisions), so both engines explain alike, and it
computes nothing until a workload is explained: ``schedule`` asks only for
the workloads it prints.

Quota arithmetic is the reference engine's (``engine/reference/quota.py``, Kueue's
resource_node.go) on a fresh tree loaded with the engine's usage.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..api.quantity import format_amount, format_quantity
from ..api.validation import did_you_mean
from ..engine.inputs import BLOCK_NONE, WorkloadSpec, cohort_graph, cycle_path
from ..engine.reference.amount import saturating_mul
from ..engine.reference.quota import QuotaTree
from ..engine.reference.tas import TasState
from .queue_readiness import Readiness, cluster_queue_readiness
from .status_writer import rfc3339

if TYPE_CHECKING:
    from .cluster import Cluster, Decision

JSON = dict[str, Any]

STRICT_FIFO = 0  # engine.inputs.STRATEGY_CODES
MAX_DOMAINS = 10  # the topology domains an explanation lists per pod set and flavor


@dataclass
class Explanation:
    """``kind`` names the situation, ``summary`` says it in one sentence,
    ``detail`` holds the numbers behind it (JSON-ready)."""

    kind: str
    summary: str
    detail: JSON = field(default_factory=dict)

    def to_json(self) -> JSON:
        return {"kind": self.kind, "summary": self.summary, **self.detail}


@dataclass
class QueueView:
    """The pending side of one ClusterQueue: wids in the order they would
    become heads, the parked ones, and where each stands."""

    order: list[int]
    parked: set[int]
    position: dict[int, int]  # wid -> 1-based place in line

    @property
    def head(self) -> int:
        return self.order[0] if self.order else -1


@dataclass
class FitView:
    """Whether a pod-set shape fits a ClusterQueue now and ever, per flavor."""

    fits_now: bool
    can_ever_fit: bool
    pod_sets: list[JSON]
    # the first obstacle, for the summary: (flavor, resource, needs, free, max ever) or None
    obstacle: tuple[str, str, int, int, int] | None
    uncovered: list[str]
    sentence: str = ""  # the summary's words on it, made once per shape


class ClusterView:
    """What explanations, statuses and the usage view read after the cycles,
    each piece computed once, on first use."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.topo = cluster.topology
        self._queues: dict[int, QueueView] = {}
        self._fits: dict[tuple[object, ...], FitView] = {}

    # --- the quota tree -------------------------------------------------------------------------

    @cached_property
    def tree(self) -> QuotaTree:
        tree = QuotaTree(self.topo)
        usage = self.cluster.engine.usage
        for node in range(self.topo.n_nodes):
            row = usage[node]
            tree.usage[node] = {fr: int(v) for fr, v in enumerate(row.tolist()) if v}
        return tree

    def node_usage(self, node: int) -> dict[int, int]:
        return self.tree.usage[node]

    @cached_property
    def decisions(self) -> list[Decision]:
        """cluster.decisions(), once."""
        return self.cluster.decisions()

    @cached_property
    def _cq_id(self) -> dict[str, int]:
        return {cq.name: i for i, cq in enumerate(self.topo.cluster_queues)}

    def cq_id(self, name: str) -> int:
        return self._cq_id.get(name, -1)

    @cached_property
    def cycle_cohorts(self) -> set[str]:
        return cohort_graph(self.cluster.state)[2]

    def readiness(self, cq: int) -> Readiness:
        name = self.topo.cluster_queues[cq].name
        return cluster_queue_readiness(self.cluster.state.cluster_queues[name], self.cluster.state)

    # --- queues ---------------------------------------------------------------------------------

    def queue(self, cq: int) -> QueueView:
        q = self._queues.get(cq)
        if q is None:
            q = self._queues[cq] = self._queue_view(cq)
        return q

    def _queue_view(self, cq: int) -> QueueView:
        """The heap in pop order (kueue cluster_queue.go queueOrderingFunc):
        the sticky preemptor first, then priority, queue order timestamp,
        namespace and name; with admission fair sharing the LocalQueue's
        usage comes before all of it."""
        engine = self.cluster.engine
        active, parked, sticky = engine.queue_state(cq)
        spec = engine.spec
        lq_usage: dict[int, float] = {}
        if self.topo.cluster_queues[cq].admission_fair_sharing:
            ledger = engine.afs_ledger_state()
            for i, lq in enumerate(self.topo.local_queues):
                entry = ledger.get(lq.name)
                if entry is not None:
                    lq_usage[i] = float(entry["usage"])

        def key(w: int) -> tuple[object, ...]:
            s = spec(w)
            return (
                lq_usage.get(s.local_queue, 0.0),
                w != sticky,
                -s.priority,
                s.queue_ts,
                s.namespace,
                s.name,
            )

        order = sorted(active, key=key)
        return QueueView(order, set(parked), {w: i + 1 for i, w in enumerate(order)})

    # --- fit --------------------------------------------------------------------------------------

    def fit(self, spec: WorkloadSpec, cq: int) -> FitView:
        """Per pod set and flavor: what it needs, what is free now, nominal,
        borrowable from the cohort, the most it could ever get. Memoized by
        shape: workloads of one shape in one ClusterQueue share it."""
        shape = (
            cq,
            tuple((ps.count, ps.min_count, ps.flavor_class, tuple(ps.requests)) for ps in spec.pod_sets),
        )
        found = self._fits.get(shape)
        if found is None:
            found = self._fits[shape] = self._fit(spec, cq)
        return found

    def _fit(self, spec: WorkloadSpec, cq: int) -> FitView:
        topo, tree = self.topo, self.tree
        cq_spec = topo.cluster_queues[cq]
        partial = topo.gates.partial_admission
        pods_rid = topo.pods_rid
        covers_pods = pods_rid >= 0 and cq_spec.group_of(pods_rid) >= 0
        fits_now = can_ever = True
        obstacle: tuple[str, str, int, int, int] | None = None
        uncovered: list[str] = []
        out: list[JSON] = []
        for ps in spec.pod_sets:
            least = ps.min_count if partial and ps.min_count is not None else ps.count
            needs = {r: saturating_mul(v, ps.count) for r, v in ps.requests if v}
            needs_least = {r: saturating_mul(v, least) for r, v in ps.requests if v}
            if covers_pods:
                needs[pods_rid], needs_least[pods_rid] = ps.count, least
            ps_json: JSON = {"name": ps.name, "count": ps.count}
            if least != ps.count:
                ps_json["minCount"] = least
            missing = sorted(topo.resource_names[r] for r in needs if cq_spec.group_of(r) < 0)
            if missing:
                uncovered += [r for r in missing if r not in uncovered]
                ps_json["uncovered"] = missing
                fits_now = can_ever = False
            flavors: list[JSON] = []
            for group in cq_spec.groups:
                wanted = [r for r in group.resources if r in needs]
                if not wanted:
                    continue
                group_now = group_ever = False
                first_block: tuple[str, str, int, int, int] | None = None
                for fid in group.flavors:
                    fname = topo.flavor_names[fid]
                    not_eligible = self._flavor_rejection(ps.flavor_class, fid)
                    if not_eligible:
                        flavors.append({"flavor": fname, "notEligible": not_eligible})
                        continue
                    resources: JSON = {}
                    now_ok = ever_ok = True
                    for r in wanted:
                        rname = topo.resource_names[r]
                        fr = topo.fr_id(fid, r)
                        free = tree.available(cq, fr)
                        ever = tree.potential_available(cq, fr)
                        nominal = tree.nominal(cq, fr)
                        used = tree.usage[cq].get(fr, 0)
                        local_free = max(0, nominal - used)
                        resources[rname] = {
                            "needs": format_quantity(rname, needs[r]),
                            "free": format_amount(rname, free),
                            "nominal": format_amount(rname, nominal),
                            "used": format_amount(rname, used),
                            "borrowable": format_amount(rname, max(0, free - local_free)),
                            "maxEver": format_amount(rname, ever),
                        }
                        if needs_least[r] > ever:
                            ever_ok = False
                        if needs_least[r] > free:
                            now_ok = False
                            if first_block is None or (
                                first_block[4] >= first_block[2] and needs_least[r] > ever
                            ):
                                first_block = (fname, rname, needs_least[r], free, ever)
                    flavors.append(
                        {"flavor": fname, "resources": resources, "fitsNow": now_ok, "canEverFit": ever_ok}
                    )
                    group_now |= now_ok
                    group_ever |= ever_ok
                fits_now &= group_now
                can_ever &= group_ever
                if not group_now and obstacle is None:
                    obstacle = first_block
            ps_json["flavors"] = flavors
            out.append(ps_json)
        return FitView(fits_now, can_ever, out, obstacle, uncovered)

    # --- topology (TAS) -------------------------------------------------------------------------

    @cached_property
    def tas_state(self) -> TasState | None:
        """The TAS flavors' nodes as the decisions leave them: every placement
        held (both engines' decisions), on the reference placement's tables."""
        tas = self.topo.tas
        if tas is None:
            return None
        state = TasState(tas)
        cluster = self.cluster
        for d in self.decisions:
            if not d.pod_sets or d.state not in ("admitted", "reserved", "evicted"):
                continue
            spec = cluster.engine.spec(cluster.wid_of(d.key))
            requests = {ps.name: ps.tas_requests for ps in spec.pod_sets}
            for psd in d.pod_sets:
                per_pod = requests.get(psd.name)
                if psd.topology_assignment is None or per_pod is None:
                    continue
                uses = cluster.compiler.tas_uses(psd.flavors, psd.topology_assignment)
                state.charge([(u, per_pod) for u in uses], +1)
        state.take_snapshot()
        return state

    def topology_fit(self, spec: WorkloadSpec, cq: int) -> list[JSON]:
        """Per pod set asking for TAS and per TAS flavor of the ClusterQueue it
        may use: the domains at the level it asks for, each with the pods that
        fit there now and on empty nodes (the best MAX_DOMAINS), and the nodes
        where not one pod fits, by limiting resource."""
        tas, state = self.topo.tas, self.tas_state
        if tas is None or state is None:
            return []
        groups = self.topo.cluster_queues[cq].groups
        flavors = [fid for g in groups for fid in g.flavors if fid in tas.flavor_of]
        out: list[JSON] = []
        for ps in spec.pod_sets:
            if ps.tas is None or ps.tas_requests is None or ps.count == 0:
                continue
            for fid in flavors:
                if self._flavor_rejection(ps.flavor_class, fid):
                    continue
                f = tas.flavor_of[fid]
                flavor = tas.flavors[f]
                level = TasState.level_index(flavor, ps.tas.level)
                slice_idx = TasState.level_index(flavor, ps.tas.slice_level)
                if level < 0 or slice_idx < 0 or level > slice_idx:
                    continue  # the flavor message says why (no such level)
                size = ps.tas.slice_size
                now, _, excluded = state.capacity(f, ps.tas_requests, ps.flavor_class, size, slice_idx, False)
                empty, _, _ = state.capacity(f, ps.tas_requests, ps.flavor_class, size, slice_idx, True)
                names = [tas.level_names[x] for x in flavor.levels]
                ids = range(flavor.level_start[level], flavor.level_start[level + 1])
                best = sorted(ids, key=lambda d: (-now[d], -empty[d], d))
                entry: JSON = {
                    "podSet": ps.name,
                    "count": ps.count,
                    "flavor": flavor.name,
                    "level": names[level],
                    "required": ps.tas.required,
                    "domains": [
                        {"values": list(flavor.values[d]), "fitsNow": now[d], "fitsOnEmptyNodes": empty[d]}
                        for d in best[:MAX_DOMAINS]
                    ],
                    "domainsAtLevel": len(ids),
                }
                if size > 1:
                    entry["sliceSize"] = size
                    entry["sliceLevel"] = names[slice_idx]
                if excluded:
                    entry["nodesWithoutRoom"] = {tas.resources[r]: n for r, n in sorted(excluded.items())}
                out.append(entry)
        return out

    @staticmethod
    def _topology_sentence(entries: list[JSON]) -> str:
        """The first pod set's best domain in words."""
        e = entries[0]
        top = e["domains"][0] if e["domains"] else None
        where = f"{e['level']} {'/'.join(top['values'])}" if top else f"no {e['level']} domain"
        fits = f"fits {top['fitsNow']} of its {e['count']} pods now" if top else "has no room"
        empty = f" ({top['fitsOnEmptyNodes']} if its nodes ran no Kueue workload)" if top else ""
        kind = "required" if e["required"] else "preferred"
        return f"topology ({kind} {e['level']}, flavor {e['flavor']}): the best {where} {fits}{empty}"

    def _flavor_rejection(self, flavor_class: int, fid: int) -> str | None:
        classes = self.topo.flavor_classes
        if 0 <= flavor_class < len(classes) and fid < len(classes[flavor_class]):
            return classes[flavor_class][fid]
        return None

    # --- explanations -----------------------------------------------------------------------------

    def explain(self, d: Decision) -> Explanation | None:
        """Why a pending or evicted workload is not running; None for the others."""
        if d.state not in ("pending", "evicted"):
            return None
        cluster = self.cluster
        wid = cluster.wid_of(d.key)
        spec = cluster.engine.spec(wid)
        detail = self._eviction_detail(d)
        if d.state == "evicted":
            return self._evicted(d, spec, detail)
        _, requeue_at = cluster.requeue_state(d.key)
        if requeue_at is not None:  # waitForPodsReady's backoff (workload_controller.go Reconcile)
            detail["requeueAt"] = rfc3339(requeue_at)
            why = f"out of its queue until its requeueAt, {rfc3339(requeue_at)} (requeueing backoff)"
            return Explanation("Backoff", why, detail)
        if spec.cluster_queue < 0 or d.reason == "Deactivated":  # deactivated: by an admission check too
            why = f"{d.message}{self._misspelt_queue(d)}: it is in no ClusterQueue's queue"
            return Explanation("NotQueued", why, detail)
        cq = spec.cluster_queue
        detail["clusterQueue"] = self.topo.cluster_queues[cq].name
        if not self.topo.cluster_queues[cq].active:
            return self._inactive(cq, detail)
        if spec.block != BLOCK_NONE:
            return Explanation(
                "Misconfigured", f"{d.message}: the scheduler never admits it as it is", detail
            )
        return self._queued(d, wid, spec, cq, detail)

    def _misspelt_queue(self, d: Decision) -> str:
        """The queue a workload in no ClusterQueue's queue most likely meant,
        when its LocalQueue, or that LocalQueue's ClusterQueue, does not exist."""
        state = self.cluster.state
        wl = state.workloads.get(d.key)
        if wl is None or not wl.queue_name:
            return ""
        lq = state.local_queues.get(f"{wl.namespace}/{wl.queue_name}")
        if lq is None:
            here = [q.name for q in state.local_queues.values() if q.namespace == wl.namespace]
            return did_you_mean(wl.queue_name, here)
        if lq.cluster_queue not in state.cluster_queues:
            return did_you_mean(lq.cluster_queue, state.cluster_queues)
        return ""

    def _eviction_detail(self, d: Decision) -> JSON:
        """The detail every explanation starts from: the workload's last eviction, if any."""
        history = self.cluster.history(d.key)
        ev = history.last_eviction if history else None
        detail: JSON = {}
        if ev is not None:
            last: JSON = {"cycle": ev.cycle, "reason": ev.reason}
            if ev.preempted_by is not None:
                last["preemptedBy"] = ev.preempted_by
                last["preemptionReason"] = ev.preemption_reason
            detail["lastEviction"] = last
        return detail

    def _queued(self, d: Decision, wid: int, spec: WorkloadSpec, cq: int, detail: JSON) -> Explanation:
        """A pending workload in the queue of an active ClusterQueue: parked,
        waiting for its victims to leave, the head (or not in line), or behind the head."""
        cq_name = self.topo.cluster_queues[cq].name
        q = self.queue(cq)
        fit = self.fit(spec, cq)
        detail["fit"] = self._fit_json(fit)
        topology = self.topology_fit(spec, cq)
        if topology:
            detail["topology"] = topology
        strict = self.topo.cluster_queues[cq].strategy == STRICT_FIFO
        if wid in q.parked:
            why = d.reason if d.reason != "Pending" else "with an equivalent workload that did not fit"
            fit_now = self._fit_sentence(fit, cq_name)
            if topology and fit.fits_now:  # quota fits: the nodes do not
                fit_now = f"{fit_now} but not on its nodes: {self._topology_sentence(topology)}"
            summary = (
                f"{fit_now}; parked as inadmissible ({why}) until quota is freed in {self._cohort_of(cq)}"
            )
            return Explanation("Parked", summary, detail)
        tried = d.reason != "Pending"
        if tried and d.reason == "WaitingForPreemptedWorkloads":
            return Explanation(
                "WaitingForPreemption",
                f"it preempted what it needs and is admitted once the victims have left; {d.message}",
                detail,
            )
        position = q.position.get(wid)
        if position is not None:
            detail["queue"] = {"position": position, "length": len(q.order)}
        if position is None or position == 1:
            sentence = self._fit_sentence(fit, cq_name)
            if strict and len(q.order) > 1:
                sentence += (
                    f"; as the head of a StrictFIFO queue it holds back {len(q.order) - 1} workload(s)"
                )
            if tried:
                if topology and fit.fits_now:  # quota fits: the nodes do not
                    sentence = f"{sentence} but not on its nodes: {self._topology_sentence(topology)}"
                return Explanation("NoFit", sentence, detail)
            if position is None:  # not in the queue's heap (e.g. an eviction still holding quota)
                return Explanation("Pending", f"waits in ClusterQueue {cq_name}: {sentence}", detail)
            return Explanation("Head", f"next in line in ClusterQueue {cq_name}: {sentence}", detail)
        return self._behind_head(q, fit, cq, position, detail)

    def _behind_head(self, q: QueueView, fit: FitView, cq: int, position: int, detail: JSON) -> Explanation:
        """A pending workload behind its queue's head: what the head does
        (fits now, never fits, does not fit now) and, under StrictFIFO, that it holds the line."""
        cluster = self.cluster
        cq_name = self.topo.cluster_queues[cq].name
        strict = self.topo.cluster_queues[cq].strategy == STRICT_FIFO
        head = q.head
        head_key = cluster.key_of(head)
        head_fit = self.fit(cluster.engine.spec(head), cq)
        detail["queue"].update({"head": head_key, "headCanEverFit": head_fit.can_ever_fit})
        if head_fit.fits_now:
            head_state = "fits now"
        elif not head_fit.can_ever_fit:
            head_state = "can never fit" + ("" if strict else " (it will be parked and the next one tried)")
        else:
            head_state = "does not fit now"
        itself = "" if fit.can_ever_fit else f"; besides, it {self._fit_sentence(fit, cq_name)}"
        if strict and not head_fit.fits_now:
            return Explanation(
                "BlockedByStrictFIFOHead",
                f"StrictFIFO: waits behind head {head_key}, which {head_state} and holds the queue "
                f"({_ordinal(position)} in line in ClusterQueue {cq_name}){itself}",
                detail,
            )
        return Explanation(
            "BehindHead",
            f"{_ordinal(position)} in line in ClusterQueue {cq_name} behind head {head_key}, "
            f"which {head_state} (the scheduler takes one head per ClusterQueue per cycle){itself}",
            detail,
        )

    def _evicted(self, d: Decision, spec: WorkloadSpec, detail: JSON) -> Explanation:
        if spec.cluster_queue >= 0:
            detail["clusterQueue"] = self.topo.cluster_queues[spec.cluster_queue].name
        if d.preempted_by is not None:
            return Explanation(
                "Preempted",
                f"preempted in the last cycle by {d.preempted_by} ({d.preemption_reason}); "
                "it has released its quota and waits in its queue again",
                detail,
            )
        return Explanation("Evicted", f"evicted in the last cycle ({d.reason}: {d.message})", detail)

    def _inactive(self, cq: int, detail: JSON) -> Explanation:
        name = self.topo.cluster_queues[cq].name
        r = self.readiness(cq)
        detail["clusterQueueActive"] = {
            "status": "True" if r.active else "False",
            "reason": r.reason,
            "message": r.message,
        }
        if not r.active:
            return Explanation(
                "InactiveClusterQueue", f"ClusterQueue {name} is inactive: {r.reason}: {r.message}", detail
            )
        cohort = self.cluster.state.cluster_queues[name].cohort or ""
        cycle = self._cycle_path(cohort)
        detail["cohortCycle"] = cycle
        return Explanation(
            "CohortCycle",
            f"ClusterQueue {name} is left out of scheduling: its cohort {cohort} is in a cycle "
            f"({' -> '.join(cycle)}); Kueue keeps its Active condition Ready but admits nothing there",
            detail,
        )

    def _cycle_path(self, cohort: str) -> list[str]:
        return cycle_path(cohort_graph(self.cluster.state)[1], cohort)

    def _cohort_of(self, cq: int) -> str:
        root = self.tree.root_of(cq)
        if root == cq:
            return f"ClusterQueue {self.topo.node_names[cq]}"
        return f"cohort {self.topo.node_names[root]}"

    def _fit_sentence(self, fit: FitView, cq_name: str) -> str:
        if not fit.sentence:
            fit.sentence = self._describe_fit(fit, cq_name)
        return fit.sentence

    @staticmethod
    def _describe_fit(fit: FitView, cq_name: str) -> str:
        if fit.uncovered:
            return f"can never fit: ClusterQueue {cq_name} has no quota for {', '.join(fit.uncovered)}"
        if fit.fits_now:
            return f"fits in ClusterQueue {cq_name} now"
        if fit.obstacle is None:
            return f"does not fit in ClusterQueue {cq_name} now: no eligible flavor"
        flavor, resource, needs, free, ever = fit.obstacle
        amounts = (
            f"needs {format_quantity(resource, needs)} {resource} in flavor {flavor}, "
            f"{format_amount(resource, free)} free now"
        )
        if not fit.can_ever_fit:
            return (
                f"can never fit in ClusterQueue {cq_name}: {amounts}, "
                f"at most {format_amount(resource, ever)} even if nothing else ran"
            )
        return (
            f"does not fit in ClusterQueue {cq_name} now: {amounts} (at most {format_amount(resource, ever)})"
        )

    @staticmethod
    def _fit_json(fit: FitView) -> JSON:
        out: JSON = {"fitsNow": fit.fits_now, "canEverFit": fit.can_ever_fit, "podSets": fit.pod_sets}
        return out


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
