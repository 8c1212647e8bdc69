"""Kueue's manager Configuration (config.kueue.x-k8s.io), the parts that change
scheduling decisions (part of :mod:`kueue_fast.api.model`'s API)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .selectors import LabelSelector, LabelSelectorRequirement

# integrations.frameworks of the configuration Kueue's release manifests install
RELEASED_FRAMEWORKS = (
    "batch/job",
    "kubeflow.org/mpijob",
    "ray.io/rayjob",
    "ray.io/raycluster",
    "ray.io/rayservice",
    "jobset.x-k8s.io/jobset",
    "workload.codeflare.dev/appwrapper",
    "trainer.kubeflow.org/trainjob",
)


@dataclass
class FairSharingConfig:
    """The Configuration's ``fairSharing`` (on when present)."""

    preemption_strategies: list[str] = field(
        default_factory=lambda: ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    )


@dataclass
class AdmissionFairSharingConfig:
    """The Configuration's ``admissionFairSharing`` (durations in seconds)."""

    usage_half_life_s: float = 0.0  # usageHalfLifeTime
    usage_sampling_interval_s: float = 300.0  # usageSamplingInterval
    resource_weights: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ResourceTransformation:
    """One entry of Configuration resources.transformations (apis/config
    ResourceTransformation): ``outputs`` are factors per unit of input, as exact
    nano amounts (quantity_nanos)."""

    input: str
    replace: bool = False  # strategy Replace (default Retain)
    multiply_by: str = ""
    outputs: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class ResourceRules:
    """Configuration resources: what Kueue charges to quota in place of a pod's
    requests (pkg/workload/workload.go totalRequestsFromPodSets)."""

    exclude_prefixes: tuple[str, ...] = ()
    transformations: dict[str, ResourceTransformation] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.exclude_prefixes or self.transformations)


@dataclass(frozen=True)
class WaitForPodsReadyConfig:
    """Configuration waitForPodsReady, defaulted as apis/config defaults.go does
    (durations in seconds)."""

    timeout_s: float = 1800.0
    recovery_timeout_s: float | None = 1800.0  # defaults to timeout
    block_admission: bool = False
    requeuing_timestamp: str = "Eviction"  # or "Creation"
    backoff_limit_count: int | None = None  # None: requeued for ever
    backoff_base_s: int = 60
    backoff_max_s: int = 3600


@dataclass
class Configuration:
    """Kueue's manager Configuration: the parts that change scheduling decisions."""

    fair_sharing: FairSharingConfig | None = None  # None: fair sharing off
    admission_fair_sharing: AdmissionFairSharingConfig | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    # QuotaCheckStrategy: "CheckAll" (default) or "IgnoreUndeclared".
    quota_check_strategy: str = "CheckAll"
    # resources.excludeResourcePrefixes and resources.transformations.
    resources: ResourceRules = field(default_factory=ResourceRules)
    # waitForPodsReady when the Configuration enables it (loader), else None.
    wait_for_pods_ready: WaitForPodsReadyConfig | None = None
    # Which jobs Kueue manages (apis/config/v1beta2 configuration_types.go and
    # defaults.go): integrations.frameworks, manageJobsWithoutQueueName and
    # managedJobsNamespaceSelector (default: every namespace but kube-system
    # and Kueue's own). Without a Configuration, the frameworks of the
    # configuration Kueue's release installs (config/components/manager/
    # controller_manager_config.yaml); a Configuration that names none gets
    # defaults.go's batch/job only (loader).
    frameworks: tuple[str, ...] = RELEASED_FRAMEWORKS
    manage_jobs_without_queue_name: bool = False
    managed_jobs_namespace_selector: LabelSelector = field(
        default_factory=lambda: managed_jobs_default_selector("kueue-system")
    )


def managed_jobs_default_selector(kueue_namespace: str) -> LabelSelector:
    """Kueue's default managedJobsNamespaceSelector."""
    req = LabelSelectorRequirement("kubernetes.io/metadata.name", "NotIn", ("kube-system", kueue_namespace))
    return LabelSelector(match_expressions=(req,))
