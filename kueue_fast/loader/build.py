"""The whole input -> ``model.ClusterState`` (:func:`build_state`,
:func:`load`): every object through its converter, in three passes (kinds;
queueing objects and the Configuration; Workloads and jobs, which need the
priority classes), then the rules across objects (duplicates, at most one
Configuration, references to priority classes) and the hints (accepted, but
probably not what was meant).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import IO, Any

from .._gc import no_cyclic_gc
from ..api import error_collection as collect, model as m
from ..api.errors import (
    InputError,
    InputWarning,
    MissingReferenceError,
    ParseError,
    ValidationError,
    raise_all,
)
from .configuration import parse_config_map, parse_configuration
from .documents import Document, _kind_of, _read_all, _split_list
from .job_workloads import _JobReader
from .kinds import (
    parse_admission_check,
    parse_cluster_queue,
    parse_cohort,
    parse_local_queue,
    parse_namespace,
    parse_priority_class,
    parse_resource_flavor,
    parse_workload_priority_class,
)
from .roles import _kind_and_version, _label_of, _Role
from .tas import parse_node, parse_pod, parse_topology, tas_problems
from .workload import BulkCaches, fast_workload, parse_workload


def _with_source(e: InputError, doc: Document) -> InputError:
    if e.source:
        return e
    return type(e)(e.obj, e.field, e.message, source=doc.where)


# The converter of each kind read_object reads (the one collect_errors reads again).
_CONVERTERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "ResourceFlavor": parse_resource_flavor,
    "ClusterQueue": parse_cluster_queue,
    "Cohort": parse_cohort,
    "LocalQueue": parse_local_queue,
    "AdmissionCheck": parse_admission_check,
    "WorkloadPriorityClass": parse_workload_priority_class,
    "PriorityClass": parse_priority_class,
    "Namespace": parse_namespace,
    "Topology": parse_topology,
    "Node": parse_node,
    "Pod": parse_pod,  # None: a pod that uses no node capacity Kueue counts (loader/tas.py)
    "Configuration": parse_configuration,
    "ConfigMap": parse_config_map,  # Kueue's (roles._holds_kueue_configuration)
}


def build_state(docs: Iterable[Document | dict[str, Any]], *, keep_sources: bool = False) -> m.ClusterState:
    """Convert and validate every object; cross-object rules (duplicates, at
    most one Configuration, priority class references) are checked here.
    Every error of every invalid object is reported (``errors.raise_all``); objects Kueue
    does not read are skipped with a warning (``ClusterState.warnings``).
    ``keep_sources`` fills ``ClusterState.sources``. The objects are kept, not
    copied, and equal Workload pod templates become one object (kueue_fast.loader._bulk):
    treat them as read-only afterwards."""
    errors: list[InputError] = []
    with no_cyclic_gc():
        state = _build_state(docs, errors, keep_sources)
    raise_all(errors, state.warnings)
    return state


def load(
    paths: Sequence[str],
    stdin: IO[str] | None = None,
    *,
    recursive: bool = False,
    keep_sources: bool = False,
) -> m.ClusterState:
    """read_documents + build_state, with the errors of both reported together."""
    errors: list[InputError] = []
    warnings: list[InputWarning] = []
    docs = _read_all(paths, stdin, recursive, errors, warnings)
    unreadable = bool(errors)
    with no_cyclic_gc():
        state = _build_state(docs, errors, keep_sources)
    if unreadable:  # what a missing reference names may be in the file that could not be read
        errors = [e for e in errors if not isinstance(e, MissingReferenceError)]
    state.warnings[:0] = warnings
    raise_all(errors, state.warnings)
    return state


def _build_state(
    docs: Iterable[Document | dict[str, Any]], errors: list[InputError], keep_sources: bool
) -> m.ClusterState:
    documents = _documents(docs, errors)
    # 1. kinds (all their errors first: a reader that stops at the first error reports one of these)
    roles = _roles(documents, errors)
    run = _Assembly(errors, keep_sources)
    # 2. everything but Workloads and jobs
    workloads = run.read_objects(documents, roles)
    # 3. Workloads, and the Workloads Kueue makes from jobs, in input order
    made = run.read_workloads(workloads)
    return run.finish(documents, made)


def _documents(docs: Iterable[Document | dict[str, Any]], errors: list[InputError]) -> list[Document]:
    """The input as Documents (a dict is one, or the items of a List)."""
    documents: list[Document] = []
    for i, d in enumerate(docs):
        try:
            if isinstance(d, Document):
                documents.append(d)
            elif isinstance(d, dict):
                documents.extend(_split_list("<input>", i, d))
            else:
                raise ParseError("", "", f"input {i} is a {_kind_of(d)}, not an object", source="<input>")
        except InputError as e:
            errors.append(e)
    return documents


def _roles(documents: list[Document], errors: list[InputError]) -> list[_Role | None]:
    """Each document's role (None: its kind or apiVersion is an error)."""
    roles: list[_Role | None] = []
    known: dict[tuple[str, str], _Role] = {}  # (apiVersion, kind) -> the role of every such object
    for doc in documents:
        api, kind = doc.obj.get("apiVersion"), doc.obj.get("kind")
        role = known.get((api, kind)) if type(api) is str and type(kind) is str else None
        if role is None:
            try:
                role = _kind_and_version(doc)
            except InputError as e:
                errors.append(e)
                roles.append(None)
                continue
            # a skipped object's message is its own; a ConfigMap is read or not by its data
            if not role.skipped and role.kind != "ConfigMap":
                known[(role.api, role.kind)] = role
        roles.append(role)
    return roles


