"""What one input may hold, checked on every reader (loader/documents.py):

* **size**: at most :func:`max_input_bytes` per file or stream
  (``$KUEUE_FAST_MAX_INPUT_BYTES``, default 512Mi), so that an endless stream
  (``/dev/zero``, ``yes | kueue-fast schedule -``) is refused instead of read
  until memory runs out;
* **nesting**: at most :data:`MAX_NESTING_DEPTH` collections inside one another
  (libyaml refuses 1,000; everything after the loader, the YAML output and
  deepcopy included, handles 100 levels with room to spare, and no Kubernetes
  object comes close: Kueue's deepest CRD, the Workload's, is 34 deep);
* **aliases**: YAML alias expansion bounded as Go's yaml.v3 bounds it
  (:func:`check_yaml_nodes`), so that a few kilobytes cannot stand for
  billions of nodes;
* **duplicate keys**: refused with the key and both lines, as kubectl does
  (sigs.k8s.io/yaml: ``key "x" already set in map``): a later key does not
  silently replace an earlier one.

Messages are :class:`TextProblem` s (the reader adds "invalid YAML" or
"invalid JSON" and the file's name)."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from .. import _compiled

MAX_NESTING_DEPTH = 100

# --- size --------------------------------------------------------------------------------

MAX_INPUT_ENV = "KUEUE_FAST_MAX_INPUT_BYTES"
DEFAULT_MAX_INPUT = "512Mi"
_BINARY_SUFFIXES = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}


def max_input_bytes() -> tuple[int, str]:
    """The most one file or stream may hold: ``$KUEUE_FAST_MAX_INPUT_BYTES``
    (bytes, or with a suffix Ki, Mi, Gi, Ti), else 512Mi; and the setting as
    text, for the error that names it. ValueError for a setting that is not one."""
    text = os.environ.get(MAX_INPUT_ENV, "").strip() or DEFAULT_MAX_INPUT
    m = re.fullmatch(r"([0-9]+)(Ki|Mi|Gi|Ti)?", text)
    if m is None or int(m.group(1)) == 0:
        raise ValueError(
            f"{MAX_INPUT_ENV}={text!r}: expected a positive number of bytes, optionally with Ki, Mi, Gi or Ti"
        )
    return int(m.group(1)) * _BINARY_SUFFIXES[m.group(2) or ""], text


def too_large(limit_text: str) -> str:
    return f"larger than {limit_text} bytes (the limit; {MAX_INPUT_ENV} sets it)"


# --- messages ----------------------------------------------------------------------------


class TextProblem(Exception):
    """A text that breaks one of these limits, at a place (1-based line and column)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, note: str = ""):
        where = f" at line {line}, column {column}" if line is not None else ""
        super().__init__(f"{message}{where}{note}")


def too_deep(line: int | None = None, column: int | None = None) -> TextProblem:
    return TextProblem(f"exceeded maximum nesting depth of {MAX_NESTING_DEPTH}", line, column)


def duplicate_key(key: object, line: int, column: int, first_line: int, top_level: bool) -> TextProblem:
    # A top-level key twice: most often two files joined (cat a.yaml b.yaml) without '---'.
    hint = ": a missing '---' between documents?" if top_level else ""
    return TextProblem(f"duplicate key {_quoted(key)}", line, column, f" (first at line {first_line}{hint})")


def _quoted(key: object) -> str:
    return json.dumps(key, ensure_ascii=False) if isinstance(key, str) else str(key)


# --- nesting -----------------------------------------------------------------------------


