// Admission fair sharing: the ledger's exact nano arithmetic, its decay and
// penalty rules, the merge sort of preemption candidates and the usage-ordered
// queue. Expected values come from the reference
// (kueue_fast/engine/reference/admission_fair_sharing.py) and Kueue's tests.
#include <algorithm>
#include <limits>
#include <random>
#include <tuple>
#include <stdexcept>
#include <string>
#include <vector>

#include <kueue_fast/admission_fair_sharing.hpp>
#include <kueue_fast/queues.hpp>
#include <kueue_fast/workloads.hpp>

#include "harness.hpp"

using namespace kueue_fast;

namespace {

constexpr std::int64_t NANO = 1000000000;
constexpr std::int64_t T0 = 1767225600LL * NANO;

std::string show_nanos(Nanos v) { return nanos_to_string(v); }

bool throws_range(void (*f)()) {
  try {
    f();
  } catch (const AfsRangeError&) {
    return true;
  }
  return false;
}

Nanos pow2(int k) { return static_cast<Nanos>(1) << k; }

// One canonical unit = 10^9 nanos for every resource (tests use no cpu id).
UsageLedger ledger(double half_life_s, double sampling_s, std::vector<double> weights = {1.0, 1.0}) {
  AfsConfig cfg;
  cfg.usage_half_life_s = half_life_s;
  cfg.usage_sampling_interval_s = sampling_s;
  cfg.resource_weights = std::move(weights);
  return UsageLedger(cfg, {NANO, NANO}, 4);
}

Nanos consumed(const UsageLedger& l, int lq, int resource) {
  for (const NanoAmount& x : l.entry(lq)->resources) {
    if (x.resource == resource) return x.value;
  }
  return -1;
}

}  // namespace

TEST(go_pow_half_step_by_step) {
  // Go's math.Pow(0.5, y) as glibc's exp/log give it (Python's math module, same library).
  CHECK_EQ(go_pow_half(0), 1.0);
  CHECK_EQ(go_pow_half(1), 0.5);
  CHECK_EQ(go_pow_half(0.5), 0x1.6a09e667f3bcdp-1);  // sqrt(0.5)
  CHECK_EQ(go_pow_half(0.1), 0x1.ddb680117ab12p-1);
  CHECK_EQ(go_pow_half(0.3), 0x1.9fdf8bcce533dp-1);
  CHECK_EQ(go_pow_half(2.5), 0x1.6a09e667f3bcdp-3);
  CHECK_EQ(go_pow_half(7.75), 0x1.306fe0a31b715p-8);  // fraction > 0.5: one more whole step
  CHECK_EQ(go_pow_half(1.0 / 3.0), 0x1.965fea53d6e3dp-1);
  CHECK_EQ(go_pow_half(100.6), 0x1.51cb453b95384p-101);
  CHECK_EQ(go_pow_half(5000.0), 0.0);
  CHECK_EQ(alpha_rate(1, 10), 0x1.124bff742a770p-4);
  CHECK_EQ(alpha_rate(300, 0), 0.0);  // no half-life: no history
}

TEST(shortest_decimal_has_the_digits_of_python_repr) {
  auto d = shortest_decimal(0.1);
  CHECK_EQ(d.digits, std::uint64_t{1});
  CHECK_EQ(d.exp10, -1);
  d = shortest_decimal(alpha_rate(1, 10));  // 0.06696700846319259
  CHECK_EQ(d.digits, std::uint64_t{6696700846319259});
  CHECK_EQ(d.exp10, -17);
  d = shortest_decimal(1.5e20);
  CHECK_EQ(d.digits, std::uint64_t{15});
  CHECK_EQ(d.exp10, 19);
  d = shortest_decimal(5e-324);
  CHECK_EQ(d.digits, std::uint64_t{5});
  CHECK_EQ(d.exp10, -324);
  d = shortest_decimal(-0.25);
  CHECK(d.negative);
  CHECK_EQ(d.digits, std::uint64_t{25});
  CHECK(throws_range([] { shortest_decimal(std::numeric_limits<double>::infinity()); }));
  CHECK(throws_range([] { shortest_decimal(std::numeric_limits<double>::quiet_NaN()); }));
}

