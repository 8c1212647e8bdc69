"""``kueue-fast controller``: run the reconciler against a cluster."""

from __future__ import annotations

import argparse
import logging
import math
import os
import re
import signal
import socket
import sys
import threading
from typing import TYPE_CHECKING

from ..api.errors import InputError
from ..api.model import Configuration
from ..engine.contract import ENGINES

if TYPE_CHECKING:
    from ..kube.client import KubeClient

log = logging.getLogger("kueue_fast.controller")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kubeconfig",
        default=None,
        metavar="PATH",
        help="kubeconfig file (default: in-cluster configuration in a pod, "
        "else $KUBECONFIG or ~/.kube/config)",
    )
    p.add_argument("--context", default=None, help="kubeconfig context (default: the current one)")
    p.add_argument(
        "--lease-namespace",
        default=os.environ.get("POD_NAMESPACE", "kueue-system"),
        help="namespace of the leader election Lease (default: $POD_NAMESPACE or kueue-system)",
    )
    p.add_argument(
        "--lease-name", default="kueue-fast-leader", help="name of the Lease (default: kueue-fast-leader)"
    )
    _bool_flag(p, "--leader-elect", True, "elect a leader with a Lease; only the leader schedules and writes")
    p.add_argument("--qps", type=float, default=300.0, help="client requests per second (default: 300)")
    p.add_argument("--burst", type=int, default=500, help="client burst (default: 500)")
    p.add_argument(
        "--metrics-bind-address",
        default="127.0.0.1:8080",
        metavar="HOST:PORT",
        help="address of /metrics, /healthz and /readyz: :8443 for every interface, [::1]:8080 for IPv6 "
        "(default: 127.0.0.1:8080, this host only; 0 disables)",
    )
    _bool_flag(
        p,
        "--metrics-secure",
        False,
        "serve /metrics over TLS, only to a bearer token allowed to get it (TokenReview and "
        "SubjectAccessReview, as Kueue); /healthz and /readyz stay open",
    )
    p.add_argument(
        "--metrics-cert-dir",
        default=None,
        metavar="DIR",
        help="with --metrics-secure: tls.crt and tls.key of the metrics server (default: a self-signed "
        "certificate made at start)",
    )
    p.add_argument(
        "--health-probe-bind-address",
        default=None,
        metavar="HOST:PORT",
        help="an address of its own for /healthz and /readyz, without /metrics (default: none, the "
        "probes are on the metrics address)",
    )
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    p.add_argument(
        "--engine",
        choices=ENGINES,
        default=None,
        help="which engine decides (default: $KUEUE_FAST_ENGINE or native)",
    )
    p.add_argument("--workers", type=int, default=32, help="concurrent writes (default: 32)")
    p.add_argument(
        "--identity", default=None, help="leader election identity (default: $POD_NAME or host name)"
    )
    p.add_argument(
        "--status-interval",
        type=float,
        default=1.0,
        help="seconds from a queue's first change to its status write (Kueue's batch period; default: 1)",
    )
    _bool_flag(p, "--events", True, "record Kubernetes Events on Workloads and Jobs, as Kueue does")
    p.add_argument(
        "--events-qps",
        type=float,
        default=100.0,
        help="Event writes per second at most, apart from the --qps budget (default: 100)",
    )
    p.add_argument("--events-burst", type=int, default=300, help="Event write burst (default: 300)")
    p.add_argument(
        "--config",
        default=None,
        metavar="PATH",
        help="Kueue's Configuration file (config.kueue.x-k8s.io); its resources section "
        "(transformations, excludeResourcePrefixes) and waitForPodsReady apply",
    )


def _parse_bool(value: str) -> bool:
    v = value.lower()
    if v in ("true", "1", "yes", "on"):
        return True
    if v in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {value!r}")


def _bool_flag(p: argparse.ArgumentParser, flag: str, default: bool, help: str) -> None:  # noqa: A002
    """``--flag``, ``--flag=false`` (Kubernetes' spelling) and ``--no-flag``."""
    dest = flag[2:].replace("-", "_")
    p.add_argument(
        flag,
        dest=dest,
        nargs="?",
        const=True,
        default=default,
        type=_parse_bool,
        metavar="true|false",
        help=f"{help} (default: {str(default).lower()})",
    )
    p.add_argument("--no-" + flag[2:], dest=dest, action="store_false", help=argparse.SUPPRESS)


_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


MAX_WORKERS = 1024  # one thread and one API connection each


def _bad(flag: str, message: str) -> InputError:
    return InputError("", "", message, source=flag)


def _check_flags(args: argparse.Namespace) -> None:
    """Flags the API server would reject later, or that would make the
    controller spin or never start, rejected now (exit status 2)."""
    for flag, value in (
        ("--qps", args.qps),
        ("--events-qps", args.events_qps),
        ("--status-interval", args.status_interval),
    ):
        if not (math.isfinite(value) and value > 0):
            raise _bad(flag, f"must be a positive number, got {value}")
    for flag, value in (("--burst", args.burst), ("--events-burst", args.events_burst)):
        if value < 1:
            raise _bad(flag, f"must be at least 1, got {value}")
    if not 1 <= args.workers <= MAX_WORKERS:
        raise _bad("--workers", f"must be 1 to {MAX_WORKERS}, got {args.workers}")
    if args.identity is not None and (not args.identity.strip() or not args.identity.isprintable()):
        raise _bad("--identity", f"{args.identity!r} is not an identity: empty or not printable")
    if args.metrics_cert_dir is not None:
        if not args.metrics_secure:
            raise _bad("--metrics-cert-dir", "needs --metrics-secure")
        from ..controller.serving import check_cert_dir

        try:
            check_cert_dir(args.metrics_cert_dir)
        except ValueError as e:
            raise _bad("--metrics-cert-dir", str(e)) from None
    ns = args.lease_namespace
    if not (len(ns) <= 63 and _DNS_LABEL.fullmatch(ns)):
        raise _bad("--lease-namespace", f"{ns!r} is not a namespace name (a DNS-1123 label)")
    name = args.lease_name
    if not (len(name) <= 253 and _DNS_SUBDOMAIN.fullmatch(name)):
        raise _bad("--lease-name", f"{name!r} is not an object name (a DNS-1123 subdomain)")


