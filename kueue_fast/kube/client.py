"""The controller's API client: the official ``kubernetes`` client underneath,
raw JSON on top, a QPS/burst token bucket in front.

Every request goes through :meth:`KubeClient.request`, which

1. waits for a token of the client-wide :class:`TokenBucket` (the official
   client has no rate limiter; client-go's is a token bucket with ``qps``
   and ``burst``, and so is this one);
2. sends the request with ``kubernetes.client.ApiClient`` (``param_serialize``
   + ``call_api``: authentication, TLS and kubeconfig handling are the
   client's) and reads the body as raw JSON, so no model objects are built;
3. backs off and retries on 429 (honouring ``Retry-After``), 5xx and lost
   connections, a bounded number of times, and raises :class:`ApiError`
   otherwise. 409 Conflict is never retried here: the caller retries on
   fresh state.

Watches (:meth:`KubeClient.watch`) stream decoded events line by line.
:meth:`KubeClient.close` ends everything at once: open watches are closed,
waits are cut short and later requests raise :class:`ClientClosed`; the
kill-and-restart tests use it to stop a controller dead at any point.
"""

from __future__ import annotations

import builtins
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from .kubeconfig import load_config

log = logging.getLogger("kueue_fast.controller.kube")  # the name operators filter on, kept across the move

JSON = dict[str, Any]

USER_AGENT = "kueue-fast-controller/0.1.0"

APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


class ApiError(Exception):
    """A request the API server answered with an error (``status`` 0: no answer)."""

    def __init__(
        self,
        status: int,
        reason: str,
        message: str,
        body: JSON | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.body = body or {}
        self.retry_after = retry_after

    @property
    def retriable(self) -> bool:
        return self.status in (0, 429) or self.status >= 500


def no_answer(e: BaseException) -> ApiError:
    """The ApiError of a request that got no answer, with the cause a reader
    can act on ("Connection refused", "Name or service not known", a TLS
    failure) rather than urllib3's wrapping of it."""
    return ApiError(0, "ConnectionError", _cause(e))


def _cause(e: BaseException) -> str:
    chain: list[BaseException] = []
    cur: BaseException | None = e
    while cur is not None and cur not in chain and len(chain) < 16:
        chain.append(cur)
        reason = getattr(cur, "reason", None)  # urllib3's MaxRetryError and ProtocolError wrap it here
        cur = reason if isinstance(reason, BaseException) else (cur.__cause__ or cur.__context__)
    for x in reversed(chain):  # the socket's or TLS's own words, innermost first
        if isinstance(x, OSError) and isinstance(x.strerror, str) and x.strerror:
            return " ".join(x.strerror.split())
    text = " ".join(str(chain[-1]).split())
    # urllib3 names the connection first ("HTTPSConnection(host='h', port=1): ..."): the caller says it
    head, sep, rest = text.partition("): ")
    if sep and "(host=" in head:
        text = rest
    return text or type(chain[-1]).__name__


def unreachable(server: str, e: ApiError) -> str:
    """One line for a request that got no answer (``e.status`` 0): the server and the cause."""
    return f"cannot reach the API server {server}: {e.message}"


class ClientClosed(Exception):
    """The client was closed (the controller is stopping or was killed)."""


# --- resources ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def path(self, namespace: str | None = None, name: str | None = None, sub: str | None = None) -> str:
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{quote(namespace, safe='')}"
        base += f"/{self.plural}"
        if name:
            base += f"/{quote(name, safe='')}"
            if sub:
                base += f"/{sub}"
        return base


KUEUE_GROUP = "kueue.x-k8s.io"
KUEUE_VERSION = "v1beta2"
KUEUE_API = f"{KUEUE_GROUP}/{KUEUE_VERSION}"

RESOURCE_FLAVORS = Resource(KUEUE_GROUP, KUEUE_VERSION, "resourceflavors", "ResourceFlavor", False)
CLUSTER_QUEUES = Resource(KUEUE_GROUP, KUEUE_VERSION, "clusterqueues", "ClusterQueue", False)
COHORTS = Resource(KUEUE_GROUP, KUEUE_VERSION, "cohorts", "Cohort", False)
LOCAL_QUEUES = Resource(KUEUE_GROUP, KUEUE_VERSION, "localqueues", "LocalQueue", True)
PRIORITY_CLASSES = Resource(
    KUEUE_GROUP, KUEUE_VERSION, "workloadpriorityclasses", "WorkloadPriorityClass", False
)
WORKLOADS = Resource(KUEUE_GROUP, KUEUE_VERSION, "workloads", "Workload", True)
ADMISSION_CHECKS = Resource(KUEUE_GROUP, KUEUE_VERSION, "admissionchecks", "AdmissionCheck", False)
TOPOLOGIES = Resource(KUEUE_GROUP, KUEUE_VERSION, "topologies", "Topology", False)
NODES = Resource("", "v1", "nodes", "Node", False)
PODS = Resource("", "v1", "pods", "Pod", True)
NAMESPACES = Resource("", "v1", "namespaces", "Namespace", False)
JOBS = Resource("batch", "v1", "jobs", "Job", True)
JOBSETS = Resource("jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", True)
POD_PRIORITY_CLASSES = Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False)
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease", True)
EVENTS = Resource("events.k8s.io", "v1", "events", "Event", True)


