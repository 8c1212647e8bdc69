// Pending workloads of one ClusterQueue: the heap, the inadmissible set,
// requeueing. The C++ twin of kueue_fast/engine/reference/queues.py (kueue
// pkg/cache/queue/cluster_queue.go):
//
// * heap order: the sticky preemptor (BestEffortFIFO) first, then higher
//   priority, older queue-order timestamp, namespace, name (then wid, which
//   only matters for duplicate names); the sticky workload stays sticky until
//   it leaves the queue or another workload of the queue issues preemptions;
// * a head that is not admitted goes back to the heap or to the inadmissible
//   set by queueing strategy and requeue reason (RequeueIfNotPresent);
// * BestEffortFIFO parks every heap workload with the same scheduling hash
//   as a NoFit/PreemptionNoCandidates head (SchedulingEquivalenceHashing);
// * with admission fair sharing (queueOrderingFunc) the head is the workload
//   with the lowest LocalQueue usage first, then the order above (sticky
//   workload included), under the usages of the moment it is taken.
//
// The heap is a binary heap of (key captured at push, wid) entries with lazy
// deletion, exactly like the reference's heapq: membership in the active set
// is the WorkloadStore::queue_active flag; entries of workloads no longer
// active are dropped when they reach the top, or by compaction when they
// outnumber the active ones (see compact()).
//
// With admission fair sharing the usage part of the key changes between pops
// (sampling, entry penalties), but it is the same for every workload of one
// LocalQueue: the queue keeps one heap per LocalQueue, keyed as above, and a
// pop compares the heads of those heaps under the current usages (the
// reference searches all its active workloads). The reference computes the
// key at pop time, so here an entry whose key is no longer the workload's
// (its queue-order timestamp moved while it was out of the queue) is stale
// too; its current entry was pushed when it came back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <kueue_fast/types.hpp>
#include <kueue_fast/workloads.hpp>

namespace kueue_fast {

class ClusterQueueQueue {
 public:
  // fixed_keys: a workload's order key (priority, queue-order timestamp)
  // moves only while it is out of its queue, by a waitForPodsReady hold or an
  // admission check's eviction (false when victims reclaimed while borrowing
  // also get a new timestamp, PrioritySortingWithinCohort off); it decides
  // which stale heap entries compaction may drop. admission_fair_sharing: the ClusterQueue is
  // UsageBasedAdmissionFairSharing (one heap per LocalQueue).
  explicit ClusterQueueQueue(std::uint8_t strategy = BEST_EFFORT_FIFO, bool equivalence_hashing = true,
                             bool fixed_keys = true, bool admission_fair_sharing = false)
      : strategy_(strategy),
        equivalence_hashing_(equivalence_hashing),
        fixed_keys_(fixed_keys),
        afs_(admission_fair_sharing) {}

  bool has_active() const noexcept { return n_active_ > 0; }
  std::size_t n_active() const noexcept { return n_active_; }
  std::size_t n_inadmissible() const noexcept { return n_inadmissible_; }
  int sticky() const noexcept { return sticky_; }
  int preemptor() const noexcept { return preemptor_; }
  std::int64_t pop_cycle() const noexcept { return pop_cycle_; }
  std::int64_t queue_inadmissible_cycle() const noexcept { return queue_inadmissible_cycle_; }

  // A new or updated pending workload (Kueue PushOrUpdate).
  void push(WorkloadStore& w, int wid);
  // Could the next pop return wid (just pushed)? False only when it was
  // parked or another workload is sure to come first (the sticky one, or a
  // live top entry): then the queue's head is what it was before the push.
  bool may_be_head(const WorkloadStore& w, int wid) const noexcept;
  // The head, removed from the heap, or -1. With admission fair sharing,
  // lq_usage[lq + 1] is the usage of LocalQueue lq (-1 included).
  int pop(WorkloadStore& w, const double* lq_usage = nullptr);
  bool admission_fair_sharing() const noexcept { return afs_; }
  void remove(WorkloadStore& w, int wid);
  // The workload left the queue (admitted, deleted): it is no longer sticky.
  // Kueue ClusterQueue.delete is the only place that clears the sticky workload.
  void clear_preemptor(int wid) noexcept {
    if (sticky_ == wid) sticky_ = -1;
    if (preemptor_ == wid) preemptor_ = -1;
  }
  // A head that was not admitted (Kueue RequeueIfNotPresent). Returns how
  // many workloads were newly parked (the head and its equivalents).
  int requeue(WorkloadStore& w, int wid, RequeueReason reason, bool pending_flavors);
  // Move parked workloads back to the heap (queueInadmissibleWorkloads);
  // workloads whose namespace no longer matches stay parked.
  int queue_inadmissible(WorkloadStore& w);

