// Quota arithmetic: available, potential available, add/remove usage round
// trips, lending limits at every level, borrowing limits, saturation, and a
// randomized comparison with a naive map-based twin of quota.py.
#include <algorithm>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/topology.hpp>

#include "harness.hpp"

using namespace kueue_fast;

namespace {

constexpr Amount NL = NO_LIMIT;

// Nodes: ClusterQueues first, then cohorts; one flavor, `n_res` resources.
struct Spec {
  std::vector<std::string> names;
  int n_cq = 0;
  std::vector<int> parent;
  std::vector<std::vector<QuotaEntry>> quotas;

  int add(const std::string& name, int parent_id, std::vector<QuotaEntry> q) {
    names.push_back(name);
    parent.push_back(parent_id);
    quotas.push_back(std::move(q));
    return static_cast<int>(names.size()) - 1;
  }

  Topology build(int n_res = 1) const {
    TopologySpec t;
    for (int r = 0; r < n_res; ++r) t.resource_names.push_back("r" + std::to_string(r));
    t.flavor_names = {"f"};
    for (int r = 0; r < n_res; ++r) t.fr_pairs.emplace_back(0, r);
    t.node_names = names;
    t.n_cq = n_cq;
    t.node_parent.assign(parent.begin(), parent.end());
    t.quotas = quotas;
    t.fair_weight.assign(names.size(), 1.0);
    for (int c = 0; c < n_cq; ++c) {
      ClusterQueueSpec cq;
      cq.name = names[c];
      ResourceGroupSpec g;
      for (int r = 0; r < n_res; ++r) g.resources.push_back(r);
      g.flavors = {0};
      cq.groups.push_back(g);
      t.cluster_queues.push_back(cq);
    }
    return Topology(t);
  }
};

QuotaEntry q(Amount nominal, Amount bl = NL, Amount ll = NL, int fr = 0) { return {fr, nominal, bl, ll}; }

// The reference's QuotaTree (quota.py) with maps, for randomized comparison.
struct NaiveTree {
  std::vector<int> parent;
  std::vector<std::map<int, QuotaEntry>> quota;
  std::vector<std::map<int, Amount>> subtree, usage;
  std::vector<std::vector<int>> children;
  int n_cq;

  explicit NaiveTree(const Spec& s) : parent(s.parent), n_cq(s.n_cq) {
    std::size_t n = s.names.size();
    quota.resize(n);
    subtree.resize(n);
    usage.resize(n);
    children.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      for (const auto& e : s.quotas[i]) quota[i][e.fr] = e;
      if (parent[i] >= 0) children[parent[i]].push_back(static_cast<int>(i));
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (parent[i] < 0) accumulate(static_cast<int>(i));
    }
  }
  Amount nominal(int n, int fr) const { auto it = quota[n].find(fr); return it == quota[n].end() ? 0 : it->second.nominal; }
  Amount bl(int n, int fr) const { auto it = quota[n].find(fr); return it == quota[n].end() ? NL : it->second.borrowing_limit; }
  Amount ll(int n, int fr) const { auto it = quota[n].find(fr); return it == quota[n].end() ? NL : it->second.lending_limit; }
  Amount get(const std::map<int, Amount>& m, int fr) const { auto it = m.find(fr); return it == m.end() ? 0 : it->second; }
  Amount local_quota(int n, int fr) const {
    Amount l = ll(n, fr);
    return l == NL ? 0 : std::max<Amount>(0, get(subtree[n], fr) - l);
  }
  void accumulate(int n) {
    std::map<int, Amount> sq;
    for (const auto& [fr, e] : quota[n]) sq[fr] = e.nominal;
    for (int c : children[n]) {
      accumulate(c);
      for (const auto& [fr, v] : subtree[c]) sq[fr] = get(sq, fr) + v - local_quota(c, fr);
    }
    subtree[n] = sq;
  }
  Amount local_available(int n, int fr) const { return std::max<Amount>(0, local_quota(n, fr) - get(usage[n], fr)); }
  void add_usage(int n, int fr, Amount v) {
    Amount la = local_available(n, fr);
    usage[n][fr] = get(usage[n], fr) + v;
    if (parent[n] >= 0 && v > la) add_usage(parent[n], fr, v - la);
  }
  void remove_usage(int n, int fr, Amount v) {
    Amount sip = get(usage[n], fr) - local_quota(n, fr);
    usage[n][fr] = get(usage[n], fr) - v;
    if (sip <= 0 || parent[n] < 0) return;
    remove_usage(parent[n], fr, std::min(v, sip));
  }
  Amount available_raw(int n, int fr) const {
    Amount sq = get(subtree[n], fr), u = get(usage[n], fr);
    if (parent[n] < 0) return sq - u;
    Amount pa = available_raw(parent[n], fr);
    if (bl(n, fr) != NL) {
      Amount lq = local_quota(n, fr);
      pa = std::min(sq - lq - std::max<Amount>(0, u - lq) + bl(n, fr), pa);
    }
    return local_available(n, fr) + pa;
  }
  Amount potential(int n, int fr) const {
    if (parent[n] < 0) return get(subtree[n], fr);
    Amount a = local_quota(n, fr) + potential(parent[n], fr);
    if (bl(n, fr) != NL) a = std::min(get(subtree[n], fr) + bl(n, fr), a);
    return a;
  }
};

}  // namespace

