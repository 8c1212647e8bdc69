// Same rules as kueue_fast/engine/reference/preemption.py.
#include <kueue_fast/preemption.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast {

Preemptor::Preemptor(const View& view) : v_(view) {
  fr_mark_.assign(static_cast<std::size_t>(v_.topo.n_fr()), 0);
  by_cq_head_.assign(static_cast<std::size_t>(v_.topo.n_cq()), 0);
  by_cq_end_.assign(static_cast<std::size_t>(v_.topo.n_cq()), 0);
  pruned_.assign(static_cast<std::size_t>(v_.topo.n_nodes()), 0);
  preemptor_ancestor_.assign(static_cast<std::size_t>(v_.topo.n_nodes()), 0);
}

// --- helpers shared by both strategies ----------------------------------------------------

void Preemptor::remove(int wid) noexcept { v_.engine.charge(wid, -1); }
void Preemptor::restore(int wid) noexcept { v_.engine.charge(wid, +1); }

void Preemptor::begin(const PreemptionCtx& ctx) {
  ctx_ = &ctx;
  fr_mask_ = 0;
  for (std::int32_t fr : ctx.frs_need_preemption) {
    fr_mark_[fr] = 1;
    fr_mask_ |= std::uint64_t{1} << (fr & 63);
  }
  fr_mask_exact_ = v_.topo.n_fr() <= 64;
  preemptor_priority_ = v_.w.priority[ctx.preemptor];
  const ClusterQueueSpec& spec = v_.topo.cq(ctx.cq);
  within_policy_ = spec.within_cluster_queue;
  reclaim_policy_ = spec.reclaim_within_cohort;
}

void Preemptor::end() {
  for (std::int32_t fr : ctx_->frs_need_preemption) fr_mark_[fr] = 0;
  ctx_ = nullptr;
}

// Can any workload at all be a candidate for a preemptor of cq with this
// priority? Both strategies take candidates only from cq (withinClusterQueue)
// and from the other ClusterQueues of its tree (reclaimWithinCohort), each
// bounded by its policy; when no list has anyone under the bound, the search
// would find nothing and change nothing.
bool Preemptor::any_candidate_possible(const PreemptionCtx& ctx) const noexcept {
  const ClusterQueueSpec& spec = v_.topo.cq(ctx.cq);
  const std::int32_t priority = v_.w.priority[ctx.preemptor];
  if (may_have_candidates(v_.cq_front[ctx.cq], spec.within_cluster_queue, priority)) return true;
  const QuotaTree& t = v_.tree;
  if (t.parent(ctx.cq) < 0 || spec.reclaim_within_cohort == NEVER) return false;
  // Is there another ClusterQueue of the tree whose front may_have_candidates?
  // From the tree's summary, with ctx.cq's own front taken out.
  const int root = t.root_of(ctx.cq);
  const CohortFronts::Summary& s = v_.cohort_fronts.get(root, t.subtree_cqs(root), v_.cq_front);
  const AdmittedFront& own = v_.cq_front[ctx.cq];
  const bool own_listed = t.in_snapshot(ctx.cq) && !own.empty;  // subtree_cqs: the active ones
  if (s.non_empty - (own_listed ? 1 : 0) == 0) return false;
  if (spec.reclaim_within_cohort == ANY) return true;
  if (s.evicting - (own_listed && own.evicting ? 1 : 0) > 0) return true;
  const std::int64_t lowest_other = s.lowest_cq == ctx.cq ? s.second : s.lowest;
  return spec.reclaim_within_cohort == LOWER_PRIORITY ? lowest_other < priority : lowest_other <= priority;
}

const std::vector<Target>& Preemptor::get_targets(const PreemptionCtx& ctx) {
  if (!any_candidate_possible(ctx)) {
    result_.clear();
    return result_;
  }
  ++v_.stats.target_searches;
  // Byte-identical after the search (every trial removal restored), unless
  // amounts near the int64 bound are involved: Amount arithmetic saturates and
  // Unlimited is sticky, so a round trip need not come back (Kueue's snapshot
  // keeps such a residue for the rest of the cycle too; the cache does not).
  bool check_tree = false;
  if (v_.debug_checks) {
    cells_before_ = v_.tree.cells();
    constexpr Amount HUGE_AMOUNT = Amount{1} << 61;
    auto huge = [](Amount v) { return v >= HUGE_AMOUNT || v <= -HUGE_AMOUNT; };
    check_tree = true;
    for (const Cell& c : cells_before_) {
      if (huge(c.usage) || huge(c.subtree_quota) || huge(c.local_quota)) check_tree = false;
    }
    for (const FrAmount& u : ctx.usage) {
      if (huge(u.amount)) check_tree = false;
    }
  }
  begin(ctx);
  result_.clear();
  if (v_.topo.fair_sharing()) {
    fair_preemptions();
  } else {
    classical_preemptions();
  }
  end();
  if (check_tree) {
    const auto& now = v_.tree.cells();
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (std::memcmp(&now[i], &cells_before_[i], sizeof(Cell)) != 0) {
        throw EngineInvariantError("a preemption target search changed the quota tree: cell " + std::to_string(i) +
                                   " usage " + std::to_string(cells_before_[i].usage) + " -> " +
                                   std::to_string(now[i].usage));
      }
    }
  }
  return result_;
}

