// Flavor assignment: which flavor each requested resource of each pod set
// gets. The C++ twin of kueue_fast/engine/reference/flavor_assigner.py (kueue
// pkg/scheduler/flavorassigner/flavorassigner.go assignFlavors,
// findFlavorForPodSets, fitsResourceQuota, isPreferred, shouldTryNextFlavor).
//
// Assignments of one cycle live in an arena cleared at the end of the cycle:
// no allocation per entry once the arena has grown. Reasons are recorded as
// compact structured words (kind + ids + numbers) and formatted only when a
// message is read, into exactly the reference's text.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/tas.hpp>
#include <kueue_fast/topology.hpp>
#include <kueue_fast/types.hpp>
#include <kueue_fast/workloads.hpp>

namespace kueue_fast {

class Engine;
struct EngineStats;  // scheduler.hpp

// --- reasons ----------------------------------------------------------------------
// One reason = a header word (kind in bits 0-7, field a in bits 8-35, field b
// in bits 36-63) followed by 0, 1 or 3 number words.
enum ReasonKind : std::uint8_t {
  RK_MAX_CAPACITY = 1,  // a = fr; numbers: assumed, request, max capacity
  RK_UNUSED = 2,        // a = fr; number: how much more is needed
  RK_UNAVAILABLE = 3,   // a = resource
  RK_NOMINATION = 4,    // a = flavor, b = resource
  RK_REJECTION = 5,     // a = string id of the flavor class rejection
  // Topology Aware Scheduling (TasState::append_reason): a = TAS flavor, b = words that follow
  RK_TAS_NOT_FIT = 6,     // words: fit, total, slice size, class, n, then n x (resource, leaves)
  RK_TAS_NO_DOMAINS = 7,  // word: level index
  RK_TAS_SLICE_ABOVE = 8, // words: slice level index, level index
  RK_TAS_NO_LEVEL = 9,
  RK_TAS_ERROR = 10,      // a = 0; b flavors (0: no TAS flavor assigned; else more than one)
};
inline bool is_tas_reason(ReasonKind kind) noexcept { return kind >= RK_TAS_NOT_FIT; }
inline std::uint64_t reason_header(ReasonKind kind, std::uint64_t a, std::uint64_t b = 0) noexcept {
  return static_cast<std::uint64_t>(kind) | (a << 8) | (b << 36);
}
inline ReasonKind reason_kind(std::uint64_t h) noexcept { return static_cast<ReasonKind>(h & 0xff); }
inline std::int32_t reason_a(std::uint64_t h) noexcept { return static_cast<std::int32_t>((h >> 8) & 0xfffffff); }
inline std::int32_t reason_b(std::uint64_t h) noexcept { return static_cast<std::int32_t>(h >> 36); }
inline std::uint32_t reason_words(ReasonKind kind) noexcept {
  return kind == RK_MAX_CAPACITY ? 4u : (kind == RK_UNUSED ? 2u : 1u);
}
// The words of the reason whose header is `h` (TAS reasons say how many follow).
inline std::uint32_t reason_words_of(std::uint64_t h) noexcept {
  const ReasonKind kind = reason_kind(h);
  return is_tas_reason(kind) ? 1u + static_cast<std::uint32_t>(reason_b(h)) : reason_words(kind);
}
// Appends the text of the reason at `words` to `out`.
void append_reason_text(std::string& out, const Topology& topo, const std::uint64_t* words);

// --- the arena ----------------------------------------------------------------------
struct ResourceAmount {
  std::int32_t resource;
  Amount amount;
};

struct FlavorRec {  // FlavorAssignment of one resource
  std::int32_t resource;
  std::int32_t flavor;
  std::int32_t fr;
  Mode mode;
  std::int64_t borrow;
};

struct PodSetRec {  // PodSetAssignment
  std::int32_t count = 0;
  std::uint32_t req_first = 0, req_n = 0;  // requests (resource -> total), resource order
  std::uint32_t fl_first = 0, fl_n = 0;    // flavors
  std::uint32_t rs_first = 0, rs_words = 0, rs_n = 0;  // reasons (words, count)
  std::uint32_t tried_first = 0;           // n_groups entries: last flavor index tried
  Mode mode = FIT;
  PendingReason no_fit_reason = REASON_NONE;  // when NoFit: Kueue's resolveNoFitReason for the pod set
};

// Topology Aware Scheduling of a pod set (AssignmentArena.tas_pod_sets, beside
// pod_sets only when the topology has TAS flavors: the records without TAS
// stay small): a reason added once every pod set is assigned (a placement's
// failure, or Kueue's Status error), in its own span; the placement (TAS
// flavor, -1: none; its (leaf, pods) in the arena); the flavors tried per
// group (attempt_first: n_groups entries), to mark the TAS flavor
// TopologyPlacementFailed; the pod set's own status reason.
struct PodSetTas {
  std::uint32_t rs2_first = 0, rs2_words = 0;
  bool error = false;
  std::int32_t tas_flavor = -1;
  std::uint32_t tas_first = 0, tas_n = 0;
  std::uint32_t attempt_first = 0;
  PendingReason status_reason = REASON_NONE;
  bool attempted_any = false;
};

// An assignment's placements' TAS usage (ComputeTASNetUsage): a span of
// AssignmentArena.tas_uses (AssignmentArena.tas_assignments, beside assignments
// only with TAS flavors).
struct TasSpan {
  std::uint32_t first = 0, n = 0;
};

struct AssignmentRec {
  std::int32_t wid = -1, cq = -1;
  std::uint32_t ps_first = 0, ps_n = 0;
  std::int64_t borrowing = 0;
  std::uint32_t usage_first = 0, usage_n = 0;  // fr -> amount, insertion order
  Mode mode = NO_FIT;
};

struct AssignmentArena {
  std::vector<AssignmentRec> assignments;
  std::vector<PodSetRec> pod_sets;
  std::vector<FlavorRec> flavors;
  std::vector<ResourceAmount> requests;
  std::vector<FrAmount> usage;
  std::vector<std::uint64_t> reasons;
  std::vector<std::int16_t> tried;
  // Topology Aware Scheduling (empty without TAS flavors): per pod set and per
  // assignment (parallel to pod_sets and assignments), placements (leaf,
  // pods), their usage, the flavors tried per group
  std::vector<PodSetTas> tas_pod_sets;
  std::vector<TasSpan> tas_assignments;
  std::vector<std::pair<std::int32_t, std::int32_t>> tas_leaves;
  std::vector<TasUse> tas_uses;
  std::vector<PendingReason> attempt_min;
  std::vector<std::uint8_t> attempt_seen;

