"""Structure-aware mutations of manifests: what a careless or hostile user
writes. A case is the documents of a scenario (parsed), changed by one to
three mutators that know the shape of Kubernetes objects (delete, duplicate,
retype or rename a field; extreme quantities; weird strings; deep nesting;
large lists), then written out as text in one of several encodings, and
maybe changed as text (aliases, duplicate keys, truncation, byte flips).

Every choice comes from one ``random.Random``: a (seed, index) pair always
makes the same case (``python -m tests.fuzz --replay SEED:INDEX``).
"""

from __future__ import annotations

import collections
import contextlib
import copy
import json
import random
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import yaml

JSON = Any
Path = tuple[Any, ...]  # keys and indexes from a document's root

# Amounts at and around every limit the engine has: int64, milli-units,
# binary and decimal suffixes, fractions of an integer resource, malformed.
EXTREME_QUANTITIES: list[Any] = [
    "0",
    "-1",
    "1",
    "0.5",
    "100m",
    "1m",
    "0.0001",
    "1n",
    "1e-9",
    "1e3",
    "1E18",
    "1e308",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "9223372036854775807m",
    "8Ei",
    "7Ei",
    "1Ei",
    "16Ei",
    "999999999999999999999999",
    "1.5Gi",
    "1Ki",
    "1k",
    "1K",
    "1ki",
    "1Mi ",
    " 1",
    "+1",
    "1_000",
    "0x10",
    "１",
    "NaN",
    "Infinity",
    "",
    9223372036854775807,
    9223372036854775808,
    2147483647,
    2147483648,
    -2147483648,
    -2147483649,
    -1,
    0,
    0.5,
    1e308,
    float("inf"),
    float("nan"),
    True,
]

WEIRD_STRINGS = [
    "",
    " ",
    "a" * 64,
    "a" * 254,
    "x" * 10_000,
    "UPPER",
    "has space",
    "dots.in.name",
    "-leading",
    "trailing-",
    "ünïcödé",
    "emoji-😀",
    "nul\x00byte",
    "tab\there",
    "new\nline",
    "../../etc/passwd",
    "${HOME}",
    "{{template}}",
    "*",
    "~",
    "null",
    "true",
    "0",
    "1e3",
]

RETYPES: list[Any] = [None, 0, 1, -1, 1.5, True, False, "", "x", [], {}, [1], {"a": 1}, [[[]]]]

KEY_TYPOS = {
    "nominalQuota": ["nominalquota", "nominal_quota", "NominalQuota", "nominalQuotas"],
    "borrowingLimit": ["borrowinglimit", "borrowLimit"],
    "lendingLimit": ["lendinglimit"],
    "cohort": ["cohortName"],
    "cohortName": ["cohort"],
    "resourceGroups": ["resourcegroups", "resourceGroup"],
    "coveredResources": ["coveredresources"],
    "queueName": ["queuename", "queue"],
    "podSets": ["podsets", "podSet"],
    "requests": ["request", "Requests"],
    "limits": ["limit"],
    "count": ["Count", "replicas"],
    "priority": ["Priority"],
    "metadata": ["meta"],
    "spec": ["Spec", "specs"],
    "kind": ["Kind"],
    "apiVersion": ["apiversion", "api_version"],
}

KINDS = [
    "ClusterQueue",
    "LocalQueue",
    "ResourceFlavor",
    "Workload",
    "Cohort",
    "WorkloadPriorityClass",
    "AdmissionCheck",
    "Job",
    "JobSet",
    "Configuration",
    "ConfigMap",
    "Namespace",
    "PriorityClass",
    "Pod",
    "Deployment",
    "List",
    "",
    "Unknown",
]

API_VERSIONS = [
    "kueue.x-k8s.io/v1beta1",
    "kueue.x-k8s.io/v1beta2",
    "kueue.x-k8s.io/v1alpha1",
    "kueue.x-k8s.io/v2",
    "batch/v1",
    "jobset.x-k8s.io/v1alpha2",
    "v1",
    "",
    "config.kueue.x-k8s.io/v1beta1",
]


