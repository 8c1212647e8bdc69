"""Kueue manifests (YAML or JSON, either API version) -> ``model.ClusterState``.

Reading (:func:`read_documents`) splits files (and directories, as
``kubectl apply -f``) into documents; building (:func:`build_state`) converts
each object with its per-kind converter (``parse_cluster_queue``...), which
applies Kueue's defaults and validation (``kueue_fast.validation``) and raises
errors naming the object and field. The converters work on single dicts, so
the cluster reconciler can feed them objects from the API server. Jobs become
the Workloads Kueue's job integrations create (``kueue_fast.integrations``);
kinds Kueue does not read are skipped with a warning. Every invalid object of
an input is reported (one error each, ``errors.raise_all``); what is accepted
but probably not meant is a warning (``ClusterState.warnings``).

Field names per version follow Kueue's two API versions (v1beta1 ``cohort``,
``priorityClassName``/``priorityClassSource``, fairSharing ``enable``; v1beta2
``cohortName``, ``priorityClassRef``) and apis/kueue/*/..._types.go.
"""

from __future__ import annotations

import calendar
import difflib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import IO, Any, TypeGuard

import yaml

from . import api_fields
from . import model as m
from . import validation as v
from ._gc import no_cyclic_gc
from ._kernels import digit_run
from .errors import InputError, InputWarning, MissingReferenceError, ParseError, ValidationError, raise_all
from .fastload import exact_key, orjson, parse_yaml
from .features import KNOWN_GATES
from .integrations import INTEGRATIONS, Environment, Integration, integration_for
from .integrations.framework import QUEUE_LABEL, generated_name
from .requests import OverLimits, pod_requests, resources_validation_message

__all__ = [
    "Document",
    "build_state",
    "load",
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

KUEUE_GROUP = "kueue.x-k8s.io"
V1BETA1 = api_fields.V1BETA1
V1BETA2 = api_fields.V1BETA2
V1ALPHA1 = api_fields.V1ALPHA1
CONFIG_VERSIONS = ("config.kueue.x-k8s.io/v1beta1", "config.kueue.x-k8s.io/v1beta2")

# Which apiVersions each kind is read in.
KIND_VERSIONS: dict[str, tuple[str, ...]] = {
    "ResourceFlavor": (V1BETA1, V1BETA2),
    "ClusterQueue": (V1BETA1, V1BETA2),
    "Cohort": (V1ALPHA1, V1BETA1, V1BETA2),
    "LocalQueue": (V1BETA1, V1BETA2),
    "WorkloadPriorityClass": (V1BETA1, V1BETA2),
    "Workload": (V1BETA1, V1BETA2),
    "AdmissionCheck": (V1BETA1, V1BETA2),
    "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "Configuration": CONFIG_VERSIONS,
}

_TOP = api_fields.TOP
# The fields of Kueue's kinds by kind and apiVersion, declared in api_fields
# (the CRDs of `kueue-fast manifests crds` are generated from them too).
_FIELDS = api_fields.KINDS


# --- documents -------------------------------------------------------------------


@dataclass(frozen=True)
class Document:
    """One object of the input: where it came from, and the object itself."""

    source: str  # file name, "<stdin>" for "-"
    index: int  # 0-based document number in the file
    obj: dict[str, Any]
    item: int | None = None  # position inside a List document

    @property
    def where(self) -> str:
        s = f"{self.source} (document {self.index + 1}"
        if self.item is not None:
            s += f", item {self.item}"
        return s + ")"


def _yaml_loader() -> type:
    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    # Timestamps stay strings: YAML's datetime drops nanoseconds, and the API
    # server sees strings anyway.
    class Loader(base):  # type: ignore[misc,unused-ignore]
        pass

    resolvers_by_char: dict[str, list[tuple[str, Any]]] = base.yaml_implicit_resolvers
    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for k, resolvers in resolvers_by_char.items()
    }
    return Loader


_LOADER = _yaml_loader()


def _json_loads(text: str) -> Any:
    """JSON text -> value. orjson (measured on a 132 MB ``kubectl get -o json``
    List of 100k Workloads: 0.3 s where json takes 1.2 s) reads it when it
    can; anything it refuses (NaN, lone surrogates, invalid text) goes to
    json, which gives today's value or today's message. So does a text with a
    run of 19 digits: orjson would read an integer beyond 64 bits as a float."""
    if orjson is not None and digit_run(text, 19) < 0:
        try:
            return orjson.loads(text)
        except Exception:  # noqa: BLE001 - json decides, with its own messages
            pass
    return json.loads(text)


_JSONError: tuple[type[Exception], ...] = (json.JSONDecodeError,)


def _split_list(source: str, index: int, d: dict[str, Any]) -> list[Document]:
    """``kind: List`` and ``FooList`` (kubectl get -o yaml|json) -> items.
    Items of a typed list may omit apiVersion/kind; they inherit them."""
    kind = d.get("kind")
    if not (isinstance(kind, str) and kind.endswith("List") and "items" in d):
        return [Document(source, index, d)]
    items = d.get("items")
    if items is None:
        return []
    where = f"{source} (document {index + 1})"
    if not isinstance(items, list):
        raise ParseError(kind, "items", "Invalid value: must be of type array", source=where)
    elem_kind = kind[: -len("List")] if kind != "List" else None
    out = []
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise ParseError(
                kind, f"items[{i}]", f"expected an object, got {type(it).__name__}", source=where
            )
        if elem_kind is not None:
            it.setdefault("kind", elem_kind)
            if "apiVersion" in d:
                it.setdefault("apiVersion", d["apiVersion"])
        out.append(Document(source, index, it, item=i))
    return out


def _parse_text(text: str, source: str) -> list[Document]:
    docs: list[Document] = []
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            data = _json_loads(text)
        except _JSONError as e:
            raise ParseError("", "", f"invalid JSON: {e}", source=source) from None
        raw_docs = data if isinstance(data, list) else [data]
    else:
        fast = parse_yaml(text)  # None: PyYAML reads it, with its messages
        try:
            raw_docs = fast if fast is not None else list(yaml.load_all(text, Loader=_LOADER))
        except yaml.YAMLError as e:
            raise ParseError("", "", f"invalid YAML: {_yaml_problem(e)}", source=source) from None
        except (ValueError, TypeError, RecursionError) as e:  # e.g. a key that is not hashable
            raise ParseError("", "", f"invalid YAML: {e}", source=source) from None
    for i, d in enumerate(raw_docs):
        if d is None:
            continue
        if not isinstance(d, dict):
            raise ParseError(
                "",
                "",
                f"document {i + 1} is a {_kind_of(d)}, not an object with apiVersion and kind",
                source=source,
            )
        docs.extend(_split_list(source, i, d))
    return docs


def _kind_of(x: object) -> str:
    if isinstance(x, list):
        return "list"
    if isinstance(x, str):
        return "string"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, (int, float)):
        return "number"
    return type(x).__name__


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)


def read_documents(
    paths: Sequence[str],
    stdin: IO[str] | None = None,
    *,
    recursive: bool = False,
    warnings: list[InputWarning] | None = None,
) -> list[Document]:
    """All objects of the given files in order; ``-`` reads standard input, a
    directory its manifests (:func:`manifest_files`). Multi-document YAML,
    JSON (detected by a leading ``{`` or ``[``) and List kinds are accepted;
    empty documents are skipped, a file without objects is a warning
    (appended to ``warnings``). Every file is read; a file that cannot be read
    or parsed is an error, raised once all are read (``errors.raise_all``)."""
    errors: list[InputError] = []
    docs = _read_all(paths, stdin, recursive, errors, warnings if warnings is not None else [])
    raise_all(errors)
    return docs


_MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")


def manifest_files(path: str, recursive: bool = False) -> list[str]:
    """The files ``kubectl apply -f PATH`` reads (cli-runtime
    ExpandPathsToFileVisitors): PATH itself unless it is a directory; for a
    directory its .json, .yaml and .yml files in lexical order (filepath.Walk:
    symbolic links to directories are not followed), subdirectories only when
    ``recursive`` (``-R``)."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    out: list[str] = []

    def walk(directory: str) -> None:
        for entry in sorted(os.scandir(directory), key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if recursive:
                    walk(entry.path)
            elif entry.name.endswith(_MANIFEST_EXTENSIONS):
                out.append(entry.path)

    walk(path)
    return out


def _subdirectories_with_manifests(path: str) -> list[str]:
    """The subdirectories of ``path`` that ``-R`` would read manifests from."""
    subs = sorted(e.path for e in os.scandir(path) if e.is_dir(follow_symlinks=False))
    return [sub for sub in subs if manifest_files(sub, recursive=True)]


def _read_all(
    paths: Sequence[str],
    stdin: IO[str] | None,
    recursive: bool,
    errors: list[InputError],
    warnings: list[InputWarning],
) -> list[Document]:
    docs: list[Document] = []
    for path in paths:
        files = manifest_files(path, recursive)
        if not files:
            what = "files" if recursive else "files (-R reads its subdirectories)"
            warnings.append(InputWarning("", "", f"directory has no .json, .yaml or .yml {what}", path))
        elif not recursive and path != "-" and os.path.isdir(path):
            unread = "subdirectory with manifests not read (-R reads subdirectories)"
            warnings.extend(InputWarning("", "", unread, sub) for sub in _subdirectories_with_manifests(path))
        for file in files:
            try:
                found = _read_file(file, stdin)
            except InputError as e:
                errors.append(e)
                continue
            if not found:
                warnings.append(InputWarning("", "", "no objects in this file", _source_name(file)))
            docs.extend(found)
    return docs


def _source_name(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _read_file(path: str, stdin: IO[str] | None) -> list[Document]:
    source = _source_name(path)
    if path == "-":
        try:
            text = (stdin if stdin is not None else sys.stdin).read()
        except UnicodeDecodeError:
            raise ParseError("", "", "input is not UTF-8 text", source=source) from None
    else:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            raise ParseError("", "", "file is not UTF-8 text", source=source) from None
        except OSError as e:
            raise ParseError("", "", f"cannot read: {e.strerror or e}", source=source) from None
    if "\x00" in text:
        raise ParseError("", "", "file is binary, not YAML or JSON", source=source)
    with no_cyclic_gc():
        return _parse_text(text, source)


# --- common pieces -------------------------------------------------------------------

_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$")


def parse_time_ns(value: object, obj: str, path: str) -> int:
    """A metav1.Time (RFC 3339, fractional seconds allowed) in ns since the epoch.
    A datetime (from a YAML loader that resolves timestamps) is accepted too."""
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        delta = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    s = v.as_str(value, obj, path)
    mt = _RFC3339.match(s)
    if not mt:
        v.invalid(obj, path, s, "must be an RFC 3339 timestamp like 2024-01-31T12:00:00Z")
    y, mo, d, h, mi, sec = (int(mt.group(i)) for i in range(1, 7))
    try:
        datetime(y, mo, d, h, mi, sec)  # range checks (month 13, Feb 30...)
    except ValueError as e:
        v.invalid(obj, path, s, f"not a valid time: {e}")
    ns = calendar.timegm((y, mo, d, h, mi, sec, 0, 0, 0)) * 10**9
    frac = mt.group(7)
    if frac:
        ns += int((frac + "000000000")[:9])
    tz = mt.group(8)
    if tz != "Z":
        offset = (int(tz[1:3]) * 60 + int(tz[4:6])) * 60 * 10**9
        ns -= offset if tz[0] == "+" else -offset
    return ns


def _check_type(d: Mapping[str, Any], kinds: Iterable[str], versions: tuple[str, ...] | None = None) -> str:
    """Return apiVersion after checking kind/apiVersion of a converter's input."""
    kind = d.get("kind")
    api = d.get("apiVersion")
    kinds_t = tuple(kinds)
    if kind not in kinds_t:
        ref = f"{kind}" if isinstance(kind, str) else "object"
        raise ValidationError(ref, "kind", f"Unsupported value: {kind!r}: expected {', '.join(kinds_t)}")
    allowed = versions if versions is not None else KIND_VERSIONS[str(kind)]
    if api not in allowed:
        raise ValidationError(
            str(kind),
            "apiVersion",
            f"Unsupported value: {api!r}: {kind} is read in {', '.join(repr(a) for a in allowed)}",
        )
    return str(api)