// Any fr of the workload's usage (zero amounts included: they are keys) needs
// preemption? (Walks the admission record itself to stop at the first one.)
bool Preemptor::uses_resources(int wid) const noexcept {
  const WorkloadStore& w = v_.w;
  const Slot& s = w.adm[wid];
  if (s.size == 0) return false;
  const std::int64_t* p = w.adm_pool.data() + s.offset;
  std::int64_t n_ps = *p++;
  for (std::int64_t i = 0; i < n_ps; ++i) {
    ++p;
    std::int64_t n = *p++;
    for (std::int64_t k = 0; k < n; ++k, p += 2) {
      const std::int32_t fr = admission_word_fr(p[0]);
      if (fr >= 0 && fr_mark_[fr]) return true;
    }
  }
  return false;
}

bool Preemptor::uses_resources(const AdmittedEntry& a) const noexcept {
  if ((a.fr_mask & fr_mask_) == 0) return false;
  return fr_mask_exact_ || uses_resources(a.wid);
}

// Kueue SatisfiesPreemptionPolicy.
bool Preemptor::satisfies_policy(int candidate, std::uint8_t policy) const noexcept {
  const WorkloadStore& w = v_.w;
  int p = ctx_->preemptor;
  if (policy == LOWER_PRIORITY) return w.priority[candidate] < w.priority[p];
  if (policy == LOWER_OR_NEWER_EQUAL) {
    return w.priority[candidate] < w.priority[p] ||
           (w.priority[candidate] == w.priority[p] && w.queue_ts[p] < w.queue_ts[candidate]);
  }
  return policy == ANY;
}

// Kueue workloadFits: quota, then the topology placement.
bool Preemptor::workload_fits(bool allow_borrowing) const noexcept {
  const QuotaTree& t = v_.tree;
  for (const auto& [fr, v] : ctx_->usage) {
    if (!allow_borrowing && t.borrowing_with(ctx_->cq, fr, v)) return false;
    if (v > t.available(ctx_->cq, fr)) return false;
  }
  if (!ctx_->tas_asks.empty()) return v_.tas->find_for_workload(ctx_->tas_asks, false);
  return true;
}

// Put back, newest removal first, every target the workload does not need.
void Preemptor::fill_back(std::vector<Target>& targets, bool allow_borrowing) {
  for (int i = static_cast<int>(targets.size()) - 2; i >= 0; --i) {
    restore(targets[i].wid);
    if (workload_fits(allow_borrowing)) {
      // O(1) deletion as Kueue does it: the last target takes slot i.
      targets[i] = targets.back();
      targets.pop_back();
    } else {
      remove(targets[i].wid);
    }
  }
}

void Preemptor::restore_all(const std::vector<Target>& targets) noexcept {
  for (const Target& t : targets) restore(t.wid);
}

// Kueue CandidatesOrdering: evicted first, other ClusterQueues first, lower
// priority first, most recently admitted first, then namespace and name.
bool Preemptor::candidate_before(int a, int b) const noexcept {
  const WorkloadStore& w = v_.w;
  int ea = w.evicting[a] ? 0 : 1, eb = w.evicting[b] ? 0 : 1;
  if (ea != eb) return ea < eb;
  int sa = w.admitted_cq[a] == ctx_->cq ? 1 : 0, sb = w.admitted_cq[b] == ctx_->cq ? 1 : 0;
  if (sa != sb) return sa < sb;
  if (w.priority[a] != w.priority[b]) return w.priority[a] < w.priority[b];
  if (w.admission_time[a] != w.admission_time[b]) return w.admission_time[a] > w.admission_time[b];
  int c = w.compare_names(a, b);
  if (c != 0) return c < 0;
  return a < b;
}

// preemption.py sort_candidates with admission fair sharing: the plain order,
// then a merge sort with Kueue's comparison. Only two candidates of one
// usage-based ClusterQueue can compare differently from the plain order; with
// none the plain order stands (the merge sort would keep it).
template <class T, class WidOf>
void Preemptor::afs_order(std::vector<T>& list, std::vector<T>& scratch, WidOf wid_of) {
  bool any = false;
  for (const T& c : list) {
    if (v_.topo.cq(v_.w.admitted_cq[wid_of(c)]).admission_fair_sharing) {
      any = true;
      break;
    }
  }
  if (!any) return;
  const int cq = ctx_->cq;
  merge_sort(
      list.data(), list.size(),
      [&](const T& a, const T& b) { return v_.engine.afs_candidate_before(wid_of(a), wid_of(b), cq); }, scratch);
}

bool Preemptor::within_nominal(int node) const noexcept {
  const auto& frs = ctx_->frs_need_preemption;
  return v_.tree.within_nominal(node, frs.data(), frs.size());
}

