"""The outputs of `kueue-fast schedule`: JSON (the contract), YAML (the input
with the statuses Kueue would write), a table, the quota usage view, a
per-ClusterQueue summary, and the cycle timeline of ``--events``."""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import TYPE_CHECKING, Any

from ..api.model import Workload, charged_usage
from ..api.quantity import format_amount
from ..cluster import queue_readiness as Q, status_writer as S
from ..cluster.cluster import (
    ADMITTED,
    BULK_OTHER,
    EVICTED,
    PENDING,
    RESERVED,
    BulkDecisions,
    Cluster,
    CycleResult,
    Decision,
    PodSetDecision,
)
from ..engine.inputs import NO_LIMIT
from ..engine.tas import v1beta2_assignment
from ..loader.fastjson import orjson
from .contract_json import json_workload_entries, workload_owners

if TYPE_CHECKING:
    from ..cluster.explain import ClusterView

JSON = dict[str, Any]
NONE = "-"  # an empty table cell


def _view(cluster: Cluster) -> ClusterView:
    """The explanations' view of the cluster (cluster/explain.py, imported here: plain
    ``-o json`` and ``-o summary`` never need it)."""
    from ..cluster.explain import ClusterView

    return ClusterView(cluster)


# --- JSON ------------------------------------------------------------------------------------


def decision_json(d: Decision, owner: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"namespace": d.namespace, "name": d.name}
    if owner is not None:
        out["owner"] = owner  # the job the Workload was made from, "Job/name"
    out["state"] = d.state
    if d.holds_quota:
        out["clusterQueue"] = d.cluster_queue
        out["podSets"] = [_pod_set_json(ps) for ps in d.pod_sets]
        if d.state == ADMITTED:
            return out
        # reserved: waiting for admission checks (the Admitted=False condition)
        out["reason"] = d.reason
        out["message"] = d.message
        out["admissionChecks"] = [{"name": c.name, "state": c.state} for c in d.admission_checks]
        return out
    out["reason"] = d.reason
    if d.preempted_by is not None:
        out["preemptedBy"] = d.preempted_by
    out["message"] = d.message
    return out


def _pod_set_json(ps: PodSetDecision) -> dict[str, Any]:
    out: dict[str, Any] = {"name": ps.name, "count": ps.count, "flavors": ps.flavors}
    if ps.topology_assignment is not None:  # Kueue's v1beta2 encoding
        out["topologyAssignment"] = v1beta2_assignment(ps.topology_assignment)
    return out


def to_json(cluster: Cluster, explain: bool = False, write: Callable[[str], object] | None = None) -> str:
    """The contract's document; with ``explain``, each pending or evicted
    workload also carries ``explanation`` (computed only then). Given
    ``write`` (``schedule``'s standard output), the document goes to it in
    pieces and "" is returned: at a million workloads the whole text (300 MB,
    and its encoded copy) never exists at once."""
    owners = workload_owners(cluster.state.workloads)
    if not explain:
        return _bulk_json(cluster, cluster.bulk_decisions(), owners, write)
    view = _view(cluster) if explain else None
    workloads = []
    for d in view.decisions if view is not None else cluster.decisions():
        out = decision_json(d, owners.get(d.key))
        if view is not None:
            e = view.explain(d)
            if e is not None:
                out["explanation"] = e.to_json()
        workloads.append(out)
    doc = {"cycles": cluster.cycles, "workloads": workloads}
    # strings and integers only without explanations (they hold floats)
    text = _dumps_plain(doc) if view is None else json.dumps(doc, indent=2) + "\n"
    if write is None:
        return text
    write(text)
    return ""