TEST(mul_by_float_is_exact_and_truncates_towards_zero) {
  // CalculateEntryPenalty of 4 cpu at sampling 1s, half-life 10s (TestScheduleForAFS).
  CHECK_EQ(show_nanos(mul_by_float(4 * NANO, shortest_decimal(alpha_rate(1, 10)))), std::string("267868033"));
  CHECK_EQ(show_nanos(mul_by_float(pow2(100), shortest_decimal(0.1))),
           std::string("126765060022822940149670320537"));
  CHECK_EQ(show_nanos(mul_by_float(-7, shortest_decimal(0.5))), std::string("-3"));
  CHECK_EQ(show_nanos(mul_by_float(3 * NANO, shortest_decimal(1e-20))), std::string("0"));
  CHECK_EQ(show_nanos(mul_by_float(12345, shortest_decimal(1.5e20))), std::string("1851750000000000000000000"));
  CHECK_EQ(show_nanos(mul_by_float(pow2(126), shortest_decimal(1.0))), show_nanos(pow2(126)));
  CHECK(throws_range([] { mul_by_float(pow2(126), shortest_decimal(2.5)); }));
  CHECK(throws_range([] { mul_by_float(7, shortest_decimal(1e300)); }));
}

TEST(nanos_to_double_rounds_like_python_float) {
  CHECK_EQ(nanos_to_double(pow2(53) + 1), 0x1p53);                      // tie: to even (down)
  CHECK_EQ(nanos_to_double(pow2(64) + pow2(11)), 0x1p64);               // tie beyond 64 bits: even
  CHECK_EQ(nanos_to_double(pow2(64) + pow2(11) + 1), 0x1.0000000000001p64);  // just above the tie
  CHECK_EQ(nanos_to_double(pow2(64) + 3 * pow2(11)), 0x1.0000000000002p64);  // tie: to even (up)
  CHECK_EQ(nanos_to_double(pow2(100) + pow2(47)), 0x1p100);
  CHECK_EQ(nanos_to_double(pow2(100) + pow2(47) + 1), 0x1.0000000000001p100);  // sticky bit far below
  CHECK_EQ(nanos_to_double(-(pow2(90) + pow2(37))), -0x1p90);
  const Nanos max = static_cast<Nanos>((static_cast<UNanos>(1) << 127) - 1);
  CHECK_EQ(nanos_to_double(max), 0x1p127);
  CHECK_EQ(nanos_to_double(-max - 1), -0x1p127);
}

TEST(nanos_text_round_trips_and_checks_the_range) {
  const Nanos max = static_cast<Nanos>((static_cast<UNanos>(1) << 127) - 1);
  CHECK_EQ(nanos_to_string(max), std::string("170141183460469231731687303715884105727"));
  CHECK_EQ(show_nanos(nanos_from_string("170141183460469231731687303715884105727")), nanos_to_string(max));
  CHECK_EQ(show_nanos(nanos_from_string("-170141183460469231731687303715884105728")),
           std::string("-170141183460469231731687303715884105728"));
  CHECK(throws_range([] { nanos_from_string("170141183460469231731687303715884105728"); }));
  CHECK(throws_range([] { nanos_from_string("12x"); }));
  CHECK(throws_range([] { add_nanos(static_cast<Nanos>((static_cast<UNanos>(1) << 127) - 1), 1); }));
}

TEST(go_seconds_truncates_like_time_duration) {
  CHECK_EQ(go_seconds(-1500000001), -1.500000001);
  CHECK_EQ(go_seconds(1000000000000000007LL), 1000000000.0);
  CHECK_EQ(go_seconds(0), 0.0);
}

TEST(merge_sum_keeps_every_key) {
  Amounts a{{0, 5}, {2, 0}};
  Amounts b{{1, 7}, {2, 3}};
  Amounts s = merge_sum(a, b);
  CHECK_EQ(s.size(), std::size_t{3});
  CHECK_EQ(show_nanos(s[0].value), std::string("5"));
  CHECK_EQ(s[1].resource, 1);
  CHECK_EQ(show_nanos(s[2].value), std::string("3"));
  CHECK_EQ(merge_sum({}, {{1, 0}}).size(), std::size_t{1});  // a present zero stays a key
}

// --- the ledger: Kueue's TestLocalQueueReconcile cases --------------------------------------------

