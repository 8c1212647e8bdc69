// Topology Aware Scheduling: the TAS flavors' topologies as dense arrays,
// their usage (Kueue's cache and the cycle's snapshot) and the placement
// algorithm. The C++ twin of kueue_fast/engine/reference/tas.py (kueue
// pkg/cache/scheduler/tas_flavor_snapshot.go findTopologyAssignment: fillInCounts,
// findLevelWithFitDomains, updateCountsToMinimumGeneric, buildAssignment;
// tas_flavor.go snapshot; clusterqueue_snapshot.go FindTopologyAssignmentsForWorkload).
//
// A flavor's domains are numbered level by level, each level sorted by the
// domains' level values (kueue_fast/engine/tas.py TasFlavorSpec): comparing two
// domains of a level is comparing ids, and a domain's children are a
// contiguous range. Per leaf and TAS resource: the free capacity (static),
// the snapshot's usage; nothing is allocated per placement once the scratch
// arrays have grown, and the arrays live as long as the engine (across cycles).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kueue_fast/amount.hpp>

namespace kueue_fast {

// TasRequest level codes besides a level name id (kueue_fast/engine/tas.py LEVEL_*)
inline constexpr std::int32_t TAS_LEVEL_NONE = -1, TAS_LEVEL_HIGHEST = -2, TAS_LEVEL_LOWEST = -3;

struct TasFlavorSpec {
  std::int32_t flavor = -1;  // its id in the topology's flavors
  std::string name, topology;
  std::vector<std::int32_t> levels;  // level name ids, highest first
  bool hostname_lowest = false;
  std::vector<std::int32_t> level_start;  // n_levels + 1
  std::vector<std::int32_t> child_lo, child_hi;  // per domain
  std::vector<Amount> free;  // n_leaves x n_resources: allocatable minus non-TAS usage
  std::vector<std::int32_t> leaf_host;  // per leaf: hostname id (hostname_lowest), else -1
  int n_levels() const noexcept { return static_cast<int>(levels.size()); }
  int n_domains() const noexcept { return level_start.empty() ? 0 : level_start.back(); }
  int first_leaf() const noexcept { return levels.empty() ? 0 : level_start[levels.size() - 1]; }
  int n_leaves() const noexcept { return n_domains() - first_leaf(); }
};

// Which leaves of a flavor the pod sets of one flavor class may use (empty:
// all) and Kueue's static exclusion counts for its not-fit message.
struct TasClassFlavor {
  std::vector<std::uint8_t> eligible;
  std::int32_t total_nodes = 0;
  std::vector<std::string> static_reasons;
};

struct TasSpec {
  std::vector<std::string> resources;  // sorted: the lowest id is the first by name
  std::int32_t pods = -1;              // the id of "pods"
  std::vector<std::string> level_names;
  std::vector<TasFlavorSpec> flavors;  // by TAS flavor index (name order)
  std::int32_t n_hosts = 0;
  std::vector<std::int32_t> flavor_of;  // per flavor id of the topology: its TAS flavor index, -1: none
};

// What a pod set asks of the topology (kueue_fast/engine/tas.py TasPodSetRequest).
struct TasRequest {
  std::int32_t level = TAS_LEVEL_NONE;
  std::int32_t slice_level = TAS_LEVEL_LOWEST;
  std::int32_t slice_size = 1;
  bool required = false, unconstrained = false;
};

// One pod set to place: its index in the workload, its pods, its global pod
// set row (TasState::pod_set_* by row) and flavor class.
struct TasAsk {
  std::int32_t index, count, row, cls, flavor;
};

// TAS capacity a placed pod set uses on one domain: (TAS flavor, leaf of its
// snapshot or -1, hostname id or -1, pods), the per-pod requests its row's.
struct TasUse {
  std::int32_t flavor, leaf, host, count, row;
};

// A failure: the pod set's index, the flavor, and the reason as words
// (flavor_assigner.hpp reasons: RK_TAS_*).
struct TasFailure {
  std::int32_t index = -1, flavor = -1;
  std::vector<std::uint64_t> words;
};

class TasState {
 public:
  explicit TasState(TasSpec spec);
  const TasSpec& spec() const noexcept { return spec_; }
  int n_resources() const noexcept { return n_res_; }

  // --- per flavor class (aligned with Topology's classes) ---
  void add_class(std::vector<TasClassFlavor> per_flavor);
  int n_classes() const noexcept { return static_cast<int>(classes_.size()); }
  const TasClassFlavor& class_flavor(int cls, int f) const noexcept { return classes_[cls][f]; }

  // --- per pod set row (the engine's global pod set rows) ---
  // A row's request (has: it asks for TAS) and its per-pod requests (n
  // resources, -1 where not asked; empty: none). Rows not set have neither.
  void set_pod_set(int row, bool has, const TasRequest& req, const std::vector<Amount>& amounts);
  bool asks(int row) const noexcept { return static_cast<std::size_t>(row) < has_.size() && has_[row]; }
  const TasRequest& request(int row) const noexcept { return req_[row]; }
  const Amount* amounts(int row) const noexcept {
    return static_cast<std::size_t>(row) < amount_off_.size() && amount_off_[row] != NONE ? amounts_.data() + amount_off_[row] : nullptr;
  }

