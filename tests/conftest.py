"""Shared test configuration.

Hypothesis profiles: ``ci`` (the default) is derandomized and bounded so the
suite is reproducible and fast; ``HYPOTHESIS_PROFILE=dev`` runs many more
examples.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=2000, deadline=None, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
