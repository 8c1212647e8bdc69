// Everything but the workloads, with dense ids: the C++ form of
// kueue_fast/engine/inputs.py Topology (resources, flavors, flavor-resources,
// ClusterQueues first then cohorts as nodes, quotas, ClusterQueue policies,
// flavor eligibility classes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <kueue_fast/admission_fair_sharing.hpp>
#include <kueue_fast/amount.hpp>
#include <kueue_fast/quantity_format.hpp>
#include <kueue_fast/tas.hpp>
#include <kueue_fast/types.hpp>

namespace kueue_fast {

struct ResourceGroupSpec {
  std::vector<std::int32_t> resources;  // covered resource ids, in coveredResources order
  std::vector<std::int32_t> flavors;    // flavor ids, in list order
};

struct ClusterQueueSpec {
  std::string name;
  std::vector<ResourceGroupSpec> groups;
  std::uint8_t strategy = BEST_EFFORT_FIFO;
  std::uint8_t within_cluster_queue = NEVER;
  std::uint8_t reclaim_within_cohort = NEVER;
  std::uint8_t borrow_within_cohort = NEVER;
  bool has_max_priority_threshold = false;
  std::int64_t max_priority_threshold = 0;
  std::uint8_t when_can_borrow = MAY_STOP_SEARCH;
  std::uint8_t when_can_preempt = TRY_NEXT_FLAVOR;
  std::uint8_t preference = PREFERENCE_UNSET;
  bool active = true;
  std::string inactive_message;
  double fair_weight = 1.0;
  // UsageBasedAdmissionFairSharing: pending workloads ordered by their
  // LocalQueues' usage (only with TopologySpec::admission_fair_sharing).
  bool admission_fair_sharing = false;
};

// A LocalQueue (engine.inputs.LocalQueueSpec; ids sorted by "namespace/name").
struct LocalQueueSpec {
  std::string name;                 // "namespace/name"
  std::int32_t cluster_queue = -1;  // -1: that ClusterQueue does not exist
  double fair_weight = 1.0;
  bool stopped = false;             // stopPolicy set: never sampled
  Amounts consumed;                 // persisted history (nanos), by resource id
};

struct QuotaEntry {
  std::int32_t fr = 0;
  Amount nominal = 0;
  Amount borrowing_limit = NO_LIMIT;
  Amount lending_limit = NO_LIMIT;
};

// Kueue's feature gates that change decisions (kueue_fast/api/features.py
// FeatureGates; defaults at the Kueue commit kueue-fast follows).
struct FeatureGates {
  bool partial_admission = true;
  bool flavor_fungibility = true;
  bool flavor_fungibility_preserve_scan_progress = true;
  bool priority_sorting_within_cohort = true;
  bool fair_sharing_preempt_within_nominal = true;
  bool fair_sharing_prioritize_non_borrowing = true;
  bool fair_sharing_reevaluate_preemption_candidates = false;
  bool recompute_assignment_upon_preemption_targets_overlap = true;
  bool scheduling_equivalence_hashing = true;
  bool prioritize_preemptor_workloads = false;
};

// The input, as engine.inputs.Topology has it.
struct TopologySpec {
  std::vector<std::string> resource_names;
  std::vector<std::string> flavor_names;
  std::vector<std::pair<std::int32_t, std::int32_t>> fr_pairs;  // fr -> (flavor, resource)
  std::vector<std::string> node_names;                           // ClusterQueues first, then cohorts
  std::int32_t n_cq = 0;
  std::vector<std::int32_t> node_parent;        // -1 for roots
  std::vector<std::vector<QuotaEntry>> quotas;  // per node, in the node's declaration order
  std::vector<double> fair_weight;              // per node
  std::vector<ClusterQueueSpec> cluster_queues;
  bool fair_sharing = false;
  std::vector<std::uint8_t> fair_strategies;
  FeatureGates gates;
  // Admission fair sharing: every LocalQueue and, when configured, the
  // Configuration's admissionFairSharing.
  std::vector<LocalQueueSpec> local_queues;
  bool has_admission_fair_sharing = false;
  AfsConfig admission_fair_sharing;
  // waitForPodsReady.blockAdmission (engine.inputs.Topology.block_admission_for_pods_ready).
  bool block_admission_for_pods_ready = false;
  // Topology Aware Scheduling (engine.inputs.Topology.tas): the TAS flavors' topologies.
  bool has_tas = false;
  TasSpec tas;
};

class Topology {
 public:
  // Validates ids and shapes; throws std::invalid_argument naming the problem.
  explicit Topology(TopologySpec spec);

