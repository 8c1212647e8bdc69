// The whole engine under random cycles (and sanitizers, with
// -DKUEUE_FAST_SANITIZE=ON): debug checks on (every target search leaves the
// tree byte-identical), and after every cycle the tree holds exactly what the
// admitted workloads charge, cohorts what their children use beyond their
// local quota; every message formats.
#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <kueue_fast/scheduler.hpp>

#include "harness.hpp"

using namespace kueue_fast;

namespace {

TopologySpec make_topology(std::mt19937_64& rng, bool fair) {
  TopologySpec t;
  t.resource_names = {"cpu", "memory", "pods"};
  t.flavor_names = {"on-demand", "spot"};
  for (int f = 0; f < 2; ++f)
    for (int r = 0; r < 3; ++r) t.fr_pairs.emplace_back(f, r);
  const int n_cq = 6;
  t.n_cq = n_cq;
  for (int c = 0; c < n_cq; ++c) t.node_names.push_back("cq-" + std::to_string(c));
  t.node_names.insert(t.node_names.end(), {"root", "left", "right"});
  const int root = n_cq, left = n_cq + 1, right = n_cq + 2;
  for (int c = 0; c < n_cq; ++c) t.node_parent.push_back(c == 5 ? -1 : (c < 3 ? left : right));
  t.node_parent.insert(t.node_parent.end(), {-1, root, root});
  for (int n = 0; n < n_cq + 3; ++n) {
    std::vector<QuotaEntry> q;
    if (n < n_cq || n == root) {
      for (int fr = 0; fr < 6; ++fr) {
        if (fr % 3 == 2 && n >= n_cq) continue;
        Amount unit = fr % 3 == 0 ? 1000 : (fr % 3 == 1 ? Amount{1} << 30 : 1);
        Amount nominal = static_cast<Amount>(rng() % 6) * unit;
        Amount bl = t.node_parent[n] >= 0 && rng() % 3 == 0 ? static_cast<Amount>(rng() % 4) * unit : NO_LIMIT;
        Amount ll = t.node_parent[n] >= 0 && rng() % 3 == 0 ? static_cast<Amount>(rng() % 3) * unit : NO_LIMIT;
        if (ll != NO_LIMIT && ll > nominal) ll = nominal;
        q.push_back({fr, nominal, bl, ll});
      }
    }
    t.quotas.push_back(q);
    t.fair_weight.push_back(rng() % 4 == 0 ? 0.5 : 1.0);
  }
  for (int c = 0; c < n_cq; ++c) {
    ClusterQueueSpec cq;
    cq.name = t.node_names[c];
    cq.groups.push_back({{0, 1, 2}, {0, 1}});
    cq.strategy = rng() % 3 == 0 ? STRICT_FIFO : BEST_EFFORT_FIFO;
    cq.within_cluster_queue = static_cast<std::uint8_t>(rng() % 3);
    cq.reclaim_within_cohort = static_cast<std::uint8_t>(rng() % 4 == 0 ? 3 : rng() % 2);
    cq.borrow_within_cohort = !fair && cq.reclaim_within_cohort != NEVER && rng() % 2 ? LOWER_PRIORITY : NEVER;
    cq.when_can_borrow = static_cast<std::uint8_t>(rng() % 2);
    cq.when_can_preempt = static_cast<std::uint8_t>(rng() % 2);
    t.cluster_queues.push_back(cq);
  }
  t.fair_sharing = fair;
  return t;
}

WorkloadInput make_workload(std::mt19937_64& rng, int i, int n_cq) {
  WorkloadInput in;
  in.ns = "ns";
  in.name = "wl-" + std::to_string(i);
  in.uid = "uid-" + std::to_string(i);
  in.cluster_queue = static_cast<std::int64_t>(rng() % static_cast<unsigned>(n_cq));
  in.priority = static_cast<std::int64_t>(rng() % 4);
  in.queue_ts = static_cast<std::int64_t>(rng() % 50);
  in.scheduling_hash = rng() % 8;
  const int n_ps = 1 + static_cast<int>(rng() % 2);
  for (int p = 0; p < n_ps; ++p) {
    WorkloadInput::PodSet ps;
    ps.name = "ps-" + std::to_string(p);
    ps.count = 1 + static_cast<std::int64_t>(rng() % 3);
    ps.min_count = p == 0 && rng() % 4 == 0 ? 0 : -1;
    ps.flavor_class = static_cast<std::int64_t>(rng() % 2);
    ps.requests.push_back({0, static_cast<Amount>(1 + rng() % 3) * 500});
    if (rng() % 2) ps.requests.push_back({1, static_cast<Amount>(rng() % 3) << 30});
    in.pod_sets.push_back(ps);
  }
  return in;
}

// Cohort usage = sum over children of max(0, child usage - child local quota);
// ClusterQueue usage = what its admitted workloads charge.
bool tree_consistent(const Engine& e, std::string& why) {
  const QuotaTree& t = e.tree();
  const WorkloadStore& w = e.workloads();
  const int n_fr = t.n_fr();
  std::vector<Amount> cq_usage(static_cast<std::size_t>(t.n_nodes() * n_fr), 0);
  for (int wid = 0; wid < w.size(); ++wid) {
    if (w.status[wid] != STATUS_ADMITTED || w.admitted_cq[wid] < 0) continue;
    e.for_each_usage(wid, [&](int fr, Amount v) { cq_usage[t.at(w.admitted_cq[wid], fr)] += v; });
  }
  for (int n = 0; n < t.n_nodes(); ++n) {
    for (int fr = 0; fr < n_fr; ++fr) {
      Amount want;
      if (t.is_cq(n)) {
        want = cq_usage[t.at(n, fr)];
      } else {
        want = 0;
        for (int c = 0; c < t.n_nodes(); ++c) {
          if (t.parent(c) == n) want += std::max<Amount>(0, t.usage(c, fr) - t.local_quota(c, fr));
        }
      }
      if (t.usage(n, fr) != want) {
        why = "node " + std::to_string(n) + " fr " + std::to_string(fr) + ": usage " + std::to_string(t.usage(n, fr)) +
              ", want " + std::to_string(want);
        return false;
      }
    }
  }
  return true;
}

}  // namespace

