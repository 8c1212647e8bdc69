"""``kueue-fast controller``: run the reconciler against a cluster."""

from __future__ import annotations

import argparse
import logging
import os
import re
import signal
import sys
import threading

from ..engine_contract import ENGINES
from ..model import Configuration

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
        default=":8080",
        help="address of /metrics, /healthz and /readyz (default: :8080; 0 disables)",
    )
    p.add_argument(
        "--health-probe-bind-address",
        default=None,
        help="a second address for /healthz and /readyz (default: the metrics address)",
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
        "--status-interval", type=float, default=1.0, help="seconds between queue status updates (default: 1)"
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


def _check_flags(args: argparse.Namespace) -> None:
    """Flags the API server would reject later, rejected now (exit status 2)."""
    from ..errors import InputError

    def bad(flag: str, message: str) -> InputError:
        return InputError("", "", message, source=flag)

    if args.qps <= 0 or args.burst < 1:
        raise bad("--qps/--burst", "--qps must be positive and --burst at least 1")
    if args.events_qps <= 0 or args.events_burst < 1:
        raise bad(
            "--events-qps/--events-burst", "--events-qps must be positive and --events-burst at least 1"
        )
    if args.workers < 1:
        raise bad("--workers", "must be at least 1")
    ns = args.lease_namespace
    if not (len(ns) <= 63 and _DNS_LABEL.fullmatch(ns)):
        raise bad("--lease-namespace", f"{ns!r} is not a namespace name (a DNS-1123 label)")
    name = args.lease_name
    if not (len(name) <= 253 and _DNS_SUBDOMAIN.fullmatch(name)):
        raise bad("--lease-name", f"{name!r} is not an object name (a DNS-1123 subdomain)")


def read_configuration(path: str | None) -> Configuration:
    """Kueue's Configuration file (--config), validated as the schedule command
    does; the controller applies its resources and waitForPodsReady sections,
    the others it does not are named in a warning."""
    from ..errors import InputError
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
    except ImportError as e:
        print(
            f"error: {e}: kueue-fast controller needs pip install 'kueue-fast[controller]'", file=sys.stderr
        )
        return 2
    from .kube import KubeClient
    from .metrics import HealthServer, Metrics
    from .reconciler import Controller, Options, default_identity

    client = KubeClient.from_config(
        args.kubeconfig, args.context, qps=args.qps, burst=args.burst, pool_size=args.workers + 16
    )
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
    addrs = [
        a for a in (args.metrics_bind_address, args.health_probe_bind_address) if a not in (None, "", "0")
    ]
    for addr in dict.fromkeys(addrs):
        srv = HealthServer(addr, metrics, ctl.healthy, ctl.readiness)
        srv.start()
        servers.append(srv)
        log.info("serving /metrics, /healthz, /readyz on %s", srv.address)
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
