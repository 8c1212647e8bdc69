// Same rules as kueue_fast/engine/reference/queues.py.
#include <kueue_fast/queues.hpp>

#include <algorithm>

namespace kueue_fast {

void ClusterQueueQueue::heap_push(WorkloadStore& w, const HeapEntry& e) {
  if (afs_) {
    LqHeap& h = lq_heap_of(w, e.wid);
    if (h.heap.size() >= h.compact_at) compact_lq(w, h);
    sift_up(w, h.heap, e);
    return;
  }
  if (fixed_keys_ ? heap_.size() > 2 * n_active_ + 64 : heap_.size() >= compact_at_) compact(w);
  sift_up(w, heap_, e);
}

void ClusterQueueQueue::sift_up(const WorkloadStore& w, std::vector<HeapEntry>& heap, const HeapEntry& e) {
  heap.push_back(e);
  std::size_t i = heap.size() - 1;
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (!before(w, e, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = e;
}

// Floyd's pop: the hole at the top goes down to a leaf by the first child of
// each pair (one comparison per level), then the last entry, which mostly
// belongs near the bottom, climbs back up from there. The heap's layout may
// differ from a classic sift-down's, not what it pops: the order is total
// (wid breaks ties) and identical entries are interchangeable.
void ClusterQueueQueue::heap_pop_top(const WorkloadStore& w, std::vector<HeapEntry>& heap) {
  const HeapEntry last = heap.back();
  heap.pop_back();
  const std::size_t n = heap.size();
  if (n == 0) return;
  std::size_t i = 0;
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(w, heap[child + 1], heap[child])) ++child;
    heap[i] = heap[child];
    i = child;
  }
  while (i > 0) {
    const std::size_t parent = (i - 1) / 2;
    if (!before(w, last, heap[parent])) break;
    heap[i] = heap[parent];
    i = parent;
  }
  heap[i] = last;
}

ClusterQueueQueue::LqHeap& ClusterQueueQueue::lq_heap_of(const WorkloadStore& w, int wid) {
  const std::int32_t lq = w.local_queue[wid];
  auto [it, added] = lq_slot_.try_emplace(lq, static_cast<std::int32_t>(lq_heaps_.size()));
  if (added) lq_heaps_.push_back({lq, {}, 64});
  return lq_heaps_[static_cast<std::size_t>(it->second)];
}

// Drops stale entries that can never pop a workload again. Lazy deletion
// alone lets them pile up: every requeue of the inadmissible workloads pushes
// a new entry for each, and the entries left by parking stay until they reach
// the top (in the default simulation heaps grew to ~400k entries, 96% of pops
// were stale, and the equivalence-parking scan read 2.6 G entries).
//
// When order keys are fixed, one entry per active workload is kept, the one
// with its current key, none for inactive ones (a later push brings a current
// entry back), so the sequence of popped heads is unchanged. The key check
// matters even then: a workload held by waitForPodsReady (or evicted by an
// admission check) comes back with another timestamp, and the entry its old
// one left may come first in the heap; kept alone, it is dropped as stale at
// pop and the workload, still active, never pops again. Called when the heap
// holds more than twice the active workloads: each compaction drops at least
// half, amortized O(1).
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
      if (w.queue_active[e.wid] == 1 && e.queue_ts == w.queue_ts[e.wid]) {
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
    make_heap(w, heap_);
  }
  compact_at_ = std::max<std::size_t>(64, 2 * heap_.size());
}

// A LocalQueue heap (admission fair sharing) keeps one entry per active
// workload with its current key: pop_afs drops an entry whose workload is not
// active or whose timestamp moved (the reference computes keys at pop time),
// and a workload that comes back pushes a current entry. Called when the heap
// has doubled since the last compaction.
void ClusterQueueQueue::compact_lq(WorkloadStore& w, LqHeap& h) {
  ++compactions_;
  std::size_t out = 0;
  for (const HeapEntry& e : h.heap) {
    if (w.queue_active[e.wid] == 1 && e.queue_ts == w.queue_ts[e.wid]) {
      w.queue_active[e.wid] = 2;  // entry already kept
      h.heap[out++] = e;
    }
  }
  for (std::size_t k = 0; k < out; ++k) w.queue_active[h.heap[k].wid] = 1;
  if (out != h.heap.size()) {
    h.heap.resize(out);
    make_heap(w, h.heap);
  }
  h.compact_at = std::max<std::size_t>(64, 2 * h.heap.size());
}

