"""The writer: the only component that changes objects in the API server.

The scheduling loop hands it :class:`Op` s: a key (at most one op per key is
in flight: the loop waits for the result before it decides the next write
for that key), a priority (pending reasons and queue statuses first: at most
one of each kind waits, and for a token no other write waits for; then
admissions and Job starts, then Workload creation) and a function of the
client that sends the request. Worker threads run them and post the result
back to the loop:

* the object the server returned, on success;
* :class:`Conflict` with the object read again, on 409 (the loop decides the
  write again on fresh state);
* :class:`Gone` on 404;
* the exception, when the write failed for good (the client already backed
  off and retried 429, 5xx and lost connections).

Ops of an older leadership term (``epoch``) are dropped when they surface.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .kube import ApiError, ClientClosed, KubeClient, Resource

log = logging.getLogger("kueue_fast.controller.writer")

JSON = dict[str, Any]

# priorities: lower first
PRIO_INFORM = 0  # pending reasons, ClusterQueue / LocalQueue status: one of each kind (queues.py)
PRIO_ADMISSION = 1  # admission status, Job start, evictions
PRIO_CREATE = 2  # Workload creation, finish, finalizers

# Pending reasons and queue statuses take tokens no other write waits for
# (KubeClient.request spare_wait): while decisions use the whole budget, one of
# them still goes after waiting this long, so they are late, never starved.
# First in the writer's queue, they wait for the budget, not behind decisions
# (the writer's queue is full of them when the API server is the bottleneck).
SPARE_WAIT = 1.0


@dataclass
class Conflict:
    fresh: JSON | None


@dataclass
class Gone:
    pass


@dataclass(order=True)
class Op:
    prio: int
    seq: int
    key: str = field(compare=False)
    name: str = field(compare=False)
    fn: Callable[[KubeClient], JSON] = field(compare=False, repr=False)
    # what to read again on 409: (resource, name, namespace)
    refetch: tuple[Resource, str, str | None] | None = field(compare=False, default=None)
    epoch: int = field(compare=False, default=0)
    data: Any = field(compare=False, default=None)  # anything the loop wants back


Post = Callable[[tuple[Any, ...]], None]


class Writer:
    def __init__(self, client: KubeClient, post: Post, workers: int = 16) -> None:
        self.client = client
        self.post = post
        self.q: queue.PriorityQueue[Op] = queue.PriorityQueue()
        self._seq = itertools.count()
        self.threads = [
            threading.Thread(target=self._work, name=f"writer-{i}", daemon=True) for i in range(workers)
        ]
        self.in_flight = 0
        self._lock = threading.Lock()

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def submit(
        self,
        key: str,
        name: str,
        prio: int,
        fn: Callable[[KubeClient], JSON],
        *,
        refetch: tuple[Resource, str, str | None] | None = None,
        epoch: int = 0,
        data: Any = None,
    ) -> Op:
        op = Op(prio, next(self._seq), key, name, fn, refetch, epoch, data)
        self.q.put(op)
        return op

    def depth(self) -> int:
        return self.q.qsize()

    def drain(self) -> list[Op]:
        """Take back every op not started yet."""
        out = []
        while True:
            try:
                out.append(self.q.get_nowait())
            except queue.Empty:
                return out

    def stop(self, wait: float = 0.0) -> bool:
        """Stop the workers once their current op is done (the stop ops go
        before any queued op); with ``wait``, wait that long for them and
        say whether no write is in flight any more."""
        for _ in self.threads:
            self.q.put(Op(-1, next(self._seq), "", "stop", lambda c: {}))
        if wait <= 0:
            return False
        deadline = time.monotonic() + wait
        for t in self.threads:
            if t.is_alive():
                t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self.threads)

    def _work(self) -> None:
        while True:
            op = self.q.get()
            if op.name == "stop" and op.prio == -1:
                return
            if self.client.closed:
                continue
            with self._lock:
                self.in_flight += 1
            try:
                result: Any = self._run(op)
            except ClientClosed:
                result = None
            finally:
                with self._lock:
                    self.in_flight -= 1
            if result is not None:
                self.post(("done", op, result))

    def _run(self, op: Op) -> Any:
        try:
            return op.fn(self.client)
        except ClientClosed:
            raise
        except ApiError as e:
            if e.status == 409 and op.refetch is not None:
                res, name, ns = op.refetch
                try:
                    return Conflict(self.client.get(res, name, ns))
                except ApiError as e2:
                    if e2.status == 404:
                        return Gone()
                    return Conflict(None)
            if e.status == 404:
                return Gone()
            log.warning("%s %s failed: %s", op.name, op.key, e)
            return e
        except Exception as e:  # a bug in an op must reach the loop, not kill the worker
            log.exception("%s %s crashed", op.name, op.key)
            return e
