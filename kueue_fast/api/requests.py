"""Per-pod requests of a pod template, as Kueue computes them.

1. Kueue's workload controller adjusts the template (pkg/workload/resources.go
   AdjustResources -> UseLimitsAsMissingRequestsInPod): a limit stands in for a
   missing request, per container and init container (and at pod level).
   RuntimeClass overhead and LimitRange defaults need cluster objects that an
   offline input does not have; ``spec.overhead`` given in the template is used.
2. k8s.io/component-helpers resource/helpers.go PodRequests:
   * reqs = sum over containers; restartable init containers (sidecars,
     ``restartPolicy: Always``) are added to that sum too;
   * an ordinary init container i needs its own request plus the sidecars
     started before it; a sidecar contributes the cumulative sidecar sum;
     reqs = max(reqs, max over those);
   * pod-level ``resources.requests`` (cpu, memory, hugepages-*) replace the
     aggregate for the resources they name;
   * ``overhead`` is added.
3. Quantities are added exactly (as resource.Quantity does) and converted to
   Kueue's int64 units once, at the end (pkg/resources ResourceValue).

Workload webhook errors raised here (pkg/webhooks/workload_webhook.go
validateContainer, WorkloadValidateResourcesAreNonNegative): ``pods`` in a
container's requests or limits, and negative requests or limits. The API
server's rules for the resources that cannot be overcommitted (k8s
pkg/apis/core/validation validateResourceRequirements,
ValidateResourceQuantityValue) apply to Jobs, JobSets and Workloads alike: an
extended resource (``nvidia.com/gpu``) is a whole number, and a request of it,
or of ``hugepages-*``, equals its limit when both are set.
A container requesting more than its limit is not an error: Kueue keeps the
workload pending with "resources validation failed: ..." (pkg/workload
ValidateResources, the scheduler's nominate); pod_requests returns where,
and resources_validation_message composes Kueue's message for a workload.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from . import error_collection as collect, validation as v
from .errors import InputError
from .model import ResourceRules
from .quantity import value_from_nanos

__all__ = ["pod_requests", "quota_requests", "resources_validation_message", "POD_LEVEL_RESOURCES"]

# Where, in a pod template spec, requests exceed limits: (the field path
# relative to the template spec, e.g. "containers[1]", the resources, sorted).
OverLimits = list[tuple[str, tuple[str, ...]]]

POD_LEVEL_RESOURCES = ("cpu", "memory")  # plus hugepages-* (IsSupportedPodLevelResource)


def _is_pod_level(name: str) -> bool:
    return name in POD_LEVEL_RESOURCES or name.startswith("hugepages-")


def _is_native(name: str) -> bool:
    # k8s pkg/apis/core/helper IsNativeResource: no domain, or kubernetes.io's
    return "/" not in name or "kubernetes.io/" in name


@functools.cache
def is_extended_resource(name: str) -> bool:
    """k8s helper IsExtendedResourceName: a resource of another domain
    (``nvidia.com/gpu``): counted in whole units, never overcommitted."""
    if _is_native(name) or name.startswith("requests."):
        return False
    return v.qualified_name_errors("requests." + name) is None


def _overcommit_allowed(name: str) -> bool:
    # k8s helper IsOvercommitAllowed: native, and not hugepages
    return _is_native(name) and not name.startswith("hugepages-")


def _resource_list(raw: object, obj: str, path: str, *, container: bool) -> dict[str, int]:
    """A corev1.ResourceList as exact nanos; rejects ``pods`` and negatives in
    containers (workload webhook), and fractions of extended resources (the
    API server's ValidateResourceQuantityValue: its MilliValue, rounded up,
    must be whole)."""
    d = v.as_map(raw, obj, path)
    out: dict[str, int] = {}
    for name, q in d.items():
        p = v.key(path, name)
        try:  # each resource on its own (error_collection.report)
            if container and name == "pods":
                v.invalid(obj, p, "pods", "the key is reserved for internal kueue use")
            n = v.nanos(q, obj, p)
            if n < 0:
                v.invalid(obj, p, str(q), "must be greater than or equal to 0")
            if "/" in name and n % 1_000_000_000 and -(-n // 1_000_000) % 1000 and is_extended_resource(name):
                v.invalid(obj, p, str(q), "must be an integer")
        except InputError as e:
            collect.report(e)
            continue
        out[name] = n
    return out


def _check_not_overcommitted(differ: list[str], res: dict[str, Any], obj: str, rp: str) -> None:
    """validateResourceRequirements: a request of a resource that cannot be
    overcommitted must equal its limit (``differ``: the resources whose
    request and limit differ; named at ``resources.requests``, as the API
    server names it; the quantities as written in ``res``)."""
    for name in differ:
        if not _overcommit_allowed(name):
            detail = f"must be equal to {name} limit of {res['limits'][name]}"
            v.invalid(obj, v.child(rp, "requests"), str(res["requests"][name]), detail)


def _container(c: dict[str, Any], obj: str, path: str) -> tuple[dict[str, int], list[str]]:
    """Effective requests of one container (limits filling missing requests)
    and the resources whose request exceeds the limit."""
    res = c.get("resources")
    if res is None:
        return {}, []
    rp = v.child(path, "resources")
    res = v.as_map(res, obj, rp)
    raw_req = res.get("requests")
    raw_lim = res.get("limits")
    try:  # requests and limits on their own (error_collection.report)
        req = (
            _resource_list(raw_req, obj, v.child(rp, "requests"), container=True)
            if raw_req is not None
            else {}
        )
    except InputError as e:
        collect.report(e)
        req = {}
    if raw_lim is None:
        return req, []
    lim = _resource_list(raw_lim, obj, v.child(rp, "limits"), container=True)
    if not req:
        return lim, []
    over: list[str] = []
    differ = [k for k, n in req.items() if k in lim and n != lim[k]]
    if differ:
        _check_not_overcommitted(differ, res, obj, rp)
        over = sorted(k for k in differ if req[k] > lim[k])
    merged = dict(lim)
    merged.update(req)
    return merged, over


def _add(acc: dict[str, int], other: dict[str, int]) -> None:
    for k, n in other.items():
        acc[k] = acc.get(k, 0) + n


def _max_into(acc: dict[str, int], other: dict[str, int]) -> None:
    for k, n in other.items():
        if k not in acc or n > acc[k]:
            acc[k] = n


def pod_requests(template_spec: dict[str, Any], path: str, obj_ref: str) -> tuple[dict[str, int], OverLimits]:
    """Per-pod requests of a pod template spec in canonical int64 units, and
    where requests exceed limits, in Kueue's ValidateResources order (init
    containers, containers, pod-level resources).

    ``path`` is the field path of ``template_spec`` (for error messages),
    ``obj_ref`` the object it belongs to."""
    spec = v.as_map(template_spec, obj_ref, path)
    over_limits: OverLimits = []

    if "containers" not in spec:
        v.required(obj_ref, v.child(path, "containers"))
    cp = v.child(path, "containers")
    total: dict[str, int] = {}
    for i, raw in enumerate(v.as_list(spec["containers"], obj_ref, cp)):
        p = v.index(cp, i)
        try:  # each container on its own (error_collection.report)
            req, over = _container(v.as_map(raw, obj_ref, p), obj_ref, p)
        except InputError as e:
            collect.report(e)
            continue
        if over:
            over_limits.append((f"containers[{i}]", tuple(over)))
        _add(total, req)

    inits = spec.get("initContainers")
    if inits:
        ip = v.child(path, "initContainers")
        init_over: OverLimits = []
        sidecars: dict[str, int] = {}
        init_max: dict[str, int] = {}
        for i, raw in enumerate(v.as_list(inits, obj_ref, ip)):
            p = v.index(ip, i)
            try:
                c = v.as_map(raw, obj_ref, p)
                req, over = _container(c, obj_ref, p)
                policy = c.get("restartPolicy")
                if policy is not None:
                    v.as_str(policy, obj_ref, v.child(p, "restartPolicy"))
            except InputError as e:
                collect.report(e)
                continue
            if over:
                init_over.append((f"initContainers[{i}]", tuple(over)))
            if policy == "Always":  # sidecar: runs for the whole life of the pod
                _add(total, req)
                _add(sidecars, req)
                _max_into(init_max, sidecars)
            else:
                need = dict(sidecars)
                _add(need, req)
                _max_into(init_max, need)
        _max_into(total, init_max)
        over_limits = init_over + over_limits  # Kueue lists init containers first

    pod_res = spec.get("resources")
    if pod_res is not None:
        rp = v.child(path, "resources")
        pod_res = v.as_map(pod_res, obj_ref, rp)
        preq = _resource_list(
            pod_res.get("requests") or {}, obj_ref, v.child(rp, "requests"), container=False
        )
        plim = _resource_list(pod_res.get("limits") or {}, obj_ref, v.child(rp, "limits"), container=False)
        pod_over = sorted(k for k, n in preq.items() if k in plim and n > plim[k])
        if pod_over:
            over_limits.append(("resources", tuple(pod_over)))
        merged = dict(plim)
        merged.update(preq)
        for name, n in merged.items():
            if _is_pod_level(name):
                total[name] = n

    overhead = spec.get("overhead")
    if overhead is not None:
        _add(total, _resource_list(overhead, obj_ref, v.child(path, "overhead"), container=False))

    out = {name: max(0, value_from_nanos(n, name)) for name, n in total.items()}
    return out, over_limits


def resources_validation_message(over_per_pod_set: Sequence[OverLimits]) -> str | None:
    """Kueue's pending message for a workload whose requests exceed limits
    (pkg/workload ValidateResources: one field.Invalid per container, its value
    the resource names as JSON; aggregated as k8s.io/apimachinery does: one
    error as it is, several between brackets), None when there is none."""
    errors = [
        f"spec.podSets[{i}].template.spec.{where}: Invalid value: "
        f"{json.dumps(list(names), separators=(',', ':'))}: requests must not exceed its limits"
        for i, over in enumerate(over_per_pod_set)
        for where, names in over
    ]
    if not errors:
        return None
    body = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return "resources validation failed: " + body


def _exact(value: int, resource: str) -> Fraction:
    """A canonical int64 amount back as an exact quantity (cpu is in milli)."""
    return Fraction(value, 1000) if resource == "cpu" else Fraction(value)


def _canonical(q: Fraction, resource: str) -> int:
    """resources.ResourceValue of an exact quantity: MilliValue for cpu, else
    Value, both rounding up."""
    scaled = q * 1000 if resource == "cpu" else q
    return -((-scaled.numerator) // scaled.denominator)


def quota_requests(per_pod: dict[str, int], rules: ResourceRules) -> dict[str, int]:
    """The per-pod requests Kueue charges to quota: resources matching an
    excluded prefix dropped (workload.go dropExcludedResources), then the
    transformations applied (applyResourceTransformations): each input's
    outputs (times its multiplyBy resource, when requested) summed per output
    name, sums below zero floored to zero, added to the retained requests
    (Retain keeps the input, Replace drops it). Works on the canonical amounts;
    Kueue works on the exact quantities, which differ only below a milli cpu
    or a unit of anything else."""
    if not rules:
        return per_pod
    reqs = per_pod
    if rules.exclude_prefixes:
        reqs = {r: n for r, n in per_pod.items() if not r.startswith(rules.exclude_prefixes)}
    transforms = rules.transformations
    if not any(r in transforms for r in reqs):
        return reqs
    retained: dict[str, int] = {}
    generated: dict[str, Fraction] = {}
    for name, amount in reqs.items():
        t = transforms.get(name)
        if t is None:
            retained[name] = amount
            continue
        base = _exact(amount, name)
        if t.multiply_by and t.multiply_by in reqs:
            base *= _exact(reqs[t.multiply_by], t.multiply_by)
        for out, factor_nanos in t.outputs:
            generated[out] = generated.get(out, Fraction(0)) + base * Fraction(factor_nanos, 10**9)
        if not t.replace:
            retained[name] = amount
    for out, q in generated.items():
        retained[out] = retained.get(out, 0) + _canonical(max(q, Fraction(0)), out)
    return retained
