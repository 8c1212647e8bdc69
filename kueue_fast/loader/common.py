"""What every kind's converter shares: which kinds are read in which
apiVersions (:data:`KIND_VERSIONS`) and their fields (``api_fields``), the
kind/apiVersion and metadata checks, ``status.conditions`` and RFC 3339
times. Field names per version follow Kueue's two API versions (v1beta1
``cohort``, ``priorityClassName``/``priorityClassSource``, fairSharing
``enable``; v1beta2 ``cohortName``, ``priorityClassRef``) and
apis/kueue/*/..._types.go.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from typing import Any

from ..api import error_collection as collect, fields as api_fields, model as m, validation as v
from ..api.errors import InputError, ValidationError

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
    "Topology": (V1BETA1, V1BETA2),
    "Node": ("v1",),
    "Pod": ("v1",),
}

_TOP = api_fields.TOP
# The fields of Kueue's kinds by kind and apiVersion, declared in api_fields
# (the CRDs of `kueue-fast manifests crds` are generated from them too).
_FIELDS = api_fields.KINDS


# ASCII digits to the end of the text, as Go's time.Parse reads them (fullmatch; re.ASCII: \d is [0-9])
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$", re.ASCII
)


# parse_time_ns by text, for the times of many Workloads read alike (their
# conditions' lastTransitionTime...): only valid texts, at most _TIMES_KEPT
_parsed_times: dict[str, int] = {}
_TIMES_KEPT = 1 << 16


def parse_time_ns(value: object, obj: str, path: str) -> int:
    """A metav1.Time (RFC 3339, fractional seconds allowed) in ns since the epoch.
    A datetime (from a YAML loader that resolves timestamps) is accepted too."""
    if type(value) is str:
        ns = _parsed_times.get(value)
        if ns is None:
            ns = _parse_time_ns(value, obj, path)
            if len(_parsed_times) >= _TIMES_KEPT:
                _parsed_times.clear()
            _parsed_times[value] = ns
        return ns
    return _parse_time_ns(value, obj, path)


# Times are int64 nanoseconds since the epoch (1677 to 2262); the engines add
# backoffs and cycle steps to them, so what is read stays decades inside.
MIN_TIME_NS = -2208988800 * 10**9  # 1900-01-01T00:00:00Z
MAX_TIME_NS = 7258118400 * 10**9  # 2200-01-01T00:00:00Z (excluded)


def _parse_time_ns(value: object, obj: str, path: str) -> int:
    ns = _time_ns(value, obj, path)
    if not MIN_TIME_NS <= ns < MAX_TIME_NS:
        shown = value if isinstance(value, str) else str(value)
        v.invalid(
            obj, path, shown, "kueue-fast reads times from 1900-01-01 to 2200-01-01 (int64 nanoseconds)"
        )
    return ns


def _time_ns(value: object, obj: str, path: str) -> int:
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        delta = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
        return (delta.days * 86400 + delta.seconds) * 10**9 + delta.microseconds * 1000
    s = v.as_str(value, obj, path)
    mt = _RFC3339.fullmatch(s)
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
    try:  # labels and annotations on their own (error_collection.report)
        if md.get("labels") is not None:
            v.labels(md["labels"], ref, "metadata.labels")
    except InputError as e:
        collect.report(e)
    with collect.reported():
        if md.get("annotations") is not None:
            v.string_map(md["annotations"], ref, "metadata.annotations")
    return name, namespace, md


def _spec(d: Mapping[str, Any], ref: str) -> dict[str, Any]:
    s = d.get("spec")
    return {} if s is None else v.as_map(s, ref, "spec")


def _status(d: Mapping[str, Any], ref: str) -> dict[str, Any]:
    s = d.get("status")
    return {} if s is None else v.as_map(s, ref, "status")


_CONDITIONS = _FIELDS["Workload"][V1BETA2].at("status.conditions")
_CONDITION_STATUSES = api_fields.CONDITION.fields["status"].enum


def _conditions(status: Mapping[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    """status.conditions by type (metav1validation.ValidateConditions: type set,
    status True/False/Unknown, lastTransitionTime set; types unique)."""
    plain = plain_conditions(status)
    return plain if plain is not None else _checked_conditions(status, ref)


def plain_conditions(status: Mapping[str, Any]) -> dict[str, dict[str, Any]] | None:
    """_conditions of valid conditions of plain types, read without the paths of
    error messages (also for the compiled status reader, _bulk.pyx); None for
    anything else, which _checked_conditions reads and names the error of."""
    raws = status.get("conditions")
    if raws is None:
        return {}
    if type(raws) is not list or (_CONDITIONS.max_items is not None and len(raws) > _CONDITIONS.max_items):
        return None
    out: dict[str, dict[str, Any]] = {}
    for c in raws:
        if type(c) is not dict or not all(type(k) is str for k in c):
            return None
        ctype = c.get("type", "")
        cstatus = c.get("status", "")
        if type(ctype) is not str or not ctype or ctype in out:
            return None
        if type(cstatus) is not str or cstatus not in _CONDITION_STATUSES:
            return None
        if c.get("lastTransitionTime") in (None, ""):
            return None
        out[ctype] = c
    return out


def _checked_conditions(status: Mapping[str, Any], ref: str) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for i, raw in enumerate(v.opt_list(status, "conditions", ref, "status", max_items=_CONDITIONS.max_items)):
        p = v.index("status.conditions", i)
        try:  # each condition on its own (error_collection.report)
            c = v.as_map(raw, ref, p)
            ctype = v.as_str(c.get("type", ""), ref, v.child(p, "type"))
            if not ctype:
                v.required(ref, v.child(p, "type"))
            v.enum(c.get("status", ""), _CONDITION_STATUSES, ref, v.child(p, "status"))
            if c.get("lastTransitionTime") in (None, ""):
                v.required(ref, v.child(p, "lastTransitionTime"), "must be set")
            if ctype in out:
                v.duplicate(ref, v.child(p, "type"), ctype)
        except InputError as e:
            collect.report(e)
            continue
        out[ctype] = c
    return out
