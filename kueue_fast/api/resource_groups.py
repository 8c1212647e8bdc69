"""Kueue's validation of spec.resourceGroups (ClusterQueue and Cohort): the
CRD schema (apis/kueue/v1beta2/clusterqueue_types.go markers and CEL rules)
and the webhooks (clusterqueue_webhook.go, cohort_webhook.go), applied while
the loader decodes them. The shared rules and error wording are api/validation.py's."""

from __future__ import annotations

from dataclasses import dataclass

from . import fields as api_fields, model as m
from .error_collection import report, reported
from .errors import InputError, ValidationError
from .quantity import amount_from_nanos
from .validation import (
    as_list,
    as_map,
    as_str,
    check_fields,
    child,
    duplicate,
    index,
    invalid,
    non_negative,
    object_name,
    qualified_name_errors,
    required,
)

_RG = api_fields.RESOURCE_GROUP
_COVERED = _RG.fields["coveredResources"]
_FLAVORS = _RG.fields["flavors"]
_RESOURCES = api_fields.FLAVOR_QUOTAS.fields["resources"]


def resource_groups(
    v: object, obj: str, path: str, *, has_parent: bool, is_cohort: bool
) -> list[m.ResourceGroup]:
    """Decode and validate spec.resourceGroups.

    CRD (clusterqueue_types.go): at most 16 groups; 1-64 coveredResources and
    flavors per group, 1-64 resources per flavor; CEL "flavors must have the same
    number of resources as the coveredResources"; CEL "borrowingLimit must be nil
    when cohort is empty". Webhook (clusterqueue_webhook.go validateResourceGroups,
    validateFlavorQuotas, validateTotalFlavors, validateTotalCoveredResources,
    validateFlavorResourceCombinations): resource names are qualified names; a
    resource and a flavor appear in one group only; resources[i].name matches
    coveredResources[i]; quotas non-negative; limits need a cohort (a parent for
    a Cohort); lendingLimit <= nominalQuota for a ClusterQueue only; <= 256
    flavors and covered resources in total; <= 512 flavor-resource pairs per group.
    """
    limits = _Limits(obj, has_parent, is_cohort)
    groups = as_list(v, obj, path, max_items=api_fields.RESOURCE_GROUPS.max_items)
    seen_resources: set[str] = set()
    seen_flavors: set[str] = set()
    out = []
    for gi, graw in enumerate(groups):  # each group, flavor and quota on its own (error_collection.report)
        with reported():
            out.append(_resource_group(graw, index(path, gi), limits, seen_resources, seen_flavors))
    total_flavors = sum(len(g.flavors) for g in out)
    total_resources = sum(len(g.covered_resources) for g in out)
    if total_flavors > 256:
        invalid(
            obj,
            path,
            total_flavors,
            f"total number of flavors across all resourceGroups must be ≤ 256, got {total_flavors}",
        )
    if total_resources > 256:
        invalid(
            obj,
            path,
            total_resources,
            "total number of covered resources across all resourceGroups must be ≤ 256, "
            f"got {total_resources}",
        )
    return out


@dataclass(frozen=True)
class _Limits:
    """What decides whether a quota's limits are allowed: the object (for
    messages), whether it has a parent (cohort), and whether it is a Cohort."""

    obj: str
    has_parent: bool
    is_cohort: bool

    @property
    def parent_word(self) -> str:
        return "parent" if self.is_cohort else "cohort"


def _resource_group(
    graw: object, gp: str, limits: _Limits, seen_resources: set[str], seen_flavors: set[str]
) -> m.ResourceGroup:
    """One resource group; a resource or flavor in an earlier group is a duplicate."""
    obj = limits.obj
    g = as_map(graw, obj, gp)
    check_fields(g, _RG.names, obj, gp)
    missing = [name for name in ("coveredResources", "flavors") if name not in g]
    for name in missing[:-1]:
        report(ValidationError(obj, child(gp, name), "Required value"))
    if missing:
        required(obj, child(gp, missing[-1]))
    crp = child(gp, "coveredResources")
    covered = [
        as_str(x, obj, index(crp, j))
        for j, x in enumerate(
            as_list(
                g["coveredResources"],
                obj,
                crp,
                min_items=_COVERED.min_items or 0,
                max_items=_COVERED.max_items,
            )
        )
    ]
    flp = child(gp, "flavors")
    flavors_raw = as_list(
        g["flavors"], obj, flp, min_items=_FLAVORS.min_items or 0, max_items=_FLAVORS.max_items
    )
    for j, name in enumerate(covered):
        p = index(crp, j)
        with reported():
            err = qualified_name_errors(name)
            if err:
                invalid(obj, p, name, err)
            if name in seen_resources:
                duplicate(obj, p, name)
        seen_resources.add(name)
    flavors: list[m.FlavorQuotas] = []
    for fi, fraw in enumerate(flavors_raw):
        fp = index(flp, fi)
        try:
            flavor = _flavor_quotas(fraw, fp, covered, limits)
            if flavor.name in seen_flavors:
                duplicate(obj, child(fp, "name"), flavor.name)
        except InputError as e:
            report(e)
            continue
        seen_flavors.add(flavor.name)
        flavors.append(flavor)
    combos = sum(len(f.resources) for f in flavors)
    if combos > 512:
        invalid(
            obj,
            gp,
            combos,
            f"number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {combos}",
        )
    return m.ResourceGroup(covered, flavors)


