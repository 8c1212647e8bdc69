// The quota tree: ClusterQueues and cohorts with quota and usage per
// flavor-resource (fr). The C++ twin of kueue_fast/engine/reference/quota.py, same
// arithmetic as kueue pkg/cache/scheduler/resource_node.go.
//
// Storage: per-(node, fr) quantities are flat `n_nodes * n_fr` tables,
// row-major by node. What a walk up the tree reads together (usage, subtree
// quota, local quota, borrowing limit) sits in one 32-byte cell; nominal,
// lending limit and potential available in their own int64 arrays. The numpy
// views are (n_nodes, n_fr) int64, strided into the cells where needed.
// What never changes with usage is computed once: subtree quota, local
// quota, potential available, node heights, the tree's adjacency lists and,
// per node, the list of fr's that have a subtree-quota entry (Kueue's map
// keys; DRS and lendable iterate only those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/topology.hpp>

namespace kueue_fast {

// A read-only range of int32 ids (a slice of a CSR table).
struct IdRange {
  const std::int32_t* first = nullptr;
  const std::int32_t* last = nullptr;
  const std::int32_t* begin() const noexcept { return first; }
  const std::int32_t* end() const noexcept { return last; }
  std::size_t size() const noexcept { return static_cast<std::size_t>(last - first); }
  bool empty() const noexcept { return first == last; }
  std::int32_t operator[](std::size_t i) const noexcept { return first[i]; }
};

// Compressed rows of int32 ids.
struct Csr {
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::int32_t> ids;
  void end_row() { offsets.push_back(static_cast<std::uint32_t>(ids.size())); }
  IdRange row(int i) const noexcept {
    return {ids.data() + offsets[i], ids.data() + offsets[i + 1]};
  }
};

// (fr, amount) pairs: a workload's usage or requests on the tree.
// What a walk up the tree reads for one (node, fr).
struct Cell {
  Amount usage;
  Amount subtree_quota;
  Amount local_quota;
  Amount borrowing_limit;
};

struct FrAmount {
  std::int32_t fr;
  Amount amount;
};

class QuotaTree {
 public:
  explicit QuotaTree(const Topology& topo);

  int n_nodes() const noexcept { return n_nodes_; }
  int n_fr() const noexcept { return n_fr_; }

  // --- structure (quota.py roots/ancestors/child_cohorts/child_cqs/subtree_cqs) ---
  int parent(int node) const noexcept { return parent_[node]; }
  bool is_cq(int node) const noexcept { return node < n_cq_; }
  // Inactive ClusterQueues are not snapshot nodes: never traversed, but their
  // quota and usage count in their cohort's totals.
  bool in_snapshot(int node) const noexcept { return in_snapshot_[node] != 0; }
  int root_of(int node) const noexcept { return root_[node]; }
  int depth(int node) const noexcept { return depth_[node]; }
  IdRange ancestors(int node) const noexcept { return ancestors_.row(node); }  // parent first, root last
  IdRange child_cohorts(int node) const noexcept { return child_cohorts_.row(node); }
  IdRange child_cqs(int node) const noexcept { return child_cqs_.row(node); }  // active only
  IdRange subtree_cqs(int node) const noexcept { return subtree_cqs_.row(node); }  // active only
  // Distance to the furthest leaf (Kueue getNodeHeight); cohorts only.
  int height(int node) const noexcept { return height_[node]; }
  // fr's with a subtree-quota entry, for DRS and lendable.
  IdRange subtree_frs(int node) const noexcept { return subtree_frs_.row(node); }

  // --- quota (static) -----------------------------------------------------------
  std::size_t at(int node, int fr) const noexcept {
    return static_cast<std::size_t>(node) * static_cast<std::size_t>(n_fr_) + static_cast<std::size_t>(fr);
  }
  Amount nominal(int node, int fr) const noexcept { return nominal_[at(node, fr)]; }
  Amount borrowing_limit(int node, int fr) const noexcept { return cells_[at(node, fr)].borrowing_limit; }
  Amount lending_limit(int node, int fr) const noexcept { return lending_limit_[at(node, fr)]; }
  // A ClusterQueue's nominal; for a cohort its own nominal plus what each
  // child lends it (child subtree quota minus child local quota).
  Amount subtree_quota(int node, int fr) const noexcept { return cells_[at(node, fr)].subtree_quota; }
  // Quota only this subtree can use, never lent to the parent (>= 0):
  // max(0, subtree_quota - lending_limit) with a lending limit, else 0.
  Amount local_quota(int node, int fr) const noexcept { return cells_[at(node, fr)].local_quota; }
  // The most the node could get if nothing else were used (>= 0 for valid quotas).
  Amount potential_available(int node, int fr) const noexcept { return potential_[at(node, fr)]; }

