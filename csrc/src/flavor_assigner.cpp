// Same rules as kueue_fast/engine/reference/flavor_assigner.py.
#include <kueue_fast/flavor_assigner.hpp>

#include <algorithm>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast {

// --- reason texts ----------------------------------------------------------------------

void append_reason_text(std::string& out, const Topology& topo, const std::uint64_t* words) {
  std::uint64_t h = words[0];
  switch (reason_kind(h)) {
    case RK_MAX_CAPACITY: {
      int fr = reason_a(h);
      int r = topo.fr_resource(fr);
      QuantityFormat fmt = topo.resource_format(r);
      out += "insufficient quota for ";
      out += topo.resource_name(r);
      out += " in flavor ";
      out += topo.flavor_name(topo.fr_flavor(fr));
      out += ", previously considered podsets requests (";
      append_amount(out, fmt, static_cast<std::int64_t>(words[1]));
      out += ") + current podset request (";
      append_quantity(out, fmt, static_cast<std::int64_t>(words[2]));
      out += ") > maximum capacity (";
      append_amount(out, fmt, static_cast<std::int64_t>(words[3]));
      out += ')';
      return;
    }
    case RK_UNUSED: {
      int fr = reason_a(h);
      int r = topo.fr_resource(fr);
      out += "insufficient unused quota for ";
      out += topo.resource_name(r);
      out += " in flavor ";
      out += topo.flavor_name(topo.fr_flavor(fr));
      out += ", ";
      append_amount(out, topo.resource_format(r), static_cast<std::int64_t>(words[1]));
      out += " more needed";
      return;
    }
    case RK_UNAVAILABLE:
      out += "resource ";
      out += topo.resource_name(reason_a(h));
      out += " unavailable in ClusterQueue";
      return;
    case RK_NOMINATION:
      out += "skipping flavor ";
      out += topo.flavor_name(reason_a(h));
      out += " as it is not found in the nomination mapping for resource ";
      out += topo.resource_name(reason_b(h));
      return;
    case RK_REJECTION:
      out += topo.string_at(reason_a(h));
      return;
    case RK_TAS_NOT_FIT:
    case RK_TAS_NO_DOMAINS:
    case RK_TAS_SLICE_ABOVE:
    case RK_TAS_NO_LEVEL:
    case RK_TAS_ERROR:
      return;  // the TAS snapshot writes these (TasSnapshot::append_reason): callers route them there
  }
}

namespace {

int severity(PendingReason r) noexcept {  // Kueue reasonSeverity
  switch (r) {
    case TOPOLOGY_PLACEMENT_FAILED: return 1;
    case WAITING_FOR_QUOTA: return 2;
    case EXCEEDS_MAX_QUOTA: return 3;
    case NO_MATCHING_FLAVOR: return 4;
    default: return 0;
  }
}

PendingReason most_severe(PendingReason a, PendingReason b) noexcept { return severity(b) > severity(a) ? b : a; }

std::uint64_t fnv1a64(const std::string& s) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

}  // namespace

// Kueue resolveNoFitReason: the most severe of the NoFit pod sets' reasons
// (flavor_assigner.py Assignment / scheduler.py _no_fit_reason).
PendingReason no_fit_reason(const Topology&, const AssignmentArena& arena, int assignment) {
  const AssignmentRec& a = arena.assignments[assignment];
  PendingReason worst = REASON_NONE;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena.pod_sets[a.ps_first + i];
    if (ps.mode == NO_FIT) worst = most_severe(worst, ps.no_fit_reason);
  }
  return worst == REASON_NONE ? WAITING_FOR_QUOTA : worst;
}

// --- the assigner -------------------------------------------------------------------------

