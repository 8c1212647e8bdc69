"""An in-process Kubernetes API server for the controller tests.

A real HTTP server on 127.0.0.1 (``http.server``, one thread per connection,
HTTP/1.1 keep-alive, chunked watch streams) that implements the parts of the
Kubernetes API kueue-fast's controller uses, with the API server's semantics:

* list with ``resourceVersion``, ``labelSelector``, ``fieldSelector`` and
  ``limit``/``continue`` paging;
* watch streams (``?watch=true``) from a resourceVersion, with bookmarks
  (``allowWatchBookmarks``), ``timeoutSeconds``, label-selector transitions
  (an object that stops matching is sent as DELETED), and ``410 Gone`` when
  the requested version is older than the kept history;
* create / get / update (PUT) / delete, with finalizers, ``deletionTimestamp``
  and owner-reference garbage collection (background, orphan);
* JSON merge patch, strategic merge patch (built-in kinds only: custom
  resources answer 415 as the real server does), JSON patch (RFC 6902) and
  server-side apply with field managers (``force``, ownership, removal of
  fields a manager stops applying, conflicts);
* the ``status`` subresource: writes to the main resource ignore status,
  writes to ``/status`` change only status; ``metadata.generation`` counts
  spec changes;
* optimistic concurrency: a write naming a stale ``metadata.resourceVersion``
  gets ``409 Conflict``;
* a namespaced create in a missing namespace is 404 (``namespaces "x" not
  found``), in a terminating one 403;
* events.k8s.io/v1 Events are validated as the API server does (required
  fields, length limits, series, immutable fields on update);
* batch/v1 Job defaults and the Job template rule that matters to Kueue (the
  pod template may change only in nodeSelector, tolerations, labels,
  annotations and schedulingGates, and only while the Job is suspended and
  has no ``status.startTime``); an optional simulated Job controller sets
  ``startTime`` when a Job starts and finishes Jobs on request;
* custom resources are served from CustomResourceDefinitions
  (``install_crd``, or POSTing one), so the CRDs kueue-fast ships are what
  the tests run against: their schemas are checked as the apiextensions
  server does (structural; unknown fields pruned, or refused with
  ``fieldValidation=Strict``; defaults; types, enums, required fields, list
  sizes and list-map keys), ``status.storedVersions`` is kept, and an update
  that drops a stored version from ``spec.versions`` is refused with the real
  server's 422 (``install_crd_stored`` sets up a cluster whose CRDs stored
  an older version);
* Nodes and Pods are stored as given (no scheduler, no kubelet); a Pod's
  spec changes only as ValidatePodUpdate lets Kueue's TopologyUngater
  change it (scheduling gates removed, nodeSelector entries added while
  gated);
* JobSets (``jobset.x-k8s.io``, from the CRD in tests/data) follow JobSet's
  webhook where Kueue meets it: the pod templates of the replicated jobs may
  change only while the JobSet is (or becomes) suspended; ``finish_jobset``
  sets its Completed or Failed condition.

Faults can be injected (``inject``): an error status (409, 429 with
Retry-After, 500...) or a delay for requests matching a verb / resource /
name, before or after the write is committed; open watches can be dropped
(``drop_watches``) and the event history compacted (``compact``) so that
the next watch from an old version gets 410. Hooks see every committed
write (``add_write_hook``), which the kill-and-restart test uses to stop a
controller right after a given write, and invariant checks use to look at
every state the cluster goes through.

Requests are counted by user agent, verb and resource (``request_counts``).
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import random
import re
import socket
import string
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import yaml

JSON = dict[str, Any]

# --- errors --------------------------------------------------------------------------------


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: JSON | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details or {}
        self.headers: dict[str, str] = {}

    def status(self) -> JSON:
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "details": self.details,
            "code": self.code,
        }


class DropConnection(Exception):
    """Raised by a hook (or a fault) to close the connection without answering."""


_REASONS = {
    400: "BadRequest",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


def _not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{rt.plural}.{rt.group} "{name}" not found' if rt.group else f'{rt.plural} "{name}" not found',
        {"name": name, "group": rt.group, "kind": rt.plural},
    )


def _conflict(rt: ResourceType, name: str) -> ApiError:
    what = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {what} "{name}": the object has been modified; '
        "please apply your changes to the latest version and try again",
        {"name": name, "group": rt.group, "kind": rt.plural},
    )


# --- resource types ------------------------------------------------------------------------


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    status: bool  # has the status subresource
    custom: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def store_key(self) -> tuple[str, str]:
        return (self.group, self.plural)


BUILTIN_TYPES = [
    ResourceType("", "v1", "namespaces", "Namespace", False, True),
    ResourceType("", "v1", "events", "Event", True, False),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, False),
    ResourceType("", "v1", "nodes", "Node", False, True),
    ResourceType("", "v1", "pods", "Pod", True, True),
    ResourceType("batch", "v1", "jobs", "Job", True, True),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True, False),
    ResourceType("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, False),
    ResourceType("events.k8s.io", "v1", "events", "Event", True, False),
    ResourceType(
        "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False, True
    ),
]


def _clone(o: Any) -> Any:
    """A deep copy of JSON data (faster than copy.deepcopy)."""
    if isinstance(o, (dict, list)):
        return json.loads(json.dumps(o))
    return o


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _now_micro() -> str:
    return dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --- label and field selectors -----------------------------------------------------------

_SEL_TERM = re.compile(
    r"^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9./_-]+)\s*"
    r"(?:(?P<op>==|=|!=|\s+in\s+|\s+notin\s+)\s*(?P<val>\([^)]*\)|[A-Za-z0-9._-]*))?\s*$"
)


def _split_terms(s: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        terms.append(cur)
    return terms


Selector = list[tuple[str, str, tuple[str, ...]]]


def parse_label_selector(s: str | None) -> Selector:
    """kubernetes labels.Parse: equality (=, ==, !=) and set-based (in, notin,
    exists, !exists) requirements separated by commas."""
    out: Selector = []
    if not s:
        return out
    for term in _split_terms(s):
        mt = _SEL_TERM.match(term)
        if not mt:
            raise ApiError(400, "BadRequest", f"unable to parse requirement: {term!r}")
        key, op, val = mt.group("key"), (mt.group("op") or "").strip(), mt.group("val")
        if mt.group("neg"):
            if op:
                raise ApiError(400, "BadRequest", f"unable to parse requirement: {term!r}")
            out.append((key, "!", ()))
        elif not op:
            out.append((key, "exists", ()))
        elif op in ("=", "=="):
            out.append((key, "=", (val or "",)))
        elif op == "!=":
            out.append((key, "!=", (val or "",)))
        else:
            if not val or not val.startswith("("):
                raise ApiError(400, "BadRequest", f"unable to parse requirement: {term!r}")
            vals = tuple(v.strip() for v in val[1:-1].split(",") if v.strip())
            out.append((key, op, vals))
    return out


def selector_matches(sel: Selector, labels: dict[str, str] | None) -> bool:
    labels = labels or {}
    for key, op, vals in sel:
        present = key in labels
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
        if op == "=" and labels.get(key) != vals[0]:
            return False
        if op == "!=" and present and labels[key] == vals[0]:
            return False
        if op == "in" and (not present or labels[key] not in vals):
            return False
        if op == "notin" and present and labels[key] in vals:
            return False
    return True


def parse_field_selector(s: str | None) -> list[tuple[str, bool, str]]:
    out = []
    if not s:
        return out
    for term in s.split(","):
        if "!=" in term:
            k, v = term.split("!=", 1)
            out.append((k.strip(), False, v.strip()))
        elif "==" in term:
            k, v = term.split("==", 1)
            out.append((k.strip(), True, v.strip()))
        elif "=" in term:
            k, v = term.split("=", 1)
            out.append((k.strip(), True, v.strip()))
        else:
            raise ApiError(400, "BadRequest", f"invalid field selector {term!r}")
    return out


def _field_value(obj: JSON, path: str) -> str:
    cur: Any = obj
    for p in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(p)
    return "" if cur is None else str(cur)


def field_matches(sel: list[tuple[str, bool, str]], obj: JSON) -> bool:
    return all((_field_value(obj, k) == v) == eq for k, eq, v in sel)


# --- patches -------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return _clone(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# Merge keys of the strategic-merge lists the tests touch (k8s.io/api struct tags).
_SMP_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "ports": "containerPort",
    "conditions": "type",
    "ownerReferences": "uid",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name",
    "schedulingGates": "name",
}
_SMP_SETS = {"finalizers"}  # patchStrategy=merge on a list of strings


def strategic_merge(target: Any, patch: Any, field_name: str = "") -> Any:
    """Strategic merge patch (a subset: merge keys, $patch replace/delete, null
    deletes, $deleteFromPrimitiveList, $setElementOrder ignored)."""
    if isinstance(patch, dict):
        if patch.get("$patch") == "replace":
            p = {k: v for k, v in patch.items() if k != "$patch"}
            return _clone(p)
        if patch.get("$patch") == "delete":
            return None
        out = dict(target) if isinstance(target, dict) else {}
        for k, v in patch.items():
            if k.startswith("$setElementOrder/") or k == "$retainKeys":
                continue
            if k.startswith("$deleteFromPrimitiveList/"):
                name = k.split("/", 1)[1]
                out[name] = [x for x in out.get(name) or [] if x not in (v or [])]
                continue
            if v is None:
                out.pop(k, None)
                continue
            nv = strategic_merge(out.get(k), v, k)
            if nv is None:
                out.pop(k, None)
            else:
                out[k] = nv
        return out
    if isinstance(patch, list):
        key = _SMP_KEYS.get(field_name)
        if field_name in _SMP_SETS:
            cur = list(target or [])
            for x in patch:
                if x not in cur:
                    cur.append(x)
            return cur
        if key is None or not all(isinstance(x, dict) for x in patch):
            return _clone(patch)
        cur = [_clone(x) for x in (target or [])]
        for item in patch:
            if item.get("$patch") == "replace":
                return [_clone({k: v for k, v in x.items() if k != "$patch"}) for x in patch]
            kv = item.get(key)
            idx = next((i for i, x in enumerate(cur) if isinstance(x, dict) and x.get(key) == kv), None)
            if item.get("$patch") == "delete":
                if idx is not None:
                    cur.pop(idx)
                continue
            if idx is None:
                cur.append(_clone(item))
            else:
                cur[idx] = strategic_merge(cur[idx], item)
        return cur
    return _clone(patch)


def _ptr(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _ptr_get(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for p in parts:
        if isinstance(cur, dict):
            if p not in cur:
                raise KeyError(p)
            cur = cur[p]
        elif isinstance(cur, list):
            cur = cur[int(p)]
        else:
            raise KeyError(p)
    return cur


def json_patch(doc: Any, ops: list[JSON]) -> Any:
    """RFC 6902 JSON patch."""
    doc = _clone(doc)
    for op in ops:
        kind = op.get("op")
        parts = _ptr(op.get("path", ""))
        try:
            if kind == "test":
                if _ptr_get(doc, parts) != op.get("value"):
                    raise ApiError(422, "Invalid", f"testing value {op.get('path')} failed")
                continue
            if kind in ("move", "copy"):
                src = _ptr(op["from"])
                value = _clone(_ptr_get(doc, src))
                if kind == "move":
                    parent = _ptr_get(doc, src[:-1])
                    if isinstance(parent, list):
                        parent.pop(int(src[-1]))
                    else:
                        del parent[src[-1]]
                kind, op = "add", {"value": value}
            parent = _ptr_get(doc, parts[:-1]) if parts else None
            last = parts[-1] if parts else None
            if kind == "add":
                if parent is None:
                    doc = _clone(op["value"])
                elif isinstance(parent, list):
                    if last == "-":
                        parent.append(_clone(op["value"]))
                    else:
                        parent.insert(int(last), _clone(op["value"]))  # type: ignore[arg-type]
                else:
                    parent[last] = _clone(op["value"])
            elif kind == "remove":
                if isinstance(parent, list):
                    parent.pop(int(last))  # type: ignore[arg-type]
                else:
                    del parent[last]  # type: ignore[index]
            elif kind == "replace":
                if parent is None:
                    doc = _clone(op["value"])
                elif isinstance(parent, list):
                    parent[int(last)] = _clone(op["value"])  # type: ignore[arg-type]
                else:
                    if last not in parent:
                        raise KeyError(last)
                    parent[last] = _clone(op["value"])
            else:
                raise ApiError(422, "Invalid", f"unknown JSON patch op {kind!r}")
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(
                422,
                "Invalid",
                f"the server rejected our request due to an error in our request: {kind} {op.get('path')}: {e}",  # noqa: E501
            ) from None
    return doc


# --- server-side apply ------------------------------------------------------------------

# listType=map keys of the fields applied in tests (Kueue's and core types).
_LIST_MAP_KEYS = {
    "conditions": "type",
    "podSetAssignments": "name",
    "reclaimablePods": "name",
    "admissionChecks": "name",
    "flavorsReservation": "name",
    "flavorsUsage": "name",
    "resources": "name",
    "containers": "name",
    "ownerReferences": "uid",
    "evictions": "reason",
}

Path = tuple[Any, ...]


def _fields(obj: Any, prefix: Path = ()) -> set[Path]:
    """The leaf paths of an applied configuration; list-map items are
    identified by their key (``('k', value)``), other lists are atomic."""
    out: set[Path] = set()
    if isinstance(obj, dict):
        if not obj and prefix:
            out.add(prefix)
        for k, v in obj.items():
            out |= _fields_of(k, v, prefix + (k,))
    return out


def _fields_of(name: str, v: Any, path: Path) -> set[Path]:
    if isinstance(v, dict):
        return _fields(v, path) or {path}
    if isinstance(v, list) and name in _LIST_MAP_KEYS and all(isinstance(x, dict) for x in v):
        key = _LIST_MAP_KEYS[name]
        out: set[Path] = set()
        for item in v:
            ip = path + (("k", item.get(key)),)
            out.add(ip + (key,))
            out |= _fields(item, ip)
        return out or {path}
    return {path}


def _list_index(lst: list[Any], name: str, keyval: Any) -> int | None:
    key = _LIST_MAP_KEYS.get(name)
    for i, x in enumerate(lst):
        if isinstance(x, dict) and x.get(key) == keyval:
            return i
    return None


def _remove_path(obj: Any, path: Path) -> None:
    """Remove a leaf, then prune containers emptied by the removal."""
    chain: list[tuple[Any, Any, str]] = []  # (container, key-or-index, field name)
    cur = obj
    fname = ""
    for p in path:
        if isinstance(p, tuple):
            if not isinstance(cur, list):
                return
            idx = _list_index(cur, fname, p[1])
            if idx is None:
                return
            chain.append((cur, idx, fname))
            cur = cur[idx]
        else:
            if not isinstance(cur, dict) or p not in cur:
                return
            chain.append((cur, p, p))
            fname = p
            cur = cur[p]
    container, k, _ = chain[-1]
    del container[k]
    # prune: empty dicts/lists, and list-map items left with only their key
    for container, k, name in reversed(chain[:-1]):
        child = container[k]
        if isinstance(container, list):
            key = _LIST_MAP_KEYS.get(name)
            if isinstance(child, dict) and (not child or set(child) == {key}):
                del container[k]
                continue
            break
        if child in ({}, []):
            del container[k]
            continue
        break


def _is_key_leaf(p: Path) -> bool:
    return len(p) >= 3 and isinstance(p[-2], tuple) and p[-1] == _LIST_MAP_KEYS.get(p[-3])


def _apply_merge(target: Any, applied: Any, name: str = "") -> Any:
    if isinstance(applied, dict):
        out = dict(target) if isinstance(target, dict) else {}
        for k, v in applied.items():
            out[k] = _apply_merge(out.get(k), v, k)
        return out
    if isinstance(applied, list) and name in _LIST_MAP_KEYS and all(isinstance(x, dict) for x in applied):
        key = _LIST_MAP_KEYS[name]
        cur = [_clone(x) for x in (target or [])] if isinstance(target, list) else []
        for item in applied:
            idx = _list_index(cur, name, item.get(key))
            if idx is None:
                cur.append(_clone(item))
            else:
                cur[idx] = _apply_merge(cur[idx], item)
        return cur
    return _clone(applied)


def _value_at(obj: Any, path: Path) -> Any:
    cur = obj
    fname = ""
    for p in path:
        if isinstance(p, tuple):
            if not isinstance(cur, list):
                return KeyError
            idx = _list_index(cur, fname, p[1])
            if idx is None:
                return KeyError
            cur = cur[idx]
        else:
            if not isinstance(cur, dict) or p not in cur:
                return KeyError
            fname = p
            cur = cur[p]
    return cur


# --- watches ---------------------------------------------------------------------------------


@dataclass
class Event:
    rv: int
    type: str  # ADDED | MODIFIED | DELETED
    obj: JSON
    old: JSON | None


@dataclass
class Fault:
    status: int | None = None
    delay: float = 0.0
    verb: str | None = None
    resource: str | None = None  # plural
    subresource: str | None = None  # "status", "" for the main resource, None: any
    name: str | None = None
    namespace: str | None = None
    user_agent: str | None = None  # prefix
    count: int = 1  # -1: forever
    after: bool = False  # commit the write, then fail
    drop: bool = False  # close the connection instead of answering
    retry_after: int | None = None
    hits: int = 0

    def matches(self, req: Request) -> bool:
        if self.count == 0:
            return False
        if self.verb is not None and self.verb != req.verb:
            return False
        if self.resource is not None and self.resource != req.rt.plural:
            return False
        if self.subresource is not None and self.subresource != req.sub:
            return False
        if self.name is not None and self.name != req.name:
            return False
        if self.namespace is not None and self.namespace != req.namespace:
            return False
        return not (self.user_agent is not None and not req.user_agent.startswith(self.user_agent))


@dataclass
class Request:
    method: str
    verb: str
    rt: ResourceType
    namespace: str
    name: str
    sub: str
    query: dict[str, str]
    headers: Any
    body: bytes
    user_agent: str


@dataclass
class WriteInfo:
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    obj: JSON | None
    user_agent: str
    server: FakeAPIServer


# --- the server -------------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up (a killed controller, the client pool closing at
        # the end of a run) is not a server error worth a traceback.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


class FakeAPIServer:
    """See the module docstring. ``with FakeAPIServer() as api: ...``"""

    def __init__(
        self,
        *,
        crds: Iterable[JSON] = (),
        history: int = 200_000,
        bookmark_interval: float = 0.5,
        job_controller: bool = True,
        port: int = 0,
    ) -> None:
        self.lock = threading.Condition(threading.RLock())
        self.types: dict[tuple[str, str, str], ResourceType] = {}
        self.objects: dict[tuple[str, str], dict[tuple[str, str], JSON]] = collections.defaultdict(dict)
        self.managed: dict[tuple[str, str, str, str], dict[str, set[Path]]] = {}
        self.log: dict[tuple[str, str], collections.deque[Event]] = collections.defaultdict(
            lambda: collections.deque(maxlen=history)
        )
        self.compacted: dict[tuple[str, str], int] = collections.defaultdict(int)
        self.rv = 1000
        self.bookmark_interval = bookmark_interval
        self.job_controller = job_controller
        self.faults: list[Fault] = []
        self.hooks: list[Callable[[WriteInfo], None]] = []
        self.request_counts: collections.Counter[tuple[str, str, str, str]] = collections.Counter()
        self.watch_generation = 0  # bumped by drop_watches
        self._watch_sockets: set[socket.socket] = set()
        self._stopping = False
        # (group, version, plural) -> openAPIV3Schema of each version of each CRD
        self.schemas: dict[tuple[str, str, str], JSON] = {}
        # (Kind/namespace/name, field path) of every field a write lost to pruning
        self.pruned: list[tuple[str, str]] = []
        # TokenReview and SubjectAccessReview (the secure metrics endpoint):
        # token -> (user name, groups); the (user, path, verb) non-resource
        # grants of RBAC; every review received, in order
        self.tokens: dict[str, tuple[str, list[str]]] = {}
        self.non_resource_grants: set[tuple[str, str, str]] = set()
        self.reviews: list[JSON] = []
        for rt in BUILTIN_TYPES:
            self._register(rt)
        for crd in crds:
            self.install_crd(crd)
        self.httpd = _HTTPServer(("127.0.0.1", port), _Handler)
        self.httpd.api = self  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="fake-apiserver", daemon=True)

    # --- lifecycle ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPIServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self._stopping = True
        with self.lock:
            self.lock.notify_all()
        self.drop_watches()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)

    def __enter__(self) -> FakeAPIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_kubeconfig(self, path: str, namespace: str = "default") -> str:
        cfg = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "fake", "user": {"token": "fake-token"}}],
            "contexts": [
                {"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": namespace}}
            ],
            "current-context": "fake",
        }
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        return path

    # --- types ------------------------------------------------------------------------------

    def _register(self, rt: ResourceType) -> None:
        self.types[(rt.group, rt.version, rt.plural)] = rt

    def install_crd(self, crd: JSON, stored_versions: list[str] | None = None) -> JSON:
        """Create a CRD (as a POST would), or update it (as a PUT would) when
        it exists. ``stored_versions``: the versions its objects were stored
        in so far (the CRD's ``status.storedVersions``), for a cluster that
        ran older CRDs."""
        crd = _clone(crd)
        name = crd["metadata"]["name"]
        rt = self.types[("apiextensions.k8s.io", "v1", "customresourcedefinitions")]
        with self.lock:
            cur = self._store(rt).get(("", name))
            if cur is None:
                req = Request("POST", "create", rt, "", "", "", {}, {}, b"", "direct")
                out = self.do_create(req, crd)
            else:
                crd["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
                req = Request("PUT", "update", rt, "", name, "", {}, {}, b"", "direct")
                out = self._finish_update(req, cur, crd)
            if stored_versions is not None:
                cur = self._store(rt)[("", name)]
                new = _clone(cur)
                new["status"]["storedVersions"] = list(stored_versions)
                out = self._commit(rt, cur, new, "MODIFIED")
        return out

    def _serve_crd(self, crd: JSON) -> None:
        """Serve the CRD's served versions (and stop serving the others)."""
        spec = crd["spec"]
        names = spec["names"]
        for key in [
            k for k, t in self.types.items() if t.custom and t.store_key == (spec["group"], names["plural"])
        ]:
            del self.types[key]
        for v in spec["versions"]:
            self.schemas[(spec["group"], v["name"], names["plural"])] = (v.get("schema") or {}).get(
                "openAPIV3Schema"
            ) or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
            if not v.get("served", True):
                continue
            self._register(
                ResourceType(
                    spec["group"],
                    v["name"],
                    names["plural"],
                    names["kind"],
                    spec["scope"] == "Namespaced",
                    "status" in (v.get("subresources") or {}),
                    custom=True,
                )
            )

    def type_of(self, api_version: str, kind: str) -> ResourceType:
        for rt in self.types.values():
            if rt.api_version == api_version and rt.kind == kind:
                return rt
        raise KeyError(f"{api_version} {kind}")

    # --- fault injection and hooks --------------------------------------------------------------

    def inject(self, **kw: Any) -> Fault:
        f = Fault(**kw)
        with self.lock:
            self.faults.append(f)
        return f

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def add_write_hook(self, fn: Callable[[WriteInfo], None]) -> None:
        self.hooks.append(fn)

    def remove_write_hook(self, fn: Callable[[WriteInfo], None]) -> None:
        if fn in self.hooks:
            self.hooks.remove(fn)

    def drop_watches(self) -> None:
        """Close every open watch stream abruptly (the clients must re-watch)."""
        with self.lock:
            self.watch_generation += 1
            socks = list(self._watch_sockets)
            self.lock.notify_all()
        for s in socks:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def compact(self, resource: str | None = None) -> None:
        """Forget the event history (etcd compaction): watching from an older
        resourceVersion now answers 410 Gone."""
        with self.lock:
            for key in list(self.log):
                if resource is None or key[1] == resource:
                    self.log[key].clear()
                    self.compacted[key] = self.rv
            self.lock.notify_all()

    def counts(self, user_agent: str | None = None) -> collections.Counter[tuple[str, str]]:
        """Requests by (verb, resource[/subresource]), optionally for one user agent prefix."""
        out: collections.Counter[tuple[str, str]] = collections.Counter()
        with self.lock:
            for (ua, verb, res, sub), n in self.request_counts.items():
                if user_agent is None or ua.startswith(user_agent):
                    out[(verb, f"{res}/{sub}" if sub else res)] += n
        return out

    # --- direct access for tests (no HTTP) -----------------------------------------------------

    def get(self, plural: str, name: str, namespace: str = "", group: str | None = None) -> JSON | None:
        with self.lock:
            for (g, p), objs in self.objects.items():
                if p == plural and (group is None or g == group):
                    o = objs.get((namespace, name))
                    return _clone(o) if o is not None else None
        return None

    def list(self, plural: str, namespace: str | None = None, group: str | None = None) -> list[JSON]:
        with self.lock:
            out = []
            for (g, p), objs in self.objects.items():
                if p == plural and (group is None or g == group):
                    out += [_clone(o) for (ns, _), o in sorted(objs.items()) if namespace in (None, ns)]
            return out

    def snapshot(self) -> dict[tuple[str, str], dict[tuple[str, str], JSON]]:
        """The current objects (shared, not copied: call under ``lock`` and do not mutate)."""
        return self.objects

    def create(self, obj: JSON) -> JSON:
        """Create an object as a POST would, without HTTP (benchmarks, fixtures)."""
        rt = self.type_of(obj["apiVersion"], obj["kind"])
        ns = obj["metadata"].get("namespace", "") if rt.namespaced else ""
        req = Request("POST", "create", rt, ns, "", "", {}, {}, b"", "direct")
        return self.do_create(req, obj)

    def finish_job(self, namespace: str, name: str, failed: bool = False, message: str = "") -> JSON:
        """What the Job controller does when the pods are done."""
        rt = self.types[("batch", "v1", "jobs")]
        with self.lock:
            cur = self.objects[rt.store_key].get((namespace, name))
            if cur is None:
                raise _not_found(rt, name)
            new = _clone(cur)
            st = new.setdefault("status", {})
            now = _now()
            ctype = "Failed" if failed else "Complete"
            reason = "BackoffLimitExceeded" if failed else "Completed"
            msg = message or (
                "Job has reached the specified backoff limit"
                if failed
                else "Reached expected number of succeeded pods"
            )
            conds = [
                c
                for c in st.get("conditions", [])
                if c.get("type") not in (ctype, "SuccessCriteriaMet", "FailureTarget")
            ]
            extra = "FailureTarget" if failed else "SuccessCriteriaMet"
            conds.append(
                {
                    "type": extra,
                    "status": "True",
                    "reason": reason,
                    "message": msg,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                }
            )
            conds.append(
                {
                    "type": ctype,
                    "status": "True",
                    "reason": reason,
                    "message": msg,
                    "lastProbeTime": now,
                    "lastTransitionTime": now,
                }
            )
            st["conditions"] = conds
            st["active"] = 0
            if failed:
                st["failed"] = 1
            else:
                st["succeeded"] = new["spec"].get("completions") or 1
                st["completionTime"] = now
            st.setdefault("startTime", now)
            out = self._commit(rt, cur, new, "MODIFIED")
        self._run_hooks(WriteInfo("update", "jobs", "status", namespace, name, out, "job-controller", self))
        return _clone(out)

    def put_stored(self, obj: JSON) -> JSON:
        """Store a custom resource as an earlier version of its CRD stored it:
        no validation and no conversion. The server serves it through the
        current versions with its fields as they are (conversion strategy
        None), e.g. a v1beta1 ClusterQueue's ``spec.cohort``."""
        group = str(obj["apiVersion"]).rsplit("/", 1)[0]
        rt = next(t for t in self.types.values() if t.group == group and t.kind == obj["kind"])
        obj = _clone(obj)
        md = obj["metadata"]
        if not rt.namespaced:
            md.pop("namespace", None)
        md.update(uid=str(uuid.uuid4()), creationTimestamp=_now(), generation=1)
        with self.lock:
            return _clone(self._commit(rt, None, obj, "ADDED"))

    def finish_jobset(self, namespace: str, name: str, failed: bool = False, message: str = "") -> JSON:
        """What JobSet's controller does when its jobs are done: the Completed
        (or Failed) condition and the terminal state."""
        rt = self.type_of("jobset.x-k8s.io/v1alpha2", "JobSet")
        with self.lock:
            cur = self._store(rt).get((namespace, name))
            if cur is None:
                raise _not_found(rt, name)
            new = _clone(cur)
            st = new.setdefault("status", {})
            now = _now()
            ctype = "Failed" if failed else "Completed"
            msg = message or ("jobset failed" if failed else "jobset completed successfully")
            reason = "FailedJobs" if failed else "AllJobsCompleted"
            conds = [c for c in st.get("conditions") or [] if c.get("type") != ctype]
            conds.append(
                {"type": ctype, "status": "True", "reason": reason, "message": msg, "lastTransitionTime": now}
            )
            st["conditions"] = conds
            st["terminalState"] = ctype
            out = self._commit(rt, cur, new, "MODIFIED")
        self._run_hooks(
            WriteInfo("update", "jobsets", "status", namespace, name, out, "jobset-controller", self)
        )
        return _clone(out)

    # --- custom resources: schemas ------------------------------------------------------------

    def _check_custom(self, req: Request, obj: JSON) -> JSON:
        """The apiextensions server's decoding of a custom resource: unknown
        fields pruned (refused with fieldValidation=Strict), defaults set,
        then validated against the version's schema (422)."""
        rt = req.rt
        schema = self.schemas.get((rt.group, rt.version, rt.plural)) or {}
        errs: list[str] = []
        pruned: list[str] = []
        md = obj.get("metadata") or {}
        out = _coerce(obj, schema, "", errs, pruned, root=True)
        if pruned:
            where = "/".join(x for x in (rt.kind, md.get("namespace"), md.get("name")) if x)
            if req.query.get("fieldValidation") == "Strict":
                raise ApiError(
                    400,
                    "BadRequest",
                    f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                    f'strict decoding error: unknown field "{pruned[0]}"',
                )
            self.pruned += [(where, p) for p in pruned]
        if errs:
            what = f"{rt.kind}.{rt.group}" if rt.group else rt.kind
            shown = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
            raise ApiError(422, "Invalid", f'{what} "{md.get("name", "")}" is invalid: {shown}')
        return out  # type: ignore[no-any-return]

    # --- storage -------------------------------------------------------------------------------

    def _next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def _commit(self, rt: ResourceType, old: JSON | None, new: JSON | None, etype: str) -> JSON:
        """Store (or delete) under the lock; append the event; wake the watches."""
        rv = self._next_rv()
        store = self.objects[rt.store_key]
        if etype == "DELETED":
            assert old is not None
            obj = _clone(old)
            obj["metadata"]["resourceVersion"] = str(rv)
            md = old["metadata"]
            store.pop((md.get("namespace", ""), md["name"]), None)
            self.managed.pop((rt.group, rt.plural, md.get("namespace", ""), md["name"]), None)
        else:
            assert new is not None
            obj = new
            obj["metadata"]["resourceVersion"] = str(rv)
            md = obj["metadata"]
            store[(md.get("namespace", ""), md["name"])] = obj
        log = self.log[rt.store_key]
        if log.maxlen is not None and len(log) == log.maxlen:
            # the oldest event falls out of the history: watching from before it is 410
            self.compacted[rt.store_key] = max(self.compacted[rt.store_key], log[0].rv)
        log.append(Event(rv, etype, obj, old))
        self.lock.notify_all()
        return obj

    def _store(self, rt: ResourceType) -> dict[tuple[str, str], JSON]:
        return self.objects[rt.store_key]

    def _find_type(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self.types.get((group, version, plural))
        if rt is None:
            raise ApiError(
                404,
                "NotFound",
                f"the server could not find the requested resource ({group}/{version} {plural})",
            )
        return rt

    def _run_hooks(self, info: WriteInfo) -> None:
        for h in list(self.hooks):
            h(info)

    # --- request handling -------------------------------------------------------------------------

    def route(self, method: str, raw_path: str, headers: Any, body: bytes) -> Request:
        parts = urlsplit(raw_path)
        segs = [unquote(s) for s in parts.path.split("/") if s]
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        if not segs or segs[0] not in ("api", "apis"):
            raise ApiError(404, "NotFound", f"the server could not find the requested resource {parts.path}")
        if segs[0] == "api":
            group, version, rest = "", segs[1] if len(segs) > 1 else "", segs[2:]
        else:
            if len(segs) < 3:
                raise ApiError(404, "NotFound", "discovery is not served")
            group, version, rest = segs[1], segs[2], segs[3:]
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces" and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        if not rest:
            raise ApiError(404, "NotFound", "discovery is not served")
        rt = self._find_type(group, version, rest[0])
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if rt.namespaced and not namespace and (name or method != "GET"):
            raise ApiError(404, "NotFound", f"{rt.plural} is namespaced")
        if not rt.namespaced and namespace:
            raise ApiError(404, "NotFound", f"{rt.plural} is cluster-scoped")
        if sub and (sub != "status" or not rt.status):
            raise ApiError(404, "NotFound", f"subresource {sub} of {rt.plural} is not served")
        watch = query.get("watch") in ("true", "1")
        verb = {
            "GET": "get" if name else ("watch" if watch else "list"),
            "POST": "create",
            "PUT": "update",
            "PATCH": "patch",
            "DELETE": "delete" if name else "deletecollection",
        }.get(method)
        if verb is None:
            raise ApiError(405, "MethodNotAllowed", f"{method} is not allowed")
        ua = headers.get("User-Agent") or ""
        return Request(method, verb, rt, namespace, name, sub, query, headers, body, ua)

    def review(self, path: str, body: bytes) -> JSON | None:
        """The answer to a TokenReview or SubjectAccessReview POSTed to
        ``path``, None for any other path. As the API server: the review comes
        back with its status; a token is known or not, and a non-resource
        request is allowed when a grant names the user or one of its groups."""
        kinds = {
            "/apis/authentication.k8s.io/v1/tokenreviews": "TokenReview",
            "/apis/authorization.k8s.io/v1/subjectaccessreviews": "SubjectAccessReview",
        }
        kind = kinds.get(path.split("?")[0])
        if kind is None:
            return None
        try:
            obj = json.loads(body)
        except ValueError:
            raise ApiError(400, "BadRequest", "invalid body") from None
        if not isinstance(obj, dict) or obj.get("kind") != kind or not isinstance(obj.get("spec"), dict):
            raise ApiError(400, "BadRequest", f"expected a {kind} with a spec")
        spec = obj["spec"]
        with self.lock:
            self.reviews.append(_clone(obj))
        if kind == "TokenReview":
            known = self.tokens.get(str(spec.get("token") or ""))
            status: JSON = (
                {"authenticated": True, "user": {"username": known[0], "groups": known[1]}}
                if known
                else {"authenticated": False, "error": "invalid bearer token"}
            )
        else:
            attrs = spec.get("nonResourceAttributes") or {}
            subjects = [spec.get("user"), *(spec.get("groups") or [])]
            allowed = any(
                (s, attrs.get("path"), attrs.get("verb")) in self.non_resource_grants for s in subjects
            )
            status = {"allowed": allowed}
        return {**obj, "status": status}

    def check_faults(self, req: Request, after: bool) -> None:
        hit = None
        with self.lock:
            for f in self.faults:
                if f.after == after and f.matches(req):
                    if f.count > 0:
                        f.count -= 1
                    f.hits += 1
                    hit = f
                    break
        if hit is None:
            return
        if hit.delay:
            time.sleep(hit.delay)
        if hit.drop:
            raise DropConnection()
        if hit.status:
            err = ApiError(hit.status, _REASONS.get(hit.status, "Unknown"), f"injected fault: {hit.status}")
            if hit.retry_after is not None:
                err.headers["Retry-After"] = str(hit.retry_after)
            raise err

    def count(self, req: Request) -> None:
        with self.lock:
            self.request_counts[(req.user_agent, req.verb, req.rt.plural, req.sub)] += 1

    def _body(self, req: Request) -> Any:
        if not req.body:
            return None
        try:
            ctype = (req.headers.get("Content-Type") or "").split(";")[0].strip()
            if ctype.endswith("yaml"):
                try:
                    return json.loads(req.body)  # JSON is YAML, and most clients send it
                except ValueError:
                    return yaml.safe_load(req.body)
            return json.loads(req.body)
        except (ValueError, yaml.YAMLError) as e:
            raise ApiError(400, "BadRequest", f"invalid body: {e}") from None

    # --- verbs ------------------------------------------------------------------------------------

    def do_get(self, req: Request) -> JSON:
        with self.lock:
            obj = self._store(req.rt).get((req.namespace, req.name))
            if obj is None:
                raise _not_found(req.rt, req.name)
            return self._out(req.rt, obj)

    def _out(self, rt: ResourceType, obj: JSON) -> JSON:
        out = _clone(obj)
        out["apiVersion"] = rt.api_version
        out["kind"] = rt.kind
        return out

    def do_list(self, req: Request) -> JSON:
        lsel = parse_label_selector(req.query.get("labelSelector"))
        fsel = parse_field_selector(req.query.get("fieldSelector"))
        limit = int(req.query.get("limit") or 0)
        cont = req.query.get("continue") or ""
        with self.lock:
            list_rv = self.rv
            start_key: tuple[str, str] | None = None
            if cont:
                try:
                    token = json.loads(cont)
                    list_rv, start_key = int(token["rv"]), (token["ns"], token["name"])
                except (ValueError, KeyError, TypeError):
                    raise ApiError(400, "BadRequest", "invalid continue token") from None
                if list_rv < self.compacted[req.rt.store_key]:
                    raise ApiError(
                        410,
                        "Expired",
                        "The provided continue parameter is too old to display a consistent list result.",
                    )
            items = []
            more = None
            for key in sorted(self._store(req.rt)):
                if start_key is not None and key <= start_key:
                    continue
                obj = self._store(req.rt)[key]
                if req.namespace and key[0] != req.namespace:
                    continue
                if not selector_matches(lsel, obj["metadata"].get("labels")) or not field_matches(fsel, obj):
                    continue
                if limit and len(items) >= limit:
                    more = items[-1]["metadata"]
                    break
                items.append(self._out(req.rt, obj))
        md: JSON = {"resourceVersion": str(list_rv)}
        if more is not None:
            md["continue"] = json.dumps(
                {"rv": list_rv, "ns": more.get("namespace", ""), "name": more["name"]}
            )
        return {
            "kind": f"{req.rt.kind}List",
            "apiVersion": req.rt.api_version,
            "metadata": md,
            "items": items,
        }

    def _check_namespace(self, req: Request) -> None:
        if req.rt.namespaced:
            ns = self.objects[("", "namespaces")].get(("", req.namespace))
            if ns is None:
                raise ApiError(
                    404,
                    "NotFound",
                    f'namespaces "{req.namespace}" not found',
                    {"name": req.namespace, "kind": "namespaces"},
                )
            if req.verb == "create" and ns["metadata"].get("deletionTimestamp"):
                raise ApiError(
                    403,
                    "Forbidden",
                    f"unable to create new content in namespace {req.namespace} because it is being terminated",  # noqa: E501
                )

    def do_create(self, req: Request, obj: JSON | None = None) -> JSON:
        if obj is None:
            obj = self._body(req)
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "body must be an object")
        if req.sub:
            raise ApiError(405, "MethodNotAllowed", "create on a subresource")
        obj = _clone(obj)
        md = obj.setdefault("metadata", {})
        if not md.get("name"):
            if md.get("generateName"):
                md["name"] = md["generateName"] + "".join(
                    random.choices(string.ascii_lowercase + string.digits, k=5)
                )
            else:
                raise ApiError(
                    422,
                    "Invalid",
                    f"{req.rt.kind} is invalid: metadata.name: Required value: name or generateName is required",  # noqa: E501
                )
        if req.rt.namespaced:
            md["namespace"] = req.namespace
            if obj["metadata"].get("namespace") != req.namespace:
                raise ApiError(
                    400,
                    "BadRequest",
                    "the namespace of the object does not match the namespace on the request",
                )
        else:
            md.pop("namespace", None)
        obj["apiVersion"], obj["kind"] = req.rt.api_version, req.rt.kind
        with self.lock:
            self._check_namespace(req)
            if (md.get("namespace", ""), md["name"]) in self._store(req.rt):
                what = f"{req.rt.plural}.{req.rt.group}" if req.rt.group else req.rt.plural
                raise ApiError(
                    409,
                    "AlreadyExists",
                    f'{what} "{md["name"]}" already exists',
                    {"name": md["name"], "group": req.rt.group, "kind": req.rt.plural},
                )
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = _now()
            md.pop("resourceVersion", None)
            md.pop("deletionTimestamp", None)
            md.pop("managedFields", None)
            if req.rt.kind == "Pod":
                obj["status"] = {"phase": "Pending"}  # PrepareForCreate
            elif req.rt.status and req.rt.kind != "Node":  # a kubelet registers its Node with its status
                obj.pop("status", None)  # PrepareForCreate drops status
            if self._has_spec(req.rt):
                md["generation"] = 1
            if req.rt.kind == "Job" and req.rt.group == "batch":
                _default_job(obj)
            if req.rt.kind == "Namespace":
                md.setdefault("labels", {})["kubernetes.io/metadata.name"] = md["name"]
                obj["status"] = {"phase": "Active"}
            if req.rt.group == "events.k8s.io":
                _validate_event(obj)
            if req.rt.kind == "CustomResourceDefinition":
                obj["status"] = _crd_status(obj, [])
            if req.rt.custom:
                obj = self._check_custom(req, obj)
            out = self._commit(req.rt, None, obj, "ADDED")
            if req.rt.kind == "CustomResourceDefinition":
                self._serve_crd(out)
            result = self._out(req.rt, out)
            if req.rt.kind == "Job" and req.rt.group == "batch" and self.job_controller:
                self._job_controller(req.rt, out)
        return result

    @staticmethod
    def _has_spec(rt: ResourceType) -> bool:
        return rt.kind not in ("Namespace", "Event", "ConfigMap", "PriorityClass")

    def _precondition(self, rt: ResourceType, cur: JSON, new: JSON) -> None:
        want = (new.get("metadata") or {}).get("resourceVersion")
        if want not in (None, "") and str(want) != cur["metadata"]["resourceVersion"]:
            raise _conflict(rt, cur["metadata"]["name"])

    def _finish_update(self, req: Request, cur: JSON, new: JSON, manager: str | None = None) -> JSON:
        """Common path of update and patch: subresource rules, validation,
        generation, finalizer-driven deletion, commit."""
        rt = req.rt
        new = _clone(new)
        new["apiVersion"], new["kind"] = rt.api_version, rt.kind
        md = new.setdefault("metadata", {})
        old_md = cur["metadata"]
        if md.get("name", old_md["name"]) != old_md["name"]:
            raise ApiError(400, "BadRequest", "the name of the object does not match the name on the request")
        if req.sub == "status":
            kept = _clone(cur)
            kept["status"] = new.get("status")
            if kept["status"] is None:
                kept.pop("status")
            new = kept
            if rt.kind == "CustomResourceDefinition":
                _crd_status(new, (new.get("status") or {}).get("storedVersions") or [])
            if rt.custom:
                new = self._check_custom(req, new)
        else:
            # identity and server-owned metadata come from the stored object
            for k in ("uid", "creationTimestamp", "namespace", "deletionTimestamp", "generation", "name"):
                if k in old_md:
                    md[k] = old_md[k]
                else:
                    md.pop(k, None)
            md.pop("managedFields", None)
            if rt.status:
                if "status" in cur:
                    new["status"] = _clone(cur["status"])
                else:
                    new.pop("status", None)
            if old_md.get("deletionTimestamp"):
                added = set(md.get("finalizers") or []) - set(old_md.get("finalizers") or [])
                if added:
                    raise ApiError(
                        422,
                        "Invalid",
                        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",  # noqa: E501
                    )
            if rt.kind == "Job" and rt.group == "batch":
                _validate_job_update(cur, new)
            if (rt.group, rt.kind) == ("jobset.x-k8s.io", "JobSet"):
                _validate_jobset_update(cur, new)
            if (rt.group, rt.kind) == ("", "Pod"):
                _validate_pod_update(cur, new)
            if rt.group == "events.k8s.io":
                _validate_event(new, cur)
            if rt.kind == "CustomResourceDefinition":
                new["status"] = _crd_status(new, (cur.get("status") or {}).get("storedVersions") or [])
            if rt.custom:
                new = self._check_custom(req, new)
            if self._has_spec(rt):
                strip = ("metadata", "status", "apiVersion", "kind")
                if {k: v for k, v in cur.items() if k not in strip} != {
                    k: v for k, v in new.items() if k not in strip
                }:
                    md["generation"] = int(old_md.get("generation", 1)) + 1
        new["metadata"]["resourceVersion"] = old_md["resourceVersion"]
        if new == cur:
            return self._out(rt, cur)  # no-op writes do not bump the resourceVersion
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            out = self._commit(rt, cur, None, "DELETED")
            self._collect_garbage(rt, out, "Background")
            return self._out(rt, out)
        out = self._commit(rt, cur, new, "MODIFIED")
        result = self._out(rt, out)
        if rt.kind == "Job" and rt.group == "batch" and self.job_controller:
            self._job_controller(rt, out)
        if rt.kind == "CustomResourceDefinition":
            self._serve_crd(out)
        return result

    def do_update(self, req: Request) -> JSON:
        body = self._body(req)
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "body must be an object")
        with self.lock:
            cur = self._store(req.rt).get((req.namespace, req.name))
            if cur is None:
                raise _not_found(req.rt, req.name)
            self._precondition(req.rt, cur, body)
            return self._finish_update(req, cur, body)

    def do_patch(self, req: Request) -> JSON:
        ctype = (req.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self._body(req)
        with self.lock:
            cur = self._store(req.rt).get((req.namespace, req.name))
            if ctype == "application/apply-patch+yaml":
                return self._apply(req, cur, body)
            if cur is None:
                raise _not_found(req.rt, req.name)
            base = self._out(req.rt, cur)
            if ctype == "application/merge-patch+json":
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a merge patch must be an object")
                new = merge_patch(base, body)
                self._precondition(req.rt, cur, body)
            elif ctype == "application/strategic-merge-patch+json":
                if req.rt.custom:
                    raise ApiError(
                        415,
                        "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types include: "
                        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",  # noqa: E501
                    )
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a strategic merge patch must be an object")
                new = strategic_merge(base, body)
                self._precondition(req.rt, cur, body)
            elif ctype == "application/json-patch+json":
                if not isinstance(body, list):
                    raise ApiError(400, "BadRequest", "a JSON patch must be a list")
                new = json_patch(base, body)
                self._precondition(req.rt, cur, new)
            else:
                raise ApiError(415, "UnsupportedMediaType", f"unsupported patch type {ctype!r}")
            return self._finish_update(req, cur, new)

    def _apply(self, req: Request, cur: JSON | None, body: Any) -> JSON:
        """Server-side apply (see the module docstring for what is modelled)."""
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "an apply patch must be an object")
        manager = req.query.get("fieldManager")
        if not manager:
            raise ApiError(
                422,
                "Invalid",
                "PatchOptions.meta.k8s.io is invalid: fieldManager: Required value: is required for apply patch",  # noqa: E501
            )
        force = req.query.get("force") in ("true", "1")
        if body.get("apiVersion") != req.rt.api_version or body.get("kind") != req.rt.kind:
            raise ApiError(
                400, "BadRequest", "apiVersion and kind of an apply configuration must match the request"
            )
        if cur is None:
            if req.sub:
                raise _not_found(req.rt, req.name)
            applied = _clone(body)
            applied.setdefault("metadata", {})["name"] = req.name
            created = self.do_create(req, applied)
            key = (req.rt.group, req.rt.plural, req.namespace, req.name)
            self.managed[key] = {
                manager: _fields({k: v for k, v in body.items() if k not in ("apiVersion", "kind")})
            }
            return created
        self._precondition(req.rt, cur, body)
        if req.sub == "status":
            part = {"status": body.get("status") or {}}
        else:
            part = {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "status")}
            md = dict(part.get("metadata") or {})
            for k in ("name", "namespace", "resourceVersion", "uid"):
                md.pop(k, None)
            part["metadata"] = md
            if not md:
                part.pop("metadata")
        new_fields = _fields(part)
        key = (req.rt.group, req.rt.plural, req.namespace, req.name)
        owners = self.managed.setdefault(key, {})
        conflicts = []
        for other, paths in owners.items():
            if other == manager:
                continue
            for p in paths & new_fields:
                if _value_at(cur, p) != _value_at(part, p):
                    conflicts.append((other, p))
        if conflicts and not force:
            causes = [
                {"type": "FieldManagerConflict", "message": f'conflict with "{m}"', "field": _path_str(p)}
                for m, p in conflicts
            ]
            raise ApiError(
                409, "Conflict", f"Apply failed with {len(conflicts)} conflict(s)", {"causes": causes}
            )
        new = _clone(cur)
        # deepest first, list-map keys last (an item is found by its key)
        gone = sorted(owners.get(manager, set()) - new_fields, key=lambda p: (_is_key_leaf(p), -len(p)))
        for p in gone:
            if not any(p in paths for m, paths in owners.items() if m != manager):
                _remove_path(new, p)
        new = _apply_merge(new, part)
        owners[manager] = new_fields
        for other in list(owners):
            if other != manager:
                owners[other] -= new_fields
        new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        return self._finish_update(req, cur, new, manager)

    def do_delete(self, req: Request) -> JSON:
        opts = self._body(req) or {}
        propagation = opts.get("propagationPolicy") or req.query.get("propagationPolicy")
        pre = opts.get("preconditions") or {}
        with self.lock:
            cur = self._store(req.rt).get((req.namespace, req.name))
            if cur is None:
                raise _not_found(req.rt, req.name)
            if pre.get("uid") and pre["uid"] != cur["metadata"]["uid"]:
                raise ApiError(
                    409, "Conflict", "Precondition failed: UID in precondition does not match the object"
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != cur["metadata"]["resourceVersion"]:
                raise _conflict(req.rt, req.name)
            return self._out(req.rt, self._delete(req.rt, cur, propagation))

    def _delete(self, rt: ResourceType, cur: JSON, propagation: str | None) -> JSON:
        if propagation is None:
            # batch/v1 Jobs orphan their dependents by default (legacy); the rest: background
            propagation = "Orphan" if (rt.group, rt.kind) == ("batch", "Job") else "Background"
        if rt.kind == "Namespace":
            self._delete_namespace_contents(cur["metadata"]["name"])
        if cur["metadata"].get("finalizers"):
            if cur["metadata"].get("deletionTimestamp"):
                return cur
            new = _clone(cur)
            new["metadata"]["deletionTimestamp"] = _now()
            new["metadata"]["deletionGracePeriodSeconds"] = 0
            return self._commit(rt, cur, new, "MODIFIED")
        out = self._commit(rt, cur, None, "DELETED")
        self._collect_garbage(rt, out, propagation)
        return out

    def _collect_garbage(self, rt: ResourceType, owner: JSON, propagation: str) -> None:
        """The garbage collector, run at once: dependents of a deleted owner are
        deleted (Background/Foreground) or lose their owner reference (Orphan)."""
        uid = owner["metadata"]["uid"]
        for drt in {t.store_key: t for t in self.types.values()}.values():
            for dep in list(self._store(drt).values()):
                refs = dep["metadata"].get("ownerReferences") or []
                if not any(r.get("uid") == uid for r in refs):
                    continue
                if propagation == "Orphan":
                    new = _clone(dep)
                    new["metadata"]["ownerReferences"] = [r for r in refs if r.get("uid") != uid]
                    if not new["metadata"]["ownerReferences"]:
                        del new["metadata"]["ownerReferences"]
                    self._commit(drt, dep, new, "MODIFIED")
                else:
                    self._delete(drt, dep, "Background")

    def _delete_namespace_contents(self, ns: str) -> None:
        for rt in {t.store_key: t for t in self.types.values() if t.namespaced}.values():
            for (ons, _), obj in list(self._store(rt).items()):
                if ons == ns:
                    self._delete(rt, obj, "Background")

    # --- the Job controller, as much as Kueue sees of it ----------------------------------------

    def _job_controller(self, rt: ResourceType, job: JSON) -> JSON:
        """On a started Job: set status.startTime (the Job controller does it
        when a Job runs, or resumes from suspension)."""
        spec, status = job.get("spec") or {}, job.get("status") or {}
        finished = any(
            c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
            for c in status.get("conditions") or []
        )
        if finished:
            return job
        new = _clone(job)
        st = new.setdefault("status", {})
        if not spec.get("suspend"):
            if not st.get("startTime"):
                st["startTime"] = _now()
            st["active"] = spec.get("parallelism", 1)
        else:
            st["active"] = 0
        if new == job:
            return job
        return self._commit(rt, job, new, "MODIFIED")

    # --- watch ------------------------------------------------------------------------------------

    def serve_watch(self, h: _Handler, req: Request) -> None:
        lsel = parse_label_selector(req.query.get("labelSelector"))
        fsel = parse_field_selector(req.query.get("fieldSelector"))
        bookmarks = req.query.get("allowWatchBookmarks") in ("true", "1")
        timeout = float(req.query.get("timeoutSeconds") or 1800)
        rv_param = req.query.get("resourceVersion") or ""
        rt = req.rt
        key = rt.store_key
        deadline = time.monotonic() + timeout

        def visible(obj: JSON | None) -> bool:
            if obj is None:
                return False
            if req.namespace and obj["metadata"].get("namespace", "") != req.namespace:
                return False
            return selector_matches(lsel, obj["metadata"].get("labels")) and field_matches(fsel, obj)

        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        # the stream's end closes the connection: say so, or the client pools
        # it and its next request meets a closed socket (RemoteDisconnected)
        h.send_header("Connection", "close")
        h.end_headers()
        sock = h.connection
        with self.lock:
            self._watch_sockets.add(sock)
            generation = self.watch_generation
        try:
            initial: list[JSON] = []
            with self.lock:
                if rv_param in ("", "0"):
                    cursor = self.rv
                    initial = [
                        {"type": "ADDED", "object": self._out(rt, o)}
                        for _, o in sorted(self._store(rt).items())
                        if visible(o)
                    ]
                else:
                    try:
                        cursor = int(rv_param)
                    except ValueError:
                        raise ApiError(400, "BadRequest", f"invalid resourceVersion {rv_param!r}") from None
                    if cursor < self.compacted[key]:
                        initial = [{"type": "ERROR", "object": _gone(cursor).status()}]
                        cursor = -1
            for ev in initial:
                _write_chunk(h, ev)
            if cursor < 0:
                return
            last_bookmark = time.monotonic()
            while True:
                out: list[JSON] = []
                with self.lock:
                    while True:
                        if self._stopping or self.watch_generation != generation:
                            return
                        log = self.log[key]
                        if (log and log[-1].rv > cursor) or time.monotonic() >= deadline:
                            break
                        if bookmarks and time.monotonic() - last_bookmark >= self.bookmark_interval:
                            break
                        self.lock.wait(timeout=min(0.25, self.bookmark_interval))
                    if cursor < self.compacted[key]:
                        out.append({"type": "ERROR", "object": _gone(cursor).status()})
                        cursor = -1
                    else:
                        pending = []
                        for ev in reversed(log):
                            if ev.rv <= cursor:
                                break
                            pending.append(ev)
                        for ev in reversed(pending):
                            now_vis, was_vis = visible(ev.obj), visible(ev.old)
                            if ev.type == "DELETED":
                                etype = "DELETED" if was_vis else None
                            elif now_vis and not was_vis:
                                etype = "ADDED"
                            elif now_vis:
                                etype = "MODIFIED"
                            elif was_vis:
                                etype = "DELETED"
                            else:
                                etype = None
                            if etype:
                                out.append({"type": etype, "object": self._out(rt, ev.obj)})
                            cursor = ev.rv
                        if (
                            not out
                            and bookmarks
                            and time.monotonic() - last_bookmark >= self.bookmark_interval
                        ):
                            cursor = max(cursor, self.rv) if not pending else cursor
                            out.append(
                                {
                                    "type": "BOOKMARK",
                                    "object": {
                                        "kind": rt.kind,
                                        "apiVersion": rt.api_version,
                                        "metadata": {"resourceVersion": str(cursor)},
                                    },
                                }
                            )
                            last_bookmark = time.monotonic()
                for ev in out:
                    _write_chunk(h, ev)
                if cursor < 0 or time.monotonic() >= deadline:
                    return
        finally:
            with self.lock:
                self._watch_sockets.discard(sock)
            try:
                h.wfile.write(b"0\r\n\r\n")
                h.wfile.flush()
            except OSError:
                pass
            h.close_connection = True


def _gone(rv: int) -> ApiError:
    return ApiError(410, "Expired", f"too old resource version: {rv}")


def _path_str(p: Path) -> str:
    return "." + ".".join(f"[{x[1]}]" if isinstance(x, tuple) else str(x) for x in p)


def _write_chunk(h: BaseHTTPRequestHandler, obj: JSON) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode() + b"\n"
    h.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
    h.wfile.flush()


# --- CustomResourceDefinitions: versions and schemas ------------------------------------------


def _crd_invalid(name: str, errs: list[str]) -> ApiError:
    shown = errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]"
    return ApiError(
        422, "Invalid", f'CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: {shown}'
    )