def _bulk_json(
    cluster: Cluster, bulk: BulkDecisions, owners: dict[str, str], write: Callable[[str], object] | None
) -> str:
    """_dumps_plain of the contract's document, written entry by entry: the
    workloads the engine's arrays give (BulkDecisions) from text shared by
    all of a shape (admitted) or a few escaped strings (pending), the others
    from their Decision. Each entry is json.dumps(entry, indent=2) indented
    one level deeper (json escapes newlines in strings: every newline of its
    text is structural), which is what json.dumps writes for the document.
    The entries are joined in compiled code, the document around them
    included (contract_json.json_workload_entries: 100k decisions, 30 MB, in a few
    tens of milliseconds, the text copied once into its str)."""
    deeper = "\n    "

    def tail(entry: JSON) -> str:  # the entry's fields after its first ones, from ",\n"
        return "," + _dumps_plain(entry)[1:-1].replace("\n", deeper)

    admitted = [
        tail(
            {
                "state": ADMITTED,
                "clusterQueue": cq,
                "podSets": [{"name": ps.name, "count": ps.count, "flavors": ps.flavors} for ps in pod_sets],
            }
        )
        for cq, pod_sets in bulk.shapes
    ]
    others = []
    for key in compress(bulk.keys, map(BULK_OTHER.__eq__, bulk.kind)):  # no Python loop over 100k
        d = cluster.decision(key)
        others.append(_dumps_plain(decision_json(d, owners.get(d.key)))[:-1].replace("\n", deeper))
    head = f'{{\n  "cycles": {json.dumps(cluster.cycles)},\n  "workloads": '
    entries = (bulk.keys, bulk.kind, bulk.shape, admitted, bulk.reasons, bulk.messages, owners, others)
    return json_workload_entries(*entries, PENDING, head, "\n}\n", write)


def _dumps_plain(doc: JSON) -> str:
    """``json.dumps(doc, indent=2) + "\\n"`` byte for byte for a document of
    strings, integers, lists and dicts, written by orjson when it can (100k
    decisions: 0.17 s against 1.2 s). The two agree on all of it but DEL and
    non-ASCII text (json escapes them, orjson writes them as they are) and
    integers beyond 64 bits (orjson refuses them): json writes those documents."""
    if orjson is not None:
        try:
            out: bytes = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # orjson.JSONEncodeError
            pass
        else:
            if out.isascii() and b"\x7f" not in out:
                return out.decode("ascii")
    return json.dumps(doc, indent=2) + "\n"


# --- YAML: every status as Kueue would write it after the last cycle ---------------------------


@dataclass
class _QueueTally:
    pending: int = 0
    reserving: int = 0
    usage: Q.FlavorUsage = field(default_factory=dict)
    # quota reserved but not admitted (admission checks): their count and usage
    waiting: int = 0
    waiting_usage: Q.FlavorUsage = field(default_factory=dict)

    def admitted_usage(self) -> Q.FlavorUsage | None:
        """flavorsUsage: the usage less what waits for admission checks (None: the same)."""
        if not self.waiting:
            return None
        return {
            f: {r: v - self.waiting_usage.get(f, {}).get(r, 0) for r, v in row.items()}
            for f, row in self.usage.items()
        }


def _add_usage(into: Q.FlavorUsage, d: Decision, wl: Workload, reclaimable_pods: bool) -> None:
    """The quota the decision's admission holds (less what reclaimed pods released)."""
    for ps in d.pod_sets:
        usage = charged_usage(wl.pod_sets, ps.name, ps.count, ps.resource_usage, reclaimable_pods)[1]
        for r, f in ps.flavors.items():
            row = into.setdefault(f, {})
            row[r] = row.get(r, 0) + usage.get(r, 0)


def _weighted_share(view: ClusterView, node: int) -> int:
    """status.fairSharing.weightedShare (kueue helpers.go WeightedShare of the
    node's dominant resource share)."""
    from ..engine.reference.fair_sharing import dominant_resource_share

    topo = view.topo
    resource_of_fr = [r for _, r in topo.fr_pairs]
    drs = dominant_resource_share(
        view.tree, node, topo.fair_weight[node], resource_of_fr, topo.resource_names
    )
    share = drs.weighted_share()
    return NO_LIMIT if math.isinf(share) else math.ceil(share)