FlavorAssigner::FlavorAssigner(const View& view) : v_(view) {
  std::size_t n_fr = static_cast<std::size_t>(v_.topo.n_fr());
  assumed_.assign(n_fr, 0);
  assumed_seen_.assign(n_fr, 0);
  // Kueue walks a pod set's requests as SliceRequests (VectorizedResourceRequests,
  // beta, on): sorted by the FNV-1a 64 hash of the name, then the name
  // (pkg/resources/slice_requests.go). It decides which resource group is tried first.
  const int n_res = v_.topo.n_resources();
  std::vector<std::int32_t> by_hash(static_cast<std::size_t>(n_res));
  for (int r = 0; r < n_res; ++r) by_hash[static_cast<std::size_t>(r)] = r;
  std::sort(by_hash.begin(), by_hash.end(), [&](int a, int b) {
    std::uint64_t ha = fnv1a64(v_.topo.resource_name(a)), hb = fnv1a64(v_.topo.resource_name(b));
    return ha != hb ? ha < hb : v_.topo.resource_name(a) < v_.topo.resource_name(b);
  });
  visit_rank_.assign(static_cast<std::size_t>(n_res), 0);
  for (int k = 0; k < n_res; ++k) visit_rank_[static_cast<std::size_t>(by_hash[static_cast<std::size_t>(k)])] = k;
}

void FlavorAssigner::add_attempt(int group, bool no_fit, PendingReason reason) {
  attempted_any_ = true;
  if (!no_fit) return;
  const auto g = static_cast<std::size_t>(group);
  if (!attempt_seen_[g] || severity(reason) < severity(attempt_min_[g])) {
    attempt_seen_[g] = 1;
    attempt_min_[g] = reason;
  }
}

// Per resource group the least severe reason among its NoFit flavors (they are
// alternatives); the groups are co-requisites: the most severe of those, with
// the pod set's own status reason. Nothing tried at all: NoMatchingFlavor.
PendingReason FlavorAssigner::resolve_attempts() const noexcept {
  if (!attempted_any_) return NO_MATCHING_FLAVOR;
  PendingReason out = status_reason_;
  for (std::size_t g = 0; g < static_cast<std::size_t>(n_groups_); ++g) {
    if (attempt_seen_[g]) out = most_severe(out, attempt_min_[g]);
  }
  return out;
}




// fitsResourceQuota: (preemption mode, borrowing level) for `request` more on
// fr. The common case, a request that fits now, inline (a call per flavor and
// resource otherwise); available and lowest_subtree_that_fits are pure:
// computed only where their result is used.
inline GranularMode FlavorAssigner::fits_resource_quota(int fr, Amount assumed, Amount request) {
  ++v_.stats.quota_checks;
  last_no_fit_ = REASON_NONE;
  const Amount max_capacity = v_.tree.potential_available(cq_, fr);
  const Amount val = amount_add(assumed, request);
  Amount available = 0;
  if (val <= max_capacity) {
    available = v_.tree.available(cq_, fr);
    if (val <= available) return {PM_FIT, v_.tree.lowest_subtree_that_fits(cq_, fr, val).first};
  }
  return fits_resource_quota_slow(fr, assumed, request, val, max_capacity, available);
}

// fitsResourceQuota past its common case (fits_resource_quota, inline): the
// request exceeds the maximum capacity or (then `available` is set) what is available now.
GranularMode FlavorAssigner::fits_resource_quota_slow(int fr, Amount assumed, Amount request, Amount val,
                                                      Amount max_capacity, Amount available) {
  if (val > max_capacity) {
    add_reason(reason_header(RK_MAX_CAPACITY, static_cast<std::uint64_t>(fr)));
    v_.arena.reasons.push_back(static_cast<std::uint64_t>(assumed));
    v_.arena.reasons.push_back(static_cast<std::uint64_t>(request));
    v_.arena.reasons.push_back(static_cast<std::uint64_t>(max_capacity));
    last_no_fit_ = EXCEEDS_MAX_QUOTA;
    return {PM_NO_FIT, 0};
  }
  add_reason(reason_header(RK_UNUSED, static_cast<std::uint64_t>(fr)));
  v_.arena.reasons.push_back(static_cast<std::uint64_t>(amount_sub(val, available)));
  GranularMode m{PM_NO_FIT, 0};
  if (v_.tree.nominal(cq_, fr) >= val) {
    m = v_.engine.oracle(wid_, cq_, fr, val);
  } else {
    auto [borrow, may_reclaim_in_hierarchy] = v_.tree.lowest_subtree_that_fits(cq_, fr, val);
    m.borrow = borrow;
    if (may_reclaim_in_hierarchy || can_preempt_while_borrowing()) m = v_.engine.oracle(wid_, cq_, fr, val);
  }
  if (m.pm == PM_NO_FIT) last_no_fit_ = WAITING_FOR_QUOTA;
  return m;
}