def _crd_status(crd: JSON, stored: list[str]) -> JSON:
    """apiextensions validation of a CRD's versions against the versions its
    objects are stored in (ValidateCustomResourceDefinition,
    ValidateCustomResourceDefinitionStoredVersions), and the status the
    server keeps: the storage version joins ``storedVersions``."""
    name = crd["metadata"]["name"]
    versions = (crd.get("spec") or {}).get("versions") or []
    names = [v.get("name") for v in versions]
    errs = []
    storage = [v["name"] for v in versions if v.get("storage")]
    if len(storage) != 1:
        errs.append(
            f"spec.versions: Invalid value: {json.dumps(versions)[:60]}...: "
            "must have exactly one version marked as storage version"
        )
    for i, sv in enumerate(stored):
        if sv not in names:
            errs.append(f'status.storedVersions[{i}]: Invalid value: "{sv}": must appear in spec.versions')
    for i, v in enumerate(versions):
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        if schema is not None:
            errs += _structural_errors(schema, f"spec.versions[{i}].schema.openAPIV3Schema")
    if errs:
        raise _crd_invalid(name, errs)
    st = _clone(crd.get("status") or {})
    stored = list(stored)
    if storage and storage[0] not in stored:
        stored.append(storage[0])
    st["storedVersions"] = stored
    st["acceptedNames"] = _clone(crd["spec"]["names"])
    st["conditions"] = [
        {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": ""},
        {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": ""},
    ]
    return st


def _structural_errors(s: Any, path: str) -> list[str]:
    """The structural schema rules a generator can break (apiextensions
    pkg/apiserver/schema validateStructuralInvariants, the main ones)."""
    if not isinstance(s, dict):
        return [f"{path}: Invalid value: must be an object"]
    errs = []
    int_or_string = s.get("x-kubernetes-int-or-string")
    preserve = s.get("x-kubernetes-preserve-unknown-fields")
    if not s.get("type") and not int_or_string and not preserve:
        errs.append(f"{path}.type: Required value: must not be empty for specified object fields")
    if s.get("properties") and s.get("additionalProperties") not in (None, False):
        errs.append(
            f"{path}.additionalProperties: Forbidden: "
            "additionalProperties and properties are mutual exclusive"
        )
    for k, sub in (s.get("properties") or {}).items():
        errs += _structural_errors(sub, f"{path}.properties[{k}]")
    if isinstance(s.get("additionalProperties"), dict):
        errs += _structural_errors(s["additionalProperties"], f"{path}.additionalProperties")
    if s.get("type") == "array":
        if not isinstance(s.get("items"), dict):
            errs.append(f"{path}.items: Required value: must be specified")
        else:
            errs += _structural_errors(s["items"], f"{path}.items")
            if s.get("x-kubernetes-list-type") == "map":
                item = s["items"]
                for key in s.get("x-kubernetes-list-map-keys") or []:
                    ks = (item.get("properties") or {}).get(key)
                    if ks is None:
                        errs.append(
                            f"{path}.x-kubernetes-list-map-keys: Invalid value: {key!r}: must be a property"
                        )
                    elif key not in (item.get("required") or []) and "default" not in ks:
                        errs.append(
                            f"{path}.items.properties[{key}]: Required value: "
                            "this property is in x-kubernetes-list-map-keys, "
                            "so it must have a default or be a required property"
                        )
    return errs


def _type_of(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(v), type(v).__name__)


def _coerce(v: Any, s: JSON, path: str, errs: list[str], pruned: list[str], root: bool = False) -> Any:
    """A value decoded through a structural schema: unknown fields pruned
    (their paths in ``pruned``), nulls dropped, defaults set, errors (with the
    apiextensions server's wording) in ``errs``."""
    if s.get("x-kubernetes-int-or-string"):
        if _type_of(v) not in ("integer", "string"):
            errs.append(
                f'{path}: Invalid value: "{_type_of(v)}": {path} in body must be of type integer,string'
            )
        elif isinstance(v, str) and s.get("pattern") and not re.match(s["pattern"], v):
            errs.append(f"{path}: Invalid value: \"{v}\": {path} in body should match '{s['pattern']}'")
        return v
    t = s.get("type")
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    if t is None:
        return v
    got = _type_of(v)
    ok = got == t or (t == "number" and got == "integer")
    if not ok:
        errs.append(f'{path}: Invalid value: "{got}": {path} in body must be of type {t}: "{got}"')
        return v
    if t == "object":
        props = s.get("properties") or {}
        addl = s.get("additionalProperties")
        out: JSON = {}
        for k, sub in v.items():
            p = f"{path}.{k}" if path else k
            if sub is None and not (props.get(k) or {}).get("nullable"):
                continue  # nulls are dropped before defaulting and validation
            if root and k in ("metadata", "apiVersion", "kind"):
                out[k] = sub
            elif k in props:
                out[k] = _coerce(sub, props[k], p, errs, pruned)
            elif isinstance(addl, dict):
                out[k] = _coerce(sub, addl, p, errs, pruned)
            elif preserve or addl is True:
                out[k] = sub
            else:
                pruned.append(p)
        for k, sub in props.items():
            if k not in out and "default" in sub:
                out[k] = _clone(sub["default"])
        for k in s.get("required") or []:
            if k not in out:
                errs.append(f"{path}.{k}: Required value" if path else f"{k}: Required value")
        if s.get("maxProperties") is not None and len(out) > s["maxProperties"]:
            errs.append(f"{path}: Too many: {len(out)}: must have at most {s['maxProperties']} items")
        return out
    if t == "array":
        items = s.get("items") or {}
        out_list = [_coerce(x, items, f"{path}[{i}]", errs, pruned) for i, x in enumerate(v)]
        if s.get("maxItems") is not None and len(out_list) > s["maxItems"]:
            errs.append(f"{path}: Too many: {len(out_list)}: must have at most {s['maxItems']} items")
        if s.get("minItems") is not None and len(out_list) < s["minItems"]:
            errs.append(
                f"{path}: Invalid value: {len(out_list)}: "
                f"{path} in body should have at least {s['minItems']} items"
            )
        if s.get("x-kubernetes-list-type") == "map":
            keys = s.get("x-kubernetes-list-map-keys") or []
            seen: set[str] = set()
            for i, x in enumerate(out_list):
                if isinstance(x, dict):
                    kv = json.dumps({k: x.get(k) for k in keys}, sort_keys=True)
                    if kv in seen:
                        errs.append(f"{path}[{i}]: Duplicate value: {kv}")
                    seen.add(kv)
        return out_list
    if t == "string":
        if s.get("enum") and v not in s["enum"]:
            allowed = ", ".join(f'"{e}"' for e in s["enum"])
            errs.append(f'{path}: Unsupported value: "{v}": supported values: {allowed}')
        if s.get("maxLength") is not None and len(v) > s["maxLength"]:
            errs.append(f"{path}: Too long: may not be more than {s['maxLength']} bytes")
        if s.get("pattern") and not re.search(s["pattern"], v):
            errs.append(f"{path}: Invalid value: \"{v}\": {path} in body should match '{s['pattern']}'")
        return v
    if t == "integer":
        if s.get("format") == "int32" and not -(2**31) <= v < 2**31:
            errs.append(f"{path}: Invalid value: {v}: {path} in body must be of type int32")
        if s.get("minimum") is not None and v < s["minimum"]:
            errs.append(
                f"{path}: Invalid value: {v}: "
                f"{path} in body should be greater than or equal to {s['minimum']}"
            )
        if s.get("maximum") is not None and v > s["maximum"]:
            errs.append(
                f"{path}: Invalid value: {v}: {path} in body should be less than or equal to {s['maximum']}"
            )
    return v


def _validate_jobset_update(old: JSON, new: JSON) -> None:
    """JobSet's webhook (pkg/webhooks/jobset_webhook.go ValidateUpdate): the
    replicated jobs are immutable, except their pod templates' labels,
    annotations, nodeSelector, tolerations and schedulingGates while the
    JobSet is suspended or being suspended (what Kueue changes)."""
    name = old["metadata"]["name"]
    o, n = old.get("spec") or {}, new.get("spec") or {}
    mutable = bool(o.get("suspend")) or bool(n.get("suspend"))

    def munged(spec: JSON) -> list[JSON]:
        out = []
        for rj in _clone(spec.get("replicatedJobs") or []):
            if mutable:
                pt = ((rj.get("template") or {}).get("spec") or {}).get("template") or {}
                for k in ("labels", "annotations"):
                    (pt.get("metadata") or {}).pop(k, None)
                if pt.get("metadata") == {}:
                    del pt["metadata"]  # Go's structs: empty metadata is no metadata
                for k in _MUTABLE_SCHEDULING:
                    (pt.get("spec") or {}).pop(k, None)
            out.append(rj)
        return out

    if munged(o) != munged(n):
        raise ApiError(
            422,
            "Invalid",
            f'JobSet.jobset.x-k8s.io "{name}" is invalid: '
            'spec.replicatedJobs: Invalid value: "array": field is immutable',
        )


# --- Job defaults and validation ---------------------------------------------------------------


def _default_job(job: JSON) -> None:
    spec = job.setdefault("spec", {})
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("completions") is None and "completions" not in spec:
        spec["completions"] = 1
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    uid = job["metadata"]["uid"]
    name = job["metadata"]["name"]
    spec.setdefault("selector", {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    tmpl = spec.setdefault("template", {})
    labels = tmpl.setdefault("metadata", {}).setdefault("labels", {})
    labels.update(
        {
            "batch.kubernetes.io/controller-uid": uid,
            "batch.kubernetes.io/job-name": name,
            "controller-uid": uid,
            "job-name": name,
        }
    )
    tspec = tmpl.setdefault("spec", {})
    if tspec.get("restartPolicy") not in ("Never", "OnFailure"):
        raise ApiError(
            422,
            "Invalid",
            f'Job.batch "{name}" is invalid: spec.template.spec.restartPolicy: '
            'Required value: valid values: "OnFailure", "Never"',
        )
    if not tspec.get("containers"):
        raise ApiError(
            422, "Invalid", f'Job.batch "{name}" is invalid: spec.template.spec.containers: Required value'
        )


_MUTABLE_SCHEDULING = ("nodeSelector", "tolerations", "schedulingGates")


def _validate_job_update(old: JSON, new: JSON) -> None:
    """pkg/apis/batch/validation ValidateJobUpdate, the part Kueue meets: the pod
    template is immutable, except nodeSelector, tolerations, labels,
    annotations and schedulingGates while the Job is suspended and not started."""
    name = old["metadata"]["name"]
    o, n = old.get("spec") or {}, new.get("spec") or {}
    if o.get("selector") != n.get("selector"):
        raise ApiError(422, "Invalid", f'Job.batch "{name}" is invalid: spec.selector: field is immutable')
    if o.get("completions") != n.get("completions"):
        # elastic Indexed Jobs: completions may follow parallelism (validateCompletions)
        elastic = (
            n.get("completionMode") == "Indexed"
            and o.get("completions") == o.get("parallelism")
            and n.get("completions") == n.get("parallelism")
        )
        if not elastic:
            raise ApiError(
                422, "Invalid", f'Job.batch "{name}" is invalid: spec.completions: field is immutable'
            )
    ot, nt = o.get("template") or {}, n.get("template") or {}
    if ot == nt:
        return

    def strip(t: JSON) -> JSON:
        t = _clone(t)
        md = t.get("metadata") or {}
        md.pop("labels", None)
        md.pop("annotations", None)
        for k in _MUTABLE_SCHEDULING:
            (t.get("spec") or {}).pop(k, None)
        return t

    mutable = bool(o.get("suspend")) and not (old.get("status") or {}).get("startTime")
    if strip(ot) != strip(nt) or not mutable:
        raise ApiError(
            422, "Invalid", f'Job.batch "{name}" is invalid: spec.template: Invalid value: field is immutable'
        )


def _validate_pod_update(old: JSON, new: JSON) -> None:
    """pkg/apis/core/validation ValidatePodUpdate, the part Kueue's
    TopologyUngater meets: the spec is immutable, except that scheduling
    gates may only be removed, and nodeSelector entries only added while the
    pod is gated (ValidatePodSchedulingGates, validateNodeSelectorMutation)."""
    name = old["metadata"]["name"]
    o, n = old.get("spec") or {}, new.get("spec") or {}
    og, ng = o.get("schedulingGates") or [], n.get("schedulingGates") or []
    if any(g not in og for g in ng):
        raise ApiError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: spec.schedulingGates: Forbidden: only deletion is allowed',
        )
    osel, nsel = o.get("nodeSelector") or {}, n.get("nodeSelector") or {}
    if osel != nsel:
        if not og or any(nsel.get(k) != v for k, v in osel.items()):
            raise ApiError(
                422,
                "Invalid",
                f'Pod "{name}" is invalid: spec.nodeSelector: Invalid value: '
                "only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            )

    def rest(spec: JSON) -> JSON:
        return {k: v for k, v in spec.items() if k not in ("schedulingGates", "nodeSelector")}

    if rest(o) != rest(n):
        raise ApiError(
            422,
            "Invalid",
            f'Pod "{name}" is invalid: spec: Forbidden: pod updates may not change fields other than '
            "`spec.containers[*].image`, `spec.schedulingGates`, `spec.nodeSelector` (additions while gated)",
        )


# --- events.k8s.io/v1 Events ------------------------------------------------------------------

# pkg/apis/core/validation/events.go (ValidateEventCreate / ValidateEventUpdate for
# events.k8s.io/v1): what a recorder can get wrong.
_EVENT_LIMITS = {"reportingInstance": 128, "action": 128, "reason": 128, "note": 1024}
_EVENT_IMMUTABLE = (
    "regarding",
    "related",
    "reason",
    "note",
    "type",
    "action",
    "reportingController",
    "reportingInstance",
    "eventTime",
)


def _validate_event(ev: JSON, old: JSON | None = None) -> None:
    name = ev["metadata"]["name"]
    errs = []
    if not ev.get("eventTime"):
        errs.append("eventTime: Required value")
    if ev.get("type") not in ("Normal", "Warning"):
        errs.append(f"type: Invalid value: {ev.get('type')!r}: has invalid value")
    for f in ("reportingController", "reportingInstance", "action", "reason"):
        if not ev.get(f):
            errs.append(f"{f}: Required value")
    for f, limit in _EVENT_LIMITS.items():
        if len(str(ev.get(f) or "")) > limit:
            errs.append(f"{f}: Invalid value: can have at most {limit} characters")
    for f in ("deprecatedFirstTimestamp", "deprecatedLastTimestamp", "deprecatedCount", "deprecatedSource"):
        if ev.get(f):
            errs.append(f"{f}: Invalid value: needs to be unset")
    series = ev.get("series")
    if series is not None and (old is None or series != old.get("series")):
        if int(series.get("count") or 0) < 2:
            errs.append("series.count: Invalid value: should be at least 2")
        if not series.get("lastObservedTime"):
            errs.append("series.lastObservedTime: Required value")
    if old is not None:
        errs += [
            f"{f}: Invalid value: field is immutable" for f in _EVENT_IMMUTABLE if ev.get(f) != old.get(f)
        ]
    if errs:
        raise ApiError(422, "Invalid", f'Event.events.k8s.io "{name}" is invalid: ' + ", ".join(errs))


# --- HTTP ------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-kube-apiserver/1.32"
    # An answer is written in two sends (headers, body): with Nagle's algorithm
    # the body waits for the client's delayed ACK, 40 ms per request on Linux.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class signature
        pass

    def _send(self, code: int, obj: JSON, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(obj, separators=(",", ":")).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _handle(self, method: str) -> None:
        api: FakeAPIServer = self.server.api  # type: ignore[attr-defined]
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        if self.path.split("?")[0] in ("/version", "/healthz", "/readyz", "/livez"):
            self._send(
                200,
                {"major": "1", "minor": "32", "gitVersion": "v1.32.0-fake"}
                if self.path.startswith("/version")
                else {"status": "ok"},
            )
            return
        try:
            reviewed = api.review(self.path, body) if method == "POST" else None
            if reviewed is not None:
                self._send(201, reviewed)
                return
            req = api.route(method, self.path, self.headers, body)
            api.count(req)
            api.check_faults(req, after=False)
            if req.verb == "watch":
                api.serve_watch(self, req)
                return
            handler = {
                "get": api.do_get,
                "list": api.do_list,
                "create": api.do_create,
                "update": api.do_update,
                "patch": api.do_patch,
                "delete": api.do_delete,
            }.get(req.verb)
            if handler is None:
                raise ApiError(405, "MethodNotAllowed", f"{req.verb} is not supported")
            out = handler(req)
            if req.verb in ("create", "update", "patch", "delete"):
                api._run_hooks(
                    WriteInfo(
                        req.verb,
                        req.rt.plural,
                        req.sub,
                        req.namespace,
                        req.name or out["metadata"]["name"],
                        out,
                        req.user_agent,
                        api,
                    )
                )
            api.check_faults(req, after=True)
            self._send(201 if req.verb == "create" else 200, out)
        except DropConnection:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except ApiError as e:
            self._send(e.code, e.status(), e.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")


__all__ = [
    "ApiError",
    "DropConnection",
    "FakeAPIServer",
    "Fault",
    "WriteInfo",
    "json_patch",
    "merge_patch",
    "parse_label_selector",
    "selector_matches",
    "strategic_merge",
]