// --- classical --------------------------------------------------------------------------------

// Kueue classifyPreemptionVariant.
Variant Preemptor::variant(int cand, bool hierarchical_advantage) const noexcept {
  if (!uses_resources(cand)) return V_NEVER;
  const WorkloadStore& w = v_.w;
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  bool same_cq = w.admitted_cq[cand] == ctx_->cq;
  std::uint8_t policy = same_cq ? spec.within_cluster_queue : spec.reclaim_within_cohort;
  if (!satisfies_policy(cand, policy)) return V_NEVER;
  if (same_cq) return V_WITHIN_CQ;
  if (hierarchical_advantage) return V_HIERARCHICAL;
  if (spec.borrow_within_cohort == NEVER) return V_RECLAIM_WITHOUT_BORROWING;
  std::int32_t cand_prio = w.priority[cand];
  if (cand_prio >= w.priority[ctx_->preemptor]) return V_RECLAIM_WITHOUT_BORROWING;
  if (spec.has_max_priority_threshold && cand_prio > spec.max_priority_threshold) return V_RECLAIM_WITHOUT_BORROWING;
  return V_RECLAIM_WHILE_BORROWING;
}

// --- the candidate order, lazily --------------------------------------------------------------
//
// Kueue sorts every candidate (CandidatesOrdering) and removes them in that
// order until the preemptor fits; most searches stop after a few. The
// per-ClusterQueue admitted lists are kept in that order already (without
// "other ClusterQueues first", constant within a group), so the sorted
// groups are k-way merges of the lists' filtered segments, and the search
// pulls candidates one at a time: O(sources + consumed x log sources)
// instead of collecting and sorting every admitted workload under the
// priority bound. The sequence is the same (checked against the eager
// order under Engine::set_debug_checks).

void Preemptor::add_source(int cq, int lca, bool advantage) {
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  const bool same = cq == ctx_->cq;
  const std::uint8_t policy = same ? spec.within_cluster_queue : spec.reclaim_within_cohort;
  if (policy == NEVER) return;
  const std::uint8_t group = same ? G_SAME : (advantage ? G_HIERARCHY : G_PRIORITY);
  const auto s = static_cast<std::int32_t>(sources_.size());
  sources_.push_back({cq, lca, group, policy, advantage});
  // Stored reversed: the non-evicting entries, then the evicting ones.
  const auto& list = v_.cq_admitted[cq];
  const auto n = static_cast<std::int32_t>(list.size());
  std::int32_t ev_lo = n;
  if (n > 0 && list.back().evicting) {
    auto it = std::partition_point(list.begin(), list.end(), [](const AdmittedEntry& x) { return x.evicting == 0; });
    ev_lo = static_cast<std::int32_t>(it - list.begin());
  }
  Cursor evicting{s, ev_lo, n - 1, V_NEVER}, rest{s, 0, ev_lo - 1, V_NEVER};
  advance(evicting);
  advance(rest);
  if (evicting.pos >= evicting.lo || rest.pos >= rest.lo) group_nonempty_[group] = true;
  cursors_init_.push_back(evicting);
  cursors_init_.push_back(rest);
}

// Past the policy's priority bound nobody in the segment qualifies (it is
// ordered by priority ascending); below it, a candidate must use an fr that
// needs preemption and satisfy the policy (classifyPreemptionVariant).
void Preemptor::advance(Cursor& c) const noexcept {
  const Source& src = sources_[c.source];
  const auto& list = v_.cq_admitted[src.cq];
  for (; c.pos >= c.lo; --c.pos) {
    const AdmittedEntry& a = list[c.pos];
    const bool past_bound = (src.policy == LOWER_PRIORITY && a.priority >= preemptor_priority_) ||
                            (src.policy == LOWER_OR_NEWER_EQUAL && a.priority > preemptor_priority_);
    if (past_bound || (merge_borrowing_ && past_borrowing_bound(src, a.priority))) {
      c.pos = c.lo - 1;
      return;
    }
    if (uses_resources(a)) {  // (variant() checks it first; the filter spares the pool)
      c.variant = variant(a.wid, src.advantage);
      if (c.variant != V_NEVER) return;
    }
  }
}

// CandidatesOrdering between heads of two segments of one phase (same
// evicting state, same "own ClusterQueue" state): lower priority, most
// recently admitted, namespace and name, wid.
bool Preemptor::head_before(const Cursor& a, const Cursor& b) const noexcept {
  const AdmittedEntry& x = v_.cq_admitted[sources_[a.source].cq][a.pos];
  const AdmittedEntry& y = v_.cq_admitted[sources_[b.source].cq][b.pos];
  if (x.priority != y.priority) return x.priority < y.priority;
  if (x.admission_time != y.admission_time) return x.admission_time > y.admission_time;
  const int c = v_.w.compare_names(x.wid, y.wid);
  if (c != 0) return c < 0;
  return x.wid < y.wid;
}

