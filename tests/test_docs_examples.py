"""Examples that cannot rot: every example in README.md and docs/ runs here.

The fenced blocks of each page run in order, from the repository's root, in
a scratch copy of ``examples/`` (so reports land in a temporary folder):

- ``console``: ``$ COMMAND`` lines (``\\`` continues one) run in a shell and
  what they print (standard output and error, in order) must match the lines
  under them. ``...`` alone on a line stands for any lines, ``...`` inside a
  line for any text: the lines that matter are compared exactly. ``$ cd DIR``
  moves the page to DIR for the blocks that follow.
- ``sh``/``bash``/``shell``: each line is a command (a ``# comment`` after it
  is dropped); it must exit 0, its output is not compared.
- ``python``: the page's python blocks run in one namespace, in the page's
  folder; a ``text`` block right after one holds what it prints.
- a block right after ``<!-- file: PATH -->`` must be the content of PATH
  (a file shown is the file that ships).
- a block right after ``<!-- not run: REASON -->`` is shown only (a cluster,
  an install); the reason is required. Other languages (yaml, json, text)
  are data.

A block without a language fails: say what it is.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PAGES = [p for p in PAGES if "_build" not in p.parts]
SHELLS = ("sh", "bash", "shell")
DATA = ("yaml", "json", "text", "csv", "jsonl", "toml", "ini", "cpp", "c++", "dockerfile", "diff")
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
MARK = re.compile(r"^<!--\s*(?P<what>not run|file):\s*(?P<arg>.*?)\s*-->$")
TIMEOUT_S = 600
# never run here, whatever the page says: they change this machine or need a cluster
REFUSED = re.compile(r"(^|[;&|(]\s*)(pip3?|python3? -m pip|apt-get|docker|kubectl|helm|dask) ")


@dataclass
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    lang: str
    text: str
    mark: tuple[str, str] | None  # ("not run", reason) or ("file", path)

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a Markdown page (MyST directives ``{...}`` are not examples)."""
    lines = page.read_text().splitlines()
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, info = m["fence"], m["info"].strip()
        j = i + 1
        while j < len(lines) and not (
            lines[j].strip().startswith(fence) and lines[j].strip().strip(fence[0]) == ""
        ):
            j += 1
        mark = None
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        if k >= 0 and (mm := MARK.match(lines[k].strip())):
            mark = (mm["what"], mm["arg"])
        indent = len(m["indent"])
        body = "\n".join(line[indent:] for line in lines[i + 1 : j])
        if not info.startswith("{"):
            out.append(Block(page, i + 1, info.split()[0] if info else "", body, mark))
        i = j + 1
    return out


def commands(text: str) -> list[tuple[str, list[str]]]:
    """A console block's ``$`` commands (continuations joined) and the lines each prints."""
    out: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("$ "):
            if out:
                out[-1][1].append(line)
            elif line.strip():
                raise ValueError(f"output before the first command: {line!r}")
            i += 1
            continue
        cmd = line[2:]
        while cmd.endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd[:-1] + " " + lines[i].strip()
        out.append((cmd, []))
        i += 1
    return out


def matches(expected: list[str], got: str) -> bool:
    """``got`` against ``expected`` lines, with ``...`` for any lines or any text."""
    want = [line.rstrip() for line in expected]
    while want and not want[-1]:
        want.pop()
    pattern = ""
    for line in want:
        if line.strip() == "...":
            pattern += r"(?:[^\n]*\n)*?"
        else:
            pattern += ".*?".join(re.escape(part) for part in line.split("...")) + r"\n"
    text = "\n".join(line.rstrip() for line in got.splitlines()).rstrip("\n") + "\n"
    if not want:
        return got.strip() == ""
    return re.fullmatch(pattern, text) is not None


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUEUE_FAST_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONUNBUFFERED"] = "1"  # standard output and error in the order they were written
    env["COLUMNS"] = "120"
    return env


