"""Changes to a configuration: ``--set KIND/NAME.PATH=VALUE`` and patch files.

A *variant* is a configuration of the cluster (the documents of Kueue's
objects) with a label; ``--set`` and ``--patch`` make new variants from a base.

``--set`` addresses one field of one object::

    clusterqueue/team-llm.spec.resourceGroups[1].flavors[a100].resources[nvidia.com/gpu].nominalQuota=24
    localqueue/team-a/default.spec.clusterQueue=team-b
    configuration.fairSharing.preemptionStrategies=[LessThanOrEqualToFinalShare]

* the object: ``KIND/NAME`` (``KIND/NAMESPACE/NAME`` for LocalQueues), the
  kind in any case or a short name (``cq``, ``lq``, ``rf``, ``wpc``);
  ``configuration`` is Kueue's Configuration (made empty when there is none);
* the path: keys separated by dots; in a list, ``[2]`` is the third element,
  ``[a100]`` the element whose ``name`` is ``a100`` and ``[*]`` every element
  on which the rest of the path exists; on a map, ``[key.with.dots]`` is a key;
* the value: YAML (``24``, ``"24"``, ``100Gi``, ``true``, ``[a, b]``,
  ``{policy: LowerPriority}``); ``null`` removes the field.

Maps on the way are created when missing; list elements are not. The paths
the spec diff prints (``diff.py``) are in this syntax, so a change read in a
report can be given back as ``--set``.

A patch file holds YAML documents, each naming an object by ``kind``,
``metadata.name`` (and ``metadata.namespace``): it is applied to that object
as a JSON merge patch (RFC 7386: maps merge, lists and scalars replace,
``null`` removes); an object that does not exist is added as it is.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..api.errors import InputError, ParseError, QuantityError
from ..api.quantity import quantity_nanos
from ..loader import Document

JSON = dict[str, Any]

# kind names a user may type (lower case) -> Kueue's kind
KIND_ALIASES = {
    "clusterqueue": "ClusterQueue",
    "clusterqueues": "ClusterQueue",
    "cq": "ClusterQueue",
    "cohort": "Cohort",
    "cohorts": "Cohort",
    "resourceflavor": "ResourceFlavor",
    "resourceflavors": "ResourceFlavor",
    "flavor": "ResourceFlavor",
    "rf": "ResourceFlavor",
    "localqueue": "LocalQueue",
    "localqueues": "LocalQueue",
    "lq": "LocalQueue",
    "workloadpriorityclass": "WorkloadPriorityClass",
    "workloadpriorityclasses": "WorkloadPriorityClass",
    "wpc": "WorkloadPriorityClass",
    "priorityclass": "PriorityClass",
    "priorityclasses": "PriorityClass",
    "namespace": "Namespace",
    "ns": "Namespace",
    "workload": "Workload",
    "workloads": "Workload",
    "admissioncheck": "AdmissionCheck",
    "configuration": "Configuration",
}
NAMESPACED = ("LocalQueue", "Workload")
CONFIGURATION_API = "config.kueue.x-k8s.io/v1beta2"


@dataclass
class Variant:
    """One configuration of the cluster: its documents, a label, and the
    changes that made it from its base (empty for a configuration read as is)."""

    label: str
    documents: list[Document]
    changes: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    def derive(self, label: str) -> Variant:
        """A deep copy to change."""
        docs = [Document(d.source, d.index, copy.deepcopy(d.obj), d.item) for d in self.documents]
        return Variant(label, docs, list(self.changes), list(self.files))


# --- addressing ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One step of a path: a map key, or a list selector (index, name or *)."""

    key: str
    bracket: bool  # written [key]: on a list an index, a name or *; on a map a key

    def __str__(self) -> str:
        return f"[{self.key}]" if self.bracket else self.key


