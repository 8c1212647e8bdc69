"""What the controller keeps per Job/Workload pair (:class:`Track`), where
the workload is in the engine (:class:`Phase`) and the writes the flow makes
(:class:`Write`): shared by the controller's parts without an
import cycle."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

JSON = dict[str, Any]
# what to do once a write landed, given the object the server returned
Then = Callable[[JSON], None]


class Phase(str, enum.Enum):
    """Where a workload is in the engine (a str: compares with the names)."""

    PENDING = "pending"
    ADMITTED = "admitted"  # holds quota (or reserved, waiting for its checks)
    EVICTING = "evicting"  # evicted, keeps its quota until its job stopped


class Write(str, enum.Enum):
    """The writes of the per-workload flow, queues and finalizers (the
    writer's operation names, also the failures metric's label)."""

    CREATE_WORKLOAD = "create-workload"
    DELETE_WORKLOAD = "delete-workload"
    ADMIT = "admit"
    EVICT = "evict"
    REQUEUE = "requeue"
    UNADMIT = "unadmit"
    PENDING = "pending"
    FINISH = "finish"
    PODS_READY = "pods-ready"
    BACKOFF_FINISHED = "backoff-finished"
    DEACTIVATE = "deactivate"
    FINALIZER = "finalizer"
    START_JOB = "start-job"
    # a job's stop, one per step of the integration's stop_step
    STOP_SUSPEND = "stop-suspend"
    STOP_CLEAR_START = "stop-clear-start"
    STOP_RESTORE = "stop-restore"
    QUEUE_FINALIZER = "queue-finalizer"
    QUEUE_STATUS = "queue-status"
    UNGATE = "ungate-pod"  # a TAS pod's scheduling gate removed (ungater.py)


@dataclass(slots=True)
class Track:
    """One Job/Workload pair (keyed by the Workload's namespace/name)."""

    key: str
    job_key: str | None = None  # "<job kind>:<namespace>/<name>" (cache.job_key)
    in_engine: bool = False
    phase: Phase | None = None  # while in the engine
    generation: int = 0
    adm_cq: str | None = None
    adm_usage: tuple[tuple[str, str, int], ...] = ()
    evict: tuple[str, str, str | None] | None = None  # (reason, message, preempted reason)
    preempted_by: str | None = None  # the preemptor's key, while a preemption is written
    failures: int = 0
    conflicts: int = 0
    not_before: float = 0.0
    quarantined_rv: str | None = None
    quarantined_until: float = 0.0
    invalid_rv: str | None = None
    queued_ns: int = 0
    pending_written: tuple[str, str] | None = None
