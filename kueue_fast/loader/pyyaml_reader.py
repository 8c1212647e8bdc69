"""The exact YAML path: PyYAML (libyaml when built, YAML 1.1 without the
timestamp resolver), held to the loader's limits (limits.py: nesting,
aliases, keys given twice). It reads what the fast readers of documents.py
decline (anchors, aliases, tags, merge keys, plain scalars YAML 1.1 reads
otherwise) and words every YAML error; its grammar is the loader's.
PyYAML is imported only when a text needs it (about 30 ms of a command's start).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ..api.errors import ParseError
from . import limits

if TYPE_CHECKING:
    import yaml


@functools.cache
def yaml_loader() -> type:
    """PyYAML's loader as the loader reads YAML."""
    import yaml
    from yaml.constructor import BaseConstructor

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):  # type: ignore[misc,unused-ignore]
        """Timestamps stay strings (YAML's datetime drops nanoseconds, and the
        API server sees strings anyway). A key given twice in one mapping is
        refused (limits.duplicate_key); a key brought by a merge (``<<:
        *base``) may be given again. Both cost a length comparison per
        mapping when nothing collides (PyYAML's own loop builds it)."""

        _root: Any = None
        _own_pairs: dict[int, int]  # id(mapping node with merges) -> how many of its pairs are its own

        def construct_document(self, node: Any) -> Any:
            self._root, self._own_pairs = node, {}
            try:
                return super().construct_document(node)
            finally:
                self._root, self._own_pairs = None, {}

        def flatten_mapping(self, node: Any) -> None:
            pairs = node.value
            n = len(pairs)
            super().flatten_mapping(node)
            if node.value is not pairs or len(pairs) != n:
                # merged: PyYAML deleted the merge keys from this list, and put
                # the merged pairs before what is left of it, the mapping's own
                self._own_pairs.setdefault(id(node), len(pairs))

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            if isinstance(node, yaml.MappingNode):
                self.flatten_mapping(node)
            mapping: dict[Any, Any] = BaseConstructor.construct_mapping(self, node, deep=deep)
            if len(mapping) != len(node.value):  # keys collide: given twice, or merged and given again
                self._refuse_keys_given_twice(node)
            return mapping

        def _refuse_keys_given_twice(self, node: Any) -> None:
            own = node.value[len(node.value) - self._own_pairs.get(id(node), len(node.value)) :]
            lines: dict[Any, int] = {}
            for key_node, _ in own:
                key = self.construct_object(key_node)  # built already: PyYAML's memo
                mark = key_node.start_mark
                first = lines.get(key)
                if first is not None:
                    raise limits.duplicate_key(key, mark.line + 1, mark.column + 1, first, node is self._root)
                lines[key] = mark.line + 1

    resolvers_by_char: dict[str, list[tuple[str, Any]]] = base.yaml_implicit_resolvers
    Loader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for k, resolvers in resolvers_by_char.items()
    }
    return Loader


def __getattr__(name: str) -> Any:
    if name == "LOADER":  # the tests read PyYAML's documents with it
        return yaml_loader()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pyyaml_documents(text: str, source: str) -> list[Any]:
    """PyYAML's documents or its error, held to the
    loader's limits (limits.py: nesting, aliases, duplicate keys)."""
    import yaml

    loader = yaml_loader()(text)
    docs: list[Any] = []
    shared = "*" in text  # without an alias no node is shared: each document is a tree
    totals = limits.AliasTotals()
    try:
        while loader.check_node():
            node = loader.get_node()
            if shared:  # before anything is built: the counts need no expansion
                limits.check_yaml_nodes(node, totals)
            doc = loader.construct_document(node)
            if not shared and limits.nesting_exceeds(doc):
                limits.check_yaml_nodes(node)  # raises, naming the place
            docs.append(doc)
    except limits.TextProblem as e:
        where = f"{source} (document {len(docs) + 1})"
        raise ParseError("", "", f"invalid YAML: {e}", source=where) from None
    except yaml.YAMLError as e:
        raise ParseError("", "", f"invalid YAML: {_yaml_problem(e)}", source=source) from None
    except (ValueError, TypeError, RecursionError) as e:  # e.g. a key that is not hashable
        raise ParseError("", "", f"invalid YAML: {e}", source=source) from None
    except (KeyError, IndexError, AttributeError):  # a tagged scalar PyYAML cannot read: !!bool x
        raise ParseError("", "", f"invalid YAML: {_unreadable_scalar(node)}", source=source) from None
    finally:
        loader.dispose()
    return docs


def _unreadable_scalar(root: Any) -> str:
    """Where in a composed document the first scalar is that PyYAML's
    constructor for its tag fails on with an error that is not PyYAML's own
    (``!!bool x``: KeyError; ``!!int ''``: IndexError; ``!!timestamp x``)."""
    from yaml.nodes import MappingNode, ScalarNode

    loader = yaml_loader()("")
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            try:
                loader.construct_object(node)
            except (KeyError, IndexError, AttributeError):
                line, column = node.start_mark.line + 1, node.start_mark.column + 1
                return f"cannot read {node.value!r} as {node.tag} at line {line}, column {column}"
            except Exception:  # noqa: BLE001, S112 - PyYAML's own error: not the one looked for
                continue
        elif isinstance(node, MappingNode):
            stack.extend(reversed([n for pair in node.value for n in pair]))
        else:
            stack.extend(reversed(node.value))
    return "a value that cannot be read as its tag says"


def yaml_value(text: str, source: str = "") -> Any:
    """The value of a YAML text of at most one document (None for none), read
    as manifests are read: PyYAML under the loader's limits (for YAML that
    is not a file: a ``--set`` value, a ConfigMap's key). ParseError."""
    docs = pyyaml_documents(text, source)
    if len(docs) > 1:
        raise ParseError("", "", f"expected one YAML document, found {len(docs)}", source=source)
    return docs[0] if docs else None


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)