def _queue_tallies(
    cluster: Cluster, view: ClusterView, decisions: Sequence[Decision]
) -> tuple[dict[str, _QueueTally], dict[str, _QueueTally]]:
    """queue_statuses' counts and usage by ClusterQueue name and by LocalQueue key:
    the workloads holding quota (decisions), those pending (the engine's queues)."""
    state, topo, engine = cluster.state, view.topo, cluster.engine
    cqs = {name: _QueueTally() for name in state.cluster_queues}
    lqs = {key: _QueueTally() for key in state.local_queues}
    reclaimable = topo.gates.reclaimable_pods
    for d in decisions:
        if d.cluster_queue is None or d.state not in (ADMITTED, RESERVED, EVICTED):
            continue  # holds no quota
        wl = state.workloads[d.key]
        lq = lqs.get(f"{wl.namespace}/{wl.queue_name}")
        tallies = [t for t in (cqs.get(d.cluster_queue), lq) if t is not None]
        for t in tallies:
            t.reserving += 1
            if d.state == RESERVED:
                t.waiting += 1
                _add_usage(t.waiting_usage, d, wl, reclaimable)
        if lq is not None:
            _add_usage(lq.usage, d, wl, reclaimable)
    for cq, spec in enumerate(topo.cluster_queues):
        active, parked, _ = engine.queue_state(cq)
        cqs[spec.name].pending = len(active) + len(parked)
        for wid in [*active, *parked]:
            wl = state.workloads[cluster.key_of(wid)]
            lq = lqs.get(f"{wl.namespace}/{wl.queue_name}")
            if lq is not None:
                lq.pending += 1
        tally = cqs[spec.name].usage
        for fr, v in view.node_usage(cq).items():
            f, r = topo.fr_pairs[fr]
            tally.setdefault(topo.flavor_names[f], {})[topo.resource_names[r]] = v
    return cqs, lqs


def queue_statuses(cluster: Cluster, view: ClusterView, decisions: Sequence[Decision]) -> dict[str, JSON]:
    """The status of every ClusterQueue (``cq/NAME``), LocalQueue
    (``lq/NS/NAME``) and Cohort (``cohort/NAME``) object of the input."""
    state, topo = cluster.state, view.topo
    now = cluster.start_ns  # the configuration does not change while the cycles run: no condition flips
    cqs, lqs = _queue_tallies(cluster, view, decisions)
    docs = {
        _object_key(d): d
        for d in state.documents
        if d.get("kind") in ("ClusterQueue", "LocalQueue", "Cohort")
    }
    out: dict[str, JSON] = {}
    for name, t in cqs.items():
        cq_obj = docs.get(f"cq/{name}")
        if cq_obj is None:
            continue
        node = view.cq_id(name)
        st = Q.cluster_queue_status(
            cq_obj,
            t.pending,
            t.reserving - t.waiting,
            t.usage,
            Q.cluster_queue_readiness(state.cluster_queues[name], state).as_tuple(),
            now,
            reserving=t.reserving,
            admitted_usage=t.admitted_usage(),
            has_parent=state.cluster_queues[name].cohort is not None,
            weighted_share=_weighted_share(view, node) if topo.fair_sharing else None,
        )
        if not topo.fair_sharing:
            st.pop("fairSharing", None)
        out[f"cq/{name}"] = st
    for key, t in lqs.items():
        local_queue = state.local_queues[key]
        lq_obj = docs.get(f"lq/{key}")
        if lq_obj is None:
            continue
        out[f"lq/{key}"] = Q.local_queue_status(
            lq_obj,
            docs.get(f"cq/{local_queue.cluster_queue}"),
            0 if local_queue.stop_policy != "None" else t.pending,
            t.reserving - t.waiting,
            t.usage,
            Q.local_queue_readiness(local_queue, state).as_tuple(),
            now,
            reserving=t.reserving,
            admitted_usage=t.admitted_usage(),
        )
    for name in state.cohorts:
        co_obj = docs.get(f"cohort/{name}")
        if co_obj is None:
            continue
        st = copy.deepcopy(co_obj.get("status") or {})
        node = topo.node_names.index(name, topo.n_cq)
        if topo.fair_sharing:
            st["fairSharing"] = {"weightedShare": _weighted_share(view, node)}
        else:
            st.pop("fairSharing", None)
        out[f"cohort/{name}"] = st
    return out


_KEY_PREFIX = {"ClusterQueue": "cq", "LocalQueue": "lq", "Cohort": "cohort", "Workload": "wl"}


def _object_key(doc: JSON) -> str:
    """``cq/NAME``, ``lq/NS/NAME``, ``cohort/NAME``, ``wl/NS/NAME`` (the
    loader's namespace default included)."""
    md = doc.get("metadata") or {}
    prefix = _KEY_PREFIX.get(str(doc.get("kind")), str(doc.get("kind")))
    if prefix in ("lq", "wl"):
        return f"{prefix}/{md.get('namespace') or 'default'}/{md.get('name')}"
    return f"{prefix}/{md.get('name')}"


