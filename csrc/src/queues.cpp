// Same rules as kueue_fast/_reference/queues.py.
#include <kueue_fast/queues.hpp>

#include <algorithm>

namespace kueue_fast {

void ClusterQueueQueue::sift_up(WorkloadStore& w, std::size_t i) {
  std::int32_t wid = heap_[i];
  while (i > 0) {
    std::size_t parent = (i - 1) / 2;
    if (!before(w, wid, heap_[parent])) break;
    heap_[i] = heap_[parent];
    w.heap_pos[heap_[i]] = static_cast<std::int32_t>(i);
    i = parent;
  }
  heap_[i] = wid;
  w.heap_pos[wid] = static_cast<std::int32_t>(i);
}

void ClusterQueueQueue::sift_down(WorkloadStore& w, std::size_t i) {
  std::int32_t wid = heap_[i];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(w, heap_[child + 1], heap_[child])) ++child;
    if (!before(w, heap_[child], wid)) break;
    heap_[i] = heap_[child];
    w.heap_pos[heap_[i]] = static_cast<std::int32_t>(i);
    i = child;
  }
  heap_[i] = wid;
  w.heap_pos[wid] = static_cast<std::int32_t>(i);
}

void ClusterQueueQueue::push_active(WorkloadStore& w, int wid) {
  if (w.heap_pos[wid] >= 0) return;
  heap_.push_back(wid);
  sift_up(w, heap_.size() - 1);
}

void ClusterQueueQueue::heap_erase(WorkloadStore& w, int wid) {
  std::int32_t pos = w.heap_pos[wid];
  if (pos < 0) return;
  w.heap_pos[wid] = -1;
  std::int32_t last = heap_.back();
  heap_.pop_back();
  if (last == wid) return;
  std::size_t i = static_cast<std::size_t>(pos);
  heap_[i] = last;
  w.heap_pos[last] = pos;
  if (i > 0 && before(w, last, heap_[(i - 1) / 2])) {
    sift_up(w, i);
  } else {
    sift_down(w, i);
  }
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
  if (strategy_ == BEST_EFFORT_FIFO && w.heap_pos[wid] < 0 && hash_parked(w.hash[wid])) {
    park(w, wid);
    return;
  }
  push_active(w, wid);
}

int ClusterQueueQueue::pop(WorkloadStore& w) {
  ++pop_cycle_;
  if (sticky_ >= 0 && w.heap_pos[sticky_] >= 0) {
    int wid = sticky_;
    heap_erase(w, wid);
    return wid;
  }
  if (heap_.empty()) return -1;
  int wid = heap_.front();
  heap_erase(w, wid);
  return wid;
}

void ClusterQueueQueue::remove(WorkloadStore& w, int wid) {
  heap_erase(w, wid);
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
  if (w.inadmissible[wid] || w.heap_pos[wid] >= 0) return 0;
  park(w, wid);
  int parked = 1;
  if (equivalence_hashing_ && strategy_ == BEST_EFFORT_FIFO &&
      (reason == REQUEUE_NO_FIT || reason == REQUEUE_PREEMPTION_NO_CANDIDATES)) {
    std::uint64_t h = w.hash[wid];
    auto it = std::lower_bound(parked_hashes_.begin(), parked_hashes_.end(), h);
    if (it == parked_hashes_.end() || *it != h) parked_hashes_.insert(it, h);
    scratch_.clear();
    for (std::int32_t other : heap_) {
      if (w.hash[other] == h) scratch_.push_back(other);
    }
    for (std::int32_t other : scratch_) {
      heap_erase(w, other);
      park(w, other);
      ++parked;
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
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    if (w.heap_pos[heap_[i]] != static_cast<std::int32_t>(i)) return false;
    if (i > 0 && before(w, heap_[i], heap_[(i - 1) / 2])) return false;
  }
  return true;
}

}  // namespace kueue_fast