// Kueue docs (concepts/cluster_queue.md, LendingLimit) / pkg/scheduler/scheduler_test.go TestSchedule
// "workload exceeds lending limit when borrow in cohort".
TEST(lending_limit_example) {
  Spec s;
  s.n_cq = 2;
  s.add("lend-a", 2, {q(3, NL, 2)});
  s.add("lend-b", 2, {q(2, NL, 2)});
  s.add("cohort", -1, {});
  Topology topo = s.build();
  QuotaTree t(topo);
  CHECK_EQ(t.local_quota(0, 0), Amount{1});
  CHECK_EQ(t.local_quota(1, 0), Amount{0});
  CHECK_EQ(t.subtree_quota(2, 0), Amount{4});
  t.add_usage(1, 0, 2);
  CHECK_EQ(t.usage(2, 0), Amount{2});
  CHECK_EQ(t.available(1, 0), Amount{2});
  CHECK_EQ(t.potential_available(1, 0), Amount{4});
  CHECK_EQ(t.available(0, 0), Amount{3});  // its local 1 + cohort's 2
  t.remove_usage(1, 0, 2);
  CHECK_EQ(t.usage(2, 0), Amount{0});
  CHECK_EQ(t.usage(1, 0), Amount{0});
}

// Hierarchical Cohorts with a borrowingLimit (pkg/cache/scheduler/resource_node.go available).
TEST(hierarchy_with_borrowing_limit_example) {
  for (Amount lending : {Amount{3}, Amount{5}}) {
    Spec s;
    s.n_cq = 2;
    s.add("cq-lender", 3, {q(10, NL, lending)});
    s.add("cq-borrower", 3, {q(5, 10)});
    s.add("root", -1, {});
    s.add("child", 2, {});
    Topology topo = s.build();
    QuotaTree t(topo);
    CHECK_EQ(t.local_quota(0, 0), 10 - lending);
    CHECK_EQ(t.subtree_quota(3, 0), lending + 5);
    CHECK_EQ(t.subtree_quota(2, 0), lending + 5);
    t.add_usage(1, 0, 5);
    CHECK_EQ(t.usage(3, 0), Amount{5});
    CHECK_EQ(t.usage(2, 0), Amount{5});
    CHECK_EQ(t.available(1, 0), lending);  // 3 does not fit a 4-cpu request; 5 does
    CHECK_EQ(t.height(3), 1);
    CHECK_EQ(t.height(2), 2);
  }
}

TEST(lending_limits_at_every_level) {
  // root <- mid (lends at most 4 of its subtree to root) <- {a (nominal 6, ll 2), b (nominal 4)}
  //      <- c (nominal 5, ll 0: lends nothing)
  Spec s;
  s.n_cq = 3;
  s.add("a", 4, {q(6, NL, 2)});
  s.add("b", 4, {q(4)});
  s.add("c", 3, {q(5, NL, 0)});
  s.add("root", -1, {});
  s.add("mid", 3, {q(0, NL, 4)});
  Topology topo = s.build();
  QuotaTree t(topo);
  CHECK_EQ(t.local_quota(0, 0), Amount{4});
  CHECK_EQ(t.subtree_quota(4, 0), Amount{6});       // 2 lent by a + 4 by b
  CHECK_EQ(t.local_quota(4, 0), Amount{2});         // mid keeps 6 - 4
  CHECK_EQ(t.local_quota(2, 0), Amount{5});         // c lends nothing
  CHECK_EQ(t.subtree_quota(3, 0), Amount{4});       // root: 4 from mid, 0 from c
  CHECK_EQ(t.potential_available(0, 0), Amount{10}); // a: 4 local + mid 2 local + root 4
  CHECK_EQ(t.potential_available(2, 0), Amount{9});  // c: 5 local + root 4
  CHECK_EQ(t.potential_available(1, 0), Amount{6});  // b: 0 local + mid 2 + root 4
  // a uses 7: 4 from its local quota, 3 go to mid; mid keeps 2 locally, 1 goes to root.
  t.add_usage(0, 0, 7);
  CHECK_EQ(t.usage(4, 0), Amount{3});
  CHECK_EQ(t.usage(3, 0), Amount{1});
  CHECK_EQ(t.available(2, 0), Amount{5 + 3});
  CHECK_EQ(t.available(1, 0), Amount{3});
  t.remove_usage(0, 0, 7);
  for (int n = 0; n < 5; ++n) CHECK_EQ(t.usage(n, 0), Amount{0});
}

