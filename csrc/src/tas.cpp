// Same algorithm as kueue_fast/engine/reference/tas.py (kueue
// pkg/cache/scheduler/tas_flavor_snapshot.go): see tas.hpp.
#include <kueue_fast/tas.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

#include <kueue_fast/flavor_assigner.hpp>

namespace kueue_fast {

namespace {

constexpr std::int64_t INT32_MAX_COUNT = std::numeric_limits<std::int32_t>::max();

// kueue resources CountInWithLimitingResource: how many times the requests
// (-1: not asked; 0 does not limit) fit the capacity (negative: 0 fits), and
// the limiting resource (the lowest id giving the minimum; -1: nothing asked).
// How many times `want` (> 0) fits `cap`: the common answers (a full node, a
// node with room for one) without a division, the placement's hot loop.
inline std::int64_t times_in(Amount cap, Amount want) noexcept {
  if (cap < want) return 0;
  if (cap - want < want) return 1;
  return std::min<std::int64_t>(cap / want, INT32_MAX_COUNT);
}

// The capacity of a leaf is free[r] - used[r] (used: null on empty nodes) -
// assumed[r] (null: nothing assumed); requests as count_in's.
inline std::pair<std::int64_t, int> count_in_leaf(const Amount* requests, const Amount* free, const Amount* used,
                                                  const Amount* assumed, int n) noexcept {
  std::int64_t best = -1;
  int best_r = -1;
  for (int r = 0; r < n; ++r) {
    const Amount want = requests[r];
    if (want < 0) continue;
    std::int64_t fit = INT32_MAX_COUNT;
    if (want != 0) {
      Amount cap = free[r];
      if (used != nullptr) cap -= used[r];
      if (assumed != nullptr) cap -= assumed[r];
      fit = times_in(cap, want);
    }
    if (best < 0 || fit < best) {
      best = fit;
      best_r = r;
      if (fit == 0) break;  // nothing lower; ties keep the lowest id
    }
  }
  return best < 0 ? std::pair<std::int64_t, int>{0, -1} : std::pair<std::int64_t, int>{best, best_r};
}

std::pair<std::int64_t, int> count_in(const Amount* requests, const Amount* capacity, int n) noexcept {
  return count_in_leaf(requests, capacity, nullptr, nullptr, n);
}

}  // namespace

TasState::TasState(TasSpec spec) : spec_(std::move(spec)) {
  n_res_ = static_cast<int>(spec_.resources.size());
  if (spec_.pods < 0 || spec_.pods >= n_res_) throw std::invalid_argument("tas: pods is not a TAS resource");
  for (const TasFlavorSpec& f : spec_.flavors) {
    const auto nd = static_cast<std::size_t>(f.n_domains());
    if (f.level_start.size() != f.levels.size() + 1) throw std::invalid_argument("tas: level_start size");
    if (f.child_lo.size() != nd || f.child_hi.size() != nd) throw std::invalid_argument("tas: children size");
    if (f.free.size() != static_cast<std::size_t>(f.n_leaves()) * static_cast<std::size_t>(n_res_)) {
      throw std::invalid_argument("tas: free capacity size");
    }
    if (f.leaf_host.size() != static_cast<std::size_t>(f.n_leaves())) throw std::invalid_argument("tas: leaf_host size");
    for (std::int32_t h : f.leaf_host) {
      if (h < -1 || h >= spec_.n_hosts || (f.hostname_lowest && h < 0)) throw std::invalid_argument("tas: leaf_host id");
    }
  }
  host_usage_.assign(static_cast<std::size_t>(spec_.n_hosts) * static_cast<std::size_t>(n_res_), 0);
  for (const TasFlavorSpec& f : spec_.flavors) {
    const std::size_t cells = static_cast<std::size_t>(f.n_leaves()) * static_cast<std::size_t>(n_res_);
    cache_.emplace_back(f.hostname_lowest ? 0 : cells, 0);
    work_.emplace_back(cells, 0);
  }
  rem_.resize(static_cast<std::size_t>(n_res_));
  request_with_pod_.resize(static_cast<std::size_t>(n_res_));
  res_excluded_.resize(static_cast<std::size_t>(n_res_));
}

void TasState::add_class(std::vector<TasClassFlavor> per_flavor) {
  if (per_flavor.size() != spec_.flavors.size()) throw std::invalid_argument("tas class: one entry per TAS flavor");
  for (std::size_t f = 0; f < per_flavor.size(); ++f) {
    const auto& e = per_flavor[f].eligible;
    if (!e.empty() && e.size() != static_cast<std::size_t>(spec_.flavors[f].n_leaves())) {
      throw std::invalid_argument("tas class: eligible leaves size");
    }
  }
  classes_.push_back(std::move(per_flavor));
}

void TasState::set_pod_set(int row, bool has, const TasRequest& req, const std::vector<Amount>& amounts) {
  const auto r = static_cast<std::size_t>(row);
  if (has_.size() <= r) {
    has_.resize(r + 1, 0);
    req_.resize(r + 1);
    amount_off_.resize(r + 1, NONE);
  }
  has_[r] = has ? 1 : 0;
  req_[r] = req;
  if (!amounts.empty()) {
    if (amounts.size() != static_cast<std::size_t>(n_res_)) throw std::invalid_argument("tas: pod set requests size");
    amount_off_[r] = static_cast<std::uint32_t>(amounts_.size());
    amounts_.insert(amounts_.end(), amounts.begin(), amounts.end());
  } else {
    amount_off_[r] = NONE;
  }
}

// --- usage ----------------------------------------------------------------------------------------

// dst += sign * (requests x count, plus pods: count) (kueue updateTASUsage).
void TasState::add_vec(Amount* dst, const Amount* requests, std::int64_t count, int sign) const noexcept {
  for (int r = 0; r < n_res_; ++r) {
    if (requests != nullptr && requests[r] > 0) dst[r] += sign * sat_mul(requests[r], count);
  }
  dst[spec_.pods] += sign * count;
}

void TasState::charge(const TasUse* uses, std::size_t n, int sign) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const TasUse& u = uses[i];
    const Amount* req = amounts(u.row);
    if (u.host >= 0) {
      add_vec(row(host_usage_, u.host), req, u.count, sign);
    } else if (u.leaf >= 0) {
      add_vec(row(cache_[u.flavor], u.leaf), req, u.count, sign);
    }
    if (u.leaf >= 0) add_vec(row(work_[u.flavor], u.leaf), req, u.count, sign);
  }
  if (n > 0) dirty_ = true;
}