def _flavor_quotas(fraw: object, fp: str, covered: list[str], limits: _Limits) -> m.FlavorQuotas:
    """One flavor of a group: one quota per covered resource, in their order."""
    obj = limits.obj
    f = as_map(fraw, obj, fp)
    check_fields(f, api_fields.FLAVOR_QUOTAS.names, obj, fp)
    if "name" not in f:
        required(obj, child(fp, "name"))
    fname = object_name(f["name"], obj, child(fp, "name"))
    if "resources" not in f:
        required(obj, child(fp, "resources"))
    rp = child(fp, "resources")
    rs = as_list(f["resources"], obj, rp, min_items=_RESOURCES.min_items or 0, max_items=_RESOURCES.max_items)
    if len(rs) != len(covered):
        invalid(obj, rp, len(rs), "flavors must have the same number of resources as the coveredResources")
    quotas: list[m.ResourceQuota] = []
    seen_in_flavor: set[str] = set()
    for ri, rraw in enumerate(rs):
        with reported():
            quotas.append(_resource_quota(rraw, index(rp, ri), covered[ri], seen_in_flavor, limits))
    return m.FlavorQuotas(fname, quotas)


def _resource_quota(
    rraw: object, qp: str, covered_name: str, seen_in_flavor: set[str], limits: _Limits
) -> m.ResourceQuota:
    """One resource's quota: nominal, borrowing and lending limits."""
    obj = limits.obj
    r = as_map(rraw, obj, qp)
    check_fields(r, api_fields.RESOURCE_QUOTA.names, obj, qp)
    rname = covered_name  # the name and each quantity on their own (error_collection.report)
    with reported():
        if "name" not in r:
            required(obj, child(qp, "name"))
        rname = as_str(r["name"], obj, child(qp, "name"))
        if rname in seen_in_flavor:  # listType=map, listMapKey=name
            duplicate(obj, child(qp, "name"), rname)
        seen_in_flavor.add(rname)
        if rname != covered_name:
            invalid(obj, child(qp, "name"), rname, "must match the name in coveredResources")
    nom_n = None
    with reported():
        if "nominalQuota" not in r:
            required(obj, child(qp, "nominalQuota"))
        nom_n = non_negative(r["nominalQuota"], obj, child(qp, "nominalQuota"))
    borrowing = lending = None
    if r.get("borrowingLimit") is not None:
        bp = child(qp, "borrowingLimit")
        with reported():
            if not limits.has_parent:
                invalid(obj, bp, str(r["borrowingLimit"]), f"must be nil when {limits.parent_word} is empty")
        with reported():
            borrowing = amount_from_nanos(non_negative(r["borrowingLimit"], obj, bp), rname)
    if r.get("lendingLimit") is not None:
        lp = child(qp, "lendingLimit")
        with reported():
            lend_n = non_negative(r["lendingLimit"], obj, lp)
            try:
                if not limits.has_parent:
                    invalid(
                        obj, lp, str(r["lendingLimit"]), f"must be nil when {limits.parent_word} is empty"
                    )
            except InputError as e:
                report(e)
            if not limits.is_cohort and nom_n is not None and lend_n > nom_n:
                invalid(obj, lp, str(r["lendingLimit"]), "must be less than or equal to the nominalQuota")
            lending = amount_from_nanos(lend_n, rname)
    # (nom_n is None only under collect_errors, which reported why and drops the result)
    return m.ResourceQuota(rname, amount_from_nanos(nom_n or 0, rname), borrowing, lending)
