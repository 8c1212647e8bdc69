"""A ClusterQueue's and a LocalQueue's readiness (their Active condition:
missing flavors, admission checks, topologies, a stopped queue) and the queue
statuses that report it with the flavors' usage (pkg/controller/core:
clusterqueue_controller.go, localqueue_controller.go; pkg/cache clusterqueue.go),
for the controller, ``kueue-fast schedule --output yaml`` and the engines'
inputs (a ClusterQueue that is not active admits nothing).

Pure functions over slimmed API objects; conditions as cluster/status_writer.py
sets them, the status applied by a merge patch of the status subresource.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..api.model import MULTIKUEUE_CONTROLLER, PROVISIONING_CONTROLLER
from ..api.quantity import format_quantity, parse_quantity
from .status_writer import JSON, observed_generation, set_condition, truncate_message

if TYPE_CHECKING:
    from ..api.model import ClusterQueue, ClusterState, LocalQueue


# --- readiness (the Active conditions) --------------------------------------------------------


@dataclass(frozen=True)
class Readiness:
    """A queue's Active condition: status, Kueue's reason and message."""

    active: bool
    reason: str
    message: str

    def as_tuple(self) -> tuple[bool, str, str]:
        return self.active, self.reason, self.message


CLUSTER_QUEUE_READY = Readiness(True, "Ready", "Can admit new workloads")


def admission_check_problems(cq: ClusterQueue, state: ClusterState) -> tuple[list[str], list[str]]:
    """(missing, inactive) AdmissionChecks the ClusterQueue names, each sorted
    (kueue clusterqueue.go updateWithAdmissionChecks)."""
    known = state.admission_checks
    missing = sorted(n for n in set(cq.admission_checks) if n not in known)
    inactive = sorted(n for n in set(cq.admission_checks) if n in known and not known[n].active)
    return missing, inactive


def _controller_check_problems(cq: ClusterQueue, state: ClusterState) -> list[tuple[str, str]]:
    """(reason, message) for the rules on MultiKueue and ProvisioningRequest
    checks (clusterqueue.go updateWithAdmissionChecks, inactiveReason)."""
    names = sorted(set(cq.admission_checks))
    known = state.admission_checks
    by_controller = {n: known[n].controller_name for n in names if n in known}
    multikueue = [n for n, c in by_controller.items() if c == MULTIKUEUE_CONTROLLER]
    provisioning = [n for n, c in by_controller.items() if c == PROVISIONING_CONTROLLER]
    per_flavor = [n for n in multikueue if _check_flavors(cq, n) != _all_flavors(cq)]
    out = []
    if len(multikueue) > 1:
        out.append(
            (
                "MultipleMultiKueueAdmissionChecks",
                "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: "
                + ",".join(multikueue),
            )
        )
    if per_flavor:
        out.append(
            (
                "MultiKueueAdmissionCheckAppliedPerFlavor",
                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {','.join(per_flavor)}",
            )
        )
    if multikueue and provisioning:
        out.append(
            (
                "MultiKueueWithProvisioningRequest",
                "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: "
                f"{','.join(multikueue)}, {','.join(provisioning)}",
            )
        )
    return out


def _all_flavors(cq: ClusterQueue) -> set[str]:
    return {f.name for g in cq.resource_groups for f in g.flavors}


def _check_flavors(cq: ClusterQueue, check: str) -> set[str]:
    """The flavors a check applies to (admissioncheck.go NewAdmissionChecks:
    no onFlavors means every flavor of the queue)."""
    on = cq.admission_check_flavors.get(check)
    return set(on) if on else _all_flavors(cq)


def cluster_queue_readiness(cq: ClusterQueue, state: ClusterState) -> Readiness:
    """The Active condition Kueue writes on a ClusterQueue (kueue cache.go
    ClusterQueueReadiness, clusterqueue.go inactiveReason): every problem is
    listed in the message, the first one gives the reason. A cohort cycle is
    not among them: Kueue leaves such a ClusterQueue out of its scheduling
    snapshot (snapshot.go skipInactiveCQReason) while its condition stays Ready."""
    reasons: list[str] = []
    messages: list[str] = []
    if cq.stop_policy != "None":
        reasons.append("Stopped")
        messages.append("is stopped")
    missing_flavors = [
        f.name for g in cq.resource_groups for f in g.flavors if f.name not in state.resource_flavors
    ]
    if missing_flavors:
        reasons.append("FlavorNotFound")
        messages.append(f"references missing ResourceFlavor(s): {','.join(missing_flavors)}")
    missing_checks, inactive_checks = admission_check_problems(cq, state)
    if missing_checks:
        reasons.append("AdmissionCheckNotFound")
        messages.append(f"references missing AdmissionCheck(s): {','.join(missing_checks)}")
    if inactive_checks:
        reasons.append("AdmissionCheckInactive")
        messages.append(f"references inactive AdmissionCheck(s): {','.join(inactive_checks)}")
    for reason, message in _controller_check_problems(cq, state):
        reasons.append(reason)
        messages.append(message)
    for flavor, topology in _missing_topologies(cq, state):
        reasons.append("TopologyNotFound")
        messages.append(f'there is no Topology "{topology}" for TAS flavor "{flavor}"')
    if not reasons:
        return CLUSTER_QUEUE_READY
    return Readiness(
        False, reasons[0], truncate_message(f"Can't admit new workloads: {', '.join(messages)}.")
    )


def _missing_topologies(cq: ClusterQueue, state: ClusterState) -> list[tuple[str, str]]:
    """The TAS flavors of the ClusterQueue whose Topology does not exist, by
    name (kueue clusterqueue.go inactiveReason: their TAS cache is missing)."""
    out = []
    for name in sorted({f.name for g in cq.resource_groups for f in g.flavors}):
        rf = state.resource_flavors.get(name)
        if rf is not None and rf.topology_name is not None and rf.topology_name not in state.topologies:
            out.append((name, rf.topology_name))
    return out


def local_queue_readiness(lq: LocalQueue, state: ClusterState) -> Readiness:
    """The Active condition Kueue writes on a LocalQueue (kueue
    localqueue_controller.go Reconcile)."""
    if lq.stop_policy != "None":
        return Readiness(False, "Stopped", "LocalQueue is stopped")
    cq = state.cluster_queues.get(lq.cluster_queue)
    if cq is None:
        return Readiness(False, "ClusterQueueDoesNotExist", "Can't submit new workloads to clusterQueue")
    if not cluster_queue_readiness(cq, state).active:
        return Readiness(False, "ClusterQueueIsInactive", "Can't submit new workloads to clusterQueue")
    return Readiness(True, "Ready", "Can submit new workloads to localQueue")


# --- queues -----------------------------------------------------------------------------------


FlavorUsage = dict[str, dict[str, int]]  # flavor -> resource -> amount


def flavors_usage(
    cq_obj: JSON, usage: FlavorUsage, *, borrowed: bool, has_parent: bool | None = None
) -> list[JSON]:
    """``flavorsReservation`` / ``flavorsUsage`` (kueue cache.go getUsage):
    every flavor of the ClusterQueue in spec order, each with its group's
    covered resources sorted by name, with total (and borrowed: the part
    above nominal quota, always 0 for a ClusterQueue without a cohort).
    has_parent: the ClusterQueue is in a cohort (default: from its spec)."""
    spec = cq_obj.get("spec") or {}
    if has_parent is None:
        has_parent = bool(spec.get("cohortName") or spec.get("cohort"))
    out: list[JSON] = []
    for rg in spec.get("resourceGroups") or []:
        for fq in rg.get("flavors") or []:
            fname = fq.get("name")
            resources = []
            nominal = {r.get("name"): r.get("nominalQuota") for r in fq.get("resources") or []}
            for rname in sorted(rg.get("coveredResources") or []):
                total = usage.get(fname, {}).get(rname, 0)
                entry: JSON = {"name": rname, "total": format_quantity(rname, total)}
                if borrowed:
                    nq = nominal.get(rname)
                    nom = parse_quantity(nq, rname) if nq is not None else 0
                    over = total - nom if has_parent else 0
                    entry["borrowed"] = format_quantity(rname, max(0, over))
                resources.append(entry)
            out.append({"name": fname, "resources": resources})
    return out


def cluster_queue_status(
    cq_obj: JSON,
    pending: int,
    admitted: int,
    usage: FlavorUsage,
    active: tuple[bool, str, str],
    now_ns: int,
    *,
    reserving: int | None = None,
    admitted_usage: FlavorUsage | None = None,
    has_parent: bool | None = None,
    weighted_share: int | None = None,
) -> JSON:
    """ClusterQueue status (kueue clusterqueue_controller.go updateCqStatusIfChanged).

    ``usage`` and ``reserving`` count workloads holding quota (flavorsReservation,
    reservingWorkloads); ``admitted`` and ``admitted_usage`` the ones also
    admitted (flavorsUsage, admittedWorkloads): the same unless admission
    checks hold some back (by default they are). ``weighted_share``: with fair
    sharing on, status.fairSharing.weightedShare; None leaves fairSharing as it was."""
    st = copy.deepcopy(cq_obj.get("status") or {})
    st["pendingWorkloads"] = pending
    st["reservingWorkloads"] = admitted if reserving is None else reserving
    st["admittedWorkloads"] = admitted
    reserved = flavors_usage(cq_obj, usage, borrowed=True, has_parent=has_parent)
    used = (
        reserved
        if admitted_usage is None
        else flavors_usage(cq_obj, admitted_usage, borrowed=True, has_parent=has_parent)
    )
    _set_or_drop(st, "flavorsReservation", reserved)
    _set_or_drop(st, "flavorsUsage", copy.deepcopy(used))
    if weighted_share is not None:
        st["fairSharing"] = {"weightedShare": weighted_share}
    ok, reason, message = active
    st["conditions"] = set_condition(
        st.get("conditions") or [],
        "Active",
        "True" if ok else "False",
        reason,
        message,
        now_ns,
        observed_generation(cq_obj),
    )
    return st


def local_queue_status(
    lq_obj: JSON,
    cq_obj: JSON | None,
    pending: int,
    admitted: int,
    usage: FlavorUsage,
    active: tuple[bool, str, str],
    now_ns: int,
    *,
    reserving: int | None = None,
    admitted_usage: FlavorUsage | None = None,
) -> JSON:
    """LocalQueue status (kueue localqueue_controller.go updateStatusIfChanged);
    the flavors are its ClusterQueue's, without ``borrowed``. The caller
    gives a stopped LocalQueue 0 pending workloads, as Kueue counts none."""
    st = copy.deepcopy(lq_obj.get("status") or {})
    st["pendingWorkloads"] = pending
    st["reservingWorkloads"] = admitted if reserving is None else reserving
    st["admittedWorkloads"] = admitted
    reserved = flavors_usage(cq_obj, usage, borrowed=False) if cq_obj is not None else []
    used = reserved
    if cq_obj is not None and admitted_usage is not None:
        used = flavors_usage(cq_obj, admitted_usage, borrowed=False)
    _set_or_drop(st, "flavorsReservation", reserved)
    _set_or_drop(st, "flavorsUsage", copy.deepcopy(used))
    ok, reason, message = active
    st["conditions"] = set_condition(
        st.get("conditions") or [],
        "Active",
        "True" if ok else "False",
        reason,
        message,
        now_ns,
        observed_generation(lq_obj),
    )
    return st


def _set_or_drop(st: JSON, key: str, value: list[JSON]) -> None:
    """Kueue's status lists are omitempty: an empty one is not written."""
    if value:
        st[key] = value
    else:
        st.pop(key, None)


def status_differs(old: JSON | None, new: JSON) -> bool:
    """Compare statuses ignoring condition transition times."""

    def norm(s: JSON | None) -> JSON:
        s = copy.deepcopy(s or {})
        for c in s.get("conditions") or []:
            c.pop("lastTransitionTime", None)
        return s

    return norm(old) != norm(new)
