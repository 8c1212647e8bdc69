"""Kueue manifests (YAML or JSON, either API version) -> ``model.ClusterState``.

Reading (:func:`read_documents`) splits files (and directories, as
``kubectl apply -f``) into documents; building (:func:`build_state`) converts
each object with its per-kind converter (``parse_cluster_queue``...), which
applies Kueue's defaults and validation (``kueue_fast.api.validation``) and raises
errors naming the object and field. The converters work on single dicts, so
the cluster reconciler can feed them objects from the API server. Jobs become
the Workloads Kueue's job integrations create (``kueue_fast.integrations``);
kinds Kueue does not read are skipped with a warning. Every error of every
invalid object of an input is reported (``errors.raise_all``; an invalid
object is read again to find them all: ``error_collection.collect_errors``); what
is accepted but probably not meant is a warning (``ClusterState.warnings``).

Where things are (each module imports only those above it):

* ``limits``: what one input may hold (size, nesting, YAML aliases, keys
  given twice), checked by every reader of ``documents``;
* ``documents``: files, directories and standard input -> :class:`Document`
  (YAML and JSON parsing, with the fast parsers and why they were chosen);
* ``common``: the kinds and apiVersions read, the checks every converter
  makes (kind, apiVersion, metadata), conditions and times;
* ``kinds``: ResourceFlavor, ClusterQueue, Cohort, LocalQueue,
  AdmissionCheck, priority classes, Namespace; ``configuration``: Kueue's
  Configuration;
* ``workload``: a Workload, the exact path (every Workload error comes from
  here, with ``workload_spec`` and ``workload_status``, which also hold the
  Workload fields kueue-fast reads: the controller keeps those), and the
  entry of ``_bulk`` (Cython, loader/_bulk.pyx): the same result for many
  Workloads of a few shapes, faster; it gives None for anything else, which
  ``workload`` then reads. ``_objects`` (Cython) makes model instances
  directly and shares equal pod templates as the documents are read;
* the other Cython readers beside their Python twins: ``_yaml_block`` (with
  its characters and scalars in ``_yaml_scalars``), ``_yaml_risk``,
  ``_json_items``, ``_nesting`` (documents, limits);
* ``roles``: what is done with each document (read, a job, skipped and why);
* ``jobs``: jobs -> the Workloads Kueue's integrations create;
* ``state``: the whole input -> ClusterState (:func:`build_state`, :func:`load`).
"""

from __future__ import annotations

from .build import build_state, load
from .common import parse_time_ns
from .configuration import parse_configuration
from .documents import Document, manifest_files, read_documents
from .kinds import (
    parse_admission_check,
    parse_cluster_queue,
    parse_cohort,
    parse_local_queue,
    parse_namespace,
    parse_priority_class,
    parse_resource_flavor,
    parse_workload_priority_class,
)
from .workload import parse_workload
from .workload_spec import POD_SET_FIELDS, SPEC_FIELDS, V1BETA2_SPEC_FIELDS

__all__ = [
    "POD_SET_FIELDS",
    "SPEC_FIELDS",
    "V1BETA2_SPEC_FIELDS",
    "Document",
    "build_state",
    "load",
    "manifest_files",
    "parse_admission_check",
    "parse_cluster_queue",
    "parse_cohort",
    "parse_configuration",
    "parse_local_queue",
    "parse_namespace",
    "parse_priority_class",
    "parse_resource_flavor",
    "parse_time_ns",
    "parse_workload",
    "parse_workload_priority_class",
    "read_documents",
]