int FlavorAssigner::next_flavor(int ps_index, int group) const noexcept {
  if (!v_.w.ls_valid[wid_]) return 0;  // (use_last_ is checked by the caller)
  std::uint32_t off = v_.w.ls_off[wid_];
  std::int16_t idx = v_.w.ls_pool[off + static_cast<std::uint32_t>(ps_index * n_groups_ + group)];
  return idx == TRIED_ABSENT ? 0 : idx + 1;
}

// findFlavorForPodSets for the resource group of `resource`. Fills best_ and
// appends reasons to the arena; false when no flavor is usable.
bool FlavorAssigner::find_flavor(int ps_index, const PodSetRec& psa, int resource, int g, std::int16_t& tried) {
  const ResourceGroupSpec& group = spec_->groups[g];
  const int gps = static_cast<int>(v_.w.pod_sets_of[wid_].first) + ps_index;
  const int cls = v_.w.pod_sets[gps].flavor_class;
  const std::uint32_t rs_start = static_cast<std::uint32_t>(v_.arena.reasons.size());
  const std::uint32_t rc_start = reason_count_;
  // group_requests: the pod set's requests covered by this group, resource order.
  group_reqs_.clear();
  {
    const ResourceAmount* reqs = v_.arena.requests.data() + psa.req_first;
    for (std::uint32_t k = 0; k < psa.req_n; ++k) {
      if (v_.topo.group_of(cq_, reqs[k].resource) == g) group_reqs_.push_back(reqs[k]);
    }
  }
  best_.clear();
  bool have_best = false;
  GranularMode best_mode{PM_NO_FIT, BORROW_UNLIMITED};
  int attempted = -1;
  const int n_flavors = static_cast<int>(group.flavors.size());
  const bool fungibility = v_.topo.gates().flavor_fungibility;
  int start = use_last_ && fungibility ? next_flavor(ps_index, g) : 0;
  for (int idx = start; idx < n_flavors; ++idx) {
    attempted = idx;
    int flavor = group.flavors[idx];
    if (nomination_ != nullptr) {
      std::int32_t pinned = static_cast<std::size_t>(ps_index) < nomination_ps_
                                ? nomination_[static_cast<std::size_t>(ps_index * n_groups_ + g)]
                                : -1;
      if (pinned != flavor) {
        add_reason(reason_header(RK_NOMINATION, static_cast<std::uint64_t>(flavor), static_cast<std::uint64_t>(resource)));
        continue;
      }
    }
    std::int32_t rejection = v_.topo.rejection(cls, flavor);
    if (rejection >= 0) {
      add_reason(reason_header(RK_REJECTION, static_cast<std::uint64_t>(rejection)));
      add_attempt(g, true, NO_MATCHING_FLAVOR);
      continue;
    }
    cur_.clear();
    GranularMode mode{PM_FIT, 0};
    PendingReason flavor_reason = REASON_NONE;
    for (const ResourceAmount& rq : group_reqs_) {
      const int r = rq.resource;
      const int fr = v_.topo.fr_id(flavor, r);
      GranularMode m = fits_resource_quota(fr, assumed_[fr], rq.amount);
      flavor_reason = most_severe(flavor_reason, last_no_fit_);
      if (is_preferred(mode, m)) mode = m;  // the representative mode is the worst one
      if (mode.pm == PM_NO_FIT) continue;
      cur_.push_back({r, flavor, fr, mode_of(m.pm), m.borrow});
    }
    add_attempt(g, mode.pm == PM_NO_FIT, flavor_reason);
    if (!fungibility) {
      // FlavorFungibility off: the first flavor that fits wins; otherwise the
      // best preemption mode, the earliest flavor on ties.
      if (mode.pm > best_mode.pm) {
        best_.swap(cur_);
        best_mode = mode;
        have_best = true;
        if (mode.pm == PM_FIT) {
          tried = -1;  // returned before any tried index is set
          v_.arena.reasons.resize(rs_start);
          reason_count_ = rc_start;
          return true;
        }
      }
      continue;
    }
    if (!should_try_next_flavor(mode)) {
      best_.swap(cur_);
      best_mode = mode;
      have_best = true;
      break;
    }
    if (is_preferred(mode, best_mode)) {
      best_.swap(cur_);
      best_mode = mode;
      have_best = true;
    }
  }
  if (!fungibility) {
    tried = 0;  // no scan record then: every tried index stays 0, Kueue's zero value
    return have_best;
  }
  tried = static_cast<std::int16_t>(attempted == n_flavors - 1 ? -1 : attempted);
  if (best_mode.pm == PM_FIT) {
    v_.arena.reasons.resize(rs_start);
    reason_count_ = rc_start;
  }
  return have_best;
}