def parse_path(text: str) -> list[Step]:
    """``spec.resourceGroups[0].flavors[a100].x`` as steps; raises ValueError."""
    steps: list[Step] = []
    i, n = 0, len(text)
    expect_key = True
    while i < n:
        c = text[i]
        if c == "[":
            j = text.find("]", i)
            if j < 0:
                raise ValueError(f"unclosed [ at position {i + 1}")
            inner = text[i + 1 : j]
            if not inner:
                raise ValueError(f"empty [] at position {i + 1}")
            steps.append(Step(inner, True))
            i = j + 1
            expect_key = False
        elif c == ".":
            if expect_key:
                raise ValueError(f"empty field name at position {i + 1}")
            i += 1
            expect_key = True
        else:
            m = re.compile(r"[^.\[\]]+").match(text, i)
            if m is None:
                raise ValueError(f"unexpected {c!r} at position {i + 1}")
            if not expect_key:
                raise ValueError(f"missing '.' before {m.group()!r}")
            steps.append(Step(m.group(), False))
            i = m.end()
            expect_key = False
    if expect_key:
        raise ValueError("the path ends with '.'" if steps else "no field path")
    return steps


def path_text(steps: Iterable[Step]) -> str:
    out = ""
    for s in steps:
        out += str(s) if s.bracket else (("." if out else "") + s.key)
    return out


def object_ref(obj: JSON) -> str:
    """Kind/name or Kind/namespace/name of a document."""
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(md, dict)
    kind = str(obj.get("kind", "?"))
    if kind == "Configuration":
        return "Configuration"
    ns, name = md.get("namespace"), md.get("name", "?")
    return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"


def _identity(obj: JSON) -> tuple[str, str, str]:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    assert isinstance(md, dict)
    kind = str(obj.get("kind", ""))
    if kind == "Configuration":
        return (kind, "", "")
    ns = md.get("namespace") if kind in NAMESPACED else None
    return (kind, str(ns or ""), str(md.get("name", "")))


@dataclass(frozen=True)
class Setting:
    """One ``--set``: the object, the path in it, the value."""

    text: str
    kind: str
    namespace: str
    name: str
    steps: tuple[Step, ...]
    value: Any

    @property
    def ref(self) -> str:
        if self.kind == "Configuration":
            return "Configuration"
        return f"{self.kind}/{self.namespace}/{self.name}" if self.namespace else f"{self.kind}/{self.name}"

    @property
    def field_path(self) -> str:
        return path_text(self.steps)


def _split_assignment(text: str) -> tuple[str, str]:
    depth = 0
    for i, c in enumerate(text):
        if c == "[":
            depth += 1
        elif c == "]":
            depth = max(0, depth - 1)
        elif c == "=" and depth == 0:
            return text[:i], text[i + 1 :]
    raise ValueError("expected TARGET=VALUE")


def parse_value(text: str) -> Any:
    if text == "":
        raise ValueError("no value after '=' (null removes the field)")
    from ..loader.pyyaml_reader import yaml_value  # read as manifests are (aliases, nesting, keys twice)

    try:
        return yaml_value(text)
    except ParseError as e:
        raise ValueError(f"the value is not YAML: {e.message.removeprefix('invalid YAML: ')}") from None


def parse_setting(text: str, documents: Sequence[Document], option: str = "--set") -> Setting:
    """Parse ``KIND/NAME.PATH=VALUE`` against the documents it applies to."""
    try:
        target, raw = _split_assignment(text)
        value = parse_value(raw)
    except ValueError as e:
        raise InputError("", option, f"{text!r}: {e}") from None
    return replace(parse_target(target, documents, option, text), value=value)