  const TopologySpec& spec() const noexcept { return spec_; }
  int n_resources() const noexcept { return n_resources_; }
  int n_flavors() const noexcept { return n_flavors_; }
  int n_fr() const noexcept { return n_fr_; }
  int n_nodes() const noexcept { return n_nodes_; }
  int n_cq() const noexcept { return spec_.n_cq; }
  int pods_rid() const noexcept { return pods_rid_; }
  bool fair_sharing() const noexcept { return spec_.fair_sharing; }
  int n_local_queues() const noexcept { return static_cast<int>(spec_.local_queues.size()); }
  const LocalQueueSpec& local_queue(int lq) const noexcept { return spec_.local_queues[lq]; }
  const FeatureGates& gates() const noexcept { return spec_.gates; }
  bool block_admission_for_pods_ready() const noexcept { return spec_.block_admission_for_pods_ready; }

  // -1 when the pair has no fr id.
  int fr_id(int flavor, int resource) const noexcept {
    return fr_index_[static_cast<std::size_t>(flavor) * static_cast<std::size_t>(n_resources_) +
                     static_cast<std::size_t>(resource)];
  }
  int fr_flavor(int fr) const noexcept { return spec_.fr_pairs[fr].first; }
  int fr_resource(int fr) const noexcept { return spec_.fr_pairs[fr].second; }

  const ClusterQueueSpec& cq(int cq) const noexcept { return spec_.cluster_queues[cq]; }
  // Index of the resource group of `cq` covering `resource`, or -1.
  int group_of(int cq, int resource) const noexcept {
    return group_of_[static_cast<std::size_t>(cq) * static_cast<std::size_t>(n_resources_) +
                     static_cast<std::size_t>(resource)];
  }
  int n_groups(int cq) const noexcept { return static_cast<int>(spec_.cluster_queues[cq].groups.size()); }
  bool covers_pods(int cq) const noexcept { return pods_rid_ >= 0 && group_of(cq, pods_rid_) >= 0; }
  double fair_weight(int node) const noexcept { return spec_.fair_weight[node]; }

  const std::string& resource_name(int r) const noexcept { return spec_.resource_names[r]; }
  const std::string& flavor_name(int f) const noexcept { return spec_.flavor_names[f]; }
  const std::string& node_name(int n) const noexcept { return spec_.node_names[n]; }
  QuantityFormat resource_format(int r) const noexcept { return resource_format_[r]; }

  // --- flavor eligibility classes (engine.inputs.Topology.flavor_classes) ----------
  int n_classes() const noexcept { return n_classes_; }
  // Appends a class: per flavor, no value (usable) or Kueue's rejection message.
  int add_flavor_class(const std::vector<std::optional<std::string>>& row);
  // String id of the rejection of `flavor` for pod sets of class `cls`, or -1.
  std::int32_t rejection(int cls, int flavor) const noexcept {
    return class_rejection_[static_cast<std::size_t>(cls) * static_cast<std::size_t>(n_flavors_) +
                            static_cast<std::size_t>(flavor)];
  }
  const std::string& string_at(std::int32_t id) const noexcept { return strings_[id]; }

 private:
  TopologySpec spec_;
  int n_resources_ = 0, n_flavors_ = 0, n_fr_ = 0, n_nodes_ = 0, pods_rid_ = -1;
  std::vector<std::int32_t> fr_index_;
  std::vector<std::int8_t> group_of_;
  std::vector<QuantityFormat> resource_format_;
  int n_classes_ = 0;
  std::vector<std::int32_t> class_rejection_;
  std::vector<std::string> strings_;
};

}  // namespace kueue_fast