TEST(engine_random_cycles_keep_the_tree_consistent) {
  for (int round = 0; round < 60; ++round) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(round) * 7919 + 1);
    const bool fair = round % 3 == 0;
    Engine e(make_topology(rng, fair), /*release_evictions=*/round % 4 != 0);
    e.set_debug_checks(true);
    e.add_flavor_class({std::nullopt, std::nullopt});
    e.add_flavor_class({std::nullopt, std::optional<std::string>("untolerated taint {spot true NoSchedule <nil>}")});
    int next = 0;
    for (int i = 0; i < 30; ++i) e.add_workload(make_workload(rng, next++, 6));
    for (int cycle = 1; cycle <= 12; ++cycle) {
      const CycleReport& r = e.run_cycle(cycle * 1000000000LL);
      CHECK(r.heads <= 6);
      // A workload admitted in a cycle is no victim of that cycle (kueue
      // scheduler.go processEntry adds only its usage to the snapshot).
      for (std::int32_t v : r.preempted) {
        if (std::find(r.admitted.begin(), r.admitted.end(), v) != r.admitted.end()) {
          kf_test::fail(__FILE__, __LINE__, "round " + std::to_string(round) + " cycle " + std::to_string(cycle) +
                                                ": workload " + std::to_string(v) + " admitted and preempted");
          return;
        }
      }
      std::string why;
      if (!tree_consistent(e, why)) {
        kf_test::fail(__FILE__, __LINE__, "round " + std::to_string(round) + " cycle " + std::to_string(cycle) + ": " + why);
        return;
      }
      for (int wid = 0; wid < e.n_workloads(); ++wid) {
        std::string m = e.message(wid) + e.eviction_message(wid) + e.eviction_reason(wid);
        (void)m;
        (void)e.state(wid);
      }
      // Workloads come and go between cycles; the controller mode releases evictions itself.
      for (int k = 0; k < 3; ++k) e.add_workload(make_workload(rng, next++, 6));
      if (e.n_workloads() > 0 && rng() % 2) e.remove_workload(static_cast<int>(rng() % static_cast<unsigned>(e.n_workloads())));
      for (int wid = 0; wid < e.n_workloads(); ++wid) {
        if (rng() % 8 == 0) e.release_eviction(wid);
      }
    }
  }
}