def parse_target(
    target: str, documents: Sequence[Document], option: str = "--set", text: str = ""
) -> Setting:
    """Parse ``KIND/NAME.PATH`` (names may hold dots: the name is the longest
    prefix naming an object of the documents); the value is None."""
    text = text or target

    def fail(msg: str) -> InputError:
        return InputError("", option, f"{text!r}: {msg}")

    kind_text, sep, rest = target.partition("/")
    if not sep:  # configuration.PATH
        kind_text, _, rest = target.partition(".")
        if KIND_ALIASES.get(kind_text.lower()) != "Configuration":
            raise fail("expected KIND/NAME.PATH=VALUE (e.g. clusterqueue/team-a.spec.stopPolicy=Hold)")
        return _setting(text, "Configuration", "", "", rest, None, fail)
    kind = KIND_ALIASES.get(kind_text.lower())
    if kind is None or kind == "Configuration":
        known = sorted({k for k in KIND_ALIASES.values() if k != "Configuration"})
        raise fail(f"unknown kind {kind_text!r} (kinds: {', '.join(known)}, configuration)")
    namespace = ""
    if kind in NAMESPACED:
        namespace, sep, rest = rest.partition("/")
        if not sep:
            raise fail(f"a {kind} is named {kind.lower()}/NAMESPACE/NAME.PATH")
    names = {_identity(d.obj)[2] for d in documents if _identity(d.obj)[:2] == (kind, namespace)}
    for i, c in enumerate(rest):
        if c == "." and rest[:i] in names:
            return _setting(text, kind, namespace, rest[:i], rest[i + 1 :], None, fail)
    name = rest.split(".", 1)[0]
    if rest in names or "." not in rest:
        raise fail(f"no field path after {kind}/{rest}")
    where = f" in namespace {namespace}" if namespace else ""
    listed = ", ".join(sorted(names)[:12]) or "none"
    raise fail(f"no {kind} named {name!r}{where} (there are: {listed})")


def read_setting(documents: Sequence[Document], s: Setting) -> Any:
    """The value at a setting's path (the first element that has it under
    ``[*]``); None when the object or the field is not there."""
    node: Any = next((d.obj for d in documents if _identity(d.obj) == (s.kind, s.namespace, s.name)), None)

    def walk(node: Any, steps: Sequence[Step]) -> Any:
        if not steps:
            return node
        step, rest = steps[0], steps[1:]
        if isinstance(node, list) and step.bracket:
            if step.key == "*":
                for item in node:
                    got = walk(item, rest)
                    if got is not None:
                        return got
                return None
            if re.fullmatch(r"\d+", step.key):
                i = int(step.key)
                return walk(node[i], rest) if i < len(node) else None
            item = next((x for x in node if isinstance(x, dict) and x.get("name") == step.key), None)
            return walk(item, rest)
        if isinstance(node, dict):
            return walk(node.get(step.key), rest)
        return None

    return walk(node, s.steps)


def _setting(text: str, kind: str, ns: str, name: str, path: str, value: Any, fail: Any) -> Setting:
    try:
        steps = parse_path(path)
    except ValueError as e:
        raise fail(str(e)) from None
    return Setting(text, kind, ns, name, tuple(steps), value)


class _NotThere(Exception):
    """The path does not exist below a [*] (that element is skipped)."""


def _assign(node: Any, steps: Sequence[Step], value: Any, done: list[str], trail: str) -> None:
    step, rest = steps[0], steps[1:]
    here = trail + (str(step) if step.bracket else ("." if trail else "") + step.key)
    if isinstance(node, list):
        if not step.bracket:
            raise ValueError(
                f"{trail or 'the object'} is a list: select an element with [index], [name] or [*]"
            )
        if step.key == "*":
            if not rest and value is None:
                raise ValueError(f"{here}: null would remove every element; give the list instead")
            hits = 0
            for i in range(len(node)):
                if rest:
                    try:
                        _assign(node[i], rest, value, done, f"{trail}[{i}]")
                    except _NotThere:
                        continue
                else:
                    node[i] = copy.deepcopy(value)
                    done.append(f"{trail}[{i}]")
                hits += 1
            if not hits:
                raise _NotThere(f"{here}: no element has {path_text(rest)}")
            return
        if re.fullmatch(r"-?\d+", step.key):
            i = int(step.key)
            if not 0 <= i < len(node):
                raise ValueError(f"{here}: index out of range ({len(node)} elements)")
        else:
            found = [
                k for k, item in enumerate(node) if isinstance(item, dict) and item.get("name") == step.key
            ]
            if not found:
                names = [str(item.get("name")) for item in node if isinstance(item, dict) and "name" in item]
                raise _NotThere(
                    f"{here}: no element named {step.key!r} (names: {', '.join(names) or 'none'})"
                )
            i = found[0]
        if not rest:
            if value is None:
                del node[i]
            else:
                node[i] = copy.deepcopy(value)
            done.append(here)
            return
        _assign(node[i], rest, value, done, here)
        return
    if not isinstance(node, dict):
        raise ValueError(f"{trail} is a {type(node).__name__}, not a map or a list")
    if not rest:
        if value is None:
            node.pop(step.key, None)
        else:
            node[step.key] = copy.deepcopy(value)
        done.append(here)
        return
    if step.key not in node or node[step.key] is None:
        if rest[0].bracket:  # a list or a map? give the whole value
            raise _NotThere(f"{here}: not set (set {here} to its whole value)")
        node[step.key] = {}
    _assign(node[step.key], rest, value, done, here)


