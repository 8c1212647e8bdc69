"""Where a trace's pod set may run: node selector, tolerations, required node
affinity, which decide the flavors it can use (node_affinity.flavor_rejection,
Kueue's flavorassigner checks against each ResourceFlavor's nodeLabels and
nodeTaints).

Two spellings, one per trace format:

* JSON Lines: the pod template's own fields, ``nodeSelector``,
  ``tolerations`` and ``affinity`` (only
  ``nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`` is kept:
  nothing else of it decides a flavor), read with the loader's rules;
* CSV: one column each, in a short text form:

  - ``node_selector``: ``key=value`` pairs separated by commas;
  - ``tolerations``: ``key=value:Effect`` tolerates that taint (operator
    Equal), ``key:Effect`` any value of the key (Exists), ``*`` every taint
    (Exists with no key); the effect may be left out (every effect);
    several separated by commas;
  - ``affinity``: the required node affinity's terms separated by ``|``
    (ORed), each term's expressions separated by commas (ANDed):
    ``key in (a,b)``, ``key notin (a,b)``, ``key`` (Exists), ``!key``
    (DoesNotExist), ``key>N``, ``key<N`` (Gt, Lt).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import model as m, validation as v
from ..api.errors import InputError
from ..loader.workload_spec import required_affinity

PLACEMENT_COLUMNS = ("node_selector", "tolerations", "affinity")


@dataclass(frozen=True)
class Placement:
    """A pod set's placement; the empty one (the default) can use every flavor
    that has no NoSchedule/NoExecute taint."""

    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[m.Toleration, ...] = ()
    affinity: tuple[m.NodeSelectorTerm, ...] | None = None

    def __bool__(self) -> bool:
        return bool(self.node_selector or self.tolerations or self.affinity is not None)

    def pod_set(self, name: str = "main", count: int = 1) -> m.PodSet:
        """A pod set with this placement, to ask which flavors it can use."""
        return m.PodSet(
            name,
            count,
            node_selector=dict(self.node_selector),
            required_affinity=self.affinity,
            tolerations=list(self.tolerations),
        )

    @classmethod
    def of(cls, ps: m.PodSet) -> Placement:
        """The placement of a pod set of the manifests, as flavor matching
        reads it (node_affinity._flavor_terms): matchFields dropped, and no
        affinity at all when there are no terms or a term has no
        matchExpressions (terms are ORed: that one matches every flavor)."""
        affinity = ps.required_affinity
        if affinity is not None:
            affinity = tuple(m.NodeSelectorTerm(t.match_expressions) for t in affinity)
            if not affinity or not all(t.match_expressions for t in affinity):
                affinity = None
        return cls(tuple(sorted(ps.node_selector.items())), tuple(ps.tolerations), affinity)


NO_PLACEMENT = Placement()


# --- JSON Lines: the pod template's fields ----------------------------------------------------------


def placement_from_json(ps: Mapping[str, Any], where: str) -> Placement:
    """``nodeSelector``, ``tolerations`` and ``affinity`` of a JSON Lines pod
    set, checked as the loader checks a pod template's (errors name ``where``)."""
    selector: dict[str, str] = {}
    if ps.get("nodeSelector") is not None:
        selector = v.string_map(ps["nodeSelector"], "trace", v.child(where, "nodeSelector"))
    tolerations: list[m.Toleration] = []
    if ps.get("tolerations") is not None:
        tolerations = v.tolerations(ps["tolerations"], "trace", v.child(where, "tolerations"), strict=False)
    affinity = required_affinity(ps, "trace", where)
    return Placement.of(
        m.PodSet("main", 1, node_selector=selector, required_affinity=affinity, tolerations=tolerations)
    )


def placement_to_json(p: Placement) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if p.node_selector:
        out["nodeSelector"] = dict(p.node_selector)
    if p.tolerations:
        out["tolerations"] = [_toleration_json(t) for t in p.tolerations]
    if p.affinity is not None:
        terms = [
            {"matchExpressions": [_requirement_json(r) for r in t.match_expressions]} for t in p.affinity
        ]
        out["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
        }
    return out


def _toleration_json(t: m.Toleration) -> dict[str, str]:
    d = {"key": t.key, "operator": t.operator, "value": t.value, "effect": t.effect}
    return {k: x for k, x in d.items() if x}


def _requirement_json(r: m.NodeSelectorRequirement) -> dict[str, Any]:
    d: dict[str, Any] = {"key": r.key, "operator": r.operator}
    if r.values:
        d["values"] = list(r.values)
    return d


