"""Kueue's job integrations: the kinds of jobs Kueue runs, each a module that
provides :class:`~.framework.Integration` (which kind, the Workload(s) for an
object, the write that starts it on admission, the writes that stop it,
finished or failed).

Pure functions of objects (no Kubernetes client: importable without the
``controller`` extra). :mod:`.framework` holds what Kueue's jobframework
decides for every kind (is the job managed, its LocalQueue, its priority,
generated names, what an admission changes in pod templates); one module per
kind holds the kind's pod sets, validation and writes:

* :mod:`.job`: ``batch/v1`` Jobs (partial admission);
* :mod:`.jobset`: ``jobset.x-k8s.io/v1alpha2`` JobSets.

The loader (``kueue-fast schedule``) and the controller both go through
:data:`INTEGRATIONS`, so offline and in a cluster a job gets the same
Workload. A third kind (Pod groups, RayJob, Kubeflow jobs) is one more module
registered here, plus its slimming in ``controller/job_kinds.py``.
"""

from __future__ import annotations

from . import job, jobset
from .framework import Conversion, Environment, Integration

__all__ = ["INTEGRATIONS", "Conversion", "Environment", "Integration", "integration_for", "job", "jobset"]

_MODULES: tuple[Integration, ...] = (job, jobset)

# (apiVersion, kind) -> the module that converts and runs it
INTEGRATIONS: dict[tuple[str, str], Integration] = {(m.API_VERSION, m.KIND): m for m in _MODULES}


def integration_for(api_version: object, kind: object) -> Integration | None:
    """The integration of objects of this apiVersion and kind, if any."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return INTEGRATIONS.get((api_version, kind))