def nesting_exceeds_py(value: Any, max_depth: int = MAX_NESTING_DEPTH) -> bool:
    """Whether a value read from a text (dicts, lists, scalars; no cycles) holds
    collections more than max_depth deep, or a collection as a mapping key
    (yaml-rs reads ``{[a]: b}`` with a tuple key where PyYAML refuses the
    unhashable key). The Python twin of ``loader._nesting.nesting_exceeds``."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict):
            if any(type(k) in (tuple, frozenset) for k in v):
                return True
            items: Any = v.values()
        elif isinstance(v, list):
            items = v
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((c, depth + 1) for c in items if isinstance(c, (dict, list)))
    return False


# The compiled twin of nesting_exceeds_py (loader/_nesting.pyx), used when this
# installation's module is from these sources (_compiled); else the Python one.
_nesting = _compiled.module("loader._nesting")


def nesting_exceeds(value: Any, max_depth: int = MAX_NESTING_DEPTH) -> bool:
    """nesting_exceeds_py, compiled when built."""
    if _nesting is not None:
        return bool(_nesting.nesting_exceeds(value, max_depth))
    return nesting_exceeds_py(value, max_depth)


# --- JSON: nesting and duplicate keys ----------------------------------------------------

# In a valid JSON text: strings (whole, escapes included) and the characters
# that open, close and separate; everything else (numbers, literals, commas,
# white space) is skipped by finditer.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:]')


def json_problem(text: str, max_depth: int = MAX_NESTING_DEPTH) -> TextProblem | None:
    """The first place (in text order) of a valid JSON text where collections
    nest more than max_depth deep or an object repeats a key, or None. Also
    for a text too deep for the JSON parsers (they refuse it, this finds where).
    ``loader._json_items.json_suspect`` is the fast filter: no problem here when it says False."""
    stack: list[
        dict[str, int] | None
    ] = []  # per open collection: an object's keys (-> position), None for an array
    last: re.Match[str] | None = None  # the string just read, a key if ':' follows
    for m in _JSON_TOKEN.finditer(text):
        c = text[m.start()]
        if c == '"':
            last = m
            continue
        if c == ":" and last is not None and stack and stack[-1] is not None:
            keys = stack[-1]
            key = json.loads(last.group())
            if key in keys:
                line, column = _line_column(text, last.start())
                first_line, _ = _line_column(text, keys[key])
                return duplicate_key(key, line, column, first_line, top_level=False)
            keys[key] = last.start()
        elif c in "{[":
            if len(stack) >= max_depth:
                return too_deep(*_line_column(text, m.start()))
            stack.append({} if c == "{" else None)
        elif c in "}]" and stack:
            stack.pop()
        last = None
    return None


def _line_column(text: str, pos: int) -> tuple[int, int]:
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


# --- YAML aliases ------------------------------------------------------------------------

# Go's gopkg.in/yaml.v3 decode.go (alias_ratio_range_low/high, allowedAliasRatio,
# decoder.unmarshal): while a document is decoded, every node counts, and
# those reached through an alias count as aliased too; once more than 1,000
# nodes are decoded and more than 100 of them aliased, the aliased share may be
# at most 99% up to 400,000 decoded nodes, falling linearly to 10% at
# 4,000,000 ("document contains excessive aliasing"). The Kubernetes API
# machinery's YAML (sigs.k8s.io/yaml, yaml.v2) has the same rule.
ALIAS_RATIO_RANGE_LOW = 400_000
ALIAS_RATIO_RANGE_HIGH = 4_000_000
ALIAS_MIN_DECODED = 1000
ALIAS_MIN_ALIASED = 100


def allowed_alias_ratio(decoded: int) -> float:
    """yaml.v3's allowedAliasRatio."""
    if decoded <= ALIAS_RATIO_RANGE_LOW:
        return 0.99
    if decoded >= ALIAS_RATIO_RANGE_HIGH:
        return 0.10
    return 0.99 - 0.89 * (
        (decoded - ALIAS_RATIO_RANGE_LOW) / (ALIAS_RATIO_RANGE_HIGH - ALIAS_RATIO_RANGE_LOW)
    )


def _excessive(decoded: int, aliased: int) -> bool:
    """yaml.v3's test, made after each node is counted."""
    return (
        aliased > ALIAS_MIN_ALIASED
        and decoded > ALIAS_MIN_DECODED
        and aliased / decoded > allowed_alias_ratio(decoded)
    )