  void clear() noexcept {
    assignments.clear();
    pod_sets.clear();
    flavors.clear();
    requests.clear();
    usage.clear();
    reasons.clear();
    tried.clear();
    tas_pod_sets.clear();
    tas_assignments.clear();
    tas_leaves.clear();
    tas_uses.clear();
    attempt_min.clear();
    attempt_seen.clear();
  }
  const AssignmentRec& operator[](int a) const noexcept { return assignments[a]; }
  // An assignment's TAS usage ({} without TAS flavors).
  TasSpan tas_uses_of(int a) const noexcept {
    return static_cast<std::size_t>(a) < tas_assignments.size() ? tas_assignments[static_cast<std::size_t>(a)]
                                                                : TasSpan{};
  }
};

// (preemption mode, borrowing level): the granular mode of a flavor.
struct GranularMode {
  PreemptionMode pm;
  std::int64_t borrow;
};

class FlavorAssigner {
 public:
  // What the assigner sees of the Engine (references to its members, built by it).
  struct View {
    const Topology& topo;
    QuotaTree& tree;
    const WorkloadStore& w;
    AssignmentArena& arena;  // the assignments and their reasons are appended to it
    EngineStats& stats;      // assignments and quota_checks are counted
    Engine& engine;          // Engine::oracle
    TasState* tas;           // Topology Aware Scheduling (nullptr: none)
  };
  explicit FlavorAssigner(const View& view);

  // Assigns flavors to every pod set of `wid` in `cq` and returns the
  // assignment's index in the engine's arena. `use_last`: resume the flavor
  // scan recorded for the workload. `nomination`: nullptr, or per pod set x
  // resource group the flavor pinned by an earlier assignment (-1: none).
  // `counts`: nullptr for the spec's counts (partial admission passes reduced ones).
  int assign(int wid, int cq, bool use_last, const std::int32_t* nomination, std::size_t nomination_ps,
             const std::int32_t* counts);