def _metadata(
    d: Mapping[str, Any], kind: str, *, namespaced: bool, label_name: bool = False
) -> tuple[str, str, dict[str, Any]]:
    """(name, namespace, metadata) with the name validated. Namespaced objects
    without a namespace land in "default", as ``kubectl apply`` would do."""
    md = d.get("metadata")
    if md is None:
        v.required(kind, "metadata.name", "name is required")
    md = v.as_map(md, kind, "metadata")
    if md.get("name") in (None, ""):
        v.required(kind, "metadata.name", "name is required")
    name = v.object_name(md["name"], kind, "metadata.name", label=label_name)
    namespace = ""
    if namespaced:
        ns = md.get("namespace")
        namespace = (
            "default"
            if ns in (None, "")
            else v.object_name(ns, m.object_ref(kind, name), "metadata.namespace", label=True)
        )
    ref = m.object_ref(kind, name, namespace or None)
    if md.get("labels") is not None:
        v.labels(md["labels"], ref, "metadata.labels")
    if md.get("annotations") is not None:
        v.string_map(md["annotations"], ref, "metadata.annotations")
    return name, namespace, md


def _spec(d: Mapping[str, Any], ref: str) -> dict[str, Any]:
    s = d.get("spec")
    return {} if s is None else v.as_map(s, ref, "spec")


def _status(d: Mapping[str, Any], ref: str) -> dict[str, Any]:
    s = d.get("status")
    return {} if s is None else v.as_map(s, ref, "status")


# --- ResourceFlavor ------------------------------------------------------------------------


def parse_resource_flavor(obj: Mapping[str, Any]) -> m.ResourceFlavor:
    """ResourceFlavor: nodeLabels (<= 8), nodeTaints, tolerations
    (resourceflavor_webhook.go ValidateResourceFlavor + CRD rules)."""
    _check_type(obj, ("ResourceFlavor",))
    name, _, _ = _metadata(obj, "ResourceFlavor", namespaced=False)
    ref = m.object_ref("ResourceFlavor", name)
    fields = _FIELDS["ResourceFlavor"][str(obj["apiVersion"])]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = fields.fields["spec"]
    v.check_fields(spec, spec_fields.names, ref, "spec")
    if spec.get("topologyName") is not None:
        v.not_supported_feature(ref, "spec.topologyName", "Topology Aware Scheduling")
    nl = spec.get("nodeLabels")
    limit = spec_fields.fields["nodeLabels"].max_properties
    node_labels = v.labels(nl, ref, "spec.nodeLabels", max_properties=limit) if nl is not None else {}
    nt = spec.get("nodeTaints")
    node_taints = v.taints(nt, ref, "spec.nodeTaints") if nt is not None else []
    tl = spec.get("tolerations")
    tols = v.tolerations(tl, ref, "spec.tolerations", strict=True) if tl is not None else []
    return m.ResourceFlavor(name, dict(node_labels), node_taints, tols)


# --- ClusterQueue ---------------------------------------------------------------------------

# (concurrentAdmissionPolicy and excludeResourcePrefixes are known fields so
# that they get a "not supported" error instead of "unknown field")
_CQ_SPEC = {api: f.fields["spec"] for api, f in _FIELDS["ClusterQueue"].items()}
# Fields the other API version spells differently (apis/kueue/v1beta1 and v1beta2 clusterqueue_types.go).
_CQ_RENAMED = {
    V1BETA1: {"cohortName": v.version_rename(V1BETA1, "cohort", "v1beta2", "cohortName")},
    V1BETA2: {
        "cohort": v.version_rename(V1BETA2, "cohortName", "v1beta1", "cohort"),
        "admissionChecks": v.version_rename(
            V1BETA2, "admissionChecksStrategy.admissionChecks", "v1beta1", "admissionChecks"
        ),
    },
}
# v1beta1 deprecated spellings (apis/kueue/v1beta1/clusterqueue_types.go)
_FUNGIBILITY_V1BETA1 = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}
_PREEMPTION = api_fields.PREEMPTION
_BORROW_WITHIN_COHORT = _PREEMPTION.fields["borrowWithinCohort"]


def _preemption(raw: object, ref: str, path: str) -> m.Preemption:
    """spec.preemption; CEL rule "reclaimWithinCohort=Never and
    borrowWithinCohort.Policy!=Never" (also clusterqueue_webhook.go validatePreemption)."""
    d = v.as_map(raw, ref, path)
    v.check_fields(d, _PREEMPTION.names, ref, path)
    within = _PREEMPTION.fields["withinClusterQueue"].enum
    reclaim = _PREEMPTION.fields["reclaimWithinCohort"].enum
    p = m.Preemption(
        within_cluster_queue=v.opt_enum(d, "withinClusterQueue", within, ref, path, "Never"),
        reclaim_within_cohort=v.opt_enum(d, "reclaimWithinCohort", reclaim, ref, path, "Never"),
    )
    bwc = v.opt_map(d, "borrowWithinCohort", ref, path)
    if bwc is not None:
        bp = v.child(path, "borrowWithinCohort")
        v.check_fields(bwc, _BORROW_WITHIN_COHORT.names, ref, bp)
        p.borrow_within_cohort_policy = v.opt_enum(
            bwc, "policy", _BORROW_WITHIN_COHORT.fields["policy"].enum, ref, bp, "Never"
        )
        if bwc.get("maxPriorityThreshold") is not None:
            p.max_priority_threshold = v.as_int32(
                bwc["maxPriorityThreshold"], ref, v.child(bp, "maxPriorityThreshold")
            )
    if p.reclaim_within_cohort == "Never" and p.borrow_within_cohort_policy != "Never":
        v.invalid(ref, path, "object", "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never")
    return p


def _fungibility(raw: object, ref: str, path: str, api: str) -> m.FlavorFungibility:
    """spec.flavorFungibility; CEL/webhook: preference requires both policies
    TryNextFlavor (checked after defaulting, as the webhook sees the object)."""
    d = v.as_map(raw, ref, path)
    fields = _CQ_SPEC[api].fields["flavorFungibility"]
    v.check_fields(d, fields.names, ref, path)
    borrow_vals = fields.fields["whenCanBorrow"].enum  # v1beta1: also Borrow
    preempt_vals = fields.fields["whenCanPreempt"].enum  # v1beta1: also Preempt
    wb = v.opt_enum(d, "whenCanBorrow", borrow_vals, ref, path, "MayStopSearch") or "MayStopSearch"
    wp = v.opt_enum(d, "whenCanPreempt", preempt_vals, ref, path, "TryNextFlavor") or "TryNextFlavor"
    wb = _FUNGIBILITY_V1BETA1.get(wb, wb)
    wp = _FUNGIBILITY_V1BETA1.get(wp, wp)
    pref = None
    if d.get("preference") is not None:
        pref = v.enum(d["preference"], fields.fields["preference"].enum, ref, v.child(path, "preference"))
        if wb != "TryNextFlavor" or wp != "TryNextFlavor":
            v.invalid(
                ref,
                v.child(path, "preference"),
                pref,
                f'preference "{pref}" requires both whenCanBorrow and whenCanPreempt to be TryNextFlavor',
            )
    return m.FlavorFungibility(wb, wp, pref)


def _admission_checks(spec: Mapping[str, Any], ref: str, cq: m.ClusterQueue) -> None:
    """spec.admissionChecks (v1beta1) or spec.admissionChecksStrategy: the names
    and, per strategy rule with onFlavors, the flavors the check applies to.
    The two fields are mutually exclusive (v1beta1 CEL rule); every flavor in
    onFlavors must be one of the queue's (clusterqueue_webhook.go
    validateAdmissionCheckOnFlavors); names are unique (listType=map)."""
    names: list[str] = []
    if spec.get("admissionChecks") is not None:
        p = "spec.admissionChecks"
        for i, x in enumerate(v.as_list(spec["admissionChecks"], ref, p)):
            n = v.as_str(x, ref, v.index(p, i))
            if not n:
                v.required(ref, v.index(p, i))
            if n not in names:  # an atomic list: Kueue keeps a set
                names.append(n)
    acs = v.opt_map(spec, "admissionChecksStrategy", ref, "spec")
    if acs is not None:
        p = "spec.admissionChecksStrategy"
        if names:
            v.invalid(ref, p, "object", "admissionChecks and admissionChecksStrategy cannot be used together")
        fields = _CQ_SPEC[V1BETA2].fields["admissionChecksStrategy"]
        v.check_fields(acs, fields.names, ref, p)
        lp = v.child(p, "admissionChecks")
        rules = v.opt_list(
            acs, "admissionChecks", ref, p, max_items=fields.fields["admissionChecks"].max_items
        )
        rule_fields = api_fields.ADMISSION_CHECK_RULE
        cq_flavors = [f.name for g in cq.resource_groups for f in g.flavors]
        for i, raw in enumerate(rules):
            ip = v.index(lp, i)
            rule = v.as_map(raw, ref, ip)
            v.check_fields(rule, rule_fields.names, ref, ip)
            if not rule.get("name"):
                v.required(ref, v.child(ip, "name"))
            name = v.as_str(rule["name"], ref, v.child(ip, "name"))
            if name in names:
                v.duplicate(ref, v.child(ip, "name"), name)
            names.append(name)
            on_flavors = v.opt_list(
                rule, "onFlavors", ref, ip, max_items=rule_fields.fields["onFlavors"].max_items
            )
            fp = v.child(ip, "onFlavors")
            flavors: list[str] = []
            for j, f in enumerate(on_flavors):
                flavor = v.object_name(f, ref, v.index(fp, j))
                if flavor in flavors:  # listType=set
                    v.duplicate(ref, v.index(fp, j), flavor)
                if flavor not in cq_flavors:
                    v.unsupported(ref, v.index(fp, j), flavor, cq_flavors)
                flavors.append(flavor)
            if flavors:
                cq.admission_check_flavors[name] = flavors
    cq.admission_checks = names