// In a borrowing attempt, is a priority-group candidate of this priority
// V_RECLAIM_WITHOUT_BORROWING (variant()), so invalid? Monotone in priority.
bool Preemptor::past_borrowing_bound(const Source& src, std::int32_t priority) const noexcept {
  if (src.group != G_PRIORITY) return false;
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  if (spec.borrow_within_cohort == NEVER || priority >= preemptor_priority_) return true;
  return spec.has_max_priority_threshold && priority > spec.max_priority_threshold;
}

// candidate_valid's tree part for every candidate of an other ClusterQueue.
bool Preemptor::source_within_nominal(const Source& src) const noexcept {
  if (within_nominal(src.cq)) return true;
  for (int node : v_.tree.ancestors(src.cq)) {
    if (node == src.lca) break;
    if (within_nominal(node)) return true;
  }
  return false;
}

void Preemptor::merge_reset(bool borrowing) {
  merge_borrowing_ = borrowing;
  if (eager_) {
    eager_pos_ = 0;
    return;
  }
  cursors_ = cursors_init_;
  source_dead_.assign(sources_.size(), 0);
  if (borrowing) {
    // The initial heads passed the unfiltered walk; the borrowing bound
    // cuts a segment's suffix, possibly from its head.
    for (Cursor& c : cursors_) {
      if (c.pos < c.lo) continue;
      const Source& src = sources_[c.source];
      if (past_borrowing_bound(src, v_.cq_admitted[src.cq][c.pos].priority)) c.pos = c.lo - 1;
    }
  }
  phase_ = 0;
  merge_start_phase();
}

// Phase p: evicting segments (p < 3) or the rest, of the group p % 3.
void Preemptor::merge_start_phase() {
  heap_.clear();
  if (phase_ >= 6) return;
  const std::uint8_t group = static_cast<std::uint8_t>(phase_ % 3);
  const int segment = phase_ < 3 ? 0 : 1;
  if (!group_nonempty_[group]) return;
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    if (sources_[s].group != group) continue;
    const auto k = static_cast<std::int32_t>(2 * s + segment);
    if (!source_dead_[s] && cursors_[k].pos >= cursors_[k].lo) heap_.push_back(k);
  }
  auto after = [&](std::int32_t a, std::int32_t b) { return head_before(cursors_[b], cursors_[a]); };
  std::make_heap(heap_.begin(), heap_.end(), after);
}

bool Preemptor::merge_next(Candidate& out) {
  if (eager_) {
    if (eager_pos_ >= ordered_.size()) return false;
    out = ordered_[eager_pos_++];
    return true;
  }
  auto after = [&](std::int32_t a, std::int32_t b) { return head_before(cursors_[b], cursors_[a]); };
  for (;;) {
    while (heap_.empty()) {
      if (phase_ >= 6) return false;
      ++phase_;
      merge_start_phase();
    }
    std::pop_heap(heap_.begin(), heap_.end(), after);
    const Cursor& top = cursors_[heap_.back()];
    const Source& top_src = sources_[top.source];
    if (top_src.group == G_SAME || !source_within_nominal(top_src)) break;
    source_dead_[top.source] = 1;  // every candidate left in it is invalid for this attempt
    heap_.pop_back();
  }
  Cursor& c = cursors_[heap_.back()];
  const Source& src = sources_[c.source];
  out = {v_.cq_admitted[src.cq][c.pos].wid, src.lca, c.variant};
  --c.pos;
  advance(c);
  if (c.pos >= c.lo) {
    std::push_heap(heap_.begin(), heap_.end(), after);
  } else {
    heap_.pop_back();
  }
  return true;
}

// Kueue's eager order: every candidate of every source, each group sorted
// by candidate_before, evicting ones first (classicalPreemptions).
void Preemptor::eager_order(std::vector<Candidate>& out) {
  same_.clear();
  hierarchy_.clear();
  priority_.clear();
  for (std::size_t s = 0; s < sources_.size(); ++s) {
    std::vector<Candidate>& into =
        sources_[s].group == G_SAME ? same_ : (sources_[s].group == G_HIERARCHY ? hierarchy_ : priority_);
    for (int segment = 0; segment < 2; ++segment) {
      Cursor c = cursors_init_[2 * s + segment];
      for (; c.pos >= c.lo; --c.pos, advance(c)) {
        into.push_back({v_.cq_admitted[sources_[s].cq][c.pos].wid, sources_[s].lca, c.variant});
      }
    }
  }
  auto by_key = [&](const Candidate& a, const Candidate& b) { return candidate_before(a.wid, b.wid); };
  std::sort(same_.begin(), same_.end(), by_key);
  std::sort(hierarchy_.begin(), hierarchy_.end(), by_key);
  std::sort(priority_.begin(), priority_.end(), by_key);
  if (v_.afs) {
    auto wid_of = [](const Candidate& c) { return c.wid; };
    afs_order(same_, afs_scratch_, wid_of);
    afs_order(hierarchy_, afs_scratch_, wid_of);
    afs_order(priority_, afs_scratch_, wid_of);
  }
  out.clear();
  const WorkloadStore& w = v_.w;
  for (int pass = 0; pass < 2; ++pass) {
    bool want_evicting = pass == 0;
    for (const auto* list : {&hierarchy_, &priority_, &same_}) {
      for (const Candidate& c : *list) {
        if ((w.evicting[c.wid] != 0) == want_evicting) out.push_back(c);
      }
    }
  }
}