# (document number, document, role, position among Workloads and jobs)
_WorkloadDoc = tuple[int, Document, _Role, int]


class _Assembly:
    """One build_state: the state being filled, the errors and the warnings."""

    def __init__(self, errors: list[InputError], keep_sources: bool) -> None:
        self.state = m.ClusterState()
        self.errors = errors
        self.noted: list[tuple[int, InputWarning]] = []  # (document number, warning), sorted at the end
        self.sources = self.state.sources if keep_sources else None
        self.pod_classes: dict[str, m.WorkloadPriorityClass] = {}
        # Classes whose object is invalid, by kind: references to them are not
        # reported as missing (that error is already reported).
        self.broken_classes: dict[str, dict[str, m.WorkloadPriorityClass]] = {
            "WorkloadPriorityClass": {},
            "PriorityClass": {},
        }
        self.seen_config: Document | None = None

    def put(self, table: dict[str, Any], key: str, value: Any, doc: Document, kind: str) -> None:
        """table[key] = value, the object ``kind/key`` (its reference, built only
        when needed: 100k Workloads)."""
        if key in table:
            ref = f"{kind}/{key}"
            raise ValidationError(
                ref,
                "metadata.name",
                f'Duplicate value: "{key}": the input defines {ref} twice',
                source=doc.where,
            )
        table[key] = value
        if self.sources is not None:
            self.sources[f"{kind}/{key}"] = doc.where

    def read_objects(self, documents: list[Document], roles: list[_Role | None]) -> list[_WorkloadDoc]:
        """Every object but Workloads and jobs, which are returned for later."""
        workloads: list[_WorkloadDoc] = []
        for i, (doc, role) in enumerate(zip(documents, roles, strict=True)):
            if role is None:
                continue
            if role.skipped:
                self.noted.append((i, InputWarning(_label_of(doc.obj), "", role.skipped, doc.where)))
                continue
            kind = role.kind
            if kind == "Workload" or role.integration is not None:
                workloads.append((i, doc, role, len(workloads)))
                continue
            try:
                self.read_object(i, doc, kind)
            except InputError as e:
                self.invalid(doc, e, partial(_CONVERTERS[kind], doc.obj))
                md = doc.obj.get("metadata")
                name = md.get("name") if isinstance(md, dict) else None
                if kind in self.broken_classes and isinstance(name, str):
                    self.broken_classes[kind][name] = m.WorkloadPriorityClass(name, 0)
        self.state.pod_priority_classes = self.pod_classes
        return workloads

    def invalid(self, doc: Document, e: InputError, read: Callable[[], object]) -> None:
        """The object of ``doc`` raised ``e``: every error of it (``read``
        reads it again, error_collection.collect_errors), named with the document."""
        self.errors.extend(_with_source(x, doc) for x in collect.collect_errors(read, e))

    def read_object(self, i: int, doc: Document, kind: str) -> None:
        state, put = self.state, self.put
        if kind in ("Configuration", "ConfigMap") and self.seen_config is not None:
            raise ValidationError(
                "Configuration",
                "",
                f"at most one Configuration may be given; another is in {self.seen_config.where}",
                source=doc.where,
            )
        obj = _CONVERTERS[kind](doc.obj)
        if kind == "ResourceFlavor":
            put(state.resource_flavors, obj.name, obj, doc, kind)
        elif kind == "ClusterQueue":
            put(state.cluster_queues, obj.name, obj, doc, kind)
            if obj.namespace_selector is None:
                hint = _NO_NAMESPACE_SELECTOR.with_object(f"ClusterQueue/{obj.name}", doc.where)
                self.noted.append((i, hint))
        elif kind == "Cohort":
            put(state.cohorts, obj.name, obj, doc, kind)
        elif kind == "LocalQueue":
            put(state.local_queues, f"{obj.namespace}/{obj.name}", obj, doc, kind)
        elif kind == "AdmissionCheck":
            put(state.admission_checks, obj.name, obj, doc, kind)
        elif kind == "WorkloadPriorityClass":
            put(state.priority_classes, obj.name, obj, doc, kind)
        elif kind == "PriorityClass":
            put(self.pod_classes, obj.name, obj, doc, kind)
        elif kind == "Namespace":
            put(state.namespaces, obj.name, obj, doc, kind)
        elif kind == "Topology":
            put(state.topologies, obj.name, obj, doc, kind)
        elif kind == "Node":
            put(state.nodes, obj.name, obj, doc, kind)
        elif kind == "Pod":
            if obj is not None:
                state.node_pods.append(obj)
        elif kind in ("Configuration", "ConfigMap"):
            self.seen_config = doc
            state.configuration = obj

    def read_workloads(self, workloads: list[_WorkloadDoc]) -> dict[int, list[dict[str, Any]]]:
        """Workloads and jobs; returns, by document number, each job as
        defaulted followed by its Workloads."""
        state = self.state
        wpcs = {**self.broken_classes["WorkloadPriorityClass"], **state.priority_classes}
        pcs = {**self.broken_classes["PriorityClass"], **self.pod_classes}
        caches = BulkCaches()
        jobs = (
            _JobReader(state, wpcs, pcs, workloads)
            if any(r.integration for _, _, r, _ in workloads)
            else None
        )
        made: dict[int, list[dict[str, Any]]] = {}
        for i, doc, role, position in workloads:
            try:
                if role.integration is not None:
                    assert jobs is not None
                    obj, wls, notes = jobs.read(doc, role, position, caches)
                    self.noted.extend((i, w) for w in notes)
                    made[i] = [obj, *(wl.raw for wl in wls)]
                    if self.sources is not None:
                        md = obj["metadata"]
                        self.sources[m.object_ref(role.kind, md["name"], md["namespace"])] = doc.where
                    for wl in wls:
                        self.put(state.workloads, wl.key, wl, doc, "Workload")
                    continue
                obj = doc.obj
                fast = fast_workload(obj, role.api, position, wpcs, pcs, caches)
                wl = (
                    fast
                    if fast is not None
                    else parse_workload(obj, wpcs, pod_priority_classes=pcs, default_creation_ns=position)
                )
                self.put(state.workloads, wl.key, wl, doc, "Workload")
                if wl.admission is not None:
                    unknown = _unknown_flavors(wl, state, doc)
                    if unknown:
                        self.noted.extend((i, w) for w in unknown)
            except InputError as e:
                if role.integration is not None:  # jobs.read reports every error of the job itself
                    self.errors.extend(_with_source(x, doc) for x in e.errors)
                    continue
                again = partial(parse_workload, doc.obj, wpcs, pod_priority_classes=pcs)
                self.invalid(doc, e, partial(again, default_creation_ns=position))
        return made

    def finish(self, documents: list[Document], made: dict[int, list[dict[str, Any]]]) -> m.ClusterState:
        """The warnings in input order, and the documents as Kueue would hold them."""
        state = self.state
        self.errors.extend(tas_problems(state))
        self.noted.sort(key=lambda n: n[0])
        state.warnings.extend(w for _, w in self.noted)
        if made:
            state.documents = [o for i, doc in enumerate(documents) for o in made.get(i) or (doc.obj,)]
        else:
            state.documents = [doc.obj for doc in documents]
        return state


