"""Which flavors a pod set may use: taints and node affinity against flavor labels.

Same rules as kueue pkg/scheduler/flavorassigner/flavorassigner.go
checkFlavorForPodSets and flavorSelector: a flavor is rejected when one of its
NoSchedule/NoExecute taints is not tolerated by the pod template's tolerations
plus the flavor's own tolerations, or when the pod's nodeSelector / required
node affinity, restricted to the label keys this flavor defines, does not
match the flavor's nodeLabels. The result only depends on the pod template and
the flavor, so the front end computes it once per distinct template shape and
both engines read it from a table.
"""

from __future__ import annotations

from .model import NodeSelectorRequirement, NodeSelectorTerm, PodSet, ResourceFlavor, Taint, Toleration

_BLOCKING_EFFECTS = ("NoSchedule", "NoExecute")


def _taint_string(t: Taint) -> str:
    # Kueue formats the corev1.Taint value with %s, which prints the struct
    # fields (key, value, effect, timeAdded).
    return f"{{{t.key} {t.value} {t.effect} <nil>}}"


def untolerated_taint(flavor: ResourceFlavor, tolerations: list[Toleration]) -> Taint | None:
    """First NoSchedule/NoExecute taint of the flavor that no toleration tolerates."""
    all_tolerations = list(tolerations) + list(flavor.tolerations)
    for taint in flavor.node_taints:
        if taint.effect not in _BLOCKING_EFFECTS:
            continue
        if not any(tol.tolerates(taint) for tol in all_tolerations):
            return taint
    return None


def _requirement_matches(req: NodeSelectorRequirement, labels: dict[str, str]) -> bool:
    present = req.key in labels
    value = labels.get(req.key, "")
    op = req.operator
    if op == "In":
        return present and value in req.values
    if op == "NotIn":
        return not present or value not in req.values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):
        # k8s nodeaffinity: both sides must parse as integers, else no match.
        if not present or len(req.values) != 1:
            return False
        try:
            node_value = int(value)
            bound = int(req.values[0])
        except ValueError:
            return False
        return node_value > bound if op == "Gt" else node_value < bound
    return False


def _flavor_terms(
    terms: tuple[NodeSelectorTerm, ...] | None, keys: set[str]
) -> list[list[NodeSelectorRequirement]] | None:
    """Required affinity terms restricted to the flavor's label keys.

    None means "no affinity constraint": either the pod has none, or one term
    lost all its expressions (terms are ORed, so an empty term matches all)."""
    if not terms:
        return None
    kept: list[list[NodeSelectorRequirement]] = []
    for term in terms:
        exprs = [e for e in term.match_expressions if e.key in keys]
        if not exprs:
            return None
        kept.append(exprs)
    return kept


def affinity_matches(flavor: ResourceFlavor, pod_set: PodSet) -> bool:
    labels = flavor.node_labels
    keys = set(labels)
    for k, v in pod_set.node_selector.items():
        if k in keys and labels[k] != v:
            return False
    terms = _flavor_terms(pod_set.required_affinity, keys)
    if terms is None:
        return True
    return any(all(_requirement_matches(r, labels) for r in term) for term in terms)


def flavor_rejection(flavor: ResourceFlavor, pod_set: PodSet) -> str | None:
    """Kueue's reason for rejecting the flavor for this pod set, or None."""
    taint = untolerated_taint(flavor, pod_set.tolerations)
    if taint is not None:
        return f"untolerated taint {_taint_string(taint)} in flavor {flavor.name}"
    if not affinity_matches(flavor, pod_set):
        return f"flavor {flavor.name} doesn't match node affinity"
    return None


def pod_set_shape(pod_set: PodSet) -> tuple[object, ...]:
    """What flavor eligibility depends on; equal shapes share one table row."""
    return (
        tuple(sorted(pod_set.node_selector.items())),
        pod_set.required_affinity,
        tuple(pod_set.tolerations),
    )


def node_matches_affinity(
    terms: tuple[NodeSelectorTerm, ...] | None, labels: dict[str, str], name: str
) -> bool:
    """k8s component-helpers nodeaffinity NodeSelector.Match on a whole Node
    (TAS places pods on nodes): the terms are ORed, a term's requirements
    ANDed; an empty term matches nothing; matchFields know metadata.name."""
    if terms is None:
        return True
    fields = {"metadata.name": name}
    for term in terms:
        if not term.match_expressions and not term.match_fields:
            continue
        if all(_requirement_matches(r, labels) for r in term.match_expressions) and all(
            _requirement_matches(r, fields) for r in term.match_fields
        ):
            return True
    return False