void Preemptor::check_lazy_order() {
  eager_order(ordered_);
  // Unfiltered: a non-borrowing attempt before any removal drops only
  // sources within nominal, which the eager order has but the search skips.
  lazy_.clear();
  merge_reset(false);
  Candidate c{};
  while (merge_next(c)) lazy_.push_back(c);
  eager_valid_.clear();
  for (const Candidate& x : ordered_) {
    if (candidate_valid(x, false)) eager_valid_.push_back(x);
  }
  ordered_.swap(eager_valid_);
  bool same = lazy_.size() == ordered_.size();
  for (std::size_t i = 0; same && i < lazy_.size(); ++i) {
    same = lazy_[i].wid == ordered_[i].wid && lazy_[i].lca == ordered_[i].lca &&
           lazy_[i].variant == ordered_[i].variant;
  }
  if (!same) {
    std::size_t i = 0;
    while (i < lazy_.size() && i < ordered_.size() && lazy_[i].wid == ordered_[i].wid) ++i;
    auto at = [](const std::vector<Candidate>& v, std::size_t k) {
      return k < v.size() ? std::to_string(v[k].wid) : std::string("end");
    };
    throw EngineInvariantError("the lazy preemption candidate order differs from the sorted one for preemptor " +
                               std::to_string(ctx_->preemptor) + " at position " + std::to_string(i) +
                               ": wid " + at(lazy_, i) + " instead of " + at(ordered_, i));
  }
  bool nonempty[3] = {!hierarchy_.empty(), !priority_.empty(), !same_.empty()};
  if (!std::equal(nonempty, nonempty + 3, group_nonempty_)) {
    throw EngineInvariantError("lazy preemption candidate groups differ from the sorted ones");
  }
}

void Preemptor::collect_in_subtree(int cohort, int subtree_root, int skip, bool advantage) {
  const QuotaTree& t = v_.tree;
  for (int child : t.child_cohorts(cohort)) {
    if (child == skip || within_nominal(child)) continue;
    collect_in_subtree(child, subtree_root, skip, advantage);
  }
  for (int child : t.child_cqs(cohort)) {
    if (child == ctx_->cq) continue;
    // (within_nominal is pure: skipping it where no candidate can come out changes nothing.)
    if (may_have_candidates(v_.cq_front[child], reclaim_policy_) && !within_nominal(child)) {
      add_source(child, subtree_root, advantage);
    }
  }
}

// Kueue collectCandidatesForHierarchicalReclaim: (hierarchy, priority) candidates.
void Preemptor::hierarchical_candidates() {
  const QuotaTree& t = v_.tree;
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  if (t.parent(ctx_->cq) < 0 || spec.reclaim_within_cohort == NEVER) return;
  // The walk below only takes candidates from the tree's other ClusterQueues
  // and is otherwise pure: when none of them can yield one, skip it.
  bool any = false;
  for (int cq : t.subtree_cqs(t.root_of(ctx_->cq))) {
    if (cq != ctx_->cq && may_have_candidates(v_.cq_front[cq], reclaim_policy_)) {
      any = true;
      break;
    }
  }
  if (!any) return;
  bool advantage = t.quantities_fit_in_quota(ctx_->cq, ctx_->usage, remaining_);
  int previous = -1;
  for (int node : t.ancestors(ctx_->cq)) {
    collect_in_subtree(node, node, previous, advantage);
    bool fits = t.quantities_fit_in_quota(node, remaining_, remaining_next_);
    remaining_.swap(remaining_next_);
    advantage = advantage || fits;
    previous = node;
  }
}

// Kueue candidateIsValid: earlier removals may make a candidate's
// ClusterQueue (or an ancestor below the common one) no longer borrow.
bool Preemptor::candidate_valid(const Candidate& c, bool borrowing) const noexcept {
  int cq = v_.w.admitted_cq[c.wid];
  if (cq == ctx_->cq) return true;
  if (borrowing && c.variant == V_RECLAIM_WITHOUT_BORROWING) return false;
  if (within_nominal(cq)) return false;
  for (int node : v_.tree.ancestors(cq)) {
    if (node == c.lca) break;
    if (within_nominal(node)) return false;
  }
  return true;
}

// Strictly below nominal on every fr needing preemption.
bool Preemptor::queue_under_nominal() const noexcept {
  for (std::int32_t fr : ctx_->frs_need_preemption) {
    if (!(v_.tree.nominal(ctx_->cq, fr) > v_.tree.usage(ctx_->cq, fr))) return false;
  }
  return true;
}