void TasState::snapshot(const TasUse* uses, std::size_t n, int sign) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const TasUse& u = uses[i];
    if (u.leaf >= 0) add_vec(row(work_[u.flavor], u.leaf), amounts(u.row), u.count, sign);
  }
}

void TasState::take_snapshot() noexcept {
  if (!dirty_) return;
  for (std::size_t f = 0; f < spec_.flavors.size(); ++f) {
    const TasFlavorSpec& fl = spec_.flavors[f];
    if (fl.hostname_lowest) {
      for (int leaf = 0; leaf < fl.n_leaves(); ++leaf) {
        std::copy_n(row(host_usage_, fl.leaf_host[leaf]), n_res_, row(work_[f], leaf));
      }
    } else {
      work_[f] = cache_[f];
    }
  }
  dirty_ = false;
}

bool TasState::fits(const TasUse* uses, std::size_t n) const noexcept {
  std::vector<Amount>& rem = const_cast<std::vector<Amount>&>(rem_);  // scratch
  for (std::size_t i = 0; i < n; ++i) {
    const TasUse& u = uses[i];
    if (u.count == 0) continue;  // an empty placement's marker (flavor_assigner.cpp)
    if (u.leaf < 0) return false;
    const TasFlavorSpec& fl = spec_.flavors[u.flavor];
    const Amount* free = row(fl.free, u.leaf);
    const Amount* used = row(work_[u.flavor], u.leaf);
    for (int r = 0; r < n_res_; ++r) rem[r] = free[r] - used[r];
    const Amount* req = amounts(u.row);
    // the per-pod requests without pods (ComputeTASNetUsage's SinglePodRequests)
    std::int64_t fit = 0;
    if (req != nullptr) {
      std::vector<Amount>& want = const_cast<std::vector<Amount>&>(request_with_pod_);
      std::copy_n(req, n_res_, want.data());
      want[spec_.pods] = -1;
      fit = count_in(want.data(), rem.data(), n_res_).first;
    }
    if (fit < u.count) return false;
  }
  return true;
}