# --- hints: accepted, but probably not what was meant ------------------------------------


@dataclass(frozen=True)
class _Hint:
    field: str
    message: str

    def with_object(self, obj: str, source: str) -> InputWarning:
        return InputWarning(obj, self.field, self.message, source)


_NO_NAMESPACE_SELECTOR = _Hint(
    "spec.namespaceSelector",
    "not set: this ClusterQueue selects no namespace, so it admits no workload "
    "(namespaceSelector: {} selects every namespace)",
)


def _unknown_flavors(wl: m.Workload, state: m.ClusterState, doc: Document) -> list[InputWarning]:
    """An admitted Workload naming a ResourceFlavor the input does not define."""
    assert wl.admission is not None
    known = state.resource_flavors.__contains__
    out = []
    for j, psa in enumerate(wl.admission.pod_set_assignments):
        if all(map(known, psa.flavors.values())):  # the common case, without a loop in Python
            continue
        for resource, flavor in psa.flavors.items():
            if flavor not in state.resource_flavors:
                out.append(
                    InputWarning(
                        f"Workload/{wl.key}",
                        f"status.admission.podSetAssignments[{j}].flavors[{resource}]",
                        f'ResourceFlavor "{flavor}" is not in the input: the {resource} it holds '
                        "counts against no quota",
                        doc.where,
                    )
                )
    return out
