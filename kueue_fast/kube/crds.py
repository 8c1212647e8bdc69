"""The CustomResourceDefinitions of ``kueue-fast manifests crds``, generated
from the field declarations the loader validates against (``api_fields``), so
that the API server checks what kueue-fast checks and ``kubectl explain``
describes it.

Versions, and why they are safe without a conversion webhook:

* ``v1beta2`` is served and stored, as in Kueue's own CRDs.
* ``v1beta1`` is listed too (deprecated, not stored), so that the CRDs apply
  over a cluster whose CRDs stored v1beta1 objects (the API server refuses to
  drop a version named in ``status.storedVersions``). Without a webhook the
  API server converts by relabelling the apiVersion (strategy None). That is
  exact only when both versions have the same fields: ResourceFlavor,
  WorkloadPriorityClass, Cohort and LocalQueue (their statuses differ, but the
  controller writes those in v1beta2). Their v1beta1 is served.
  ClusterQueue and Workload renamed fields (``cohort`` -> ``cohortName``,
  ``priorityClassName`` -> ``priorityClassRef``): Kueue converts them with its
  webhook. Their v1beta1 is listed but not served: the API server answers
  "no matches for kind" to a v1beta1 write instead of storing it without its
  renamed fields. Objects already stored in v1beta1 reach the controller
  with v1beta1 field names; it names them and leaves them alone (docs/controller.md, The CRDs).

Schemas: structural, closed where the loader refuses unknown fields, open
(``x-kubernetes-preserve-unknown-fields``) where it reads only part of an
object (pod templates, statuses); list types as Kueue's CRDs declare them
(server-side apply merges conditions by type, pod set assignments by name).
"""

from __future__ import annotations

from typing import Any

from ..api import fields as af
from ..api.field_types import ARRAY, MAP, OBJECT, QUANTITY, Field

JSON = dict[str, Any]

GROUP = "kueue.x-k8s.io"
STORAGE_VERSION = "v1beta2"
OLD_VERSION = "v1beta1"

# apimachinery's resource.Quantity pattern (what Kueue's CRDs carry)
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

_AGE: JSON = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def _column(name: str, type_: str, path: str, description: str = "", priority: int = 0) -> JSON:
    col: JSON = {"name": name, "type": type_, "jsonPath": path}
    if priority:
        col["priority"] = priority
    if description:
        col["description"] = description
    return col


# kind -> (plural, scope, short names, status subresource, printer columns): Kueue's names and columns
_KINDS: dict[str, tuple[str, str, tuple[str, ...], bool, list[JSON]]] = {
    "ResourceFlavor": ("resourceflavors", "Cluster", ("flavor", "flavors", "rf"), False, [_AGE]),
    "ClusterQueue": (
        "clusterqueues",
        "Cluster",
        ("cq",),
        True,
        [
            _column("Cohort", "string", ".spec.cohortName", "Cohort that this ClusterQueue belongs to"),
            _column("Strategy", "string", ".spec.queueingStrategy", "The queueing strategy", 1),
            _column(
                "Pending Workloads", "integer", ".status.pendingWorkloads", "Number of pending workloads"
            ),
            _column(
                "Admitted Workloads",
                "integer",
                ".status.admittedWorkloads",
                "Number of admitted workloads that haven't finished yet",
                1,
            ),
            _AGE,
        ],
    ),
    "Cohort": ("cohorts", "Cluster", ("co",), True, [_AGE]),
    "LocalQueue": (
        "localqueues",
        "Namespaced",
        ("queue", "queues", "lq"),
        True,
        [
            _column("ClusterQueue", "string", ".spec.clusterQueue", "Backing ClusterQueue"),
            _column(
                "Pending Workloads", "integer", ".status.pendingWorkloads", "Number of pending workloads"
            ),
            _column(
                "Admitted Workloads",
                "integer",
                ".status.admittedWorkloads",
                "Number of admitted workloads that haven't finished yet",
            ),
            _AGE,
        ],
    ),
    "WorkloadPriorityClass": (
        "workloadpriorityclasses",
        "Cluster",
        ("wpc",),
        False,
        [_column("Value", "integer", ".value", "Value of the priority"), _AGE],
    ),
    "Workload": (
        "workloads",
        "Namespaced",
        ("kwl", "kueueworkload", "kueueworkloads"),
        True,
        [
            _column("Queue", "string", ".spec.queueName", "Name of the queue this workload was submitted to"),
            _column(
                "Reserved in",
                "string",
                ".status.admission.clusterQueue",
                "Name of the ClusterQueue where the workload is reserving quota",
            ),
            _column(
                "Admitted",
                "string",
                ".status.conditions[?(@.type=='Admitted')].status",
                "Admission status",
            ),
            _column(
                "Finished",
                "string",
                ".status.conditions[?(@.type=='Finished')].status",
                "Workload finished",
            ),
            _AGE,
        ],
    ),
    "AdmissionCheck": ("admissionchecks", "Cluster", ("ac",), True, [_AGE]),
    "Topology": ("topologies", "Cluster", ("topo",), False, [_AGE]),
}