@dataclass
class Case:
    """One generated input: the text, and how it was made."""

    name: str  # the file name it is written as (its suffix matters to the reader)
    data: bytes
    mutators: list[str] = field(default_factory=list)
    docs: list[JSON] | None = None  # the structure, when the case is still structured (for minimizing)


# --- walking a document ---------------------------------------------------------------------


def paths(doc: JSON, limit: int = 5000) -> list[Path]:
    """Every node's path, the root's included, breadth first (a real
    manifest has a few hundred; a deeply nested one is cut at ``limit``)."""
    out: list[Path] = []
    todo: collections.deque[tuple[Path, JSON]] = collections.deque([((), doc)])
    while todo and len(out) < limit:
        prefix, node = todo.popleft()
        out.append(prefix)
        if isinstance(node, dict):
            todo.extend(((*prefix, k), v) for k, v in node.items())
        elif isinstance(node, list):
            todo.extend(((*prefix, i), v) for i, v in enumerate(node))
    return out


def get(doc: JSON, path: Path) -> JSON:
    for p in path:
        doc = doc[p]
    return doc


def put(doc: JSON, path: Path, value: JSON) -> JSON:
    """``doc`` with the node at ``path`` replaced (the root: the value itself)."""
    if not path:
        return value
    get(doc, path[:-1])[path[-1]] = value
    return doc


def delete(doc: JSON, path: Path) -> None:
    parent = get(doc, path[:-1])
    del parent[path[-1]]


def _looks_like_quantity(path: Path, value: JSON) -> bool:
    keys = [p for p in path if isinstance(p, str)]
    return bool(keys) and (
        keys[-1]
        in ("nominalQuota", "borrowingLimit", "lendingLimit", "count", "minCount", "priority", "value")
        or (len(keys) >= 2 and keys[-2] in ("requests", "limits", "resources", "total", "resourceUsage"))
        or isinstance(value, (int, float))
    )


# --- mutators on the structure --------------------------------------------------------------------
# Each takes (rng, docs) and changes docs in place; the name is recorded in the case.


def _pick_node(
    rng: random.Random, docs: list[JSON], want: Callable[[Path, JSON], bool]
) -> tuple[int, Path] | None:
    cands = [(i, p) for i, d in enumerate(docs) for p in paths(d) if p and want(p, get(d, p))]
    return rng.choice(cands) if cands else None


def m_delete_field(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: True)
    if hit:
        delete(docs[hit[0]], hit[1])


def m_duplicate_element(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: isinstance(v, list) and bool(v))
    if hit:
        lst = get(docs[hit[0]], hit[1])
        lst.insert(rng.randrange(len(lst) + 1), copy.deepcopy(rng.choice(lst)))


def m_duplicate_document(rng: random.Random, docs: list[JSON]) -> None:
    if docs:
        docs.insert(rng.randrange(len(docs) + 1), copy.deepcopy(rng.choice(docs)))


def m_delete_document(rng: random.Random, docs: list[JSON]) -> None:
    if docs:
        del docs[rng.randrange(len(docs))]


def m_retype(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: True)
    if hit:
        put(docs[hit[0]], hit[1], copy.deepcopy(rng.choice(RETYPES)))


def m_retype_document(rng: random.Random, docs: list[JSON]) -> None:
    if docs:
        docs[rng.randrange(len(docs))] = copy.deepcopy(rng.choice(RETYPES))


def m_extreme_quantity(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, _looks_like_quantity)
    if hit:
        put(docs[hit[0]], hit[1], rng.choice(EXTREME_QUANTITIES))


def m_weird_string(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: isinstance(v, str))
    if hit:
        put(docs[hit[0]], hit[1], rng.choice(WEIRD_STRINGS))


