"""The controller's /metrics, /healthz and /readyz server on real sockets:
idle and slow clients hold no thread, and the secure mode checks the
caller's bearer token with TokenReview and SubjectAccessReview as
controller-runtime's metrics server does (filters.WithAuthenticationAndAuthorization),
against the in-process API server."""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_apiserver import FakeAPIServer
from kf_harness import wait_for

from kueue_fast.commands import manifests
from kueue_fast.controller.prometheus import HealthServer, Metrics


def _server(**kw: object) -> HealthServer:
    srv = HealthServer("127.0.0.1:0", Metrics(), lambda: True, lambda: [("informers-synced", "")], **kw)  # type: ignore[arg-type]
    srv.start()
    return srv


def _get(srv: HealthServer, path: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    host, _, port = srv.address.rpartition(":")
    if srv.scheme == "https":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE  # the self-signed certificate, as Prometheus' insecure_skip_verify
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(
            host, int(port), timeout=10, context=ctx
        )
    else:
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def _connect(srv: HealthServer) -> socket.socket:
    host, _, port = srv.address.rpartition(":")
    return socket.create_connection((host, int(port)), timeout=10)


def test_idle_connections_hold_no_thread() -> None:
    srv = _server()
    idle: list[socket.socket] = []
    try:
        assert _get(srv, "/healthz") == (200, b"ok")
        before = threading.active_count()
        idle = [_connect(srv) for _ in range(300)]
        # every idle socket is accepted (the server sees all of them) and /healthz still answers
        wait_for(
            lambda: srv.open_connections() >= 300 or srv.open_connections() == srv.limits.max_connections
        )
        assert _get(srv, "/healthz") == (200, b"ok")
        assert threading.active_count() <= before + srv.limits.workers
    finally:
        for s in idle:
            s.close()
        srv.stop()


def test_a_slow_client_is_timed_out() -> None:
    from kueue_fast.controller.serving import Limits

    srv = _server(limits=Limits(request_timeout=0.3))
    try:
        s = _connect(srv)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")  # never the blank line that ends the head
        assert s.recv(1) == b""  # the server closed it (the client's own timeout is 10 s)
        s.close()
        assert _get(srv, "/healthz") == (200, b"ok")
    finally:
        srv.stop()


def test_connections_beyond_the_bound_close_the_oldest() -> None:
    from kueue_fast.controller.serving import Limits

    srv = _server(limits=Limits(max_connections=8))
    socks: list[socket.socket] = []
    try:
        socks = [_connect(srv) for _ in range(8)]
        wait_for(lambda: srv.open_connections() == 8)
        assert _get(srv, "/healthz") == (200, b"ok")  # a new client is served
        assert socks[0].recv(1) == b""  # the oldest idle one made room
    finally:
        for s in socks:
            s.close()
        srv.stop()


def test_a_health_only_server_does_not_serve_metrics() -> None:
    srv = _server(metrics_paths=False)
    try:
        assert _get(srv, "/healthz") == (200, b"ok")
        assert _get(srv, "/readyz") == (200, b"ok")
        assert _get(srv, "/metrics")[0] == 404
    finally:
        srv.stop()


# --- the secure mode ------------------------------------------------------------------------

READER = "system:serviceaccount:monitoring:prometheus"
OTHER = "system:serviceaccount:default:someone"


@pytest.fixture
def api() -> Iterator[FakeAPIServer]:
    with FakeAPIServer() as api:
        api.tokens = {"reader-token": (READER, ["system:serviceaccounts"]), "other-token": (OTHER, [])}
        api.non_resource_grants = {(READER, "/metrics", "get")}
        yield api


@pytest.fixture
def secure(api: FakeAPIServer, tmp_path: Path) -> Iterator[HealthServer]:
    from kueue_fast.controller.serving import Reviewer, Secure
    from kueue_fast.kube.client import KubeClient

    client = KubeClient.from_config(api.write_kubeconfig(str(tmp_path / "kc")))
    srv = _server(secure=Secure(Reviewer(client)))  # no certificate directory: a self-signed one
    try:
        yield srv
    finally:
        srv.stop()
        client.close()


def test_secure_metrics_need_a_token_allowed_to_get_them(secure: HealthServer, api: FakeAPIServer) -> None:
    assert secure.scheme == "https"
    assert _get(secure, "/metrics")[0] == 401
    assert _get(secure, "/metrics", {"Authorization": "Bearer wrong"})[0] == 401
    assert _get(secure, "/metrics", {"Authorization": "Bearer other-token"})[0] == 403
    code, body = _get(secure, "/metrics", {"Authorization": "Bearer reader-token"})
    assert code == 200 and b"kueue_admission_attempts_total" in body
    # the review asked what the filter asks: a non-resource get of the path, for the token's user
    sar = api.reviews[-1]
    assert sar["kind"] == "SubjectAccessReview"
    assert sar["spec"]["user"] == READER and sar["spec"]["groups"] == ["system:serviceaccounts"]
    assert sar["spec"]["nonResourceAttributes"] == {"path": "/metrics", "verb": "get"}


def test_secure_health_probes_stay_open(secure: HealthServer) -> None:
    # as the API server's system:public-info-viewer: probes carry no token
    assert _get(secure, "/healthz") == (200, b"ok")
    assert _get(secure, "/readyz") == (200, b"ok")


def test_a_certificate_directory_is_served(api: FakeAPIServer, tmp_path: Path) -> None:
    """--metrics-cert-dir: tls.crt and tls.key, as controller-runtime's CertDir."""
    from kueue_fast.controller.serving import Reviewer, Secure, self_signed_pem
    from kueue_fast.kube.client import KubeClient

    pem = self_signed_pem()
    (tmp_path / "tls.crt").write_bytes(pem)
    (tmp_path / "tls.key").write_bytes(pem)
    client = KubeClient.from_config(api.write_kubeconfig(str(tmp_path / "kc")))
    srv = _server(secure=Secure(Reviewer(client), str(tmp_path)))
    try:
        host, _, port = srv.address.rpartition(":")
        with socket.create_connection((host, int(port)), timeout=10) as raw:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            with ctx.wrap_socket(raw) as tls:
                served = tls.getpeercert(binary_form=True)
        assert served is not None and ssl.DER_cert_to_PEM_cert(served).encode() in pem.replace(b"\r", b"")
        assert _get(srv, "/metrics", {"Authorization": "Bearer reader-token"})[0] == 200
    finally:
        srv.stop()
        client.close()


def test_reviews_are_cached(secure: HealthServer, api: FakeAPIServer) -> None:
    for _ in range(5):
        assert _get(secure, "/metrics", {"Authorization": "Bearer reader-token"})[0] == 200
    assert [r["kind"] for r in api.reviews] == ["TokenReview", "SubjectAccessReview"]


def test_plain_http_to_the_secure_port_is_refused(secure: HealthServer) -> None:
    s = _connect(secure)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except ConnectionResetError:  # the TLS layer's answer to what is not a handshake
        pass
    s.close()
    assert b"kueue_" not in data


def test_deployment_serves_metrics_securely_and_probes_on_their_own_port() -> None:
    """The Deployment's flags parse with the controller's own parser; the
    probes and the Service use the ports those flags bind, metrics need TLS
    and a token, and the RBAC lets the controller review tokens and a
    reader get /metrics (Kueue's metrics-auth-role and metrics-reader)."""
    from kueue_fast.commands.cli import command_parser
    from kueue_fast.controller.serving import parse_address

    docs = manifests.deploy(image="example/kueue-fast:1")
    dep = next(d for d in docs if d["kind"] == "Deployment")
    container = dep["spec"]["template"]["spec"]["containers"][0]
    args = command_parser("controller").parse_args(container["args"][1:])
    assert args.metrics_secure is True
    metrics_port = parse_address(args.metrics_bind_address)[1]
    health_port = parse_address(args.health_probe_bind_address)[1]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"https": metrics_port, "health": health_port}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    svc = next(d for d in docs if d["kind"] == "Service")
    assert svc["spec"]["ports"] == [{"name": "https", "port": metrics_port, "targetPort": "https"}]

    roles = {d["metadata"]["name"]: d for d in docs if d["kind"] == "ClusterRole"}
    rules = roles["kueue-fast"]["rules"]
    assert {
        "apiGroups": ["authentication.k8s.io"],
        "resources": ["tokenreviews"],
        "verbs": ["create"],
    } in rules
    assert {
        "apiGroups": ["authorization.k8s.io"],
        "resources": ["subjectaccessreviews"],
        "verbs": ["create"],
    } in rules
    assert roles["kueue-fast-metrics-reader"]["rules"] == [
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]}
    ]
