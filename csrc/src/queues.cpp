// Same rules as kueue_fast/_reference/queues.py.
#include <kueue_fast/queues.hpp>

#include <algorithm>

namespace kueue_fast {

void ClusterQueueQueue::heap_push(WorkloadStore& w, const HeapEntry& e) {
  if (fixed_keys_ ? heap_.size() > 2 * n_active_ + 64 : heap_.size() >= compact_at_) compact(w);
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (!before(w, e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void ClusterQueueQueue::heap_pop_top(const WorkloadStore& w) {
  HeapEntry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(w, heap_[child + 1], heap_[child])) ++child;
    if (!before(w, heap_[child], last)) break;
    heap_[i] = heap_[child];
    i = child;
  }
  heap_[i] = last;
}

// Drops stale entries that can never pop a workload again. Lazy deletion
// alone lets them pile up: every requeue of the inadmissible workloads pushes
// a new entry for each, and the entries left by parking stay until they reach
// the top (in the default simulation heaps grew to ~400k entries, 96% of pops
// were stale, and the equivalence-parking scan read 2.6 G entries).
//
// When order keys are fixed, every entry of one workload is identical and
// interchangeable: one entry per active workload is kept, none for inactive
// ones (a later push brings an identical entry back), so the sequence of
// popped heads is unchanged. Called when the heap holds more than twice the
// active workloads: each compaction drops at least half, amortized O(1).
//
// When keys can move, a stale entry with an old key would still pop its
// workload at the old place once it is active again (heapq does the same),
// so only entries of finished workloads go, and the next compaction waits
// until the heap has doubled from what this one kept.
void ClusterQueueQueue::compact(WorkloadStore& w) {
  ++compactions_;
  std::size_t out = 0;
  if (fixed_keys_) {
    // queue_active 2 marks "entry already kept" during the pass
    for (const HeapEntry& e : heap_) {
      if (w.queue_active[e.wid] == 1) {
        w.queue_active[e.wid] = 2;
        heap_[out++] = e;
      }
    }
    for (std::size_t k = 0; k < out; ++k) w.queue_active[heap_[k].wid] = 1;
  } else {
    for (const HeapEntry& e : heap_) {
      if (w.status[e.wid] != STATUS_FINISHED) heap_[out++] = e;
    }
  }
  if (out != heap_.size()) {
    heap_.resize(out);
    make_heap(w);
  }
  compact_at_ = std::max<std::size_t>(64, 2 * heap_.size());
}

void ClusterQueueQueue::make_heap(const WorkloadStore& w) {
  // Same layout rule as heap_push / heap_pop_top: a parent comes before its children.
  std::make_heap(heap_.begin(), heap_.end(), [&w](const HeapEntry& a, const HeapEntry& b) { return before(w, b, a); });
}

void ClusterQueueQueue::push_active(WorkloadStore& w, int wid) {
  if (w.queue_active[wid]) return;
  w.queue_active[wid] = 1;
  ++n_active_;
  heap_push(w, {w.queue_ts[wid], w.priority[wid], wid, w.hash[wid]});
}

bool ClusterQueueQueue::hash_parked(std::uint64_t h) const noexcept {
  return std::binary_search(parked_hashes_.begin(), parked_hashes_.end(), h);
}

void ClusterQueueQueue::park(WorkloadStore& w, int wid) {
  if (w.inadmissible[wid]) return;
  w.inadmissible[wid] = 1;
  ++n_inadmissible_;
  inadmissible_.push_back(wid);
  if (inadmissible_.size() > 2 * n_inadmissible_ + 64) {
    // Drop stale entries and duplicates (flag 2 marks "kept" during the pass).
    std::size_t out = 0;
    for (std::int32_t x : inadmissible_) {
      if (w.inadmissible[x] == 1) {
        w.inadmissible[x] = 2;
        inadmissible_[out++] = x;
      }
    }
    inadmissible_.resize(out);
    for (std::int32_t x : inadmissible_) w.inadmissible[x] = 1;
  }
}

void ClusterQueueQueue::push(WorkloadStore& w, int wid) {
  if (w.inadmissible[wid]) {
    w.inadmissible[wid] = 0;
    --n_inadmissible_;
  }
  if (strategy_ == BEST_EFFORT_FIFO && !w.queue_active[wid] && hash_parked(w.hash[wid])) {
    park(w, wid);
    return;
  }
  push_active(w, wid);
}

int ClusterQueueQueue::pop(WorkloadStore& w) {
  ++pop_cycle_;
  if (sticky_ >= 0 && w.queue_active[sticky_]) {
    int wid = sticky_;
    deactivate(w, wid);  // its heap entry stays, as in heapq
    return wid;
  }
  while (!heap_.empty()) {
    int wid = heap_.front().wid;
    heap_pop_top(w);
    if (w.queue_active[wid]) {
      deactivate(w, wid);
      return wid;
    }
  }
  return -1;
}

void ClusterQueueQueue::remove(WorkloadStore& w, int wid) {
  deactivate(w, wid);
  if (w.inadmissible[wid]) {
    w.inadmissible[wid] = 0;
    --n_inadmissible_;
  }
  clear_preemptor(wid);
}

int ClusterQueueQueue::requeue(WorkloadStore& w, int wid, RequeueReason reason, bool pending_flavors) {
  bool immediate;
  if (strategy_ == STRICT_FIFO) {
    immediate = reason != REQUEUE_NAMESPACE_MISMATCH;
  } else {
    immediate = reason == REQUEUE_FAILED_AFTER_NOMINATION || reason == REQUEUE_PENDING_PREEMPTION ||
                reason == REQUEUE_PREEMPTION_FAILED;
  }
  // Kueue requeueIfNotPresent (ff69552): requeued with PendingPreemption, the
  // workload becomes the sticky head of a BestEffortFIFO queue; requeued for
  // any other reason it stays sticky (queues.py).
  if (reason == REQUEUE_PENDING_PREEMPTION) {
    preemptor_ = wid;
    if (strategy_ == BEST_EFFORT_FIFO) sticky_ = wid;
  }
  if (immediate || queue_inadmissible_cycle_ >= pop_cycle_ || pending_flavors) {
    if (w.inadmissible[wid]) {
      w.inadmissible[wid] = 0;
      --n_inadmissible_;
    }
    push_active(w, wid);
    return 0;
  }
  if (w.inadmissible[wid] || w.queue_active[wid]) return 0;
  park(w, wid);
  int parked = 1;
  if (equivalence_hashing_ && strategy_ == BEST_EFFORT_FIFO &&
      (reason == REQUEUE_NO_FIT || reason == REQUEUE_PREEMPTION_NO_CANDIDATES)) {
    std::uint64_t h = w.hash[wid];
    auto it = std::lower_bound(parked_hashes_.begin(), parked_hashes_.end(), h);
    if (it == parked_hashes_.end() || *it != h) parked_hashes_.insert(it, h);
    // Every active workload with the hash (each active one has an entry).
    for (const HeapEntry& e : heap_) {
      if (e.hash == h && w.queue_active[e.wid]) {
        deactivate(w, e.wid);
        park(w, e.wid);
        ++parked;
      }
    }
    // The entries of the parked workloads are stale now: when they are most
    // of the heap, drop them at once (O(n), as the scan) rather than pop
    // them one by one later.
    if (fixed_keys_ && heap_.size() > 2 * n_active_ + 8) compact(w);
  }
  return parked;
}

int ClusterQueueQueue::queue_inadmissible(WorkloadStore& w) {
  queue_inadmissible_cycle_ = pop_cycle_;
  parked_hashes_.clear();
  int moved = 0;
  // The order does not matter: the heap order is total.
  scratch_.swap(inadmissible_);
  inadmissible_.clear();
  n_inadmissible_ = 0;
  for (std::int32_t wid : scratch_) {
    if (w.inadmissible[wid] != 1) continue;  // stale, or already kept in this pass
    if (w.block[wid] != BLOCK_NAMESPACE_MISMATCH) {
      w.inadmissible[wid] = 0;
      push_active(w, wid);
      ++moved;
    } else {
      w.inadmissible[wid] = 2;
      inadmissible_.push_back(wid);
      ++n_inadmissible_;
    }
  }
  for (std::int32_t wid : inadmissible_) w.inadmissible[wid] = 1;
  scratch_.clear();
  return moved;
}

bool ClusterQueueQueue::check_heap(const WorkloadStore& w) const {
  std::size_t active = 0;
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    if (i > 0 && before(w, heap_[i], heap_[(i - 1) / 2])) return false;
  }
  for (const HeapEntry& e : heap_) active += w.queue_active[e.wid] ? 1 : 0;
  return active >= n_active_;  // duplicates of an active workload may remain
}

}  // namespace kueue_fast
