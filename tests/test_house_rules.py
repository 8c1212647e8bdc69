"""The house rules a reviewer would otherwise check by hand (read from the
sources with ast, nothing imported):

* no module of the package over about 600 lines, Cython ones included;
* no function over 80 lines without a ``# long:`` comment saying why, just
  above it or at the top of its body;
* no class assembled from mixins: a class may derive from at most one class
  of the package, and none of the package's classes is a ``...Mixin``;
* docstrings, comments and the docs name only files that exist in this
  repository (or the few outside it that they cite on purpose).

Import cycles have their own test (test_import_cycles.py).
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kueue_fast"
MODULE_LINES = 620  # "about 600"
FUNCTION_LINES = 80
# files outside this repository that comments cite on purpose
EXTERNAL_FILES = {"yaml/resolver.py", "sitecustomize.py"}


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_about_600_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MODULE_LINES
    }
    assert long == {}


def _says_why(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    above = lines[max(0, first - 4) : first - 1]
    top = lines[node.lineno - 1 : node.body[0].lineno + 2]
    return any(line.strip().startswith("# long:") for line in above + top)


def test_no_function_is_over_80_lines_without_saying_why() -> None:
    long = []
    for p in _modules():
        text = p.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                if n > FUNCTION_LINES and not _says_why(lines, node):
                    long.append(f"{p.relative_to(ROOT)}:{node.lineno} {node.name} ({n} lines)")
    assert long == []


def test_no_class_is_assembled_from_mixins() -> None:
    classes: dict[str, str] = {}
    bases: dict[str, list[str]] = {}
    for p in _modules():
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef):
                where = f"{p.relative_to(ROOT)}:{node.lineno} {node.name}"
                classes[node.name] = where
                bases[where] = [ast.unparse(b).rpartition(".")[2] for b in node.bases]
    mixins = sorted(w for name, w in classes.items() if name.endswith("Mixin"))
    assembled = sorted(w for w, bs in bases.items() if len([b for b in bs if b in classes]) > 1)
    assert (mixins, assembled) == ([], [])


FILE_NAME = re.compile(r"(?<![\w.\-/*])((?:[\w.\-]+/)*[\w\-]+\.(?:py|pyx|pyi|cpp|hpp))\b")


def test_the_sources_and_docs_name_only_files_that_exist() -> None:
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    if not files:  # not a git checkout (an unpacked sdist): nothing to hold the names against
        return
    paths, names = set(files), {Path(f).name for f in files}
    missing = []
    for f in files:
        if not f.endswith((".py", ".pyx", ".pyi", ".cpp", ".hpp", ".md")) or f.startswith("tests/data/"):
            continue
        for i, line in enumerate((ROOT / f).read_text(errors="replace").splitlines(), 1):
            for m in FILE_NAME.finditer(line):
                name = m.group(1)
                if name in EXTERNAL_FILES:
                    continue
                found = (
                    any(p == name or p.endswith("/" + name) for p in paths) if "/" in name else name in names
                )
                if not found:
                    missing.append(f"{f}:{i} {name}")
    assert missing == []
