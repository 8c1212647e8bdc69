// Preemption targets: which admitted workloads to evict so that a workload
// fits. The C++ twin of kueue_fast/engine/reference/preemption.py: classical
// preemption (kueue pkg/scheduler/preemption/preemption.go
// classicalPreemptions, fillBackWorkloads; classical/candidate_generator.go,
// classical/hierarchical_preemption.go) and fair-sharing preemption
// (fair_strategy.go, fairsharing/ordering.go).
//
// Every trial removal happens on the engine's working quota tree and is
// undone before returning, on every path: the tree is byte-identical before
// and after a search (checked by the debug hook, Engine::set_debug_checks).
//
// Candidates come from the engine's per-ClusterQueue admitted lists, kept in
// candidate order incrementally; a search walks them (stopping early where
// the policy's priority bound ends the useful prefix) instead of re-sorting
// every admitted workload.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/fair_sharing.hpp>
#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/tas.hpp>
#include <kueue_fast/topology.hpp>
#include <kueue_fast/types.hpp>
#include <kueue_fast/workloads.hpp>

namespace kueue_fast {

class Engine;
struct EngineStats;  // scheduler.hpp
class UsageLedger;  // admission_fair_sharing.hpp

// A ClusterQueue's admitted workload with its candidate-order key inline
// (the key does not change while it is listed: evicting is re-listed).
struct AdmittedEntry {
  std::int64_t admission_time;
  std::uint64_t fr_mask;  // bit (fr % 64) of every fr it uses: a filter for uses_resources
  std::int32_t priority;
  std::int32_t wid;
  std::uint8_t evicting;
};

// The first entry of a ClusterQueue's admitted list, kept in a compact
// per-ClusterQueue array so that scanning siblings touches one cache line
// per 8 ClusterQueues.
struct AdmittedFront {
  std::int32_t priority = 0;
  std::uint8_t evicting = 0;
  std::uint8_t empty = 1;
};

// Per cohort tree (by its root), what Preemptor::any_candidate_possible asks
// of its ClusterQueues' fronts: how many are non-empty and evicting, and the
// two lowest front priorities (of two different ClusterQueues). Computed when
// asked, again only after a front of the tree changed (mark): a cycle asks
// it for many heads between two changes.
class CohortFronts {
 public:
  struct Summary {
    std::int32_t non_empty = 0, evicting = 0;
    std::int64_t lowest = INT64_MAX, second = INT64_MAX;  // priorities, INT64_MAX: none
    std::int32_t lowest_cq = -1;
  };
  explicit CohortFronts(std::size_t n_nodes = 0) : summary_(n_nodes), stale_(n_nodes, 1) {}
  void mark(int root) noexcept { stale_[static_cast<std::size_t>(root)] = 1; }
  const Summary& get(int root, IdRange cqs, const std::vector<AdmittedFront>& fronts) noexcept {
    const auto r = static_cast<std::size_t>(root);
    if (stale_[r]) {
      Summary s;
      for (int cq : cqs) {
        const AdmittedFront& f = fronts[static_cast<std::size_t>(cq)];
        if (f.empty) continue;
        ++s.non_empty;
        s.evicting += f.evicting ? 1 : 0;
        if (f.priority < s.lowest) {
          s.second = s.lowest;
          s.lowest = f.priority;
          s.lowest_cq = cq;
        } else if (f.priority < s.second) {
          s.second = f.priority;
        }
      }
      summary_[r] = s;
      stale_[r] = 0;
    }
    return summary_[r];
  }