  // Ask for what a pop will read, in two stages some ClusterQueues apart:
  // the heap's first four levels (a pop walks them whatever its path), then,
  // once they have arrived, the top entry's workload fields.
  void prefetch_top() const noexcept {
    if (afs_ || heap_.empty()) return;
    const char* p = reinterpret_cast<const char*>(heap_.data());
    const std::size_t bytes = std::min<std::size_t>(heap_.size(), 15) * sizeof(HeapEntry);
    for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
  }
  void prefetch_top_workload(const WorkloadStore& w) const noexcept {
    if (afs_ || heap_.empty()) return;
    const int wid = heap_.front().wid;
    __builtin_prefetch(&w.queue_active[static_cast<std::size_t>(wid)]);
    __builtin_prefetch(&w.queue_ts[static_cast<std::size_t>(wid)]);
  }
  // For tests: is the heap property intact?
  bool check_heap(const WorkloadStore& w) const;
  std::size_t heap_entries() const noexcept {
    std::size_t n = heap_.size();
    for (const LqHeap& h : lq_heaps_) n += h.heap.size();
    return n;
  }
  std::size_t compactions() const noexcept { return compactions_; }

 private:
  // A heap entry: the order key as it was when the workload was pushed (the
  // reference's heapq holds (key, wid) tuples the same way), and the
  // scheduling hash for equivalence parking. Entries of workloads that left
  // the active set stay until they reach the top (lazy deletion, as heapq).
  struct HeapEntry {
    std::int64_t queue_ts;
    std::int32_t priority;
    std::int32_t wid;
    std::uint64_t hash;
  };
  static bool before(const WorkloadStore& w, const HeapEntry& a, const HeapEntry& b) noexcept {
    if (a.priority != b.priority) return a.priority > b.priority;
    if (a.queue_ts != b.queue_ts) return a.queue_ts < b.queue_ts;
    if (a.wid == b.wid) return false;
    int c = w.compare_names(a.wid, b.wid);
    if (c != 0) return c < 0;
    return a.wid < b.wid;
  }
  void push_active(WorkloadStore& w, int wid);
  // One LocalQueue's heap (admission fair sharing), compacted on its own.
  struct LqHeap {
    std::int32_t lq;
    std::vector<HeapEntry> heap;
    std::size_t compact_at = 64;
  };
  void heap_push(WorkloadStore& w, const HeapEntry& e);
  static void sift_up(const WorkloadStore& w, std::vector<HeapEntry>& heap, const HeapEntry& e);
  static void heap_pop_top(const WorkloadStore& w, std::vector<HeapEntry>& heap);
  static void make_heap(const WorkloadStore& w, std::vector<HeapEntry>& heap);
  void compact(WorkloadStore& w);
  void compact_lq(WorkloadStore& w, LqHeap& h);
  LqHeap& lq_heap_of(const WorkloadStore& w, int wid);
  int pop_afs(WorkloadStore& w, const double* lq_usage);
  template <class F>
  void for_each_entry(F&& f) const {
    for (const HeapEntry& e : heap_) f(e);
    for (const LqHeap& h : lq_heaps_) {
      for (const HeapEntry& e : h.heap) f(e);
    }
  }
  void deactivate(WorkloadStore& w, int wid) noexcept {
    if (w.queue_active[wid]) {
      w.queue_active[wid] = 0;
      --n_active_;
    }
  }
  void park(WorkloadStore& w, int wid);
  bool hash_parked(std::uint64_t h) const noexcept;

  std::uint8_t strategy_;
  bool equivalence_hashing_;  // SchedulingEquivalenceHashing
  bool fixed_keys_;
  bool afs_;                  // UsageBasedAdmissionFairSharing: lq_heaps_ instead of heap_
  std::vector<HeapEntry> heap_;
  std::vector<LqHeap> lq_heaps_;
  std::unordered_map<std::int32_t, std::int32_t> lq_slot_;  // LocalQueue id -> index in lq_heaps_
  std::size_t compact_at_ = 64;  // heap_ size that triggers the next compaction (keys not fixed)
  std::size_t compactions_ = 0;
  std::size_t n_active_ = 0;
  // Members of the inadmissible set, possibly with stale entries (the
  // WorkloadStore flag is the truth); compacted as it grows.
  std::vector<std::int32_t> inadmissible_;
  std::size_t n_inadmissible_ = 0;
  std::vector<std::uint64_t> parked_hashes_;  // sorted
  std::vector<std::int32_t> scratch_;
  // The sticky workload (BestEffortFIFO): the last one requeued after issuing
  // preemptions (or deferred); it is the head whenever it is in the heap.
  int sticky_ = -1;
  // The workload waiting for the preemptions it issued, under either strategy
  // (Kueue preemptorWorkload; read by PrioritizePreemptorWorkloads).
  int preemptor_ = -1;
  std::int64_t pop_cycle_ = 0;
  std::int64_t queue_inadmissible_cycle_ = -1;
};

}  // namespace kueue_fast