TEST(engine_rejects_bad_input_without_changing_state) {
  std::mt19937_64 rng(3);
  Engine e(make_topology(rng, false), true);
  e.add_flavor_class({std::nullopt, std::nullopt});
  WorkloadInput bad = make_workload(rng, 0, 6);
  bad.cluster_queue = 99;
  bool threw = false;
  try {
    e.add_workload(bad);
  } catch (const EngineInputError&) {
    threw = true;
  }
  CHECK(threw);
  CHECK_EQ(e.n_workloads(), 0);
  WorkloadInput bad_class = make_workload(rng, 0, 6);
  bad_class.pod_sets[0].flavor_class = 5;
  threw = false;
  try {
    e.add_workload(bad_class);
  } catch (const EngineInputError&) {
    threw = true;
  }
  CHECK(threw);
  threw = false;
  try {
    e.remove_workload(0);
  } catch (const EngineInputError&) {
    threw = true;
  }
  CHECK(threw);
}

// run_until_stable and remove_workloads against run_cycle and remove_workload
// one at a time: same admissions and evictions in the same cycles, same end
// state; no cycle at all when nothing has a head to pop.
TEST(engine_bulk_calls_match_one_at_a_time) {
  for (int round = 0; round < 30; ++round) {
    std::mt19937_64 rng_a(static_cast<std::uint64_t>(round) * 104729 + 5), rng_b = rng_a;
    const bool fair = round % 3 == 0;
    Engine a(make_topology(rng_a, fair), true), b(make_topology(rng_b, fair), true);
    for (Engine* e : {&a, &b}) {
      e->set_debug_checks(true);
      e->add_flavor_class({std::nullopt, std::nullopt});
      e->add_flavor_class({std::nullopt, std::optional<std::string>("untolerated taint {spot true NoSchedule <nil>}")});
    }
    std::mt19937_64 wl_rng(static_cast<std::uint64_t>(round) + 17);
    int next = 0;
    for (int instant = 1; instant <= 8; ++instant) {
      for (int k = 0; k < 8; ++k) {
        WorkloadInput in = make_workload(wl_rng, next++, 6);
        a.add_workload(in);
        b.add_workload(in);
      }
      const std::int64_t now = instant * 1000000000LL;
      // a: the loop the simulator used to run in Python
      std::vector<std::int32_t> adm, adm_cycle, pre, pre_cycle;
      std::int64_t cycles = 0;
      bool stable = true;
      for (;;) {
        if (cycles == 50) {
          stable = false;
          break;
        }
        if (!a.has_heads()) break;
        const CycleReport& r = a.run_cycle(now);
        for (std::int32_t w : r.admitted) adm.push_back(w), adm_cycle.push_back(static_cast<std::int32_t>(cycles));
        for (std::int32_t w : r.preempted) pre.push_back(w), pre_cycle.push_back(static_cast<std::int32_t>(cycles));
        ++cycles;
        if (r.admitted.empty() && r.preempted.empty() && r.newly_parked == 0) break;
      }
      const StableRun& run = b.run_until_stable(now, 50);
      CHECK_EQ(run.cycles, cycles);
      CHECK_EQ(run.stable, stable);
      CHECK(run.admitted == adm);
      CHECK(run.admitted_cycle == adm_cycle);
      CHECK(run.preempted == pre);
      CHECK(run.preempted_cycle == pre_cycle);
      // finishes: a few admitted and pending ones, removed one by one vs at once
      std::vector<std::int64_t> gone;
      for (int wid = 0; wid < a.n_workloads(); ++wid) {
        if (a.workloads().status[wid] != STATUS_FINISHED && wl_rng() % 4 == 0) gone.push_back(wid);
      }
      for (std::int64_t wid : gone) a.remove_workload(static_cast<int>(wid));
      b.remove_workloads(gone.data(), gone.size());
      for (int wid = 0; wid < a.n_workloads(); ++wid) {
        CHECK_EQ(static_cast<int>(a.state(wid)), static_cast<int>(b.state(wid)));
        CHECK_EQ(a.workloads().admitted_cq[wid], b.workloads().admitted_cq[wid]);
        CHECK_EQ(a.workloads().queue_active[wid], b.workloads().queue_active[wid]);
        CHECK_EQ(a.workloads().inadmissible[wid], b.workloads().inadmissible[wid]);
        CHECK_EQ(a.eviction_reason_code(wid), b.eviction_reason_code(wid));
      }
    }
    // nothing left with a head (the pending workloads removed; cycling until
    // none is left need not end: a reclaimed workload can come back forever):
    // no cycle
    std::vector<std::int64_t> pending;
    for (int wid = 0; wid < b.n_workloads(); ++wid) {
      if (b.workloads().status[wid] == STATUS_PENDING) pending.push_back(wid);
    }
    b.remove_workloads(pending.data(), pending.size());
    CHECK(!b.has_heads());
    const std::int64_t before = b.cycle();
    const StableRun& idle = b.run_until_stable(200000000000LL, 50);
    CHECK_EQ(idle.cycles, std::int64_t{0});
    CHECK(idle.stable);
    CHECK_EQ(b.cycle(), before);
  }
}