 private:
  std::vector<Summary> summary_;
  std::vector<std::uint8_t> stale_;
};

struct Target {
  std::int32_t wid;
  PreemptionReason reason;
};

struct PreemptionCtx {
  int preemptor = -1;  // workload id
  int cq = -1;
  std::vector<std::int32_t> frs_need_preemption;  // a set: no duplicates
  std::vector<FrAmount> usage;                    // the incoming workload's usage per fr
  // Topology Aware Scheduling: its pod sets to place (kueue preemptionCtx.tasRequests)
  std::vector<TasAsk> tas_asks;
  void clear() {
    frs_need_preemption.clear();
    usage.clear();
    tas_asks.clear();
  }
};

// Candidate variants (classical/hierarchical_preemption.go preemptionVariant).
enum Variant : std::uint8_t {
  V_NEVER = 0,
  V_WITHIN_CQ = 1,
  V_HIERARCHICAL = 2,
  V_RECLAIM_WITHOUT_BORROWING = 3,
  V_RECLAIM_WHILE_BORROWING = 4
};

class Preemptor {
 public:
  // What the preemptor sees of the Engine (references to its members, built by it).
  struct View {
    const Topology& topo;
    QuotaTree& tree;  // searches simulate removals on it and undo them
    const WorkloadStore& w;
    const FairShares& shares;
    // Per ClusterQueue: its admitted workloads (Engine::cq_admitted_) and their first.
    const std::vector<std::vector<AdmittedEntry>>& cq_admitted;
    const std::vector<AdmittedFront>& cq_front;
    CohortFronts& cohort_fronts;  // summaries of cq_front per cohort tree
    const std::unique_ptr<UsageLedger>& afs;  // set: admission fair sharing is on
    const bool& debug_checks;
    EngineStats& stats;  // target_searches is counted
    Engine& engine;      // Engine::charge, Engine::afs_candidate_before
    TasState* tas;       // Topology Aware Scheduling (nullptr: none)
  };
  explicit Preemptor(const View& view);

  // The targets for ctx, in the reference's order (empty: none). The
  // returned vector is owned by the preemptor and valid until the next call.
  const std::vector<Target>& get_targets(const PreemptionCtx& ctx);

  // Trial removal of an admitted workload's usage, and its inverse.
  void remove(int wid) noexcept;
  void restore(int wid) noexcept;

  std::int64_t evaluations = 0;  // candidate removals tried (preemptor.evaluations)

 private:
  struct Candidate {
    std::int32_t wid;
    std::int32_t lca;
    Variant variant;
  };
  bool any_candidate_possible(const PreemptionCtx& ctx) const noexcept;
  void begin(const PreemptionCtx& ctx);
  void end();
  bool uses_resources(int wid) const noexcept;
  // uses_resources with the admitted entry's fr filter (no pool access when it says no).
  bool uses_resources(const AdmittedEntry& a) const noexcept;
  bool satisfies_policy(int candidate, std::uint8_t policy) const noexcept;
  bool workload_fits(bool allow_borrowing) const noexcept;
  void fill_back(std::vector<Target>& targets, bool allow_borrowing);
  void restore_all(const std::vector<Target>& targets) noexcept;
  bool candidate_before(int a, int b) const noexcept;
  // With admission fair sharing, re-sort candidates sorted by candidate_before
  // with the LocalQueue-usage rule (a comparison, not a key: merge_sort).
  template <class T, class WidOf>
  void afs_order(std::vector<T>& list, std::vector<T>& scratch, WidOf wid_of);
  bool within_nominal(int node) const noexcept;

  // classical
  void classical_preemptions();
  Variant variant(int cand, bool hierarchical_advantage) const noexcept;
  // The ClusterQueues candidates come from, each with the group its
  // candidates sort into (hierarchy, priority, same), its lowest common
  // ancestor with the preemptor and its policy; collected before any trial
  // removal, as Kueue collects its candidates.
  enum Group : std::uint8_t { G_HIERARCHY = 0, G_PRIORITY = 1, G_SAME = 2 };
  struct Source {
    std::int32_t cq, lca;
    std::uint8_t group, policy;
    bool advantage;
  };
  // One segment (evicting or not) of a source's admitted list, walked in
  // candidate order (from the back). pos is the current candidate (its
  // variant in `variant`), or below lo when the segment is exhausted.
  struct Cursor {
    std::int32_t source;
    std::int32_t lo, pos;
    Variant variant;
  };
  void add_source(int cq, int lca, bool advantage);
  void advance(Cursor& c) const noexcept;  // from pos (inclusive) to the next valid candidate
  bool head_before(const Cursor& a, const Cursor& b) const noexcept;
  // The lazy candidate order: Kueue's ordered list (evicting candidates of
  // the hierarchy, priority and same groups, then the others in the same
  // groups, each group sorted by CandidatesOrdering) as a k-way merge over
  // the sources' segments, each already in that order. Yields only as many
  // candidates as the search consumes; merge_reset starts it again.
  // An attempt's filters are exact: candidate_valid would skip every
  // candidate they drop. In a borrowing attempt a reclaim candidate of the
  // priority group that is V_RECLAIM_WITHOUT_BORROWING is invalid, and those
  // are a suffix of each segment (a priority bound); within one attempt usage
  // only goes down (trial removals), so a source found within nominal on its
  // path below the common ancestor stays so and is dropped whole.
  void merge_reset(bool borrowing);
  bool merge_next(Candidate& out);
  bool past_borrowing_bound(const Source& src, std::int32_t priority) const noexcept;
  bool source_within_nominal(const Source& src) const noexcept;
  void merge_start_phase();
  // Debug hook: the eager order (collect everything, sort by candidate_before).
  void eager_order(std::vector<Candidate>& out);
  void check_lazy_order();
  // Could candidates_from_cq(cq) yield anything? Not when the policy admits
  // nobody, or when no admitted workload is under the policy's priority bound
  // (the list is ordered: evicting first, then by priority ascending).
  static bool may_have_candidates(const AdmittedFront& front, std::uint8_t policy, std::int32_t priority) noexcept {
    if (policy == NEVER || front.empty) return false;
    if (policy == ANY || front.evicting) return true;
    return policy == LOWER_PRIORITY ? front.priority < priority : front.priority <= priority;
  }
  bool may_have_candidates(const AdmittedFront& front, std::uint8_t policy) const noexcept {
    return may_have_candidates(front, policy, preemptor_priority_);
  }
  void collect_in_subtree(int cohort, int subtree_root, int skip, bool advantage);
  void hierarchical_candidates();
  bool candidate_valid(const Candidate& c, bool borrowing) const noexcept;
  bool queue_under_nominal() const noexcept;

