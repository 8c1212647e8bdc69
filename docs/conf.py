"""Sphinx configuration of the kueue-fast documentation site.

Built offline from PyPI packages only (the ``docs`` extra):
``sphinx-build -W --keep-going docs docs/_build/html``. Pages are Markdown
(MyST), the API reference comes from the docstrings (autodoc), each command's
options from its own parser (``_ext/kueue_fast_docs.py``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "kueue-fast"
author = "The kueue-fast authors"
copyright = "the kueue-fast authors"  # noqa: A001 (Sphinx's name)

try:
    from kueue_fast import __version__ as release
except ImportError:  # pragma: no cover - the site is built with the package installed
    release = "0+unknown"
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "kueue_fast_docs",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# the API reference: signatures with their types, members in source order
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_typehints_format = "short"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = f"kueue-fast {release}"
html_static_path: list[str] = []
# nothing is fetched while building: no intersphinx, no remote images