TEST(borrowing_limit_caps_available_and_potential) {
  Spec s;
  s.n_cq = 2;
  s.add("a", 2, {q(4, 2)});
  s.add("b", 2, {q(10)});
  s.add("cohort", -1, {});
  Topology topo = s.build();
  QuotaTree t(topo);
  CHECK_EQ(t.potential_available(0, 0), Amount{6});
  CHECK_EQ(t.available(0, 0), Amount{6});
  t.add_usage(0, 0, 5);
  CHECK(t.borrowing_with(0, 0, 0));
  CHECK_EQ(t.available(0, 0), Amount{1});
  auto [h, reclaim] = t.lowest_subtree_that_fits(0, 0, 6);
  CHECK_EQ(h, 1);
  CHECK(!reclaim);
  auto [h0, reclaim0] = t.lowest_subtree_that_fits(1, 0, 3);
  CHECK_EQ(h0, 0);
  CHECK(reclaim0);  // has a parent and does not borrow
  t.remove_usage(0, 0, 5);
  CHECK_EQ(t.usage(2, 0), Amount{0});
}

TEST(over_admission_available_clipped_for_cq_only) {
  Spec s;
  s.n_cq = 1;
  s.add("a", 1, {q(4)});
  s.add("cohort", -1, {});
  Topology topo = s.build();
  QuotaTree t(topo);
  t.add_usage(0, 0, 9);
  CHECK_EQ(t.available_raw(1, 0), Amount{-5});
  CHECK_EQ(t.available(0, 0), Amount{0});
}

TEST(saturation_never_wraps) {
  constexpr Amount MAX = std::numeric_limits<Amount>::max();
  Spec s;
  s.n_cq = 2;
  s.add("a", 2, {q(MAX - 1, MAX - 1)});
  s.add("b", 2, {q(MAX - 1)});
  s.add("cohort", -1, {});
  Topology topo = s.build();
  QuotaTree t(topo);
  CHECK_EQ(t.subtree_quota(2, 0), MAX);  // saturated sum
  CHECK(t.potential_available(0, 0) > 0);
  CHECK(t.available(0, 0) > 0);
  t.add_usage(0, 0, MAX);
  t.add_usage(0, 0, MAX);
  CHECK_EQ(t.usage(0, 0), MAX);
  CHECK(!t.borrowing_with(1, 0, MAX) || t.nominal(1, 0) < MAX);
}

// kueue#15026 describes Kueue's cache before amounts became exact: a usage
// that reaches the sentinel is Unlimited, adding to it changes nothing, and
// taking the Unlimited workload out leaves 0, so the small one's removal
// leaves -7.
TEST(usage_is_kueue_amount_arithmetic) {
  constexpr Amount MAX = std::numeric_limits<Amount>::max();
  Spec s;
  s.n_cq = 1;
  s.add("q", -1, {q(MAX)});
  Topology topo = s.build();
  QuotaTree t(topo);
  CHECK_EQ(t.available(0, 0), MAX);
  t.commit_add_usage(0, 0, 7);
  CHECK_EQ(t.available(0, 0), MAX);  // Unlimited - 7
  t.commit_add_usage(0, 0, MAX);
  CHECK_EQ(t.usage(0, 0), MAX);
  CHECK_EQ(t.available(0, 0), Amount{0});  // Unlimited - Unlimited
  t.commit_remove_usage(0, 0, MAX);
  CHECK_EQ(t.usage(0, 0), Amount{0});
  t.commit_remove_usage(0, 0, 7);
  CHECK_EQ(t.usage(0, 0), Amount{-7});
  t.discard_snapshot();
  CHECK_EQ(t.usage(0, 0), Amount{-7});
}