// Many small bulk additions stay linear: capacity grows geometrically.
TEST(workload_store_grows_geometrically) {
  WorkloadStore w;
  std::size_t reallocations = 0, cap = w.cq.capacity();
  for (int i = 0; i < 100000; ++i) {
    w.reserve_more(1, 1, 1, 16);
    w.cq.push_back(0);
    if (w.cq.capacity() != cap) ++reallocations, cap = w.cq.capacity();
  }
  CHECK(reallocations < 40);
}

// Kueue scheduler.go processEntry: an admission adds only its usage to the
// cycle's snapshot, so a later entry whose targets overlap and whose
// assignment is recomputed cannot pick the workload just admitted
// (preemption.go findCandidates reads the snapshot's workload lists). The
// input of the public scenario kueue-min-12-no-same-cycle-victim.
TEST(engine_workload_admitted_in_the_cycle_is_no_victim) {
  TopologySpec t;
  t.resource_names = {"cpu"};
  t.flavor_names = {"f"};
  t.fr_pairs = {{0, 0}};
  t.n_cq = 3;
  t.node_names = {"cq-a", "cq-c", "cq-x", "co"};
  t.node_parent = {3, 3, 3, -1};
  t.quotas = {{{0, 5000, NO_LIMIT, NO_LIMIT}}, {{0, 1000, NO_LIMIT, NO_LIMIT}}, {{0, 0, NO_LIMIT, NO_LIMIT}}, {}};
  t.fair_weight = {1.0, 1.0, 1.0, 1.0};
  for (int c = 0; c < 3; ++c) {
    ClusterQueueSpec cq;
    cq.name = t.node_names[c];
    cq.groups.push_back({{0}, {0}});
    t.cluster_queues.push_back(cq);
  }
  t.cluster_queues[0].reclaim_within_cohort = ANY;
  t.cluster_queues[1].reclaim_within_cohort = ANY;
  t.cluster_queues[1].borrow_within_cohort = LOWER_PRIORITY;
  t.gates.priority_sorting_within_cohort = false;
  Engine e(t, /*release_evictions=*/true);
  e.set_debug_checks(true);
  e.add_flavor_class({std::nullopt});
  auto workload = [](const char* ns, const char* name, int cq, std::int64_t prio, std::int64_t ts, Amount cpu) {
    WorkloadInput in;
    in.ns = ns;
    in.name = name;
    in.uid = std::string(ns) + "/" + name;
    in.cluster_queue = cq;
    in.priority = prio;
    in.queue_ts = ts;
    in.scheduling_hash = static_cast<std::uint64_t>(ts);
    WorkloadInput::PodSet ps;
    ps.name = "main";
    ps.count = 1;
    ps.requests.push_back({0, cpu});
    in.pod_sets.push_back(ps);
    return in;
  };
  WorkloadInput v = workload("ns-x", "v", 2, 0, 0, 5000);
  v.has_admission = true;
  v.admission_cq = 2;
  v.admission.push_back({1, {{0, 0, 5000}}, {}});
  const int wv = e.add_workload(v);
  const int wa = e.add_workload(workload("ns-a", "a", 0, 0, 1, 4000));
  const int wb = e.add_workload(workload("ns-x", "b", 2, 0, 2, 1000));
  const int wc = e.add_workload(workload("ns-c", "c", 1, 10, 3, 2000));
  const CycleReport& r = e.run_cycle(10);
  CHECK_EQ(r.admitted.size(), std::size_t{1});
  CHECK(!r.admitted.empty() && r.admitted[0] == wb);
  CHECK_EQ(r.preempted.size(), std::size_t{1});
  CHECK(!r.preempted.empty() && r.preempted[0] == wv);
  CHECK_EQ(static_cast<int>(e.state(wb)), static_cast<int>(STATE_ADMITTED));
  CHECK_EQ(static_cast<int>(e.state(wa)), static_cast<int>(STATE_PENDING));
  CHECK_EQ(static_cast<int>(e.state(wc)), static_cast<int>(STATE_PENDING));
}

