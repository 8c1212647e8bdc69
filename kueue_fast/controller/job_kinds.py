"""The kinds of jobs the controller runs, as it meets them in the API.

What a kind of job *is* to Kueue (its Workload, the write that starts it,
the writes that stop it, finished or failed) lives in
``kueue_fast.integrations``, shared with ``kueue-fast schedule``; this module
adds what the controller needs on top, per kind (:class:`JobKind`): where the
API serves it, which of its fields the controller keeps in memory
(``slim``), and how a kept object is turned back into what the integration
reads (``full``). The reconciler goes through :data:`JOB_KINDS` only.

A kind whose CRD is not installed (JobSet on a cluster without JobSet) is
``optional``: its informer waits for it to be served instead of holding the
controller back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..integrations import Integration, integration_for, job as _job, jobset as _jobset
from ..integrations.framework import (
    JOB_UID_LABEL,
    PRIORITY_LABEL,
    QUEUE_LABEL,
    RESOURCE_IN_USE,
    controller_name,
)
from ..integrations.job import STOPPING_ANNOTATION, pods_count, workload_name
from ..kube.client import JOBS, JOBSETS, Resource
from ..kube.informers import Slimmer, job_template

__all__ = [
    "BY_NAME",
    "JOB_KINDS",
    "JOB_UID_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "RESOURCE_IN_USE",
    "STOPPING_ANNOTATION",
    "JobKind",
    "finished",
    "owner_of",
    "pods_count",
    "workload_name",
]

JSON = dict[str, Any]


@dataclass(frozen=True)
class JobKind:
    name: str  # the controller's name of the kind (its informer's, its objects' store)
    integration: Integration
    resource: Resource
    slim: Callable[[Slimmer, JSON], JSON]
    full: Callable[[JSON], JSON]  # a kept object as the API server has it (as far as Kueue reads it)
    optional: bool = False  # served only where its CRD is installed

    @property
    def events_controller(self) -> str:
        """The reporting controller of the Events Kueue records on this kind."""
        return controller_name(self.integration.FRAMEWORK)

    def workload_key(self, obj: JSON) -> str:
        md = obj["metadata"]
        return f"{md['namespace']}/{self.integration.workload_name(md['name'], md.get('uid') or '')}"


def _full_job(job: JSON) -> JSON:
    """The Job with its template's labels put back (the slimmer keeps only
    the ones the API server does not derive from the Job's name and uid)."""
    return {**job, "spec": {**(job.get("spec") or {}), "template": job_template(job)}}


JOB_KINDS: tuple[JobKind, ...] = (
    JobKind("job", _job, JOBS, Slimmer.job, _full_job),
    JobKind("jobset", _jobset, JOBSETS, Slimmer.jobset, lambda js: js, optional=True),
)
BY_NAME = {k.name: k for k in JOB_KINDS}


def owner_of(wl: JSON) -> tuple[JobKind, str] | None:
    """The job kind and ``namespace/name`` of the job that controls a Workload."""
    for r in wl["metadata"].get("ownerReferences") or []:
        if not r.get("controller"):
            continue
        integration = integration_for(r.get("apiVersion"), r.get("kind"))
        for k in JOB_KINDS:
            if k.integration is integration:
                return k, f"{wl['metadata']['namespace']}/{r['name']}"
    return None


def finished(job: JSON) -> tuple[bool, bool, str]:
    """A batch/v1 Job's (finished, failed, message)."""
    return _job.finished(job)
