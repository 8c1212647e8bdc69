"""Prometheus metrics with Kueue's names and labels, and the HTTP endpoint
that serves them with ``/healthz`` and ``/readyz`` (on serving.py's bounded,
optionally secure server).

Each controller has its own ``CollectorRegistry`` (tests run several in one
process). Kueue's metrics (``pkg/metrics/metrics.go``) that kueue-fast
produces keep Kueue's names and label names; the ``kueue_fast_*`` ones are
the controller's own (API requests, write queue, cycle time, leadership).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .serving import BoundedHTTPServer, Limits, Secure, listen

log = logging.getLogger("kueue_fast.controller.metrics")

_WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 28800)
_WRITE_VERBS = frozenset(("create", "update", "patch", "delete"))
_CYCLE_BUCKETS = (0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        # long: one declaration per metric, Kueue's name and help text each, nothing that branches
        r = self.registry = registry or CollectorRegistry()
        self.admission_attempts_total = Counter(
            "kueue_admission_attempts_total",
            "Total number of attempts to admit workloads; result is success or inadmissible",
            ["result"],
            registry=r,
        )
        self.admission_attempt_duration_seconds = Histogram(
            "kueue_admission_attempt_duration_seconds",
            "Latency of an admission attempt (a scheduling cycle)",
            ["result"],
            buckets=_CYCLE_BUCKETS,
            registry=r,
        )
        self.pending_workloads = Gauge(
            "kueue_pending_workloads",
            "Number of pending workloads, per cluster_queue and status (active|inadmissible)",
            ["cluster_queue", "status"],
            registry=r,
        )
        self.quota_reserved_workloads_total = Counter(
            "kueue_quota_reserved_workloads_total",
            "Total number of quota reserved workloads per cluster_queue",
            ["cluster_queue"],
            registry=r,
        )
        self.quota_reserved_wait_time_seconds = Histogram(
            "kueue_quota_reserved_wait_time_seconds",
            "Time between a workload creation or requeue and its quota reservation, per cluster_queue",
            ["cluster_queue"],
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self.admitted_workloads_total = Counter(
            "kueue_admitted_workloads_total",
            "Total number of admitted workloads per cluster_queue",
            ["cluster_queue"],
            registry=r,
        )
        self.admission_wait_time_seconds = Histogram(
            "kueue_admission_wait_time_seconds",
            "Time between a workload creation or requeue and its admission, per cluster_queue",
            ["cluster_queue"],
            buckets=_WAIT_BUCKETS,
            registry=r,
        )
        self.evicted_workloads_total = Counter(
            "kueue_evicted_workloads_total",
            "Number of evicted workloads per cluster_queue and reason",
            ["cluster_queue", "reason"],
            registry=r,
        )
        self.preempted_workloads_total = Counter(
            "kueue_preempted_workloads_total",
            "Number of preempted workloads per preempting_cluster_queue and reason",
            ["preempting_cluster_queue", "reason"],
            registry=r,
        )
        self.reserving_active_workloads = Gauge(
            "kueue_reserving_active_workloads",
            "Number of workloads that reserve quota, per cluster_queue",
            ["cluster_queue"],
            registry=r,
        )
        self.admitted_active_workloads = Gauge(
            "kueue_admitted_active_workloads",
            "Number of admitted workloads that are active, per cluster_queue",
            ["cluster_queue"],
            registry=r,
        )
        self.cluster_queue_status = Gauge(
            "kueue_cluster_queue_status",
            "The status of the ClusterQueue (pending|active|terminating)",
            ["cluster_queue", "status"],
            registry=r,
        )
        self.cluster_queue_resource_reservation = Gauge(
            "kueue_cluster_queue_resource_reservation",
            "Total quantity of a resource reserved in a flavor",
            ["cohort", "cluster_queue", "flavor", "resource"],
            registry=r,
        )
        self.cluster_queue_resource_usage = Gauge(
            "kueue_cluster_queue_resource_usage",
            "Total quantity of a resource used in a flavor",
            ["cohort", "cluster_queue", "flavor", "resource"],
            registry=r,
        )
        self.cluster_queue_nominal_quota = Gauge(
            "kueue_cluster_queue_nominal_quota",
            "Nominal quota of a resource in a flavor",
            ["cohort", "cluster_queue", "flavor", "resource"],
            registry=r,
        )
        self.cluster_queue_borrowing_limit = Gauge(
            "kueue_cluster_queue_borrowing_limit",
            "Borrowing limit of a resource in a flavor",
            ["cohort", "cluster_queue", "flavor", "resource"],
            registry=r,
        )
        self.cluster_queue_lending_limit = Gauge(
            "kueue_cluster_queue_lending_limit",
            "Lending limit of a resource in a flavor",
            ["cohort", "cluster_queue", "flavor", "resource"],
            registry=r,
        )
        self.local_queue_pending_workloads = Gauge(
            "kueue_local_queue_pending_workloads",
            "Number of pending workloads per local_queue",
            ["name", "namespace", "status"],
            registry=r,
        )
        self.local_queue_reserving_active_workloads = Gauge(
            "kueue_local_queue_reserving_active_workloads",
            "Number of workloads reserving quota per local_queue",
            ["name", "namespace"],
            registry=r,
        )
        # the controller's own
        self.api_requests_total = Counter(
            "kueue_fast_api_requests_total",
            "API requests by verb, resource and status code",
            ["verb", "resource", "code"],
            registry=r,
        )
        self.api_request_duration_seconds = Histogram(
            "kueue_fast_api_request_duration_seconds",
            "API request latency by verb",
            ["verb"],
            buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30),
            registry=r,
        )
        self.api_writes_total = Counter(
            "kueue_fast_api_writes_total",
            "API writes (create, update, patch, delete) by purpose: decision (Workloads, Jobs, queue "
            "statuses, finalizers, TAS pods ungated), event, lease",
            ["purpose"],
            registry=r,
        )
        self.events_total = Counter(
            "kueue_fast_events_total",
            "Events recorded, by type and reason (occurrences: a series is one Event with a count)",
            ["type", "reason"],
            registry=r,
        )
        self.events_dropped_total = Counter(
            "kueue_fast_events_dropped_total",
            "Event writes dropped because more than the queue's bound waited for --events-qps",
            registry=r,
        )
        self.event_queue_depth = Gauge(
            "kueue_fast_event_queue_depth", "Event writes waiting for the Event rate limit", registry=r
        )
        self.write_queue_depth = Gauge(
            "kueue_fast_write_queue_depth", "Writes waiting for the writer", registry=r
        )
        self.write_failures_total = Counter(
            "kueue_fast_write_failures_total", "Writes that failed for good, by operation", ["op"], registry=r
        )
        self.cycles_total = Counter("kueue_fast_scheduling_cycles_total", "Scheduling cycles run", registry=r)
        self.cycle_duration_seconds = Histogram(
            "kueue_fast_scheduling_cycle_duration_seconds",
            "Duration of one scheduling cycle",
            buckets=_CYCLE_BUCKETS,
            registry=r,
        )
        self.is_leader = Gauge("kueue_fast_is_leader", "1 when this instance is the leader", registry=r)
        self.engine_rebuilds_total = Counter(
            "kueue_fast_engine_rebuilds_total", "Engine (re)builds from the cluster's Workloads", registry=r
        )

    def observe_request(self, verb: str, resource: str, code: int, seconds: float) -> None:
        self.api_requests_total.labels(verb, resource, str(code)).inc()
        self.api_request_duration_seconds.labels(verb).observe(seconds)
        if verb in _WRITE_VERBS:
            purpose = {"events": "event", "leases": "lease"}.get(resource, "decision")
            self.api_writes_total.labels(purpose).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def readyz(checks: list[tuple[str, str]], verbose: bool = False) -> tuple[bytes, int]:
    """The body and status code of ``/readyz`` (k8s.io/apiserver healthz format)."""
    failed = any(err for _, err in checks)
    if not failed and not verbose:
        return b"ok", 200
    lines = [f"[-]{name} failed: {err}" if err else f"[+]{name} ok" for name, err in checks]
    lines.append("readyz check failed" if failed else "readyz check passed")
    return ("\n".join(lines) + "\n").encode(), (503 if failed else 200)


class HealthServer:
    """``/metrics``, ``/healthz`` (the scheduling loop is alive) and ``/readyz``
    on one address (``metrics_paths=False``: the probes only, for
    ``--health-probe-bind-address``). ``readiness`` gives named checks,
    ``(name, "")`` when one passes, ``(name, why)`` when not; ``/readyz``
    answers as the Kubernetes components do: ``ok``, or 503 with ``[+]name ok``
    / ``[-]name failed: why`` lines (``?verbose`` lists them when all pass too).

    ``secure``: TLS, and ``/metrics`` only for a bearer token allowed to get
    it (serving.Reviewer); the probes stay open, as the API server's
    ``system:public-info-viewer`` role leaves ``/healthz``, ``/livez`` and
    ``/readyz`` to anyone: the kubelet sends no token. Threads, connections
    and time are bounded (serving.Limits)."""

    def __init__(
        self,
        address: str | socket.socket,
        metrics: Metrics,
        healthy: Callable[[], bool],
        readiness: Callable[[], list[tuple[str, str]]],
        *,
        metrics_paths: bool = True,
        secure: Secure | None = None,
        limits: Limits | None = None,
    ) -> None:
        limits = limits or Limits()
        self.metrics = metrics
        self.healthy = healthy
        self.readiness = readiness
        self.metrics_paths = metrics_paths
        self.reviewer = secure.reviewer if secure else None
        self.scheme = "https" if secure else "http"
        self.limits = limits
        sock = listen(address) if isinstance(address, str) else address
        tls = secure.tls_context() if secure else None
        self.server = BoundedHTTPServer(sock, self.respond, tls=tls, limits=limits)

    def respond(self, path: str, query: str, headers: Any) -> tuple[int, str, bytes]:
        if path in ("/healthz", "/livez"):
            ok = self.healthy()
            return (200 if ok else 500), "text/plain", (b"ok" if ok else b"unhealthy")
        if path == "/readyz":
            body, code = readyz(self.readiness(), verbose="verbose" in query)
            return code, "text/plain; charset=utf-8", body
        if path == "/metrics" and self.metrics_paths:
            if self.reviewer is not None:
                code, why = self.reviewer.check(headers.get("Authorization"), path, "get")
                if code:
                    return code, "text/plain; charset=utf-8", why.encode()
            return 200, CONTENT_TYPE_LATEST, self.metrics.exposition()
        return 404, "text/plain", b"not found"

    @property
    def address(self) -> str:
        host, port = self.server.sock.getsockname()[:2]
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def open_connections(self) -> int:
        return self.server.open_connections()

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()
