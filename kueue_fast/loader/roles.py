"""What the loader does with each document (:class:`_Role`): read it as one
of Kueue's kinds, turn it into Workloads through its job integration, or skip
it with the reason (a Kueue kind that changes no decision, a kind Kueue does
not read). A likely typo of a kind is an error or a hint.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..api import model as m
from ..api.errors import InputError, ParseError
from ..integrations import INTEGRATIONS, Integration, integration_for
from ..integrations.framework import QUEUE_LABEL
from .common import (
    KIND_VERSIONS,
    KUEUE_GROUP,
)
from .configuration import config_map_document, is_kueue_configuration
from .documents import Document

KUEUE_GROUPS = (KUEUE_GROUP, "config.kueue.x-k8s.io")
# Kueue's own kinds that kueue-fast reads nothing from, and why skipping them
# changes no decision.
_KUEUE_KINDS_NOT_READ = {
    "MultiKueueConfig": "it matters only through an AdmissionCheck",
    "MultiKueueCluster": "it matters only through an AdmissionCheck",
    "ProvisioningRequestConfig": "it matters only through an AdmissionCheck",
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
    if kind == "ConfigMap" and api == "v1" and _holds_kueue_configuration(doc):
        return _Role(kind, api)  # read as the Configuration (configuration.parse_config_map)
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


def _holds_kueue_configuration(doc: Document) -> bool:
    """A ConfigMap whose controller_manager_config.yaml is Kueue's
    Configuration: Kueue's manager reads it as its configuration file."""
    try:
        inner = config_map_document(doc.obj)
    except InputError as e:  # Kueue's manager would not start with it
        raise type(e)(e.obj, e.field, e.message, source=doc.where) from None
    return inner is not None and is_kueue_configuration(inner)


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