def served_old_version(kind: str) -> bool:
    """v1beta1 is served when the API server's relabelling is an exact conversion."""
    return af.same_spec(kind, af.V1BETA1, af.V1BETA2)


def schema(f: Field, *, root: bool = False) -> JSON:
    """The structural openAPIV3Schema of a declared field."""
    out: JSON
    if f.type == QUANTITY:
        out = {
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": QUANTITY_PATTERN,
            "x-kubernetes-int-or-string": True,
        }
    elif f.type == MAP:
        assert f.values is not None
        out = {"type": "object", "additionalProperties": schema(f.values)}
        if f.max_properties is not None:
            out["maxProperties"] = f.max_properties
    elif f.type == OBJECT:
        out = {"type": "object"}
        if f.fields:
            out["properties"] = {
                # the API server validates an object's own metadata itself
                name: {"type": "object"} if root and name == "metadata" else schema(sub)
                for name, sub in f.fields.items()
            }
        if f.required:
            out["required"] = list(f.required)
        if f.open:
            out["x-kubernetes-preserve-unknown-fields"] = True
        assert f.fields or f.open, f"a closed object without fields would lose all it holds: {f}"
    elif f.type == ARRAY:
        assert f.items is not None
        out = {"type": "array", "items": schema(f.items)}
        if f.list_map_keys:
            # list-map keys must be required or defaulted (structural schema rule)
            for key in f.list_map_keys:
                assert key in f.items.required or f.items.fields[key].default is not None, (f, key)
            out["x-kubernetes-list-type"] = "map"
            out["x-kubernetes-list-map-keys"] = list(f.list_map_keys)
        else:
            out["x-kubernetes-list-type"] = "atomic"
        if f.min_items is not None:
            out["minItems"] = f.min_items
        if f.max_items is not None:
            out["maxItems"] = f.max_items
    else:
        out = {"type": f.type}
        if f.int32:
            out["format"] = "int32"
        if f.minimum is not None:
            out["minimum"] = f.minimum
        if f.enum:
            out["enum"] = list(f.enum)
    if f.default is not None:
        out["default"] = f.default
    if f.doc:
        out = {"description": f.doc, **out}
    return out


def crd(kind: str) -> JSON:
    plural, scope, short_names, status, columns = _KINDS[kind]
    versions = []
    for name, api, served, storage in (
        (STORAGE_VERSION, af.V1BETA2, True, True),
        (OLD_VERSION, af.V1BETA1, served_old_version(kind), False),
    ):
        v: JSON = {
            "name": name,
            "served": served,
            "storage": storage,
            "schema": {"openAPIV3Schema": schema(af.KINDS[kind][api], root=True)},
        }
        if not storage:
            v["deprecated"] = True
            v["deprecationWarning"] = (
                f"kueue.x-k8s.io/{name} {kind} is deprecated; use kueue.x-k8s.io/v1beta2"
            )
        if status:
            v["subresources"] = {"status": {}}
        v["additionalPrinterColumns"] = [
            {**c, "jsonPath": c["jsonPath"].replace(".spec.cohortName", ".spec.cohort")} if not storage else c
            for c in columns
        ]
        versions.append(v)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{plural}.{GROUP}",
            "labels": {"app.kubernetes.io/name": "kueue", "app.kubernetes.io/part-of": "kueue-fast"},
        },
        "spec": {
            "group": GROUP,
            "names": {
                "kind": kind,
                "listKind": f"{kind}List",
                "plural": plural,
                "singular": kind.lower(),
                "shortNames": list(short_names),
                "categories": ["kueue"],
            },
            "scope": scope,
            # no webhook: see the module docstring for why each version is safe
            "conversion": {"strategy": "None"},
            "versions": versions,
        },
    }


def crds() -> list[JSON]:
    return [crd(kind) for kind in _KINDS]


HEADER = """\
# Kueue's API (kueue.x-k8s.io) as kueue-fast reads and writes it: ResourceFlavor,
# ClusterQueue, Cohort, LocalQueue, WorkloadPriorityClass, Workload, AdmissionCheck,
# Topology. Generated by
# `kueue-fast manifests crds` from the field definitions its loader validates against.
#
# Do NOT apply these where Kueue's own CRDs are installed (`kubectl get crd
# clusterqueues.kueue.x-k8s.io` shows no app.kubernetes.io/part-of=kueue-fast label):
# Kueue's CRDs convert v1beta1 with Kueue's webhook and hold fields kueue-fast does not
# read; applying these over them would drop both. kueue-fast's controller runs on
# Kueue's CRDs as they are.
#
# Versions: v1beta2 is stored. v1beta1 is listed (so these apply over CRDs that stored
# v1beta1 objects) and served where it has the same fields as v1beta2 (ResourceFlavor,
# WorkloadPriorityClass, Cohort, LocalQueue, Topology); ClusterQueue and Workload renamed fields,
# which only Kueue's conversion webhook translates: their v1beta1 is not served.
"""


__all__ = ["HEADER", "crd", "crds", "schema", "served_old_version"]
