// Same rules as kueue_fast/engine/reference/fair_sharing.py and scheduler.py
// _fair_sharing_pop.
#include <kueue_fast/fair_sharing.hpp>

#include <algorithm>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast {

namespace {
int cmp(double x, double y) noexcept { return (x > y) - (x < y); }
}  // namespace

int compare_drs(const DRS& a, const DRS& b) noexcept {
  bool az = a.zero_weight_borrows(), bz = b.zero_weight_borrows();
  if (az && bz) return cmp(a.unweighted_ratio, b.unweighted_ratio);
  if (az) return 1;
  if (bz) return -1;
  return cmp(a.weighted_share(), b.weighted_share());
}

FairShares::FairShares(const Topology& topo, const QuotaTree& tree)
    : topo_(topo), tree_(tree), n_resources_(topo.n_resources()) {
  const std::size_t nr = static_cast<std::size_t>(n_resources_);
  lendable_.assign(static_cast<std::size_t>(tree.n_nodes()) * nr, 0);
  for (int node = 0; node < tree.n_nodes(); ++node) {
    int root = tree.root_of(node);
    for (int fr : tree.subtree_frs(root)) {
      Amount& slot = lendable_[static_cast<std::size_t>(node) * nr + static_cast<std::size_t>(topo.fr_resource(fr))];
      slot = amount_add(slot, tree.potential_available(node, fr));
    }
  }
  borrowed_.assign(nr, 0);
}

// fair_sharing.py dominant_resource_share: what the node borrows, summed per
// resource over flavors, against what its parent could lend; the largest
// ratio (x1000) is the dominant share. Roots have DRS 0.
DRS FairShares::drs(int node, std::vector<std::int32_t>* borrowed_frs) const {
  DRS d;
  d.fair_weight = topo_.fair_weight(node);
  if (borrowed_frs != nullptr) borrowed_frs->clear();
  int parent = tree_.parent(node);
  if (parent < 0) return d;
  for (int fr : tree_.subtree_frs(node)) {
    Amount amount = amount_sub(tree_.usage(node, fr), tree_.subtree_quota(node, fr));
    if (amount > 0) {
      int r = topo_.fr_resource(fr);
      if (borrowed_[r] == 0) touched_.push_back(r);
      borrowed_[r] = amount_add(borrowed_[r], amount);
      if (borrowed_frs != nullptr) borrowed_frs->push_back(fr);
    }
  }
  if (touched_.empty()) return d;
  d.borrowing = true;
  for (std::int32_t r : touched_) {
    Amount lr = lendable(parent, r);
    if (lr > 0) {
      double ratio = static_cast<double>(borrowed_[r]) * 1000.0 / static_cast<double>(lr);
      if (ratio > d.unweighted_ratio) d.unweighted_ratio = ratio;
    }
    borrowed_[r] = 0;
  }
  touched_.clear();
  return d;
}

// --- the tournament --------------------------------------------------------------------------------

FairSharingTournament::FairSharingTournament(const View& view) : v_(view) {
  entry_of_cq_.assign(static_cast<std::size_t>(v_.topo.n_cq()), -1);
}

void FairSharingTournament::reset(const std::vector<std::int32_t>& entry_ids) {
  for (std::int32_t cq : order_) entry_of_cq_[cq] = -1;
  order_.clear();
  for (std::int32_t id : entry_ids) {
    std::int32_t cq = v_.entries[id].cq;
    entry_of_cq_[cq] = id;
    order_.push_back(cq);
  }
  std::sort(order_.begin(), order_.end());
  next_min_ = 0;
  remaining_ = entry_ids.size();
  share_first_.assign(v_.entries.size(), 0);
  share_version_.assign(v_.entries.size(), 0);
  share_valid_.assign(v_.entries.size(), 0);
  shares_.clear();
  for (std::int32_t id : entry_ids) {  // one slot per ancestor
    share_first_[id] = static_cast<std::uint32_t>(shares_.size());
    shares_.resize(shares_.size() + v_.tree.ancestors(v_.entries[id].cq).size());
  }
}

