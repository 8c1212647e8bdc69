"""Typed exceptions of the public API.

Every error caused by input names the object (``ClusterQueue/team-a``) and,
when one field is at fault, its Kubernetes field path
(``spec.resourceGroups[0].flavors[1].resources[0].lendingLimit``). The CLI
prints ``str(error)`` on one line and exits with status 2. The loader reports
every error of every invalid object of an input at once: one error is raised
as itself, several as :class:`InputErrors` (whose ``str`` is the first one's);
either way ``error.errors`` lists them all. Input that is accepted but probably not what
was meant gives :class:`InputWarning` s (``ClusterState.warnings``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def _describe(obj: str, field: str, message: str, source: str) -> str:
    where = " ".join(p for p in (obj, field) if p)
    prefix = f"{source}: " if source else ""
    return f"{prefix}{where}: {message}" if where else f"{prefix}{message}"


class KueueFastError(Exception):
    """Base class of every error kueue-fast raises on purpose."""


class InputError(KueueFastError):
    """Input that Kueue (or the API server) would reject.

    ``obj`` is ``Kind/name`` or ``Kind/namespace/name`` (empty when the input
    could not be split into objects at all); ``field`` is the field path or
    empty when the object as a whole is at fault.
    """

    # Warnings about the rest of the input, when the loader raised this error
    # (``kueue-fast lint`` prints them with the errors).
    warnings: Sequence[InputWarning] = ()

    def __init__(self, obj: str, field: str, message: str, source: str = "") -> None:
        self.obj = obj
        self.field = field
        self.message = message
        self.source = source
        super().__init__(_describe(obj, field, message, source))

    @property
    def errors(self) -> list[InputError]:
        """Every error this exception reports, in the order found: itself."""
        return [self]


class InputErrors(InputError):
    """Several errors in one input (of one object or several). ``obj``,
    ``field``, ``message``, ``source`` and ``str()`` are the first error's
    (the one a reader that stops at the first error would have raised)."""

    def __init__(self, errors: Sequence[InputError]) -> None:
        if len(errors) < 2:
            raise ValueError("InputErrors holds at least two errors; raise a single one as itself")
        first = errors[0]
        super().__init__(first.obj, first.field, first.message, source=first.source)
        self._errors = list(errors)

    @property
    def errors(self) -> list[InputError]:
        """Every error, in input order."""
        return list(self._errors)


def raise_all(errors: Sequence[InputError], warnings: Sequence[InputWarning] = ()) -> None:
    """Raise nothing, the one error, or InputErrors; the warnings go along."""
    if not errors:
        return
    e = errors[0] if len(errors) == 1 else InputErrors(errors)
    e.warnings = list(warnings)
    raise e


@dataclass(frozen=True)
class InputWarning:
    """Input Kueue accepts that is probably not what was meant (a ClusterQueue
    with no namespaceSelector), or that kueue-fast reads no decision from (a
    ConfigMap): named like an error, printed as ``warning: ...``."""

    obj: str
    field: str
    message: str
    source: str = ""

    def __str__(self) -> str:
        return _describe(self.obj, self.field, self.message, self.source)


class ParseError(InputError):
    """A file that is not YAML/JSON, or a document that is not an object."""


class ValidationError(InputError):
    """An object that Kueue's webhooks or the CRD schema would reject."""


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity (raised by the parser; the
    loader turns it into a ValidationError naming the field)."""


class MissingReferenceError(InputError):
    """A reference that must resolve and does not (a Workload's priority class).

    References that Kueue tolerates (a LocalQueue naming a missing ClusterQueue,
    a ClusterQueue naming a missing ResourceFlavor) are not errors: the
    workloads concerned stay pending with a reason."""


class EngineError(KueueFastError):
    """Misuse of the engine API (unknown workload id, wrong array shape...)."""


class EngineUnavailableError(EngineError):
    """The engine asked for cannot run here: an unknown name, or the native
    engine without its compiled core (missing, or from another build)."""


class NotStableError(KueueFastError):
    """``run_until_stable`` reached its cycle limit without settling."""
