"""Kueue's validation: the CRD schema (types, enums, limits, CEL rules) and the
webhooks, applied while the loader decodes objects.

Every check raises :class:`~kueue_fast.api.errors.ValidationError` naming the
object (``ClusterQueue/team-a``) and the Kubernetes field path of the culprit;
messages follow ``k8s.io/apimachinery/pkg/util/validation/field`` wording
(``Invalid value: "5": must be less than or equal to the nominalQuota``).
spec.resourceGroups has its own module (api/resource_groups.py).

Every error of an object at once (report, reported, collect_errors) is
api/error_collection.py's.

Sources (kubernetes-sigs/kueue unless noted):
  * apis/kueue/v1beta2/*_types.go kubebuilder markers (MinItems, MaxItems,
    Enum, Minimum, Pattern, XValidation CEL rules);
  * pkg/webhooks/clusterqueue_webhook.go, cohort_webhook.go, common.go,
    resourceflavor_webhook.go, workload_webhook.go;
  * apimachinery pkg/apis/meta/v1/validation (labels, label selectors) and
    pkg/util/validation (qualified names, DNS-1123 names).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, TypeVar

from . import fields as api_fields, model as m
from .error_collection import report
from .errors import InputError, QuantityError, ValidationError
from .quantity import parse_quantity, quantity_nanos

# --- field paths and errors -----------------------------------------------------


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


def _show(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return type_name(value)


def fail(obj: str, path: str, message: str) -> NoReturn:
    raise ValidationError(obj, path, message)


def invalid(obj: str, path: str, value: object, detail: str) -> NoReturn:
    fail(obj, path, f"Invalid value: {_show(value)}: {detail}")


def required(obj: str, path: str, detail: str = "") -> NoReturn:
    fail(obj, path, "Required value" + (f": {detail}" if detail else ""))


def unsupported(obj: str, path: str, value: object, allowed: Iterable[str]) -> NoReturn:
    listed = ", ".join(f'"{a}"' for a in allowed)
    fail(obj, path, f"Unsupported value: {_show(value)}: supported values: {listed}")


def duplicate(obj: str, path: str, value: object, detail: str = "") -> NoReturn:
    fail(obj, path, f"Duplicate value: {_show(value)}" + (f": {detail}" if detail else ""))


def not_supported_feature(obj: str, path: str, what: str) -> NoReturn:
    fail(obj, path, f"not supported by kueue-fast: {what}; it would change admission decisions")


# --- strict decoding: types, unknown fields, enums, list sizes -------------------

_TYPE_NAMES = {dict: "object", list: "array", str: "string", bool: "boolean", int: "integer"}


def type_name(v: object) -> str:
    """A value's JSON type, as the API server names it (null, object, array...)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    return _TYPE_NAMES.get(type(v), type(v).__name__)


def _wrong_type(obj: str, path: str, v: object, want: str) -> NoReturn:
    fail(obj, path, f"Invalid value: {type_name(v)}: must be of type {want}")