const FairSharingTournament::Share& FairSharingTournament::share_at(std::int32_t entry, int cohort) const {
  int cq = v_.entries[entry].cq;
  int k = v_.tree.depth(cq) - 1 - v_.tree.depth(cohort);
  return shares_[share_first_[entry] + static_cast<std::uint32_t>(k)];
}

bool FairSharingTournament::less(std::int32_t a, std::int32_t b, int cohort) const {
  const FeatureGates& gates = v_.topo.gates();
  const Entry& ea = v_.entries[a];
  const Entry& eb = v_.entries[b];
  if (gates.prioritize_preemptor_workloads && ea.is_preemptor != eb.is_preemptor) return ea.is_preemptor;
  const Share& sa = share_at(a, cohort);
  const Share& sb = share_at(b, cohort);
  if (gates.fair_sharing_prioritize_non_borrowing && sa.borrowing_on_request != sb.borrowing_on_request) {
    return !sa.borrowing_on_request;
  }
  int c = compare_drs(sa.drs, sb.drs);
  if (c != 0) return c < 0;
  const WorkloadStore& w = v_.w;
  int wa = ea.wid, wb = eb.wid;
  if (gates.priority_sorting_within_cohort && w.priority[wa] != w.priority[wb]) return w.priority[wa] > w.priority[wb];
  if (w.queue_ts[wa] != w.queue_ts[wb]) return w.queue_ts[wa] < w.queue_ts[wb];
  return w.compare_names(wa, wb) < 0;
}

std::int32_t FairSharingTournament::tournament(int cohort) {
  const QuotaTree& t = v_.tree;
  const std::size_t base = stack_.size();
  for (int c : t.child_cohorts(cohort)) {
    std::int32_t winner = tournament(c);
    if (winner >= 0) stack_.push_back(winner);
  }
  for (int c : t.child_cqs(cohort)) {
    if (entry_of_cq_[c] >= 0) stack_.push_back(entry_of_cq_[c]);
  }
  if (stack_.size() == base) return -1;
  std::int32_t best = stack_[base];
  for (std::size_t i = base + 1; i < stack_.size(); ++i) {
    if (less(stack_[i], best, cohort)) best = stack_[i];
  }
  stack_.resize(base);
  return best;
}

std::int32_t FairSharingTournament::pop() {
  while (entry_of_cq_[order_[next_min_]] < 0) ++next_min_;
  int cq = order_[next_min_];
  QuotaTree& t = v_.tree;
  std::int32_t winner;
  if (t.parent(cq) < 0) {
    winner = entry_of_cq_[cq];
  } else {
    int root = t.root_of(cq);
    for (int c : t.subtree_cqs(root)) {
      std::int32_t id = entry_of_cq_[c];
      if (id < 0) continue;
      // A node's share depends only on its own usage, and the shares needed
      // are those of the ClusterQueue and its ancestors below the root: while
      // none of their usage changed, the shares computed earlier still hold.
      if (share_valid_[id] && share_version_[id] == t.path_version_below_root(c)) continue;
      const AssignmentRec& a = v_.arena[v_.entries[id].assignment];
      const FrAmount* u0 = v_.arena.usage.data() + a.usage_first;
      const FrAmount* u1 = u0 + a.usage_n;
      t.add_usage(c, u0, u1);
      Share* slot = shares_.data() + share_first_[id];
      auto borrowing_on = [&]() {
        for (std::int32_t fr : borrowed_frs_) {
          for (const FrAmount* u = u0; u != u1; ++u) {
            if (u->fr == fr && u->amount > 0) return true;
          }
        }
        return false;
      };
      DRS share = v_.shares.drs(c, &borrowed_frs_);
      bool on_request = borrowing_on();
      IdRange anc = t.ancestors(c);
      for (std::size_t k = 0; k < anc.size(); ++k) {
        slot[k] = {share, on_request};
        if (k + 1 < anc.size()) {  // the root's own share is never compared
          share = v_.shares.drs(anc[k], &borrowed_frs_);
          on_request = borrowing_on();
        }
      }
      t.remove_usage(c, u0, u1);
      share_valid_[id] = 1;
      share_version_[id] = t.path_version_below_root(c);
    }
    winner = tournament(root);
  }
  entry_of_cq_[v_.entries[winner].cq] = -1;
  --remaining_;
  return winner;
}

}  // namespace kueue_fast
