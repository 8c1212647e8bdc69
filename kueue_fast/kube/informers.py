"""Informers: list + watch one kind of object and feed the scheduling loop.

An :class:`Informer` lists its kind (in pages), remembers the list's
resourceVersion, then watches from it with bookmarks. Every object that
arrives is slimmed to the fields the controller reads (:class:`Slimmer`)
and handed to ``sink(kind, event_type, key, obj)``; the informer itself keeps
only ``key -> resourceVersion`` (to turn a relist into the right ADDED /
MODIFIED / DELETED events). When a watch ends it is reopened from the last
resourceVersion seen (events or bookmarks); when the server answers 410 Gone
the kind is listed again. After the first complete list the informer sends
``sink(kind, "SYNCED", "", None)``. An ``optional`` kind that the API does
not serve (a CRD not installed) counts as synced and empty, and is looked for
again every ``retry_missing`` seconds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..integrations.framework import QUEUE_LABEL
from .client import ApiError, ClientClosed, KubeClient, Resource

log = logging.getLogger("kueue_fast.controller.informers")  # the name operators filter on

JSON = dict[str, Any]
Sink = Callable[[str, str, str, "JSON | None"], None]


class Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


def object_key(obj: JSON) -> str:
    md = obj["metadata"]
    ns = md.get("namespace")
    return f"{ns}/{md['name']}" if ns else str(md["name"])


# --- slimming ---------------------------------------------------------------------------------


_KUEUE_PREFIX = "kueue.x-k8s.io/"
_META_KEEP = (
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
)


def _deep_intern(o: Any) -> Any:
    """A copy with every dict key and short string interned (JSON decoding
    makes a new string object for each occurrence)."""
    if isinstance(o, dict):
        return {sys.intern(k): _deep_intern(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_deep_intern(v) for v in o]
    if isinstance(o, str) and len(o) <= 64:
        return sys.intern(o)
    return o


class Slimmer:
    """Keeps only what the controller reads, and shares what repeats.

    Sub-objects that are the same in many objects (a pod spec of Jobs made
    from one template, the pod sets of their Workloads, an admission, a
    conditions list) are kept once: ``share`` returns the first equal object
    it saw. Shared objects are never modified (the controller replaces
    objects, it does not edit them); strings are interned."""

    def __init__(self, max_shared: int = 50_000) -> None:
        self._shared: dict[bytes, Any] = {}
        self.max_shared = max_shared

    def share(self, obj: Any) -> Any:
        if not obj:
            return obj
        digest = hashlib.blake2b(
            json.dumps(obj, sort_keys=True, separators=(",", ":")).encode(), digest_size=16
        ).digest()
        got = self._shared.get(digest)
        if got is not None:
            return got
        if len(self._shared) >= self.max_shared:
            self._shared.clear()  # holders keep theirs; sharing starts again
        obj = _deep_intern(obj)
        self._shared[digest] = obj
        return obj

    def pod_spec(self, spec: JSON | None) -> JSON:
        return self.share(spec) if spec else {}

    @staticmethod
    def _s(v: Any) -> Any:
        return sys.intern(v) if isinstance(v, str) and len(v) <= 64 else v

    def meta(
        self, md: JSON, *, labels: str = "all", annotations: str = "kueue", owners: bool = False
    ) -> JSON:
        return _deep_intern(self._meta(md, labels=labels, annotations=annotations, owners=owners))  # type: ignore[no-any-return]

    def _meta(
        self, md: JSON, *, labels: str = "all", annotations: str = "kueue", owners: bool = False
    ) -> JSON:
        out = {k: self._s(md[k]) for k in _META_KEEP if md.get(k) is not None}
        lab = md.get("labels") or {}
        if labels == "all" and lab:
            out["labels"] = {self._s(k): self._s(v) for k, v in lab.items()}
        elif labels == "kueue":
            kl = {self._s(k): self._s(v) for k, v in lab.items() if k.startswith(_KUEUE_PREFIX)}
            if kl:
                out["labels"] = kl
        ann = md.get("annotations") or {}
        if annotations == "kueue":
            ka = {k: v for k, v in ann.items() if k.startswith(_KUEUE_PREFIX)}
            if ka:
                out["annotations"] = ka
        if md.get("finalizers"):
            out["finalizers"] = [self._s(f) for f in md["finalizers"]]
        if owners and md.get("ownerReferences"):
            out["ownerReferences"] = [
                {k: self._s(r.get(k)) for k in ("apiVersion", "kind", "name", "uid", "controller") if k in r}
                for r in md["ownerReferences"]
            ]
        return out

    def template(self, t: JSON | None, metadata: bool = True) -> JSON:
        t = t or {}
        out: JSON = {"spec": self.pod_spec(t.get("spec"))}
        tmd = t.get("metadata") or {}
        if tmd and metadata:
            out["metadata"] = {k: _deep_intern(tmd[k]) for k in ("labels", "annotations") if tmd.get(k)}
        return out

    def conditions(self, conds: list[JSON] | None) -> list[JSON]:
        return [{k: self._s(v) for k, v in c.items()} for c in conds or []]

    def job(self, obj: JSON) -> JSON:
        """The labels the API server puts on every Job's pod template (its uid
        and name) are left out and put back by :func:`job_template`."""
        spec = obj.get("spec") or {}
        md = obj["metadata"]
        job_spec: JSON = {
            "suspend": bool(spec.get("suspend")),
            "parallelism": spec.get("parallelism"),
            "completions": spec.get("completions"),
        }
        if spec.get("completionMode"):
            job_spec["completionMode"] = spec["completionMode"]
        template = self.template(spec.get("template"))
        labels = (template.get("metadata") or {}).get("labels")
        if labels:
            derived = _derived_labels(md)
            dropped = tuple(k for k, v in derived.items() if labels.get(k) == v)
            if dropped:
                rest = {k: v for k, v in labels.items() if k not in dropped}
                tmd = {k: v for k, v in template["metadata"].items() if k != "labels"}
                if rest:
                    tmd["labels"] = rest
                template = {"spec": template["spec"], "derivedLabels": self.share(list(dropped))}
                if tmd:
                    template["metadata"] = tmd
        st = obj.get("status") or {}
        out_st: JSON = {}
        if st.get("startTime"):
            out_st["startTime"] = st["startTime"]
        for k in ("ready", "succeeded"):  # PodsReady (waitForPodsReady)
            if st.get(k):
                out_st[k] = st[k]
        uncounted = (st.get("uncountedTerminatedPods") or {}).get("succeeded")
        if uncounted:
            out_st["uncountedTerminatedPods"] = {"succeeded": list(uncounted)}
        done = [c for c in st.get("conditions") or [] if c.get("type") in ("Complete", "Failed")]
        if done:
            out_st["conditions"] = self.conditions(done)
        job_spec["template"] = template
        return {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": self.meta(obj["metadata"], labels="kueue", owners=True),
            "spec": job_spec,
            "status": _deep_intern(out_st),
        }

    def jobset(self, obj: JSON) -> JSON:
        """What Kueue reads of a JobSet: suspend, and per replicated job its
        name, replicas, the counts of its Job template and its pod template;
        the Completed and Failed conditions."""
        spec = obj.get("spec") or {}
        rjobs = []
        for rj in spec.get("replicatedJobs") or []:
            jt = rj.get("template") or {}
            js = jt.get("spec") or {}
            counts = {
                k: js[k] for k in ("parallelism", "completions", "completionMode") if js.get(k) is not None
            }
            out_rj = {
                "name": rj.get("name"),
                "template": {"spec": {**counts, "template": self.template(js.get("template"))}},
            }
            if rj.get("replicas") is not None:
                out_rj["replicas"] = rj["replicas"]
            rjobs.append(out_rj)
        st = obj.get("status") or {}
        done = [c for c in st.get("conditions") or [] if c.get("type") in ("Completed", "Failed")]
        return {
            "apiVersion": obj.get("apiVersion", "jobset.x-k8s.io/v1alpha2"),
            "kind": "JobSet",
            "metadata": self.meta(obj["metadata"], labels="kueue", owners=True),
            "spec": _deep_intern({"suspend": bool(spec.get("suspend")), "replicatedJobs": rjobs}),
            "status": {"conditions": self.conditions(done)} if done else {},
        }

    def workload(self, obj: JSON) -> JSON:
        """The pod templates keep their labels and annotations (a stopped job's
        templates are restored from them) but not the labels that the Job
        controller derives from a Job's name and uid (a Job's own template has
        them back on restore), so that the pod sets of Jobs made from one
        template are shared."""
        spec = _deep_intern({k: v for k, v in (obj.get("spec") or {}).items() if k != "podSets"})
        spec["podSets"] = self.share(
            [
                {
                    **{k: v for k, v in ps.items() if k != "template"},
                    "template": _without_job_labels(self.template(ps.get("template"))),
                }
                for ps in (obj.get("spec") or {}).get("podSets") or []
            ]
        )
        out: JSON = {
            "apiVersion": sys.intern(obj.get("apiVersion", "kueue.x-k8s.io/v1beta2")),
            "kind": "Workload",
            "metadata": self.meta(obj["metadata"], owners=True),
            "spec": spec,
        }
        st = obj.get("status")
        if st:
            st = {sys.intern(k): (self.share(v) if isinstance(v, (dict, list)) else v) for k, v in st.items()}
            out["status"] = st
        return out

    def config(self, obj: JSON) -> JSON:
        """Queues, flavors, cohorts, priority classes: small, kept whole."""
        out = {k: _deep_intern(v) for k, v in obj.items() if k != "metadata"}
        out["metadata"] = self.meta(obj["metadata"])
        return out

    def namespace(self, obj: JSON) -> JSON:
        return {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": self.meta(obj["metadata"], annotations="none"),
        }

    def node(self, obj: JSON) -> JSON:
        """What Topology Aware Scheduling reads of a Node (loader/tas.py
        parse_node): labels, unschedulable, taints, allocatable, Ready."""
        spec = obj.get("spec") or {}
        st = obj.get("status") or {}
        ready = [c for c in st.get("conditions") or [] if c.get("type") == "Ready"][:1]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": self.meta(obj["metadata"], annotations="none"),
            "spec": _deep_intern(
                {k: spec[k] for k in ("unschedulable", "taints") if spec.get(k) is not None}
            ),
            "status": {
                "allocatable": self.share(st.get("allocatable") or {}),
                "conditions": [{"type": "Ready", "status": c.get("status")} for c in ready],
            },
        }

    def pod(self, obj: JSON) -> JSON:
        """What the controller reads of a Pod: its requests on its node
        (loader/tas.py parse_pod), and what Kueue's TopologyUngater reads and
        changes (labels, Kueue's annotations, nodeSelector, scheduling gates)."""
        spec = obj.get("spec") or {}
        out_spec: JSON = {
            "containers": self.share(
                [{k: c[k] for k in ("name", "resources") if k in c} for c in spec.get("containers") or []]
            )
        }
        inits = spec.get("initContainers")
        if inits:
            keep = ("name", "resources", "restartPolicy")
            out_spec["initContainers"] = self.share([{k: c[k] for k in keep if k in c} for c in inits])
        for k in ("nodeName", "nodeSelector", "schedulingGates", "overhead", "resources"):
            if spec.get(k):
                out_spec[k] = _deep_intern(spec[k])
        phase = (obj.get("status") or {}).get("phase")
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": self.meta(obj["metadata"]),
            "spec": out_spec,
            "status": {"phase": phase} if phase else {},
        }