def m_weird_key(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: isinstance(v, dict))
    if hit:
        get(docs[hit[0]], hit[1])[rng.choice(WEIRD_STRINGS)] = rng.choice(RETYPES)


def m_rename_key(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: isinstance(p[-1], str) and p[-1] in KEY_TYPOS)
    if hit:
        i, p = hit
        parent = get(docs[i], p[:-1])
        parent[rng.choice(KEY_TYPOS[p[-1]])] = parent.pop(p[-1])


def m_swap_values(rng: random.Random, docs: list[JSON]) -> None:
    """A value from elsewhere (another field, maybe another document)."""
    a = _pick_node(rng, docs, lambda p, v: True)
    b = _pick_node(rng, docs, lambda p, v: True)
    if a and b:
        put(docs[a[0]], a[1], copy.deepcopy(get(docs[b[0]], b[1])))


def m_kind(rng: random.Random, docs: list[JSON]) -> None:
    dicts = [d for d in docs if isinstance(d, dict)]
    if dicts:
        d = rng.choice(dicts)
        if rng.random() < 0.5:
            d["kind"] = rng.choice(KINDS)
        else:
            d["apiVersion"] = rng.choice(API_VERSIONS)


def m_name_clash(rng: random.Random, docs: list[JSON]) -> None:
    """Two objects of one kind with one name, or a reference to a missing one."""
    named = [d for d in docs if isinstance(d, dict) and isinstance(d.get("metadata"), dict)]
    if len(named) >= 2:
        a, b = rng.sample(named, 2)
        a["metadata"]["name"] = b["metadata"].get("name")


def m_nest(rng: random.Random, docs: list[JSON]) -> None:
    """A value wrapped in lists or mappings a few to a few hundred deep."""
    hit = _pick_node(rng, docs, lambda p, v: True)
    if hit:
        v = get(docs[hit[0]], hit[1])
        for _ in range(rng.choice((2, 10, 100, 400))):
            v = [v] if rng.random() < 0.5 else {"x": v}
        put(docs[hit[0]], hit[1], v)


def m_deep_nest(rng: random.Random, docs: list[JSON]) -> None:
    """Nesting past any parser's recursion limit (issue 21 item 3)."""
    hit = _pick_node(rng, docs, lambda p, v: True)
    if hit:
        v: JSON = "x"
        for _ in range(rng.choice((1000, 3000, 6000))):
            v = [v]
        put(docs[hit[0]], hit[1], v)


def m_grow_list(rng: random.Random, docs: list[JSON]) -> None:
    """A list (pod sets, flavors, resources, documents) grown to hundreds or thousands."""
    hit = _pick_node(rng, docs, lambda p, v: isinstance(v, list) and bool(v))
    if hit:
        lst = get(docs[hit[0]], hit[1])
        n = rng.choice((17, 64, 300, 2000))
        lst.extend(copy.deepcopy(lst[i % len(lst)]) for i in range(n))


def m_many_objects(rng: random.Random, docs: list[JSON]) -> None:
    """One object copied under many names (a few thousand Workloads or queues)."""
    named = [d for d in docs if isinstance(d, dict) and isinstance(d.get("metadata"), dict)]
    if named:
        d = rng.choice(named)
        for i in range(rng.choice((100, 1000, 3000))):
            c = copy.deepcopy(d)
            c["metadata"]["name"] = f"{c['metadata'].get('name')}-{i}"
            docs.append(c)


TIMES = [
    "0001-01-01T00:00:00Z",
    "1970-01-01T00:00:00Z",
    "1969-12-31T23:59:59Z",
    "2262-04-11T23:47:16Z",
    "2262-04-12T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "2026-01-01T00:00:00.123456789Z",
    "2026-01-01T00:00:00+14:00",
    "2026-01-01T00:00:00",
    "2026-01-01",
    "2026-02-30T00:00:00Z",
    "not a time",
    "",
    0,
    -1,
]


