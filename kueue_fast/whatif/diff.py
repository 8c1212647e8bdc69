"""What differs between two configurations of the cluster: every object and
every field, status included (an AdmissionCheck made Active by a patch), but
what the API server writes for itself (``metadata`` but labels and
annotations).

Fields are compared leaf by leaf. A list whose elements all have distinct
names (flavors, resources) is matched by name, so a path reads
``spec.resourceGroups[1].flavors[a100].resources[nvidia.com/gpu].nominalQuota``
(the ``--set`` syntax); other lists by position. Quota fields compare as
quantities (``1Gi`` equals ``1024Mi``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..api.errors import QuantityError
from ..api.quantity import quantity_nanos
from ..loader import Document
from .overrides import object_ref, show_value

# kinds listed first, in this order (the rest follow by name)
DIFF_KINDS = (
    "Configuration",
    "ResourceFlavor",
    "Cohort",
    "ClusterQueue",
    "AdmissionCheck",
    "LocalQueue",
    "WorkloadPriorityClass",
    "PriorityClass",
    "Namespace",
)
# what the API server writes for itself: not a difference of configuration
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
)
QUANTITY_FIELDS = ("nominalQuota", "borrowingLimit", "lendingLimit")
MISSING = object()


@dataclass(frozen=True)
class Change:
    obj: str  # Kind/name
    path: str  # field path ("" for the whole object)
    before: str | None  # None: not there
    after: str | None

    def __str__(self) -> str:
        if not self.path:
            return f"{self.obj}: {'added' if self.before is None else 'removed'}"
        b = "(unset)" if self.before is None else self.before
        a = "(unset)" if self.after is None else self.after
        return f"{self.obj} {self.path}: {b} -> {a}"


def _compared(obj: dict[str, Any]) -> dict[str, Any]:
    """The object but apiVersion, kind and the metadata the API server writes."""
    out = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    md = obj.get("metadata")
    if isinstance(md, dict):
        kept = {k: v for k, v in md.items() if k not in (*SERVER_METADATA, "name", "namespace")}
        if kept:
            out["metadata"] = kept
    return out


def _named(items: list[Any]) -> bool:
    names = [i.get("name") for i in items if isinstance(i, dict)]
    return (
        len(names) == len(items) > 0
        and all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
    )


def flatten(node: Any, trail: str = "") -> dict[str, Any]:
    """Leaves of a JSON value by path (maps by key, named lists by name)."""
    out: dict[str, Any] = {}
    if isinstance(node, dict) and node:
        for k, v in node.items():
            key = f"[{k}]" if ("." in k or "[" in k) else (("." if trail else "") + k)
            out.update(flatten(v, trail + key))
    elif isinstance(node, list) and node:
        named = _named(node)
        for i, v in enumerate(node):
            if named:
                out.update(flatten({kk: vv for kk, vv in v.items() if kk != "name"}, f"{trail}[{v['name']}]"))
            else:
                out.update(flatten(v, f"{trail}[{i}]"))
    else:
        out[trail] = node
    return out


def _same(path: str, a: Any, b: Any) -> bool:
    if a == b:
        return True
    if path.rsplit(".", 1)[-1] in QUANTITY_FIELDS:
        try:
            return bool(quantity_nanos(a) == quantity_nanos(b))
        except QuantityError:
            return False
    return False


def _key(obj: dict[str, Any]) -> tuple[str, str, str]:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(md, dict)
    kind = str(obj.get("kind"))
    ns = str(md.get("namespace") or "") if kind not in CLUSTER_SCOPED else ""
    return (kind, ns, "" if kind == "Configuration" else str(md.get("name", "")))


def _objects(docs: Iterable[Document]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {_key(d.obj): d.obj for d in docs if isinstance(d.obj.get("kind"), str)}


def _kind_order(kind: str) -> tuple[int, str]:
    return (DIFF_KINDS.index(kind), "") if kind in DIFF_KINDS else (len(DIFF_KINDS), kind)


def spec_diff(base: Sequence[Document], other: Sequence[Document]) -> list[Change]:
    """What ``other`` changes in ``base``: objects added or removed, and each
    field that differs (spec, status, labels, annotations...), in kind order
    then name."""
    a, b = _objects(base), _objects(other)
    out: list[Change] = []
    for key in sorted(set(a) | set(b), key=lambda k: (_kind_order(k[0]), k[1], k[2])):
        if key not in b:
            out.append(Change(object_ref(a[key]), "", "", None))
            continue
        if key not in a:
            out.append(Change(object_ref(b[key]), "", None, ""))
            continue
        fa, fb = flatten(_compared(a[key])), flatten(_compared(b[key]))
        for path in sorted(set(fa) | set(fb)):
            va, vb = fa.get(path, MISSING), fb.get(path, MISSING)
            if va is not MISSING and vb is not MISSING and _same(path, va, vb):
                continue
            out.append(
                Change(
                    object_ref(b[key]),
                    path,
                    None if va is MISSING else show_value(va),
                    None if vb is MISSING else show_value(vb),
                )
            )
    return out


# kinds without a namespace (a stray metadata.namespace on them is not part of their name)
CLUSTER_SCOPED = (
    "Configuration",
    "ResourceFlavor",
    "Cohort",
    "ClusterQueue",
    "AdmissionCheck",
    "WorkloadPriorityClass",
    "PriorityClass",
    "Namespace",
    "Topology",
    "ProvisioningRequestConfig",
    "MultiKueueConfig",
    "MultiKueueCluster",
)


def local_queues(docs: Iterable[Document]) -> set[str]:
    return {f"{k[1]}/{k[2]}" for k in _objects(docs) if k[0] == "LocalQueue"}