def as_map(v: object, obj: str, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        _wrong_type(obj, path, v, "object")
    for k in v:
        if not isinstance(k, str):
            fail(obj, path, f"Invalid value: {_show(k)}: object keys must be strings")
    return v


def opt_map(d: Mapping[str, Any], name: str, obj: str, path: str) -> dict[str, Any] | None:
    v = d.get(name)
    return None if v is None else as_map(v, obj, child(path, name))


def as_list(v: object, obj: str, path: str, *, min_items: int = 0, max_items: int | None = None) -> list[Any]:
    if not isinstance(v, list):
        _wrong_type(obj, path, v, "array")
    if len(v) < min_items:
        fail(obj, path, f"Invalid value: {len(v)}: must have at least {min_items} items")
    if max_items is not None and len(v) > max_items:
        fail(obj, path, f"Too many: {len(v)}: must have at most {max_items} items")
    return v


def opt_list(
    d: Mapping[str, Any], name: str, obj: str, path: str, *, min_items: int = 0, max_items: int | None = None
) -> list[Any]:
    v = d.get(name)
    if v is None:
        return []
    return as_list(v, obj, child(path, name), min_items=min_items, max_items=max_items)


def as_str(v: object, obj: str, path: str) -> str:
    if not isinstance(v, str):
        _wrong_type(obj, path, v, "string")
    return v


def opt_str(d: Mapping[str, Any], name: str, obj: str, path: str, default: str = "") -> str:
    v = d.get(name)
    return default if v is None else as_str(v, obj, child(path, name))


def as_bool(v: object, obj: str, path: str) -> bool:
    if not isinstance(v, bool):
        _wrong_type(obj, path, v, "boolean")
    return v


INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def as_int32(v: object, obj: str, path: str, *, minimum: int | None = None) -> int:
    """An int32 field (count, priority...). YAML 2.0 (a float with no fraction)
    is accepted as JSON would deliver it."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        _wrong_type(obj, path, v, "integer")
    if not INT32_MIN <= v <= INT32_MAX:
        invalid(obj, path, v, "must fit in an int32")
    if minimum is not None and v < minimum:
        invalid(obj, path, v, f"must be greater than or equal to {minimum}")
    return v


def check_fields(
    d: Mapping[str, Any],
    allowed: Iterable[str],
    obj: str,
    path: str,
    renamed: Mapping[str, str] | None = None,
) -> None:
    """Strict decoding: an unknown field is an error (a typo like nominalQuoto).
    ``renamed`` maps field names of another API version to a hint (v1beta1's
    ``cohort`` in a v1beta2 ClusterQueue); other close names get "did you mean".
    Under collect_errors every unknown field is named, and the read goes on
    as if it were not there."""
    allowed_set = allowed if isinstance(allowed, (set, frozenset)) else frozenset(allowed)
    for k in d:
        if k not in allowed_set:
            message = f'unknown field "{k}"{_field_hint(k, allowed_set, renamed)}'
            report(ValidationError(obj, child(path, k), message))


def _field_hint(name: str, allowed: Iterable[str], renamed: Mapping[str, str] | None) -> str:
    if renamed and name in renamed:
        return f"; {renamed[name]}"
    close = difflib.get_close_matches(name, sorted(allowed), n=1, cutoff=0.8)
    return f'; did you mean "{close[0]}"?' if close else ""


def did_you_mean(name: str, names: Iterable[str]) -> str:
    """' (did you mean "x"?)' for the existing name closest to a reference to
    one that does not exist (a typo, most likely), or "" when none is close."""
    candidates = sorted(names)
    same_case = [c for c in candidates if c.lower() == name.lower()]
    swapped = [c for c in candidates if sorted(c) == sorted(name)]  # letters swapped: "lwo" for "low"
    close = same_case or swapped or difflib.get_close_matches(name, candidates, n=1, cutoff=0.75)
    return f' (did you mean "{close[0]}"?)' if close else ""


def version_rename(api: str, name: str, other_version: str, other_name: str) -> str:
    """The hint for a field that the object's API version spells differently."""
    return f'{api} calls it "{name}" ("{other_name}" is the {other_version} name)'


_Name = TypeVar("_Name", bound=str)


def enum(v: object, allowed: Iterable[_Name], obj: str, path: str) -> _Name:
    """``v`` when it is one of ``allowed`` (typed as they are: a Literal's names give that Literal)."""
    s = as_str(v, obj, path)
    allowed_t = tuple(allowed)
    if s not in allowed_t:
        unsupported(obj, path, s, allowed_t)
    return s  # narrowed by the membership test


def opt_enum(
    d: Mapping[str, Any], name: str, allowed: Iterable[str], obj: str, path: str, default: str
) -> str:
    v = d.get(name)
    return default if v is None else enum(v, allowed, obj, child(path, name))


def string_map(v: object, obj: str, path: str) -> dict[str, str]:
    d = as_map(v, obj, path)
    for k, val in d.items():
        try:  # each entry on its own (report)
            as_str(val, obj, key(path, k))
        except InputError as e:
            report(e)
    return d


# --- quantities -------------------------------------------------------------------


def quantity(v: object, resource: str, obj: str, path: str) -> int:
    """A resource.Quantity field in canonical units of ``resource``."""
    try:
        return parse_quantity(v, resource)
    except QuantityError as e:
        fail(obj, path, f"Invalid value: {_show(v)}: {e}")


def nanos(v: object, obj: str, path: str) -> int:
    """The exact value of a quantity field (for sign checks and comparisons)."""
    try:
        return quantity_nanos(v)
    except QuantityError as e:
        fail(obj, path, f"Invalid value: {_show(v)}: {e}")


def non_negative(v: object, obj: str, path: str) -> int:
    """pkg/webhooks validateResourceQuantity: ``value.Cmp(Quantity{}) < 0`` is
    "must be greater than or equal to 0" (apimachinery IsNegativeErrorMsg)."""
    n = nanos(v, obj, path)
    if n < 0:
        invalid(obj, path, v, "must be greater than or equal to 0")
    return n


# --- names, labels ----------------------------------------------------------------

# Go's anchors: these must match the whole text (fullmatch), where Python's $ would also
# accept a final newline.
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def dns1123_subdomain_errors(s: str) -> str | None:
    # apimachinery pkg/util/validation IsDNS1123Subdomain
    if len(s) > 253:
        return "must be no more than 253 characters"
    if not _DNS1123_SUBDOMAIN.fullmatch(s):
        return (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character"
        )
    return None


def dns1123_label_errors(s: str) -> str | None:
    # apimachinery pkg/util/validation IsDNS1123Label
    if len(s) > 63:
        return "must be no more than 63 characters"
    if not _DNS1123_LABEL.fullmatch(s):
        return (
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
            "and must start and end with an alphanumeric character"
        )
    return None


def qualified_name_errors(s: str) -> str | None:
    # apimachinery pkg/util/validation IsQualifiedName (label keys, resource names)
    prefix, sep, name = s.rpartition("/") if "/" in s else ("", "", s)
    if sep:
        if s.count("/") > 1:
            return (
                "a qualified name must consist of an optional DNS subdomain prefix and a name, "
                "separated by '/'"
            )
        if not prefix:
            return "prefix part must be non-empty"
        err = dns1123_subdomain_errors(prefix)
        if err:
            return f"prefix part {err}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return "name part must be no more than 63 characters"
    if not _QUALIFIED_NAME.fullmatch(name):
        return (
            "name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


def label_value_errors(s: str) -> str | None:
    # apimachinery pkg/util/validation IsValidLabelValue
    if len(s) > 63:
        return "must be no more than 63 characters"
    if not _LABEL_VALUE.fullmatch(s):
        return (
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return None


def object_name(v: object, obj: str, path: str, *, label: bool = False) -> str:
    """metadata.name (and name references): DNS-1123 subdomain, or label for
    namespaces and pod set names."""
    s = as_str(v, obj, path)
    if not s:
        required(obj, path, "name is required")
    err = dns1123_label_errors(s) if label else dns1123_subdomain_errors(s)
    if err:
        invalid(obj, path, s, err)
    return s


def label_key(v: object, obj: str, path: str) -> str:
    s = as_str(v, obj, path)
    err = qualified_name_errors(s)
    if err:
        invalid(obj, path, s, err)
    return s


def labels(v: object, obj: str, path: str, *, max_properties: int | None = None) -> dict[str, str]:
    """metav1validation.ValidateLabels: valid keys and values."""
    d = string_map(v, obj, path)
    if max_properties is not None and len(d) > max_properties:
        report(ValidationError(obj, path, f"Too many: {len(d)}: must have at most {max_properties} items"))
    for k, val in d.items():
        try:  # each label on its own (report)
            label_key(k, obj, path)
            err = label_value_errors(val) if isinstance(val, str) else None
            if err:
                invalid(obj, key(path, k), val, err)
        except InputError as e:
            report(e)
    return d


# --- label selectors (namespaceSelector) --------------------------------------------


def label_selector(v: object, obj: str, path: str) -> m.LabelSelector:
    """metav1validation.ValidateLabelSelector (default options)."""
    d = as_map(v, obj, path)
    check_fields(d, api_fields.LABEL_SELECTOR.names, obj, path)
    ml: dict[str, str] = {}
    try:  # matchLabels and each expression on their own (report)
        ml = labels(d.get("matchLabels") or {}, obj, child(path, "matchLabels"))
    except InputError as err:
        report(err)
    reqs = []
    ep = child(path, "matchExpressions")
    for i, raw in enumerate(opt_list(d, "matchExpressions", obj, path)):
        try:
            reqs.append(_selector_requirement(raw, obj, index(ep, i)))
        except InputError as err:
            report(err)
    return m.LabelSelector(tuple(sorted(ml.items())), tuple(reqs))


def _selector_requirement(raw: object, obj: str, p: str) -> m.LabelSelectorRequirement:
    e = as_map(raw, obj, p)
    check_fields(e, api_fields.SELECTOR_REQUIREMENT.names, obj, p)
    k = label_key(e.get("key", ""), obj, child(p, "key"))
    op = as_str(e.get("operator", ""), obj, child(p, "operator"))
    values = tuple(
        as_str(x, obj, index(child(p, "values"), j)) for j, x in enumerate(opt_list(e, "values", obj, p))
    )
    if op in ("In", "NotIn"):
        if not values:
            required(obj, child(p, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
    elif op in ("Exists", "DoesNotExist"):
        if values:
            invalid(
                obj,
                child(p, "values"),
                list(values),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
    else:
        invalid(obj, child(p, "operator"), op, "not a valid selector operator")
    for j, val in enumerate(values):
        err = label_value_errors(val)
        if err:
            invalid(obj, index(child(p, "values"), j), val, err)
    return m.LabelSelectorRequirement(k, op, values)


# --- taints and tolerations (ResourceFlavor) -------------------------------------------

_RF_SPEC = api_fields.KINDS["ResourceFlavor"][api_fields.V1BETA2].at("spec")


def taints(v: object, obj: str, path: str) -> list[m.Taint]:
    """resourceflavor_webhook.go validateNodeTaints + CRD: at most 8, effect enum."""
    out: list[m.Taint] = []
    seen: set[tuple[str, str]] = set()
    for i, raw in enumerate(as_list(v, obj, path, max_items=_RF_SPEC.fields["nodeTaints"].max_items)):
        try:  # each taint on its own (report)
            out.append(_taint(raw, obj, index(path, i), seen))
        except InputError as e:
            report(e)
    return out


def _taint(raw: object, obj: str, p: str, seen: set[tuple[str, str]]) -> m.Taint:
    t = as_map(raw, obj, p)
    check_fields(t, api_fields.TAINT.names, obj, p)
    if "key" not in t:
        required(obj, child(p, "key"))
    k = label_key(t["key"], obj, child(p, "key"))
    val = opt_str(t, "value", obj, p)
    err = label_value_errors(val)
    if err:
        invalid(obj, child(p, "value"), val, err)
    if "effect" not in t:
        required(obj, child(p, "effect"))
    eff = enum(t["effect"], api_fields.TAINT.fields["effect"].enum, obj, child(p, "effect"))
    if (k, eff) in seen:
        duplicate(obj, p, f"{k}={val}:{eff}", "taints must be unique by key and effect pair")
    seen.add((k, eff))
    return m.Taint(k, val, eff)


def tolerations(v: object, obj: str, path: str, *, strict: bool) -> list[m.Toleration]:
    """Tolerations. ``strict`` (ResourceFlavor): the webhook's validateTolerations
    plus the CRD's CEL rules (apis/kueue/v1beta2/resourceflavor_types.go):
    key a valid label name; operator Equal/Exists, Exists when key is empty and
    then no value; tolerationSeconds only with NoExecute; effect enum.
    Pod templates only get their types checked (Kueue does not validate them)."""
    out: list[m.Toleration] = []
    limit = _RF_SPEC.fields["tolerations"].max_items if strict else None
    for i, raw in enumerate(as_list(v, obj, path, max_items=limit)):
        try:  # each toleration on its own (report)
            out.append(_toleration(raw, obj, index(path, i), strict))
        except InputError as e:
            report(e)
    return out


def _toleration(raw: object, obj: str, p: str, strict: bool) -> m.Toleration:
    t = as_map(raw, obj, p)
    if strict:
        check_fields(t, api_fields.TOLERATION.names, obj, p)
    k = opt_str(t, "key", obj, p)
    op = opt_str(t, "operator", obj, p)
    val = opt_str(t, "value", obj, p)
    eff = opt_str(t, "effect", obj, p)
    if t.get("tolerationSeconds") is not None:
        if isinstance(t["tolerationSeconds"], bool) or not isinstance(t["tolerationSeconds"], int):
            _wrong_type(obj, child(p, "tolerationSeconds"), t["tolerationSeconds"], "integer")
    if strict:
        if k:
            label_key(k, obj, child(p, "key"))
        if op and op not in m.TOLERATION_OPERATORS:
            invalid(obj, child(p, "operator"), op, "supported toleration values: 'Equal'(default), 'Exists'")
        if not k and op != "Exists":
            invalid(
                obj,
                child(p, "operator"),
                op,
                "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
            )
        if op == "Exists" and "value" in t:
            invalid(obj, child(p, "value"), val, "a value must be empty when 'operator' is 'Exists'")
        if eff and eff not in m.TAINT_EFFECTS:
            unsupported(obj, child(p, "effect"), eff, m.TAINT_EFFECTS)
        if t.get("tolerationSeconds") is not None and eff != "NoExecute":
            invalid(
                obj, child(p, "effect"), eff, "effect must be 'NoExecute' when 'tolerationSeconds' is set"
            )
    return m.Toleration(k, op or "Equal", val, eff)


# --- fair sharing weight (ClusterQueue, Cohort, LocalQueue) ----------------------------------


def fair_sharing_weight(v: object, obj: str, path: str) -> float:
    """spec.fairSharing: {weight: Quantity}. webhooks common.go validateFairSharing:
    weight >= 0, and a non-zero weight must be > 1n ("When not 0, weight must be
    > 10e-9"). The weight is a decimal; we keep it as a float (Kueue's
    parseFairWeight uses AsApproximateFloat64)."""
    d = as_map(v, obj, path)
    check_fields(d, api_fields.FAIR_SHARING.names, obj, path)
    w = d.get("weight")
    if w is None:
        return 1.0
    wp = child(path, "weight")
    n = nanos(w, obj, wp)
    if n < 0:
        invalid(obj, wp, str(w), "must be greater than or equal to 0")
    if 0 < n <= 1:
        invalid(obj, wp, str(w), "When not 0, weight must be > 10e-9")
    return n / 1e9


# --- configuration ------------------------------------------------------------------------

# pkg/config/validation.go validStrategySets
VALID_STRATEGY_SETS = (
    ("LessThanOrEqualToFinalShare",),
    ("LessThanInitialShare",),
    ("LessThanOrEqualToFinalShare", "LessThanInitialShare"),
)


def preemption_strategies(v: object, obj: str, path: str) -> list[str]:
    """fairSharing.preemptionStrategies: one of the valid sets; empty means the
    default [LessThanOrEqualToFinalShare, LessThanInitialShare]."""
    items = [as_str(x, obj, index(path, i)) for i, x in enumerate(as_list(v, obj, path))]
    if not items:
        return list(VALID_STRATEGY_SETS[2])
    if tuple(items) not in VALID_STRATEGY_SETS:
        unsupported(obj, path, ",".join(items), (",".join(s) for s in VALID_STRATEGY_SETS))
    return items


_DURATION_UNITS = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_DURATION_PART = re.compile(r"([0-9]*\.?[0-9]+|[0-9]+\.)(ns|us|µs|μs|ms|s|m|h)")


def duration_seconds(v: object, obj: str, path: str) -> float:
    """A Go time.Duration string ("168h", "1h30m", "300ms") in seconds."""
    s = as_str(v, obj, path)
    body = s[1:] if s[:1] in "+-" else s
    if body == "0":
        return 0.0
    pos = 0
    total = 0.0
    while pos < len(body):
        mt = _DURATION_PART.match(body, pos)
        if not mt:
            invalid(obj, path, s, "not a valid duration (examples: 300ms, 5m, 1h30m)")
        total += float(mt.group(1)) * _DURATION_UNITS[mt.group(2)]
        pos = mt.end()
    if not body:
        invalid(obj, path, s, "not a valid duration (examples: 300ms, 5m, 1h30m)")
    return -total if s.startswith("-") else total
