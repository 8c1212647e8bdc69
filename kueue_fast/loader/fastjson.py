"""orjson when it is installed (the ``fast`` dependencies of pyproject.toml):
the loader reads JSON with it, the output writes JSON with it, and
:func:`exact_key` keys the caches of the loader's bulk path and of the
compiler by it. Without it everything works, only slower. Why orjson and
not another parser: kueue_fast/loader/documents.py (the measurements)."""

from __future__ import annotations

import importlib
from typing import Any


def optional_module(name: str) -> Any:
    """An optional dependency: the module, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - depends on the environment
        return None


orjson = optional_module("orjson")

__all__ = ["exact_key", "optional_module", "orjson"]

_KEY_OPTIONS = (
    orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
    if orjson is not None
    else 0
)


def exact_key(value: object) -> bytes | None:
    """A hashable key for a JSON-like value, for caches of results that depend
    only on the value; None when orjson is missing or the value is not plain
    JSON data (then: no caching).

    Equal keys mean equal JSON types and values, with one exception that the
    caller must rule out by comparing the values with == on a hit: orjson
    writes NaN and infinities as null. orjson tells 1, 1.0 and true apart,
    refuses keys that are not strings, integers beyond 64 bits, and (with
    these options) datetimes, dataclasses and subclasses of str, int, dict
    and list."""
    if orjson is None:
        return None
    try:
        key: bytes = orjson.dumps(value, option=_KEY_OPTIONS)
    except Exception:  # noqa: BLE001 - not JSON-like: no key
        return None
    return key
