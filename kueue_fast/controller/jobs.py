"""batch/v1 Jobs as Kueue handles them: their Workload, the patch that starts
them on admission, and the steps that stop them again.

Everything here is a pure function of (slimmed) API objects; the reconciler
decides when to call them and the writer sends the results. Kueue's rules
followed (kueue-cluster-facts.md and ``pkg/controller/jobframework``,
``pkg/controller/jobs/job``):

* the Workload is named ``job-<name>-<5 hex of sha1>``, labelled with the
  Job's uid, owned by the Job (controller, blockOwnerDeletion) and carries the
  ``kueue.x-k8s.io/resource-in-use`` finalizer; one pod set ``main`` with
  ``count = min(parallelism, completions)`` and the Job's pod template;
* on admission one patch: ``suspend: false``, the flavors' nodeLabels merged
  into the template's nodeSelector, their tolerations appended without
  duplicates (nothing else changes);
* to stop: (1) suspend plus the ``kueue.x-k8s.io/stopping`` annotation,
  (2) ``status.startTime`` cleared, (3) template restored from the Workload's
  pod set and the annotation removed: the API server lets the template change
  only while the Job is suspended and not started.
"""

from __future__ import annotations

from typing import Any

from ..integrations import job as _job
from ..integrations.framework import JOB_UID_LABEL, PRIORITY_LABEL, QUEUE_LABEL, RESOURCE_IN_USE
from ..integrations.job import pods_count, workload_name

__all__ = [
    "JOB_UID_LABEL",
    "PRIORITY_LABEL",
    "QUEUE_LABEL",
    "RESOURCE_IN_USE",
    "STOPPING_ANNOTATION",
    "build_workload",
    "finished",
    "injected",
    "is_stopped",
    "is_suspended",
    "pods_count",
    "start_patch",
    "stop_step",
    "template_spec",
    "workload_name",
]

JSON = dict[str, Any]

STOPPING_ANNOTATION = "kueue.x-k8s.io/stopping"


def finished(job: JSON) -> tuple[bool, bool, str]:
    """(finished, failed, message) from the Job's Complete / Failed conditions."""
    for c in (job.get("status") or {}).get("conditions") or []:
        if c.get("status") == "True" and c.get("type") in ("Complete", "Failed"):
            return True, c["type"] == "Failed", str(c.get("message") or "")
    return False, False, ""


def is_suspended(job: JSON) -> bool:
    return bool((job.get("spec") or {}).get("suspend"))


def template_spec(job: JSON) -> JSON:
    return ((job.get("spec") or {}).get("template") or {}).get("spec") or {}


def build_workload(job: JSON, priority: int | None, priority_class: str | None) -> JSON:
    """The Workload Kueue's job reconciler creates for a queued Job (the
    informer's slimmed Job: its template's derived labels put back)."""
    from .informers import job_template

    return _job.build_workload(job, priority, priority_class, template=job_template(job))


def _toleration_key(t: JSON) -> tuple[Any, ...]:
    return (
        t.get("key"),
        t.get("operator") or "Equal",
        t.get("value"),
        t.get("effect"),
        t.get("tolerationSeconds"),
    )


def injected(original: JSON, flavors: list[JSON]) -> tuple[dict[str, str], list[JSON]]:
    """nodeSelector and tolerations of the original pod spec with the flavors'
    nodeLabels and tolerations added (Kueue's podset.Merge)."""
    selector = dict(original.get("nodeSelector") or {})
    tolerations = [dict(t) for t in original.get("tolerations") or []]
    seen = {_toleration_key(t) for t in tolerations}
    for f in flavors:
        fs = f.get("spec") or {}
        for k, v in (fs.get("nodeLabels") or {}).items():
            selector[k] = v
        for t in fs.get("tolerations") or []:
            if _toleration_key(t) not in seen:
                seen.add(_toleration_key(t))
                tolerations.append(dict(t))
    return selector, tolerations


def start_patch(job: JSON, original: JSON, flavors: list[JSON]) -> JSON | None:
    """The merge patch that starts an admitted Job, or None if it runs already
    with the flavors' node labels and tolerations."""
    selector, tolerations = injected(original, flavors)
    cur = template_spec(job)
    annotations = job["metadata"].get("annotations") or {}
    same = (
        not is_suspended(job)
        and dict(cur.get("nodeSelector") or {}) == selector
        and list(cur.get("tolerations") or []) == tolerations
        and STOPPING_ANNOTATION not in annotations
    )
    if same:
        return None
    tspec: JSON = {
        "nodeSelector": _map_patch(cur.get("nodeSelector") or {}, selector),
        "tolerations": tolerations or None,
    }
    patch: JSON = {
        "metadata": {"resourceVersion": job["metadata"]["resourceVersion"]},
        "spec": {"suspend": False, "template": {"spec": tspec}},
    }
    if STOPPING_ANNOTATION in annotations:
        patch["metadata"]["annotations"] = {STOPPING_ANNOTATION: None}
    return patch


def _map_patch(cur: dict[str, str], want: dict[str, str]) -> dict[str, Any] | None:
    """A merge patch turning map ``cur`` into ``want`` (None: remove the map)."""
    if not want:
        return None
    out: dict[str, Any] = {k: None for k in cur if k not in want}
    out.update(want)
    return out


def stop_step(job: JSON, original: JSON | None) -> tuple[str, JSON] | None:
    """The next write of the three-step stop, as (kind, patch): kind is
    ``suspend`` (the Job), ``clear-start`` (jobs/status) or ``restore`` (the
    Job); None when the Job is stopped. ``original`` is the pod spec to restore
    (the Workload's pod set), None when there is nothing to restore."""
    md = job["metadata"]
    rv = md["resourceVersion"]
    annotations = md.get("annotations") or {}
    cur = template_spec(job)
    needs_restore = original is not None and (
        dict(cur.get("nodeSelector") or {}) != dict(original.get("nodeSelector") or {})
        or list(cur.get("tolerations") or []) != list(original.get("tolerations") or [])
    )
    stopping = STOPPING_ANNOTATION in annotations
    if not is_suspended(job):
        patch: JSON = {"metadata": {"resourceVersion": rv}, "spec": {"suspend": True}}
        if needs_restore:
            patch["metadata"]["annotations"] = {STOPPING_ANNOTATION: "true"}
        return "suspend", patch
    if (job.get("status") or {}).get("startTime"):
        # Kueue's Stop clears it always: the template can change again only then
        return "clear-start", {"metadata": {"resourceVersion": rv}, "status": {"startTime": None}}
    if needs_restore or stopping:
        assert original is not None or not needs_restore
        patch = {"metadata": {"resourceVersion": rv, "annotations": {STOPPING_ANNOTATION: None}}}
        if needs_restore and original is not None:
            patch["spec"] = {
                "template": {
                    "spec": {
                        "nodeSelector": _map_patch(
                            cur.get("nodeSelector") or {}, dict(original.get("nodeSelector") or {})
                        ),
                        "tolerations": list(original.get("tolerations") or []) or None,
                    }
                }
            }
        return "restore", patch
    return None


def is_stopped(job: JSON, original: JSON | None) -> bool:
    return stop_step(job, original) is None
