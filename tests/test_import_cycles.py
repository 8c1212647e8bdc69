"""No import cycles in kueue_fast: read every module's imports with ast and
look for cycles in the graph (cheap: no module is imported).

* Module level (TYPE_CHECKING blocks aside): nowhere in the package.
* Deferred imports too (inside functions): not among the simulation tooling
  (simulate/, whatif/, commands/cli.py, bench/), whose commands import lazily to
  keep the CLI's start fast, not to dodge a cycle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kueue_fast"
TOOLING = ("kueue_fast.simulate", "kueue_fast.whatif", "kueue_fast.commands.cli", "kueue_fast.bench")


def _modules() -> dict[str, tuple[Path | None, bool]]:
    """Dotted name -> (source, is a package); compiled modules (a .pyi) have no source."""
    out: dict[str, tuple[Path | None, bool]] = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    for p in sorted(PACKAGE.rglob("*.pyi")):
        out.setdefault(".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts), (None, False))
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING"
    )


def _runtime_imports(body: list[ast.stmt], deferred: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """Imports that can run: at module level, and (``deferred``) in function
    bodies too; never those under TYPE_CHECKING."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node):
                yield from _runtime_imports(node.body, deferred)
            yield from _runtime_imports(node.orelse, deferred)
        elif isinstance(node, ast.Try):
            for block in (node.body, *(h.body for h in node.handlers), node.orelse, node.finalbody):
                yield from _runtime_imports(block, deferred)
        elif isinstance(node, ast.ClassDef):
            yield from _runtime_imports(node.body, deferred)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if deferred:
                yield from _runtime_imports(node.body, deferred)
        elif isinstance(node, (ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)):
            yield from _runtime_imports(node.body, deferred)


def import_graph(deferred: bool) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``deferred``: counting
    imports inside functions too)."""
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, (path, is_pkg) in mods.items():
        graph[name] = set()
        if path is None:
            continue
        tree = ast.parse(path.read_text(), str(path))
        nodes = list(_runtime_imports(tree.body, deferred))
        here = name if is_pkg else name.rpartition(".")[0]
        for node in nodes:
            if isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names if a.name in mods}
                continue
            if node.level:
                base = here.split(".")[: len(here.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                if sub in mods:  # from package import module
                    graph[name].add(sub)
                elif target in mods:
                    graph[name].add(target)
        graph[name].discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _describe(comps: list[list[str]], graph: dict[str, set[str]]) -> str:
    return "\n".join("; ".join(f"{v} -> {', '.join(sorted(graph[v] & set(c)))}" for v in c) for c in comps)


def test_the_checker_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_level_import_cycle() -> None:
    graph = import_graph(deferred=False)
    assert "kueue_fast.simulate.event_loop" in graph  # the walk found the package
    comps = cycles(graph)
    assert not comps, "module-level import cycles:\n" + _describe(comps, graph)


def test_no_import_cycle_counting_imports_inside_functions() -> None:
    graph = import_graph(deferred=True)
    comps = cycles(graph)
    assert not comps, "import cycles (imports inside functions included):\n" + _describe(comps, graph)
