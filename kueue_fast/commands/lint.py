"""`kueue-fast lint`: validation plus what a reviewer of Kueue configs would flag.

The input is loaded as ``schedule`` loads it (every invalid object reported,
with the loader's warnings: skipped kinds, v1beta1 names, ClusterQueues
without namespaceSelector...); then these checks, each on the compiled quota
tree (``engine.inputs.compile_topology``, ``engine.reference.quota.QuotaTree``: Kueue's
resource_node.go arithmetic) and the compiled workloads:

1. flavors missing: a ClusterQueue naming a ResourceFlavor that does not exist
   is inactive (clusterqueue.go updateQueueStatus); a Cohort's quota in one is
   of no use;
2. queues no namespace can reach: a LocalQueue whose ClusterQueue does not
   exist or does not select its namespace (namespaceSelector against the
   Namespace's labels), a ClusterQueue nothing can submit to, a pending
   workload naming a LocalQueue that does not exist (Kueue: Misconfigured);
3. workloads bigger than their queue can ever hold: a pending pod set (at its
   minCount under partial admission) that exceeds PotentialAvailable in every
   flavor it may use, or needs a resource its ClusterQueue does not cover
   (flavorassigner.go fitsResourceQuota: NoFit whatever else runs);
4. flavor taints no workload tolerates: of the workloads queued to the
   ClusterQueues that use a tainted flavor, none tolerates the taint
   (flavorassigner.go checkFlavorForPodSets);
5. StrictFIFO queues whose head can never fit: nothing behind it is admitted
   (cluster_queue.go: StrictFIFO requeues the head in place);
6. lending and borrowing limits that make quota unreachable: a borrowingLimit
   above what the rest of the cohort can ever lend (lendingLimits, quotas),
   Cohort quota for a flavor and resource no ClusterQueue below it has;
7. admission checks missing or inactive: a ClusterQueue naming an
   AdmissionCheck that does not exist or whose Active condition is not True
   is inactive (clusterqueue.go updateWithAdmissionChecks);
8. cohorts in a cycle: the ClusterQueues of its cohorts stay Active but are
   left out of scheduling (snapshot.go skipInactiveCQReason), as ``schedule``
   explains;
9. admissionScope without admission fair sharing: a ClusterQueue asking for
   UsageBasedAdmissionFairSharing while the Configuration does not enable it
   (afs.Enabled: its admissionFairSharing section and the feature gate) is
   ordered as without it.

Exit 0 (warnings or not), 2 on invalid input, and with ``--strict`` 2 on warnings too.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from ..api import model as m
from ..api.errors import InputError, InputWarning
from ..api.node_affinity import untolerated_taint
from ..api.quantity import format_amount, format_quantity
from ..api.validation import did_you_mean
from ..engine.inputs import (
    BLOCK_NONE,
    NO_LIMIT,
    Topology,
    WorkloadSpec,
    admission_fair_sharing_enabled,
    cohort_graph,
    compile_topology,
    cycle_path,
)
from ..engine.reference.amount import saturating_mul
from ..engine.reference.quota import QuotaTree
from ..engine.workloads import WorkloadCompiler
from ..integrations import INTEGRATIONS
from ..loader import load
from .simulate_args import add_recursive_argument

__all__ = ["add_arguments", "lint", "run_lint"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="YAML or JSON file, directory, or - for standard input"
    )
    add_recursive_argument(p)
    p.add_argument("--strict", action="store_true", help="exit 2 on warnings too")


def run_lint(args: argparse.Namespace) -> int:
    """Print every warning and error, one per line, then a summary; on standard output."""
    errors: list[InputError] = []
    try:
        state = load(args.files, stdin=sys.stdin, recursive=args.recursive, keep_sources=True)
        warnings = [*state.warnings, *lint(state)]
    except InputError as e:
        errors, warnings = e.errors, list(e.warnings)
    for w in warnings:
        print(f"warning: {_one_line(str(w))}")
    for err in errors:
        print(f"error: {_one_line(str(err))}")
    print(f"{len(errors)} error(s), {len(warnings)} warning(s)")
    return 2 if errors or (args.strict and warnings) else 0


def _one_line(s: str) -> str:
    return " ".join(s.split())


def lint(state: m.ClusterState) -> list[InputWarning]:
    """The warnings of every check on a loaded (valid) input."""
    return _Linter(state).run()


class _Linter:
    def __init__(self, state: m.ClusterState) -> None:
        self.state = state
        self.topo: Topology = compile_topology(state)
        self.tree = QuotaTree(self.topo)
        self.cq_id = {cq.name: i for i, cq in enumerate(self.topo.cluster_queues)}
        n_cq = self.topo.n_cq
        self.cohort_node = {n: n_cq + i for i, n in enumerate(self.topo.node_names[n_cq:])}
        self.rid = {n: i for i, n in enumerate(self.topo.resource_names)}
        self.fid = {n: i for i, n in enumerate(self.topo.flavor_names)}
        compiler = WorkloadCompiler(state, self.topo)
        self.specs = {key: compiler.compile(wl) for key, wl in sorted(state.workloads.items())}
        self.out: list[InputWarning] = []
        self._potential: dict[tuple[int, int], int] = {}

    def run(self) -> list[InputWarning]:
        self.missing_flavors()
        self.unreachable_queues()
        never_fit = self.never_fit()
        self.untolerated_taints()
        self.strict_fifo_blocked(never_fit)
        self.unreachable_quota()
        self.unusable_admission_checks()
        self.cohort_cycles()
        self.admission_scope_ignored()
        return self.out

    # --- helpers ------------------------------------------------------------------------------

    def potential(self, node: int, fr: int) -> int:
        """PotentialAvailable (resource_node.go), once per node and flavor-resource."""
        key = (node, fr)
        value = self._potential.get(key)
        if value is None:
            value = self._potential[key] = self.tree.potential_available(node, fr)
        return value

    def warn(self, obj: str, field: str, message: str) -> None:
        self.out.append(InputWarning(obj, field, message, self.state.sources.get(obj, "")))

    def workload_ref(self, wl: m.Workload, field: str = "") -> tuple[str, str]:
        """(object, field) to name a workload by: the job it was made from, if any."""
        if wl.owner is None:
            return f"Workload/{wl.key}", field
        kind, name = wl.owner.split("/", 1)
        module = next((mod for (_, k), mod in INTEGRATIONS.items() if k == kind), None)
        owner_field = module.owner_field(field) if module is not None and field else ""
        return m.object_ref(kind, name, wl.namespace), owner_field

    def pending(self) -> Iterator[tuple[m.Workload, WorkloadSpec]]:
        """Workloads waiting in an active ClusterQueue whose namespace it selects."""
        for key, spec in self.specs.items():
            wl = self.state.workloads[key]
            if wl.admission is not None or wl.finished or spec.cluster_queue < 0 or spec.block != BLOCK_NONE:
                continue
            if self.topo.cluster_queues[spec.cluster_queue].active:
                yield wl, spec

    @staticmethod
    def quota_paths(groups: list[m.ResourceGroup]) -> Iterator[tuple[str, m.FlavorQuotas, m.ResourceQuota]]:
        for i, g in enumerate(groups):
            for j, fq in enumerate(g.flavors):
                for k, rq in enumerate(fq.resources):
                    yield f"spec.resourceGroups[{i}].flavors[{j}].resources[{k}]", fq, rq

    # --- 1. flavors missing --------------------------------------------------------------------

    def missing_flavors(self) -> None:
        owners: list[tuple[str, list[m.ResourceGroup], str]] = [
            (f"ClusterQueue/{cq.name}", cq.resource_groups, "the ClusterQueue is inactive and admits nothing")
            for cq in self.state.cluster_queues.values()
        ]
        owners += [
            (f"Cohort/{co.name}", co.resource_groups, "nothing can use this quota")
            for co in self.state.cohorts.values()
        ]
        for ref, groups, consequence in owners:
            for i, g in enumerate(groups):
                for j, fq in enumerate(g.flavors):
                    if fq.name not in self.state.resource_flavors:
                        path = f"spec.resourceGroups[{i}].flavors[{j}].name"
                        hint = did_you_mean(fq.name, self.state.resource_flavors)
                        self.warn(
                            ref, path, f'ResourceFlavor "{fq.name}" does not exist{hint}: {consequence}'
                        )

    # --- 7. admission checks missing or inactive ----------------------------------------------

    def unusable_admission_checks(self) -> None:
        for cq in self.state.cluster_queues.values():
            for name in cq.admission_checks:
                ac = self.state.admission_checks.get(name)
                if ac is None:
                    why = f"does not exist{did_you_mean(name, self.state.admission_checks)}"
                elif not ac.active:
                    why = "is not Active (no Active=True condition: is its controller running?)"
                else:
                    continue
                message = f'AdmissionCheck "{name}" {why}: the ClusterQueue is inactive and admits nothing'
                self.warn(f"ClusterQueue/{cq.name}", "spec", message)

    # --- 8. cohorts in a cycle -----------------------------------------------------------------

    def cohort_cycles(self) -> None:
        _, parent, in_cycle = cohort_graph(self.state)
        reported: set[str] = set()
        for name in sorted(in_cycle):
            if name in reported:
                continue
            path = cycle_path(parent, name)
            members = set(path)
            reported |= members
            cqs = sorted(cq.name for cq in self.state.cluster_queues.values() if cq.cohort in members)
            consequence = (
                f"Kueue leaves the ClusterQueues of these cohorts ({', '.join(cqs)}) out of scheduling, "
                "they admit nothing"
                if cqs
                else "Kueue would leave a ClusterQueue in them out of scheduling"
            )
            self.warn(
                f"Cohort/{name}",
                "spec.parentName",
                f"cohorts {' -> '.join(path)} form a cycle: {consequence}",
            )

    # --- 9. admissionScope without admission fair sharing ---------------------------------------

    def admission_scope_ignored(self) -> None:
        if admission_fair_sharing_enabled(self.state):
            return
        cfg = self.state.configuration
        why = (
            "the Configuration has no admissionFairSharing"
            if cfg.admission_fair_sharing is None
            else "the AdmissionFairSharing feature gate is off"
        )
        for cq in self.state.cluster_queues.values():
            if cq.usage_based_admission_fair_sharing:
                self.warn(
                    f"ClusterQueue/{cq.name}",
                    "spec.admissionScope",
                    f"admissionScope asks for admission fair sharing, but {why}: Kueue orders this "
                    "ClusterQueue's workloads by priority and creation time, as without it",
                )

    # --- 2. queues no namespace can reach -----------------------------------------------------

    def unreachable_queues(self) -> None:
        st = self.state
        reached: set[str] = set()
        for lq in st.local_queues.values():
            ref = f"LocalQueue/{lq.namespace}/{lq.name}"
            cq = st.cluster_queues.get(lq.cluster_queue)
            if cq is None:
                hint = did_you_mean(lq.cluster_queue, st.cluster_queues)
                why = f'ClusterQueue "{lq.cluster_queue}" does not exist{hint}: '
                why += "workloads submitted here stay pending"
                self.warn(ref, "spec.clusterQueue", why)
                continue
            reached.add(cq.name)
            if cq.namespace_selector is not None and not cq.namespace_selector.matches(
                st.namespace_labels(lq.namespace)
            ):
                self.warn(
                    ref,
                    "metadata.namespace",
                    f"ClusterQueue {cq.name}'s namespaceSelector does not select namespace {lq.namespace}: "
                    "workloads submitted here are never admitted",
                )
        for key in sorted(st.workloads):
            wl = st.workloads[key]
            waiting = wl.admission is None and not wl.finished and wl.queue_name != ""
            if waiting and f"{wl.namespace}/{wl.queue_name}" not in st.local_queues:
                obj, field = self.workload_ref(wl, "spec.queueName")
                here = [q.name for q in st.local_queues.values() if q.namespace == wl.namespace]
                why = f'LocalQueue "{wl.queue_name}" does not exist in namespace {wl.namespace}'
                why += f"{did_you_mean(wl.queue_name, here)}: it stays pending"
                self.warn(obj, field, why)
        for cq in st.cluster_queues.values():
            if cq.name not in reached and cq.cohort is None:  # in a cohort it may only lend
                self.warn(
                    f"ClusterQueue/{cq.name}",
                    "",
                    "no LocalQueue points to it and it is in no cohort: nothing can use its quota",
                )

    # --- 3. workloads bigger than their queue can ever hold -----------------------------------

    def never_fit(self) -> dict[str, str]:
        """Pending workloads that can never be admitted, with the reason."""
        out: dict[str, str] = {}
        for wl, spec in self.pending():
            why = self.why_never_fits(spec)
            if why is None:
                continue
            i, reason = why
            out[wl.key] = reason
            obj, field = self.workload_ref(wl, f"spec.podSets[{i}]")
            cq = self.topo.cluster_queues[spec.cluster_queue].name
            self.warn(obj, field, f"{reason}: it can never be admitted to ClusterQueue {cq}")
        return out

    def why_never_fits(self, spec: WorkloadSpec) -> tuple[int, str] | None:
        """(pod set index, reason) when a pod set needs more than the
        ClusterQueue can ever get (PotentialAvailable) in every flavor it may
        use, at its smallest count; None when it may fit."""
        topo = self.topo
        cq_id = spec.cluster_queue
        cq = topo.cluster_queues[cq_id]
        covered = {r for g in cq.groups for r in g.resources}
        ignore_undeclared = self.state.configuration.quota_check_strategy == "IgnoreUndeclared"
        for i, ps in enumerate(spec.pod_sets):
            count = ps.min_count if ps.min_count is not None else ps.count
            if count <= 0:
                continue
            need = {r: saturating_mul(per_pod, count) for r, per_pod in ps.requests if per_pod > 0}
            if topo.pods_rid >= 0 and topo.pods_rid in covered:
                need[topo.pods_rid] = count
            for r in sorted(need):
                if r not in covered and not ignore_undeclared:
                    rname = topo.resource_names[r]
                    return i, f"pod set {ps.name} requests {rname}, which the ClusterQueue does not cover"
            for g in cq.groups:
                wanted = [r for r in g.resources if r in need]
                if wanted and not any(
                    self.flavor_can_hold(cq_id, f, ps.flavor_class, need, wanted) for f in g.flavors
                ):
                    return i, self.describe_need(
                        cq_id, ps.name, count, need, wanted, g.flavors, ps.flavor_class
                    )
        return None

    def flavor_can_hold(
        self, cq: int, f: int, flavor_class: int, need: dict[int, int], wanted: list[int]
    ) -> bool:
        if self.topo.flavor_names[f] not in self.state.resource_flavors:
            return False
        if self.topo.flavor_classes[flavor_class][f] is not None:
            return False
        return all(need[r] <= self.potential(cq, self.topo.fr_id(f, r)) for r in wanted)

    def describe_need(
        self,
        cq: int,
        name: str,
        count: int,
        need: dict[int, int],
        wanted: list[int],
        flavors: list[int],
        cls: int,
    ) -> str:
        topo = self.topo
        r = wanted[0]
        rname = topo.resource_names[r]
        for r2 in wanted:  # the resource that no usable flavor can hold, if one is
            usable = [f for f in flavors if topo.flavor_classes[cls][f] is None]
            if usable and all(need[r2] > self.potential(cq, topo.fr_id(f, r2)) for f in usable):
                r, rname = r2, topo.resource_names[r2]
                break
        amount = format_quantity(rname, need[r])
        head = f"pod set {name} needs {amount} {rname} ({count} pods)"
        limits = []
        for f in flavors:
            fname = topo.flavor_names[f]
            rejection = topo.flavor_classes[cls][f]
            if fname not in self.state.resource_flavors:
                limits.append(f"{fname}: no such ResourceFlavor")
            elif rejection is not None:
                limits.append(rejection)
            else:
                at_most = format_amount(rname, self.potential(cq, topo.fr_id(f, r)))
                limits.append(f"at most {at_most} in flavor {fname}")
        return f"{head}, more than its ClusterQueue can ever get ({'; '.join(limits)})"

    # --- 4. flavor taints no workload tolerates -----------------------------------------------

    def untolerated_taints(self) -> None:
        st = self.state
        users: dict[str, list[str]] = {}  # flavor -> ClusterQueues listing it
        for cq in st.cluster_queues.values():
            for g in cq.resource_groups:
                for fq in g.flavors:
                    users.setdefault(fq.name, []).append(cq.name)
        for fname, cq_names in sorted(users.items()):
            flavor = st.resource_flavors.get(fname)
            if flavor is None or untolerated_taint(flavor, []) is None:
                continue  # missing (check 1), or no taint its own tolerations leave
            ids = {self.cq_id[n] for n in cq_names}
            queued = [
                st.workloads[k]
                for k, spec in self.specs.items()
                if spec.cluster_queue in ids and not st.workloads[k].finished
            ]
            if not queued:
                continue
            if any(untolerated_taint(flavor, ps.tolerations) is None for wl in queued for ps in wl.pod_sets):
                continue
            taint = untolerated_taint(flavor, [])
            assert taint is not None
            i = flavor.node_taints.index(taint)
            shown = (
                f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"
            )
            self.warn(
                f"ResourceFlavor/{fname}",
                f"spec.nodeTaints[{i}]",
                f"taint {shown}: none of the {len(queued)} workload(s) queued to the ClusterQueues that use "
                f"this flavor ({', '.join(sorted(set(cq_names)))}) tolerates it, so none is ever assigned "
                "to it",
            )

    # --- 5. StrictFIFO queues blocked by a head that can never fit -------------------------------

    def strict_fifo_blocked(self, never_fit: dict[str, str]) -> None:
        queues: dict[int, list[tuple[m.Workload, WorkloadSpec]]] = {}
        for wl, spec in self.pending():
            queues.setdefault(spec.cluster_queue, []).append((wl, spec))
        for cq_id, entries in sorted(queues.items()):
            cq = self.topo.cluster_queues[cq_id]
            if self.state.cluster_queues[cq.name].queueing_strategy != "StrictFIFO" or len(entries) < 2:
                continue
            # cluster_queue.go queueOrdering: priority, then queue timestamp (ties: namespace, name)
            head, _ = min(entries, key=lambda e: (-e[1].priority, e[1].queue_ts, e[0].namespace, e[0].name))
            if head.key in never_fit:
                obj, _ = self.workload_ref(head)
                self.warn(
                    f"ClusterQueue/{cq.name}",
                    "spec.queueingStrategy",
                    f"StrictFIFO: its head, {obj}, can never be admitted, so the {len(entries) - 1} "
                    "workload(s) behind it are never admitted either",
                )

    # --- 6. limits that make quota unreachable ---------------------------------------------------

    def unreachable_quota(self) -> None:
        st = self.state
        nodes: list[tuple[str, int, list[m.ResourceGroup], bool]] = [
            (f"ClusterQueue/{cq.name}", self.cq_id[cq.name], cq.resource_groups, cq.cohort is not None)
            for cq in st.cluster_queues.values()
        ]
        nodes += [
            (f"Cohort/{co.name}", self.cohort_node[co.name], co.resource_groups, co.parent is not None)
            for co in st.cohorts.values()
        ]
        for ref, node, groups, has_parent in nodes:
            for path, fq, rq in self.quota_paths(groups):
                fr = self.topo.fr_id(self.fid[fq.name], self.rid[rq.name])
                if has_parent and rq.borrowing_limit:
                    self.check_borrowing(ref, node, fr, path, fq.name, rq)
                if node >= self.topo.n_cq and rq.nominal > 0 and not self.subtree_covers(node, fr):
                    self.warn(
                        ref,
                        f"{path}.nominalQuota",
                        f"no ClusterQueue below this cohort has quota for {rq.name} in flavor {fq.name}, "
                        "so none can use it",
                    )

    def check_borrowing(
        self, ref: str, node: int, fr: int, path: str, flavor: str, rq: m.ResourceQuota
    ) -> None:
        """A borrowingLimit beyond what the rest of the cohort can ever lend
        (PotentialAvailable over the node's own quota) never binds."""
        tree = self.tree
        own = tree.subtree_quota[node].get(fr, 0)
        limit = rq.borrowing_limit or 0
        if own == NO_LIMIT or limit == NO_LIMIT:
            return
        could_borrow = max(0, self.potential(node, fr) - own)
        if could_borrow >= limit:
            return
        shown = format_quantity(rq.name, limit)
        if could_borrow == 0:
            why = (
                f"borrowingLimit {shown} can never be used: the rest of the cohort lends nothing for "
                f"{rq.name} in flavor {flavor} (no quota there, or lendingLimit 0)"
            )
        else:
            why = (
                f"borrowingLimit {shown} is never reached: the rest of the cohort lends at most "
                f"{format_quantity(rq.name, could_borrow)} for {rq.name} in flavor {flavor}"
            )
        self.warn(ref, f"{path}.borrowingLimit", why)

    def subtree_covers(self, node: int, fr: int) -> bool:
        return any(fr in self.topo.quotas[cq] for cq in self.subtree_cqs(node))

    def subtree_cqs(self, node: int) -> list[int]:
        if node < self.topo.n_cq:
            return [node]
        return [cq for child in self.tree.children[node] for cq in self.subtree_cqs(child)]
