// Heap order (priority, queue timestamp, namespace, name), the sticky head,
// removal, parking by scheduling hash and requeueing of parked workloads.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <kueue_fast/queues.hpp>
#include <kueue_fast/workloads.hpp>

#include "harness.hpp"

using namespace kueue_fast;

namespace {

int add(WorkloadStore& w, const std::string& ns, const std::string& name, int prio, std::int64_t ts,
        std::uint64_t hash = 0) {
  int wid = w.size();
  w.cq.push_back(0);
  w.priority.push_back(prio);
  w.queue_ts.push_back(ts);
  w.hash.push_back(hash);
  w.block.push_back(BLOCK_NONE);
  w.block_message.push_back(-1);
  w.pod_sets_of.push_back({0, 0});
  w.set_names(ns, name, ns + "/" + name);
  w.grow_status();
  return wid;
}

bool reference_before(const WorkloadStore& w, int a, int b) {
  if (w.priority[a] != w.priority[b]) return w.priority[a] > w.priority[b];
  if (w.queue_ts[a] != w.queue_ts[b]) return w.queue_ts[a] < w.queue_ts[b];
  if (w.ns(a) != w.ns(b)) return w.ns(a) < w.ns(b);
  return w.name(a) < w.name(b);
}

}  // namespace

TEST(heap_pops_in_kueue_order) {
  std::mt19937 rng(7);
  WorkloadStore w;
  std::vector<int> wids;
  const char* namespaces[] = {"a", "a-b", "ab", "b", "a.b"};
  for (int i = 0; i < 200; ++i) {
    wids.push_back(add(w, namespaces[rng() % 5], "job-" + std::to_string(rng() % 50) + "-" + std::to_string(i),
                       static_cast<int>(rng() % 3) - 1, static_cast<std::int64_t>(rng() % 4)));
  }
  ClusterQueueQueue q(BEST_EFFORT_FIFO);
  std::vector<int> shuffled = wids;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (int wid : shuffled) q.push(w, wid);
  CHECK(q.check_heap(w));
  // Remove a few from the middle.
  for (int k = 0; k < 20; ++k) q.remove(w, shuffled[k * 7]);
  CHECK(q.check_heap(w));
  std::vector<int> expected;
  for (int wid : wids) {
    if (w.queue_active[wid]) expected.push_back(wid);
  }
  std::sort(expected.begin(), expected.end(), [&](int a, int b) { return reference_before(w, a, b); });
  std::vector<int> got;
  for (int wid = q.pop(w); wid >= 0; wid = q.pop(w)) got.push_back(wid);
  CHECK_EQ(got.size(), expected.size());
  CHECK(got == expected);
}

TEST(namespace_then_name_not_concatenation) {
  // ("a", "x") < ("a-b", "x") as tuples, although "a-b/x" < "a/x" as strings.
  WorkloadStore w;
  int ab = add(w, "a-b", "x", 0, 0);
  int a = add(w, "a", "x", 0, 0);
  ClusterQueueQueue q(STRICT_FIFO);
  q.push(w, ab);
  q.push(w, a);
  CHECK_EQ(q.pop(w), a);
  CHECK_EQ(q.pop(w), ab);
  CHECK_EQ(q.pop(w), -1);
}

TEST(sticky_preemptor_is_the_head_until_it_leaves) {
  WorkloadStore w;
  int hi = add(w, "ns", "high", 10, 0);
  int lo = add(w, "ns", "low", 0, 0);
  ClusterQueueQueue q(BEST_EFFORT_FIFO);
  q.push(w, hi);
  q.push(w, lo);
  CHECK_EQ(q.pop(w), hi);
  CHECK_EQ(q.requeue(w, hi, REQUEUE_GENERIC, false), 1);  // parked
  CHECK_EQ(q.pop(w), lo);
  CHECK_EQ(q.requeue(w, lo, REQUEUE_PENDING_PREEMPTION, false), 0);  // immediate, sticky
  q.queue_inadmissible(w);
  CHECK(q.check_heap(w));
  CHECK_EQ(q.pop(w), lo);  // sticky beats the higher priority
  CHECK_EQ(q.requeue(w, lo, REQUEUE_FAILED_AFTER_NOMINATION, false), 0);
  CHECK_EQ(q.pop(w), lo);  // still sticky whatever it was requeued for
  q.clear_preemptor(lo);   // admitted
  CHECK_EQ(q.pop(w), hi);
}

TEST(parking_by_scheduling_hash) {
  WorkloadStore w;
  int a = add(w, "ns", "a", 0, 0, 42);
  int b = add(w, "ns", "b", 0, 1, 42);
  int c = add(w, "ns", "c", 0, 2, 7);
  int d = add(w, "ns", "d", 0, 3, 42);
  ClusterQueueQueue q(BEST_EFFORT_FIFO);
  for (int x : {a, b, c}) q.push(w, x);
  CHECK_EQ(q.pop(w), a);
  CHECK_EQ(q.requeue(w, a, REQUEUE_NO_FIT, false), 2);  // a and its twin b
  CHECK_EQ(q.n_active(), std::size_t{1});
  q.push(w, d);  // same hash: straight to the inadmissible set
  CHECK_EQ(q.n_active(), std::size_t{1});
  CHECK_EQ(q.n_inadmissible(), std::size_t{3});
  CHECK_EQ(q.queue_inadmissible(w), 3);
  CHECK_EQ(q.n_active(), std::size_t{4});
  CHECK(q.check_heap(w));
  // Strict FIFO requeues everything but NamespaceMismatch immediately.
  ClusterQueueQueue s(STRICT_FIFO);
  WorkloadStore w2;
  int x = add(w2, "ns", "x", 0, 0, 1);
  s.push(w2, x);
  CHECK_EQ(s.pop(w2), x);
  CHECK_EQ(s.requeue(w2, x, REQUEUE_NO_FIT, false), 0);
  CHECK_EQ(s.pop(w2), x);
  CHECK_EQ(s.requeue(w2, x, REQUEUE_NAMESPACE_MISMATCH, false), 1);
  CHECK(!s.has_active());
}

