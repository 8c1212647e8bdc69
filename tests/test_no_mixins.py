"""Composition, not mixins: no class of the checked packages derives from a
class defined in kueue_fast unless that base is a plain record (a dataclass,
a NamedTuple or TypedDict), a Protocol or an exception. A class assembled
from bases that share mutable attributes (mixins) fails. Read with ast:
nothing is imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kueue_fast"
CHECKED = ("kueue_fast.engine.reference",)
RECORD_BASES = {"NamedTuple", "TypedDict", "Protocol", "Exception", "ValueError", "TypeError", "KeyError"}


def _module_name(p: Path) -> str:
    parts = list(p.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _parse() -> dict[str, tuple[ast.Module, bool]]:
    return {
        _module_name(p): (ast.parse(p.read_text()), p.name == "__init__.py") for p in PACKAGE.rglob("*.py")
    }


def _names(mod: str, tree: ast.Module, is_pkg: bool) -> dict[str, str]:
    """Local name -> dotted target ("pkg.module" or "pkg.module.Name") of the module's imports."""
    out: dict[str, str] = {}
    base = mod.split(".") if is_pkg else mod.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            pkg = base[: len(base) - node.level + 1] if node.level else []
            origin = ".".join([*pkg, *([node.module] if node.module else [])])
            for a in node.names:
                out[a.asname or a.name] = f"{origin}.{a.name}"
    return out


def _base_name(b: ast.expr) -> str | None:
    if isinstance(b, ast.Subscript):
        b = b.value
    if isinstance(b, ast.Name):
        return b.id
    if isinstance(b, ast.Attribute) and isinstance(b.value, ast.Name):
        return f"{b.value.id}.{b.attr}"
    return None


def _classes(modules: dict[str, tuple[ast.Module, bool]]) -> dict[str, tuple[str, ast.ClassDef]]:
    """Dotted name -> (its module, its definition), for the module-level classes."""
    return {
        f"{mod}.{node.name}": (mod, node)
        for mod, (tree, _) in modules.items()
        for node in tree.body
        if isinstance(node, ast.ClassDef)
    }


class _Package:
    def __init__(self, modules: dict[str, tuple[ast.Module, bool]]) -> None:
        self.modules = modules
        self.classes = _classes(modules)
        self.imports = {mod: _names(mod, tree, is_pkg) for mod, (tree, is_pkg) in modules.items()}

    def base(self, mod: str, b: ast.expr) -> str | None:
        """The dotted name of a base class defined in the package (None: defined elsewhere)."""
        name = _base_name(b)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = f"{mod}.{head}" if f"{mod}.{head}" in self.classes else self.imports[mod].get(head, "")
        if rest:
            target = f"{target}.{rest}"
        return target if target in self.classes else None

    def is_record(self, key: str) -> bool:
        """A dataclass, or a class whose bases make it a record, Protocol or
        exception (through the package's own records and exceptions too)."""
        mod, cls = self.classes[key]
        for d in cls.decorator_list:
            f = d.func if isinstance(d, ast.Call) else d
            if (isinstance(f, ast.Name) and f.id == "dataclass") or (
                isinstance(f, ast.Attribute) and f.attr == "dataclass"
            ):
                return True
        for b in cls.bases:
            inside = self.base(mod, b)
            if (inside is not None and self.is_record(inside)) or (
                inside is None and (_base_name(b) or "").split(".")[-1] in RECORD_BASES
            ):
                return True
        return False


def _offenders(modules: dict[str, tuple[ast.Module, bool]]) -> list[str]:
    pkg = _Package(modules)
    bad = []
    for mod, (tree, _) in sorted(modules.items()):
        if not mod.startswith(CHECKED):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    target = pkg.base(mod, b)
                    if target is not None and not pkg.is_record(target):
                        bad.append(f"{mod}.{node.name} derives from {target}")
    return bad


def test_no_class_derives_from_a_package_class_other_than_a_record() -> None:
    assert _offenders(_parse()) == []


def test_the_check_sees_a_mixin_and_passes_records() -> None:
    source = {
        "kueue_fast.engine.reference.parts": (
            "from dataclasses import dataclass\n"
            "class Part:\n    x: int\n"
            "@dataclass\nclass Rec:\n    x: int\n"
            "class Err(ValueError):\n    pass\n"
            "class SubErr(Err):\n    pass\n"
        ),
        "kueue_fast.engine.reference.whole": (
            "from .parts import Part, Rec, SubErr\nfrom . import parts\n"
            "class A(Part): ...\nclass B(parts.Part): ...\nclass C(Rec): ...\nclass D(SubErr): ...\n"
        ),
    }
    modules = {m: (ast.parse(s), False) for m, s in source.items()}
    assert _offenders(modules) == [
        "kueue_fast.engine.reference.whole.A derives from kueue_fast.engine.reference.parts.Part",
        "kueue_fast.engine.reference.whole.B derives from kueue_fast.engine.reference.parts.Part",
    ]