const std::vector<TasUse>& TasState::uses(int wid) const noexcept {
  return static_cast<std::size_t>(wid) < uses_.size() ? uses_[wid] : no_uses_;
}

std::vector<TasUse>& TasState::uses_of(int wid) {
  if (uses_.size() <= static_cast<std::size_t>(wid)) uses_.resize(static_cast<std::size_t>(wid) + 1);
  return uses_[wid];
}

void TasState::set_placed_by_engine(int wid, bool on) {
  if (engine_placed_.size() <= static_cast<std::size_t>(wid)) engine_placed_.resize(static_cast<std::size_t>(wid) + 1, 0);
  engine_placed_[wid] = on ? 1 : 0;
}

// --- placement -------------------------------------------------------------------------------------

bool TasState::find_for_workload(const std::vector<TasAsk>& asks, bool simulate_empty) {
  failure_ = TasFailure{};
  placed_.clear();
  placed_off_.assign(asks.size() + 1, 0);
  ask_ok_.assign(asks.size(), 0);
  // usage assumed by the pod sets placed so far: by hostname across hostname
  // flavors (TASHandleOverlappingFlavors), per leaf within one flavor otherwise
  for (std::int32_t h : host_assumed_keys_) host_assumed_set_[h] = 0;
  host_assumed_keys_.clear();
  if (host_assumed_.size() != host_usage_.size()) {
    host_assumed_.assign(host_usage_.size(), 0);
    host_assumed_set_.assign(static_cast<std::size_t>(spec_.n_hosts), 0);
  }
  int flavor = -1;
  bool flavor_failed = false;
  TasFailure first;  // the first failure, flavor order then pod set order (the reference's)
  for (std::size_t k = 0; k < asks.size(); ++k) {
    const TasAsk& ask = asks[k];
    placed_off_[k] = placed_.size();
    if (ask.flavor != flavor) {
      flavor = ask.flavor;
      flavor_failed = false;
      for (std::int32_t l : leaf_assumed_keys_) leaf_assumed_set_[l] = 0;
      leaf_assumed_keys_.clear();
      const auto cells = static_cast<std::size_t>(spec_.flavors[flavor].n_leaves()) * static_cast<std::size_t>(n_res_);
      if (leaf_assumed_.size() < cells) {
        leaf_assumed_.resize(cells);
        leaf_assumed_set_.resize(static_cast<std::size_t>(spec_.flavors[flavor].n_leaves()), 0);
      }
    }
    if (flavor_failed) continue;  // FindTopologyAssignmentsForFlavor returned at its failure
    const std::size_t before = placed_.size();
    if (!find_for_pod_set(ask, simulate_empty)) {
      placed_.resize(before);
      flavor_failed = true;
      if (first.index < 0) first = failure_;
      continue;
    }
    ask_ok_[k] = 1;
    // addAssumedUsage
    const TasFlavorSpec& fl = spec_.flavors[flavor];
    const Amount* req = amounts(ask.row);
    for (std::size_t i = before; i < placed_.size(); ++i) {
      const auto [leaf, pods] = placed_[i];
      if (fl.hostname_lowest) {
        const std::int32_t h = fl.leaf_host[leaf];
        if (!host_assumed_set_[h]) {
          host_assumed_set_[h] = 1;
          host_assumed_keys_.push_back(h);
          std::fill_n(row(host_assumed_, h), n_res_, 0);
        }
        add_vec(row(host_assumed_, h), req, pods, +1);
      } else {
        if (!leaf_assumed_set_[leaf]) {
          leaf_assumed_set_[leaf] = 1;
          leaf_assumed_keys_.push_back(leaf);
          std::fill_n(row(leaf_assumed_, leaf), n_res_, 0);
        }
        add_vec(row(leaf_assumed_, leaf), req, pods, +1);
      }
    }
  }
  placed_off_[asks.size()] = placed_.size();
  failure_ = std::move(first);
  return failure_.index < 0;
}