class Page:
    """One page's run: its folder (moved by ``cd``) and its python namespace."""

    def __init__(self, page: Path, root: Path) -> None:
        self.page = page
        self.root = root
        self.cwd = root
        self.namespace: dict[str, object] = {"__name__": "__docs__"}
        self.env = _environment()
        self.failures: list[str] = []
        self.printed: str | None = None  # what the last python block printed

    def shell(self, cmd: str) -> tuple[int, str]:
        if REFUSED.search(cmd):
            return 1, f"refused: {cmd!r} needs a cluster or changes this machine: mark the block 'not run'"
        if cmd.startswith("cd ") and ";" not in cmd and "&&" not in cmd:
            self.cwd = (self.cwd / cmd[3:].strip()).resolve()
            return 0, ""
        done = subprocess.run(
            ["bash", "-c", cmd],
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT_S,
        )
        return done.returncode, done.stdout

    def run(self, block: Block, previous: Block | None) -> None:
        if block.mark and block.mark[0] == "not run":
            if not block.mark[1]:
                self.failures.append(f"{block.where}: 'not run' needs a reason")
            return
        if block.mark and block.mark[0] == "file":
            shipped = (ROOT / block.mark[1]).read_text()
            if block.text.strip() != shipped.strip():
                self.failures.append(f"{block.where}: differs from {block.mark[1]}")
            return
        if block.lang == "console":
            for cmd, expected in commands(block.text):
                rc, got = self.shell(cmd)
                if not matches(expected, got) or (
                    "Traceback" in got and not any("Traceback" in e for e in expected)
                ):
                    self.failures.append(
                        f"{block.where}: $ {cmd}\n(exit status {rc}) printed:\n{got}\nexpected:\n"
                        + "\n".join(expected)
                    )
        elif block.lang in SHELLS:
            for line in block.text.splitlines():
                cmd = re.sub(r"\s+#.*$", "", line).strip()
                if not cmd or cmd.startswith("#"):
                    continue
                rc, got = self.shell(cmd)
                if rc != 0:
                    self.failures.append(f"{block.where}: {cmd}: exit status {rc}:\n{got}")
        elif block.lang == "python":
            out = io.StringIO()
            before = Path.cwd()
            try:
                os.chdir(self.cwd)
                with contextlib.redirect_stdout(out):
                    exec(compile(block.text, block.where, "exec"), self.namespace)
            except Exception as e:  # a failing example is a failure of the page, with its place
                self.failures.append(f"{block.where}: {type(e).__name__}: {e}")
            finally:
                os.chdir(before)
            self.printed = out.getvalue()
        elif block.lang == "text" and previous is not None and previous.lang == "python":
            if self.printed is not None and not matches(block.text.splitlines(), self.printed):
                self.failures.append(f"{block.where}: the python block printed:\n{self.printed}")
        elif block.lang not in DATA and block.lang not in ("python", "text"):
            self.failures.append(f"{block.where}: a block in {block.lang or 'no language'}: label it")


def scratch(tmp: Path) -> Path:
    """The repository's root as the examples see it: examples/ copied (they write reports
    there), the rest linked."""
    root = tmp / "repo"
    root.mkdir()
    for entry in ROOT.iterdir():
        if entry.name in (".git", "build", "dist") or entry.name.startswith("."):
            continue
        if entry.name == "examples":
            shutil.copytree(entry, root / entry.name)
        else:
            (root / entry.name).symlink_to(entry)
    return root


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_example_of_the_page_runs(page: Path, tmp_path: Path) -> None:
    run = Page(page, scratch(tmp_path))
    previous = None
    for block in blocks(page):
        run.run(block, previous)
        previous = block
    assert not run.failures, "\n\n".join(run.failures)


def test_the_matching_rules() -> None:
    assert matches(["a", "...", "d"], "a\nb\nc\nd\n")
    assert matches(["a", "...", "b"], "a\nb\n")
    assert matches(["took ... s"], "took 3.2 s\n")
    assert not matches(["a", "b"], "a\nc\n")
    assert not matches(["a"], "a\nb\n")
    assert matches([], "")
    assert REFUSED.search("pip install '.[test]' && kueue-fast simulate")
    assert REFUSED.search("kueue-fast manifests crds | kubectl apply -f -")
    assert not REFUSED.search("kueue-fast schedule cluster.yaml")
    assert commands("$ a \\\n   --b\nout\n$ c") == [("a  --b", ["out"]), ("c", [])]
