"""Every error of an object at once, as the API server's aggregated 422 lists
them: a converter reads an object and stops at its first error (the fast
path, for valid input all there is); the loader then reads that object once
more under :func:`collect_errors`. There :func:`report` notes an error and
the read goes on, at the points where the rest of the object does not depend
on what was wrong (each field of a spec, each item of a list: ``try: ...
except InputError as e: report(e)``), and :func:`check_fields` names every
unknown field. Outside collect_errors, report raises: a ``try`` costs nothing
on the way that raises nothing.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from .errors import InputError

T = TypeVar("T")


class _Collection(threading.local):
    """The errors of the object collect_errors reads in this thread, None
    outside it (then report raises); per thread, as loaders may run in several."""

    errors: list[InputError] | None = None


_collection = _Collection()


def report(e: InputError) -> None:
    """Raise ``e``; under :func:`collect_errors`, note it instead, and the read
    goes on with the next part of the object."""
    errors = _collection.errors
    if errors is None:
        raise e
    errors.append(e)


class reported:  # noqa: N801 - used as a statement: with collect.reported(): ...
    """A part of an object read as one: its InputError goes to :func:`report`
    (noted under :func:`collect_errors`, raised otherwise) and the read goes
    on after the block. A class, not a generator: the exact loader enters it
    a few times per object."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, e: BaseException | None, tb: object) -> bool:
        if isinstance(e, InputError):
            report(e)
            return True
        return False


def collecting() -> bool:
    """Under :func:`collect_errors`: the exact path only (a fast path that
    tries the validation functions and falls back on the first error would
    have its tries noted as errors)."""
    return _collection.errors is not None


def errors_noted() -> int:
    """How many errors :func:`report` noted so far (0 outside collect_errors):
    a part whose count grew was not read whole, and what depends on it is
    better left unchecked than checked against a stand-in."""
    errors = _collection.errors
    return 0 if errors is None else len(errors)


def collect_errors(read: Callable[[], object], first: InputError) -> list[InputError]:
    """Every error of an object whose reading raised ``first``: ``read`` again,
    going on past each error (:func:`report`); ``[first]`` when the read finds
    nothing more (an error found outside the object: a duplicate...). The
    first one found is ``first``: the same code, in the same order."""
    out: list[InputError] = []
    seen: set[tuple[str, str, str]] = set()
    for e in read_collecting(read)[1] or [first]:
        key = (e.obj, e.field, e.message)
        if key not in seen:  # a part read twice (a default and the field) reports once
            seen.add(key)
            out.append(e)
    return out


def read_as(read: Callable[[], T], rename: Callable[[InputError], InputError]) -> T | None:
    """``read()`` with each of its errors renamed (a Workload's as its job's
    fields, a Configuration's as its ConfigMap's); under collect_errors,
    every one of them, and None when the read raised."""
    if _collection.errors is None:
        try:
            return read()
        except InputError as e:
            raise rename(e) from None
    result, found = read_collecting(read)
    for error in found:
        report(rename(error))
    return result


def read_collecting(read: Callable[[], T]) -> tuple[T | None, list[InputError]]:
    """``read()`` going on past each error: (what it returned, None when it
    raised; every error found, in order).

    What a part that failed would have given is missing from the rest of the
    read, which may then trip on it where it expected it: past the first
    error, an exception that is not an InputError ends the read, and the
    errors found so far are the answer (the object is invalid either way)."""
    outer, found = _collection.errors, list[InputError]()
    _collection.errors = found
    result: T | None = None
    try:
        result = read()
    except InputError as e:
        found.append(e)
    except Exception:  # noqa: BLE001 - see above; before any error found it is a bug: raise it
        if not found:
            raise
    finally:
        _collection.errors = outer
    return result, found