// kueue fillInCounts / fillLeafCounts / fillInCountsHelper: per leaf the pods
// that fit its remaining capacity less what earlier pod sets assumed, rolled
// up; slices counted at the slice level and summed above it. Leaves the pod
// set may not use stay at 0.
void TasState::fill_in_counts(int f, const TasAsk& ask, const Amount* requests, bool simulate_empty, int slice_idx,
                              int slice_size) {
  const TasFlavorSpec& fl = spec_.flavors[f];
  const int n_levels = fl.n_levels(), nd = fl.n_domains(), first = fl.first_leaf();
  pods_.assign(static_cast<std::size_t>(nd), 0);
  slices_.assign(static_cast<std::size_t>(nd), 0);
  std::fill(res_excluded_.begin(), res_excluded_.end(), 0);
  const TasClassFlavor& cls = classes_[ask.cls][f];
  const std::uint8_t* eligible = cls.eligible.empty() ? nullptr : cls.eligible.data();
  const std::vector<Amount>& work = work_[f];
  for (int leaf = 0; leaf < fl.n_leaves(); ++leaf) {
    if (eligible != nullptr && !eligible[leaf]) continue;
    const Amount* assumed = nullptr;
    if (fl.hostname_lowest) {
      const std::int32_t h = fl.leaf_host[leaf];
      if (host_assumed_set_[h]) assumed = row(host_assumed_, h);
    } else if (leaf_assumed_set_[leaf]) {
      assumed = row(leaf_assumed_, leaf);
    }
    const auto [fit, limiting] = count_in_leaf(requests, row(fl.free, leaf), simulate_empty ? nullptr : row(work, leaf),
                                               assumed, n_res_);
    pods_[first + leaf] = fit;
    if (fit == 0 && limiting >= 0) ++res_excluded_[limiting];
  }
  if (n_levels - 1 == slice_idx) {
    for (int d = first; d < nd; ++d) slices_[d] = pods_[d] / slice_size;
  }
  for (int level = n_levels - 2; level >= 0; --level) {
    for (int d = fl.level_start[level]; d < fl.level_start[level + 1]; ++d) {
      std::int64_t p = 0, s = 0;
      for (int c = fl.child_lo[d]; c < fl.child_hi[d]; ++c) {
        p += pods_[c];
        s += slices_[c];
      }
      pods_[d] = p;
      slices_[d] = level == slice_idx ? p / slice_size : s;
    }
  }
}

// kueue sortedDomains (sortedDomainsWithLeader without leaders): BestFit by
// slices descending, LeastFreeCapacity (unconstrained) ascending; then pods
// ascending, then level values (the id).
void TasState::sort_domains(std::vector<std::int32_t>& d, bool unconstrained) const {
  const auto& s = slices_;
  const auto& p = pods_;
  if (unconstrained) {
    std::sort(d.begin(), d.end(), [&](std::int32_t a, std::int32_t b) {
      if (s[a] != s[b]) return s[a] < s[b];
      if (p[a] != p[b]) return p[a] < p[b];
      return a < b;
    });
  } else {
    std::sort(d.begin(), d.end(), [&](std::int32_t a, std::int32_t b) {
      if (s[a] != s[b]) return s[a] > s[b];
      if (p[a] != p[b]) return p[a] < p[b];
      return a < b;
    });
  }
}

