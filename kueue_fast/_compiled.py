"""This installation's compiled modules, each used only when it was built
from these sources.

An editable install keeps the modules it was built with while the Python
sources move on (``pip install -e .`` again rebuilds them). A module missing
or from another build would meet today's Python as an ImportError or a
TypeError, so each says its interface (``INTERFACE``, bumped with what it
offers Python) and :func:`module` gives it only when that is the one these
sources expect. Without one:

* ``_core`` (pybind11, the native engine): the reference engine decides
  (engine/select.py choose_engine), the same decisions;
* the Cython modules, each beside the Python code it accelerates (the list
  is :data:`INTERFACES`): their callers take the Python path they mirror
  (the ``*_py`` twins, the loader's exact per-object path, PyYAML), the same
  results, slower.

Quantities are the exception: ``api/quantity.py`` needs ``api._quantity``
(of any build, its parsing functions being unchanged since the first one).
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType

# What these sources expect of each module, by its name under kueue_fast
# (bindings/module.cpp INTERFACE for _core, the .pyx's INTERFACE for the
# others); bump both together.
INTERFACES = {
    "_core": 5,
    "loader._yaml_block": 3,
    "loader._yaml_scalars": 1,
    "loader._yaml_risk": 1,
    "loader._json_items": 1,
    "loader._nesting": 1,
    "loader._bulk": 8,
    "loader._objects": 1,
    "engine._pending": 1,
    "engine._workload_scan": 1,
    "commands._contract_json": 1,
}
CYTHON = tuple(name for name in INTERFACES if name != "_core")
REBUILD = "reinstall to rebuild it: pip install . (an editable install: pip install -e . again)"


def check(name: str) -> str | None:
    """Why kueue_fast.<name> cannot be used here, or None (looked up again each call)."""
    try:
        mod = importlib.import_module(f"kueue_fast.{name}")
    except ImportError as e:
        return f"kueue_fast.{name} is not in this installation ({e})"
    except (TypeError, ValueError) as e:  # it cimports a module of another build: their C layouts differ
        return f"kueue_fast.{name} is from another build of kueue-fast ({e}); {REBUILD}"
    got = getattr(mod, "INTERFACE", None)
    if got != INTERFACES[name]:
        return (
            f"kueue_fast.{name} is from another build of kueue-fast (interface {got}, this package "
            f"needs {INTERFACES[name]}); {REBUILD}"
        )
    return None


problem = functools.cache(check)  # the same answer for the whole process


def module(name: str) -> ModuleType | None:
    """kueue_fast.<name> when it was built from these sources, else None."""
    return None if problem(name) is not None else importlib.import_module(f"kueue_fast.{name}")


def slower_paths_note() -> str:
    """What runs slower here and why ("" when every Cython module is usable)."""
    missing = [p for name in CYTHON if (p := problem(name)) is not None]
    if not missing:
        return ""
    return "; ".join(missing) + "; using the Python paths instead (same results, slower)"
