#include <kueue_fast/types.hpp>

namespace kueue_fast {

const char* pending_reason_name(PendingReason r) noexcept {
  switch (r) {
    case REASON_NONE: return "";
    case WAITING_FOR_QUOTA: return "WaitingForQuota";
    case WAITING_FOR_PREEMPTED: return "WaitingForPreemptedWorkloads";
    case WAITING_FOR_PODS_READY: return "WaitingForPodsReady";
    case NO_MATCHING_FLAVOR: return "NoMatchingFlavor";
    case EXCEEDS_MAX_QUOTA: return "ExceedsMaxQuota";
    case MISCONFIGURED: return "Misconfigured";
    case SUSPENDED: return "Suspended";
    case TOPOLOGY_PLACEMENT_FAILED: return "TopologyPlacementFailed";
  }
  return "";
}

const char* preemption_reason_name(PreemptionReason r) noexcept {
  switch (r) {
    case IN_CLUSTER_QUEUE: return "InClusterQueue";
    case IN_COHORT_RECLAMATION: return "InCohortReclamation";
    case IN_COHORT_FAIR_SHARING: return "InCohortFairSharing";
    case IN_COHORT_RECLAIM_WHILE_BORROWING: return "InCohortReclaimWhileBorrowing";
  }
  return "";
}

const char* preemption_reason_human(PreemptionReason r) noexcept {
  switch (r) {
    case IN_CLUSTER_QUEUE: return "prioritization in the ClusterQueue";
    case IN_COHORT_RECLAMATION: return "reclamation within the cohort";
    case IN_COHORT_FAIR_SHARING: return "Fair Sharing within the cohort";
    case IN_COHORT_RECLAIM_WHILE_BORROWING: return "reclamation within the cohort while borrowing";
  }
  return "";
}

}  // namespace kueue_fast