// kueue findBestFitDomainBy: the first domain with the smallest count still
// >= needed; the first one when none is.
std::int32_t TasState::best_fit(const std::int32_t* first, const std::int32_t* last, std::int64_t needed,
                                const std::vector<std::int64_t>& counts) const noexcept {
  std::int32_t best = *first;
  std::int64_t best_count = INT32_MAX_COUNT;
  for (const std::int32_t* it = first; it != last; ++it) {
    const std::int64_t c = counts[*it];
    if (c >= needed && c < best_count) {
      best = *it;
      best_count = c;
    }
  }
  return best;
}

void TasState::not_fit(const TasAsk& ask, std::int64_t fit, std::int64_t total, int slice_size) {
  auto& w = failure_.words;
  w.clear();
  w.push_back(0);  // header, below
  w.push_back(static_cast<std::uint64_t>(fit));
  w.push_back(static_cast<std::uint64_t>(total));
  w.push_back(static_cast<std::uint64_t>(slice_size));
  w.push_back(static_cast<std::uint64_t>(ask.cls));
  std::uint64_t pairs = 0;
  for (int r = 0; r < n_res_; ++r) pairs += res_excluded_[r] > 0 ? 1 : 0;
  w.push_back(pairs);
  for (int r = 0; r < n_res_; ++r) {
    if (res_excluded_[r] > 0) {
      w.push_back(static_cast<std::uint64_t>(r));
      w.push_back(static_cast<std::uint64_t>(res_excluded_[r]));
    }
  }
  w[0] = reason_header(RK_TAS_NOT_FIT, static_cast<std::uint64_t>(ask.flavor), w.size() - 1);
}

// kueue findLevelWithFitDomains: the domains at `level` (for a preferred
// request, or the closest level above) that take all the slices; the level,
// or -1 with the failure set.
int TasState::find_level(const TasFlavorSpec& fl, int level, const TasAsk& ask, int slice_size, bool required,
                         bool unconstrained, std::vector<std::int32_t>& out) {
  out.clear();
  const int lo = fl.level_start[level], hi = fl.level_start[level + 1];
  if (lo == hi) {
    failure_.words = {reason_header(RK_TAS_NO_DOMAINS, static_cast<std::uint64_t>(ask.flavor), 1),
                      static_cast<std::uint64_t>(level)};
    return -1;
  }
  std::vector<std::int32_t>& ordered = tmp_;
  ordered.clear();
  for (int d = lo; d < hi; ++d) ordered.push_back(d);
  sort_domains(ordered, unconstrained);
  std::int32_t top = ordered.front();
  const std::int64_t slice_count = ask.count / slice_size;
  if (!unconstrained && slices_[top] >= slice_count) {
    top = best_fit(ordered.data(), ordered.data() + ordered.size(), slice_count, slices_);
  }
  if (unconstrained) {  // LeastFreeCapacity: the first, least free, that takes them all
    for (std::int32_t d : ordered) {
      if (slices_[d] >= slice_count) {
        out.push_back(d);
        return level;
      }
    }
    if (required) {
      not_fit(ask, pods_[ordered.back()], slice_count, slice_size);
      return -1;
    }
  }
  if (slices_[top] < slice_count) {
    if (required) {
      not_fit(ask, slices_[top], slice_count, slice_size);
      return -1;
    }
    if (level > 0 && !unconstrained) return find_level(fl, level - 1, ask, slice_size, required, unconstrained, out);
    // greedily, at the top
    std::int64_t remaining = slice_count;
    for (std::size_t i = 0; i < ordered.size() && remaining > 0; ++i) {
      std::int32_t d = ordered[i];
      if (!unconstrained && slices_[d] >= remaining) {
        d = best_fit(ordered.data() + i, ordered.data() + ordered.size(), remaining, slices_);
      }
      out.push_back(d);
      remaining -= slices_[d];
    }
    if (remaining > 0) {
      not_fit(ask, slice_count - remaining, slice_count, slice_size);
      return -1;
    }
    return level;
  }
  out.push_back(top);
  return level;
}

