"""Kueue's TAS scheduling-cycle tables, ported: one cycle admits (where, on
which nodes), leaves pending (with which message) and preempts.

Facts from kueue ``pkg/scheduler/scheduler_tas_test.go``:
``TestScheduleForTAS``, ``TestScheduleForTASPreemption`` and
``TestScheduleForTASCohorts``; the cases and their objects are in
tests/kueue_tas_schedule_cases.py (which says what is not ported and why).
Each case is read from its manifests by the loader, as ``kueue-fast schedule``
reads them, and runs one cycle through the public API on both engines. We
compare every workload Kueue's case says something about:

* admitted in the cycle (Kueue's ``wantNewAssignments``): the ClusterQueue and,
  per pod set, the count, each resource's flavor and usage, and the topology
  assignment (levels; each domain's values and pod count, in Kueue's order);
* left pending (``wantLeft``/``wantInadmissibleLeft``): pending, with the
  message of Kueue's QuotaReserved=False condition or Warning event, when the
  case states one;
* evicted (an ``Evicted`` condition in ``wantWorkloads``): evicted, with
  Kueue's message;
* any other workload that held quota before the cycle: still admitted.

Kueue's unit tests build ClusterQueues without the API server's defaulting:
a ``preemption`` naming only ``withinClusterQueue`` leaves
``reclaimWithinCohort`` empty; the loader defaults it to Never, as the API
server does. No ported case depends on the difference.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import divergence_marks
from kueue_tas_schedule_cases import COHORT_CASES, PREEMPTION_CASES, SCHEDULE_CASES, Case

from kueue_fast import Cluster, Decision
from kueue_fast.api.quantity import parse_quantity
from kueue_fast.engine.contract import ENGINES
from kueue_fast.engine.select import native_available

# Cases where kueue-fast decides differently from Kueue, and why (none now).
DIFFERS: dict[str, str] = {}

ALL_CASES = [
    *(("schedule", c) for c in SCHEDULE_CASES),
    *(("preemption", c) for c in PREEMPTION_CASES),
    *(("cohorts", c) for c in COHORT_CASES),
]


def objects(case: Case) -> list[dict[str, Any]]:
    """The case's manifests; feature gates go into the Configuration (one with
    the case's resource transformations, if it has some)."""
    objs = [dict(o) for o in case.objects]
    if case.gates:
        configs = [o for o in objs if o["kind"] == "Configuration"]
        if configs:
            configs[0]["featureGates"] = dict(case.gates)
        else:
            objs.insert(
                0,
                {
                    "apiVersion": "config.kueue.x-k8s.io/v1beta2",
                    "kind": "Configuration",
                    "featureGates": dict(case.gates),
                },
            )
    return objs


def placement_text(levels: list[str] | tuple[str, ...], domains: list[tuple[tuple[str, ...], int]]) -> str:
    return f"{list(levels)} " + " ".join(f"{'/'.join(vs)}:{n}" for vs, n in domains)


def want_admission_text(adm: dict[str, Any]) -> str:
    parts = [f"admitted in {adm['clusterQueue']}"]
    for a in adm["podSetAssignments"]:
        usage = ",".join(
            f"{r}={a['flavors'][r]}:{parse_quantity(q, r)}" for r, q in sorted(a["resourceUsage"].items())
        )
        text = f"{a['name']}x{a['count']} [{usage}]"
        ta = a.get("topologyAssignment")
        if ta is not None:
            doms = [(tuple(d["values"]), d["count"]) for d in ta["domains"]]
            text += " " + placement_text(ta["levels"], doms)
        parts.append(text)
    return " | ".join(parts)


def got_admission_text(d: Decision) -> str:
    parts = [f"admitted in {d.cluster_queue}"]
    for ps in d.pod_sets:
        usage = ",".join(f"{r}={ps.flavors.get(r, '?')}:{n}" for r, n in sorted(ps.resource_usage.items()))
        text = f"{ps.name}x{ps.count} [{usage}]"
        if ps.topology_assignment is not None:
            ta = ps.topology_assignment
            text += " " + placement_text(ta.levels, list(ta.domains))
        parts.append(text)
    return " | ".join(parts)


def wanted_message(case: Case, key: str) -> str | None:
    for type_, status, _reason, message in case.want_conditions.get(key, []):
        if type_ == "QuotaReserved" and status == "False":
            return message
    for ev_key, _reason, message in case.want_events:
        if ev_key == key:
            return message
    return None


def initially_holding(case: Case) -> set[str]:
    return {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}"
        for o in case.objects
        if o["kind"] == "Workload" and o.get("status", {}).get("admission") is not None
    }


def evicted_message(case: Case, key: str) -> str | None:
    for type_, status, _reason, message in case.want_conditions.get(key, []):
        if type_ == "Evicted" and status == "True":
            return message
    return None


def compare(case: Case, decisions: dict[str, Decision]) -> tuple[dict[str, str], dict[str, str]]:
    want: dict[str, str] = {}
    got: dict[str, str] = {}
    holding = initially_holding(case)
    keys = set(case.want_admitted) | set(case.want_pending) | holding
    for key in sorted(keys):
        d = decisions.get(key)
        if key in case.want_admitted:
            want[key] = want_admission_text(case.want_admitted[key])
            got[key] = got_admission_text(d) if d is not None and d.holds_quota else describe(d)
        elif key in case.want_pending:
            msg = wanted_message(case, key)
            want[key] = "pending" + (f": {msg}" if msg is not None else "")
            if d is not None and d.state == "pending":
                got[key] = "pending" + (f": {d.message}" if msg is not None else "")
            else:
                got[key] = describe(d)
        else:
            msg = evicted_message(case, key)
            if msg is not None:
                want[key] = f"evicted: {msg}"
                got[key] = f"evicted: {d.message}" if d is not None and d.state == "evicted" else describe(d)
            else:
                want[key] = "still admitted"
                got[key] = "still admitted" if d is not None and d.holds_quota else describe(d)
    return want, got


def describe(d: Decision | None) -> str:
    if d is None:
        return "<no decision>"
    if d.holds_quota:
        return got_admission_text(d)
    return f"{d.state}: {d.message}"


@pytest.mark.parametrize(
    ("table", "case", "engine"),
    [
        pytest.param(t, c, e, id=f"{t}: {c.name}-{e}", marks=divergence_marks(e, DIFFERS.get(c.name)))
        for t, c in ALL_CASES
        for e in ENGINES
    ],
)
def test_one_cycle(table: str, case: Case, engine: str) -> None:
    if engine == "native" and not native_available():
        pytest.skip("the native engine is not built")
    cluster = Cluster.from_objects(objects(case), engine=engine)
    cluster.run_cycle()
    decisions = {d.key: d for d in cluster.decisions()}
    want, got = compare(case, decisions)
    if want != got:
        lines = [f"{table}: {case.name} (want vs got):"]
        for k in sorted(want):
            mark = "  " if want[k] == got.get(k) else "! "
            lines.append(f"{mark}{k}:\n     want {want[k]}\n     got  {got.get(k)}")
        pytest.fail("\n".join(lines), pytrace=False)