 private:
  bool is_preferred(GranularMode a, GranularMode b) const noexcept;
  bool should_try_next_flavor(GranularMode m) const noexcept;
  bool can_preempt_while_borrowing() const noexcept;
  // Also sets last_no_fit_: why the flavor-resource does not fit (REASON_NONE unless NoFit).
  GranularMode fits_resource_quota(int fr, Amount assumed, Amount request);
  GranularMode fits_resource_quota_slow(int fr, Amount assumed, Amount request, Amount val, Amount max_capacity,
                                        Amount available);
  // A flavor tried for the pod set in progress (Kueue's FlavorAssignmentAttempts).
  void add_attempt(int group, bool no_fit, PendingReason reason);
  PendingReason resolve_attempts() const noexcept;
  bool find_flavor(int ps_index, const PodSetRec& psa, int resource, int group, std::int16_t& tried);
  int next_flavor(int ps_index, int group) const noexcept;
  // Topology Aware Scheduling (kueue assignFlavors, its TAS part): after quota
  void tas_pod_set_record();
  void tas_assignment(int index);
  void assign_topology(int assignment);
  void recompute_mode(AssignmentRec& a) noexcept;
  std::vector<TasAsk> asks_;
  std::vector<std::pair<std::int32_t, std::vector<std::int32_t>>> tas_errors_;
  void add_reason(std::uint64_t header) {
    v_.arena.reasons.push_back(header);
    ++reason_count_;
  }

  View v_;
  // the call in progress
  int wid_ = -1, cq_ = -1, n_groups_ = 0;
  const ClusterQueueSpec* spec_ = nullptr;
  bool use_last_ = false;
  const std::int32_t* nomination_ = nullptr;
  std::size_t nomination_ps_ = 0;
  std::uint32_t reason_count_ = 0;
  PendingReason last_no_fit_ = REASON_NONE;
  // flavors tried for the pod set in progress: per group the least severe
  // reason among its NoFit flavors (attempt_min_, valid where attempt_seen_)
  std::vector<PendingReason> attempt_min_;
  std::vector<std::uint8_t> attempt_seen_;
  bool attempted_any_ = false;
  PendingReason status_reason_ = REASON_NONE;
  // Per resource: its rank in Kueue's walk over a pod set's requests (FNV-1a of the name).
  std::vector<std::int32_t> visit_rank_;
  std::vector<std::uint32_t> visit_;  // the pod set's requests (indices) in that order
  // scratch, reused
  std::vector<Amount> assumed_;             // per fr: usage of earlier pod sets (a.usage)
  std::vector<std::uint8_t> assumed_seen_;  // per fr: has a key in a.usage
  std::vector<std::int32_t> assumed_keys_;  // a.usage keys in insertion order
  std::vector<std::uint8_t> group_done_;
  std::vector<FlavorRec> best_, cur_;
  std::vector<ResourceAmount> group_reqs_;
};

// --- inline members ---------------------------------------------------------------

inline bool FlavorAssigner::is_preferred(GranularMode a, GranularMode b) const noexcept {
  if (a.pm == PM_NO_FIT) return false;
  if (b.pm == PM_NO_FIT) return true;
  bool a_nc = a.pm == PM_NO_CANDIDATES, b_nc = b.pm == PM_NO_CANDIDATES;
  if (a_nc != b_nc) return !a_nc;
  if (spec_->preference == PREEMPTION_OVER_BORROWING) {
    if (a.borrow != b.borrow) return a.borrow < b.borrow;
    return a.pm > b.pm;
  }
  if (a.pm != b.pm) return a.pm > b.pm;
  return a.borrow < b.borrow;
}

inline bool FlavorAssigner::should_try_next_flavor(GranularMode m) const noexcept {
  if (m.pm == PM_NO_FIT || m.pm == PM_NO_CANDIDATES) return true;
  if ((m.pm == PM_PREEMPT || m.pm == PM_RECLAIM) && spec_->when_can_preempt == TRY_NEXT_FLAVOR) return true;
  return m.borrow != 0 && spec_->when_can_borrow == TRY_NEXT_FLAVOR;
}

inline bool FlavorAssigner::can_preempt_while_borrowing() const noexcept {
  return spec_->borrow_within_cohort != NEVER || (v_.topo.fair_sharing() && spec_->reclaim_within_cohort != NEVER);
}

// Kueue resolveNoFitReason for a NoFit assignment.
PendingReason no_fit_reason(const Topology& topo, const AssignmentArena& arena, int assignment);

// Topology Aware Scheduling, shared with the engine (scheduler.cpp):
// kueue Assignment.WorkloadsTopologyRequests: the asks of an assignment's pod
// sets (grouped by TAS flavor, stable), and its pod sets given no single TAS
// flavor: (index, TAS flavors found); and UpdateForTASResult: the last
// placement on the assignment's pod sets, and their usage.
void tas_asks(const TasState& tas, const WorkloadStore& w, const AssignmentArena& arena, int assignment,
              std::vector<TasAsk>& asks, std::vector<std::pair<std::int32_t, std::vector<std::int32_t>>>* errors);
void update_for_tas_result(const TasState& tas, AssignmentArena& arena, int assignment,
                           const std::vector<TasAsk>& asks);

}  // namespace kueue_fast