def m_extreme_time(rng: random.Random, docs: list[JSON]) -> None:
    """A timestamp (creation, transition, eviction) at the edges of the calendar and of int64 nanoseconds."""
    hit = _pick_node(
        rng,
        docs,
        lambda p, v: isinstance(p[-1], str) and (p[-1].endswith(("Timestamp", "Time")) or p[-1] == "time"),
    )
    if hit:
        put(docs[hit[0]], hit[1], rng.choice(TIMES))


def m_huge_string(rng: random.Random, docs: list[JSON]) -> None:
    hit = _pick_node(rng, docs, lambda p, v: isinstance(v, str))
    if hit:
        put(docs[hit[0]], hit[1], "y" * rng.choice((100_000, 2_000_000)))


STRUCTURE_MUTATORS: dict[str, Callable[[random.Random, list[JSON]], None]] = {
    "delete-field": m_delete_field,
    "duplicate-element": m_duplicate_element,
    "duplicate-document": m_duplicate_document,
    "delete-document": m_delete_document,
    "retype": m_retype,
    "retype-document": m_retype_document,
    "extreme-quantity": m_extreme_quantity,
    "weird-string": m_weird_string,
    "weird-key": m_weird_key,
    "rename-key": m_rename_key,
    "swap-values": m_swap_values,
    "kind": m_kind,
    "name-clash": m_name_clash,
    "nest": m_nest,
    "deep-nest": m_deep_nest,
    "grow-list": m_grow_list,
    "many-objects": m_many_objects,
    "huge-string": m_huge_string,
    "extreme-time": m_extreme_time,
}
# how often each is drawn (the cheap, precise ones most)
WEIGHTS = {
    "delete-field": 6,
    "duplicate-element": 4,
    "duplicate-document": 2,
    "delete-document": 2,
    "retype": 6,
    "retype-document": 1,
    "extreme-quantity": 8,
    "weird-string": 4,
    "weird-key": 3,
    "rename-key": 3,
    "swap-values": 4,
    "kind": 2,
    "name-clash": 2,
    "nest": 1,
    "deep-nest": 1,
    "grow-list": 1,
    "many-objects": 1,
    "huge-string": 1,
    "extreme-time": 3,
}


# --- writing the text ------------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


