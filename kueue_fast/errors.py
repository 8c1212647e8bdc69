"""Typed exceptions of the public API.

Every error caused by input names the object (``ClusterQueue/team-a``) and,
when one field is at fault, its Kubernetes field path
(``spec.resourceGroups[0].flavors[1].resources[0].lendingLimit``). The CLI
prints ``str(error)`` on one line and exits with status 2.
"""

from __future__ import annotations


class KueueFastError(Exception):
    """Base class of every error kueue-fast raises on purpose."""


class InputError(KueueFastError):
    """Input that Kueue (or the API server) would reject.

    ``obj`` is ``Kind/name`` or ``Kind/namespace/name`` (empty when the input
    could not be split into objects at all); ``field`` is the field path or
    empty when the object as a whole is at fault.
    """

    def __init__(self, obj: str, field: str, message: str, source: str = "") -> None:
        self.obj = obj
        self.field = field
        self.message = message
        self.source = source
        where = " ".join(p for p in (obj, field) if p)
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{where}: {message}" if where else f"{prefix}{message}")


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


class NotStableError(KueueFastError):
    """``run_until_stable`` reached its cycle limit without settling."""
