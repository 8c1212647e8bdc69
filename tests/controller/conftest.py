"""Controller tests: the fixtures live in kf_harness.py (a module name of its
own, so that test modules can import its helpers whatever else is named
``conftest`` on the path)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kf_harness import cluster, fake_api, fake_cluster  # noqa: E402,F401