static PreemptionReason variant_reason(Variant v) {
  switch (v) {
    case V_WITHIN_CQ: return IN_CLUSTER_QUEUE;
    case V_RECLAIM_WHILE_BORROWING: return IN_COHORT_RECLAIM_WHILE_BORROWING;
    default: return IN_COHORT_RECLAMATION;
  }
}

void Preemptor::classical_preemptions() {
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  sources_.clear();
  cursors_init_.clear();
  std::fill(group_nonempty_, group_nonempty_ + 3, false);
  merge_borrowing_ = false;  // the initial heads are unfiltered (group_nonempty_ decides the attempts)
  if (spec.within_cluster_queue != NEVER) add_source(ctx_->cq, -1, false);
  hierarchical_candidates();
  // Admission fair sharing: candidates of a usage-based ClusterQueue sort by a
  // comparison the admitted lists are not ordered by, so the order is the
  // eager one (preemption.py sort_candidates), walked by merge_next.
  eager_ = false;
  if (v_.afs) {
    for (const Source& src : sources_) eager_ = eager_ || v_.topo.cq(src.cq).admission_fair_sharing;
  }
  if (eager_) {
    eager_order(ordered_);
  } else if (v_.debug_checks) {
    check_lazy_order();
  }
  const bool has_hierarchy = group_nonempty_[G_HIERARCHY], has_priority = group_nonempty_[G_PRIORITY];
  if (!has_hierarchy && !has_priority && !group_nonempty_[G_SAME]) return;  // nothing to try: no targets
  bool forbidden = spec.borrow_within_cohort == NEVER;
  bool attempts[2];
  int n_attempts;
  if ((!has_hierarchy && !has_priority) || (forbidden && !queue_under_nominal())) {
    attempts[0] = true;
    n_attempts = 1;
  } else if (forbidden && !has_hierarchy) {
    attempts[0] = false;
    attempts[1] = true;
    n_attempts = 2;
  } else {
    attempts[0] = true;
    attempts[1] = false;
    n_attempts = 2;
  }
  for (int k = 0; k < n_attempts; ++k) {
    bool borrowing = attempts[k];
    targets_.clear();
    merge_reset(borrowing);
    Candidate cand{};
    while (merge_next(cand)) {
      if (!candidate_valid(cand, borrowing)) continue;
      remove(cand.wid);
      ++evaluations;
      targets_.push_back({cand.wid, variant_reason(cand.variant)});
      if (workload_fits(borrowing)) {
        fill_back(targets_, borrowing);
        restore_all(targets_);
        result_ = targets_;
        return;
      }
    }
    restore_all(targets_);
  }
}

// --- fair sharing -------------------------------------------------------------------------------

bool Preemptor::cq_borrowing(int cq) const noexcept {
  const QuotaTree& t = v_.tree;
  if (t.parent(cq) < 0) return false;
  for (std::int32_t fr : ctx_->frs_need_preemption) {
    if (t.borrowing_with(cq, fr, 0)) return true;
  }
  return false;
}

// Kueue findCandidates: own ClusterQueue by withinClusterQueue; every
// borrowing ClusterQueue of the whole tree by reclaimWithinCohort.
void Preemptor::fair_candidates() {
  const QuotaTree& t = v_.tree;
  const ClusterQueueSpec& spec = v_.topo.cq(ctx_->cq);
  candidates_.clear();
  // Every admitted workload of cq that satisfies the policy and uses an fr
  // needing preemption; the order does not matter (sorted afterwards). The
  // list is walked in candidate order: past the policy's priority bound
  // nobody qualifies (the evicting segment aside).
  auto add_from = [&](int cq, std::uint8_t policy) {
    if (!may_have_candidates(v_.cq_front[cq], policy)) return;
    const auto& list = v_.cq_admitted[cq];
    std::size_t i = list.size();
    while (i > 0) {
      const AdmittedEntry& a = list[i - 1];
      const bool past_bound = (policy == LOWER_PRIORITY && a.priority >= preemptor_priority_) ||
                              (policy == LOWER_OR_NEWER_EQUAL && a.priority > preemptor_priority_);
      if (past_bound) {
        if (!a.evicting) break;
        auto it = std::partition_point(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(i),
                                       [](const AdmittedEntry& x) { return x.evicting == 0; });
        i = static_cast<std::size_t>(it - list.begin());
        continue;
      }
      if (uses_resources(a) && satisfies_policy(a.wid, policy)) candidates_.push_back(a.wid);
      --i;
    }
  };
  if (spec.within_cluster_queue != NEVER) add_from(ctx_->cq, spec.within_cluster_queue);
  if (t.parent(ctx_->cq) >= 0 && spec.reclaim_within_cohort != NEVER) {
    for (int cq : t.subtree_cqs(t.root_of(ctx_->cq))) {
      // (cq_borrowing is pure: checking the cheap bound first changes nothing.)
      if (cq == ctx_->cq || !may_have_candidates(v_.cq_front[cq], spec.reclaim_within_cohort) || !cq_borrowing(cq)) {
        continue;
      }
      add_from(cq, spec.reclaim_within_cohort);
    }
  }
}

