"""kueue-fast: Kubernetes Kueue's admission decisions, fast.

The public API is the :class:`Cluster` (build it from manifests or from a
loaded :class:`~kueue_fast.api.model.ClusterState`, add and remove workloads, run
scheduling cycles, read decisions) and the typed errors in
:mod:`kueue_fast.api.errors`.
"""

from .api.errors import (
    EngineError,
    EngineUnavailableError,
    InputError,
    KueueFastError,
    MissingReferenceError,
    NotStableError,
    ParseError,
    ValidationError,
)
from .cluster.cluster import Cluster, CycleResult, Decision, PodSetDecision

__version__ = "0.1.0"

__all__ = [
    "Cluster",
    "CycleResult",
    "Decision",
    "PodSetDecision",
    "EngineError",
    "EngineUnavailableError",
    "InputError",
    "KueueFastError",
    "MissingReferenceError",
    "NotStableError",
    "ParseError",
    "ValidationError",
]
