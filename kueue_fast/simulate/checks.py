"""Admission checks in the simulator: how long each check takes to decide and
how it decides, drawn per reservation on the simulated clock.

``--admission-check NAME=DELAY[,reject=P][,retry=P]``: the check NAME
answers DELAY seconds (suffix ``s``, ``m`` or ``h`` allowed) after the
workload's quota is reserved: ``Rejected`` with probability P (the workload
is deactivated), ``Retry`` with probability P (it is evicted and queues
again at once: the option has no requeueAfterSeconds), else ``Ready``. A
workload is admitted, and its job starts, once every check that applies to
it (by flavor, ``onFlavors``) is Ready; a
failing check decides at its own delay. Checks a ClusterQueue names without
an option are Ready at once (the run's notes list them).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ..api.errors import InputError
from ..api.model import ClusterState
from ..cluster.admission_checks import checks_for_flavors
from ..engine.inputs import Topology

NS = 1_000_000_000
READY, RETRY, REJECTED = 0, 1, 2
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True)
class CheckModel:
    delay_ns: int = 0
    reject: float = 0.0
    retry: float = 0.0


def parse_check_option(text: str) -> tuple[str, CheckModel]:
    """``NAME=DELAY[,reject=P][,retry=P]`` (an InputError naming the option otherwise)."""

    def bad(why: str) -> InputError:
        expected = "expected NAME=DELAY[,reject=P][,retry=P]"
        return InputError("", "--admission-check", f"{why}: {text!r} ({expected})")

    name, eq, rest = text.partition("=")
    if not eq or not name or not rest:
        raise bad("missing NAME or DELAY")
    parts = rest.split(",")
    delay_text = parts[0].strip()
    scale = _UNITS.get(delay_text[-1:], None)
    try:
        delay = float(delay_text[:-1] if scale is not None else delay_text) * (scale or 1.0)
    except ValueError:
        raise bad(f"DELAY {delay_text!r} is not a number of seconds") from None
    if not math.isfinite(delay) or delay < 0:
        raise bad("DELAY must be >= 0")
    probs = {"reject": 0.0, "retry": 0.0}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        key = key.strip()
        if key not in probs or not eq:
            raise bad(f"unknown setting {part!r}")
        try:
            p = float(value)
        except ValueError:
            raise bad(f"{key} {value!r} is not a probability") from None
        if not 0.0 <= p <= 1.0:
            raise bad(f"{key} must be between 0 and 1")
        probs[key] = p
    if probs["reject"] + probs["retry"] > 1.0:
        raise bad("reject + retry must be at most 1")
    return name, CheckModel(int(round(delay * NS)), probs["reject"], probs["retry"])


class CheckPlan:
    """Per ClusterQueue of the topology, the checks and their models; draws
    the outcome of a reservation."""

    def __init__(self, state: ClusterState, topo: Topology, models: dict[str, CheckModel], seed: int) -> None:
        self.models = models
        self._rng = random.Random(seed)
        self._cqs = [state.cluster_queues.get(cq.name) for cq in topo.cluster_queues]
        self._flavor_names = topo.flavor_names
        self.with_checks = [cq is not None and bool(cq.admission_checks) for cq in self._cqs]
        # the checks of active ClusterQueues: an inactive one (its check not Active...) admits nothing
        named = {
            n
            for cq, spec in zip(self._cqs, topo.cluster_queues, strict=True)
            if cq is not None and spec.active
            for n in cq.admission_checks
        }
        self.unmodelled = sorted(named - set(models))

    def any(self) -> bool:
        return any(self.with_checks)

    def draw(self, cq: int, flavors: set[int], now_ns: int) -> tuple[int, int, str] | None:
        """(when, READY/RETRY/REJECTED, the deciding check) for a reservation
        in ClusterQueue ``cq`` with these flavor ids; None when no check applies."""
        spec = self._cqs[cq]
        if spec is None:
            return None
        names = checks_for_flavors(spec, {self._flavor_names[f] for f in flavors})
        if not names:
            return None
        ready_at = now_ns
        fails: list[tuple[int, int, str]] = []
        for name in names:
            m = self.models.get(name, CheckModel())
            at = now_ns + m.delay_ns
            ready_at = max(ready_at, at)
            r = self._rng.random()
            if r < m.reject:
                fails.append((at, REJECTED, name))
            elif r < m.reject + m.retry:
                fails.append((at, RETRY, name))
        if fails:  # the first to fail decides; Rejected wins a tie (reconcileCheckBasedEviction)
            at, outcome, name = min(fails, key=lambda f: (f[0], -f[1], f[2]))
            return at, outcome, name
        return ready_at, READY, ""
