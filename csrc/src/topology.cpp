#include <kueue_fast/topology.hpp>

#include <stdexcept>

namespace kueue_fast {

namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("topology: " + what); }

void check_id(std::int64_t v, std::int64_t n, const char* what) {
  if (v < 0 || v >= n) bad(std::string(what) + " id " + std::to_string(v) + " out of range [0, " + std::to_string(n) + ")");
}

}  // namespace

Topology::Topology(TopologySpec spec) : spec_(std::move(spec)) {
  n_resources_ = static_cast<int>(spec_.resource_names.size());
  n_flavors_ = static_cast<int>(spec_.flavor_names.size());
  n_fr_ = static_cast<int>(spec_.fr_pairs.size());
  n_nodes_ = static_cast<int>(spec_.node_names.size());
  if (spec_.n_cq < 0 || spec_.n_cq > n_nodes_) bad("n_cq out of range");
  // Reasons pack ids in 28 bits (flavor_assigner.hpp).
  if (n_fr_ >= (1 << 28) || n_resources_ >= (1 << 28) || n_flavors_ >= (1 << 28)) bad("too many flavor-resources");
  if (static_cast<int>(spec_.cluster_queues.size()) != spec_.n_cq) bad("cluster_queues must have n_cq entries");
  if (static_cast<int>(spec_.node_parent.size()) != n_nodes_) bad("node_parent must have one entry per node");
  if (static_cast<int>(spec_.quotas.size()) != n_nodes_) bad("quotas must have one entry per node");
  if (static_cast<int>(spec_.fair_weight.size()) != n_nodes_) bad("fair_weight must have one entry per node");

  fr_index_.assign(static_cast<std::size_t>(n_flavors_) * static_cast<std::size_t>(n_resources_), -1);
  for (int fr = 0; fr < n_fr_; ++fr) {
    auto [f, r] = spec_.fr_pairs[fr];
    check_id(f, n_flavors_, "flavor");
    check_id(r, n_resources_, "resource");
    auto& slot = fr_index_[static_cast<std::size_t>(f) * static_cast<std::size_t>(n_resources_) + static_cast<std::size_t>(r)];
    if (slot >= 0) bad("duplicate flavor-resource pair");
    slot = fr;
  }
  for (int n = 0; n < n_nodes_; ++n) {
    std::int32_t p = spec_.node_parent[n];
    if (p != -1) {
      check_id(p, n_nodes_, "parent node");
      if (p < spec_.n_cq) bad("a ClusterQueue cannot be a parent");
    }
    for (const auto& q : spec_.quotas[n]) check_id(q.fr, n_fr_, "quota fr");
  }
  // The parent links must form a forest (no cycle).
  for (int n = 0; n < n_nodes_; ++n) {
    int steps = 0;
    for (int p = spec_.node_parent[n]; p >= 0; p = spec_.node_parent[p]) {
      if (++steps > n_nodes_) bad("cycle in node_parent");
    }
  }
  group_of_.assign(static_cast<std::size_t>(spec_.n_cq) * static_cast<std::size_t>(n_resources_), -1);
  for (int c = 0; c < spec_.n_cq; ++c) {
    const auto& cq = spec_.cluster_queues[c];
    if (cq.groups.size() > 127) bad("too many resource groups");
    for (std::size_t g = 0; g < cq.groups.size(); ++g) {
      for (auto r : cq.groups[g].resources) {
        check_id(r, n_resources_, "resource");
        auto& slot = group_of_[static_cast<std::size_t>(c) * static_cast<std::size_t>(n_resources_) + static_cast<std::size_t>(r)];
        // Kueue's webhook: a resource may appear in only one resource group.
        if (slot >= 0) bad("resource " + std::to_string(r) + " is in two resource groups of ClusterQueue " + cq.name);
        slot = static_cast<std::int8_t>(g);
      }
      for (auto f : cq.groups[g].flavors) {
        check_id(f, n_flavors_, "flavor");
        for (auto r : cq.groups[g].resources) {
          if (fr_index_[static_cast<std::size_t>(f) * static_cast<std::size_t>(n_resources_) + static_cast<std::size_t>(r)] < 0) {
            bad("a flavor-resource pair of ClusterQueue " + cq.name + " has no fr id");
          }
        }
      }
      if (cq.groups[g].flavors.size() > 32000) bad("too many flavors in a group");
    }
    if (cq.strategy > BEST_EFFORT_FIFO || cq.within_cluster_queue > ANY || cq.reclaim_within_cohort > ANY ||
        cq.borrow_within_cohort > ANY || cq.when_can_borrow > TRY_NEXT_FLAVOR ||
        cq.when_can_preempt > TRY_NEXT_FLAVOR || cq.preference > PREEMPTION_OVER_BORROWING) {
      bad("unknown policy code in ClusterQueue " + cq.name);
    }
  }
  for (auto s : spec_.fair_strategies) {
    if (s > LESS_THAN_INITIAL_SHARE) bad("unknown fair sharing strategy code");
  }
  if (spec_.local_queues.size() > (1u << 30)) bad("too many local queues");
  for (const auto& lq : spec_.local_queues) {
    if (lq.cluster_queue != -1) check_id(lq.cluster_queue, spec_.n_cq, "local queue cluster queue");
    std::int32_t prev = -1;
    for (const auto& c : lq.consumed) {
      check_id(c.resource, n_resources_, "consumed resource");
      if (c.resource <= prev) bad("consumed resources of LocalQueue " + lq.name + " must be by increasing id");
      prev = c.resource;
    }
  }
  if (spec_.has_admission_fair_sharing) {
    const AfsConfig& a = spec_.admission_fair_sharing;
    if (static_cast<int>(a.resource_weights.size()) != n_resources_) {
      bad("admission fair sharing needs one resource weight per resource");
    }
    if (!(a.usage_sampling_interval_s > 0) || !(a.usage_half_life_s >= 0)) {
      bad("admission fair sharing needs a positive sampling interval and a non-negative half-life");
    }
  }
  pods_rid_ = -1;
  resource_format_.reserve(static_cast<std::size_t>(n_resources_));
  for (int r = 0; r < n_resources_; ++r) {
    const auto& name = spec_.resource_names[r];
    if (name == "pods" && pods_rid_ < 0) pods_rid_ = r;
    resource_format_.push_back(quantity_format_of(name));
  }
}

int Topology::add_flavor_class(const std::vector<std::optional<std::string>>& row) {
  if (static_cast<int>(row.size()) != n_flavors_) bad("a flavor class needs one entry per flavor");
  for (const auto& entry : row) {
    if (!entry) {
      class_rejection_.push_back(-1);
      continue;
    }
    // Rejection messages repeat across classes; keep one copy of each.
    std::int32_t id = -1;
    for (std::size_t i = 0; i < strings_.size(); ++i) {
      if (strings_[i] == *entry) {
        id = static_cast<std::int32_t>(i);
        break;
      }
    }
    if (id < 0) {
      id = static_cast<std::int32_t>(strings_.size());
      strings_.push_back(*entry);
    }
    class_rejection_.push_back(id);
  }
  return n_classes_++;
}

}  // namespace kueue_fast