def parse_cluster_queue(obj: Mapping[str, Any]) -> m.ClusterQueue:
    """ClusterQueue with Kueue's defaults (CRD defaults in apis/kueue/v1beta2/clusterqueue_types.go,
    pkg/cache/scheduler/clusterqueue.go) and the clusterqueue_webhook.go / CRD rules."""
    api = _check_type(obj, ("ClusterQueue",))
    name, _, _ = _metadata(obj, "ClusterQueue", namespaced=False)
    ref = m.object_ref("ClusterQueue", name)
    v.check_fields(obj, _FIELDS["ClusterQueue"][api].names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = _CQ_SPEC[api]
    v.check_fields(spec, spec_fields.names, ref, "spec", _CQ_RENAMED[api])
    for feature, what in (
        ("concurrentAdmissionPolicy", "ConcurrentAdmission"),
        ("excludeResourcePrefixes", "excluding resources from quota"),
    ):
        if spec.get(feature):
            v.not_supported_feature(ref, f"spec.{feature}", what)
    cohort_field = "cohort" if api == V1BETA1 else "cohortName"
    cohort = v.opt_str(spec, cohort_field, ref, "spec") or None
    if cohort is not None:
        v.object_name(cohort, ref, f"spec.{cohort_field}")
    cq = m.ClusterQueue(name=name, cohort=cohort)
    if spec.get("resourceGroups") is not None:
        cq.resource_groups = v.resource_groups(
            spec["resourceGroups"], ref, "spec.resourceGroups", has_parent=cohort is not None, is_cohort=False
        )
    cq.queueing_strategy = v.opt_enum(
        spec, "queueingStrategy", spec_fields.fields["queueingStrategy"].enum, ref, "spec", "BestEffortFIFO"
    )
    if spec.get("namespaceSelector") is not None:
        cq.namespace_selector = v.label_selector(spec["namespaceSelector"], ref, "spec.namespaceSelector")
    if spec.get("preemption") is not None:
        cq.preemption = _preemption(spec["preemption"], ref, "spec.preemption")
    if spec.get("flavorFungibility") is not None:
        cq.flavor_fungibility = _fungibility(spec["flavorFungibility"], ref, "spec.flavorFungibility", api)
    cq.stop_policy = v.opt_enum(
        spec, "stopPolicy", spec_fields.fields["stopPolicy"].enum, ref, "spec", "None"
    )
    if spec.get("fairSharing") is not None:
        cq.fair_weight = v.fair_sharing_weight(spec["fairSharing"], ref, "spec.fairSharing")
    _admission_checks(spec, ref, cq)
    scope = v.opt_map(spec, "admissionScope", ref, "spec")
    if scope is not None:
        scope_fields = spec_fields.fields["admissionScope"]
        v.check_fields(scope, scope_fields.names, ref, "spec.admissionScope")
        if "admissionMode" not in scope:
            v.required(ref, "spec.admissionScope.admissionMode")
        mode = v.enum(
            scope["admissionMode"],
            scope_fields.fields["admissionMode"].enum,
            ref,
            "spec.admissionScope.admissionMode",
        )
        cq.usage_based_admission_fair_sharing = mode == "UsageBasedAdmissionFairSharing"
    _status(obj, ref)
    return cq


# --- Cohort ---------------------------------------------------------------------------------


def parse_cohort(obj: Mapping[str, Any]) -> m.Cohort:
    """Cohort (cohort_webhook.go validateCohort): resource groups as for a
    ClusterQueue, limits need a parent, lendingLimit may exceed nominal."""
    api = _check_type(obj, ("Cohort",))
    name, _, _ = _metadata(obj, "Cohort", namespaced=False)
    ref = m.object_ref("Cohort", name)
    fields = _FIELDS["Cohort"][api]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    # v1alpha1 called the parent "parent" (apis/kueue/v1alpha1/cohort_types.go)
    parent_field = "parent" if api == V1ALPHA1 and "parent" in spec else "parentName"
    old_parent = v.version_rename(api, "parentName", "v1alpha1", "parent")
    renamed = None if api == V1ALPHA1 else {"parent": old_parent}
    v.check_fields(spec, fields.fields["spec"].names, ref, "spec", renamed)
    if api == V1ALPHA1 and "parent" in spec and "parentName" in spec:
        v.invalid(ref, "spec.parent", spec["parent"], "parent and parentName cannot both be set")
    parent = v.opt_str(spec, parent_field, ref, "spec") or None
    if parent is not None:
        v.object_name(parent, ref, f"spec.{parent_field}")
    co = m.Cohort(name=name, parent=parent)
    if spec.get("resourceGroups") is not None:
        co.resource_groups = v.resource_groups(
            spec["resourceGroups"], ref, "spec.resourceGroups", has_parent=parent is not None, is_cohort=True
        )
    if spec.get("fairSharing") is not None:
        co.fair_weight = v.fair_sharing_weight(spec["fairSharing"], ref, "spec.fairSharing")
    _status(obj, ref)
    return co


# --- LocalQueue -----------------------------------------------------------------------------


def parse_local_queue(obj: Mapping[str, Any]) -> m.LocalQueue:
    """LocalQueue: spec.clusterQueue is required (a missing ClusterQueue is not
    an error: its workloads stay pending)."""
    fields = _FIELDS["LocalQueue"][_check_type(obj, ("LocalQueue",))]
    name, ns, _ = _metadata(obj, "LocalQueue", namespaced=True)
    ref = m.object_ref("LocalQueue", name, ns)
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    spec_fields = fields.fields["spec"]
    v.check_fields(spec, spec_fields.names, ref, "spec")
    if not spec.get("clusterQueue"):
        v.required(ref, "spec.clusterQueue")
    cq = v.object_name(spec["clusterQueue"], ref, "spec.clusterQueue")
    lq = m.LocalQueue(namespace=ns, name=name, cluster_queue=cq)
    lq.stop_policy = v.opt_enum(
        spec, "stopPolicy", spec_fields.fields["stopPolicy"].enum, ref, "spec", "None"
    )
    if spec.get("fairSharing") is not None:
        lq.fair_weight = v.fair_sharing_weight(spec["fairSharing"], ref, "spec.fairSharing")
    lq.afs_consumed_nanos = _afs_consumed(_status(obj, ref), ref)
    return lq


def _afs_consumed(status: Mapping[str, Any], ref: str) -> dict[str, int]:
    """status.fairSharing.admissionFairSharingStatus.consumedResources, exact
    (admission fair sharing seeds a LocalQueue's usage history from it)."""
    p = "status.fairSharing"
    fs = v.opt_map(status, "fairSharing", ref, "status")
    afs = v.opt_map(fs, "admissionFairSharingStatus", ref, p) if fs else None
    p = v.child(p, "admissionFairSharingStatus")
    consumed = v.opt_map(afs, "consumedResources", ref, p) if afs else None
    p = v.child(p, "consumedResources")
    out: dict[str, int] = {}
    for name, q in (consumed or {}).items():
        out[name] = v.nanos(q, ref, v.key(p, name))
    return out


# --- priority classes, namespaces ---------------------------------------------------------


def parse_admission_check(obj: Mapping[str, Any]) -> m.AdmissionCheck:
    """AdmissionCheck: spec.controllerName (required) and whether its Active
    condition is True (cache.go AddOrUpdateAdmissionCheck)."""
    api = _check_type(obj, ("AdmissionCheck",))
    name, _, _ = _metadata(obj, "AdmissionCheck", namespaced=False)
    ref = m.object_ref("AdmissionCheck", name)
    fields = _FIELDS["AdmissionCheck"][api]
    v.check_fields(obj, fields.names, ref, "")
    spec = _spec(obj, ref)
    v.check_fields(spec, fields.fields["spec"].names, ref, "spec")
    controller = v.opt_str(spec, "controllerName", ref, "spec")
    if not controller:
        v.required(ref, "spec.controllerName")
    if len(controller) > 253:
        v.invalid(ref, "spec.controllerName", controller, "may not be more than 253 characters")
    params = v.opt_map(spec, "parameters", ref, "spec")
    if params is not None:
        pp = "spec.parameters"
        v.check_fields(params, fields.fields["spec"].fields["parameters"].names, ref, pp)
        for f in ("apiGroup", "kind", "name"):
            if not params.get(f):
                v.required(ref, v.child(pp, f))
            v.as_str(params[f], ref, v.child(pp, f))
    conds = _conditions(_status(obj, ref), ref)
    active = conds.get("Active", {}).get("status") == "True"
    return m.AdmissionCheck(name, controller, active)


def parse_workload_priority_class(obj: Mapping[str, Any]) -> m.WorkloadPriorityClass:
    """WorkloadPriorityClass: top-level ``value`` (int32, required), ``description``."""
    fields = _FIELDS["WorkloadPriorityClass"][_check_type(obj, ("WorkloadPriorityClass",))]
    name, _, _ = _metadata(obj, "WorkloadPriorityClass", namespaced=False)
    ref = m.object_ref("WorkloadPriorityClass", name)
    v.check_fields(obj, fields.names, ref, "")
    if obj.get("value") is None:
        v.required(ref, "value")
    value = v.as_int32(obj["value"], ref, "value")
    return m.WorkloadPriorityClass(name, value, v.opt_str(obj, "description", ref, ""))


def parse_priority_class(obj: Mapping[str, Any]) -> m.WorkloadPriorityClass:
    """scheduling.k8s.io/v1 PriorityClass (a Workload may take its priority from
    one); kept in the same shape as a WorkloadPriorityClass."""
    _check_type(obj, ("PriorityClass",))
    name, _, _ = _metadata(obj, "PriorityClass", namespaced=False)
    ref = m.object_ref("PriorityClass", name)
    v.check_fields(
        obj,
        ("apiVersion", "kind", "metadata", "value", "description", "globalDefault", "preemptionPolicy"),
        ref,
        "",
    )
    if obj.get("value") is None:
        v.required(ref, "value")
    value = v.as_int32(obj["value"], ref, "value")
    if value > 1_000_000_000 and not name.startswith("system-"):
        # kubernetes pkg/apis/scheduling/validation: user classes are <= HighestUserDefinablePriority
        v.invalid(ref, "value", value, "maximum allowed value of a user defined priority is 1000000000")
    default = obj.get("globalDefault")
    return m.WorkloadPriorityClass(
        name,
        value,
        v.opt_str(obj, "description", ref, ""),
        global_default=False if default is None else v.as_bool(default, ref, "globalDefault"),
    )


def parse_namespace(obj: Mapping[str, Any]) -> m.Namespace:
    """core v1 Namespace. The API server always labels a namespace with
    ``kubernetes.io/metadata.name: NAME``; so do we."""
    _check_type(obj, ("Namespace",))
    name, _, md = _metadata(obj, "Namespace", namespaced=False, label_name=True)
    ref = m.object_ref("Namespace", name)
    v.check_fields(obj, _TOP, ref, "")
    labels = dict(md.get("labels") or {})
    labels["kubernetes.io/metadata.name"] = name
    return m.Namespace(name, labels)


# --- Configuration --------------------------------------------------------------------------


def parse_configuration(obj: Mapping[str, Any]) -> m.Configuration:
    """Kueue's Configuration: fair sharing, admission fair sharing, feature gates.
    Other sections are accepted and ignored unless they change admission
    decisions in ways kueue-fast does not model (then: an error)."""
    api = _check_type(obj, ("Configuration",))
    ref = "Configuration"
    md = obj.get("metadata")
    if isinstance(md, dict) and isinstance(md.get("name"), str):
        ref = m.object_ref("Configuration", md["name"])
    cfg = m.Configuration()
    fs = v.opt_map(obj, "fairSharing", ref, "")
    if fs is not None:
        if api == CONFIG_VERSIONS[0]:
            v.check_fields(fs, ("enable", "preemptionStrategies"), ref, "fairSharing")
            enabled = v.as_bool(fs["enable"], ref, "fairSharing.enable") if "enable" in fs else False
        else:  # v1beta2: the presence of fairSharing enables it
            gone = {"enable": f"{api} has no fairSharing.enable: fairSharing being there enables it"}
            v.check_fields(fs, ("preemptionStrategies",), ref, "fairSharing", gone)
            enabled = True
        strategies = v.preemption_strategies(
            fs.get("preemptionStrategies") or [], ref, "fairSharing.preemptionStrategies"
        )
        if enabled:
            cfg.fair_sharing = m.FairSharingConfig(strategies)
    afs = v.opt_map(obj, "admissionFairSharing", ref, "")
    if afs is not None:
        p = "admissionFairSharing"
        v.check_fields(afs, ("usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"), ref, p)
        a = m.AdmissionFairSharingConfig()
        if afs.get("usageHalfLifeTime") is not None:
            a.usage_half_life_s = v.duration_seconds(
                afs["usageHalfLifeTime"], ref, v.child(p, "usageHalfLifeTime")
            )
            if a.usage_half_life_s < 0:
                v.invalid(
                    ref,
                    v.child(p, "usageHalfLifeTime"),
                    afs["usageHalfLifeTime"],
                    "must be greater or equal to 0",
                )
        if afs.get("usageSamplingInterval") is not None:
            sp = v.child(p, "usageSamplingInterval")
            a.usage_sampling_interval_s = v.duration_seconds(afs["usageSamplingInterval"], ref, sp)
            if a.usage_sampling_interval_s <= 0:
                v.invalid(ref, sp, afs["usageSamplingInterval"], "must be greater than 0")
        rw = v.opt_map(afs, "resourceWeights", ref, p)
        for rname, w in (rw or {}).items():
            wp = v.key(v.child(p, "resourceWeights"), rname)
            if isinstance(w, bool) or not isinstance(w, (int, float)):
                v.invalid(ref, wp, w, "must be a number")
            if w < 0:
                v.invalid(ref, wp, w, "must be greater than or equal to 0")
            a.resource_weights[rname] = float(w)
        cfg.admission_fair_sharing = a
    fg = v.opt_map(obj, "featureGates", ref, "")
    for gate, on in (fg or {}).items():
        gp = v.key("featureGates", gate)
        if gate not in KNOWN_GATES:
            # Kueue refuses to start with an unrecognized feature gate.
            v.invalid(ref, gp, gate, "unrecognized feature gate")
        cfg.feature_gates[gate] = v.as_bool(on, ref, gp)
    res = v.opt_map(obj, "resources", ref, "")
    if res is not None:
        v.check_fields(
            res, ("excludeResourcePrefixes", "transformations", "deviceClassMappings"), ref, "resources"
        )
        if res.get("deviceClassMappings"):
            v.not_supported_feature(ref, "resources.deviceClassMappings", "Dynamic Resource Allocation quota")
        cfg.resources = _resource_rules(res, ref)
    _managed_jobs(obj, ref, cfg)
    wfpr = v.opt_map(obj, "waitForPodsReady", ref, "")
    if wfpr is not None:
        wait = _wait_for_pods_ready(wfpr, ref, v1beta1=api == CONFIG_VERSIONS[0])
        if not cfg.feature_gates.get("DisableWaitForPodsReady", False):
            cfg.wait_for_pods_ready = wait
    return cfg


_WAIT_FIELDS = ("enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout")
_REQUEUING_FIELDS = ("timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")


def _wait_for_pods_ready(
    d: Mapping[str, Any], ref: str, *, v1beta1: bool
) -> m.WaitForPodsReadyConfig | None:
    """waitForPodsReady, defaulted as apis/config/{v1beta1,v1beta2}/defaults.go
    (v1beta1: only with enable: true, blockAdmission defaulting to it; v1beta2:
    the section enables it, no enable field; a zero timeout or backoff is the
    default) and validated as pkg/config/validation.go validateWaitForPodsReady.
    None when v1beta1 leaves it disabled."""
    p = "waitForPodsReady"
    if v1beta1:
        v.check_fields(d, _WAIT_FIELDS, ref, p)
        if not (d.get("enable") is not None and v.as_bool(d["enable"], ref, v.child(p, "enable"))):
            return None
    else:
        gone = {"enable": "v1beta2 has no waitForPodsReady.enable: the section being there enables it"}
        v.check_fields(d, _WAIT_FIELDS[1:], ref, p, gone)

    def seconds(name: str) -> float | None:
        if d.get(name) is None:
            return None
        x = v.duration_seconds(d[name], ref, v.child(p, name))
        if x < 0:
            v.invalid(ref, v.child(p, name), d[name], "must be greater than or equal to 0")
        return x

    timeout = seconds("timeout")
    if timeout is None:  # v1beta1 defaultPodsReadyTimeout 5m; v1beta2 DefaultWaitForPodsReadyTimeout 30m
        timeout = 300.0 if v1beta1 else 1800.0
    elif timeout == 0 and not v1beta1:  # v1beta2 defaults a zero timeout too
        timeout = 1800.0
    if timeout == 0:
        v.required(ref, v.child(p, "timeout"), "must be specified")
    recovery = seconds("recoveryTimeout")
    block = v1beta1  # v1beta1 defaults it to enable
    if d.get("blockAdmission") is not None:
        block = v.as_bool(d["blockAdmission"], ref, v.child(p, "blockAdmission"))
    cfg = m.WaitForPodsReadyConfig(
        timeout_s=timeout, recovery_timeout_s=timeout if recovery is None else recovery, block_admission=block
    )
    rs = v.opt_map(d, "requeuingStrategy", ref, p)
    if rs is None:
        return cfg
    rp = v.child(p, "requeuingStrategy")
    v.check_fields(rs, _REQUEUING_FIELDS, ref, rp)
    stamp = v.opt_enum(rs, "timestamp", ("Creation", "Eviction"), ref, rp, "Eviction") or "Eviction"

    def count(name: str) -> int | None:
        if rs.get(name) is None:
            return None
        n = v.as_int32(rs[name], ref, v.child(rp, name))
        if n < 0:
            v.invalid(ref, v.child(rp, name), n, "must be greater than or equal to 0")
        return n

    base, most = count("backoffBaseSeconds"), count("backoffMaxSeconds")
    return m.WaitForPodsReadyConfig(
        timeout_s=cfg.timeout_s,
        recovery_timeout_s=cfg.recovery_timeout_s,
        block_admission=block,
        requeuing_timestamp=stamp,
        backoff_limit_count=count("backoffLimitCount"),
        backoff_base_s=base or 60,  # cmp.Or: 0 is the default
        backoff_max_s=most or 3600,
    )


_TRANSFORMATION_FIELDS = ("input", "strategy", "multiplyBy", "outputs")
_TRANSFORMATION_STRATEGIES = ("Retain", "Replace")


def _resource_rules(res: Mapping[str, Any], ref: str) -> m.ResourceRules:
    """resources.excludeResourcePrefixes and resources.transformations, with
    pkg/config/validation.go validateResourceTransformations (strategy Retain
    or Replace, defaulted to Retain by defaults.go; inputs unique)."""
    pp = "resources.excludeResourcePrefixes"
    raw_prefixes = v.opt_list(res, "excludeResourcePrefixes", ref, "resources")
    prefixes = tuple(v.as_str(x, ref, v.index(pp, i)) for i, x in enumerate(raw_prefixes))
    transformations: dict[str, m.ResourceTransformation] = {}
    tp = "resources.transformations"
    for i, raw in enumerate(v.opt_list(res, "transformations", ref, "resources")):
        ip = v.index(tp, i)
        d = v.as_map(raw, ref, ip)
        v.check_fields(d, _TRANSFORMATION_FIELDS, ref, ip)
        name = v.as_str(d.get("input", ""), ref, v.child(ip, "input"))
        strategy = v.opt_enum(d, "strategy", _TRANSFORMATION_STRATEGIES, ref, ip, "Retain") or "Retain"
        multiply_by = v.opt_str(d, "multiplyBy", ref, ip) or ""
        op = v.child(ip, "outputs")
        raw_outputs = v.as_map(d.get("outputs") or {}, ref, op)
        outputs = tuple((out, v.nanos(q, ref, v.key(op, out))) for out, q in raw_outputs.items())
        if name in transformations:
            v.duplicate(ref, v.child(ip, "input"), name)
        transformations[name] = m.ResourceTransformation(name, strategy == "Replace", multiply_by, outputs)
    return m.ResourceRules(prefixes, transformations)


def _managed_jobs(obj: Mapping[str, Any], ref: str, cfg: m.Configuration) -> None:
    """Which jobs Kueue manages: integrations.frameworks (default batch/job),
    manageJobsWithoutQueueName, managedJobsNamespaceSelector (default: not
    kube-system, not Kueue's namespace) (apis/config/v1beta2/defaults.go)."""
    if obj.get("manageJobsWithoutQueueName") is not None:
        cfg.manage_jobs_without_queue_name = v.as_bool(
            obj["manageJobsWithoutQueueName"], ref, "manageJobsWithoutQueueName"
        )
    selector = obj.get("managedJobsNamespaceSelector")
    if selector is not None:
        cfg.managed_jobs_namespace_selector = v.label_selector(selector, ref, "managedJobsNamespaceSelector")
    else:
        namespace = v.opt_str(obj, "namespace", ref, "") or "kueue-system"
        cfg.managed_jobs_namespace_selector = m.managed_jobs_default_selector(namespace)
    cfg.frameworks = ("batch/job",)  # defaults.go: a Configuration without frameworks
    integrations = v.opt_map(obj, "integrations", ref, "")
    if integrations is not None:
        fp = "integrations.frameworks"
        names = v.opt_list(integrations, "frameworks", ref, "integrations")
        frameworks = tuple(v.as_str(x, ref, v.index(fp, i)) for i, x in enumerate(names))
        if frameworks:
            cfg.frameworks = frameworks


# --- Workload -------------------------------------------------------------------------------

_WL_SPEC = {api: f.fields["spec"].names for api, f in _FIELDS["Workload"].items()}
_WL = _FIELDS["Workload"][V1BETA2]
_POD_SETS = _WL.at("spec.podSets")
_POD_SETS_MIN, _POD_SETS_MAX = _POD_SETS.min_items or 0, _POD_SETS.max_items or 0
_PRIORITY_CLASS_REF = _WL.at("spec.priorityClassRef")
_PRIORITY_CLASS_SOURCE = _FIELDS["Workload"][V1BETA1].at("spec.priorityClassSource")
_CONDITIONS = _WL.at("status.conditions")
_POD_SET_ASSIGNMENTS = _WL.at("status.admission.podSetAssignments")
_RECLAIMABLE_PODS = _WL.at("status.reclaimablePods")
_CHECK_STATES = _WL.at("status.admissionChecks")
_WL_RENAMED = {
    V1BETA1: {
        "priorityClassRef": v.version_rename(V1BETA1, "priorityClassName", "v1beta2", "priorityClassRef")
    },
    V1BETA2: {
        old: v.version_rename(V1BETA2, "priorityClassRef", "v1beta1", old)
        for old in ("priorityClassName", "priorityClassSource")
    },
}
_PODSET_FIELDS = api_fields.POD_SET.names
_WPC_SOURCE, _POD_PC_SOURCE, _ = api_fields.PRIORITY_CLASS_SOURCES
_CONDITION_STATUSES = api_fields.CONDITION.fields["status"].enum
_EVICTION_REASONS_REORDERING = ("PodsReadyTimeout", "AdmissionCheck")


def _node_selector_terms(raw: object, ref: str, path: str) -> tuple[m.NodeSelectorTerm, ...]:
    terms = []
    for i, traw in enumerate(v.as_list(raw, ref, path)):
        tp = v.index(path, i)
        t = v.as_map(traw, ref, tp)
        groups = []
        for fld in ("matchExpressions", "matchFields"):
            reqs = []
            for j, rraw in enumerate(v.opt_list(t, fld, ref, tp)):
                rp = v.index(v.child(tp, fld), j)
                r = v.as_map(rraw, ref, rp)
                k = v.as_str(r.get("key", ""), ref, v.child(rp, "key"))
                op = v.enum(r.get("operator"), m.NODE_SELECTOR_OPERATORS, ref, v.child(rp, "operator"))
                vals = tuple(
                    v.as_str(x, ref, v.index(v.child(rp, "values"), n))
                    for n, x in enumerate(v.opt_list(r, "values", ref, rp))
                )
                reqs.append(m.NodeSelectorRequirement(k, op, vals))
            groups.append(tuple(reqs))
        terms.append(m.NodeSelectorTerm(groups[0], groups[1]))
    return tuple(terms)


def _required_affinity(spec: Mapping[str, Any], ref: str, path: str) -> tuple[m.NodeSelectorTerm, ...] | None:
    aff = spec.get("affinity")
    if aff is None:
        return None
    ap = v.child(path, "affinity")
    aff = v.as_map(aff, ref, ap)
    na = v.opt_map(aff, "nodeAffinity", ref, ap)
    if na is None:
        return None
    np_ = v.child(ap, "nodeAffinity")
    req = v.opt_map(na, "requiredDuringSchedulingIgnoredDuringExecution", ref, np_)
    if req is None:
        return None
    rp = v.child(np_, "requiredDuringSchedulingIgnoredDuringExecution")
    if "nodeSelectorTerms" not in req:
        v.required(ref, v.child(rp, "nodeSelectorTerms"))
    return _node_selector_terms(req["nodeSelectorTerms"], ref, v.child(rp, "nodeSelectorTerms"))


def _pod_set(raw: object, ref: str, path: str) -> tuple[m.PodSet, OverLimits]:
    d = v.as_map(raw, ref, path)
    v.check_fields(d, _PODSET_FIELDS, ref, path)
    if d.get("topologyRequest") is not None:
        v.not_supported_feature(ref, v.child(path, "topologyRequest"), "Topology Aware Scheduling")
    # PodSetReference: DNS label, CRD default "main"
    name = (
        "main"
        if d.get("name") in (None, "")
        else v.object_name(d["name"], ref, v.child(path, "name"), label=True)
    )
    count = 1 if d.get("count") is None else v.as_int32(d["count"], ref, v.child(path, "count"), minimum=0)
    min_count = None
    if d.get("minCount") is not None:
        mp = v.child(path, "minCount")
        min_count = v.as_int32(d["minCount"], ref, mp, minimum=1)
        if min_count > count:  # CEL on PodSet (apis/kueue/v1beta2/workload_types.go)
            v.invalid(ref, mp, min_count, "minCount should be positive and less or equal to count")
    if d.get("template") is None:
        v.required(ref, v.child(path, "template"))
    tp = v.child(path, "template")
    template = v.as_map(d["template"], ref, tp)
    if template.get("spec") is None:
        v.required(ref, v.child(tp, "spec"))
    sp = v.child(tp, "spec")
    spec = v.as_map(template["spec"], ref, sp)
    requests, over_limits = pod_requests(spec, sp, ref)
    ps = m.PodSet(name=name, count=count, requests=requests, min_count=min_count)
    if spec.get("nodeSelector") is not None:
        ps.node_selector = v.string_map(spec["nodeSelector"], ref, v.child(sp, "nodeSelector"))
    ps.required_affinity = _required_affinity(spec, ref, sp)
    if spec.get("tolerations") is not None:
        ps.tolerations = v.tolerations(spec["tolerations"], ref, v.child(sp, "tolerations"), strict=False)
    return ps, over_limits


def _conditions(status: Mapping[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    """status.conditions by type (metav1validation.ValidateConditions: type set,
    status True/False/Unknown, lastTransitionTime set; types unique)."""
    out: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(v.opt_list(status, "conditions", ref, "status", max_items=_CONDITIONS.max_items)):
        p = v.index("status.conditions", i)
        c = v.as_map(raw, ref, p)
        ctype = v.as_str(c.get("type", ""), ref, v.child(p, "type"))
        if not ctype:
            v.required(ref, v.child(p, "type"))
        v.enum(c.get("status", ""), _CONDITION_STATUSES, ref, v.child(p, "status"))
        if c.get("lastTransitionTime") in (None, ""):
            v.required(ref, v.child(p, "lastTransitionTime"), "must be set")
        if ctype in out:
            v.duplicate(ref, v.child(p, "type"), ctype)
        out[ctype] = c
    return out


def _cond_time(c: dict[str, Any], ref: str, path: str) -> int:
    return parse_time_ns(c["lastTransitionTime"], ref, path)


def _admission(raw: object, ref: str, pod_sets: list[m.PodSet]) -> m.Admission:
    """status.admission (workload_webhook.go validateAdmission: pod set names
    exist; each resourceUsage is a multiple of the count)."""
    path = "status.admission"
    d = v.as_map(raw, ref, path)
    cq = v.opt_str(d, "clusterQueue", ref, path)
    if not cq:
        v.required(ref, v.child(path, "clusterQueue"))
    v.object_name(cq, ref, v.child(path, "clusterQueue"))
    by_name = {ps.name: ps for ps in pod_sets}
    assignments = []
    ap = v.child(path, "podSetAssignments")
    seen: set[str] = set()
    assignments_raw = v.opt_list(d, "podSetAssignments", ref, path, max_items=_POD_SET_ASSIGNMENTS.max_items)
    for i, praw in enumerate(assignments_raw):
        pp = v.index(ap, i)
        pa = v.as_map(praw, ref, pp)
        name = v.opt_str(pa, "name", ref, pp, "main") or "main"
        if name not in by_name:
            v.fail(ref, v.child(pp, "name"), f'Not found: "{name}"')
        if name in seen:
            v.duplicate(ref, v.child(pp, "name"), name)
        seen.add(name)
        flavors = v.string_map(pa.get("flavors") or {}, ref, v.child(pp, "flavors"))
        # A missing count means the pod set's count (PodSetAssignment.count docs);
        # the webhook only checks divisibility by an explicit count.
        explicit = None
        if pa.get("count") is not None:
            explicit = v.as_int32(pa["count"], ref, v.child(pp, "count"), minimum=0)
        count = by_name[name].count if explicit is None else explicit
        usage: dict[str, int] = {}
        up = v.child(pp, "resourceUsage")
        for rname, q in v.as_map(pa.get("resourceUsage") or {}, ref, up).items():
            val = v.quantity(q, rname, ref, v.key(up, rname))
            if explicit and val % explicit != 0:
                v.invalid(ref, v.key(up, rname), str(q), f"is not a multiple of {count}")
            usage[rname] = val
        assignments.append(m.PodSetAssignment(name, count, dict(flavors), usage))
    return m.Admission(cq, assignments)


def _priority(
    spec: Mapping[str, Any],
    api: str,
    ref: str,
    priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass] | None,
) -> tuple[int, str | None]:
    """spec.priority if set, else the value of the referenced class, else 0.
    A named class that does not exist is a MissingReferenceError."""
    prio = v.as_int32(spec["priority"], ref, "spec.priority") if spec.get("priority") is not None else None
    cls: str | None = None
    pod_class = False
    path = ""
    if api == V1BETA1:
        if spec.get("priorityClassName"):
            path = "spec.priorityClassName"
            cls = v.object_name(spec["priorityClassName"], ref, path)
        src = v.opt_enum(spec, "priorityClassSource", _PRIORITY_CLASS_SOURCE.enum, ref, "spec", "")
        pod_class = src == _POD_PC_SOURCE
    elif spec.get("priorityClassRef") is not None:
        if prio is None:  # CEL rule on the v1beta2 WorkloadSpec
            v.invalid(ref, "spec", "object", "priority should not be nil when priorityClassRef is set")
        rp = "spec.priorityClassRef"
        r = v.as_map(spec["priorityClassRef"], ref, rp)
        v.check_fields(r, _PRIORITY_CLASS_REF.names, ref, rp)
        for f in _PRIORITY_CLASS_REF.required:
            if not r.get(f):
                v.required(ref, v.child(rp, f))
        group = v.enum(r["group"], _PRIORITY_CLASS_REF.fields["group"].enum, ref, v.child(rp, "group"))
        kind = v.enum(r["kind"], _PRIORITY_CLASS_REF.fields["kind"].enum, ref, v.child(rp, "kind"))
        # CEL rules on PriorityClassRef
        if group == "scheduling.k8s.io" and kind != "PriorityClass":
            v.invalid(
                ref, rp, "object", "only the PriorityClass kind is allowed for the scheduling.k8s.io group"
            )
        if group == KUEUE_GROUP and kind != "WorkloadPriorityClass":
            v.invalid(
                ref,
                rp,
                "object",
                "only the WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group",
            )
        path = v.child(rp, "name")
        cls = v.object_name(r["name"], ref, path)
        pod_class = kind == "PriorityClass"
    if prio is not None:
        return prio, cls
    if cls is None:
        return 0, None
    classes = pod_priority_classes if pod_class else priority_classes
    pc = (classes or {}).get(cls)
    if pc is None:
        what = "PriorityClass" if pod_class else "WorkloadPriorityClass"
        raise MissingReferenceError(ref, path, f'{what} "{cls}" not found')
    return pc.value, cls


def _check_states(
    status: Mapping[str, Any], ref: str, pod_sets: list[m.PodSet]
) -> list[m.AdmissionCheckState]:
    """status.admissionChecks (listType=map on name, state in the CRD's enum;
    workload_webhook.go validatePodSetUpdates: an update names a pod set)."""
    p = "status.admissionChecks"
    out: list[m.AdmissionCheckState] = []
    raws = v.opt_list(status, "admissionChecks", ref, "status", max_items=_CHECK_STATES.max_items)
    for i, raw in enumerate(raws):
        ip = v.index(p, i)
        c = v.as_map(raw, ref, ip)
        name = v.as_str(c.get("name", ""), ref, v.child(ip, "name"))
        if not name:
            v.required(ref, v.child(ip, "name"))
        if any(x.name == name for x in out):
            v.duplicate(ref, v.child(ip, "name"), name)
        if c.get("state") in (None, ""):
            v.required(ref, v.child(ip, "state"))
        state = v.enum(c["state"], api_fields.CHECK_STATE_NAMES, ref, v.child(ip, "state"))
        message = v.opt_str(c, "message", ref, ip)
        retries = c.get("retryCount")
        count = 0 if retries is None else v.as_int32(retries, ref, v.child(ip, "retryCount"), minimum=0)
        after = c.get("requeueAfterSeconds")
        after_path = v.child(ip, "requeueAfterSeconds")
        after_s = None if after is None else v.as_int32(after, ref, after_path, minimum=0)
        ltt = c.get("lastTransitionTime")
        ltt_ns = None if ltt in (None, "") else parse_time_ns(ltt, ref, v.child(ip, "lastTransitionTime"))
        up = v.child(ip, "podSetUpdates")
        known = [ps.name for ps in pod_sets]
        for j, u in enumerate(v.opt_list(c, "podSetUpdates", ref, ip)):
            upd = v.as_map(u, ref, v.index(up, j))
            if upd.get("name") not in known:
                v.unsupported(ref, v.child(v.index(up, j), "name"), upd.get("name"), sorted(known))
        out.append(m.AdmissionCheckState(name, state, message, count, after_s, ltt_ns))
    return out


def _workload_status(
    obj: Mapping[str, Any], ref: str, pod_sets: list[m.PodSet], creation: int
) -> tuple[m.Admission | None, int | None, bool, int | None, list[m.AdmissionCheckState], bool]:
    """status: conditions, admission, admissionChecks, reclaimablePods (sets
    the pod sets' ``reclaimable``). Returns (admission, admission_ns, finished,
    queue_order_ns, check states, Admitted=True)."""
    status = _status(obj, ref)
    conds = _conditions(status, ref)
    reserved = conds.get("QuotaReserved")
    has_reservation = reserved is not None and reserved.get("status") == "True"
    admission = None
    admission_ns = None
    if status.get("admission") is not None:
        admission = _admission(status["admission"], ref, pod_sets)
        admission_ns = (
            _cond_time(reserved, ref, "status.conditions[QuotaReserved].lastTransitionTime")
            if has_reservation and reserved is not None
            else creation
        )
    elif has_reservation:
        v.required(ref, "status.admission", "must be set when the QuotaReserved condition is True")
    finished = conds.get("Finished", {}).get("status") == "True"
    queue_order_ns = None
    ev = conds.get("Evicted")
    if ev is not None and ev.get("status") == "True" and ev.get("reason") in _EVICTION_REASONS_REORDERING:
        queue_order_ns = _cond_time(ev, ref, "status.conditions[Evicted].lastTransitionTime")

    # reclaimablePods (workload_webhook.go validateReclaimablePods)
    by_name = {ps.name: ps for ps in pod_sets}
    rp = "status.reclaimablePods"
    reclaimable = v.opt_list(status, "reclaimablePods", ref, "status", max_items=_RECLAIMABLE_PODS.max_items)
    for i, rraw in enumerate(reclaimable):
        r = v.as_map(rraw, ref, v.index(rp, i))
        rname = v.as_str(r.get("name", ""), ref, v.child(v.index(rp, i), "name"))
        kp = v.key(rp, rname)
        if rname not in by_name:
            v.unsupported(ref, v.child(kp, "name"), rname, [ps.name for ps in pod_sets])
        cnt = v.as_int32(r.get("count", 0), ref, v.child(kp, "count"), minimum=0)
        if cnt > by_name[rname].count:
            v.invalid(ref, v.child(kp, "count"), cnt, f"should be less or equal to {by_name[rname].count}")
        by_name[rname].reclaimable = cnt

    checks = _check_states(status, ref, pod_sets)
    admitted = conds.get("Admitted", {}).get("status") == "True"
    return admission, admission_ns, finished, queue_order_ns, checks, admitted


def parse_workload(
    obj: Mapping[str, Any],
    priority_classes: Mapping[str, m.WorkloadPriorityClass] | None = None,
    *,
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass] | None = None,
    default_creation_ns: int = 0,
) -> m.Workload:
    """A Workload: pod sets with their per-pod requests, priority, timestamps and
    (for admitted ones) the admission from status (workload_webhook.go rules).

    ``priority_classes`` are WorkloadPriorityClasses by name,
    ``pod_priority_classes`` scheduling.k8s.io PriorityClasses;
    ``default_creation_ns`` is used when metadata.creationTimestamp is absent."""
    api = _check_type(obj, ("Workload",))
    name, ns, md = _metadata(obj, "Workload", namespaced=True)
    ref = m.object_ref("Workload", name, ns)
    v.check_fields(obj, _FIELDS["Workload"][api].names, ref, "")
    if obj.get("spec") is None:
        v.required(ref, "spec")
    spec = v.as_map(obj["spec"], ref, "spec")
    v.check_fields(spec, _WL_SPEC[api], ref, "spec", _WL_RENAMED[api])

    # 1. pod sets
    if spec.get("podSets") is None:
        v.required(ref, "spec.podSets")
    raw_sets = v.as_list(
        spec["podSets"],
        ref,
        "spec.podSets",
        min_items=_POD_SETS.min_items or 0,
        max_items=_POD_SETS.max_items,
    )
    pod_sets: list[m.PodSet] = []
    over_limits: list[OverLimits] = []
    names: set[str] = set()
    with_min = 0
    for i, raw in enumerate(raw_sets):
        ps, over = _pod_set(raw, ref, f"spec.podSets[{i}]")
        if ps.name in names:  # listType=map, listMapKey=name
            v.duplicate(ref, f"spec.podSets[{i}].name", ps.name)
        names.add(ps.name)
        with_min += ps.min_count is not None
        over_limits.append(over)
        pod_sets.append(ps)
    if with_min > 1:
        v.invalid(ref, "spec.podSets", with_min, "at most one podSet can use minCount")
    msg = resources_validation_message(over_limits)  # pending, not rejected
    if msg is not None:
        for ps in pod_sets:
            ps.resources_validation_error = msg

    # 2. queue, priority, active
    queue = v.opt_str(spec, "queueName", ref, "spec")
    if queue:
        v.object_name(queue, ref, "spec.queueName")
    priority, pclass = _priority(spec, api, ref, priority_classes, pod_priority_classes)
    active = v.as_bool(spec["active"], ref, "spec.active") if spec.get("active") is not None else True
    if spec.get("maximumExecutionTimeSeconds") is not None:
        v.as_int32(spec["maximumExecutionTimeSeconds"], ref, "spec.maximumExecutionTimeSeconds", minimum=1)

    # 3. identity and times
    creation = (
        parse_time_ns(md["creationTimestamp"], ref, "metadata.creationTimestamp")
        if md.get("creationTimestamp") is not None
        else default_creation_ns
    )
    uid = v.as_str(md["uid"], ref, "metadata.uid") if md.get("uid") else f"{ns}/{name}"

    # 4. status
    admission, admission_ns, finished, queue_order_ns, checks, admitted = _workload_status(
        obj, ref, pod_sets, creation
    )

    wl = m.Workload(
        namespace=ns,
        name=name,
        queue_name=queue,
        pod_sets=pod_sets,
        creation_ns=creation,
        priority=priority,
        priority_class=pclass,
        uid=uid,
        active=active,
        admission=admission,
        admission_ns=admission_ns,
        finished=finished,
        queue_order_ns=queue_order_ns,
        admission_checks=checks,
        admitted_condition=admitted,
        raw=dict(obj),
    )
    _pods_ready_status(obj, ref, wl)
    return wl


def _pods_ready_status(obj: Mapping[str, Any], ref: str, wl: m.Workload) -> None:
    """waitForPodsReady's inputs: the PodsReady condition (status, reason,
    lastTransitionTime) and status.requeueState (count, requeueAt)."""
    status = obj.get("status")
    if not isinstance(status, dict):
        return
    for i, c in enumerate(status.get("conditions") or []):
        if isinstance(c, dict) and c.get("type") == "PodsReady":
            wl.pods_ready = c.get("status") == "True"
            wl.pods_ready_reason = str(c.get("reason") or "")
            tp = f"status.conditions[{i}].lastTransitionTime"
            wl.pods_ready_ns = parse_time_ns(c["lastTransitionTime"], ref, tp)
    rs = v.opt_map(status, "requeueState", ref, "status")
    if rs is not None:
        rp = "status.requeueState"
        if rs.get("count") is not None:
            wl.requeue_count = v.as_int32(rs["count"], ref, v.child(rp, "count"), minimum=0)
        if rs.get("requeueAt") is not None:
            wl.requeue_at_ns = parse_time_ns(rs["requeueAt"], ref, v.child(rp, "requeueAt"))


# --- the bulk path for Workloads ---------------------------------------------------------
#
# build_state reads many Workloads of a few shapes. _fast_workload gives the
# same m.Workload as parse_workload for the common shape, or None for anything
# else (or anything invalid): then parse_workload runs and raises its error,
# so messages never depend on the path. What it saves:
#   * names, namespaces, queue names are validated once per distinct value;
#   * an RFC 3339 time in whole seconds UTC is split by position (days of a
#     date are computed once by parse_time_ns);
#   * a pod template's results (requests, resource validation reasons, node
#     affinity, tolerations) are computed once per distinct template. The key
#     is exact: orjson's serialization (it tells 1, 1.0 and true apart, refuses
#     non-string keys and non-JSON values) plus == against the template kept
#     with the entry (which tells apart what orjson writes alike, NaN and null).
# tests/test_fast_loading.py checks both paths give equal states and errors.

_TOP_SET = frozenset(_TOP)


class _TemplateResult:
    """What a pod set's template spec gives, whatever the workload."""

    __slots__ = ("spec", "requests", "over_limits", "affinity", "tolerations")

    def __init__(
        self,
        spec: dict[str, Any],
        requests: dict[str, int],
        over_limits: OverLimits,
        affinity: tuple[m.NodeSelectorTerm, ...] | None,
        tolerations: list[m.Toleration] | None,
    ) -> None:
        self.spec = spec
        self.requests = requests
        self.over_limits = over_limits
        self.affinity = affinity
        self.tolerations = tolerations


class _BulkCaches:
    """Results of validations that depend only on a value, for one build_state."""

    def __init__(self) -> None:
        self.subdomains: set[str] = set()  # valid DNS-1123 subdomains (names, queue names)
        self.labels: set[str] = set()  # valid DNS-1123 labels (namespaces, pod set names)
        self.days: dict[str, int] = {}  # "YYYY-MM-DD" -> ns at 00:00:00Z
        self.templates: dict[tuple[str, bytes], _TemplateResult] = {}


def _is_subdomain(s: object, c: _BulkCaches) -> TypeGuard[str]:
    if type(s) is not str:
        return False
    if s in c.subdomains:
        return True
    if not s or v.dns1123_subdomain_errors(s) is not None:
        return False
    c.subdomains.add(s)
    return True


def _is_label(s: object, c: _BulkCaches) -> TypeGuard[str]:
    if type(s) is not str:
        return False
    if s in c.labels:
        return True
    if not s or v.dns1123_label_errors(s) is not None:
        return False
    c.labels.add(s)
    return True


def _fast_time_ns(s: str, c: _BulkCaches) -> int | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` (ASCII digits) as parse_time_ns reads it, else None."""
    if len(s) != 20 or s[19] != "Z" or s[10] != "T" or s[13] != ":" or s[16] != ":" or not s.isascii():
        return None
    day = c.days.get(s[:10])
    if day is None:
        try:
            day = parse_time_ns(s[:10] + "T00:00:00Z", "", "")
        except InputError:
            return None
        c.days[s[:10]] = day
    hh, mm, ss = s[11:13], s[14:16], s[17:19]
    if not (hh.isdigit() and mm.isdigit() and ss.isdigit()):
        return None
    h, mi, sec = int(hh), int(mm), int(ss)
    if h > 23 or mi > 59 or sec > 59:  # datetime's ranges
        return None
    return day + ((h * 60 + mi) * 60 + sec) * 1_000_000_000


def _fast_pod_set(d: object, c: _BulkCaches) -> tuple[m.PodSet, OverLimits] | None:
    """parse_workload's _pod_set for a valid pod set; None otherwise."""
    if type(d) is not dict or not d.keys() <= _PODSET_FIELDS or d.get("topologyRequest") is not None:
        return None
    name = d.get("name")
    if name is None or name == "":
        name = "main"
    elif not _is_label(name, c):
        return None
    count = d.get("count", 1)
    if count is None:
        count = 1
    elif type(count) is not int or not 0 <= count <= v.INT32_MAX:
        return None
    min_count = d.get("minCount")
    if min_count is not None and (type(min_count) is not int or not 1 <= min_count <= count):
        return None
    template = d.get("template")
    if type(template) is not dict:
        return None
    spec = template.get("spec")
    if type(spec) is not dict or any(type(k) is not str for k in template):
        return None
    key = exact_key(spec)
    if key is None:
        return None
    hit = c.templates.get((name, key))
    if hit is None or (hit.spec is not spec and hit.spec != spec):
        try:
            requests, over_limits = pod_requests(spec, "", "")
            if spec.get("nodeSelector") is not None:
                v.string_map(spec["nodeSelector"], "", "")
            affinity = _required_affinity(spec, "", "")
            tols = None
            if spec.get("tolerations") is not None:
                tols = v.tolerations(spec["tolerations"], "", "", strict=False)
        except Exception:  # noqa: BLE001 - parse_workload raises it, with the object and field
            return None
        hit = _TemplateResult(spec, requests, over_limits, affinity, tols)
        c.templates[(name, key)] = hit
    ps = m.PodSet(name=name, count=count, requests=dict(hit.requests), min_count=min_count)
    ns_raw = spec.get("nodeSelector")
    if ns_raw is not None:
        ps.node_selector = ns_raw  # string_map gives the mapping itself
    ps.required_affinity = hit.affinity
    if hit.tolerations is not None:
        ps.tolerations = list(hit.tolerations)
    return ps, hit.over_limits


def _fast_workload(
    obj: dict[str, Any],
    api: str,
    position: int,
    priority_classes: Mapping[str, m.WorkloadPriorityClass],
    pod_priority_classes: Mapping[str, m.WorkloadPriorityClass],
    c: _BulkCaches,
) -> m.Workload | None:
    """parse_workload(obj, ...) for a valid Workload of the common shape, else None."""
    if not obj.keys() <= _TOP_SET:
        return None
    md = obj.get("metadata")
    if type(md) is not dict or any(type(k) is not str for k in md):
        return None
    name = md.get("name")
    if not _is_subdomain(name, c):
        return None
    ns = md.get("namespace")
    if ns is None or ns == "":
        ns = "default"
    elif not _is_label(ns, c):
        return None
    spec = obj.get("spec")
    if type(spec) is not dict or not spec.keys() <= _WL_SPEC[api]:
        return None
    ref = f"Workload/{ns}/{name}"
    try:  # rare: validated as parse_workload does
        if md.get("labels") is not None:
            v.labels(md["labels"], ref, "metadata.labels")
        if md.get("annotations") is not None:
            v.string_map(md["annotations"], ref, "metadata.annotations")
    except InputError:
        return None

    # 1. pod sets
    raw_sets = spec.get("podSets")
    if type(raw_sets) is not list or not _POD_SETS_MIN <= len(raw_sets) <= _POD_SETS_MAX:
        return None
    pod_sets: list[m.PodSet] = []
    over_limits: list[OverLimits] = []
    with_min = 0
    for raw in raw_sets:
        found = _fast_pod_set(raw, c)
        if found is None:
            return None
        ps, over = found
        pod_sets.append(ps)
        over_limits.append(over)
        with_min += ps.min_count is not None
    if len(pod_sets) > 1 and len({ps.name for ps in pod_sets}) != len(pod_sets):
        return None  # duplicate names
    if with_min > 1:
        return None
    msg = resources_validation_message(over_limits)
    if msg is not None:
        for ps in pod_sets:
            ps.resources_validation_error = msg

    # 2. queue, priority, active
    queue = spec.get("queueName")
    if queue is None:
        queue = ""
    elif type(queue) is not str or (queue and not _is_subdomain(queue, c)):
        return None
    if (api == V1BETA1 and "priorityClassName" not in spec and "priorityClassSource" not in spec) or (
        api == V1BETA2 and "priorityClassRef" not in spec
    ):
        prio = spec.get("priority")
        if prio is None:
            priority, pclass = 0, None
        elif type(prio) is int and v.INT32_MIN <= prio <= v.INT32_MAX:
            priority, pclass = prio, None
        else:
            return None
    else:
        try:
            priority, pclass = _priority(spec, api, ref, priority_classes, pod_priority_classes)
        except InputError:
            return None
    active = spec.get("active")
    if active is None:
        active = True
    elif type(active) is not bool:
        return None
    met = spec.get("maximumExecutionTimeSeconds")
    if met is not None and (type(met) is not int or not 1 <= met <= v.INT32_MAX):
        return None

    # 3. identity and times
    ts = md.get("creationTimestamp")
    if ts is None:
        creation = position
    elif type(ts) is str and (fast_ts := _fast_time_ns(ts, c)) is not None:
        creation = fast_ts
    else:
        try:
            creation = parse_time_ns(ts, ref, "metadata.creationTimestamp")
        except InputError:
            return None
    uid = md.get("uid")
    if not uid:
        uid = f"{ns}/{name}"
    elif type(uid) is not str:
        return None

    # 4. status
    if obj.get("status") is None:
        admission, admission_ns, finished, queue_order_ns = None, None, False, None
        checks: list[m.AdmissionCheckState] = []
        admitted = False
    else:
        try:
            admission, admission_ns, finished, queue_order_ns, checks, admitted = _workload_status(
                obj, ref, pod_sets, creation
            )
        except InputError:
            return None

    wl = m.Workload(
        namespace=ns,
        name=name,
        queue_name=queue,
        pod_sets=pod_sets,
        creation_ns=creation,
        priority=priority,
        priority_class=pclass,
        uid=uid,
        active=active,
        admission=admission,
        admission_ns=admission_ns,
        finished=finished,
        queue_order_ns=queue_order_ns,
        admission_checks=checks,
        admitted_condition=admitted,
        raw=dict(obj),
    )
    if obj.get("status") is not None:
        try:
            _pods_ready_status(obj, ref, wl)
        except InputError:
            return None
    return wl


# --- the whole input ------------------------------------------------------------------------

KUEUE_GROUPS = (KUEUE_GROUP, "config.kueue.x-k8s.io")
# Kueue's own kinds that kueue-fast reads nothing from, and why skipping them
# changes no decision.
_KUEUE_KINDS_NOT_READ = {
    "MultiKueueConfig": "it matters only through an AdmissionCheck",
    "MultiKueueCluster": "it matters only through an AdmissionCheck",
    "ProvisioningRequestConfig": "it matters only through an AdmissionCheck",
    "Topology": "a ResourceFlavor that names a topology is refused",
}


@dataclass(frozen=True)
class _Role:
    """What the loader does with a document: read it as ``kind``, convert it
    through its job ``integration``, or skip it (``skipped`` says why)."""

    kind: str
    api: str
    integration: Integration | None = None
    skipped: str = ""


def _group(api: str) -> str:
    return api.rsplit("/", 1)[0] if "/" in api else ""


def _label_of(d: dict[str, Any]) -> str:
    """Kind/[namespace/]name as far as the object says it (for messages)."""
    kind = d.get("kind")
    md = d.get("metadata")
    name = md.get("name") or md.get("generateName") if isinstance(md, dict) else None
    ns = md.get("namespace") if isinstance(md, dict) else None
    if not isinstance(kind, str):
        return ""
    if not isinstance(name, str) or not name:
        return kind
    return m.object_ref(kind, name, ns if isinstance(ns, str) and ns else None)


def _did_you_mean(word: str, candidates: Iterable[str], template: str, cutoff: float) -> str:
    """``template`` with the candidate closest to ``word`` (any case), or ""."""
    cands = sorted(candidates)
    same_case = [c for c in cands if c.lower() == word.lower()]
    close = same_case or difflib.get_close_matches(word, cands, n=1, cutoff=cutoff)
    return template.format(close[0]) if close else ""


def _kind_and_version(doc: Document) -> _Role:
    d = doc.obj
    api, kind = d.get("apiVersion"), d.get("kind")
    name = d.get("metadata", {}).get("name") if isinstance(d.get("metadata"), dict) else None
    label = (
        f"{kind}/{name}"
        if isinstance(kind, str) and isinstance(name, str)
        else (kind if isinstance(kind, str) else "")
    )
    if not isinstance(kind, str) or not kind:
        raise ParseError(
            label, "kind", "Required value: every object needs apiVersion and kind", source=doc.where
        )
    if not isinstance(api, str) or not api:
        raise ParseError(
            label, "apiVersion", "Required value: every object needs apiVersion and kind", source=doc.where
        )
    versions = KIND_VERSIONS.get(kind)
    if versions is not None:
        if api not in versions:
            raise ParseError(
                label,
                "apiVersion",
                f'unsupported apiVersion "{api}" for kind {kind} (expected {", ".join(versions)})',
                source=doc.where,
            )
        return _Role(kind, api)
    integration = integration_for(api, kind)
    if integration is not None:
        return _Role(kind, api, integration)
    if _group(api) in KUEUE_GROUPS:
        why = _KUEUE_KINDS_NOT_READ.get(kind)
        if why is None:  # a typo of one of Kueue's kinds
            kueue_kinds = [k for k, vs in KIND_VERSIONS.items() if _group(vs[0]) in KUEUE_GROUPS]
            hint = _did_you_mean(kind, [*kueue_kinds, *_KUEUE_KINDS_NOT_READ], '; did you mean "{}"?', 0.6)
            raise ParseError(
                label, "kind", f'unsupported kind "{kind}" (apiVersion "{api}"){hint}', source=doc.where
            )
        return _Role(kind, api, skipped=f"kueue-fast reads nothing from a {kind} ({why}); skipped")
    return _Role(kind, api, skipped=_why_skipped(d, kind, api))


def _why_skipped(d: dict[str, Any], kind: str, api: str) -> str:
    md = d.get("metadata")
    labels = md.get("labels") if isinstance(md, dict) else None
    queue = labels.get(QUEUE_LABEL) if isinstance(labels, dict) else None
    if kind == "CronJob" and _group(api) == "batch":
        return "Kueue queues the Jobs a CronJob creates, as it creates them; offline there are none; skipped"
    if queue:
        kinds = " and ".join(f"{a} {k}s" for a, k in INTEGRATIONS)
        why = f"it has the {QUEUE_LABEL} label ({queue}), but kueue-fast makes Workloads only from {kinds}"
        return f"{why}; skipped"
    read = [*KIND_VERSIONS, *(k for _, k in INTEGRATIONS)]
    hint = _did_you_mean(kind, read, ' (did you mean "{}"?)', 0.85)  # only a likely typo
    return f"Kueue does not read {kind} ({api}); skipped{hint}"


def _with_source(e: InputError, doc: Document) -> InputError:
    if e.source:
        return e
    return type(e)(e.obj, e.field, e.message, source=doc.where)


def build_state(docs: Iterable[Document | dict[str, Any]], *, keep_sources: bool = False) -> m.ClusterState:
    """Convert and validate every object; cross-object rules (duplicates, at
    most one Configuration, priority class references) are checked here.
    Every invalid object is reported (``errors.raise_all``); objects Kueue
    does not read are skipped with a warning (``ClusterState.warnings``).
    ``keep_sources`` fills ``ClusterState.sources``."""
    errors: list[InputError] = []
    with no_cyclic_gc():
        state = _build_state(docs, errors, keep_sources)
    raise_all(errors, state.warnings)
    return state


def load(
    paths: Sequence[str],
    stdin: IO[str] | None = None,
    *,
    recursive: bool = False,
    keep_sources: bool = False,
) -> m.ClusterState:
    """read_documents + build_state, with the errors of both reported together."""
    errors: list[InputError] = []
    warnings: list[InputWarning] = []
    docs = _read_all(paths, stdin, recursive, errors, warnings)
    unreadable = bool(errors)
    with no_cyclic_gc():
        state = _build_state(docs, errors, keep_sources)
    if unreadable:  # what a missing reference names may be in the file that could not be read
        errors = [e for e in errors if not isinstance(e, MissingReferenceError)]
    state.warnings[:0] = warnings
    raise_all(errors, state.warnings)
    return state


def _build_state(
    docs: Iterable[Document | dict[str, Any]], errors: list[InputError], keep_sources: bool
) -> m.ClusterState:
    state = m.ClusterState()
    noted: list[tuple[int, InputWarning]] = []  # (document number, warning), sorted at the end
    sources = state.sources if keep_sources else None
    documents: list[Document] = []
    for i, d in enumerate(docs):
        try:
            if isinstance(d, Document):
                documents.append(d)
            elif isinstance(d, dict):
                documents.extend(_split_list("<input>", i, d))
            else:
                raise ParseError("", "", f"input {i} is a {_kind_of(d)}, not an object", source="<input>")
        except InputError as e:
            errors.append(e)

    # 1. kinds (all their errors first: a reader that stops at the first error reports one of these)
    roles: list[_Role | None] = []
    known: dict[tuple[str, str], _Role] = {}  # (apiVersion, kind) -> the role of every such object
    for doc in documents:
        api, kind = doc.obj.get("apiVersion"), doc.obj.get("kind")
        role = known.get((api, kind)) if type(api) is str and type(kind) is str else None
        if role is None:
            try:
                role = _kind_and_version(doc)
            except InputError as e:
                errors.append(e)
                roles.append(None)
                continue
            if not role.skipped:  # a skipped object's message is its own
                known[(role.api, role.kind)] = role
        roles.append(role)

    # 2. everything but Workloads and jobs
    pod_classes: dict[str, m.WorkloadPriorityClass] = {}
    # Classes whose object is invalid, by kind: references to them are not
    # reported as missing (that error is already reported).
    broken_classes: dict[str, dict[str, m.WorkloadPriorityClass]] = {
        "WorkloadPriorityClass": {},
        "PriorityClass": {},
    }
    workloads: list[tuple[int, Document, _Role, int]] = []  # (document number, document, role, position)
    seen_config: Document | None = None

    def put(table: dict[str, Any], key: str, value: Any, doc: Document, ref: str) -> None:
        if key in table:
            raise ValidationError(
                ref,
                "metadata.name",
                f'Duplicate value: "{key}": the input defines {ref} twice',
                source=doc.where,
            )
        table[key] = value
        if sources is not None:
            sources[ref] = doc.where

    for i, (doc, role) in enumerate(zip(documents, roles, strict=True)):
        if role is None:
            continue
        if role.skipped:
            noted.append((i, InputWarning(_label_of(doc.obj), "", role.skipped, doc.where)))
            continue
        kind = role.kind
        if kind == "Workload" or role.integration is not None:
            workloads.append((i, doc, role, len(workloads)))
            continue
        try:
            if kind == "ResourceFlavor":
                rf = parse_resource_flavor(doc.obj)
                put(state.resource_flavors, rf.name, rf, doc, f"ResourceFlavor/{rf.name}")
            elif kind == "ClusterQueue":
                cq = parse_cluster_queue(doc.obj)
                put(state.cluster_queues, cq.name, cq, doc, f"ClusterQueue/{cq.name}")
                if cq.namespace_selector is None:
                    hint = _NO_NAMESPACE_SELECTOR.with_object(f"ClusterQueue/{cq.name}", doc.where)
                    noted.append((i, hint))
            elif kind == "Cohort":
                co = parse_cohort(doc.obj)
                put(state.cohorts, co.name, co, doc, f"Cohort/{co.name}")
            elif kind == "LocalQueue":
                lq = parse_local_queue(doc.obj)
                put(
                    state.local_queues,
                    f"{lq.namespace}/{lq.name}",
                    lq,
                    doc,
                    f"LocalQueue/{lq.namespace}/{lq.name}",
                )
            elif kind == "AdmissionCheck":
                ac = parse_admission_check(doc.obj)
                put(state.admission_checks, ac.name, ac, doc, f"AdmissionCheck/{ac.name}")
            elif kind == "WorkloadPriorityClass":
                wpc = parse_workload_priority_class(doc.obj)
                put(state.priority_classes, wpc.name, wpc, doc, f"WorkloadPriorityClass/{wpc.name}")
            elif kind == "PriorityClass":
                pc = parse_priority_class(doc.obj)
                put(pod_classes, pc.name, pc, doc, f"PriorityClass/{pc.name}")
            elif kind == "Namespace":
                ns = parse_namespace(doc.obj)
                put(state.namespaces, ns.name, ns, doc, f"Namespace/{ns.name}")
            elif kind == "Configuration":
                if seen_config is not None:
                    raise ValidationError(
                        "Configuration",
                        "",
                        f"at most one Configuration may be given; another is in {seen_config.where}",
                        source=doc.where,
                    )
                seen_config = doc
                state.configuration = parse_configuration(doc.obj)
        except InputError as e:
            errors.append(_with_source(e, doc))
            md = doc.obj.get("metadata")
            name = md.get("name") if isinstance(md, dict) else None
            if kind in broken_classes and isinstance(name, str):
                broken_classes[kind][name] = m.WorkloadPriorityClass(name, 0)
    state.pod_priority_classes = pod_classes
    wpcs = {**broken_classes["WorkloadPriorityClass"], **state.priority_classes}
    pcs = {**broken_classes["PriorityClass"], **pod_classes}

    # 3. Workloads, and the Workloads Kueue makes from jobs, in input order
    caches = _BulkCaches()
    jobs = _JobReader(state, wpcs, pcs, workloads) if any(r.integration for _, _, r, _ in workloads) else None
    made: dict[int, list[dict[str, Any]]] = {}  # document number -> the job as defaulted, its Workloads
    for i, doc, role, position in workloads:
        try:
            if role.integration is not None:
                assert jobs is not None
                obj, wls, notes = jobs.read(doc, role, position, caches)
                noted.extend((i, w) for w in notes)
                made[i] = [obj, *(wl.raw for wl in wls)]
                if sources is not None:
                    md = obj["metadata"]
                    sources[m.object_ref(role.kind, md["name"], md["namespace"])] = doc.where
                for wl in wls:
                    put(state.workloads, wl.key, wl, doc, f"Workload/{wl.key}")
                continue
            obj = doc.obj
            fast = _fast_workload(obj, role.api, position, wpcs, pcs, caches)
            wl = (
                fast
                if fast is not None
                else parse_workload(
                    obj,
                    wpcs,
                    pod_priority_classes=pcs,
                    default_creation_ns=position,
                )
            )
            put(state.workloads, wl.key, wl, doc, f"Workload/{wl.key}")
            if wl.admission is not None:
                noted.extend((i, w) for w in _unknown_flavors(wl, state, doc))
        except InputError as e:
            errors.append(_with_source(e, doc))
    noted.sort(key=lambda n: n[0])  # in input order
    state.warnings.extend(w for _, w in noted)
    if made:
        state.documents = [o for i, doc in enumerate(documents) for o in made.get(i) or (doc.obj,)]
    else:
        state.documents = [doc.obj for doc in documents]
    return state


# --- hints: accepted, but probably not what was meant ------------------------------------


@dataclass(frozen=True)
class _Hint:
    field: str
    message: str

    def with_object(self, obj: str, source: str) -> InputWarning:
        return InputWarning(obj, self.field, self.message, source)


_NO_NAMESPACE_SELECTOR = _Hint(
    "spec.namespaceSelector",
    "not set: this ClusterQueue selects no namespace, so it admits no workload "
    "(namespaceSelector: {} selects every namespace)",
)


def _unknown_flavors(wl: m.Workload, state: m.ClusterState, doc: Document) -> list[InputWarning]:
    """An admitted Workload naming a ResourceFlavor the input does not define."""
    assert wl.admission is not None
    out = []
    for j, psa in enumerate(wl.admission.pod_set_assignments):
        for resource, flavor in psa.flavors.items():
            if flavor not in state.resource_flavors:
                out.append(
                    InputWarning(
                        f"Workload/{wl.key}",
                        f"status.admission.podSetAssignments[{j}].flavors[{resource}]",
                        f'ResourceFlavor "{flavor}" is not in the input: the {resource} it holds '
                        "counts against no quota",
                        doc.where,
                    )
                )
    return out


# --- jobs ---------------------------------------------------------------------------------


class _JobReader:
    """Jobs of the input -> the Workloads Kueue's job integrations create.

    A job that an input Workload names as owner (or whose prebuilt Workload
    the input holds) is that Workload: Kueue creates no other
    (jobframework ensureOneWorkload)."""

    def __init__(
        self,
        state: m.ClusterState,
        wpcs: Mapping[str, m.WorkloadPriorityClass],
        pcs: Mapping[str, m.WorkloadPriorityClass],
        workloads: list[tuple[int, Document, _Role, int]],
    ) -> None:
        self.state = state
        self.wpcs, self.pcs = wpcs, pcs
        self.env = Environment(wpcs, pcs, state.local_queues, state.namespace_labels, state.configuration)
        self.input_workloads: set[str] = set()
        self.owned: dict[tuple[str, str, str, str], str] = {}  # (ns, apiVersion, kind, name) -> uid
        for _, doc, role, _ in workloads:
            md = doc.obj.get("metadata")
            if role.integration is not None or not isinstance(md, dict):
                continue
            ns = md.get("namespace") or "default"
            self.input_workloads.add(f"{ns}/{md.get('name')}")
            for r in md.get("ownerReferences") or ():
                if isinstance(r, dict) and integration_for(r.get("apiVersion"), r.get("kind")):
                    key = (str(ns), r["apiVersion"], r["kind"], str(r.get("name")))
                    self.owned[key] = str(r.get("uid") or "")
        self.generated: dict[tuple[str, str, str], int] = {}  # (kind, namespace, generateName) -> count
        self.seen: set[str] = set()

    def read(
        self, doc: Document, role: _Role, position: int, caches: _BulkCaches
    ) -> tuple[dict[str, Any], list[m.Workload], list[InputWarning]]:
        """(the job as Kueue's webhook leaves it, its Workloads, warnings)."""
        assert role.integration is not None
        module = role.integration
        kind = role.kind
        obj = self._named(doc.obj, kind)
        name, ns, md = _metadata(obj, kind, namespaced=True)
        obj["metadata"] = {**md, "namespace": ns}
        ref = m.object_ref(kind, name, ns)
        if ref in self.seen:
            msg = f'Duplicate value: "{name}": the input defines {ref} twice'
            raise ValidationError(ref, "metadata.name", msg)
        self.seen.add(ref)
        owned_uid = self.owned.get((ns, role.api, kind, name))
        uid = md.get("uid") or ""
        if owned_uid is not None and (not owned_uid or not uid or owned_uid == uid):
            return obj, [], []  # an input Workload is this job's
        conv = module.workloads_for(obj, self.env)
        notes = [InputWarning(ref, f, msg, doc.where) for f, msg in conv.warnings]
        if conv.runs_as and f"{ns}/{conv.runs_as}" not in self.input_workloads:
            notes.append(
                InputWarning(
                    ref,
                    "",
                    f'it runs as the prebuilt Workload "{conv.runs_as}", which is not in the input: '
                    f"the {kind} waits for it",
                    doc.where,
                )
            )
        out = []
        for wl_obj in conv.workloads:
            try:
                wl = _fast_workload(wl_obj, wl_obj["apiVersion"], position, self.wpcs, self.pcs, caches)
                if wl is None:
                    wl = parse_workload(
                        wl_obj, self.wpcs, pod_priority_classes=self.pcs, default_creation_ns=position
                    )
            except InputError as e:  # name the job's field, not the Workload's
                raise type(e)(ref, module.owner_field(e.field), e.message) from None
            if md.get("creationTimestamp") is not None:
                wl.creation_ns = parse_time_ns(md["creationTimestamp"], ref, "metadata.creationTimestamp")
            wl.owner = f"{kind}/{name}"
            out.append(wl)
        return conv.obj, out, notes

    def _named(self, obj: dict[str, Any], kind: str) -> dict[str, Any]:
        """A copy of the job, named as the API server names one created with
        generateName (framework.generated_name)."""
        md = obj.get("metadata")
        if not isinstance(md, dict) or md.get("name") or not md.get("generateName"):
            return dict(obj)
        gen = v.as_str(md["generateName"], kind, "metadata.generateName")
        ns = md.get("namespace") or "default"
        key = (kind, str(ns), gen)
        n = self.generated.get(key, 0)
        self.generated[key] = n + 1
        name = generated_name(gen, str(ns), n)
        v.object_name(name, m.object_ref(kind, gen, str(ns)), "metadata.generateName")
        return {**obj, "metadata": {**md, "name": name}}
