"""``kueue-fast controller``: run the reconciler against a cluster."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading

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
    p.add_argument(
        "--leader-elect",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="elect a leader with a Lease; only the leader schedules and writes (default: on)",
    )
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
        choices=("native", "reference"),
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


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if args.qps <= 0 or args.burst < 1:
        print("error: --qps must be positive and --burst at least 1", file=sys.stderr)
        return 2
    from .kube import KubeClient
    from .metrics import HealthServer, Metrics
    from .reconciler import Controller, Options, default_identity

    client = KubeClient.from_config(
        args.kubeconfig, args.context, qps=args.qps, burst=args.burst, pool_size=args.workers + 16
    )
    opts = Options(
        engine=args.engine,
        identity=args.identity or default_identity(),
        leader_elect=args.leader_elect,
        lease_namespace=args.lease_namespace,
        lease_name=args.lease_name,
        workers=args.workers,
        status_interval=args.status_interval,
    )
    metrics = Metrics()
    ctl = Controller(client, opts, metrics=metrics)
    servers = []
    addrs = [
        a for a in (args.metrics_bind_address, args.health_probe_bind_address) if a not in (None, "", "0")
    ]
    for addr in dict.fromkeys(addrs):
        srv = HealthServer(addr, metrics, ctl.healthy, ctl.ready)
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
        "kueue-fast controller %s started (leader election %s)",
        opts.identity,
        "on" if opts.leader_elect else "off",
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