  // --- usage --------------------------------------------------------------------------
  Amount usage(int node, int fr) const noexcept { return cells_[at(node, fr)].usage; }
  // Free local quota, >= 0.
  Amount local_available(int node, int fr) const noexcept {
    std::size_t i = at(node, fr);
    return amount_max(0, amount_sub(cells_[i].local_quota, cells_[i].usage));
  }
  // Usage lives twice, as in Kueue: in the cycle's snapshot (usage(), what
  // every decision reads) and in the cache (what admitted workloads hold).
  // They differ only while a cycle runs: simulations, the incoming usage of a
  // fair-sharing search and reservations change the snapshot alone, and
  // discard_snapshot() takes the next snapshot from the cache.
  //
  // Charge `value` to node in the snapshot; the part beyond its free local
  // quota goes to the parent, recursively. Exact inverse of remove_usage for
  // value >= 0 as long as no Unlimited amount is on the path.
  void add_usage(int node, int fr, Amount value) noexcept;
  // Inverse of add_usage: release what the node stored in its parent first.
  void remove_usage(int node, int fr, Amount value) noexcept;
  // A workload's usage joins (or leaves) a ClusterQueue for good: cache and
  // snapshot both take it (quota.py charge).
  void commit_add_usage(int node, int fr, Amount value) noexcept;
  void commit_remove_usage(int node, int fr, Amount value) noexcept;
  // The cycle is over (quota.py discard_snapshot): the snapshot's usage is the
  // cache's again. Without Unlimited amounts (or a negative reservation, which
  // add_usage does not propagate) every change of the snapshot was undone
  // exactly already.
  void discard_snapshot() noexcept;
  void add_usage(int node, const FrAmount* first, const FrAmount* last) noexcept {
    for (; first != last; ++first) add_usage(node, first->fr, first->amount);
  }
  void remove_usage(int node, const FrAmount* first, const FrAmount* last) noexcept {
    for (; first != last; ++first) remove_usage(node, first->fr, first->amount);
  }

  // Kueue available(): may be negative when over-admitted.
  Amount available_raw(int node, int fr) const noexcept;
  // What a ClusterQueue can still admit on fr now (ClusterQueueSnapshot.Available, >= 0).
  Amount available(int cq, int fr) const noexcept { return amount_max(0, available_raw(cq, fr)); }

  // Would usage + value exceed the node's own quota (nominal for a
  // ClusterQueue, subtree quota for a cohort)?
  bool borrowing_with(int node, int fr, Amount value) const noexcept {
    std::size_t i = at(node, fr);
    Amount limit = is_cq(node) ? nominal_[i] : cells_[i].subtree_quota;
    return limit < amount_add(cells_[i].usage, value);
  }
  // Kueue IsWithinNominalInResources: usage <= subtree quota on every fr.
  bool within_nominal(int node, const std::int32_t* frs, std::size_t n) const noexcept {
    for (std::size_t k = 0; k < n; ++k) {
      std::size_t i = at(node, frs[k]);
      if (cells_[i].usage > cells_[i].subtree_quota) return false;
    }
    return true;
  }
  // Kueue QuantitiesFitInQuota: whether `requests` fit the node's subtree
  // quota; `remaining` gets, per request, what exceeds the free local quota.
  bool quantities_fit_in_quota(int node, const std::vector<FrAmount>& requests,
                               std::vector<FrAmount>& remaining) const;
  // Kueue FindHeightOfLowestSubtreeThatFits: (borrowing height, may reclaim in hierarchy).
  // Inline for the common case, a ClusterQueue within its nominal quota.
  std::pair<int, bool> lowest_subtree_that_fits(int cq, int fr, Amount value) const noexcept {
    const bool has_parent = parent_[cq] >= 0;
    if (!(has_parent && borrowing_with(cq, fr, value))) return {0, has_parent};
    return lowest_borrowing_subtree(cq, fr, value);
  }