int FlavorAssigner::assign(int wid, int cq, bool use_last, const std::int32_t* nomination,
                           std::size_t nomination_ps, const std::int32_t* counts) {
  ++v_.stats.assignments;
  wid_ = wid;
  cq_ = cq;
  spec_ = &v_.topo.cq(cq);
  n_groups_ = v_.topo.n_groups(cq);
  use_last_ = use_last;
  nomination_ = nomination;
  nomination_ps_ = nomination_ps;
  AssignmentArena& ar = v_.arena;
  const WorkloadStore& w = v_.w;

  for (std::int32_t fr : assumed_keys_) {
    assumed_[fr] = 0;
    assumed_seen_[fr] = 0;
  }
  assumed_keys_.clear();
  // Per resource group scratch, reset per pod set below (a ClusterQueue has
  // few groups: plain loops, not vector::assign's out-of-line fill).
  const auto n_groups = static_cast<std::size_t>(n_groups_);
  if (group_done_.size() < n_groups) {
    group_done_.resize(n_groups);
    attempt_seen_.resize(n_groups);
    attempt_min_.resize(n_groups);
  }

  AssignmentRec a;
  a.wid = wid;
  a.cq = cq;
  a.ps_first = static_cast<std::uint32_t>(ar.pod_sets.size());
  const int pods = v_.topo.covers_pods(cq) ? v_.topo.pods_rid() : -1;
  const std::uint32_t n_ps = w.pod_sets_of[wid].n;
  Mode worst = FIT;
  for (std::uint32_t i = 0; i < n_ps; ++i) {
    const std::uint32_t gps = w.pod_sets_of[wid].first + i;
    const PodSetRow& row = w.pod_sets[gps];
    const std::int32_t count = counts != nullptr ? counts[i] : row.count;
    PodSetRec psa;
    psa.count = count;
    // requests = {r: v * count}, plus pods = count when the ClusterQueue covers pods.
    psa.req_first = static_cast<std::uint32_t>(ar.requests.size());
    {
      bool pods_done = pods < 0;
      const RequestRow* rq = w.requests.data() + row.requests.first;
      for (std::uint32_t k = 0; k < row.requests.n; ++k) {
        int r = rq[k].resource;
        if (!pods_done && pods <= r) {
          if (pods < r) ar.requests.push_back({pods, count});
          pods_done = true;
          if (pods == r) {
            ar.requests.push_back({pods, count});
            continue;
          }
        }
        ar.requests.push_back({r, sat_mul(rq[k].amount, count)});
      }
      if (!pods_done) ar.requests.push_back({pods, count});
    }
    psa.req_n = static_cast<std::uint32_t>(ar.requests.size()) - psa.req_first;
    psa.fl_first = static_cast<std::uint32_t>(ar.flavors.size());
    psa.rs_first = static_cast<std::uint32_t>(ar.reasons.size());
    psa.tried_first = static_cast<std::uint32_t>(ar.tried.size());
    for (std::size_t g = 0; g < n_groups; ++g) {
      ar.tried.push_back(TRIED_ABSENT);
      group_done_[g] = 0;
      attempt_seen_[g] = 0;
      attempt_min_[g] = REASON_NONE;
    }
    attempted_any_ = false;
    status_reason_ = REASON_NONE;
    reason_count_ = 0;
    bool failed = false;
    // The requests in visit order: an insertion sort (a pod set has a few).
    visit_.clear();
    for (std::uint32_t k = 0; k < psa.req_n; ++k) {
      const std::int32_t rank = visit_rank_[static_cast<std::size_t>(ar.requests[psa.req_first + k].resource)];
      std::size_t at = visit_.size();
      visit_.push_back(k);
      for (; at > 0 && visit_rank_[static_cast<std::size_t>(ar.requests[psa.req_first + visit_[at - 1]].resource)] > rank;
           --at) {
        visit_[at] = visit_[at - 1];
      }
      visit_[at] = k;
    }
    for (std::uint32_t k : visit_) {
      const ResourceAmount req = ar.requests[psa.req_first + k];
      int g = v_.topo.group_of(cq, req.resource);
      if (g < 0 && req.amount == 0) continue;  // zero request of an uncovered resource: ignored
      if (g >= 0 && group_done_[g]) continue;
      const std::uint32_t rs_start = static_cast<std::uint32_t>(ar.reasons.size());
      const std::uint32_t rc_start = reason_count_;
      std::int16_t tried = -1;
      bool ok;
      if (g < 0) {
        add_reason(reason_header(RK_UNAVAILABLE, static_cast<std::uint64_t>(req.resource)));
        status_reason_ = NO_MATCHING_FLAVOR;
        ok = false;
      } else {
        ok = find_flavor(static_cast<int>(i), psa, req.resource, g, tried);
      }
      if (!ok) {
        // reasons = rs: only the failing group's reasons are kept.
        ar.reasons.erase(ar.reasons.begin() + psa.rs_first, ar.reasons.begin() + rs_start);
        reason_count_ -= rc_start;
        failed = true;
        break;
      }
      ar.flavors.insert(ar.flavors.end(), best_.begin(), best_.end());
      group_done_[g] = 1;
      ar.tried[psa.tried_first + static_cast<std::uint32_t>(g)] = tried;
    }
    if (failed) {
      ar.flavors.resize(psa.fl_first);  // psa.flavors = {}
      std::fill(ar.tried.begin() + psa.tried_first, ar.tried.end(), TRIED_ABSENT);
    }
    psa.fl_n = static_cast<std::uint32_t>(ar.flavors.size()) - psa.fl_first;
    psa.rs_words = static_cast<std::uint32_t>(ar.reasons.size()) - psa.rs_first;
    psa.rs_n = reason_count_;
    // PodSetAssignment.mode()
    if (psa.rs_n == 0) {
      psa.mode = FIT;
    } else if (psa.fl_n == 0) {
      psa.mode = NO_FIT;
    } else {
      Mode m = FIT;
      for (std::uint32_t k = 0; k < psa.fl_n; ++k) m = std::min(m, ar.flavors[psa.fl_first + k].mode);
      psa.mode = m;
    }
    if (psa.mode == NO_FIT) psa.no_fit_reason = resolve_attempts();
    if (v_.tas != nullptr) [[unlikely]] tas_pod_set_record();
    worst = std::min(worst, psa.mode);
    // Assignment.append
    for (std::uint32_t k = 0; k < psa.fl_n; ++k) {
      const FlavorRec& fa = ar.flavors[psa.fl_first + k];
      a.borrowing = std::max(a.borrowing, fa.borrow);
      Amount req = 0;
      for (std::uint32_t q = 0; q < psa.req_n; ++q) {
        if (ar.requests[psa.req_first + q].resource == fa.resource) {
          req = ar.requests[psa.req_first + q].amount;
          break;
        }
      }
      if (!assumed_seen_[fa.fr]) {
        assumed_seen_[fa.fr] = 1;
        assumed_keys_.push_back(fa.fr);
      }
      assumed_[fa.fr] = amount_add(assumed_[fa.fr], req);
    }
    ar.pod_sets.push_back(psa);
    ++a.ps_n;
    if (failed) break;  // later pod sets are not assigned
  }
  a.mode = a.ps_n == 0 ? NO_FIT : worst;
  a.usage_first = static_cast<std::uint32_t>(ar.usage.size());
  for (std::int32_t fr : assumed_keys_) ar.usage.push_back({fr, assumed_[fr]});
  a.usage_n = static_cast<std::uint32_t>(assumed_keys_.size());
  ar.assignments.push_back(a);
  const int index = static_cast<int>(ar.assignments.size() - 1);
  if (v_.tas != nullptr) [[unlikely]] tas_assignment(index);
  return index;
}

