// Dominant resource share (DRS) of ClusterQueues and cohorts, the
// comparison, and the fair-sharing tournament that orders a cycle's entries.
// The C++ twin of kueue_fast/engine/reference/fair_sharing.py and
// scheduler.py _fair_sharing_pop (kueue pkg/cache/scheduler/fair_sharing.go,
// pkg/scheduler/fair_sharing_iterator.go).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/topology.hpp>
#include <kueue_fast/workloads.hpp>

namespace kueue_fast {

class Engine;
struct Entry;            // scheduler.hpp
struct AssignmentArena;  // flavor_assigner.hpp

struct DRS {
  double fair_weight = 1.0;
  double unweighted_ratio = 0.0;
  bool borrowing = false;

  bool is_zero() const noexcept { return unweighted_ratio == 0; }
  bool zero_weight_borrows() const noexcept { return fair_weight == 0 && borrowing; }
  double weighted_share() const noexcept {
    if (zero_weight_borrows()) return HUGE_VAL;
    if (is_zero()) return 0.0;
    return unweighted_ratio / fair_weight;
  }
};

inline const DRS NEGATIVE_DRS{1.0, -1.0, false};

// Kueue CompareDRS: < 0 when a is the smaller (fairer to schedule) share.
int compare_drs(const DRS& a, const DRS& b) noexcept;

class FairShares {
 public:
  FairShares(const Topology& topo, const QuotaTree& tree);

  // The node's DRS on the tree as it is now. When `borrowed_frs` is given, it
  // receives the fr's the node borrows on (DRS.borrowed_frs).
  DRS drs(int node, std::vector<std::int32_t>* borrowed_frs = nullptr) const;

  // Per resource: what the node could lend, over every fr of its root's
  // subtree quota (fair_sharing.py lendable); static.
  Amount lendable(int node, int resource) const noexcept {
    return lendable_[static_cast<std::size_t>(node) * static_cast<std::size_t>(n_resources_) +
                     static_cast<std::size_t>(resource)];
  }

 private:
  const Topology& topo_;
  const QuotaTree& tree_;
  int n_resources_;
  std::vector<Amount> lendable_;
  mutable std::vector<Amount> borrowed_;
  mutable std::vector<std::int32_t> touched_;
};

// The fair-sharing order of a cycle's entries (fairSharingIterator.pop).
class FairSharingTournament {
 public:
  // What the tournament sees of the Engine (references to its members, built by it).
  struct View {
    const Topology& topo;
    QuotaTree& tree;  // entries' usage is added and taken back to compute their shares
    const WorkloadStore& w;
    const FairShares& shares;
    const std::vector<Entry>& entries;
    const AssignmentArena& arena;
  };
  explicit FairSharingTournament(const View& view);
  // Starts over with the nominated entries of the cycle (indexes into Engine::entries_).
  void reset(const std::vector<std::int32_t>& entry_ids);
  bool empty() const noexcept { return remaining_ == 0; }
  // The next entry to process (removed from the remaining ones).
  std::int32_t pop();

 private:
  struct Share {
    DRS drs;
    bool borrowing_on_request;
  };
  bool less(std::int32_t a, std::int32_t b, int cohort) const;
  std::int32_t tournament(int cohort);
  const Share& share_at(std::int32_t entry, int cohort) const;

  View v_;
  std::vector<std::int32_t> entry_of_cq_;  // per ClusterQueue: remaining entry, -1 none
  std::vector<std::int32_t> order_;        // ClusterQueues with an entry, ascending
  std::size_t next_min_ = 0;
  std::size_t remaining_ = 0;
  // Per entry: shares at each ancestor (parent first), and the path version
  // they were computed at (reused while no usage on the path changed).
  std::vector<std::uint32_t> share_first_;
  std::vector<std::uint64_t> share_version_;
  std::vector<std::uint8_t> share_valid_;
  std::vector<Share> shares_;
  std::vector<std::int32_t> borrowed_frs_;
  std::vector<std::int32_t> stack_;
};

}  // namespace kueue_fast