TEST(history_halves_over_one_half_life_when_nothing_runs) {
  UsageLedger l = ledger(300, 300);
  l.seed(0, {{0, 8 * NANO}}, T0);
  CHECK(!l.due(0, T0 + 299 * NANO));
  CHECK(l.due(0, T0 + 300 * NANO));
  l.sample(0, {}, T0 + 300 * NANO);
  CHECK_EQ(show_nanos(consumed(l, 0, 0)), show_nanos(4 * NANO));
  CHECK_EQ(l.entry(0)->last_update_ns, T0 + 300 * NANO);
}

TEST(history_moves_towards_what_runs) {
  UsageLedger l = ledger(600, 300);  // half-life twice the interval
  l.seed(0, {{0, 8 * NANO}}, T0);
  l.sample(0, {{0, 4 * NANO}}, T0 + 300 * NANO);
  CHECK_EQ(show_nanos(consumed(l, 0, 0)), std::string("6828427124"));  // 8*0.5^0.5 + 4*(1-0.5^0.5), rounded down
  UsageLedger slow = ledger(86400, 300);
  slow.seed(1, {{0, 8 * NANO}}, T0);
  slow.sample(1, {}, T0 + 300 * NANO);
  CHECK_EQ(show_nanos(consumed(slow, 1, 0)), std::string("7980769063"));
}

TEST(half_life_zero_keeps_no_history_and_time_never_goes_back) {
  UsageLedger l = ledger(0, 300);
  l.seed(0, {{0, 8 * NANO}, {1, NANO}}, T0);
  l.sample(0, {{0, 4 * NANO}}, T0);
  CHECK(l.entry(0)->resources.empty());
  UsageLedger m = ledger(300, 300);
  m.seed(2, {{0, 8 * NANO}}, T0 + 10 * NANO);
  m.sample(2, {}, T0);  // earlier than LastUpdate: no decay, LastUpdate kept
  CHECK_EQ(show_nanos(consumed(m, 2, 0)), show_nanos(8 * NANO));
  CHECK_EQ(m.entry(2)->last_update_ns, T0 + 10 * NANO);
}

TEST(penalties_are_pending_until_settled) {
  UsageLedger l = ledger(10, 1);
  // A push creates the entry at now; a second push for the same workload replaces the first.
  l.push_penalty(3, 7, l.entry_penalty({{0, 8 * NANO}}), T0);
  l.push_penalty(3, 7, l.entry_penalty({{0, 4 * NANO}}), T0);
  l.push_penalty(3, 9, l.entry_penalty({{1, 4 * NANO}}), T0);
  CHECK_EQ(l.entry(3)->penalties.size(), std::size_t{2});
  Amounts pending = l.entry(3)->pending_penalty();
  CHECK_EQ(show_nanos(pending[0].value), std::string("267868033"));
  CHECK_EQ(show_nanos(pending[1].value), std::string("267868033"));
  CHECK(l.due(3, T0));  // a pending penalty makes the LocalQueue due
  CHECK_EQ(l.usage(3, 1.0), 0.535736066);
  CHECK_EQ(l.usage(3, 2.0), 0.535736066 / 2.0);
  // Settling decays towards the admitted usage (no time passed: unchanged), then folds the penalty in.
  l.settle(3, 7, {{0, 4 * NANO}}, T0);
  CHECK_EQ(show_nanos(consumed(l, 3, 0)), std::string("267868033"));
  CHECK_EQ(l.entry(3)->penalties.size(), std::size_t{1});
  l.settle(3, 42, {}, T0);  // no record of that workload: nothing folded
  CHECK_EQ(l.entry(3)->penalties.size(), std::size_t{1});
}

TEST(usage_is_weighted_by_resource_and_infinite_at_weight_zero) {
  UsageLedger l = ledger(10, 1, {0.5, 3.0});
  l.seed(0, {{0, 2 * NANO}, {1, NANO}}, T0);
  CHECK_EQ(l.usage(0, 1.0), 0.5 * 2.0 + 3.0 * 1.0);
  CHECK_EQ(l.usage(0, 0.0), std::numeric_limits<double>::infinity());
  CHECK_EQ(l.usage(1, 0.0), std::numeric_limits<double>::infinity());  // even without history
  CHECK_EQ(l.usage(1, 1.0), 0.0);
  CHECK_EQ(l.usage(-1, 1.0), 0.0);  // a workload without LocalQueue
}