def to_yaml(cluster: Cluster) -> str:
    """The input objects back, each Workload, ClusterQueue, LocalQueue and
    Cohort with the status Kueue would have written after the last cycle."""
    import yaml

    view = _view(cluster)
    decisions = view.decisions
    by_key = {d.key: d for d in decisions}
    queues = queue_statuses(cluster, view, decisions)
    docs = []
    for doc in cluster.state.documents:
        doc = copy.deepcopy(doc)
        key = _object_key(doc)
        status: JSON | None = queues.get(key)
        if key.startswith("wl/"):
            d = by_key.get(key[3:])
            if d is not None:
                status = S.scheduled_workload_status(doc, d, cluster.history(d.key), cluster.start_ns)
                S.set_requeue_state(status, *cluster.requeue_state(d.key))
        if status is not None:
            if status:
                doc["status"] = status
            else:
                doc.pop("status", None)
        docs.append(doc)
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text: str = yaml.dump_all(docs, Dumper=dumper, sort_keys=False)
    return text


# --- tables ------------------------------------------------------------------------------------


# A table's width: the columns named to wrap share what the others leave of it.
TABLE_WIDTH = 120
MIN_WRAPPED = 30


def _render(rows: list[Sequence[str]], wrap: Sequence[int] = ()) -> list[str]:
    """Columns padded to their widest cell (the last one is left as it is);
    the columns of ``wrap`` share what the others leave of TABLE_WIDTH (at
    least MIN_WRAPPED each) and wrap their text onto more lines, under their
    column."""
    import textwrap

    n = len(rows[0])
    wrapped = sorted({i % n for i in wrap})
    widths = [max(len(r[i]) for r in rows) for i in range(n)]
    free = TABLE_WIDTH - sum(w for i, w in enumerate(widths) if i not in wrapped) - 2 * (n - 1)
    # water-filling: the narrowest take what they need, the others an equal share of what is left
    budget = max(free, MIN_WRAPPED * len(wrapped))
    for k, i in enumerate(sorted(wrapped, key=lambda i: widths[i])):
        widths[i] = min(widths[i], max(MIN_WRAPPED, budget // (len(wrapped) - k)))
        budget -= widths[i]
    lines = []
    for r in rows:
        cells = [
            textwrap.wrap(c, widths[i], break_on_hyphens=False) or [""] if i in wrapped else [c]
            for i, c in enumerate(r)
        ]
        for k in range(max(len(c) for c in cells)):
            parts = [(c[k] if k < len(c) else "") for c in cells]
            last = n - 1
            lines.append(
                "  ".join(
                    [*(p.ljust(w) for p, w in zip(parts[:last], widths, strict=False)), parts[last]]
                ).rstrip()
            )
    return lines


def _render_decisions(rows: list[Sequence[str]]) -> list[str]:
    """The decisions table within TABLE_WIDTH: WHY and MESSAGE wrapped in
    their columns, or, when the other columns leave them too little room,
    on lines of their own under each row."""
    fixed = sum(max(len(r[i]) for r in rows) + 2 for i in range(4))
    if TABLE_WIDTH - fixed - 2 >= 2 * MIN_WRAPPED:
        return _render(rows, wrap=(4, 5))
    import textwrap

    head = _render([r[:4] for r in rows])
    out = [head[0] + "  (WHY, MESSAGE below)"]
    for line, r in zip(head[1:], rows[1:], strict=True):
        out.append(line)
        for label, text in (("why", r[4]), ("message", r[5])):
            if text and text != NONE:
                out += textwrap.wrap(
                    text,
                    TABLE_WIDTH,
                    initial_indent=f"    {label}: ",
                    subsequent_indent=" " * (6 + len(label)),
                    break_on_hyphens=False,
                )
    return out


def _queued_in(view: ClusterView, d: Decision) -> str:
    """The ClusterQueue a workload is admitted to, or queues in."""
    if d.cluster_queue is not None:
        return d.cluster_queue
    cq = view.cluster.engine.spec(view.cluster.wid_of(d.key)).cluster_queue
    return view.topo.cluster_queues[cq].name if cq >= 0 else NONE


def _flavors_text(d: Decision) -> str:
    return "; ".join(
        f"{ps.name}x{ps.count}: " + ",".join(f"{r}={f}" for r, f in ps.flavors.items()) for ps in d.pod_sets
    )


def _counts_line(cluster: Cluster, decisions: Iterable[Decision]) -> str:
    states = [d.state for d in decisions]
    summary = (
        f"{states.count(ADMITTED)} admitted, {states.count(PENDING)} pending, {states.count(EVICTED)} evicted"
    )
    if RESERVED in states:
        summary += f", {states.count(RESERVED)} reserved"
    return f"{cluster.cycles} cycle(s): {summary}"


def to_table(cluster: Cluster) -> str:
    """One row per workload: Kueue's reason and message (or the flavors it
    got), kueue-fast's explanation in WHY; then the usage view."""
    view = _view(cluster)
    decisions = view.decisions
    rows: list[Sequence[str]] = [("WORKLOAD", "STATE", "CLUSTERQUEUE", "REASON", "WHY", "MESSAGE / FLAVORS")]
    for d in decisions:
        if d.state == ADMITTED:
            rows.append((d.key, d.state, d.cluster_queue or NONE, NONE, NONE, _flavors_text(d)))
            continue
        if d.state == RESERVED:
            checks = ", ".join(f"{c.name}={c.state}" for c in d.admission_checks)
            rows.append((d.key, d.state, d.cluster_queue or NONE, d.reason, checks, _flavors_text(d)))
            continue
        e = view.explain(d)
        reason = d.reason if d.preempted_by is None else f"{d.reason} by {d.preempted_by}"
        rows.append((d.key, d.state, _queued_in(view, d), reason, e.summary if e else NONE, d.message))
    lines = _render_decisions(rows)
    lines += ["", *_usage_lines(view), "", _counts_line(cluster, decisions)]
    return "\n".join(lines) + "\n"


def _amount(resource: str, v: int | None) -> str:
    return NONE if v is None or v == NO_LIMIT else format_amount(resource, v)


def _usage_lines(view: ClusterView) -> list[str]:
    """The ClusterQueues as ``kubectl get clusterqueue`` lists them, plus their
    Active condition; then the quota tree, cohort by cohort, per flavor and
    resource: nominal quota, subtree quota, limits, reserved (held by admitted
    workloads; for a cohort, what its members use of the quota they share:
    Kueue's cohort usage), borrowed (above the node's own quota), lendable
    (what it makes available to its parent) and free (what it could admit now)."""
    cluster, topo, tree = view.cluster, view.topo, view.tree
    state = cluster.state
    statuses = queue_statuses(cluster, view, view.decisions)
    rows: list[Sequence[str]] = [
        ("CLUSTERQUEUE", "COHORT", "STRATEGY", "PENDING", "RESERVING", "ADMITTED", "ACTIVE")
    ]
    for name in sorted(state.cluster_queues):
        cq = state.cluster_queues[name]
        st = statuses.get(f"cq/{name}") or {}
        r = Q.cluster_queue_readiness(cq, state)
        if r.active and cq.cohort in view.cycle_cohorts:
            active = f"True ({r.reason}; left out of scheduling: cohort {cq.cohort} is in a cycle)"
        else:
            active = f"{r.active} ({r.reason})" + ("" if r.active else f": {r.message}")
        counts = [
            str(st.get(k, NONE)) for k in ("pendingWorkloads", "reservingWorkloads", "admittedWorkloads")
        ]
        rows.append((name, cq.cohort or NONE, cq.queueing_strategy, *counts, active))
    lines = _render(rows)

    # the quota tree, roots first, each node followed by its children
    header = ("QUOTA", "FLAVOR", "RESOURCE", "NOMINAL", "SUBTREE", "BORROW LIMIT", "LEND LIMIT")
    quota_rows: list[Sequence[str]] = [(*header, "RESERVED", "BORROWED", "LENDABLE", "FREE")]

    def order(n: int) -> tuple[bool, str]:
        return (n < topo.n_cq, topo.node_names[n])

    def row(node: int, depth: int) -> None:
        is_cq = node < topo.n_cq
        label = "  " * depth + ("" if is_cq else "cohort ") + topo.node_names[node]
        has_parent = tree.parent[node] >= 0
        used = tree.usage[node]
        frs = sorted(set(tree.quota[node]) | set(tree.subtree_quota[node]) | set(used))
        for fr in frs:
            f, r = topo.fr_pairs[fr]
            rname = topo.resource_names[r]
            own = tree.nominal(node, fr) if is_cq else tree.subtree_quota[node].get(fr, 0)
            reserved = used.get(fr, 0)
            lendable = (
                tree.subtree_quota[node].get(fr, 0) - tree.local_quota(node, fr) if has_parent else None
            )
            free = tree.available(node, fr) if is_cq else max(0, tree.available_raw(node, fr))
            quota_rows.append(
                (
                    label,
                    topo.flavor_names[f],
                    rname,
                    _amount(rname, tree.nominal(node, fr)),
                    _amount(rname, tree.subtree_quota[node].get(fr, 0)),
                    _amount(rname, tree.borrowing_limit(node, fr)),
                    _amount(rname, tree.lending_limit(node, fr)),
                    _amount(rname, reserved),
                    _amount(rname, max(0, reserved - own) if has_parent else 0),
                    _amount(rname, lendable),
                    _amount(rname, free),
                )
            )

    # depth first without recursion: a Cohort chain may be deeper than Python's stack
    stack = [(root, 0) for root in sorted(tree.roots(), key=order, reverse=True)]
    while stack:
        node, depth = stack.pop()
        row(node, depth)
        stack.extend((c, depth + 1) for c in sorted(tree.children[node], key=order, reverse=True))
    if len(quota_rows) > 1:
        lines += ["", *_render(quota_rows)]
    return lines


def to_usage(cluster: Cluster) -> str:
    return "\n".join(_usage_lines(_view(cluster))) + "\n"


def to_summary(cluster: Cluster) -> str:
    """Per ClusterQueue, how many workloads are admitted, reserved (quota
    held, waiting for admission checks), pending and evicted in the last
    cycle; ``-`` collects the workloads in no ClusterQueue's queue."""
    states = (ADMITTED, RESERVED, PENDING, EVICTED)
    counts: dict[str, dict[str, int]] = {
        name: dict.fromkeys(states, 0) for name in cluster.state.cluster_queues
    }
    # counted in bulk (Cluster.queue_state_counts): no Decision per workload
    for (queue, state), n in cluster.queue_state_counts().items():
        row = counts.setdefault(queue if queue is not None else NONE, dict.fromkeys(states, 0))
        if state in row:
            row[state] += n
    total = {s: sum(c[s] for c in counts.values()) for s in states}
    rows: list[Sequence[str]] = [("CLUSTERQUEUE", *(s.upper() for s in states))]
    rows += [(name, *(str(counts[name][s]) for s in states)) for name in sorted(counts)]
    rows.append(("TOTAL", *(str(total[s]) for s in states)))
    return "\n".join([*_render(rows), "", f"{cluster.cycles} cycle(s)"]) + "\n"


# --- the timeline of --events --------------------------------------------------------------------


def cycle_events(cluster: Cluster, result: CycleResult) -> list[str]:
    """What one cycle did, one line per event: admissions (where, with which
    flavors), preemptions (by whom, Kueue's preemption reason), other
    evictions (Kueue's reason and message), heads parked as inadmissible."""
    equivalents = result.newly_parked - len(result.parked)
    head = (
        f"cycle {result.cycle} at {S.rfc3339(result.time_ns)}: {len(result.admitted)} admitted, "
        f"{len(result.preempted)} preempted, {len(result.evicted)} evicted, {result.newly_parked} parked"
    )
    lines = [head]
    for key in result.evicted:
        ev = _last_eviction(cluster, key)
        lines.append(f"  evicted    {key}: {ev}")
    for key in result.admitted:
        d = cluster.decision(key)
        lines.append(f"  admitted   {key} to {d.cluster_queue} ({_flavors_text(d)})")
    for key in result.preempted:
        lines.append(f"  preempted  {key}: {_last_eviction(cluster, key)}")
    for key in result.parked:
        d = cluster.decision(key)
        lines.append(f"  parked     {key} ({d.reason}): {d.message}")
    if equivalents > 0:
        lines.append(f"  parked     {equivalents} more workload(s) with the same shape as a parked head")
    return lines


def _last_eviction(cluster: Cluster, key: str) -> str:
    h = cluster.history(key)
    ev = h.last_eviction if h else None
    if ev is None:
        return "evicted"
    if ev.preempted_by is not None:
        return f"by {ev.preempted_by} ({ev.preemption_reason})"
    return f"{ev.reason}: {ev.message}"