// Changes of the cycle's snapshot alone (a reservation that saturates its
// cohort, a negative one, a simulated removal of an Unlimited workload) are
// gone once the snapshot is discarded: the usage is the cache's, which only
// committed changes reach.
TEST(discarding_the_snapshot_restores_the_cache) {
  constexpr Amount MAX = std::numeric_limits<Amount>::max();
  Spec s;
  s.n_cq = 2;
  s.add("a", 2, {q(0)});
  s.add("b", 2, {q(MAX - 101)});
  s.add("co", -1, {});
  Topology topo = s.build();
  QuotaTree t(topo);
  t.commit_add_usage(1, 0, MAX - 150);
  CHECK_EQ(t.usage(2, 0), MAX - 150);
  t.add_usage(0, 0, 200);  // a reservation: the cohort saturates onto Unlimited
  CHECK_EQ(t.usage(2, 0), MAX);
  CHECK_EQ(t.available(1, 0), Amount{0});
  t.add_usage(1, 0, -20);  // a negative reservation: not propagated
  t.remove_usage(0, 0, 200);
  t.remove_usage(1, 0, -20);
  CHECK_EQ(t.usage(2, 0), MAX);  // Unlimited - 200 = Unlimited
  t.discard_snapshot();
  CHECK_EQ(t.usage(0, 0), Amount{0});
  CHECK_EQ(t.usage(1, 0), MAX - 150);
  CHECK_EQ(t.usage(2, 0), MAX - 150);
  t.commit_add_usage(0, 0, 100);
  t.discard_snapshot();  // committed: kept
  CHECK_EQ(t.usage(2, 0), MAX - 50);
}

TEST(randomized_against_naive_twin) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 300; ++round) {
    // A random forest: 2-6 ClusterQueues, 1-4 cohorts, 2 resources.
    Spec s;
    int n_cq = 2 + static_cast<int>(rng() % 5);
    int n_co = 1 + static_cast<int>(rng() % 4);
    s.n_cq = n_cq;
    auto rand_quota = [&](bool allow_limits) {
      std::vector<QuotaEntry> out;
      for (int fr = 0; fr < 2; ++fr) {
        if (rng() % 4 == 0) continue;  // no entry
        Amount nominal = static_cast<Amount>(rng() % 20);
        Amount bl = allow_limits && rng() % 3 == 0 ? static_cast<Amount>(rng() % 10) : NL;
        Amount ll = allow_limits && rng() % 3 == 0 ? static_cast<Amount>(rng() % (nominal + 1)) : NL;
        out.push_back({fr, nominal, bl, ll});
      }
      return out;
    };
    std::vector<int> cq_parent(static_cast<std::size_t>(n_cq));
    for (int c = 0; c < n_cq; ++c) cq_parent[c] = rng() % 5 == 0 ? -1 : n_cq + static_cast<int>(rng() % n_co);
    for (int c = 0; c < n_cq; ++c) s.add("cq" + std::to_string(c), cq_parent[c], rand_quota(cq_parent[c] >= 0));
    for (int k = 0; k < n_co; ++k) {
      int parent = k == 0 || rng() % 3 == 0 ? -1 : n_cq + static_cast<int>(rng() % k);  // parents have lower ids
      s.add("co" + std::to_string(k), parent, rand_quota(parent >= 0));
    }
    Topology topo = s.build(2);
    QuotaTree t(topo);
    NaiveTree naive(s);
    const int n = n_cq + n_co;
    auto compare = [&](const char* when) {
      for (int node = 0; node < n; ++node) {
        for (int fr = 0; fr < 2; ++fr) {
          if (t.usage(node, fr) != naive.get(naive.usage[node], fr) ||
              t.subtree_quota(node, fr) != naive.get(naive.subtree[node], fr) ||
              t.available_raw(node, fr) != naive.available_raw(node, fr) ||
              t.potential_available(node, fr) != naive.potential(node, fr)) {
            kf_test::fail(__FILE__, __LINE__, std::string("tree differs from its naive twin ") + when + " round " +
                                                  std::to_string(round) + " node " + std::to_string(node));
            return false;
          }
        }
      }
      return true;
    };
    if (!compare("at start")) break;
    // Charge random usages, then release them in another order.
    std::vector<std::tuple<int, int, Amount>> charged;
    for (int k = 0; k < 12; ++k) {
      int cq = static_cast<int>(rng() % static_cast<unsigned>(n_cq));
      int fr = static_cast<int>(rng() % 2);
      Amount v = static_cast<Amount>(rng() % 12);
      t.add_usage(cq, fr, v);
      naive.add_usage(cq, fr, v);
      charged.emplace_back(cq, fr, v);
      if (!compare("after add")) break;
    }
    std::shuffle(charged.begin(), charged.end(), rng);
    for (const auto& [cq, fr, v] : charged) {
      t.remove_usage(cq, fr, v);
      naive.remove_usage(cq, fr, v);
      if (!compare("after remove")) break;
    }
    for (int node = 0; node < n; ++node) {
      for (int fr = 0; fr < 2; ++fr) CHECK_EQ(t.usage(node, fr), Amount{0});
    }
  }
}