// The TAS record of the pod set just assigned: the flavors it tried, to mark
// a TAS flavor TopologyPlacementFailed later (out of the hot loop: TAS only).
[[gnu::noinline]] void FlavorAssigner::tas_pod_set_record() {
  AssignmentArena& ar = v_.arena;
  PodSetTas& pt = ar.tas_pod_sets.emplace_back();
  pt.attempt_first = static_cast<std::uint32_t>(ar.attempt_min.size());
  ar.attempt_min.insert(ar.attempt_min.end(), attempt_min_.begin(), attempt_min_.begin() + n_groups_);
  ar.attempt_seen.insert(ar.attempt_seen.end(), attempt_seen_.begin(), attempt_seen_.begin() + n_groups_);
  pt.status_reason = status_reason_;
  pt.attempted_any = attempted_any_;
}

// The assignment's TAS record, and its placement when a pod set asks for TAS.
[[gnu::noinline]] void FlavorAssigner::tas_assignment(int index) {
  AssignmentArena& ar = v_.arena;
  ar.tas_assignments.emplace_back();
  const AssignmentRec& a = ar.assignments[index];
  if (a.mode == NO_FIT) return;
  const std::uint32_t first = v_.w.pod_sets_of[a.wid].first, n_ps = v_.w.pod_sets_of[a.wid].n;
  bool any = false;
  for (std::uint32_t i = 0; i < n_ps && !any; ++i) any = v_.tas->asks(static_cast<int>(first + i));
  if (any) assign_topology(index);
}