def _listen(args: argparse.Namespace) -> list[tuple[str, socket.socket]]:
    """The listening sockets of the metrics and health addresses (``0`` or
    empty: none), bound before anything else starts."""
    from ..controller.serving import listen

    out: list[tuple[str, socket.socket]] = []
    for flag, addr in (
        ("--metrics-bind-address", args.metrics_bind_address),
        ("--health-probe-bind-address", args.health_probe_bind_address),
    ):
        if addr in (None, "", "0") or (out and addr == args.metrics_bind_address):
            continue  # the probes are on the metrics address anyway
        try:
            out.append((flag, listen(addr)))
        except ValueError as e:
            for _, sock in out:
                sock.close()
            raise _bad(flag, f"{addr}: {e}") from None
    return out


def read_configuration(path: str | None) -> Configuration:
    """Kueue's Configuration file (--config), validated as the schedule command
    does; the controller applies its resources and waitForPodsReady sections,
    the others it does not are named in a warning."""
    from ..loader import parse_configuration, read_documents

    if path is None:
        return Configuration()
    docs = [d for d in read_documents([path]) if d.obj.get("kind") == "Configuration"]
    if len(docs) != 1:
        raise InputError("", "", "expected one Kueue Configuration", source=path)
    sections = ("fairSharing", "admissionFairSharing", "featureGates")
    ignored = [k for k in sections if k in docs[0].obj]
    if ignored:
        what = ", ".join(ignored)
        log.warning("%s: the controller applies resources and waitForPodsReady only; ignored: %s", path, what)
    try:
        return parse_configuration(docs[0].obj)
    except InputError as e:  # name the file and document, as schedule does
        raise InputError(e.obj, e.field, e.message, source=e.source or docs[0].where) from None


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    _check_flags(args)
    kueue_config = read_configuration(args.config)  # bad input: exit 2 before connecting
    try:
        import kubernetes  # noqa: F401
        import prometheus_client  # noqa: F401

        if args.metrics_secure and args.metrics_cert_dir is None:
            import cryptography  # noqa: F401 - the self-signed certificate
    except ImportError as e:
        print(
            f"error: {e}: kueue-fast controller needs pip install 'kueue-fast[controller]'", file=sys.stderr
        )
        return 2
    from ..kube.client import KubeClient

    client = KubeClient.from_config(
        args.kubeconfig, args.context, qps=args.qps, burst=args.burst, pool_size=args.workers + 16
    )  # reads the kubeconfig; connects at the first request
    listeners = _listen(args)  # an address taken or not of this host: exit 2 before anything starts
    try:
        return _serve(args, kueue_config, client, listeners)
    finally:
        for _, sock in listeners:  # closed by their servers, or here on an early error
            sock.close()


def _serve(
    args: argparse.Namespace,
    kueue_config: Configuration,
    client: KubeClient,
    listeners: list[tuple[str, socket.socket]],
) -> int:
    from ..controller.prometheus import HealthServer, Metrics
    from ..controller.reconciler import Controller, Options, default_identity
    from ..controller.serving import Reviewer, Secure

    opts = Options(
        resources=kueue_config.resources,
        wait_for_pods_ready=kueue_config.wait_for_pods_ready,
        engine=args.engine,
        identity=args.identity or default_identity(),
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        workers=args.workers,
        status_interval=args.status_interval,
        events=args.events,
        events_qps=args.events_qps,
        events_burst=args.events_burst,
    )
    metrics = Metrics()
    ctl = Controller(client, opts, metrics=metrics)
    servers = []
    for flag, sock in listeners:
        metrics_paths = flag == "--metrics-bind-address"
        secure = None
        if metrics_paths and args.metrics_secure:
            secure = Secure(Reviewer(client), args.metrics_cert_dir)
        srv = HealthServer(
            sock, metrics, ctl.healthy, ctl.readiness, metrics_paths=metrics_paths, secure=secure
        )
        srv.start()
        servers.append(srv)
        paths = "/metrics, /healthz, /readyz" if metrics_paths else "/healthz, /readyz"
        log.info("serving %s on %s://%s", paths, srv.scheme, srv.address)
    done = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        log.info("signal %d: stopping", signum)
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ctl.start()
    log.info(
        "kueue-fast controller %s started (%s)",
        opts.identity,
        f"leader election with the Lease {opts.lease_namespace}/{opts.lease_name}"
        if opts.leader_elect
        else "no leader election: this instance decides",
    )
    rc = 0
    was_leader = False
    while not done.wait(0.5):
        if ctl.fatal is not None:
            rc = 1
            break
        if ctl.is_leader:
            was_leader = True
        elif was_leader and opts.leader_elect and not ctl.leader:
            log.error("leader election lost: exiting")  # as client-go's controllers do
            rc = 1
            break
    ctl.stop(release_lease=True)
    for srv in servers:
        srv.stop()
    return rc
