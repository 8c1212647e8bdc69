"""Kueue's feature gates, with their defaults at the commit kueue-fast follows.

Source: kueue pkg/features/kube_features.go (v0.20 development line,
ff69552e). A Configuration's ``featureGates`` map is checked against this
list: an unknown name is rejected, as Kueue refuses to start with one. Only
the gates that change scheduling decisions are modelled by the engines; the
others (TAS, MultiKueue, DRA, metrics, job integrations...) have no effect on
the objects kueue-fast accepts.
"""

from __future__ import annotations

from dataclasses import dataclass

# Gates the engines model, with Kueue's default at ff69552e.
MODELLED_DEFAULTS: dict[str, bool] = {
    "PartialAdmission": True,
    "FlavorFungibility": True,
    "FlavorFungibilityPreserveScanProgress": True,
    "PrioritySortingWithinCohort": True,
    "FairSharingPreemptWithinNominal": True,
    "FairSharingPrioritizeNonBorrowing": True,
    "FairSharingReevaluatePreemptionCandidates": False,
    "RecomputeAssignmentUponPreemptionTargetsOverlap": True,
    "SchedulingEquivalenceHashing": True,
    "SchedulingEquivalenceHashingIgnorePodSetName": False,
    "PrioritizePreemptorWorkloads": False,
    "ReclaimablePods": True,
    "AdmissionFairSharing": True,
}

# Gates Kueue knows that do not change what kueue-fast decides.
OTHER_GATES = frozenset(
    {
        "AdmissionGatedBy",
        "AssignQueueLabelsForPods",
        "CleanupProvisioningRequestsOnEviction",
        "ConcurrentAdmission",
        "CustomMetricLabels",
        "DeferRayServiceFinalizationForRedisCleanup",
        "DisableWaitForPodsReady",
        "DynamicQuotaOrchestration",
        "ElasticJobsViaWorkloadSlices",
        "ElasticJobsViaWorkloadSlicesWithPartialReplicaScaleUp",
        "ElasticJobsViaWorkloadSlicesWithTAS",
        "FailureRecoveryPolicy",
        "FastQuotaReleaseInPodIntegration",
        "FinishOrphanedWorkloads",
        "KueueDRAIntegration",
        "KueueDRAIntegrationConsumableCapacity",
        "KueueDRAIntegrationExtendedResource",
        "KueueDRAIntegrationPartitionableDevices",
        "KueueDRARejectWorkloadsWhenDRADisabled",
        "LocalQueueMetrics",
        "LWSImmutableGroupSize",
        "ManagedJobsNamespaceSelectorAlwaysRespected",
        "MetricForWorkloadCreationLatency",
        "MetricsForCohorts",
        "MultiKueue",
        "MultiKueueAdaptersForCustomJobs",
        "MultiKueueBatchJobClearingTTLSecondsAfterFinishedOnWorkerCluster",
        "MultiKueueClusterProfile",
        "MultiKueueIncrementalDispatcherConfig",
        "MultiKueueIncrementalDispatcherRespectConfigOrder",
        "MultiKueueKubeConfigPathValidation",
        "MultiKueueManagerQuotaAutomation",
        "MultiKueueOrchestratedPreemption",
        "MultiKueueRemoteSpecSync",
        "PodIntegrationValidateGroupOwner",
        "PriorityBoost",
        "QuotaCheckStrategy",
        "RejectUpdatesToCQWithInvalidOnFlavors",
        "RemoveFinalizersWithStrictPatch",
        "ReservedResourceNameValidation",
        "SchedulerLibraryIntegration",
        "ShortWorkloadNames",
        "SkipAncestorCheckForDeletedWorkloads",
        "SkipReassignmentForPodOwnedWorkloads",
        "SparkApplicationIntegration",
        "TASAssignmentsEncodingByHostnamePrefix",
        "TASBalancedPlacement",
        "TASCacheNodeMatchResults",
        "TASCacheTopologyTree",
        "TASCachingRemainingResources",
        "TASFailedNodeReplacement",
        "TASFailedNodeReplacementFailFast",
        "TASHandleOverlappingFlavors",
        "TASMultiLayerTopology",
        "TASProfileMixed",
        "TASRecomputeAssignmentWithinSchedulingCycle",
        "TASReplaceNodeDueToNotReadyOverFixedTime",
        "TASReplaceNodeOnNodeTaints",
        "TASReplaceNodeOnPodTermination",
        "TASRespectNodeAffinityPreferred",
        "TASValidateWorkloadSliceSize",
        "TLSOptions",
        "TopologyAwareScheduling",
        "UnadmittedWorkloadsExplicitStatus",
        "UnadmittedWorkloadsObservability",
        "ValidateRayAndSparkJobUpdates",
        "VectorizedResourceRequests",
        "VisibilityOnDemand",
        "WorkloadIdentifierAnnotations",
        "WorkloadPriorityClassDefaulting",
        "WorkloadRequestUseMergePatch",
        "WorkloadValidateResourcesAreNonNegative",
        "WorkloadValidationForPodSetMetadata",
    }
)

KNOWN_GATES = frozenset(MODELLED_DEFAULTS) | OTHER_GATES


@dataclass(frozen=True)
class FeatureGates:
    """The modelled gates, resolved (attribute names in snake case)."""

    partial_admission: bool = True
    flavor_fungibility: bool = True
    flavor_fungibility_preserve_scan_progress: bool = True
    priority_sorting_within_cohort: bool = True
    fair_sharing_preempt_within_nominal: bool = True
    fair_sharing_prioritize_non_borrowing: bool = True
    fair_sharing_reevaluate_preemption_candidates: bool = False
    recompute_assignment_upon_preemption_targets_overlap: bool = True
    scheduling_equivalence_hashing: bool = True
    scheduling_equivalence_hashing_ignore_pod_set_name: bool = False
    prioritize_preemptor_workloads: bool = False
    reclaimable_pods: bool = True
    admission_fair_sharing: bool = True

    @classmethod
    def resolve(cls, configured: dict[str, bool]) -> FeatureGates:
        values = dict(MODELLED_DEFAULTS)
        values.update({k: v for k, v in configured.items() if k in MODELLED_DEFAULTS})
        # Kueue's gate dependencies: a gate is off when what it builds on is off.
        if not values["FlavorFungibility"]:
            values["FlavorFungibilityPreserveScanProgress"] = False
        if not values["SchedulingEquivalenceHashing"]:
            values["SchedulingEquivalenceHashingIgnorePodSetName"] = False
        return cls(**{_snake(k): v for k, v in values.items()})


def _snake(name: str) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and not name[i - 1].isupper():
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