// --- Topology Aware Scheduling ------------------------------------------------------------------

namespace {

// PodSetAssignment.mode() (a Status error: NoFit).
Mode pod_set_mode(const PodSetRec& ps, const PodSetTas& pt, const AssignmentArena& ar) noexcept {
  if (pt.error) return NO_FIT;
  if (ps.rs_n == 0 && pt.rs2_words == 0) return FIT;
  if (ps.fl_n == 0) return NO_FIT;
  Mode m = FIT;
  for (std::uint32_t k = 0; k < ps.fl_n; ++k) m = std::min(m, ar.flavors[ps.fl_first + k].mode);
  return m;
}

// kueue PodSetAssignment.updateMode: every flavor of the pod set.
void set_pod_set_mode(std::uint32_t i, AssignmentArena& ar, Mode mode) noexcept {
  PodSetRec& ps = ar.pod_sets[i];
  for (std::uint32_t k = 0; k < ps.fl_n; ++k) ar.flavors[ps.fl_first + k].mode = mode;
  ps.mode = pod_set_mode(ps, ar.tas_pod_sets[i], ar);
}

}  // namespace

void tas_asks(const TasState& tas, const WorkloadStore& w, const AssignmentArena& arena, int assignment,
              std::vector<TasAsk>& asks, std::vector<std::pair<std::int32_t, std::vector<std::int32_t>>>* errors) {
  asks.clear();
  if (errors != nullptr) errors->clear();
  const AssignmentRec& a = arena.assignments[assignment];
  std::vector<std::int32_t> found;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena.pod_sets[a.ps_first + i];
    const PodSetTas& pt = arena.tas_pod_sets[a.ps_first + i];
    const auto row = static_cast<std::int32_t>(w.pod_sets_of[a.wid].first + i);
    if (!tas.asks(row) || pt.error || ps.count == 0 || pt.tas_flavor >= 0) continue;
    found.clear();
    for (std::uint32_t k = 0; k < ps.fl_n; ++k) {
      const std::int32_t f = tas.spec().flavor_of[arena.flavors[ps.fl_first + k].flavor];
      if (f >= 0 && std::find(found.begin(), found.end(), f) == found.end()) found.push_back(f);
    }
    if (found.size() != 1) {  // onlyTASFlavor: none, or more than one
      if (errors != nullptr) {
        std::sort(found.begin(), found.end());
        errors->emplace_back(static_cast<std::int32_t>(i), found);
      }
      continue;
    }
    asks.push_back({static_cast<std::int32_t>(i), ps.count, row, w.pod_sets[row].flavor_class, found[0]});
  }
  std::stable_sort(asks.begin(), asks.end(), [](const TasAsk& x, const TasAsk& y) { return x.flavor < y.flavor; });
}