// kueue updateCountsToMinimumGeneric (no leader): the domains in order until
// `count` pods (count / slice_size slices) are placed, the last one the best
// fit (BestFit); what each takes is set on it. Appends them to `out`; false
// (nothing appended) when they do not add up (Kueue logs it; not reached).
bool TasState::update_counts_to_minimum(std::vector<std::int32_t>& domains, std::int64_t count, int slice_size,
                                        bool unconstrained, bool by_slices, std::vector<std::int32_t>& out) {
  const std::size_t start = out.size();
  std::int64_t remaining = by_slices ? count / slice_size : count;
  std::vector<std::int64_t>& counts = by_slices ? slices_ : pods_;
  for (std::size_t i = 0; i < domains.size(); ++i) {
    std::int32_t d = domains[i];
    if (!unconstrained && counts[d] >= remaining) {
      d = best_fit(domains.data() + i, domains.data() + domains.size(), remaining, counts);
    }
    if (counts[d] >= remaining) {
      if (by_slices) {
        pods_[d] = remaining * slice_size;
        slices_[d] = remaining;
      } else {
        pods_[d] = remaining;
      }
      out.push_back(d);
      return true;
    }
    if (by_slices) pods_[d] = slices_[d] * slice_size;
    remaining -= counts[d];
    out.push_back(d);
  }
  out.resize(start);
  return false;
}

namespace {

int level_index(const TasFlavorSpec& fl, std::int32_t level) noexcept {
  if (level == TAS_LEVEL_HIGHEST) return 0;
  if (level == TAS_LEVEL_LOWEST) return fl.n_levels() - 1;
  if (level == TAS_LEVEL_NONE) return -1;
  for (int i = 0; i < fl.n_levels(); ++i) {
    if (fl.levels[i] == level) return i;
  }
  return -1;
}

}  // namespace

// kueue findTopologyAssignment for one pod set (no leader): appends its
// (leaf, pods) in level-values order to placed_; false with failure_ set.
bool TasState::find_for_pod_set(const TasAsk& ask, bool simulate_empty) {
  const int f = ask.flavor;
  const TasFlavorSpec& fl = spec_.flavors[f];
  const TasRequest& req = req_[ask.row];
  const int n_levels = fl.n_levels();
  const int level_idx = level_index(fl, req.level), slice_idx = level_index(fl, req.slice_level);
  auto fail_with = [&](std::vector<std::uint64_t> words) {
    failure_.index = ask.index;
    failure_.flavor = f;
    failure_.words = std::move(words);
    return false;
  };
  if (level_idx < 0 || slice_idx < 0) return fail_with({reason_header(RK_TAS_NO_LEVEL, 0, 0)});
  if (level_idx > slice_idx) {
    return fail_with({reason_header(RK_TAS_SLICE_ABOVE, static_cast<std::uint64_t>(f), 2),
                      static_cast<std::uint64_t>(slice_idx), static_cast<std::uint64_t>(level_idx)});
  }
  const bool unconstrained = req.unconstrained;
  const int slice_size = req.slice_size;
  const Amount* amounts_row = amounts(ask.row);
  for (int r = 0; r < n_res_; ++r) request_with_pod_[r] = amounts_row != nullptr ? amounts_row[r] : -1;
  request_with_pod_[spec_.pods] = 1;  // + OnePodRequest
  // phase 1
  fill_in_counts(f, ask, request_with_pod_.data(), simulate_empty, slice_idx, slice_size);
  // phase 2a
  const int fit_level = find_level(fl, level_idx, ask, slice_size, req.required, unconstrained, fit_);
  if (fit_level < 0) {
    failure_.index = ask.index;
    failure_.flavor = f;
    return false;
  }
  // phase 2b: down level by level, keeping the fewest domains
  next_.clear();
  update_counts_to_minimum(fit_, ask.count, slice_size, unconstrained, true, next_);
  std::swap(fit_, next_);
  int level = fit_level;
  for (; level < std::min(n_levels - 1, slice_idx); ++level) {  // above the slice level: slices, greedily
    lower_.clear();
    for (std::int32_t d : fit_) {
      for (int c = fl.child_lo[d]; c < fl.child_hi[d]; ++c) lower_.push_back(c);
    }
    sort_domains(lower_, unconstrained);
    next_.clear();
    update_counts_to_minimum(lower_, ask.count, slice_size, unconstrained, true, next_);
    std::swap(fit_, next_);
  }
  for (; level < n_levels - 1; ++level) {  // at and below the slice level: each domain's pods to its children
    next_.clear();
    for (std::int32_t d : fit_) {
      lower_.clear();
      for (int c = fl.child_lo[d]; c < fl.child_hi[d]; ++c) lower_.push_back(c);
      sort_domains(lower_, unconstrained);
      update_counts_to_minimum(lower_, pods_[d], 1, unconstrained, false, next_);
    }
    std::swap(fit_, next_);
  }
  // buildAssignment: leaves by level values (their ids), the empty ones left out
  std::sort(fit_.begin(), fit_.end());
  const int first = fl.first_leaf();
  for (std::int32_t d : fit_) {
    if (pods_[d] != 0) placed_.emplace_back(d - first, static_cast<std::int32_t>(pods_[d]));
  }
  return true;
}