void ClusterQueueQueue::make_heap(const WorkloadStore& w, std::vector<HeapEntry>& heap) {
  // Same layout rule as sift_up / heap_pop_top: a parent comes before its children.
  std::make_heap(heap.begin(), heap.end(), [&w](const HeapEntry& a, const HeapEntry& b) { return before(w, b, a); });
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

bool ClusterQueueQueue::may_be_head(const WorkloadStore& w, int wid) const noexcept {
  if (afs_) return true;
  if (!w.queue_active[wid]) return false;
  if (sticky_ >= 0 && w.queue_active[sticky_]) return sticky_ == wid;
  const HeapEntry& top = heap_.front();  // wid is active: the heap holds its entry
  return top.wid == wid || !w.queue_active[top.wid] || top.queue_ts != w.queue_ts[top.wid];
}

int ClusterQueueQueue::pop(WorkloadStore& w, const double* lq_usage) {
  ++pop_cycle_;
  if (afs_) return pop_afs(w, lq_usage);
  if (sticky_ >= 0 && w.queue_active[sticky_]) {
    int wid = sticky_;
    deactivate(w, wid);  // its heap entry stays, as in heapq
    return wid;
  }
  while (!heap_.empty()) {
    const HeapEntry top = heap_.front();
    heap_pop_top(w, heap_);
    // an entry left by a workload that left the queue and came back with another
    // queue-order timestamp (waitForPodsReady's hold) is stale, as in queues.py
    if (w.queue_active[top.wid] && top.queue_ts == w.queue_ts[top.wid]) {
      deactivate(w, top.wid);
      return top.wid;
    }
  }
  return -1;
}

// queues.py _pop_by_usage: the minimum of (LocalQueue usage, not sticky,
// the heap key) over the active workloads. Within a LocalQueue the usage is
// shared, so the minimum is the sticky workload if it is there, else the top
// of that LocalQueue's heap; the heads are then compared. Usages compare as
// the reference's tuples compare them (a difference decides by <).
int ClusterQueueQueue::pop_afs(WorkloadStore& w, const double* lq_usage) {
  const int sticky = sticky_ >= 0 && w.queue_active[sticky_] ? sticky_ : -1;
  int best_slot = -1;
  bool best_sticky = false;
  double best_usage = 0.0;
  HeapEntry best{};
  for (std::size_t s = 0; s < lq_heaps_.size(); ++s) {
    LqHeap& h = lq_heaps_[s];
    HeapEntry head;
    const bool is_sticky = sticky >= 0 && w.local_queue[sticky] == h.lq;
    if (is_sticky) {
      head = {w.queue_ts[sticky], w.priority[sticky], sticky, w.hash[sticky]};
    } else {
      // Drop entries of workloads that left, or whose key moved since (stale).
      while (!h.heap.empty() &&
             !(w.queue_active[h.heap.front().wid] && h.heap.front().queue_ts == w.queue_ts[h.heap.front().wid])) {
        heap_pop_top(w, h.heap);
      }
      if (h.heap.empty()) continue;
      head = h.heap.front();
    }
    const double usage = lq_usage[h.lq + 1];
    bool better;
    if (best_slot < 0) {
      better = true;
    } else if (usage != best_usage) {
      better = usage < best_usage;
    } else if (is_sticky != best_sticky) {
      better = is_sticky;
    } else {
      better = before(w, head, best);
    }
    if (better) {
      best_slot = static_cast<int>(s);
      best_sticky = is_sticky;
      best_usage = usage;
      best = head;
    }
  }
  if (best_slot < 0) return -1;
  if (!best_sticky) heap_pop_top(w, lq_heaps_[static_cast<std::size_t>(best_slot)].heap);
  deactivate(w, best.wid);  // the sticky's heap entry stays, as in the plain queue
  return best.wid;
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
    for_each_entry([&](const HeapEntry& e) {
      if (e.hash == h && w.queue_active[e.wid]) {
        deactivate(w, e.wid);
        park(w, e.wid);
        ++parked;
      }
    });
    // The entries of the parked workloads are stale now: when they are most
    // of the heap, drop them at once (O(n), as the scan) rather than pop
    // them one by one later.
    if (afs_) {
      if (heap_entries() > 2 * n_active_ + 8) {
        for (LqHeap& lh : lq_heaps_) compact_lq(w, lh);
      }
    } else if (fixed_keys_ && heap_.size() > 2 * n_active_ + 8) {
      compact(w);
    }
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
  auto ordered = [&](const std::vector<HeapEntry>& heap) {
    for (std::size_t i = 1; i < heap.size(); ++i) {
      if (before(w, heap[i], heap[(i - 1) / 2])) return false;
    }
    return true;
  };
  if (!ordered(heap_)) return false;
  for (const LqHeap& h : lq_heaps_) {
    if (!ordered(h.heap)) return false;
    for (const HeapEntry& e : h.heap) {
      if (w.local_queue[e.wid] != h.lq) return false;
    }
  }
  std::size_t active = 0;
  for_each_entry([&](const HeapEntry& e) { active += w.queue_active[e.wid] ? 1 : 0; });
  return active >= n_active_;  // duplicates of an active workload may remain
}

}  // namespace kueue_fast