# --- rate limiting ----------------------------------------------------------------------------


class TokenBucket:
    """client-go's flowcontrol token bucket: ``qps`` tokens a second, at most
    ``burst`` saved. ``take`` blocks until a token is free (or ``stop`` is set)."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0:
            raise ValueError("qps must be positive")
        self.qps = float(qps)
        self.burst = max(1, int(burst))
        self.clock = clock
        self.tokens = float(self.burst)
        self.last = clock()
        self.lock = threading.Lock()

    def reserve(self) -> float:
        """Take a token now, possibly on credit; return how long to wait for it."""
        with self.lock:
            now = self.clock()
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
            self.last = now
            self.tokens -= 1.0
            if self.tokens >= 0:
                return 0.0
            return -self.tokens / self.qps

    def take(self, stop: threading.Event) -> None:
        wait = self.reserve()
        if wait > 0 and stop.wait(wait):
            raise ClientClosed()

    def try_spare(self) -> float:
        """Take a token only if one is spare: saved beyond half the burst,
        which stays for the ordinary takers (a token taken from the saved
        ones would be missed by their next burst; beyond half, it is one the
        bucket would likely lose at its cap). 0.0 when taken, else how long
        until one would be if nobody else takes any."""
        keep = self.burst // 2
        with self.lock:
            now = self.clock()
            self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
            self.last = now
            if self.tokens >= 1.0 + keep:
                self.tokens -= 1.0
                return 0.0
            return (1.0 + keep - self.tokens) / self.qps

    def take_spare(self, stop: threading.Event, patience: float) -> None:
        """A token that no ordinary taker is waiting for; after ``patience``
        seconds without one, an ordinary turn (so it is never starved)."""
        deadline = self.clock() + patience
        while True:
            wait = self.try_spare()
            if wait == 0.0:
                return
            left = deadline - self.clock()
            if left <= 0:
                break
            if stop.wait(min(wait, left)):
                raise ClientClosed()
        self.take(stop)


# --- the client ---------------------------------------------------------------------------------


RequestObserver = Callable[[str, str, int, float], None]  # verb, resource, status code, seconds


class KubeClient:
    """Raw-JSON access to the API server (see the module docstring)."""

    def __init__(
        self,
        api_client: Any,
        *,
        qps: float = 300.0,
        burst: int = 500,
        max_retries: int = 8,
        backoff_base: float = 0.05,
        backoff_max: float = 5.0,
        request_timeout: float = 30.0,
        user_agent: str = USER_AGENT,
    ) -> None:
        self.api = api_client
        self.api.user_agent = user_agent
        self.bucket = TokenBucket(qps, burst)
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.stopped = threading.Event()
        self.observers: list[RequestObserver] = []
        self._streams: set[Any] = set()
        self._lock = threading.Lock()

    # --- construction ----------------------------------------------------------------------------

    @classmethod
    def from_config(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        pool_size: int = 32,
        **kw: Any,
    ) -> KubeClient:
        """A client for the cluster :func:`load_config` finds; raises
        :class:`KubeconfigError` when the configuration cannot be used."""
        from kubernetes import client

        cfg = load_config(kubeconfig, context)
        cfg.connection_pool_maxsize = pool_size
        # The client's own retries would re-send a write blindly; we retry ourselves.
        cfg.retries = False
        return cls(client.ApiClient(cfg), **kw)

    # --- lifecycle ---------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop at once: close open watches, fail later requests."""
        self.stopped.set()
        with self._lock:
            streams = list(self._streams)
        for s in streams:
            _close_stream(s)

    @property
    def closed(self) -> bool:
        return self.stopped.is_set()

    def _observe(self, verb: str, resource: str, code: int, seconds: float) -> None:
        for fn in self.observers:
            fn(verb, resource, code, seconds)

    # --- requests ---------------------------------------------------------------------------------------

    def _send(
        self,
        method: str,
        path: str,
        query: list[tuple[str, str]],
        body: Any,
        content_type: str | None,
        timeout: float | tuple[float, float] | None,
    ) -> Any:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        elif body is not None:
            headers["Content-Type"] = "application/json"
        _, url, headers, body, _ = self.api.param_serialize(
            method=method,
            resource_path=path,
            query_params=query or None,
            header_params=headers,
            body=body,
            auth_settings=["BearerToken"],
        )
        return self.api.call_api(
            method, url, header_params=headers, body=body, _request_timeout=timeout or self.request_timeout
        )

    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        verb: str = "",
        resource: str = "",
        retries: int | None = None,
        bucket: TokenBucket | None = None,
        spare_wait: float | None = None,
    ) -> JSON:
        """One API call with rate limiting and retries; the decoded JSON answer.
        ``bucket``: a rate limit of its own instead of the client's (Events).
        ``spare_wait``: a write that must not delay the others takes a token
        nobody waits for, or its ordinary turn after that many seconds
        (TokenBucket.take_spare)."""
        q = [(k, _qs(v)) for k, v in (query or {}).items() if v is not None]
        attempts = (self.max_retries if retries is None else retries) + 1
        delay = self.backoff_base
        for attempt in range(attempts):
            if self.stopped.is_set():
                raise ClientClosed()
            if spare_wait is not None and bucket is None:
                self.bucket.take_spare(self.stopped, spare_wait)
            else:
                (bucket or self.bucket).take(self.stopped)
            t0 = time.monotonic()
            try:
                err = self._once(method, path, q, body, content_type)
                if isinstance(err, dict):
                    self._observe(verb, resource, 200, time.monotonic() - t0)
                    return err
            except ClientClosed:
                raise
            except ApiError as e:
                err = e
            self._observe(verb, resource, err.status, time.monotonic() - t0)
            if self.stopped.is_set():
                raise ClientClosed()
            if not err.retriable or attempt == attempts - 1:
                raise err
            wait = err.retry_after if err.retry_after is not None else delay * (0.5 + random.random())
            log.debug("%s %s: %s; retrying in %.2fs", method, path, err, wait)
            if self.stopped.wait(min(wait, self.backoff_max)):
                raise ClientClosed()
            delay = min(delay * 2, self.backoff_max)
        raise AssertionError("unreachable")

    def _once(
        self, method: str, path: str, q: list[tuple[str, str]], body: Any, content_type: str | None
    ) -> JSON | ApiError:
        try:
            resp = self._send(method, path, q, body, content_type, None)
            data = resp.read()
        except Exception as e:  # urllib3 / socket errors: no answer
            if self.stopped.is_set():
                raise ClientClosed() from None
            if isinstance(e, ApiError):
                raise
            return no_answer(e)
        status = resp.status
        try:
            obj = json.loads(data) if data else {}
        except ValueError:
            obj = {"message": data[:200].decode("utf-8", "replace")}
        if 200 <= status < 300:
            return obj if isinstance(obj, dict) else {"items": obj}
        retry_after = None
        ra = resp.getheader("Retry-After")
        if ra:
            try:
                retry_after = float(ra)
            except ValueError:
                retry_after = None
        body = obj if isinstance(obj, dict) else {}
        return ApiError(
            status,
            str(body.get("reason") or resp.reason or ""),
            str(body.get("message") or ""),
            body,
            retry_after,
        )

    # --- verbs -------------------------------------------------------------------------------------------

    def get(self, res: Resource, name: str, namespace: str | None = None) -> JSON:
        return self.request("GET", res.path(namespace, name), verb="get", resource=res.plural)

    def list(
        self,
        res: Resource,
        *,
        namespace: str | None = None,
        label_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
    ) -> JSON:
        query = {
            "labelSelector": label_selector,
            "limit": limit,
            "continue": continue_,
            "resourceVersion": resource_version,
        }
        return self.request("GET", res.path(namespace), query=query, verb="list", resource=res.plural)

    def list_all(
        self, res: Resource, *, label_selector: str | None = None, page_size: int = 500
    ) -> tuple[builtins.list[JSON], str]:
        """(every object, the list's resourceVersion), read in pages of
        ``page_size``; a paged list whose snapshot expired (410 on a
        continue token) starts over. Items get their apiVersion and kind."""
        items: builtins.list[JSON] = []
        cont: str | None = None
        while True:
            try:
                page = self.list(res, label_selector=label_selector, limit=page_size, continue_=cont)
            except ApiError as e:
                if e.status == 410 and cont:
                    items, cont = [], None
                    continue
                raise
            for it in page.get("items") or []:
                it.setdefault("apiVersion", res.api_version)
                it.setdefault("kind", res.kind)
                items.append(it)
            cont = (page.get("metadata") or {}).get("continue") or None
            if not cont:
                return items, str((page.get("metadata") or {}).get("resourceVersion") or "")

    def create(self, res: Resource, obj: JSON, namespace: str | None = None) -> JSON:
        return self.request("POST", res.path(namespace), body=obj, verb="create", resource=res.plural)

    def update(self, res: Resource, obj: JSON, sub: str | None = None) -> JSON:
        md = obj["metadata"]
        return self.request(
            "PUT",
            res.path(md.get("namespace"), md["name"], sub),
            body=obj,
            verb="update",
            resource=res.plural + (f"/{sub}" if sub else ""),
        )

    def patch(
        self,
        res: Resource,
        name: str,
        patch: Any,
        *,
        namespace: str | None = None,
        sub: str | None = None,
        content_type: str = MERGE,
        spare_wait: float | None = None,
    ) -> JSON:
        return self.request(
            "PATCH",
            res.path(namespace, name, sub),
            body=patch,
            content_type=content_type,
            verb="patch",
            resource=res.plural + (f"/{sub}" if sub else ""),
            spare_wait=spare_wait,
        )

    def apply(
        self,
        res: Resource,
        obj: JSON,
        *,
        field_manager: str,
        sub: str | None = None,
        force: bool = True,
        spare_wait: float | None = None,
    ) -> JSON:
        md = obj["metadata"]
        return self.request(
            "PATCH",
            res.path(md.get("namespace"), md["name"], sub),
            query={"fieldManager": field_manager, "force": "true" if force else None},
            body=obj,
            content_type=APPLY,
            verb="patch",
            resource=res.plural + (f"/{sub}" if sub else ""),
            spare_wait=spare_wait,
        )

    def delete(
        self,
        res: Resource,
        name: str,
        namespace: str | None = None,
        propagation: str | None = "Background",
        uid: str | None = None,
    ) -> JSON:
        body: JSON = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation:
            body["propagationPolicy"] = propagation
        if uid:
            body["preconditions"] = {"uid": uid}
        return self.request(
            "DELETE", res.path(namespace, name), body=body, verb="delete", resource=res.plural
        )

    # --- watch -------------------------------------------------------------------------------------------

    def watch(
        self,
        res: Resource,
        *,
        resource_version: str,
        label_selector: str | None = None,
        timeout_seconds: int = 300,
        bookmarks: bool = True,
    ) -> Iterator[JSON]:
        """Decoded watch events. Ends when the server closes the stream; raises
        ApiError when it cannot be opened, ClientClosed when the client closes."""
        if self.stopped.is_set():
            raise ClientClosed()
        self.bucket.take(self.stopped)
        query = [
            ("watch", "true"),
            ("resourceVersion", resource_version),
            ("timeoutSeconds", str(timeout_seconds)),
        ]
        if bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if label_selector:
            query.append(("labelSelector", label_selector))
        t0 = time.monotonic()
        try:
            resp = self._send("GET", res.path(), query, None, None, (10.0, timeout_seconds + 30.0))
        except Exception as e:
            if self.stopped.is_set():
                raise ClientClosed() from None
            self._observe("watch", res.plural, 0, time.monotonic() - t0)
            raise no_answer(e) from None
        self._observe("watch", res.plural, resp.status, time.monotonic() - t0)
        if resp.status != 200:
            data = resp.read()
            try:
                body = json.loads(data)
            except ValueError:
                body = {}
            raise ApiError(resp.status, str(body.get("reason", "")), str(body.get("message", "")), body)
        raw = resp.response  # the urllib3 response, read as a stream
        with self._lock:
            self._streams.add(raw)
        try:
            if self.stopped.is_set():
                raise ClientClosed()
            buf = b""
            for chunk in raw.stream(amt=None, decode_content=True):
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if line.strip():
                        yield json.loads(line)
            if buf.strip():
                yield json.loads(buf)
        except ClientClosed:
            raise
        except Exception as e:
            if self.stopped.is_set():
                raise ClientClosed() from None
            log.debug("watch %s ended: %s", res.plural, e)
        finally:
            with self._lock:
                self._streams.discard(raw)
            _close_stream(raw)


def _close_stream(raw: Any) -> None:
    try:
        raw.shutdown()  # urllib3 >= 2.3: unblocks a pending read
    except Exception:
        pass
    try:
        raw.release_conn()
    except Exception:
        pass
    try:
        raw.close()
    except Exception:
        pass


def _qs(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