// --- reasons --------------------------------------------------------------------------------------

void TasState::append_reason(std::string& out, const std::uint64_t* words) const {
  const std::uint64_t h = words[0];
  const int f = reason_a(h);
  switch (reason_kind(h)) {
    case RK_TAS_NOT_FIT: {
      const auto fit = static_cast<std::int64_t>(words[1]), total = static_cast<std::int64_t>(words[2]);
      const auto slice_size = static_cast<std::int64_t>(words[3]);
      const auto cls = static_cast<int>(words[4]);
      const auto pairs = static_cast<std::size_t>(words[5]);
      const char* unit = slice_size == 1 ? "pod" : "slice";
      out += "topology \"";
      out += spec_.flavors[f].topology;
      if (fit == 0) {
        out += "\" doesn't allow to fit any of " + std::to_string(total) + " " + unit + "(s)";
      } else {
        out += "\" allows to fit only " + std::to_string(fit) + " out of " + std::to_string(total) + " " + unit + "(s)";
      }
      const TasClassFlavor& c = classes_[cls][f];
      std::vector<std::string> reasons(c.static_reasons);
      for (std::size_t k = 0; k < pairs; ++k) {
        reasons.push_back("resource \"" + spec_.resources[words[6 + 2 * k]] + "\": " + std::to_string(words[7 + 2 * k]));
      }
      if (!reasons.empty()) {
        std::sort(reasons.begin(), reasons.end());
        out += ". Total nodes: " + std::to_string(c.total_nodes) + "; excluded: ";
        for (std::size_t k = 0; k < reasons.size(); ++k) {
          if (k > 0) out += ", ";
          out += reasons[k];
        }
      }
      return;
    }
    case RK_TAS_NO_DOMAINS:
      out += "no topology domains at level: ";
      out += spec_.level_names[spec_.flavors[f].levels[words[1]]];
      return;
    case RK_TAS_SLICE_ABOVE: {
      const auto& lv = spec_.flavors[f].levels;
      out += "podset slice topology " + spec_.level_names[lv[words[1]]] + " is above the podset topology " +
             spec_.level_names[lv[words[2]]];
      return;
    }
    case RK_TAS_NO_LEVEL:
      out += "topology level not specified";
      return;
    case RK_TAS_ERROR:
      if (reason_b(h) == 0) {
        out += "no TAS flavor assigned";
      } else {
        out += "more than one TAS flavor assigned: ";
        for (int k = 0; k < reason_b(h); ++k) {
          if (k > 0) out += ", ";
          out += spec_.flavors[words[1 + k]].name;
        }
      }
      return;
    default:
      return;
  }
}

}  // namespace kueue_fast
