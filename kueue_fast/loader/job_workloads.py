"""Jobs of the input -> the Workloads Kueue's job integrations create
(``kueue_fast.integrations``), read by the same Workload paths as input
Workloads (``kueue_fast.loader._bulk``, then ``workload``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from ..api import error_collection as collect, model as m, validation as v
from ..api.errors import InputError, InputWarning, ValidationError, raise_all
from ..integrations import Environment, Integration, integration_for
from ..integrations.framework import Conversion, generated_name
from .common import (
    _metadata,
    parse_time_ns,
)
from .documents import Document
from .roles import _Role
from .workload import fast_workload, parse_workload


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
        self, doc: Document, role: _Role, position: int, caches: object
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
        convert = partial(self._convert, obj, ref, module, position, caches)
        try:
            conv, out = convert()
        except InputError as e:  # every error of the job (error_collection.collect_errors)
            raise_all(collect.collect_errors(convert, e))
            raise
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
        return conv.obj, out, notes

    def _convert(
        self, obj: dict[str, Any], ref: str, module: Integration, position: int, caches: object
    ) -> tuple[Conversion, list[m.Workload]]:
        """The job's conversion by its integration and its Workloads, read;
        the Workloads' errors name the job's fields."""
        conv = module.workloads_for(obj, self.env)
        md = obj["metadata"]
        out = []
        for wl_obj in conv.workloads:
            wl = None
            if not collect.collecting():  # the bulk path's tries would be noted as errors
                wl = fast_workload(wl_obj, wl_obj["apiVersion"], position, self.wpcs, self.pcs, caches)
            if wl is None:
                read = partial(parse_workload, wl_obj, self.wpcs, pod_priority_classes=self.pcs)
                wl = collect.read_as(  # the errors name the job's fields, not the Workload's
                    partial(read, default_creation_ns=position),
                    lambda e: type(e)(ref, module.owner_field(e.field), e.message),
                )
                if wl is None:  # under collect_errors: its errors are noted
                    continue
            if md.get("creationTimestamp") is not None:
                wl.creation_ns = parse_time_ns(md["creationTimestamp"], ref, "metadata.creationTimestamp")
            wl.owner = f"{obj['kind']}/{md['name']}"
            out.append(wl)
        return conv, out

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
