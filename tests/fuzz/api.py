"""The embedding API (``kueue_fast.Cluster``) fuzzed: a cluster built from a
mutated scenario, then a random sequence of calls (cycles, adds, removes,
evictions, check states, reconfigurations, look-ups), the same sequence on
both engines. Each call's result (decisions, keys) or exception (type and
message) is recorded; the engines must record the same, and an exception
must be a typed one (kueue_fast.api.errors, or ValueError/TypeError/KeyError
with a message).

Calls with arguments of the wrong type or out of range (None, -1, 2**63,
an unknown check state) are marked ``bad-arguments``: their failures belong
to issue 21 item 13 (known.py) while it is open.
"""

from __future__ import annotations

import copy
import dataclasses
import random
from typing import Any

JSON = Any
ALLOWED = ("KueueFastError", "ValueError", "TypeError", "KeyError")
BAD_VALUES: list[Any] = [None, -1, 0, 2**63, -(2**63) - 1, "", "no/such", 1.5, [], {}]


def _describe(x: Any) -> Any:
    """A comparable, engine-free picture of a call's result."""
    from kueue_fast import CycleResult, Decision

    if isinstance(x, (list, tuple)):
        return [_describe(v) for v in x]
    if isinstance(x, (Decision, CycleResult)):
        return repr(x)
    return x if x is None or isinstance(x, (str, int, float, bool)) else type(x).__name__


def _error(e: BaseException) -> tuple[str, str]:
    from kueue_fast.api.errors import KueueFastError

    kind = type(e).__name__
    typed = isinstance(e, KueueFastError) or type(e) in (ValueError, TypeError, KeyError)
    return ("ok-error" if typed and str(e) else "untyped-error", f"{kind}: {e}")


def script(rng: random.Random, n: int) -> list[tuple[str, tuple[Any, ...], bool]]:
    """``n`` calls as (method, arguments, bad); the arguments are made at run
    time from the cluster: ``("key", i)`` its i-th key, ``("wid", i)`` that
    key's id, ``("workload", i)`` a renamed copy of the i-th input Workload,
    ``("state",)`` the input's configuration read again."""
    calls: list[tuple[str, tuple[Any, ...], bool]] = []
    for _ in range(n):
        op = rng.choice(
            (
                "run_cycle",
                "run",
                "add",
                "remove",
                "evict",
                "release",
                "check",
                "decision",
                "keys",
                "key_of",
                "reconfigure",
                "bad",
            )
        )
        k = ("key", rng.randrange(1000))
        if op == "run_cycle":
            calls.append(("run_cycle", (), False))
        elif op == "run":
            calls.append(("run", (rng.randrange(1, 4),), False))
        elif op == "add":
            calls.append(("add_workload", (("workload", rng.randrange(1000)),), False))
        elif op == "reconfigure":
            calls.append(("reconfigure", (("state",),), False))
        elif op == "remove":
            calls.append(("remove_workload", (k,), False))
        elif op == "evict":
            calls.append(("evict", (k, "Fuzz", "evicted by the fuzzer"), False))
        elif op == "release":
            calls.append(("release_eviction", (k,), False))
        elif op == "check":
            state = rng.choice(("Ready", "Retry", "Rejected", "Pending"))
            calls.append(("set_check_state", (k, ("check",), state), False))
        elif op == "decision":
            calls.append(("decision", (k,), False))
        elif op == "keys":
            calls.append(("decisions", (), False))
        elif op == "key_of":
            calls.append(("key_of", (("wid", rng.randrange(1000)),), False))
        else:
            method = rng.choice(
                (
                    "run",
                    "key_of",
                    "wid_of",
                    "decision",
                    "remove_workload",
                    "evict",
                    "add_workload",
                    "reconfigure",
                )
            )
            arity = {"evict": 3}.get(method, 1)
            # run(2**63) is a long run, not a wrong one
            values = [v for v in BAD_VALUES if method != "run" or not (isinstance(v, int) and v > 1)]
            calls.append((method, tuple(rng.choice(values) for _ in range(arity)), True))
    return calls


def run_script(docs: list[JSON], engine: str, calls: list[tuple[str, tuple[Any, ...], bool]]) -> list[Any]:
    """The record of ``calls`` on a Cluster of ``docs`` (see the module docstring)."""
    from kueue_fast import Cluster
    from kueue_fast.loader import build_state

    record: list[Any] = []
    try:
        cluster = Cluster.from_objects(copy.deepcopy(docs), engine=engine)
    except Exception as e:
        return [("build", False, *_error(e))]
    workloads = list(build_state(copy.deepcopy(docs)).workloads.values())
    added = 0
    for method, args, bad in calls:
        keys = cluster.keys()
        resolved = []
        for a in args:
            if isinstance(a, tuple) and a and a[0] == "key":
                a = keys[a[1] % len(keys)] if keys else "none/none"
            elif isinstance(a, tuple) and a and a[0] == "wid":  # a valid id: the i-th key's (none: no call)
                a = cluster.wid_of(keys[a[1] % len(keys)]) if keys else None
            elif isinstance(a, tuple) and a == ("check",):
                a = "check"
            elif isinstance(a, tuple) and a == ("state",):  # the same configuration, read again
                a = build_state(copy.deepcopy(docs))
            elif isinstance(a, tuple) and a and a[0] == "workload":  # a copy of an input Workload, new name
                added += 1
                w = workloads[a[1] % len(workloads)] if workloads else None
                a = dataclasses.replace(w, name=f"{w.name}-copy{added}", uid="") if w else None
            resolved.append(a)
        if method == "key_of" and not bad and resolved == [None]:
            record.append((method, bad, "skipped", None))
            continue
        try:
            out = getattr(cluster, method)(*resolved)
            record.append((method, bad, "ok", _describe(out)))
        except Exception as e:
            record.append((method, bad, *_error(e)))
    return record


def judge(native: list[Any], reference: list[Any]) -> str | None:
    """What is wrong: an untyped exception, or the engines disagreeing; the
    class is ``api-arguments`` when the first wrong call had bad arguments."""
    for a, b in zip(native, reference, strict=False):  # a length difference: below
        bad = a[1]
        cls = "api-arguments" if bad else "api"
        if a != b:
            return f"{cls}: engines differ at {a[0]}: {a[2:]} (native) vs {b[2:]} (reference)"
        if a[2] == "untyped-error":
            return f"{cls}: {a[0]} raised {a[3]}"
    if len(native) != len(reference):
        return "api: the engines ran a different number of calls"
    return None