void update_for_tas_result(const TasState& tas, AssignmentArena& ar, int assignment, const std::vector<TasAsk>& asks) {
  const AssignmentRec& a = ar.assignments[assignment];
  for (std::size_t k = 0; k < asks.size(); ++k) {
    PodSetTas& ps = ar.tas_pod_sets[a.ps_first + asks[k].index];
    if (!tas.ask_placed(k)) {
      if (tas.failure().index == asks[k].index) ps.tas_flavor = -1;
      continue;
    }
    ps.tas_flavor = asks[k].flavor;
    ps.tas_first = static_cast<std::uint32_t>(ar.tas_leaves.size());
    for (std::size_t i = tas.placed_first(k); i < tas.placed_end(k); ++i) ar.tas_leaves.push_back(tas.placed(i));
    ps.tas_n = static_cast<std::uint32_t>(ar.tas_leaves.size()) - ps.tas_first;
  }
  // ComputeTASNetUsage (nothing admitted before)
  TasSpan& span = ar.tas_assignments[static_cast<std::size_t>(assignment)];
  span.first = static_cast<std::uint32_t>(ar.tas_uses.size());
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetTas& ps = ar.tas_pod_sets[a.ps_first + i];
    if (ps.tas_flavor < 0) continue;
    const TasFlavorSpec& fl = tas.spec().flavors[ps.tas_flavor];
    // the pod set's row: its index in the workload from the asks' rows
    std::int32_t row = -1;
    for (const TasAsk& ask : asks) {
      if (ask.index == static_cast<std::int32_t>(i)) row = ask.row;
    }
    for (std::uint32_t k = 0; k < ps.tas_n; ++k) {
      const auto [leaf, pods] = ar.tas_leaves[ps.tas_first + k];
      ar.tas_uses.push_back({ps.tas_flavor, leaf, fl.hostname_lowest ? fl.leaf_host[leaf] : -1, pods, row});
    }
    // a placement of no pods (fewer pods than a slice): still the pod set's
    // (empty) topology assignment; charges nothing
    if (ps.tas_n == 0) ar.tas_uses.push_back({ps.tas_flavor, -1, -1, 0, row});
  }
  span.n = static_cast<std::uint32_t>(ar.tas_uses.size()) - span.first;
}

void FlavorAssigner::recompute_mode(AssignmentRec& a) noexcept {
  Mode worst = FIT;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) worst = std::min(worst, v_.arena.pod_sets[a.ps_first + i].mode);
  a.mode = a.ps_n == 0 ? NO_FIT : worst;
}