TEST(entries_keep_creation_order) {
  UsageLedger l = ledger(10, 1);
  l.push_penalty(2, 1, {}, T0);
  l.seed(0, {}, T0);
  l.seed(2, {{0, NANO}}, T0 + NANO);  // replaced in place
  l.settle(-1, 5, {}, T0);
  CHECK_EQ(l.order().size(), std::size_t{3});
  CHECK_EQ(l.order()[0], 2);
  CHECK_EQ(l.order()[1], 0);
  CHECK_EQ(l.order()[2], -1);
  CHECK(l.entry(2)->penalties.empty());
  CHECK_EQ(l.entry(2)->last_update_ns, T0 + NANO);
}

TEST(merge_sort_is_defined_for_a_comparison_that_is_not_transitive) {
  // Rock-paper-scissors on x % 3, then by value: the reference's merge_sort
  // gives [1, 4, 2, 5, 0, 3, 6] for this input.
  std::vector<int> v{5, 0, 3, 1, 4, 2, 6};
  std::vector<int> scratch;
  auto before = [](int x, int y) { return x % 3 != y % 3 ? (x % 3 + 1) % 3 == y % 3 : x < y; };
  merge_sort(v.data(), v.size(), before, scratch);
  CHECK((v == std::vector<int>{1, 4, 2, 5, 0, 3, 6}));
  std::vector<int> sorted{9, 3, 7, 1};
  merge_sort(sorted.data(), sorted.size(), [](int x, int y) { return x < y; }, scratch);
  CHECK((sorted == std::vector<int>{1, 3, 7, 9}));
}

// --- the usage-ordered queue ---------------------------------------------------------------------------

namespace {

int add(WorkloadStore& w, const std::string& name, int lq, int prio, std::int64_t ts) {
  int wid = w.size();
  w.cq.push_back(0);
  w.priority.push_back(prio);
  w.queue_ts.push_back(ts);
  w.hash.push_back(static_cast<std::uint64_t>(wid));
  w.block.push_back(BLOCK_NONE);
  w.block_message.push_back(-1);
  w.pod_sets_of.push_back({0, 0});
  w.local_queue.push_back(lq);
  w.queue_name.push_back(lq);
  w.set_names("ns", name, "ns/" + name);
  w.grow_status();
  return wid;
}

}  // namespace

TEST(queue_pops_the_lowest_local_queue_usage_first_then_kueue_order) {
  WorkloadStore w;
  const int a1 = add(w, "a1", 0, 10, 1), a2 = add(w, "a2", 0, 0, 0);
  const int b1 = add(w, "b1", 1, 0, 5), b2 = add(w, "b2", 1, 0, 2);
  const int none = add(w, "none", -1, 100, 0);
  ClusterQueueQueue q(BEST_EFFORT_FIFO, true, /*fixed_keys=*/true, /*admission_fair_sharing=*/true);
  for (int wid : {a1, a2, b1, b2, none}) q.push(w, wid);
  CHECK(q.check_heap(w));
  // usage by LocalQueue id + 1: none 3.0, lq 0 2.0, lq 1 1.0
  std::vector<double> usage{3.0, 2.0, 1.0};
  CHECK_EQ(q.pop(w, usage.data()), b2);  // lq 1: older first
  usage = {3.0, 0.5, 1.0};                 // the usages move between pops
  CHECK_EQ(q.pop(w, usage.data()), a1);  // lq 0: higher priority first
  q.requeue(w, a1, REQUEUE_PENDING_PREEMPTION, false);  // a1 becomes the sticky workload
  usage = {1.0, 1.0, 1.0};
  CHECK_EQ(q.pop(w, usage.data()), a1);  // equal usages: the sticky workload first
  q.requeue(w, a1, REQUEUE_PENDING_PREEMPTION, false);
  usage = {1.0, 2.0, 1.0};
  CHECK_EQ(q.pop(w, usage.data()), none);  // sticky only breaks ties of usage; then priority
  CHECK_EQ(q.pop(w, usage.data()), b1);
  CHECK_EQ(q.pop(w, usage.data()), a1);
  CHECK_EQ(q.pop(w, usage.data()), a2);
  CHECK_EQ(q.pop(w, usage.data()), -1);
}