class AliasTotals:
    """The nodes of a whole text, over its documents. yaml.v3 counts each
    document alone, and so does :func:`check_yaml_nodes`; but where kubectl
    applies one document at a time, kueue-fast holds them all, so the text as
    a whole may expand its aliases to no more nodes than it writes, beyond
    ALIAS_RATIO_RANGE_HIGH (about 40 MB of JSON)."""

    def __init__(self) -> None:
        self.written = 0
        self.aliased = 0

    def add(self, decoded: int, aliased: int) -> None:
        self.written += decoded - aliased
        self.aliased += aliased
        if self.aliased > max(ALIAS_RATIO_RANGE_HIGH, self.written):
            raise TextProblem(
                f"the documents contain excessive aliasing: {self.aliased:,} nodes come from aliases, "
                f"more than the {self.written:,} written and than {ALIAS_RATIO_RANGE_HIGH:,}"
            )


def check_yaml_nodes(root: Any, totals: AliasTotals | None = None) -> None:
    """A document as PyYAML composes it (yaml.nodes: an alias is the node it
    names, the same object) held to yaml.v3's alias rule, without expanding
    anything: each node's expanded size and height are computed once, in
    document order (an anchor comes before its aliases), and an alias adds
    its target's. Also refused: an anchor whose value holds an alias of
    itself (yaml.v3: "anchor 'a' value contains itself") and nesting deeper
    than MAX_NESTING_DEPTH, aliases expanded. Raises TextProblem.

    The counts equal yaml.v3's: the document node and every node decoded
    count once, an alias node once more (not as aliased: yaml.v3 counts it
    before following it) and then its target's expanded nodes as aliased.
    yaml.v3 tests after each node; within one alias's expansion the aliased
    share only grows and the allowed share only shrinks, so testing at its end
    decides the same."""
    from yaml.nodes import MappingNode, SequenceNode

    done: dict[int, tuple[int, int]] = {}  # id(node) -> (expanded nodes, height) of a node read
    reading: set[int] = set()  # id(node) of the collections open now
    # open collections, innermost last: [node, its children, expanded nodes so far, tallest child]
    stack: list[list[Any]] = []
    decoded, aliased = 1, 0  # the document node

    def read(node: Any) -> None:
        nonlocal decoded, aliased
        depth = len(stack)  # collections around this node
        known = done.get(id(node))
        if known is not None:  # an alias of a node read before
            size, height = known
            decoded += 1 + size
            aliased += size
            if stack:
                stack[-1][2] += 1 + size
                stack[-1][3] = max(stack[-1][3], height)
            if depth + height > MAX_NESTING_DEPTH:
                raise too_deep(node.start_mark.line + 1, node.start_mark.column + 1)
        elif isinstance(node, (MappingNode, SequenceNode)):
            if id(node) in reading:
                mark = node.start_mark
                raise TextProblem(
                    "an anchor's value contains an alias of itself", mark.line + 1, mark.column + 1
                )
            decoded += 1
            if depth + 1 > MAX_NESTING_DEPTH:
                raise too_deep(node.start_mark.line + 1, node.start_mark.column + 1)
            children = (
                (n for pair in node.value for n in pair)
                if isinstance(node, MappingNode)
                else iter(node.value)
            )
            reading.add(id(node))
            stack.append([node, children, 1, 0])
        else:  # a scalar
            decoded += 1
            done[id(node)] = (1, 0)
            if stack:
                stack[-1][2] += 1
        if aliased > ALIAS_MIN_ALIASED and _excessive(decoded, aliased):
            raise TextProblem(
                f"document contains excessive aliasing ({decoded:,} nodes, {aliased:,} of them from aliases)"
            )

    read(root)
    while stack:
        frame = stack[-1]
        child = next(frame[1], None)
        if child is not None:
            read(child)
            continue
        stack.pop()  # the collection is read
        node, size, height = frame[0], frame[2], frame[3] + 1
        reading.discard(id(node))
        done[id(node)] = (size, height)
        if stack:
            stack[-1][2] += size
            stack[-1][3] = max(stack[-1][3], height)
    if totals is not None:
        totals.add(decoded, aliased)