// An admission check's Retry (requeue, ordered by the eviction time until
// admitted again) and Rejected (deactivated: never queued again), issued
// after the cycle they belong to (cluster/cluster.py _evict_for_failed_checks).
TEST(engine_evict_after_cycle_requeues_by_eviction_time_or_deactivates) {
  TopologySpec t;
  t.resource_names = {"cpu"};
  t.flavor_names = {"f"};
  t.fr_pairs = {{0, 0}};
  t.n_cq = 1;
  t.node_names = {"cq"};
  t.node_parent = {-1};
  t.quotas = {{{0, 1000, NO_LIMIT, NO_LIMIT}}};
  t.fair_weight = {1.0};
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.groups.push_back({{0}, {0}});
  t.cluster_queues.push_back(cq);
  Engine e(t, /*release_evictions=*/true);
  e.add_flavor_class({std::nullopt});
  auto workload = [](const char* name, std::int64_t ts) {
    WorkloadInput in;
    in.ns = "ns";
    in.name = name;
    in.uid = std::string("ns/") + name;
    in.cluster_queue = 0;
    in.queue_ts = ts;
    in.scheduling_hash = static_cast<std::uint64_t>(ts);
    WorkloadInput::PodSet ps;
    ps.name = "main";
    ps.count = 1;
    ps.requests.push_back({0, 1000});
    in.pod_sets.push_back(ps);
    return in;
  };
  const int a = e.add_workload(workload("a", 1));
  const int b = e.add_workload(workload("b", 5));
  CHECK_EQ(e.run_cycle(10).admitted.size(), std::size_t{1});
  CHECK_EQ(static_cast<int>(e.state(a)), static_cast<int>(STATE_ADMITTED));
  e.evict_after_cycle(a, "AdmissionCheck", "Evicted due to AdmissionCheck in Retry state: \"p\"", 10, true);
  CHECK_EQ(static_cast<int>(e.state(a)), static_cast<int>(STATE_EVICTED));  // in the cycle just run
  CHECK_EQ(e.workloads().queue_ts[a], std::int64_t{10});
  e.run_cycle(11);  // b (ts 5) goes before a (ts 10 now)
  CHECK_EQ(static_cast<int>(e.state(b)), static_cast<int>(STATE_ADMITTED));
  CHECK_EQ(static_cast<int>(e.state(a)), static_cast<int>(STATE_PENDING));
  e.evict_after_cycle(b, "DeactivatedDueToAdmissionCheck", "deactivated", -1, false);
  e.run_cycle(12);
  CHECK_EQ(static_cast<int>(e.state(a)), static_cast<int>(STATE_ADMITTED));
  CHECK_EQ(e.workloads().queue_ts[a], std::int64_t{1});  // admitted again: the creation time
  e.remove_workload(a);
  e.run_cycle(13);
  CHECK_EQ(static_cast<int>(e.state(b)), static_cast<int>(STATE_PENDING));  // never queued again
}
