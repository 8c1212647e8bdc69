"""The HTTP server of ``/metrics``, ``/healthz`` and ``/readyz``, safe to
expose: bounded in threads, connections and time, and optionally secure as
controller-runtime's metrics server is in Kueue (``SecureServing: true``,
``filters.WithAuthenticationAndAuthorization``): TLS, and the caller's
bearer token checked with a TokenReview, then a SubjectAccessReview of a
non-resource ``get`` of the path.

One thread owns every socket: it accepts, completes TLS handshakes and reads
request heads without blocking, so an idle or slow client costs a file
descriptor and no thread. A connection whose request head is not complete
within ``request_timeout`` is closed, and beyond ``max_connections`` the
oldest is closed to make room. Complete requests go to a fixed pool of
``workers`` threads, which write the answer with a send timeout.
"""

from __future__ import annotations

import collections
import hashlib
import io
import logging
import os
import selectors
import socket
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from ..kube.client import KubeClient

log = logging.getLogger("kueue_fast.controller.serving")

JSON = dict[str, Any]


# --- addresses ----------------------------------------------------------------------------------


def parse_address(addr: str) -> tuple[str, int]:
    """``host:port`` as Go's net.SplitHostPort reads a bind address: ``:8080``
    (every interface), ``127.0.0.1:8080``, ``[::1]:8080``, ``localhost:8080``;
    port 0 picks a free one. ValueError says what is wrong."""
    if addr.startswith("["):
        end = addr.find("]")
        if end < 0:
            raise ValueError("missing ']' in address")
        host, rest = addr[1:end], addr[end + 1 :]
        if not rest.startswith(":"):
            raise ValueError("missing port in address")
        port = rest[1:]
        if ":" not in host:
            raise ValueError(f"{host!r} in brackets is not an IPv6 address")
    else:
        host, sep, port = addr.rpartition(":")
        if not sep:
            raise ValueError("missing port in address (host:port, e.g. 127.0.0.1:8080 or :8080)")
        if ":" in host:
            raise ValueError("too many colons in address (an IPv6 address goes in brackets: [::1]:8080)")
    if not (port.isascii() and port.isdigit()) or int(port) > 65535:
        raise ValueError(f"invalid port {port!r} (0 to 65535)")
    return host, int(port)


