"""The reference engine's records: a workload as the engine keeps it
(WorkloadRecord), a head in the cycle (Entry), and the states and
QuotaReserved=False reasons they carry (kueue pkg/scheduler/scheduler.go)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..inputs import WorkloadSpec
from . import amount, flavor_assigner as fa
from .preemption import Target
from .queues import REQUEUE_GENERIC
from .tas import TasUse

if TYPE_CHECKING:
    from ..inputs import AdmissionSpec, Topology

PENDING, ADMITTED, FINISHED = "pending", "admitted", "finished"

# QuotaReserved=False reasons (UnadmittedWorkloadsObservability, beta, on);
# the NoFit ones are the flavor assigner's.
WAITING_FOR_QUOTA = fa.WAITING_FOR_QUOTA
WAITING_FOR_PREEMPTED = "WaitingForPreemptedWorkloads"
MISCONFIGURED = "Misconfigured"
SUSPENDED = "Suspended"

# waitForPodsReady.blockAdmission (scheduler.go waitForPodsReadyIfNeeded)
WAITING_FOR_PODS_READY = "WaitingForPodsReady"
MSG_WAITING_FOR_PODS_READY = "waiting for all admitted workloads to be in PodsReady condition"
MSG_OVERLAP = "Workload has overlapping preemption targets with another workload"
MSG_NO_LONGER_FITS = "Workload no longer fits after processing another workload"
MSG_DEFERRED = (
    "Workload has overlapping preemption targets with another workload, "
    "but will fit after these preemptions complete"
)


@dataclass
class WorkloadRecord:
    spec: WorkloadSpec
    status: str = PENDING
    # admission (status ADMITTED)
    admitted_cq: int = -1
    admitted_pod_sets: list[tuple[int, dict[int, int]]] = field(default_factory=list)  # (count, rid -> fid)
    admitted_resource_usage: list[dict[int, int]] = field(default_factory=list)  # per pod set rid -> total
    usage: dict[int, int] = field(default_factory=dict)  # fr -> amount charged to admitted_cq
    # Topology Aware Scheduling: the usage its placements charge (with each
    # pod set's per-pod requests), and the placements the engine made, per
    # pod set (None: the admission is the input's, not the engine's)
    tas_uses: list[tuple[TasUse, list[int]]] = field(default_factory=list)
    topology: list[tuple[int, list[tuple[int, int]]] | None] | None = None
    admission_time: int = 0
    evicting: bool = False  # preempted, quota not released yet (controller mode)
    # the last scheduling attempt
    last_state: fa.LastState | None = None
    reason: str = ""
    message: str = ""
    attempted: bool = False
    # the last eviction
    evicted_cycle: int = -1
    eviction_reason: str = ""
    eviction_message: str = ""
    preempted_by: int = -1


def admitted_record(spec: WorkloadSpec, adm: AdmissionSpec) -> WorkloadRecord:
    """The record of a workload added with its admission (``spec.admission``):
    the flavors and usage of its pod sets, and of its TAS placements."""
    rec = WorkloadRecord(spec)
    rec.admitted_pod_sets = [(count, {r: f for r, f, _ in use if f >= 0}) for count, use in adm.pod_sets]
    rec.admitted_resource_usage = [{r: v for r, _, v in use} for _, use in adm.pod_sets]
    if adm.tas:
        rec.tas_uses = [
            (use, spec.pod_sets[i].tas_requests or []) for i, uses in enumerate(adm.tas) for use in uses
        ]
    return rec


def admission_usage(adm: AdmissionSpec, topo: Topology) -> dict[int, int]:
    """The usage an input admission charges, per flavor-resource."""
    usage: dict[int, int] = {}
    for _, use in adm.pod_sets:
        for r, f, v in use:
            if f >= 0:
                fr = topo.fr_id(f, r)
                usage[fr] = amount.add(usage.get(fr, 0), v)
    return usage


@dataclass
class Entry:
    wid: int
    cq: int
    assignment: fa.Assignment | None = None
    targets: list[Target] = field(default_factory=list)
    status: str = ""  # "", "skipped", "assumed", "waiting" (not processed: blocked before it)
    message: str = ""
    reason: str = ""
    requeue_reason: str = REQUEUE_GENERIC
    deferred: bool = False
    is_preemptor: bool = False  # waiting for its preemptions (PrioritizePreemptorWorkloads)
    # For settled trees (run_until_settled): the flavor scan resumed after an
    # earlier one, the queue's sticky and preemptor workloads before the pop,
    # and, once requeued, whether a replay of the attempt would repeat it.
    resumed: bool = False
    settled: bool = False
    sticky_before: int = -1
    preemptor_before: int = -1
