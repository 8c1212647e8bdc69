"""Kueue's Configuration (config.kueue.x-k8s.io) -> ``model.Configuration``:
fair sharing, admission fair sharing, feature gates, resource
transformations, which jobs Kueue manages and waitForPodsReady, defaulted as
apis/config/*/defaults.go and validated as pkg/config/validation.go.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from ..api import error_collection as collect, model as m, validation as v
from ..api.errors import InputError, ParseError
from ..api.features import KNOWN_GATES
from .common import (
    CONFIG_VERSIONS,
    _check_type,
)
from .documents import _parse_text

# The key of Kueue's ConfigMap that its manager mounts as its configuration
# file (config/components/manager: kueue-system/kueue-manager-config; the Helm
# chart: <release>-kueue-manager-config in the release's namespace).
CONFIG_MAP_KEY = "controller_manager_config.yaml"


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
    # each section on its own (error_collection.report: every error at once)
    for section in (_fair_sharing, _admission_fair_sharing, _feature_gates, _resources, _managed_jobs, _wait):
        with collect.reported():
            section(obj, ref, api, cfg)
    return cfg


def _fair_sharing(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
    fs = v.opt_map(obj, "fairSharing", ref, "")
    if fs is None:
        return
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


def _admission_fair_sharing(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
    afs = v.opt_map(obj, "admissionFairSharing", ref, "")
    if afs is None:
        return
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


def _feature_gates(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
    fg = v.opt_map(obj, "featureGates", ref, "")
    for gate, on in (fg or {}).items():
        gp = v.key("featureGates", gate)
        try:  # each gate on its own
            if gate not in KNOWN_GATES:
                # Kueue refuses to start with an unrecognized feature gate.
                v.invalid(ref, gp, gate, "unrecognized feature gate")
            cfg.feature_gates[gate] = v.as_bool(on, ref, gp)
        except InputError as e:
            collect.report(e)


def _resources(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
    res = v.opt_map(obj, "resources", ref, "")
    if res is None:
        return
    v.check_fields(
        res, ("excludeResourcePrefixes", "transformations", "deviceClassMappings"), ref, "resources"
    )
    if res.get("deviceClassMappings"):
        v.not_supported_feature(ref, "resources.deviceClassMappings", "Dynamic Resource Allocation quota")
    cfg.resources = _resource_rules(res, ref)


def _wait(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
    wfpr = v.opt_map(obj, "waitForPodsReady", ref, "")
    if wfpr is not None:
        wait = _wait_for_pods_ready(wfpr, ref, v1beta1=api == CONFIG_VERSIONS[0])
        if not cfg.feature_gates.get("DisableWaitForPodsReady", False):
            cfg.wait_for_pods_ready = wait


_WAIT_FIELDS = ("enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout")
_REQUEUING_FIELDS = ("timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds")


def _wait_for_pods_ready(d: Mapping[str, Any], ref: str, *, v1beta1: bool) -> m.WaitForPodsReadyConfig | None:
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


def _managed_jobs(obj: Mapping[str, Any], ref: str, api: str, cfg: m.Configuration) -> None:
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


# --- Kueue's ConfigMap ------------------------------------------------------------------------


def _config_map_ref(cm: Mapping[str, Any]) -> str:
    md = cm.get("metadata")
    md = md if isinstance(md, dict) else {}
    name, ns = md.get("name"), md.get("namespace") or "default"
    return m.object_ref("ConfigMap", str(name), str(ns)) if isinstance(name, str) and name else "ConfigMap"


def config_map_document(cm: Mapping[str, Any]) -> dict[str, Any] | None:
    """The configuration a ConfigMap holds for Kueue's manager, as it reads its
    file (data[controller_manager_config.yaml], one YAML or JSON object, read
    as the loader reads a file); None without that key or with an empty text.
    Not YAML, or several objects: a ParseError naming the ConfigMap and key.
    (kueue-fast schedule --kubeconfig reads the cluster's with it too.)"""
    data = cm.get("data")
    if not isinstance(data, dict) or data.get(CONFIG_MAP_KEY) in (None, ""):
        return None
    ref, field = _config_map_ref(cm), f"data[{CONFIG_MAP_KEY}]"
    text = data[CONFIG_MAP_KEY]
    if not isinstance(text, str):
        raise ParseError(ref, field, "Invalid value: must be of type string")
    try:
        docs = _parse_text(text, ref)
    except ParseError as e:
        raise ParseError(ref, field, e.message) from None
    if len(docs) != 1:
        raise ParseError(ref, field, f"expected one Configuration, found {len(docs)} objects")
    return docs[0].obj


def is_kueue_configuration(obj: Mapping[str, Any]) -> bool:
    """A config.kueue.x-k8s.io Configuration (and not another operator's
    controller_manager_config.yaml)."""
    return obj.get("kind") == "Configuration" and obj.get("apiVersion") in CONFIG_VERSIONS


def parse_config_map(cm: Mapping[str, Any]) -> m.Configuration:
    """Kueue's Configuration from its ConfigMap (config_map_document), each
    error named as the ConfigMap's field
    (``data[controller_manager_config.yaml].fairSharing...``)."""
    ref, field = _config_map_ref(cm), f"data[{CONFIG_MAP_KEY}]"
    obj = config_map_document(cm)
    if obj is None:
        raise ParseError(ref, field, "Required value: Kueue's Configuration")
    cfg = collect.read_as(
        partial(parse_configuration, obj),
        lambda e: type(e)(ref, f"{field}.{e.field}" if e.field else field, e.message),
    )
    return cfg if cfg is not None else m.Configuration()  # None under collect_errors only
