"""Kueue's job integrations: a job object -> the Workload(s) Kueue creates for it.

Pure functions of objects (no Kubernetes client: importable without the
``controller`` extra). :mod:`.framework` holds what Kueue's jobframework
decides for every kind (is the job managed, its LocalQueue, its priority,
generated names); one module per kind (:mod:`.job` for ``batch/v1`` Jobs)
holds the kind's pod sets and validation, with the same entry points:

* ``workloads_for(obj, env) -> Conversion``: the Workload dicts (as the
  API server would hold them), or the reason there are none, for an object of
  offline manifests;
* ``owner_field(workload_field) -> str``: where a Workload field comes from
  in the job, to name the job's field in errors;
* ``API_VERSION``, ``KIND``.

The loader reads the kinds listed in :data:`INTEGRATIONS`; the controller
builds Job Workloads with :func:`.job.build_workload`.
"""

from __future__ import annotations

from types import ModuleType

from . import job
from .framework import Conversion, Environment

__all__ = ["INTEGRATIONS", "Conversion", "Environment", "integration_for", "job"]

# (apiVersion, kind) -> the module that converts it
INTEGRATIONS: dict[tuple[str, str], ModuleType] = {(job.API_VERSION, job.KIND): job}


def integration_for(api_version: object, kind: object) -> ModuleType | None:
    """The integration module for objects of this apiVersion and kind, if any."""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    return INTEGRATIONS.get((api_version, kind))
