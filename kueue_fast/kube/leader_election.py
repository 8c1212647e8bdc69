"""Leader election with a coordination.k8s.io/v1 Lease.

The algorithm of client-go's ``leaderelection`` package (the Python client's
own copy uses the process-wide default client and the wall clock, so it
cannot share our rate-limited client nor be driven by a test clock):

* every ``retry_period`` a candidate reads the Lease; it takes it when it is
  absent, held by itself, or not renewed for ``lease_duration`` *as observed
  locally* (the time since the record last changed on the local monotonic
  clock, so clock skew between machines does not matter);
* a write names the Lease's resourceVersion, so two candidates cannot both
  succeed;
* the leader renews every ``retry_period``; if it cannot renew within
  ``renew_deadline`` it stops leading (before anyone else may take over,
  since ``renew_deadline < lease_duration``);
* on a clean stop the leader gives the Lease up (``release_on_cancel``).

A Lease that cannot be read or written is said at the default log level,
with the fix, when it starts failing and then at most every
``report_interval``; :meth:`LeaderElector.readiness_error` tells ``/readyz``
when this instance could not take over (see docs/controller.md: a standby behind a
live leader is ready, one that cannot reach its Lease is not).
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .client import LEASES, ApiError, ClientClosed, KubeClient

log = logging.getLogger("kueue_fast.controller.leader")  # the name operators filter on

JSON = dict[str, Any]


@dataclass
class Clock:
    """Injected time: ``monotonic`` for durations, ``time_ns`` for timestamps."""

    monotonic: Callable[[], float] = time.monotonic
    time_ns: Callable[[], int] = time.time_ns
    sleep_until: Callable[[threading.Event, float], bool] = field(
        default=lambda ev, seconds: ev.wait(max(0.0, seconds))
    )


def _micro_time(ns: int) -> str:
    return dt.datetime.fromtimestamp(ns / 1e9, tz=dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        client: KubeClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        on_change: Callable[[bool], None],
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        report_interval: float = 60.0,
        clock: Clock | None = None,
    ) -> None:
        if not renew_deadline < lease_duration:
            raise ValueError("renew_deadline must be shorter than lease_duration")
        self.client = client
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.on_change = on_change
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock or Clock()
        self.report_interval = report_interval
        self.leading = False
        self.stop_event = threading.Event()
        # the Lease's reachability: the current problem, since when, logged when
        self.problem: str | None = None
        self.blocking = False  # a configuration error: retrying alone will not fix it
        self.failures = 0
        self._failing_since = 0.0
        self._reported: tuple[str, float] | None = None
        self._holder_seen = ""
        self._observed: tuple[str, str, str] | None = None  # (holder, renewTime, rv) last seen
        self._observed_at = 0.0
        self._lease: JSON | None = None
        self.thread = threading.Thread(target=self._run, name="leader-elector", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self, release: bool = True) -> None:
        self.stop_event.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout=5)
        if release and self.leading:
            self._release()

    # --- the loop -------------------------------------------------------------------------------

    def _run(self) -> None:
        last_renew = self.clock.monotonic()
        while not self.stop_event.is_set() and not self.client.closed:
            try:
                ok = self._try_acquire_or_renew()
                self._reachable()
            except ClientClosed:
                return
            except Exception as e:  # the API failed: treat as not renewed
                ok = False
                self._unreachable(*self._explain(e))
            now = self.clock.monotonic()
            if ok:
                last_renew = now
                if not self.leading:
                    self.leading = True
                    log.info("%s became the leader (Lease %s/%s)", self.identity, self.namespace, self.name)
                    self.on_change(True)
            elif self.leading and now - last_renew >= self.renew_deadline:
                self.leading = False
                log.warning(
                    "%s lost the leadership (could not renew within %.1fs)",
                    self.identity,
                    self.renew_deadline,
                )
                self.on_change(False)
            if self.clock.sleep_until(self.stop_event, self.retry_period):
                return

    # --- saying what is wrong -------------------------------------------------------------------

    @property
    def lease_ref(self) -> str:
        return f"Lease {self.namespace}/{self.name}"

    def _explain(self, e: BaseException) -> tuple[str, bool]:
        """(what is wrong and how to fix it, whether it is a configuration error)."""
        if not isinstance(e, ApiError):
            return f"{type(e).__name__}: {e}", False
        if e.status == 404:  # a create answers 404 only when the namespace is missing
            return (
                f"namespace {self.namespace} not found; create it "
                f"(kubectl create namespace {self.namespace}) or pass --lease-namespace",
                True,
            )
        if e.status == 401:
            return (
                "401 Unauthorized: the API server rejects the credentials "
                "(check the kubeconfig, or the pod's service account token)",
                True,
            )
        if e.status == 403:
            return (
                f"403 forbidden: {e.message or e.reason}; grant get, create and update on leases "
                f"in namespace {self.namespace} (the Role of `kueue-fast manifests deploy`)",
                True,
            )
        if e.status == 0:
            return f"cannot reach the API server: {e.message}", False
        return f"{e.status} {e.reason}: {e.message}", False

    def _unreachable(self, problem: str, blocking: bool) -> None:
        now = self.clock.monotonic()
        if self.problem is None:
            self._failing_since = now
        self.problem, self.blocking = problem, blocking
        self.failures += 1
        last = self._reported
        if last is not None and last[0] == problem and now - last[1] < self.report_interval:
            return
        self._reported = (problem, now)
        repeat = (
            f" (failing for {now - self._failing_since:.0f}s, {self.failures} attempts)"
            if self.failures > 1
            else ""
        )
        log.log(
            logging.ERROR if blocking else logging.WARNING,
            "%s cannot take or renew the leader election %s: %s%s",
            self.identity,
            self.lease_ref,
            problem,
            repeat,
        )

    def _reachable(self) -> None:
        if self.problem is not None:
            log.info("%s: the %s is reachable again", self.identity, self.lease_ref)
        self.problem, self.blocking, self.failures, self._reported = None, False, 0, None

    def readiness_error(self) -> str:
        """Why this instance could not take over, for /readyz: a configuration
        error at once, any other failure once it outlasts a lease duration."""
        if self.problem is None:
            return ""
        if self.blocking or self.clock.monotonic() - self._failing_since >= self.lease_duration:
            return f"cannot take or renew the {self.lease_ref}: {self.problem}"
        return ""

    def _standing_by(self, holder: str, duration: float) -> None:
        if holder != self._holder_seen:
            self._holder_seen = holder
            log.info(
                "%s: the %s is held by %s; standing by (taking over if it is not renewed for %.0fs)",
                self.identity,
                self.lease_ref,
                holder,
                duration,
            )

    # --- the Lease --------------------------------------------------------------------------------

    def _record(self, lease: JSON) -> tuple[str, str, str]:
        spec = lease.get("spec") or {}
        return (
            str(spec.get("holderIdentity") or ""),
            str(spec.get("renewTime") or ""),
            str(lease["metadata"].get("resourceVersion", "")),
        )

    def _try_acquire_or_renew(self) -> bool:
        now_ns = self.clock.time_ns()
        mono = self.clock.monotonic()
        new_spec: JSON = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(round(self.lease_duration))),
            "renewTime": _micro_time(now_ns),
        }
        try:
            lease = self.client.get(LEASES, self.name, self.namespace)
        except ApiError as e:
            if e.status != 404:
                raise
            new_spec["acquireTime"] = _micro_time(now_ns)
            new_spec["leaseTransitions"] = 0
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": new_spec,
            }
            try:
                self._lease = self.client.create(LEASES, body, self.namespace)
            except ApiError as e2:
                if e2.status == 409:
                    return False
                raise
            self._observed, self._observed_at = self._record(self._lease), mono
            return True
        rec = self._record(lease)
        if rec != self._observed:
            self._observed, self._observed_at = rec, mono
        spec = lease.get("spec") or {}
        holder = rec[0]
        duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        if holder and holder != self.identity and mono - self._observed_at < duration:
            self._standing_by(holder, duration)
            return False  # someone else holds a live lease
        if holder == self.identity:
            new_spec["acquireTime"] = spec.get("acquireTime") or _micro_time(now_ns)
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0)
        else:
            new_spec["acquireTime"] = _micro_time(now_ns)
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "resourceVersion": lease["metadata"]["resourceVersion"],
            },
            "spec": new_spec,
        }
        try:
            self._lease = self.client.update(LEASES, body)
        except ApiError as e:
            if e.status in (404, 409):  # changed or deleted since read: read again next time
                return False
            raise
        self._observed, self._observed_at = self._record(self._lease), mono
        return True

    def _release(self) -> None:
        """Give the Lease up so that a standby takes over at once."""
        lease = self._lease
        if lease is None:
            return
        spec = dict(lease.get("spec") or {})
        if spec.get("holderIdentity") != self.identity:
            return
        spec["holderIdentity"] = ""
        spec["leaseDurationSeconds"] = 1
        spec["renewTime"] = _micro_time(self.clock.time_ns())
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "resourceVersion": lease["metadata"]["resourceVersion"],
            },
            "spec": spec,
        }
        try:
            self.client.update(LEASES, body)
            log.info("%s gave the %s up", self.identity, self.lease_ref)
        except (ApiError, ClientClosed) as e:
            # the next leader waits for the Lease to expire instead
            log.warning("%s could not give the %s up: %s", self.identity, self.lease_ref, e)
        self.leading = False