@contextlib.contextmanager
def _deep_recursion() -> Iterator[None]:
    """Deep nesting (m_deep_nest) needs more recursion than Python's default
    to copy and dump, in the fuzzer only: the children run with the default."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 60_000))
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def dump(docs: list[JSON], style: str) -> str:
    """The documents as YAML (block or flow) or JSON (one document, or a
    List of them)."""
    with _deep_recursion():
        return _dump(docs, style)


def _dump(docs: list[JSON], style: str) -> str:
    if style == "json":
        if len(docs) == 1:
            return json.dumps(docs[0], indent=1)
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": docs}, indent=1)
    flow = style == "flow"
    return yaml.dump_all(
        docs, Dumper=_Dumper, sort_keys=False, default_flow_style=flow, width=120, allow_unicode=True
    )


def _aliases(rng: random.Random, docs: list[JSON]) -> None:
    """Two nodes made one Python object: the dumper writes an anchor and an alias."""
    a = _pick_node(rng, docs, lambda p, v: isinstance(v, (dict, list)))
    b = _pick_node(rng, docs, lambda p, v: True)
    if a and b and a != b:
        try:
            put(docs[b[0]], b[1], get(docs[a[0]], a[1]))
        except (KeyError, IndexError, TypeError):
            pass


def _alias_bomb(depth: int) -> str:
    """A Job whose container args hold ``depth`` levels of ten aliases each
    (10**depth strings once expanded; issue 21 item 1)."""
    levels = ['&a0 ["lol"]'] + [f"&a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, depth)]
    return (
        "apiVersion: batch/v1\nkind: Job\n"
        "metadata: {name: bomb, namespace: default, labels: {kueue.x-k8s.io/queue-name: lq}}\n"
        "spec:\n  suspend: true\n  template:\n    spec:\n      restartPolicy: Never\n      containers:\n"
        '      - {name: c, image: busybox, resources: {requests: {cpu: "1"}}, args: ['
        + ", ".join(levels)
        + "]}\n"
    )


TEXT_MUTATORS = (
    "crlf",
    "bom",
    "utf16",
    "latin1",
    "tabs",
    "truncate",
    "flip-bytes",
    "duplicate-key",
    "no-separator",
    "alias-bomb",
    "nul-bytes",
    "empty",
)


def text_mutate(rng: random.Random, name: str, text: str) -> tuple[bytes, str]:
    """``text`` changed by the text mutator ``name``, as bytes."""
    if name == "crlf":
        return text.replace("\n", "\r\n").encode(), name
    if name == "bom":
        return b"\xef\xbb\xbf" + text.encode(), name
    if name == "utf16":
        return text.encode("utf-16"), name
    if name == "latin1":
        return text.replace("a", "\xe9", 3).encode("latin-1", "replace"), name
    if name == "tabs":
        return text.replace("  ", "\t", rng.randrange(1, 4)).encode(), name
    if name == "truncate":
        data = text.encode()
        return data[: rng.randrange(len(data) + 1)], name
    if name == "flip-bytes":
        data = bytearray(text.encode())
        for _ in range(rng.randrange(1, 8)):
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), name
    if name == "duplicate-key":  # issue 21 item 4: a line repeated in its mapping
        lines = text.split("\n")
        cands = [i for i, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("-")]
        if cands:
            i = rng.choice(cands)
            lines.insert(i + 1, lines[i])
        return "\n".join(lines).encode(), name
    if name == "no-separator":  # issue 21 item 4: `cat a.yaml b.yaml`
        return text.replace("\n---\n", "\n", 1).encode(), name
    if name == "alias-bomb":  # issue 21 item 1
        return (text + "\n---\n" + _alias_bomb(rng.choice((5, 7, 9)))).encode(), name
    if name == "nul-bytes":
        data = text.encode()
        i = rng.randrange(len(data) + 1)
        return data[:i] + b"\x00" * rng.randrange(1, 4) + data[i:], name
    if name == "empty":
        return rng.choice((b"", b"\n", b"---\n", b"--- \n...\n", b"null\n", b"[]\n", b"{}\n", b"~")), name
    raise KeyError(name)


def make_case(rng: random.Random, corpus: list[tuple[str, list[JSON]]], enabled: set[str]) -> Case:
    """One case from a random corpus entry (see the module docstring);
    only mutators named in ``enabled`` are drawn."""
    source, original = rng.choice(corpus)
    docs = copy.deepcopy(original)
    applied: list[str] = []
    names = [n for n in STRUCTURE_MUTATORS if n in enabled]
    weights = [WEIGHTS[n] for n in names]
    with _deep_recursion():  # a later mutator may copy what m_deep_nest made
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            n = rng.choices(names, weights)[0]
            STRUCTURE_MUTATORS[n](rng, docs)
            applied.append(n)
    if "aliases" in enabled and rng.random() < 0.1:
        _aliases(rng, docs)
        applied.append("aliases")
    style = rng.choices(("block", "flow", "json"), (8, 1, 2))[0]
    try:
        text = dump(docs, style)
    except (ValueError, RecursionError):  # json: nan, or past json's own depth limit
        style = "block"
        text = dump(docs, style)
    suffix = ".json" if style == "json" else ".yaml"
    stem = source.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    texts = [n for n in TEXT_MUTATORS if n in enabled]
    if texts and rng.random() < 0.15:
        data, t = text_mutate(rng, rng.choice(texts), text)
        applied.append(t)
        return Case(f"{stem}{suffix}", data, [f"<{source}>", *applied, style])
    return Case(f"{stem}{suffix}", text.encode(), [f"<{source}>", *applied, style], docs)


ALL_MUTATORS = {*STRUCTURE_MUTATORS, "aliases", *TEXT_MUTATORS}