  // fair sharing
  void fair_preemptions();
  void fair_candidates();
  bool cq_borrowing(int cq) const noexcept;
  bool fits_for_fair_sharing();
  bool first_fair_strategy(std::uint8_t strategy);
  bool second_fair_strategy();
  void take(int wid, PreemptionReason reason);

  // TargetClusterQueueOrdering (fairsharing/ordering.go) over a candidate list.
  void ordering_reset(const std::vector<std::int32_t>& candidates);
  bool has_workload(int cq) const noexcept { return by_cq_head_[cq] < by_cq_end_[cq]; }
  std::int32_t ordering_pop(int cq) noexcept { return by_cq_[by_cq_head_[cq]++]; }
  int next_target(int cohort);
  int next_target_or_done();  // -1 when the iteration ended
  std::pair<int, int> almost_lcas(int target_cq) const;
  std::pair<DRS, DRS> shares(int target_cq) const;
  DRS target_share_after_removal(int target_cq, int wid);

  View v_;
  std::vector<Cell> cells_before_;  // debug hook: the tree before a target search
  const PreemptionCtx* ctx_ = nullptr;
  std::vector<std::uint8_t> fr_mark_;  // frs_need_preemption as a dense set
  std::uint64_t fr_mask_ = 0;          // and as a filter (bit fr % 64)
  std::int32_t preemptor_priority_ = 0;
  std::uint8_t within_policy_ = NEVER, reclaim_policy_ = NEVER;
  bool fr_mask_exact_ = false;         // every fr id < 64: the filter is exact
  std::vector<Target> targets_, result_;
  std::vector<Source> sources_;
  std::vector<Cursor> cursors_init_, cursors_;  // two per source: evicting segment, then the rest
  bool group_nonempty_[3] = {false, false, false};
  int phase_ = 0;                      // 0..5: (evicting, not) x (hierarchy, priority, same)
  bool merge_borrowing_ = false;       // the attempt's filter (see merge_reset)
  std::vector<std::uint8_t> source_dead_;  // dropped for the rest of the attempt
  std::vector<std::int32_t> heap_;     // cursor indices, the phase's merge
  // Admission fair sharing: the eager order (eager_order with the LocalQueue
  // rule) replaces the lazy merge; merge_next walks it from eager_pos_.
  bool eager_ = false;
  std::size_t eager_pos_ = 0;
  std::vector<Candidate> same_, hierarchy_, priority_, ordered_, lazy_, eager_valid_, afs_scratch_;
  std::vector<FrAmount> remaining_, remaining_next_;
  // fair sharing
  std::vector<std::int32_t> candidates_, retry_, afs_scratch_wids_;
  std::vector<std::int32_t> by_cq_;                      // candidates grouped by ClusterQueue
  std::vector<std::uint32_t> by_cq_head_, by_cq_end_;    // per ClusterQueue
  std::vector<std::int32_t> ordering_cqs_;               // ClusterQueues touched by the ordering
  std::vector<std::uint8_t> pruned_;                     // per node
  std::vector<std::int32_t> pruned_touched_;
  std::vector<std::uint8_t> preemptor_ancestor_;         // per node
};

}  // namespace kueue_fast