def apply_setting(documents: list[Document], s: Setting, option: str = "--set") -> list[str]:
    """Apply one setting in place; returns the field paths it changed."""
    target = None
    for k, d in enumerate(documents):
        if _identity(d.obj) == (s.kind, s.namespace, s.name):
            target = k
            break
    if target is None:
        if s.kind != "Configuration":
            raise InputError(s.ref, "", f"does not exist ({option} {s.text!r})")
        documents.append(
            Document(option, len(documents), {"apiVersion": CONFIGURATION_API, "kind": "Configuration"})
        )
        target = len(documents) - 1
    obj = documents[target].obj
    done: list[str] = []
    try:
        _assign(obj, s.steps, s.value, done, "")
    except _NotThere as e:
        raise InputError(s.ref, s.field_path, f"{e.args[0]} ({option} {s.text!r})") from None
    except ValueError as e:
        raise InputError(s.ref, s.field_path, f"{e} ({option} {s.text!r})") from None
    return done


# --- patch files ------------------------------------------------------------------------------------


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def read_patch(path: str) -> list[Document]:
    from ..loader import read_documents

    docs = read_documents([path])
    for d in docs:
        kind = d.obj.get("kind")
        md = d.obj.get("metadata")
        if not isinstance(kind, str) or (
            kind != "Configuration" and not (isinstance(md, dict) and isinstance(md.get("name"), str))
        ):
            raise InputError(
                "",
                "kind" if not isinstance(kind, str) else "metadata.name",
                "a patch names its object by kind and metadata.name (and metadata.namespace)",
                source=d.where,
            )
    return docs


def apply_patch(documents: list[Document], patch: Sequence[Document]) -> list[str]:
    """Apply the documents of a patch file in place; returns what changed
    (``Kind/name patched``, ``Kind/name added``)."""
    out = []
    for p in patch:
        ident = _identity(p.obj)
        for k, d in enumerate(documents):
            if _identity(d.obj) == ident:
                merged = merge_patch(d.obj, p.obj)
                documents[k] = Document(d.source, d.index, merged, d.item)
                out.append(f"{object_ref(merged)} patched ({p.source})")
                break
        else:
            if "apiVersion" not in p.obj:
                raise InputError(
                    object_ref(p.obj),
                    "apiVersion",
                    "does not exist, and a new object needs its apiVersion",
                    source=p.where,
                )
            documents.append(p)
            out.append(f"{object_ref(p.obj)} added ({p.source})")
    return out


def apply_changes(
    base: Variant, settings: Sequence[str], patches: Sequence[str], label: str | None = None
) -> Variant:
    """``base`` with the patch files applied, then the settings (in order)."""
    v = base.derive(label or base.label)
    for path in patches:
        for line in apply_patch(v.documents, read_patch(path)):
            v.changes.append(line)
    for text in settings:
        s = parse_setting(text, v.documents)
        apply_setting(v.documents, s)
        v.changes.append(f"{s.ref} {s.field_path}={_show(s.value)}")
    return v


def _show(value: Any) -> str:
    if isinstance(value, (dict, list)):
        import yaml

        return yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


show_value = _show


def as_number(v: Any) -> float | None:
    """A parameter value as a number for a plot axis (quantities too: ``100Gi``); None if it is not one."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return quantity_nanos(v) / 1e9
        except QuantityError:
            return None
    return None
