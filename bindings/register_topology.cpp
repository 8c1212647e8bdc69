// The engine's topology as typed Python classes (kueue_fast._core.TopologySpec
// and its parts): the C++ structs of topology.hpp, tas.hpp and
// admission_fair_sharing.hpp, each built by one keyword-only constructor that
// takes every field, so that a field left out or of the wrong type is a
// TypeError where the spec is built (kueue_fast/engine/native.py topology_spec) and
// an error of mypy against _core.pyi, not a missing key in a cycle. What a
// type cannot say (ids in range, amounts in order) is checked here or by the
// engine's constructor (kueue_fast.api.errors.EngineError).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include <kueue_fast/topology.hpp>

#include "common.hpp"
#include "convert.hpp"

namespace kueue_fast_bindings {

using kueue_fast::AfsConfig;
using kueue_fast::ClusterQueueSpec;
using kueue_fast::FeatureGates;
using kueue_fast::LocalQueueSpec;
using kueue_fast::QuotaEntry;
using kueue_fast::ResourceGroupSpec;
using kueue_fast::TasFlavorSpec;
using kueue_fast::TasSpec;
using kueue_fast::TopologySpec;

namespace {

void register_cluster_queue(py::module_& m) {
  py::class_<ResourceGroupSpec>(m, "ResourceGroupSpec", "engine.inputs.ResourceGroupSpec.")
      .def(py::init([](std::vector<std::int32_t> resources, std::vector<std::int32_t> flavors) {
             return ResourceGroupSpec{std::move(resources), std::move(flavors)};
           }),
           py::kw_only(), py::arg("resources"), py::arg("flavors"));
  py::class_<ClusterQueueSpec>(m, "ClusterQueueSpec", "engine.inputs.ClusterQueueSpec.")
      .def(py::init([](std::string name, std::vector<ResourceGroupSpec> groups, std::uint8_t strategy,
                       std::uint8_t within_cluster_queue, std::uint8_t reclaim_within_cohort,
                       std::uint8_t borrow_within_cohort, std::optional<std::int64_t> max_priority_threshold,
                       std::uint8_t when_can_borrow, std::uint8_t when_can_preempt, std::uint8_t preference,
                       bool active, std::string inactive_message, double fair_weight, bool admission_fair_sharing) {
             ClusterQueueSpec s;
             s.name = std::move(name);
             s.groups = std::move(groups);
             s.strategy = strategy;
             s.within_cluster_queue = within_cluster_queue;
             s.reclaim_within_cohort = reclaim_within_cohort;
             s.borrow_within_cohort = borrow_within_cohort;
             s.has_max_priority_threshold = max_priority_threshold.has_value();
             s.max_priority_threshold = max_priority_threshold.value_or(0);
             s.when_can_borrow = when_can_borrow;
             s.when_can_preempt = when_can_preempt;
             s.preference = preference;
             s.active = active;
             s.inactive_message = std::move(inactive_message);
             s.fair_weight = fair_weight;
             s.admission_fair_sharing = admission_fair_sharing;
             return s;
           }),
           py::kw_only(), py::arg("name"), py::arg("groups"), py::arg("strategy"), py::arg("within_cluster_queue"),
           py::arg("reclaim_within_cohort"), py::arg("borrow_within_cohort"), py::arg("max_priority_threshold"),
           py::arg("when_can_borrow"), py::arg("when_can_preempt"), py::arg("preference"), py::arg("active"),
           py::arg("inactive_message"), py::arg("fair_weight"), py::arg("admission_fair_sharing"));
  py::class_<QuotaEntry>(m, "QuotaEntry", "One flavor-resource's quota of a node (engine.inputs.Topology.quotas).")
      .def(py::init([](std::int32_t fr, std::int64_t nominal, std::int64_t borrowing_limit,
                       std::int64_t lending_limit) { return QuotaEntry{fr, nominal, borrowing_limit, lending_limit}; }),
           py::kw_only(), py::arg("fr"), py::arg("nominal"), py::arg("borrowing_limit"), py::arg("lending_limit"));
}

// kueue_fast.api.features.FeatureGates: the gates the engine models (the others,
// e.g. reclaimable_pods and the hashing ones, are applied by the compiler).
void register_gates(py::module_& m) {
  py::class_<FeatureGates>(m, "FeatureGates", "The feature gates the engine models (features.FeatureGates).")
      .def(py::init<>(), "Kueue's defaults.")
      .def(py::init([](bool partial_admission, bool flavor_fungibility, bool flavor_fungibility_preserve_scan_progress,
                       bool priority_sorting_within_cohort, bool fair_sharing_preempt_within_nominal,
                       bool fair_sharing_prioritize_non_borrowing, bool fair_sharing_reevaluate_preemption_candidates,
                       bool recompute_assignment_upon_preemption_targets_overlap, bool scheduling_equivalence_hashing,
                       bool prioritize_preemptor_workloads) {
             FeatureGates f;
             f.partial_admission = partial_admission;
             f.flavor_fungibility = flavor_fungibility;
             f.flavor_fungibility_preserve_scan_progress = flavor_fungibility_preserve_scan_progress;
             f.priority_sorting_within_cohort = priority_sorting_within_cohort;
             f.fair_sharing_preempt_within_nominal = fair_sharing_preempt_within_nominal;
             f.fair_sharing_prioritize_non_borrowing = fair_sharing_prioritize_non_borrowing;
             f.fair_sharing_reevaluate_preemption_candidates = fair_sharing_reevaluate_preemption_candidates;
             f.recompute_assignment_upon_preemption_targets_overlap =
                 recompute_assignment_upon_preemption_targets_overlap;
             f.scheduling_equivalence_hashing = scheduling_equivalence_hashing;
             f.prioritize_preemptor_workloads = prioritize_preemptor_workloads;
             return f;
           }),
           py::kw_only(), py::arg("partial_admission"), py::arg("flavor_fungibility"),
           py::arg("flavor_fungibility_preserve_scan_progress"), py::arg("priority_sorting_within_cohort"),
           py::arg("fair_sharing_preempt_within_nominal"), py::arg("fair_sharing_prioritize_non_borrowing"),
           py::arg("fair_sharing_reevaluate_preemption_candidates"),
           py::arg("recompute_assignment_upon_preemption_targets_overlap"), py::arg("scheduling_equivalence_hashing"),
           py::arg("prioritize_preemptor_workloads"));
}

// Admission fair sharing: every LocalQueue and the Configuration's admissionFairSharing.
void register_admission_fair_sharing(py::module_& m) {
  py::class_<LocalQueueSpec>(m, "LocalQueueSpec", "engine.inputs.LocalQueueSpec.")
      .def(py::init([](std::string name, std::int32_t cluster_queue, double fair_weight, bool stopped,
                       py::handle consumed) {
             LocalQueueSpec lq;
             lq.name = std::move(name);
             lq.cluster_queue = cluster_queue;
             lq.fair_weight = fair_weight;
             lq.stopped = stopped;
             lq.consumed = amounts_from(consumed, "local queue consumed");  // nanos beyond int64
             return lq;
           }),
           py::kw_only(), py::arg("name"), py::arg("cluster_queue"), py::arg("fair_weight"), py::arg("stopped"),
           py::arg("consumed"));
  py::class_<AfsConfig>(m, "AfsConfig", "engine.inputs.AdmissionFairSharingSpec.")
      .def(py::init([](double usage_half_life_s, double usage_sampling_interval_s,
                       std::vector<double> resource_weights) {
             return AfsConfig{usage_half_life_s, usage_sampling_interval_s, std::move(resource_weights)};
           }),
           py::kw_only(), py::arg("usage_half_life_s"), py::arg("usage_sampling_interval_s"),
           py::arg("resource_weights"));
}

// Topology Aware Scheduling (engine.inputs.Topology.tas).
void register_tas(py::module_& m) {
  py::class_<TasFlavorSpec>(m, "TasFlavorSpec", "tas.TasFlavorSpec, free flattened (n_leaves x n_resources).")
      .def(py::init([](std::int32_t flavor, std::string name, std::string topology, std::vector<std::int32_t> levels,
                       bool hostname_lowest, std::vector<std::int32_t> level_start, std::vector<std::int32_t> child_lo,
                       std::vector<std::int32_t> child_hi, std::vector<std::int64_t> free,
                       std::vector<std::int32_t> leaf_host) {
             TasFlavorSpec f;
             f.flavor = flavor;
             f.name = std::move(name);
             f.topology = std::move(topology);
             f.levels = std::move(levels);
             f.hostname_lowest = hostname_lowest;
             f.level_start = std::move(level_start);
             f.child_lo = std::move(child_lo);
             f.child_hi = std::move(child_hi);
             f.free = std::move(free);
             f.leaf_host = std::move(leaf_host);
             return f;
           }),
           py::kw_only(), py::arg("flavor"), py::arg("name"), py::arg("topology"), py::arg("levels"),
           py::arg("hostname_lowest"), py::arg("level_start"), py::arg("child_lo"), py::arg("child_hi"),
           py::arg("free"), py::arg("leaf_host"));
  py::class_<TasSpec>(m, "TasSpec", "tas.TasSpec: flavor_of per flavor id of the topology (-1: not a TAS flavor).")
      .def(py::init([](std::vector<std::string> resources, std::int32_t pods, std::vector<std::string> level_names,
                       std::int32_t n_hosts, std::vector<std::int32_t> flavor_of, std::vector<TasFlavorSpec> flavors) {
             TasSpec tas;
             tas.resources = std::move(resources);
             tas.pods = pods;
             tas.level_names = std::move(level_names);
             tas.n_hosts = n_hosts;
             tas.flavor_of = std::move(flavor_of);
             for (const TasFlavorSpec& fl : flavors) {
               for (std::int32_t lvl : fl.levels) {
                 if (lvl < 0 || static_cast<std::size_t>(lvl) >= tas.level_names.size()) bad("tas flavor level id");
               }
               if (fl.flavor < 0 || fl.flavor >= static_cast<std::int32_t>(tas.flavor_of.size())) bad("tas flavor id");
             }
             tas.flavors = std::move(flavors);
             for (std::int32_t f : tas.flavor_of) {
               if (f < -1 || f >= static_cast<std::int32_t>(tas.flavors.size())) {
                 bad("tas flavor_of: a TAS flavor index or -1");
               }
             }
             return tas;
           }),
           py::kw_only(), py::arg("resources"), py::arg("pods"), py::arg("level_names"), py::arg("n_hosts"),
           py::arg("flavor_of"), py::arg("flavors"));
}

}  // namespace

void register_topology(py::module_& m) {
  register_cluster_queue(m);
  register_gates(m);
  register_admission_fair_sharing(m);
  register_tas(m);
  py::class_<TopologySpec>(m, "TopologySpec",
                           "engine.inputs.Topology as the engine reads it (kueue_fast.engine.native.topology_spec).")
      .def(py::init([](std::vector<std::string> resource_names, std::vector<std::string> flavor_names,
                       std::vector<std::pair<std::int32_t, std::int32_t>> fr_pairs, std::vector<std::string> node_names,
                       std::int32_t n_cq, std::vector<std::int32_t> node_parent,
                       std::vector<std::vector<QuotaEntry>> quotas, std::vector<double> fair_weight,
                       std::vector<ClusterQueueSpec> cluster_queues, bool fair_sharing,
                       std::vector<std::uint8_t> fair_strategies, FeatureGates gates,
                       std::vector<LocalQueueSpec> local_queues, std::optional<AfsConfig> admission_fair_sharing,
                       bool block_admission_for_pods_ready, std::optional<TasSpec> tas) {
             TopologySpec t;
             t.resource_names = std::move(resource_names);
             t.flavor_names = std::move(flavor_names);
             t.fr_pairs = std::move(fr_pairs);
             t.node_names = std::move(node_names);
             t.n_cq = n_cq;
             t.node_parent = std::move(node_parent);
             t.quotas = std::move(quotas);
             t.fair_weight = std::move(fair_weight);
             t.cluster_queues = std::move(cluster_queues);
             t.fair_sharing = fair_sharing;
             t.fair_strategies = std::move(fair_strategies);
             t.gates = gates;
             t.local_queues = std::move(local_queues);
             t.has_admission_fair_sharing = admission_fair_sharing.has_value();
             if (admission_fair_sharing) t.admission_fair_sharing = std::move(*admission_fair_sharing);
             t.block_admission_for_pods_ready = block_admission_for_pods_ready;
             t.has_tas = tas.has_value();
             if (tas) t.tas = std::move(*tas);
             return t;
           }),
           py::kw_only(), py::arg("resource_names"), py::arg("flavor_names"), py::arg("fr_pairs"),
           py::arg("node_names"), py::arg("n_cq"), py::arg("node_parent"), py::arg("quotas"), py::arg("fair_weight"),
           py::arg("cluster_queues"), py::arg("fair_sharing"), py::arg("fair_strategies"), py::arg("gates"),
           py::arg("local_queues"), py::arg("admission_fair_sharing"), py::arg("block_admission_for_pods_ready"),
           py::arg("tas"));
}

}  // namespace kueue_fast_bindings
