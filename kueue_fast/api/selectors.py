"""Label selectors, node selector terms, taints and tolerations, as Kueue's
objects carry them (part of :mod:`kueue_fast.api.model`'s API)."""

from __future__ import annotations

from dataclasses import dataclass

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
TOLERATION_OPERATORS = ("Equal", "Exists")
SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")


# --- selectors, taints, tolerations -------------------------------------------


@dataclass(frozen=True)
class LabelSelectorRequirement:
    """One ``matchExpressions`` entry of a label selector."""

    key: str
    operator: str  # one of SELECTOR_OPERATORS
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelSelector:
    """A metav1.LabelSelector. ``{}`` (no terms) matches everything."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        """Whether an object with these labels is selected."""
        for k, v in self.match_labels:
            if labels.get(k) != v:
                return False
        for req in self.match_expressions:
            present = req.key in labels
            if req.operator == "In":
                if not present or labels[req.key] not in req.values:
                    return False
            elif req.operator == "NotIn":
                if present and labels[req.key] in req.values:
                    return False
            elif req.operator == "Exists":
                if not present:
                    return False
            elif req.operator == "DoesNotExist":
                if present:
                    return False
        return True


@dataclass(frozen=True)
class NodeSelectorRequirement:
    """One requirement of a node selector term (node affinity)."""

    key: str
    operator: str  # one of NODE_SELECTOR_OPERATORS
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class NodeSelectorTerm:
    """Requirements ANDed together; the terms of an affinity are ORed.

    ``match_fields`` (rare, about node fields) are kept so that a term that has
    only field requirements is not mistaken for an empty term."""

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


@dataclass(frozen=True)
class Taint:
    """A node taint (a ResourceFlavor's ``nodeTaints``)."""

    key: str
    value: str
    effect: str  # one of TAINT_EFFECTS


@dataclass(frozen=True)
class Toleration:
    """A pod's toleration (or a ResourceFlavor's ``tolerations``)."""

    key: str = ""
    operator: str = "Equal"  # one of TOLERATION_OPERATORS
    value: str = ""
    effect: str = ""  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        """Kubernetes' Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value  # Equal (also the empty operator)