  // --- usage ---
  // A workload's TAS usage joins (sign +1) or leaves Kueue's cache, and its flavor's snapshot.
  void charge(const TasUse* uses, std::size_t n, int sign) noexcept;
  // A change that lives only in the cycle's snapshot.
  void snapshot(const TasUse* uses, std::size_t n, int sign) noexcept;
  // The snapshot from the cache when it changed (tas_flavor.go snapshot); the cycle's end.
  void take_snapshot() noexcept;
  void discard_snapshot() noexcept { dirty_ = true; }
  // kueue TASFlavorSnapshot.Fits: every use's pods fit its leaf's remaining capacity.
  bool fits(const TasUse* uses, std::size_t n) const noexcept;

  // --- the workloads' usage, by wid ---
  const std::vector<TasUse>& uses(int wid) const noexcept;
  std::vector<TasUse>& uses_of(int wid);
  // The admission's placements are the engine's (else the input's).
  bool placed_by_engine(int wid) const noexcept {
    return static_cast<std::size_t>(wid) < engine_placed_.size() && engine_placed_[wid];
  }
  void set_placed_by_engine(int wid, bool on);

  // --- placement ---
  // kueue FindTopologyAssignmentsForWorkload over asks grouped by flavor
  // (flavor index order, then their order): per ask its (leaf, pods) from
  // placed_first(k) to placed_end(k) (k the ask's position), and the first
  // failure (index -1: none). Valid until the next call.
  bool find_for_workload(const std::vector<TasAsk>& asks, bool simulate_empty);
  const TasFailure& failure() const noexcept { return failure_; }
  std::size_t placed_first(std::size_t k) const noexcept { return placed_off_[k]; }
  std::size_t placed_end(std::size_t k) const noexcept { return placed_off_[k + 1]; }
  const std::pair<std::int32_t, std::int32_t>& placed(std::size_t i) const noexcept { return placed_[i]; }
  bool ask_placed(std::size_t k) const noexcept { return ask_ok_[k] != 0; }

  // Appends the text of a RK_TAS_* reason.
  void append_reason(std::string& out, const std::uint64_t* words) const;

 private:
  static constexpr std::uint32_t NONE = 0xffffffffu;
  bool find_for_pod_set(const TasAsk& ask, bool simulate_empty);
  void fill_in_counts(int f, const TasAsk& ask, const Amount* requests, bool simulate_empty, int slice_idx,
                      int slice_size);
  int find_level(const TasFlavorSpec& fl, int level, const TasAsk& ask, int slice_size, bool required,
                 bool unconstrained, std::vector<std::int32_t>& out);
  void sort_domains(std::vector<std::int32_t>& d, bool unconstrained) const;
  std::int32_t best_fit(const std::int32_t* first, const std::int32_t* last, std::int64_t needed,
                        const std::vector<std::int64_t>& counts) const noexcept;
  bool update_counts_to_minimum(std::vector<std::int32_t>& domains, std::int64_t count, int slice_size,
                                bool unconstrained, bool by_slices, std::vector<std::int32_t>& out);
  void not_fit(const TasAsk& ask, std::int64_t fit, std::int64_t total, int slice_size);
  Amount* row(std::vector<Amount>& v, int i) noexcept { return v.data() + static_cast<std::size_t>(i) * n_res_; }
  const Amount* row(const std::vector<Amount>& v, int i) const noexcept {
    return v.data() + static_cast<std::size_t>(i) * n_res_;
  }
  void add_vec(Amount* dst, const Amount* requests, std::int64_t count, int sign) const noexcept;

  TasSpec spec_;
  int n_res_ = 0;
  std::vector<std::vector<TasClassFlavor>> classes_;
  // per pod set row
  std::vector<std::uint8_t> has_;
  std::vector<TasRequest> req_;
  std::vector<std::uint32_t> amount_off_;
  std::vector<Amount> amounts_;
  // usage: the cache (hostname flavors share it by hostname) and the snapshot
  std::vector<Amount> host_usage_;                // n_hosts x n_res
  std::vector<std::vector<Amount>> cache_, work_;  // per flavor: n_leaves x n_res
  bool dirty_ = true;
  // per wid
  std::vector<std::vector<TasUse>> uses_;
  std::vector<std::uint8_t> engine_placed_;
  const std::vector<TasUse> no_uses_;
  // the placement in progress
  std::vector<std::int64_t> pods_, slices_;  // per domain
  std::vector<Amount> rem_;                  // one leaf's remaining capacity
  std::vector<std::int32_t> res_excluded_;   // per resource: leaves where not one pod fits
  std::vector<Amount> host_assumed_, leaf_assumed_;  // usage earlier pod sets of the workload assumed
  std::vector<std::uint8_t> host_assumed_set_, leaf_assumed_set_;
  std::vector<std::int32_t> host_assumed_keys_, leaf_assumed_keys_;
  std::vector<std::int32_t> fit_, lower_, next_, tmp_;
  std::vector<std::pair<std::int32_t, std::int32_t>> placed_;
  std::vector<std::size_t> placed_off_;
  std::vector<std::uint8_t> ask_ok_;
  TasFailure failure_;
  std::vector<Amount> request_with_pod_;
};

}  // namespace kueue_fast