  // Ask for a node's cells ahead of a walk that will need them.
  void prefetch_row(int node) const noexcept {
    const char* p = reinterpret_cast<const char*>(cells_.data() + at(node, 0));
    const std::size_t bytes = static_cast<std::size_t>(n_fr_) * sizeof(Cell);
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
  }
  // The same for its static quota rows that flavor assignment reads
  // (potential available, nominal).
  void prefetch_quota_rows(int node) const noexcept {
    const std::size_t bytes = static_cast<std::size_t>(n_fr_) * sizeof(Amount);
    for (const Amount* row : {potential_.data() + at(node, 0), nominal_.data() + at(node, 0)}) {
      const char* p = reinterpret_cast<const char*>(row);
      for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
    }
  }
  // The same for the node's usage in the cache (commit_add_usage writes it).
  void prefetch_cache_row(int node) const noexcept {
    const char* p = reinterpret_cast<const char*>(cache_usage_.data() + at(node, 0));
    const std::size_t bytes = static_cast<std::size_t>(n_fr_) * sizeof(Amount);
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
  }
  // A counter per node that grows with every change of its usage: equal
  // sums of versions mean no usage changed on those nodes since.
  std::uint64_t version(int node) const noexcept { return version_[node]; }
  // The node and its ancestors below the root (the root's own usage is not
  // on the path for shares compared below the root).
  std::uint64_t path_version_below_root(int node) const noexcept {
    std::uint64_t v = version_[node];
    IdRange anc = ancestors(node);
    for (std::size_t k = 0; k + 1 < anc.size(); ++k) v += version_[anc[k]];
    return v;
  }
  // Raw tables (n_nodes * n_fr), for the zero-copy views and the debug hook:
  // first element and the distance between elements in bytes.
  struct Table {
    const Amount* data;
    std::size_t stride;
  };
  Table usage_table() const noexcept { return {&cells_.data()->usage, sizeof(Cell)}; }
  Table subtree_quota_table() const noexcept { return {&cells_.data()->subtree_quota, sizeof(Cell)}; }
  Table borrowing_limit_table() const noexcept { return {&cells_.data()->borrowing_limit, sizeof(Cell)}; }
  Table nominal_table() const noexcept { return {nominal_.data(), sizeof(Amount)}; }
  Table lending_limit_table() const noexcept { return {lending_limit_.data(), sizeof(Amount)}; }
  // The whole mutable state, for byte comparisons (debug hook).
  const std::vector<Cell>& cells() const noexcept { return cells_; }
  // Has any quota, usage or usage change reached 2^61 in magnitude? Until
  // then no Amount operation of add_usage/remove_usage saturates, so a
  // remove_usage undone by add_usage leaves every cell as it was: a trial
  // removal that cannot change what is read may be skipped.
  bool may_saturate() const noexcept { return huge_; }

 private:
  template <bool kSmall>
  Amount available_raw_in(int node, int fr) const noexcept;
  template <bool kSmall>
  void commit_add_usage_in(int node, int fr, Amount value) noexcept;
  // lowest_subtree_that_fits for a ClusterQueue with a parent that would borrow.
  std::pair<int, bool> lowest_borrowing_subtree(int cq, int fr, Amount value) const noexcept;
  template <bool kCache>
  void add_usage_in(int node, int fr, Amount value) noexcept;
  template <bool kCache>
  void remove_usage_in(int node, int fr, Amount value) noexcept;
  void touch(int node) noexcept {
    if (!touched_[node]) {
      touched_[node] = 1;
      touched_list_.push_back(node);  // capacity n_nodes: never reallocates
    }
  }
  void accumulate_quota(int node, const Topology& topo, std::vector<std::uint8_t>& has_entry,
                        std::vector<std::vector<std::int32_t>>& keys);
  int compute_height(int node) const;
  // |x| >= 2^61. A usage update that saturates (or carries Unlimited) ends
  // at the bound, so checking every usage it writes flags it (see may_saturate).
  static bool huge(Amount x) noexcept {
    constexpr std::uint64_t h = std::uint64_t{1} << 61;
    return static_cast<std::uint64_t>(x) + h >= 2 * h;
  }

  int n_nodes_ = 0, n_fr_ = 0, n_cq_ = 0;
  std::vector<std::int32_t> parent_, root_, depth_, height_;
  std::vector<std::uint8_t> in_snapshot_;
  std::vector<std::vector<std::int32_t>> children_;
  Csr ancestors_, child_cohorts_, child_cqs_, subtree_cqs_, subtree_frs_;
  std::vector<Cell> cells_;
  std::vector<std::uint64_t> version_;
  std::vector<Amount> nominal_, lending_limit_, potential_;
  std::vector<Amount> cache_usage_;  // Kueue's cache, per (node, fr)
  std::vector<std::uint8_t> touched_;  // per node: snapshot usage changed this cycle
  std::vector<std::int32_t> touched_list_;
  bool huge_ = false;  // see may_saturate
};

}  // namespace kueue_fast