bool Preemptor::fits_for_fair_sharing() {
  // The incoming usage is simulated for share computations; take it out to check fit.
  const auto& u = ctx_->usage;
  v_.tree.remove_usage(ctx_->cq, u.data(), u.data() + u.size());
  bool ok = workload_fits(true);
  v_.tree.add_usage(ctx_->cq, u.data(), u.data() + u.size());
  return ok;
}

void Preemptor::take(int wid, PreemptionReason reason) {
  remove(wid);
  targets_.push_back({wid, reason});
}

void Preemptor::fair_preemptions() {
  fair_candidates();
  if (candidates_.empty()) return;
  std::sort(candidates_.begin(), candidates_.end(), [&](std::int32_t a, std::int32_t b) { return candidate_before(a, b); });
  if (v_.afs) afs_order(candidates_, afs_scratch_wids_, [](std::int32_t w) { return w; });
  const auto& configured = v_.topo.spec().fair_strategies;
  std::uint8_t first = configured.empty() ? std::uint8_t{LESS_THAN_OR_EQUAL_TO_FINAL_SHARE} : configured[0];
  bool has_second = configured.empty() || configured.size() > 1;
  QuotaTree& t = v_.tree;
  for (int a : t.ancestors(ctx_->cq)) preemptor_ancestor_[a] = 1;
  const auto& u = ctx_->usage;
  t.add_usage(ctx_->cq, u.data(), u.data() + u.size());
  targets_.clear();
  bool fits = first_fair_strategy(first);
  if (!fits && v_.topo.gates().fair_sharing_reevaluate_preemption_candidates) {
    bool own = false;
    for (const Target& tg : targets_) own = own || v_.w.admitted_cq[tg.wid] == ctx_->cq;
    if (own) {
      // Taking the preemptor's own workloads lowered its share: candidates
      // that failed the strategy get one more chance (fair_strategy.go).
      candidates_.swap(retry_);
      fits = first_fair_strategy(first);
    }
  }
  if (!fits && has_second) fits = second_fair_strategy();
  t.remove_usage(ctx_->cq, u.data(), u.data() + u.size());
  for (int a : t.ancestors(ctx_->cq)) preemptor_ancestor_[a] = 0;
  for (std::int32_t n : pruned_touched_) pruned_[n] = 0;
  pruned_touched_.clear();
  if (!fits) {
    restore_all(targets_);
    return;
  }
  fill_back(targets_, true);
  restore_all(targets_);
  result_ = targets_;
}

bool Preemptor::first_fair_strategy(std::uint8_t strategy) {
  retry_.clear();
  bool within_nominal_now = v_.topo.gates().fair_sharing_preempt_within_nominal;
  for (std::int32_t fr : ctx_->frs_need_preemption) {
    if (v_.tree.borrowing_with(ctx_->cq, fr, 0)) within_nominal_now = false;
  }
  ordering_reset(candidates_);
  for (;;) {
    int target_cq = next_target_or_done();
    if (target_cq < 0) break;
    if (target_cq == ctx_->cq) {
      take(ordering_pop(target_cq), IN_CLUSTER_QUEUE);
      if (fits_for_fair_sharing()) return true;
      continue;
    }
    if (within_nominal_now) {
      take(ordering_pop(target_cq), IN_COHORT_RECLAMATION);
      if (fits_for_fair_sharing()) return true;
      continue;
    }
    auto [preemptor_new, target_old] = shares(target_cq);
    if (preemptor_new.zero_weight_borrows() && !target_old.zero_weight_borrows()) {
      // No candidate of this ClusterQueue can pass either strategy.
      while (has_workload(target_cq)) retry_.push_back(ordering_pop(target_cq));
      continue;
    }
    while (has_workload(target_cq)) {
      std::int32_t wid = ordering_pop(target_cq);
      ++evaluations;
      DRS target_new = target_share_after_removal(target_cq, wid);
      bool passed = strategy == LESS_THAN_OR_EQUAL_TO_FINAL_SHARE ? compare_drs(preemptor_new, target_new) <= 0
                                                                   : compare_drs(preemptor_new, target_old) < 0;
      if (passed) {
        take(wid, IN_COHORT_FAIR_SHARING);
        if (fits_for_fair_sharing()) return true;
        break;  // shares changed: choose the next target ClusterQueue again
      }
      retry_.push_back(wid);
    }
  }
  return false;
}

// Rule S2-b on the candidates the first strategy passed over.
bool Preemptor::second_fair_strategy() {
  candidates_.swap(retry_);  // the ordering copies its input
  ordering_reset(candidates_);
  for (;;) {
    int target_cq = next_target_or_done();
    if (target_cq < 0) break;
    auto [preemptor_new, target_old] = shares(target_cq);
    std::int32_t wid = ordering_pop(target_cq);
    ++evaluations;
    if (compare_drs(preemptor_new, target_old) < 0) {
      take(wid, IN_COHORT_FAIR_SHARING);
      if (fits_for_fair_sharing()) return true;
    }
    if (!pruned_[target_cq]) {
      pruned_[target_cq] = 1;
      pruned_touched_.push_back(target_cq);
    }
  }
  return false;
}