TEST(queue_ignores_an_entry_whose_timestamp_moved_while_out) {
  WorkloadStore w;
  const int x = add(w, "x", 0, 0, 10), y = add(w, "y", 0, 0, 20);
  ClusterQueueQueue q(BEST_EFFORT_FIFO, true, /*fixed_keys=*/true, /*admission_fair_sharing=*/true);
  q.push(w, x);
  q.push(w, y);
  std::vector<double> usage{0.0, 0.0};
  // x is taken while y waits; x comes back with a later queue-order timestamp
  // (a victim reclaimed while borrowing, without PrioritySortingWithinCohort).
  CHECK_EQ(q.pop(w, usage.data()), x);
  w.queue_ts[x] = 30;
  q.push(w, x);
  CHECK_EQ(q.pop(w, usage.data()), y);
  CHECK_EQ(q.pop(w, usage.data()), x);
  // The same with the stale entry still in the heap: x was the sticky head.
  const int z = add(w, "z", 0, 0, 40);
  q.requeue(w, x, REQUEUE_PENDING_PREEMPTION, false);
  q.push(w, z);
  CHECK_EQ(q.pop(w, usage.data()), x);  // sticky: its heap entry (ts 30) stays
  q.remove(w, x);                       // admitted and gone
  w.queue_ts[x] = 50;
  q.push(w, x);
  CHECK_EQ(q.pop(w, usage.data()), z);  // 40 < 50: the entry at 30 is stale
  CHECK_EQ(q.pop(w, usage.data()), x);
  CHECK_EQ(q.pop(w, usage.data()), -1);
}

// Under churn (arrivals, failed heads requeued for every reason, parking,
// requeues of the inadmissible set, removals) the LocalQueue heaps compact
// on their own and every pop is still the minimum of (LocalQueue usage, not
// sticky, Kueue's order) over the active workloads, as queues.py computes it.
TEST(local_queue_heaps_compact_and_pop_the_minimum) {
  std::mt19937 rng(17);
  WorkloadStore w;
  ClusterQueueQueue q(BEST_EFFORT_FIFO, true, /*fixed_keys=*/true, /*admission_fair_sharing=*/true);
  std::vector<double> usage(5, 0.0);  // LocalQueues -1..3
  const RequeueReason reasons[] = {REQUEUE_GENERIC, REQUEUE_NO_FIT, REQUEUE_PREEMPTION_NO_CANDIDATES,
                                   REQUEUE_PENDING_PREEMPTION, REQUEUE_FAILED_AFTER_NOMINATION};
  std::vector<int> live;
  for (int step = 0; step < 6000; ++step) {
    const auto op = rng() % 10;
    if (op < 3 || live.empty()) {
      const int n = w.size();
      add(w, "w" + std::to_string(n), static_cast<int>(rng() % 5) - 1, static_cast<int>(rng() % 3),
          static_cast<std::int64_t>(rng() % 50));
      w.hash[n] = rng() % 4;
      q.push(w, n);
      live.push_back(n);
    } else if (op < 7) {
      for (double& u : usage) u = static_cast<double>(rng() % 3);
      int want = -1;
      auto key = [&](int x) {
        return std::make_tuple(usage[static_cast<std::size_t>(w.local_queue[x] + 1)], x == q.sticky() ? 0 : 1,
                               -w.priority[x], w.queue_ts[x], std::string(w.name(x)), x);
      };
      for (int x : live) {
        if (w.queue_active[x] && (want < 0 || key(x) < key(want))) want = x;
      }
      const int got = q.pop(w, usage.data());
      CHECK_EQ(got, want);
      if (got >= 0 && rng() % 8 != 0) {
        q.requeue(w, got, reasons[rng() % 5], false);
      } else if (got >= 0) {
        q.clear_preemptor(got);
        w.status[got] = STATUS_FINISHED;
        live.erase(std::find(live.begin(), live.end(), got));
      }
    } else if (op < 9) {
      q.queue_inadmissible(w);
    } else {
      const std::size_t k = rng() % live.size();
      q.remove(w, live[k]);
      w.status[live[k]] = STATUS_FINISHED;
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  CHECK(q.check_heap(w));
  CHECK(q.compactions() > 0);
  CHECK(q.heap_entries() <= 2 * q.n_active() + 5 * 65);
}