def listen(addr: str) -> socket.socket:
    """A listening socket on ``addr`` (see parse_address); ``:PORT`` listens
    on every IPv4 and IPv6 interface, as Go does. ValueError names the cause
    (not an address, no such host, an address of no interface here, a port in
    use or not allowed)."""
    host, port = parse_address(addr)
    if not host and socket.has_dualstack_ipv6():
        try:
            return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
        except OSError:  # IPv6 off in this kernel or container: IPv4 only
            pass
    try:
        infos = socket.getaddrinfo(host or "0.0.0.0", port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ValueError(f"cannot resolve {host!r}: {e.strerror}") from None
    family, _, _, _, sockaddr = infos[0]
    try:
        return socket.create_server(sockaddr, family=family)
    except OSError as e:
        why = {98: "the port is in use", 99: "no interface of this host has that address"}.get(
            e.errno or 0, e.strerror or str(e)
        )
        raise ValueError(f"cannot listen: {why}") from None


# --- limits and the loop ------------------------------------------------------------------------


class Limits(NamedTuple):
    workers: int = 4  # threads that answer complete requests
    max_connections: int = 256  # open connections; beyond, the oldest is closed
    request_timeout: float = 10.0  # from accept to a complete request head (TLS handshake included)
    write_timeout: float = 10.0  # per send of the answer
    max_head: int = 16384  # bytes of request line and headers


class _Conn:
    __slots__ = ("addr", "buf", "handshaken", "sock", "started")

    def __init__(self, sock: socket.socket, addr: Any, handshaken: bool) -> None:
        self.sock = sock
        self.addr = addr
        self.started = time.monotonic()
        self.buf = bytearray()
        self.handshaken = handshaken


Respond = Callable[[str, str, Any], tuple[int, str, bytes]]  # (path, query, headers) -> code, type, body


class BoundedHTTPServer:
    """GET-only HTTP/1.0 server on a listening socket (see the module docstring)."""

    def __init__(
        self, sock: socket.socket, respond: Respond, *, tls: ssl.SSLContext | None, limits: Limits
    ) -> None:
        self.sock = sock
        self.respond = respond
        self.tls = tls
        self.limits = limits
        sock.setblocking(False)
        self.conns: dict[socket.socket, _Conn] = {}  # insertion order: oldest first
        self.sel = selectors.DefaultSelector()
        self.sel.register(sock, selectors.EVENT_READ)
        self._wake_r, self._wake_w = socket.socketpair()
        self.sel.register(self._wake_r, selectors.EVENT_READ)
        self._stopping = False
        self.pool = ThreadPoolExecutor(limits.workers, thread_name_prefix="metrics-http")
        self.thread = threading.Thread(target=self._loop, name="metrics-http-accept", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self._stopping = True
        self._wake_w.send(b"x")
        if self.thread.is_alive():
            self.thread.join(timeout=5)
        self.pool.shutdown(wait=True, cancel_futures=True)
        for s in (self.sock, self._wake_r, self._wake_w):
            s.close()
        self.sel.close()

    def open_connections(self) -> int:
        return len(self.conns)

    def _loop(self) -> None:
        while not self._stopping:
            for key, _ in self.sel.select(timeout=min(0.5, self.limits.request_timeout / 2)):
                if key.fileobj is self.sock:
                    self._accept()
                elif key.fileobj is not self._wake_r:
                    conn = self.conns.get(key.fileobj)  # type: ignore[call-overload]
                    if conn is not None:  # not closed earlier in this round (to make room)
                        self._read(conn)
            deadline = time.monotonic() - self.limits.request_timeout
            while self.conns:
                oldest = next(iter(self.conns.values()))
                if oldest.started > deadline:
                    break
                self._close(oldest)
        for c in list(self.conns.values()):
            self._close(c)

    def _accept(self) -> None:
        for _ in range(64):  # a burst at a time; the rest at the next select
            try:
                sock, addr = self.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:  # out of file descriptors: the backlog waits
                log.warning("metrics server: accept failed: %s", e)
                return
            if len(self.conns) >= self.limits.max_connections:
                self._close(next(iter(self.conns.values())))
            sock.setblocking(False)
            if self.tls is not None:
                sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
            conn = _Conn(sock, addr, handshaken=self.tls is None)
            self.conns[sock] = conn
            self.sel.register(sock, selectors.EVENT_READ)

    def _read(self, c: _Conn) -> None:
        try:
            if not c.handshaken:
                c.sock.do_handshake()  # type: ignore[attr-defined]
                c.handshaken = True
            while True:  # drain: TLS may hold decrypted bytes the selector does not see
                data = c.sock.recv(65536)
                if not data:
                    self._close(c)
                    return
                c.buf += data
                if b"\r\n\r\n" in c.buf or b"\n\n" in c.buf:
                    break
                if len(c.buf) > self.limits.max_head:
                    self._close(c)
                    return
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError, InterruptedError):
            return  # more later
        except OSError:  # reset, TLS alert, not TLS at all
            self._close(c)
            return
        self.sel.unregister(c.sock)
        del self.conns[c.sock]
        self.pool.submit(self._answer, c)

    def _close(self, c: _Conn) -> None:
        if self.conns.pop(c.sock, None) is not None:
            self.sel.unregister(c.sock)
        c.sock.close()

    def _answer(self, c: _Conn) -> None:
        try:
            c.sock.settimeout(self.limits.write_timeout)
            _Handler(c.sock, c.addr, self, bytes(c.buf))
        except Exception as e:  # a client gone or too slow to read: nothing to answer
            log.debug("metrics server: %s: %s", c.addr, e)
        finally:
            c.sock.close()


class _Handler(BaseHTTPRequestHandler):
    """One request whose head the loop has read (rfile), answered by
    BoundedHTTPServer.respond (wfile: the socket, with a send timeout)."""

    server: BoundedHTTPServer  # type: ignore[assignment]

    def __init__(self, sock: socket.socket, addr: Any, server: BoundedHTTPServer, head: bytes) -> None:
        self._head = head
        super().__init__(sock, addr, server)  # type: ignore[arg-type]

    def setup(self) -> None:
        self.connection = self.request
        self.rfile = io.BytesIO(self._head)
        self.wfile = self.connection.makefile("wb")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - base class signature
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server API
        path, _, query = self.path.partition("?")
        code, ctype, body = self.server.respond(path, query, self.headers)
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()


# --- the secure mode ------------------------------------------------------------------------------


class Reviewer:
    """Who may read: the bearer token's user from a TokenReview, then a
    SubjectAccessReview of a non-resource request (path, verb), as
    controller-runtime's filters.WithAuthenticationAndAuthorization delegates
    to the API server. Answers are cached as its delegating authenticator
    (1 minute) and authorizer (allowed 5 minutes, denied 30 s) cache them;
    the reviews have a rate limit of their own, apart from the decisions'."""

    AUTHN_TTL = 60.0
    ALLOW_TTL = 300.0
    DENY_TTL = 30.0
    MAX_CACHED = 1024

    def __init__(self, client: KubeClient, qps: float = 20.0, burst: int = 50) -> None:
        from ..kube.client import TokenBucket

        self.client = client
        self.bucket = TokenBucket(qps, burst)
        # key -> (expiry, answer); the oldest dropped beyond MAX_CACHED
        self._cache: collections.OrderedDict[tuple[str, ...], tuple[float, tuple[int, Any]]] = (
            collections.OrderedDict()
        )
        self._lock = threading.Lock()

    def check(self, authorization: str | None, path: str, verb: str) -> tuple[int, str]:
        """(0, user name) when allowed, else (HTTP status, why)."""
        scheme, _, token = (authorization or "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return 401, "Unauthorized: a bearer token is needed"
        key = hashlib.sha256(token.encode()).hexdigest()
        code, user = self._answer(("authn", key), lambda: self._authenticate(token), self.AUTHN_TTL)
        if code:
            return code, user
        code, why = self._answer(
            ("authz", key, path, verb), lambda: self._authorize(user, path, verb), self.ALLOW_TTL
        )
        return (code, why) if code else (0, user["username"])

    def _answer(
        self, key: tuple[str, ...], review: Callable[[], tuple[int, Any] | None], ok_ttl: float
    ) -> tuple[int, Any]:
        now = time.monotonic()
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            return hit[1]
        answer = review()
        if answer is None:  # the API server did not answer: nothing cached
            return 503, "Service Unavailable: the token could not be reviewed"
        ttl = ok_ttl if answer[0] == 0 else self.DENY_TTL
        with self._lock:
            self._cache[key] = (now + ttl, answer)
            while len(self._cache) > self.MAX_CACHED:
                self._cache.popitem(last=False)
        return answer

    def _create(self, plural: str, group: str, obj: JSON) -> JSON | None:
        from ..kube.client import ApiError, ClientClosed

        try:
            return self.client.request(
                "POST",
                f"/apis/{group}/v1/{plural}",
                body=obj,
                verb="create",
                resource=plural,
                retries=1,
                bucket=self.bucket,
            )
        except (ApiError, ClientClosed) as e:
            log.warning("metrics: %s failed: %s", obj["kind"], e)
            return None

    def _authenticate(self, token: str) -> tuple[int, Any] | None:
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}
        out = self._create("tokenreviews", "authentication.k8s.io", review)
        if out is None:
            return None
        status = out.get("status") or {}
        if not status.get("authenticated"):
            return 401, "Unauthorized: " + str(status.get("error") or "the token is not valid")
        u = status.get("user") or {}
        return 0, {
            "username": str(u.get("username") or ""),
            "groups": list(u.get("groups") or []),
            "uid": str(u.get("uid") or ""),
            "extra": u.get("extra") or {},
        }

    def _authorize(self, user: JSON, path: str, verb: str) -> tuple[int, Any] | None:
        spec: JSON = {
            "user": user["username"],
            "groups": user["groups"],
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user["uid"]:
            spec["uid"] = user["uid"]
        if user["extra"]:
            spec["extra"] = user["extra"]
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        out = self._create("subjectaccessreviews", "authorization.k8s.io", review)
        if out is None:
            return None
        if (out.get("status") or {}).get("allowed"):
            return 0, ""
        return 403, f'Forbidden: user "{user["username"]}" cannot {verb} path "{path}"'


@dataclass(frozen=True)
class Secure:
    """The secure mode: TLS with the certificate in ``cert_dir`` (``tls.crt``
    and ``tls.key``, as controller-runtime's CertDir), else a self-signed one
    made at start (as controller-runtime does without one), and the reviewer."""

    reviewer: Reviewer
    cert_dir: str | None = None

    def tls_context(self) -> ssl.SSLContext:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # as Kueue's default TLS options
        if self.cert_dir is not None:
            cert, key = (os.path.join(self.cert_dir, n) for n in ("tls.crt", "tls.key"))
            try:
                ctx.load_cert_chain(cert, key)
            except (OSError, ssl.SSLError) as e:
                raise ValueError(f"cannot load {cert} and {key}: {e}") from None
            return ctx
        _load_self_signed(ctx)
        return ctx


def check_cert_dir(cert_dir: str) -> None:
    """ValueError unless ``cert_dir`` holds a usable tls.crt and tls.key."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    cert, key = (os.path.join(cert_dir, n) for n in ("tls.crt", "tls.key"))
    try:
        ctx.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError) as e:
        raise ValueError(f"cannot load {cert} and {key}: {e.strerror or e}") from None


def _load_self_signed(ctx: ssl.SSLContext) -> None:
    """self_signed_pem() loaded from memory (a memfd: the Deployment's root
    filesystem is read-only)."""
    pem = self_signed_pem()
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("kueue-fast-metrics-tls")
        try:
            os.write(fd, pem)
            ctx.load_cert_chain(f"/proc/self/fd/{fd}")
        finally:
            os.close(fd)
        return
    with tempfile.NamedTemporaryFile(suffix=".pem") as f:  # pragma: no cover - not Linux
        f.write(pem)
        f.flush()
        ctx.load_cert_chain(f.name)


def self_signed_pem() -> bytes:
    """A certificate for localhost, valid a year, and its P-256 key, as PEM."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"kueue-fast-metrics@{int(time.time())}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    sans = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=365))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM) + key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
