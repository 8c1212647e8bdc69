// Same arithmetic as kueue_fast/engine/reference/quota.py (kueue
// pkg/cache/scheduler/resource_node.go).
#include <kueue_fast/quota_tree.hpp>

#include <algorithm>

namespace kueue_fast {

namespace {
// Kueue's Amount arithmetic (amount.hpp) for the quota tree's sums; with
// kSmall (nothing can reach 2^61: QuotaTree::may_saturate false) the plain
// int64 arithmetic it then equals. add_limit adds a borrowing limit, which
// may be Unlimited or huge either way.
template <bool kSmall>
struct QuotaArith {
  static Amount add(Amount a, Amount b) noexcept { return amount_add(a, b); }
  static Amount sub(Amount a, Amount b) noexcept { return amount_sub(a, b); }
  static Amount add_limit(Amount a, Amount b) noexcept { return amount_add(a, b); }
};
template <>
struct QuotaArith<true> {
  static Amount add(Amount a, Amount b) noexcept { return a + b; }
  static Amount sub(Amount a, Amount b) noexcept { return a - b; }
  static Amount add_limit(Amount a, Amount b) noexcept { return sat_add(a, b); }
};
}  // namespace

QuotaTree::QuotaTree(const Topology& topo)
    : n_nodes_(topo.n_nodes()), n_fr_(topo.n_fr()), n_cq_(topo.n_cq()) {
  const auto& spec = topo.spec();
  const std::size_t cells = static_cast<std::size_t>(n_nodes_) * static_cast<std::size_t>(n_fr_);
  parent_ = spec.node_parent;
  in_snapshot_.resize(static_cast<std::size_t>(n_nodes_));
  for (int n = 0; n < n_nodes_; ++n) in_snapshot_[n] = (n >= n_cq_ || spec.cluster_queues[n].active) ? 1 : 0;
  children_.assign(static_cast<std::size_t>(n_nodes_), {});
  for (int n = 0; n < n_nodes_; ++n) {
    if (parent_[n] >= 0) children_[parent_[n]].push_back(n);  // ascending ids: ClusterQueues first
  }
  root_.resize(static_cast<std::size_t>(n_nodes_));
  depth_.resize(static_cast<std::size_t>(n_nodes_));
  for (int n = 0; n < n_nodes_; ++n) {
    int r = n, d = 0;
    for (int p = parent_[n]; p >= 0; p = parent_[p]) {
      ancestors_.ids.push_back(p);
      r = p;
      ++d;
    }
    ancestors_.end_row();
    root_[n] = r;
    depth_[n] = d;
    for (int c : children_[n]) {
      if (c >= n_cq_) child_cohorts_.ids.push_back(c);
    }
    child_cohorts_.end_row();
    for (int c : children_[n]) {
      if (c < n_cq_ && in_snapshot_[c]) child_cqs_.ids.push_back(c);
    }
    child_cqs_.end_row();
  }
  // subtree_cqs: children before grandchildren, in child order (quota.py subtree_cqs).
  for (int n = 0; n < n_nodes_; ++n) {
    std::vector<std::int32_t> out;
    // Depth-first in child order, same as the recursive definition.
    struct Frame { int node; std::size_t next; };
    std::vector<Frame> frames{{n, 0}};
    while (!frames.empty()) {
      Frame& f = frames.back();
      if (is_cq(f.node)) {
        if (in_snapshot_[f.node]) out.push_back(f.node);
        frames.pop_back();
        continue;
      }
      if (f.next >= children_[f.node].size()) {
        frames.pop_back();
        continue;
      }
      int c = children_[f.node][f.next++];
      frames.push_back({c, 0});
    }
    subtree_cqs_.ids.insert(subtree_cqs_.ids.end(), out.begin(), out.end());
    subtree_cqs_.end_row();
  }

  cells_.assign(cells, Cell{0, 0, 0, NO_LIMIT});
  nominal_.assign(cells, 0);
  lending_limit_.assign(cells, NO_LIMIT);
  std::vector<std::uint8_t> has_quota(cells, 0);
  std::vector<std::vector<std::int32_t>> keys(static_cast<std::size_t>(n_nodes_));
  for (int n = 0; n < n_nodes_; ++n) {
    for (const auto& q : spec.quotas[n]) {
      std::size_t i = at(n, q.fr);
      nominal_[i] = q.nominal;
      cells_[i].borrowing_limit = q.borrowing_limit;
      lending_limit_[i] = q.lending_limit;
    }
  }
  std::vector<std::uint8_t> has_entry(cells, 0);
  for (int n = 0; n < n_nodes_; ++n) {
    if (parent_[n] < 0) accumulate_quota(n, topo, has_entry, keys);
  }
  for (int n = 0; n < n_nodes_; ++n) {
    subtree_frs_.ids.insert(subtree_frs_.ids.end(), keys[n].begin(), keys[n].end());
    subtree_frs_.end_row();
  }
  // Potential available, parents before children (ancestors are computed first
  // because we visit nodes by depth).
  potential_.assign(cells, 0);
  int max_depth = 0;
  for (int n = 0; n < n_nodes_; ++n) max_depth = depth_[n] > max_depth ? depth_[n] : max_depth;
  for (int d = 0; d <= max_depth; ++d) {
    for (int n = 0; n < n_nodes_; ++n) {
      if (depth_[n] != d) continue;
      int p = parent_[n];
      for (int fr = 0; fr < n_fr_; ++fr) {
        std::size_t i = at(n, fr);
        if (p < 0) {
          potential_[i] = cells_[i].subtree_quota;
          continue;
        }
        Amount avail = amount_add(cells_[i].local_quota, potential_[at(p, fr)]);
        if (cells_[i].borrowing_limit != NO_LIMIT) {
          avail = amount_min(amount_add(cells_[i].subtree_quota, cells_[i].borrowing_limit), avail);
        }
        potential_[i] = avail;
      }
    }
  }
  for (const Cell& c : cells_) huge_ = huge_ || huge(c.subtree_quota) || huge(c.local_quota);
  version_.assign(static_cast<std::size_t>(n_nodes_), 0);
  cache_usage_.assign(cells, 0);
  touched_.assign(static_cast<std::size_t>(n_nodes_), 0);
  touched_list_.reserve(static_cast<std::size_t>(n_nodes_));
  height_.assign(static_cast<std::size_t>(n_nodes_), 0);
  for (int n = n_cq_; n < n_nodes_; ++n) height_[n] = compute_height(n);
}

// Kueue updateCohortResourceNode / accumulateFromChild: a cohort's subtree
// quota has an entry (possibly 0) for every fr of its children.
void QuotaTree::accumulate_quota(int node, const Topology& topo, std::vector<std::uint8_t>& has_entry,
                                 std::vector<std::vector<std::int32_t>>& keys) {
  auto touch = [&](int fr) {
    std::size_t i = at(node, fr);
    if (!has_entry[i]) {
      has_entry[i] = 1;
      keys[node].push_back(fr);
    }
  };
  for (const auto& q : topo.spec().quotas[node]) {
    touch(q.fr);
    cells_[at(node, q.fr)].subtree_quota = q.nominal;
  }
  for (int c : children_[node]) {
    accumulate_quota(c, topo, has_entry, keys);
    for (int fr : keys[c]) {
      touch(fr);
      std::size_t i = at(node, fr);
      const Cell& child = cells_[at(c, fr)];
      cells_[i].subtree_quota = amount_add(cells_[i].subtree_quota, amount_sub(child.subtree_quota, child.local_quota));
    }
  }
  for (int fr : keys[node]) {
    std::size_t i = at(node, fr);
    Amount ll = lending_limit_[i];
    cells_[i].local_quota = ll == NO_LIMIT ? 0 : amount_max(0, amount_sub(cells_[i].subtree_quota, ll));
  }
}

int QuotaTree::compute_height(int node) const {
  std::size_t kids = child_cohorts(node).size() + child_cqs(node).size();
  int h = kids > 0 ? 1 : 0;
  for (int c : child_cohorts(node)) {
    int hc = compute_height(c) + 1;
    h = hc > h ? hc : h;
  }
  return h;
}

template <bool kCache>
void QuotaTree::add_usage_in(int node, int fr, Amount value) noexcept {
  bool big = false;
  for (;;) {
    std::size_t i = at(node, fr);
    Amount& usage = kCache ? cache_usage_[i] : cells_[i].usage;
    if (!kCache) {
      ++version_[node];
      touch(node);
    }
    Amount local_avail = amount_max(0, amount_sub(cells_[i].local_quota, usage));
    usage = amount_add(usage, value);
    big = big || huge(usage);
    int p = parent_[node];
    if (p < 0 || !(value > local_avail)) break;
    value = amount_sub(value, local_avail);
    node = p;
  }
  if (big) huge_ = true;
}

template <bool kCache>
void QuotaTree::remove_usage_in(int node, int fr, Amount value) noexcept {
  bool big = false;
  for (;;) {
    std::size_t i = at(node, fr);
    Amount& usage = kCache ? cache_usage_[i] : cells_[i].usage;
    if (!kCache) {
      ++version_[node];
      touch(node);
    }
    Amount stored_in_parent = amount_sub(usage, cells_[i].local_quota);
    usage = amount_sub(usage, value);
    big = big || huge(usage);
    int p = parent_[node];
    if (stored_in_parent <= 0 || p < 0) break;
    value = amount_min(value, stored_in_parent);
    node = p;
  }
  if (big) huge_ = true;
}

void QuotaTree::add_usage(int node, int fr, Amount value) noexcept { add_usage_in<false>(node, fr, value); }
void QuotaTree::remove_usage(int node, int fr, Amount value) noexcept { remove_usage_in<false>(node, fr, value); }

// add_usage_in<false> and add_usage_in<true> in one walk: both start at
// node and go up the same path, each stopping on its own (the snapshot's
// usage may differ from the cache's by this cycle's reservations).
void QuotaTree::commit_add_usage(int node, int fr, Amount value) noexcept {
  if (!huge_ && !huge(value)) {
    commit_add_usage_in<true>(node, fr, value);
  } else {
    commit_add_usage_in<false>(node, fr, value);
  }
}

// kSmall: every quota, usage and the value are below 2^61 in magnitude
// (may_saturate false), so Kueue's Amount arithmetic is plain int64
// arithmetic (QuotaArith): no Unlimited, no saturation, no checks.
template <bool kSmall>
void QuotaTree::commit_add_usage_in(int node, int fr, Amount value) noexcept {
  using A = QuotaArith<kSmall>;
  Amount in_snapshot = value, in_cache = value;
  bool snapshot_on = true, cache_on = true;
  bool big = false;
  for (;;) {
    const std::size_t i = at(node, fr);
    const Amount local_quota = cells_[i].local_quota;
    const int p = parent_[node];
    if (snapshot_on) {
      ++version_[node];
      touch(node);
      Amount& usage = cells_[i].usage;
      const Amount local_avail = std::max<Amount>(0, A::sub(local_quota, usage));
      usage = A::add(usage, in_snapshot);
      big = big || huge(usage);
      if (p < 0 || !(in_snapshot > local_avail)) {
        snapshot_on = false;
      } else {
        in_snapshot = A::sub(in_snapshot, local_avail);
      }
    }
    if (cache_on) {
      Amount& usage = cache_usage_[i];
      const Amount local_avail = std::max<Amount>(0, A::sub(local_quota, usage));
      usage = A::add(usage, in_cache);
      big = big || huge(usage);
      if (p < 0 || !(in_cache > local_avail)) {
        cache_on = false;
      } else {
        in_cache = A::sub(in_cache, local_avail);
      }
    }
    if (!snapshot_on && !cache_on) break;
    node = p;
  }
  if (big) huge_ = true;
}

void QuotaTree::commit_remove_usage(int node, int fr, Amount value) noexcept {
  remove_usage_in<false>(node, fr, value);
  remove_usage_in<true>(node, fr, value);
}

void QuotaTree::discard_snapshot() noexcept {
  const std::size_t n = touched_list_.size();
  for (std::size_t k = 0; k < n; ++k) {
    if (k + 4 < n) {  // the nodes in the order the cycle touched them: scattered rows
      prefetch_row(touched_list_[k + 4]);
      prefetch_cache_row(touched_list_[k + 4]);
    }
    const std::int32_t node = touched_list_[k];
    touched_[node] = 0;
    bool changed = false;
    for (int fr = 0; fr < n_fr_; ++fr) {
      const std::size_t i = at(node, fr);
      if (cells_[i].usage != cache_usage_[i]) {
        cells_[i].usage = cache_usage_[i];
        changed = true;
      }
    }
    if (changed) ++version_[node];
  }
  touched_list_.clear();
}

// Kueue available(), from the root down the node's path:
//   root:  subtree_quota - usage (may be negative when over-admitted);
//   other: local_available + parent's available, the latter capped by what
//          the borrowing limit still allows: (subtree - local) - used in
//          parent + borrowing_limit.
Amount QuotaTree::available_raw(int node, int fr) const noexcept {
  return huge_ ? available_raw_in<false>(node, fr) : available_raw_in<true>(node, fr);
}

// kSmall as in commit_add_usage_in. Only a borrowing limit may then still be
// Unlimited or huge (may_saturate does not cover it): the sums with it stay
// saturating (QuotaArith::add_limit; x >= 0 there, and amount_add(x, y) is
// sat_add(x, y) when x is not Unlimited).
template <bool kSmall>
Amount QuotaTree::available_raw_in(int node, int fr) const noexcept {
  using A = QuotaArith<kSmall>;
  // One level down: what a node has given its parent's available.
  auto below = [&](std::size_t i, Amount avail) {
    const Amount u = cells_[i].usage;
    const Amount lq = cells_[i].local_quota;
    const Amount bl = cells_[i].borrowing_limit;
    Amount parent_available = avail;
    if (bl != NO_LIMIT) {
      const Amount stored_in_parent = A::sub(cells_[i].subtree_quota, lq);
      const Amount used_in_parent = std::max<Amount>(0, A::sub(u, lq));
      parent_available = std::min(A::add_limit(A::sub(stored_in_parent, used_in_parent), bl), parent_available);
    }
    return A::add_limit(std::max<Amount>(0, A::sub(lq, u)), parent_available);
  };
  const int parent = parent_[node];
  if (parent >= 0 && parent_[parent] < 0) {  // a ClusterQueue in a flat cohort: no ancestor list to walk
    const std::size_t r = at(parent, fr);
    return below(at(node, fr), A::sub(cells_[r].subtree_quota, cells_[r].usage));
  }
  IdRange anc = ancestors(node);
  const std::size_t k = anc.size();
  const int root = k > 0 ? anc[k - 1] : node;
  std::size_t i = at(root, fr);
  Amount avail = A::sub(cells_[i].subtree_quota, cells_[i].usage);
  for (std::size_t j = k; j-- > 0;) avail = below(at(j > 0 ? anc[j - 1] : node, fr), avail);
  return avail;
}

bool QuotaTree::quantities_fit_in_quota(int node, const std::vector<FrAmount>& requests,
                                        std::vector<FrAmount>& remaining) const {
  bool fits = true;
  remaining.clear();
  for (const auto& [fr, v] : requests) {
    std::size_t i = at(node, fr);
    if (amount_add(cells_[i].usage, v) > cells_[i].subtree_quota) fits = false;
    remaining.push_back({fr, amount_max(0, amount_sub(v, local_available(node, fr)))});
  }
  return fits;
}

std::pair<int, bool> QuotaTree::lowest_borrowing_subtree(int cq, int fr, Amount value) const noexcept {
  Amount remaining = amount_sub(value, local_available(cq, fr));
  int node = cq;
  for (int a : ancestors(cq)) {
    node = a;
    if (!borrowing_with(a, fr, remaining)) return {height_[a], parent_[a] >= 0};
    remaining = amount_sub(remaining, local_available(a, fr));
  }
  return {height_[node], parent_[node] >= 0};
}

}  // namespace kueue_fast