// Quota first, then the topology: with every pod set fitting quota, a pod
// set that cannot be placed needs preemption (Preempt, Kueue's reason added);
// whenever preemption is needed, a placement on the empty topology must
// exist, or the pod set does not fit at all (NoFit, TopologyPlacementFailed).
void FlavorAssigner::assign_topology(int index) {
  TasState& tas = *v_.tas;
  AssignmentArena& ar = v_.arena;
  tas_asks(tas, v_.w, ar, index, asks_, &tas_errors_);
  const std::uint32_t ps_first = ar.assignments[index].ps_first;
  for (auto& [i, flavors] : tas_errors_) {  // psError
    PodSetTas& pt = ar.tas_pod_sets[ps_first + static_cast<std::uint32_t>(i)];
    pt.rs2_first = static_cast<std::uint32_t>(ar.reasons.size());
    ar.reasons.push_back(reason_header(RK_TAS_ERROR, 0, flavors.size()));
    for (std::int32_t f : flavors) ar.reasons.push_back(static_cast<std::uint64_t>(f));
    pt.rs2_words = static_cast<std::uint32_t>(ar.reasons.size()) - pt.rs2_first;
    pt.error = true;
    ar.pod_sets[ps_first + static_cast<std::uint32_t>(i)].mode = NO_FIT;
  }
  recompute_mode(ar.assignments[index]);
  if (ar.assignments[index].mode == FIT) {
    if (!tas.find_for_workload(asks_, false)) {
      const TasFailure& fail = tas.failure();
      const std::uint32_t at = ps_first + static_cast<std::uint32_t>(fail.index);
      PodSetTas& pt = ar.tas_pod_sets[at];
      pt.rs2_first = static_cast<std::uint32_t>(ar.reasons.size());
      ar.reasons.insert(ar.reasons.end(), fail.words.begin(), fail.words.end());
      pt.rs2_words = static_cast<std::uint32_t>(fail.words.size());
      set_pod_set_mode(at, ar, PREEMPT);
    } else {
      update_for_tas_result(tas, ar, index, asks_);
    }
    recompute_mode(ar.assignments[index]);
  }
  if (ar.assignments[index].mode == PREEMPT) {
    if (!tas.find_for_workload(asks_, true)) {
      const TasFailure& fail = tas.failure();
      const std::uint32_t psi = ps_first + static_cast<std::uint32_t>(fail.index);
      PodSetTas& ps = ar.tas_pod_sets[psi];
      // markFlavorAttempt(flavor, NoFit, TopologyPlacementFailed), in the TAS flavor's group
      const std::int32_t flavor = tas.spec().flavors[fail.flavor].flavor;
      for (int g = 0; g < n_groups_; ++g) {
        const auto& fl = spec_->groups[g].flavors;
        if (std::find(fl.begin(), fl.end(), flavor) == fl.end()) continue;
        const std::uint32_t at = ps.attempt_first + static_cast<std::uint32_t>(g);
        if (!ar.attempt_seen[at] || severity(TOPOLOGY_PLACEMENT_FAILED) < severity(ar.attempt_min[at])) {
          ar.attempt_seen[at] = 1;
          ar.attempt_min[at] = TOPOLOGY_PLACEMENT_FAILED;
        }
        ps.attempted_any = true;
        break;
      }
      set_pod_set_mode(psi, ar, NO_FIT);
      // resolveNoFitReason for the pod set again
      PendingReason out = ps.attempted_any ? ps.status_reason : NO_MATCHING_FLAVOR;
      if (ps.attempted_any) {
        for (int g = 0; g < n_groups_; ++g) {
          const std::uint32_t at = ps.attempt_first + static_cast<std::uint32_t>(g);
          if (ar.attempt_seen[at]) out = most_severe(out, ar.attempt_min[at]);
        }
      }
      ar.pod_sets[psi].no_fit_reason = out;
    } else {
      for (const TasAsk& ask : asks_) set_pod_set_mode(ps_first + static_cast<std::uint32_t>(ask.index), ar, PREEMPT);
    }
    recompute_mode(ar.assignments[index]);
  }
}

}  // namespace kueue_fast