# --- the informer ---------------------------------------------------------------------------------


class Informer:
    def __init__(
        self,
        client: KubeClient,
        res: Resource,
        kind: str,
        sink: Sink,
        slim: Callable[[JSON], JSON],
        *,
        label_selector: str | None = None,
        page_size: int = 500,
        watch_timeout: int = 300,
        optional: bool = False,
        retry_missing: float = 30.0,
    ) -> None:
        self.client = client
        self.res = res
        self.kind = kind
        self.sink = sink
        self.slim = slim
        self.label_selector = label_selector
        self.optional = optional
        self.retry_missing = retry_missing
        self.missing = False  # an optional kind the API does not serve (yet)
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.known: dict[str, str] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.lists = 0
        self.watches = 0
        self.thread = threading.Thread(target=self._run, name=f"informer-{res.plural}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        backoff = 0.1
        while not self.client.closed:
            try:
                if not self.resource_version:
                    self._relist()
                self._watch()
                backoff = 0.1
            except Gone:
                log.info("%s: watch expired (410), listing again", self.res.plural)
                self.resource_version = ""
            except ClientClosed:
                return
            except ApiError as e:
                if e.status == 404 and self.optional:
                    self._not_served()
                    if self.client.stopped.wait(self.retry_missing):
                        return
                    continue
                log.warning("%s: %s; retrying in %.1fs", self.res.plural, e, backoff)
                if self.client.stopped.wait(backoff):
                    return
                backoff = min(backoff * 2, 10.0)
            except Exception:  # a bug must not kill the informer silently
                log.exception("%s: informer error", self.res.plural)
                if self.client.stopped.wait(backoff):
                    return
                backoff = min(backoff * 2, 10.0)

    def _not_served(self) -> None:
        """An optional kind the API server does not serve: none exist; look again later."""
        if not self.missing:
            self.missing = True
            log.info(
                "%s (%s) is not served by the API server: none are managed until its CRD is installed",
                self.res.plural,
                self.res.api_version,
            )
        self.resource_version = ""
        if not self.synced.is_set():
            self.synced.set()
            self.sink(self.kind, "SYNCED", "", None)

    def _relist(self) -> None:
        items, rv = self.client.list_all(
            self.res, label_selector=self.label_selector, page_size=self.page_size
        )
        self.lists += 1
        if self.missing:
            self.missing = False
            log.info("%s (%s) is served now: managing them", self.res.plural, self.res.api_version)
        seen: dict[str, str] = {}
        for it in items:
            key = object_key(it)
            orv = str(it["metadata"].get("resourceVersion", ""))
            seen[key] = orv
            old = self.known.get(key)
            if old != orv:
                self.sink(self.kind, "ADDED" if old is None else "MODIFIED", key, self.slim(it))
        for key in set(self.known) - set(seen):
            self.sink(self.kind, "DELETED", key, {"metadata": {"resourceVersion": rv}})
        self.known = seen
        self.resource_version = rv
        if not self.synced.is_set():
            self.synced.set()
            self.sink(self.kind, "SYNCED", "", None)

    def _watch(self) -> None:
        self.watches += 1
        try:
            stream = self.client.watch(
                self.res,
                resource_version=self.resource_version,
                label_selector=self.label_selector,
                timeout_seconds=self.watch_timeout,
            )
            for ev in stream:
                etype = ev.get("type")
                obj = ev.get("object") or {}
                if etype == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone()
                    raise ApiError(
                        int(obj.get("code") or 500),
                        str(obj.get("reason") or ""),
                        str(obj.get("message") or ""),
                    )
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
                if etype == "BOOKMARK":
                    if rv:
                        self.resource_version = rv
                    continue
                obj.setdefault("apiVersion", self.res.api_version)
                obj.setdefault("kind", self.res.kind)
                key = object_key(obj)
                if etype == "DELETED":
                    if self.known.pop(key, None) is not None:
                        self.sink(self.kind, "DELETED", key, {"metadata": {"resourceVersion": rv}})
                elif etype in ("ADDED", "MODIFIED"):
                    old = self.known.get(key)
                    self.known[key] = rv
                    self.sink(self.kind, "ADDED" if old is None else "MODIFIED", key, self.slim(obj))
                if rv:
                    self.resource_version = rv
        except ApiError as e:
            if e.status == 410:
                raise Gone() from None
            raise


_JOB_LABELS = (
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "controller-uid",
    "job-name",
)


def _without_job_labels(template: JSON) -> JSON:
    labels = (template.get("metadata") or {}).get("labels") or {}
    if not any(k in labels for k in _JOB_LABELS):
        return template
    md = dict(template["metadata"])
    rest = {k: v for k, v in labels.items() if k not in _JOB_LABELS}
    if rest:
        md["labels"] = rest
    else:
        del md["labels"]
    out: JSON = {"spec": template["spec"]}
    if md:
        out["metadata"] = md
    return out


def _derived_labels(md: JSON) -> dict[str, str]:
    uid, name = md.get("uid", ""), md.get("name", "")
    return {
        "batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": name,
        "controller-uid": uid,
        "job-name": name,
    }


def job_template(job: JSON) -> JSON:
    """The Job's pod template as the API server has it (labels put back)."""
    t = (job.get("spec") or {}).get("template") or {}
    derived = t.get("derivedLabels")
    if not derived:
        return t
    md = dict(t.get("metadata") or {})
    all_labels = _derived_labels(job["metadata"])
    labels = {k: all_labels[k] for k in derived}
    labels.update(md.get("labels") or {})
    md["labels"] = labels
    return {"metadata": md, "spec": t.get("spec") or {}}


def job_selector() -> str:
    """Only Jobs that name a queue are Kueue's."""
    return QUEUE_LABEL