# --- CSV: the short text form ---------------------------------------------------------------------


def placement_from_text(selector: str, tolerations: str, affinity: str, where: str) -> Placement:
    """The three CSV cells (empty: none); errors name ``where`` and the column."""
    return Placement(
        _selector(selector, f"{where}.node_selector"),
        _tolerations(tolerations, f"{where}.tolerations"),
        _affinity(affinity, f"{where}.affinity"),
    )


def placement_to_text(p: Placement) -> tuple[str, str, str]:
    selector = ",".join(f"{k}={x}" for k, x in p.node_selector)
    tolerations = ",".join(_toleration_text(t) for t in p.tolerations)
    affinity = "" if p.affinity is None else "|".join(_term_text(t) for t in p.affinity)
    return selector, tolerations, affinity


def _error(where: str, message: str) -> InputError:
    return InputError("trace", where, message)


def _selector(text: str, where: str) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for item in _split(text, ","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise _error(where, f"expected key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return tuple(sorted(out.items()))


def _tolerations(text: str, where: str) -> tuple[m.Toleration, ...]:
    out = []
    for item in _split(text, ","):
        head, colon, effect = item.rpartition(":") if ":" in item else (item, "", "")
        effect = effect.strip()
        if colon and effect not in m.TAINT_EFFECTS:
            raise _error(where, f"{item!r}: the effect must be one of {', '.join(m.TAINT_EFFECTS)}")
        head = head.strip()
        if head == "*":
            out.append(m.Toleration("", "Exists", "", effect))
            continue
        key, eq, value = head.partition("=")
        if not key.strip():
            raise _error(where, f"{item!r}: expected key=value:Effect, key:Effect or *")
        out.append(m.Toleration(key.strip(), "Equal" if eq else "Exists", value.strip(), effect))
    return tuple(out)


def _toleration_text(t: m.Toleration) -> str:
    if not t.key:
        head = "*"
    elif t.operator == "Exists":
        head = t.key
    else:
        head = f"{t.key}={t.value}"
    return f"{head}:{t.effect}" if t.effect else head


def _affinity(text: str, where: str) -> tuple[m.NodeSelectorTerm, ...] | None:
    if not text.strip():
        return None
    terms = []
    for term in text.split("|"):
        exprs = tuple(_requirement(x, where) for x in _split(term, ","))
        if not exprs:
            raise _error(where, f"empty term in {text!r}")
        terms.append(m.NodeSelectorTerm(exprs))
    return tuple(terms)


def _requirement(text: str, where: str) -> m.NodeSelectorRequirement:
    s = text.strip()
    for word, op in ((" notin ", "NotIn"), (" in ", "In")):
        key, found, rest = s.partition(word)
        if found:
            rest = rest.strip()
            if not (rest.startswith("(") and rest.endswith(")")):
                raise _error(where, f"{text!r}: expected key {word.strip()} (value,...)")
            values = tuple(x.strip() for x in rest[1:-1].split(",") if x.strip())
            if not values:
                raise _error(where, f"{text!r}: {op} needs at least one value")
            return m.NodeSelectorRequirement(key.strip(), op, values)
    for sign, op in ((">", "Gt"), ("<", "Lt")):
        key, found, bound = s.partition(sign)
        if found:
            try:
                int(bound.strip())
            except ValueError:
                raise _error(where, f"{text!r}: {op} needs an integer") from None
            return m.NodeSelectorRequirement(key.strip(), op, (bound.strip(),))
    if s.startswith("!"):
        return m.NodeSelectorRequirement(s[1:].strip(), "DoesNotExist")
    if not s or any(c in s for c in " =()"):
        raise _error(where, f"{text!r}: expected key in (...), key notin (...), key, !key, key>N or key<N")
    return m.NodeSelectorRequirement(s, "Exists")


def _term_text(t: m.NodeSelectorTerm) -> str:
    parts = []
    for r in t.match_expressions:
        if r.operator in ("In", "NotIn"):
            parts.append(f"{r.key} {r.operator.lower()} ({','.join(r.values)})")
        elif r.operator == "Exists":
            parts.append(r.key)
        elif r.operator == "DoesNotExist":
            parts.append(f"!{r.key}")
        else:
            parts.append(f"{r.key}{'>' if r.operator == 'Gt' else '<'}{r.values[0]}")
    return ",".join(parts)


def _split(text: str, sep: str) -> list[str]:
    """Items separated by ``sep`` outside parentheses, blank ones dropped."""
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        if c == sep and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    return [x.strip() for x in out if x.strip()]