// Dropping stale heap entries changes no decision: a queue with fixed order
// keys drops them eagerly (compaction, and the equivalence-parking scan);
// the same operations on a queue that keeps every stale entry but those of
// finished workloads (keys "may move") pop the same heads, park the same
// workloads and keep the same flags. Many requeues of the parked workloads
// grow the stale entries past the compaction threshold many times over.
// Held workloads come back with a later timestamp (waitForPodsReady): their
// old entries are stale even in the queue with fixed keys.
TEST(heap_compaction_changes_no_decision) {
  for (int round = 0; round < 20; ++round) {
    std::mt19937 rng(static_cast<unsigned>(round) * 7919 + 3);
    WorkloadStore wa, wb;
    const std::uint8_t strategy = round % 4 == 3 ? STRICT_FIFO : BEST_EFFORT_FIFO;
    ClusterQueueQueue qa(strategy, true, /*fixed_keys=*/true), qb(strategy, true, /*fixed_keys=*/false);
    std::vector<int> live;
    const RequeueReason reasons[] = {REQUEUE_GENERIC, REQUEUE_NO_FIT, REQUEUE_PREEMPTION_NO_CANDIDATES,
                                     REQUEUE_PENDING_PREEMPTION, REQUEUE_FAILED_AFTER_NOMINATION};
    for (int step = 0; step < 4000; ++step) {
      // odd rounds: mostly arrivals and removals of pending workloads (each
      // removal leaves a stale entry), few pops (which drop stale entries too)
      const auto op0 = rng() % 10;
      const auto op = !(round % 2) ? op0 : op0 < 4 ? 0 : op0 == 4 ? 3 : 9;
      if (op < 3 || live.empty()) {
        const int n = wa.size();
        const int prio = static_cast<int>(rng() % 3);
        const auto ts = static_cast<std::int64_t>(rng() % 50);
        const std::uint64_t hash = rng() % 4;
        const std::string name = "w" + std::to_string(n);
        CHECK_EQ(add(wa, "ns", name, prio, ts, hash), add(wb, "ns", name, prio, ts, hash));
        qa.push(wa, n);
        qb.push(wb, n);
        live.push_back(n);
      } else if (op < 7) {
        const int a = qa.pop(wa), b = qb.pop(wb);
        CHECK_EQ(a, b);
        if (a >= 0 && rng() % 8 != 0) {  // most heads fail and are requeued
          // odd rounds: no NoFit / PreemptionNoCandidates, so no parking scan
          // cleans the heap and compaction has to
          const std::size_t no_scan[] = {0, 3, 4};
          const RequeueReason r = round % 2 ? reasons[no_scan[rng() % 3]] : reasons[rng() % 5];
          CHECK_EQ(qa.requeue(wa, a, r, false), qb.requeue(wb, b, r, false));
        } else if (a >= 0) {  // admitted: leaves the queue for good
          qa.clear_preemptor(a);
          qb.clear_preemptor(b);
          wa.status[a] = wb.status[b] = STATUS_FINISHED;
          live.erase(std::find(live.begin(), live.end(), a));
        }
      } else if (op < 9) {
        CHECK_EQ(qa.queue_inadmissible(wa), qb.queue_inadmissible(wb));
      } else if (rng() % 2) {
        const std::size_t k = rng() % live.size();
        const int wid = live[k];
        qa.remove(wa, wid);
        qb.remove(wb, wid);
        wa.status[wid] = wb.status[wid] = STATUS_FINISHED;
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        // waitForPodsReady's hold: out of the queue, back with a later
        // timestamp; the entry of its old one is stale, it pops by the new
        const int wid = live[rng() % live.size()];
        qa.remove(wa, wid);
        qb.remove(wb, wid);
        wa.queue_ts[wid] = wb.queue_ts[wid] = wa.queue_ts[wid] + 1 + static_cast<std::int64_t>(rng() % 50);
        qa.push(wa, wid);
        qb.push(wb, wid);
      }
      CHECK_EQ(qa.n_active(), qb.n_active());
      CHECK_EQ(qa.n_inadmissible(), qb.n_inadmissible());
      CHECK_EQ(qa.sticky(), qb.sticky());
    }
    CHECK(wa.queue_active == wb.queue_active);
    CHECK(wa.inadmissible == wb.inadmissible);
    CHECK(qa.check_heap(wa));
    CHECK(qa.heap_entries() <= 2 * qa.n_active() + 65);
    if (round % 2) CHECK(qa.compactions() >= 2);
  }
}
