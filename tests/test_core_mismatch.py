"""The compiled core missing, or from another build of kueue-fast (an
editable install keeps the `_core` it was built with while the Python
sources move on): the default engine falls back to the reference, which
makes the same decisions, and says why; asking for the native engine is a
clear error, exit status 2. Never a traceback from a binding called with
arguments it does not take."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kueue_fast import _compiled
from kueue_fast.api.errors import EngineError
from kueue_fast.engine import select as engine_select

SCENARIO = Path(__file__).parent / "scenarios" / "kueue-gen-01-contended.yaml"

# Run in a fresh interpreter: sitecustomize replaces kueue_fast._core before
# anything imports it (None: missing; a module without INTERFACE: another build).
SITE = """
import sys, types
if "{how}" == "missing":
    sys.modules["kueue_fast._core"] = None
else:
    sys.modules["kueue_fast._core"] = types.ModuleType("kueue_fast._core")
"""


def _schedule(tmp_path: Path, how: str, *extra: str) -> subprocess.CompletedProcess[str]:
    import yaml

    docs = list(yaml.safe_load_all(SCENARIO.read_text()))[1:]
    manifest = tmp_path / "in.yaml"
    manifest.write_text(yaml.safe_dump_all(docs))
    site = tmp_path / "site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITE.format(how=how))
    env = {k: v for k, v in os.environ.items() if k != "KUEUE_FAST_ENGINE"}
    env["PYTHONPATH"] = str(site)
    argv = [
        sys.executable,
        "-m",
        "kueue_fast",
        "schedule",
        str(manifest),
        "--until-stable",
        "-o",
        "json",
        *extra,
    ]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


@pytest.mark.parametrize("how", ["missing", "another-build"])
def test_default_engine_falls_back_to_the_reference_and_says_why(tmp_path: Path, how: str) -> None:
    p = _schedule(tmp_path, how)
    assert p.returncode == 0, p.stderr
    assert "using the reference engine" in p.stderr
    assert "Traceback" not in p.stderr
    reference = _schedule(tmp_path, how, "--engine", "reference")
    assert json.loads(p.stdout) == json.loads(reference.stdout)


@pytest.mark.parametrize("how", ["missing", "another-build"])
def test_asking_for_the_native_engine_is_a_clear_error(tmp_path: Path, how: str) -> None:
    p = _schedule(tmp_path, how, "--engine", "native")
    assert p.returncode == 2
    assert "native engine" in p.stderr and "kueue_fast._core" in p.stderr
    assert "Traceback" not in p.stderr


def test_a_core_from_another_build_is_named_as_such(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    monkeypatch.setitem(sys.modules, "kueue_fast._core", types.ModuleType("kueue_fast._core"))
    engine_select.native_problem.cache_clear()
    try:
        problem = engine_select.native_problem()
        assert problem is not None and "another build" in problem
        assert engine_select.choose_engine(None)[0] == "reference"
        with pytest.raises(EngineError, match="another build"):
            engine_select.choose_engine("native")
    finally:
        engine_select.native_problem.cache_clear()


# The Cython modules as a stale editable install leaves them: _contract_json from a
# build before its INTERFACE and newer functions, _bulk and _yaml_block absent.
STALE_CYTHON = """
import importlib.abc, sys

NEWER = ("INTERFACE", "json_workload_entries", "workload_owners")

for name in ("kueue_fast.loader._bulk", "kueue_fast.loader._yaml_block"):
    sys.modules[name] = None


class _OldKernels(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "kueue_fast.commands._contract_json":
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                real = spec.loader

                class Loader(importlib.abc.Loader):
                    def create_module(self, spec):
                        return real.create_module(spec)

                    def exec_module(self, module):
                        real.exec_module(module)
                        for attr in NEWER:
                            delattr(module, attr)

                spec.loader = Loader()
                return spec
        return None


sys.meta_path.insert(0, _OldKernels())
"""


def test_cython_modules_from_another_build_give_the_same_output_by_the_python_paths(tmp_path: Path) -> None:
    site = tmp_path / "stale-site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(STALE_CYTHON)
    env = {k: v for k, v in os.environ.items() if k != "KUEUE_FAST_ENGINE"}
    outputs = {}
    for name, extra_env in (("stale", {"PYTHONPATH": str(site)}), ("built", {})):
        argv = [sys.executable, "-m", "kueue_fast", "schedule", str(_manifest(tmp_path)), "--until-stable"]
        p = subprocess.run(
            argv, capture_output=True, text=True, env={**env, **extra_env}, cwd=tmp_path, timeout=300
        )
        assert p.returncode == 0, p.stderr
        assert "Traceback" not in p.stderr
        outputs[name] = (p.stdout, p.stderr)
    stale_err = outputs["stale"][1]
    assert "kueue_fast.commands._contract_json is from another build" in stale_err
    assert "kueue_fast.loader._bulk is not in this installation" in stale_err
    assert "kueue_fast.loader._yaml_block is not in this installation" in stale_err
    assert "Python paths instead (same results, slower)" in stale_err
    assert "Python paths" not in outputs["built"][1]
    assert outputs["stale"][0] == outputs["built"][0]


def _manifest(tmp_path: Path) -> Path:
    """The scenario's objects as a manifest file."""
    import yaml

    manifest = tmp_path / "in.yaml"
    if not manifest.exists():
        manifest.write_text(yaml.safe_dump_all(list(yaml.safe_load_all(SCENARIO.read_text()))[1:]))
    return manifest


def test_a_module_cimporting_another_builds_module_is_said_so(monkeypatch: pytest.MonkeyPatch) -> None:
    # Cython raises TypeError or ValueError at import when a cimported module's C layout changed
    real = importlib.import_module

    def mismatched(name: str, package: str | None = None) -> object:
        if name == "kueue_fast.loader._yaml_block":
            raise TypeError(
                "kueue_fast.loader._yaml_scalars.Decline size changed, may indicate binary incompatibility"
            )
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", mismatched)
    problem = _compiled.check("loader._yaml_block")
    assert problem is not None and "from another build" in problem and "size changed" in problem