// --- TargetClusterQueueOrdering ------------------------------------------------------------------

void Preemptor::ordering_reset(const std::vector<std::int32_t>& candidates) {
  const WorkloadStore& w = v_.w;
  for (std::int32_t cq : ordering_cqs_) by_cq_head_[cq] = by_cq_end_[cq] = 0;
  ordering_cqs_.clear();
  for (std::int32_t n : pruned_touched_) pruned_[n] = 0;
  pruned_touched_.clear();
  by_cq_.assign(candidates.begin(), candidates.end());
  std::stable_sort(by_cq_.begin(), by_cq_.end(),
                   [&](std::int32_t a, std::int32_t b) { return w.admitted_cq[a] < w.admitted_cq[b]; });
  for (std::size_t i = 0; i < by_cq_.size(); ++i) {
    std::int32_t cq = w.admitted_cq[by_cq_[i]];
    if (i == 0 || w.admitted_cq[by_cq_[i - 1]] != cq) {
      by_cq_head_[cq] = static_cast<std::uint32_t>(i);
      ordering_cqs_.push_back(cq);
    }
    by_cq_end_[cq] = static_cast<std::uint32_t>(i + 1);
  }
}

int Preemptor::next_target_or_done() {
  const QuotaTree& t = v_.tree;
  int cq = ctx_->cq;
  if (t.parent(cq) < 0) return has_workload(cq) ? cq : -1;
  int root = t.root_of(cq);
  while (!pruned_[root]) {
    int target = next_target(root);
    if (target >= 0) return target;
  }
  return -1;
}

int Preemptor::next_target(int cohort) {
  const QuotaTree& t = v_.tree;
  auto prune = [&](int node) {
    if (!pruned_[node]) {
      pruned_[node] = 1;
      pruned_touched_.push_back(node);
    }
  };
  int best_cq = -1;
  DRS best_cq_drs = NEGATIVE_DRS;
  for (int cq : t.child_cqs(cohort)) {
    if (pruned_[cq]) continue;
    DRS drs = v_.shares.drs(cq);
    if ((drs.is_zero() && cq != ctx_->cq) || !has_workload(cq)) {
      prune(cq);
      continue;
    }
    int c = compare_drs(drs, best_cq_drs);
    if (c == 0 && best_cq >= 0) {
      // Tie: the ClusterQueue whose first candidate orders first.
      if (candidate_before(by_cq_[by_cq_head_[cq]], by_cq_[by_cq_head_[best_cq]])) best_cq = cq;
    } else if (c > 0) {
      best_cq = cq;
      best_cq_drs = drs;
    }
  }
  int best_cohort = -1;
  DRS best_cohort_drs = NEGATIVE_DRS;
  for (int child : t.child_cohorts(cohort)) {
    if (pruned_[child]) continue;
    DRS drs = v_.shares.drs(child);
    if (drs.is_zero() && !preemptor_ancestor_[child]) {
      prune(child);
      continue;
    }
    int c = compare_drs(drs, best_cohort_drs);
    // Kueue keeps the last of equal cohorts (unordered set); kueue-fast keeps
    // the one whose name sorts first (scheduling contract).
    if (c > 0 || (c == 0 && best_cohort >= 0 && v_.topo.node_name(child) < v_.topo.node_name(best_cohort))) {
      best_cohort = child;
      best_cohort_drs = drs;
    }
  }
  if (best_cohort < 0 && best_cq < 0) {
    prune(cohort);
    return -1;
  }
  if (best_cohort >= 0 && compare_drs(best_cohort_drs, best_cq_drs) >= 0) return next_target(best_cohort);
  return best_cq;
}

// Shares at the almost-lowest-common-ancestor (fairsharing/least_common_ancestor.go).
std::pair<int, int> Preemptor::almost_lcas(int target_cq) const {
  const QuotaTree& t = v_.tree;
  int lca = -1;
  for (int a : t.ancestors(target_cq)) {
    if (preemptor_ancestor_[a]) {
      lca = a;
      break;
    }
  }
  auto below = [&](int cq) {
    int node = cq;
    for (int a : t.ancestors(cq)) {
      if (a == lca) return node;
      node = a;
    }
    throw EngineInvariantError("no common ancestor");
  };
  if (lca < 0) throw EngineInvariantError("no common ancestor");
  return {below(ctx_->cq), below(target_cq)};
}

std::pair<DRS, DRS> Preemptor::shares(int target_cq) const {
  auto [preemptor_side, target_side] = almost_lcas(target_cq);
  return {v_.shares.drs(preemptor_side), v_.shares.drs(target_side)};
}

DRS Preemptor::target_share_after_removal(int target_cq, int wid) {
  remove(wid);
  int target_side = almost_lcas(target_cq).second;
  DRS drs = v_.shares.drs(target_side);
  restore(wid);
  return drs;
}

}  // namespace kueue_fast
