"""Topology Aware Scheduling on a job's pod templates: the annotations that
ask for it and the topologyRequest Kueue's job integrations write for them
(jobframework tas.go, tas_validation.go). What Kueue puts on the pods when it
starts the job is framework.py's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..api import validation as v

# apis/kueue/v1beta2/topology_types.go
REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
PREFERRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE_ANNOTATION = "kueue.x-k8s.io/podset-slice-size"
SLICE_CONSTRAINTS_ANNOTATION = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
POD_SET_GROUP_ANNOTATION = "kueue.x-k8s.io/podset-group-name"
JOB_COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def topology_request(
    annotations: Mapping[str, str], ref: str, path: str, count: int, sub_group: tuple[str, int] | None = None
) -> dict[str, Any] | None:
    """The topologyRequest Kueue's job integrations write for a pod template's
    annotations (jobframework tas.go NewPodSetTopologyRequest, after
    tas_validation.go ValidateTASPodSetRequest and
    ValidateSliceSizeAnnotationUpperBound), with the pods' index label and,
    for JobSets, the sub-group (label, count); None when the template asks
    for no TAS. ``path`` is the template's metadata. Pod-set groups and
    multi-layer slices are refused (not modelled)."""
    ap = v.child(path, "annotations")
    _check_annotations(annotations, ref, ap)
    out: dict[str, Any] = {}
    if REQUIRED_TOPOLOGY_ANNOTATION in annotations:
        out["required"] = annotations[REQUIRED_TOPOLOGY_ANNOTATION]
    elif PREFERRED_TOPOLOGY_ANNOTATION in annotations:
        out["preferred"] = annotations[PREFERRED_TOPOLOGY_ANNOTATION]
    elif UNCONSTRAINED_TOPOLOGY_ANNOTATION in annotations:
        text = annotations[UNCONSTRAINED_TOPOLOGY_ANNOTATION]
        parsed = _go_bool(text)
        if parsed is None:
            v.invalid(ref, v.key(ap, UNCONSTRAINED_TOPOLOGY_ANNOTATION), text, "must be a boolean value")
        out["unconstrained"] = parsed
    out.update(_slice_request(annotations, ref, ap, count))
    if not out:
        return None
    out["podIndexLabel"] = JOB_COMPLETION_INDEX
    if sub_group is not None:
        out["subGroupIndexLabel"], out["subGroupCount"] = sub_group
    return out


def _check_annotations(annotations: Mapping[str, str], ref: str, ap: str) -> None:
    """At most one topology annotation, no pod-set group, label keys for levels."""
    asked = (REQUIRED_TOPOLOGY_ANNOTATION, PREFERRED_TOPOLOGY_ANNOTATION, UNCONSTRAINED_TOPOLOGY_ANNOTATION)
    if sum(a in annotations for a in asked) > 1:
        quoted = ", ".join(f'"{a}"' for a in asked)
        v.invalid(ref, ap, "", f"must not contain more than one topology annotation: [{quoted}]")
    if POD_SET_GROUP_ANNOTATION in annotations:
        v.not_supported_feature(
            ref, v.key(ap, POD_SET_GROUP_ANNOTATION), "Topology Aware Scheduling pod-set groups"
        )
    for a in (REQUIRED_TOPOLOGY_ANNOTATION, PREFERRED_TOPOLOGY_ANNOTATION, SLICE_TOPOLOGY_ANNOTATION):
        if a in annotations:
            v.label_key(annotations[a], ref, v.key(ap, a))


def _slice_request(annotations: Mapping[str, str], ref: str, ap: str, count: int) -> dict[str, Any]:
    """The topologyRequest's slice fields, from the slice annotations."""
    has_slice = SLICE_TOPOLOGY_ANNOTATION in annotations
    has_size = SLICE_SIZE_ANNOTATION in annotations
    size = _slice_size(annotations, ref, ap, count) if has_size else 0
    if has_slice and not has_size:
        v.required(
            ref,
            v.key(ap, SLICE_SIZE_ANNOTATION),
            f"must be set when '{SLICE_TOPOLOGY_ANNOTATION}' is specified",
        )
    if has_size and not has_slice:
        v.fail(
            ref,
            v.key(ap, SLICE_SIZE_ANNOTATION),
            f"Forbidden: may not be set when '{SLICE_TOPOLOGY_ANNOTATION}' is not specified",
        )
    if SLICE_CONSTRAINTS_ANNOTATION in annotations:
        cp = v.key(ap, SLICE_CONSTRAINTS_ANNOTATION)
        text = annotations[SLICE_CONSTRAINTS_ANNOTATION]
        try:
            layers = json.loads(text)
        except ValueError:
            layers = None
        if not isinstance(layers, list) or not 1 <= len(layers) <= 3:
            v.invalid(ref, cp, text, "topology constraints must contain between 1 and 3 entries")
        if len(layers) > 1:
            v.not_supported_feature(ref, cp, "Topology Aware Scheduling multi-layer slice constraints")
        if has_slice or has_size:
            v.fail(ref, cp, f"Forbidden: may not be set together with '{SLICE_TOPOLOGY_ANNOTATION}'")
        return {"podsetSliceRequiredTopologyConstraints": layers}
    if has_slice:
        return {
            "podSetSliceRequiredTopology": annotations[SLICE_TOPOLOGY_ANNOTATION],
            "podSetSliceSize": size,
        }
    return {}


def _slice_size(annotations: Mapping[str, str], ref: str, ap: str, count: int) -> int:
    """The slice size annotation's value (ValidateSliceSizeAnnotationUpperBound)."""
    text = annotations[SLICE_SIZE_ANNOTATION]
    sp = v.key(ap, SLICE_SIZE_ANNOTATION)
    try:
        size = int(text, 10)
    except ValueError:
        v.invalid(ref, sp, text, "must be a numeric value")
    if not -(1 << 31) <= size < (1 << 31):
        v.invalid(ref, sp, text, "must be a numeric value")
    if size < 1:
        v.invalid(ref, sp, text, "must be greater than or equal to 1")
    if size > count:
        v.invalid(ref, sp, text, f"must not be greater than pod set count {count}")
    return size


def _go_bool(text: str) -> bool | None:
    """strconv.ParseBool."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None
