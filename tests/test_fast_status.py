"""The compiled reader of a Workload's status (``kueue_fast.loader._bulk.fast_status``,
which ``fast_workload`` uses) gives what ``loader.workload_status.workload_status``
gives, or declines (None): on every Workload with a status under tests/ and
on generated statuses, valid and not. The Python reader is the oracle."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from kueue_fast import _compiled
from kueue_fast.api import model as m
from kueue_fast.api.errors import InputError
from kueue_fast.loader import workload_spec as lwp, workload_status as lws

_bulk = _compiled.module("loader._bulk")
pytestmark = pytest.mark.skipif(_bulk is None, reason="kueue_fast.loader._bulk is not built")

TESTS = Path(__file__).parent
_YAML = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def pod_sets(*named: tuple[str, int]) -> list[m.PodSet]:
    return [m.PodSet(name=n, count=c, requests={"cpu": 1000}) for n, c in named]


def compare(status: object, sets: list[m.PodSet], creation: int = 5) -> bool:
    """fast_status declines, or gives _workload_status's result without it
    raising; True when it did not decline."""
    assert _bulk is not None
    fast_sets = copy.deepcopy(sets)
    fast = (
        _bulk.fast_status(status, fast_sets, creation, _bulk.BulkCaches()) if type(status) is dict else None
    )
    plain_sets = copy.deepcopy(sets)
    try:
        plain: Any = lws.workload_status({"status": status}, "Workload/ns/w", plain_sets, creation)
    except InputError as e:
        plain = e
    if fast is None:
        return False
    assert not isinstance(plain, InputError), f"the compiled reader accepted what raises {plain}"
    assert fast[:6] == plain
    assert fast_sets == plain_sets  # reclaimable left alone
    conds = [c for c in status.get("conditions") or [] if c.get("type") == "PodsReady"]
    assert fast[6] == (bool(conds) or status.get("requeueState") is not None)
    return True


def workloads_with_a_status() -> list[dict[str, Any]]:
    """Every Workload with a status in the test files (YAML, JSON)."""
    out = []
    for p in sorted(TESTS.rglob("*")):
        if p.suffix not in (".yaml", ".yml", ".json") or p.parent.name == "EXPECTED":
            continue
        try:
            text = p.read_text()
            if "Workload" not in text or "status" not in text:
                continue
            docs = [json.loads(text)] if p.suffix == ".json" else list(yaml.load_all(text, Loader=_YAML))
        except (ValueError, yaml.YAMLError, UnicodeDecodeError):
            continue
        stack: list[Any] = docs
        while stack:
            x = stack.pop()
            if isinstance(x, list):
                stack.extend(x)
            elif isinstance(x, dict):
                if x.get("kind") == "Workload" and x.get("status") is not None:
                    out.append(x)
                else:
                    stack.extend(v for v in x.values() if isinstance(v, (list, dict)))
    return out


def test_every_test_workload_with_a_status_reads_the_same() -> None:
    taken = total = 0
    for obj in workloads_with_a_status():
        spec = obj.get("spec") or {}
        try:
            sets = lwp.read_pod_sets(spec, "Workload/ns/w")
        except (InputError, AttributeError, TypeError):
            continue
        total += 1
        taken += compare(obj["status"], sets)
    assert total > 20
    assert taken > total // 2  # the common status is read by the compiled reader


def test_common_admitted_status_is_read_compiled() -> None:
    status = {
        "admission": {
            "clusterQueue": "cq",
            "podSetAssignments": [
                {"name": "main", "flavors": {"cpu": "f"}, "resourceUsage": {"cpu": "2"}, "count": 2}
            ],
        },
        "conditions": [
            {
                "type": "QuotaReserved",
                "status": "True",
                "reason": "r",
                "lastTransitionTime": "2025-01-06T00:00:05Z",
            },
            {
                "type": "Admitted",
                "status": "True",
                "reason": "r",
                "lastTransitionTime": "2025-01-06T00:00:05Z",
            },
        ],
    }
    assert compare(status, pod_sets(("main", 2)))
    assert _bulk is not None
    first = _bulk.fast_status(status, pod_sets(("main", 2)), 5, _bulk.BulkCaches())
    second = _bulk.fast_status(status, pod_sets(("main", 2)), 5, _bulk.BulkCaches())
    assert first is not None and second is not None
    # equal admissions come from one memo: each Workload still gets its own objects
    a, b = first[0].pod_set_assignments[0], second[0].pod_set_assignments[0]
    assert a == b and a is not b and a.flavors is not b.flavors and a.resource_usage is not b.resource_usage


# --- generated statuses ---------------------------------------------------------------------------


def pick(draw: Any, good: list[Any], bad: list[Any]) -> Any:
    """Mostly a good value, sometimes a bad one."""
    return draw(st.sampled_from(good if draw(st.integers(0, 3)) else bad))


GOOD_LTTS: list[Any] = [
    "2025-01-06T00:00:05Z",
    "2025-01-06T00:00:05.5Z",
    "2025-01-06T01:00:05+01:00",
    datetime(2025, 1, 6, tzinfo=timezone.utc),
]
BAD_LTTS: list[Any] = ["2025-02-30T00:00:00Z", "2025-01-06T24:00:00Z", "yesterday", "", None, 5]


@st.composite
def conditions(draw: Any) -> Any:
    out = []
    for _ in range(draw(st.integers(0, 5))):
        c: dict[Any, Any] = {}
        for field, good, bad in (
            ("type", ["QuotaReserved", "Admitted", "Evicted", "Finished", "PodsReady", "Requeued"], ["", 3]),
            ("status", ["True", "False", "Unknown"], ["true", "", None]),
            ("reason", ["PodsReadyTimeout", "AdmissionCheck", "Preempted"], [None, 1]),
            ("lastTransitionTime", GOOD_LTTS, BAD_LTTS),
        ):
            if draw(st.integers(0, 9)):
                c[field] = pick(draw, good, bad)
        if draw(st.integers(0, 19)) == 0:
            c[1] = "x"
        out.append(c if draw(st.integers(0, 19)) else "not a map")
    return draw(st.sampled_from([out, out, out, None, {"a": 1}]))


@st.composite
def admissions(draw: Any) -> Any:
    if draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from([None, "cq", [], {}]))
    assignments = []
    for _ in range(draw(st.integers(0, 3))):
        a: dict[Any, Any] = {}
        if draw(st.integers(0, 5)):
            a["name"] = pick(draw, ["main", "worker"], ["other", "", None, "Bad_Name"])
        if draw(st.integers(0, 3)):
            a["flavors"] = pick(draw, [{"cpu": "f"}, {"cpu": "f", "memory": "g"}], [{"cpu": 1}, None])
        if draw(st.integers(0, 3)):
            a["resourceUsage"] = pick(
                draw, [{"cpu": "2"}, {"cpu": 4}, {}], [{"cpu": "3"}, {"cpu": "x"}, {"cpu": float("nan")}]
            )
        if draw(st.integers(0, 2)):
            a["count"] = pick(draw, [1, 2, None], [0, -1, 2.0, True])
        assignments.append(a)
    adm: dict[str, Any] = {"podSetAssignments": assignments}
    if draw(st.integers(0, 7)):
        adm["clusterQueue"] = pick(draw, ["cq", "cq-1"], ["", "CQ", None])
    return adm


@st.composite
def statuses(draw: Any) -> dict[str, Any]:
    status: dict[str, Any] = {}
    if draw(st.integers(0, 7)):
        status["conditions"] = draw(conditions())
    if draw(st.integers(0, 3)):
        status["admission"] = draw(admissions())
    if draw(st.integers(0, 7)) == 0:
        status["admissionChecks"] = draw(
            st.sampled_from([[], None, [{"name": "ac", "state": "Ready"}], [{"name": "ac"}]])
        )
    if draw(st.integers(0, 7)) == 0:
        status["reclaimablePods"] = draw(st.sampled_from([[], None, [{"name": "main", "count": 1}]]))
    if draw(st.integers(0, 7)) == 0:
        status["requeueState"] = draw(st.sampled_from([None, {"count": 1}, {}]))
    return status


@settings(max_examples=400)
@given(status=statuses(), two=st.booleans())
def test_generated_statuses_read_the_same_or_are_declined(status: dict[str, Any], two: bool) -> None:
    sets = pod_sets(("main", 2), ("worker", 1)) if two else pod_sets(("main", 2))
    compare(status, sets)
