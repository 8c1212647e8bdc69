// Same loop and records as kueue_fast/simulate/event_loop.py and run_state.py
// (the methods below carry the names of the Python ones they mirror).
#include <kueue_fast/sim_loop.hpp>

#include <algorithm>
#include <chrono>
#include <functional>

namespace kueue_fast {

namespace {

using Finish = std::array<std::int64_t, 3>;  // (time, wid, epoch), ordered as Python's tuples
constexpr auto kFinishLater = std::greater<Finish>();

std::uint64_t pair_hash(const std::array<std::int64_t, 3>& k) noexcept {
  std::uint64_t h = 1469598103934665603ULL;
  for (std::int64_t x : k) {
    h ^= static_cast<std::uint64_t>(x);
    h *= 1099511628211ULL;
  }
  return h;
}

// Counter.update of one key in first-seen order.
void count(std::vector<std::pair<std::int64_t, std::int64_t>>& counts,
           std::unordered_map<std::int64_t, std::size_t>& index, std::int64_t key) {
  auto [it, added] = index.try_emplace(key, counts.size());
  if (added) counts.emplace_back(key, 0);
  ++counts[it->second].second;
}

// Counter.most_common(n): by count, ties in first-seen order.
std::vector<std::pair<std::int64_t, std::int64_t>> most_common(std::vector<std::pair<std::int64_t, std::int64_t>> counts,
                                                               std::size_t n) {
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (counts.size() > n) counts.resize(n);
  return counts;
}

}  // namespace

void SimLog::clear() {
  op.clear();
  t.clear();
  rows.clear();
  key.clear();
  usage.clear();
  explained_wid.clear();
  explained_msg.clear();
  messages.clear();
}

SimLoop::SimLoop(Engine& engine, SimRecords records, SimParams params, AddRows add_rows)
    : e_(engine), r_(records), p_(params), add_rows_(std::move(add_rows)), n_fr_(engine.tree().n_fr()) {
  usage_row_.assign(static_cast<std::size_t>(n_fr_), 0);
  last_t = p_.start_ns;
}

void SimLoop::resume_from(std::int64_t arrived_rows, const std::vector<std::array<std::int64_t, 3>>& finishes,
                          std::int64_t running_now, std::int64_t admissions_now, std::int64_t preemptions_now) {
  arrived = arrived_rows;
  finish_heap_ = finishes;
  std::make_heap(finish_heap_.begin(), finish_heap_.end(), kFinishLater);
  running = running_now;
  admissions = admissions_now;
  preemptions = preemptions_now;
}

double SimLoop::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// event_loop.py events(): the next instant is the earliest event; the clock stops
// after the end (--until, else the last arrival) or past the drain limit.
SimLoop::Status SimLoop::advance(double budget_s, std::size_t log_rows) {
  const double deadline_s = now_s() + budget_s;
  log_.clear();
  message_ids_.clear();
  if (long_.active && !instant(long_.t, deadline_s)) return PROGRESS;
  for (;;) {
    const std::int64_t next_arr =
        static_cast<std::size_t>(arrived) < r_.n_rows ? r_.arrival[static_cast<std::size_t>(arrived)] : kSimNever;
    std::int64_t t = next_arr;
    if (!finish_heap_.empty()) t = std::min(t, finish_heap_.front()[0]);
    if (release_head_ < releases_.size()) t = std::min(t, releases_[release_head_].first);
    if (p_.start_instant && instants == 0) t = std::min(t, p_.start_ns);
    if (t == kSimNever || (p_.end_ns != kSimNever && t > p_.end_ns)) break;
    if (t > p_.drain_stop) {
      drain_limited = true;
      break;
    }
    if (next_arr == t) {
      const std::int64_t* a = r_.arrival;
      const auto j = static_cast<std::int64_t>(std::upper_bound(a + arrived, a + r_.n_rows, t) - a);
      add_rows_(arrived, j);
      arrived = j;
    }
    finishes(t);
    jobs_stopped(t);
    ++instants;
    last_t = t;
    if (!instant(t, deadline_s)) return PROGRESS;
    if ((instants & 255) == 0 && now_s() >= deadline_s) return PROGRESS;
    if (log_.size() >= log_rows) return LOG_FULL;
  }
  final_t = p_.end_ns != kSimNever ? p_.end_ns : last_t;
  return DONE;
}

// event_loop.py settle() and long_instant(): false when the deadline passed between
// two slices of a long instant (it resumes at the next advance).
bool SimLoop::instant(std::int64_t t, double deadline_s) {
  // a long instant resumed runs one slice before it looks at the clock: each
  // call moves it on, whatever the budget
  bool resumed = long_.active;
  if (!long_.active) {
    if (settle_slice(t, std::min(p_.instant_slice, p_.max_cycles), false)) return true;
  }
  // An instant that did not settle in one slice: go on in slices, noting who
  // preempts whom; if it never settles, keep its description.
  for (;;) {
    if (long_.run >= p_.max_cycles) {
      end_long_instant(false);
      return true;
    }
    if (!resumed && now_s() >= deadline_s) {
      now = t;
      instant_cycles = long_.run;
      return false;
    }
    resumed = false;
    if (settle_slice(t, std::min(p_.instant_slice, p_.max_cycles - long_.run), true)) return true;
  }
}

// One call of the engine's cycles at t and what they did. Returns whether
// the instant is done (stable, or a long instant that reached the limit is
// handled by the caller).
bool SimLoop::settle_slice(std::int64_t t, std::int64_t max_cycles, bool in_long) {
  const double t0 = now_s();
  e_.end_holds(t);
  const SettledRun& res = e_.run_until_settled(t, max_cycles, r_.unexplained, r_.total);
  schedule_s += now_s() - t0;
  cycles_run += res.run;
  if (res.stable && !in_long) {
    cycles += res.cycles;
  } else if (!in_long) {
    long_ = LongInstant{};
    long_.active = true;
    long_.t = t;
  }
  // the steps in cycle order: admissions start their run; victims lose theirs
  const bool detail = long_.active;
  std::size_t a = 0, p = 0;
  const auto& adm = res.admitted;
  const auto& pre = res.preempted;
  while (a < adm.size() || p < pre.size()) {
    std::int32_t offset = INT32_MAX;
    if (a < adm.size()) offset = std::min(offset, res.admitted_cycle[a]);
    if (p < pre.size()) offset = std::min(offset, res.preempted_cycle[p]);
    scratch_.clear();
    while (a < adm.size() && res.admitted_cycle[a] == offset) scratch_.push_back(adm[a++]);
    scratch2_.clear();
    while (p < pre.size() && res.preempted_cycle[p] == offset) scratch2_.push_back(pre[p++]);
    if (!scratch_.empty()) admitted(t, scratch_);
    if (!scratch2_.empty()) evicted(t, scratch2_, detail);
    if (detail) {
      long_.admissions += static_cast<std::int64_t>(scratch_.size());
      long_.preemptions += static_cast<std::int64_t>(scratch2_.size());
      for (std::int64_t v : scratch2_) count(long_.victims, long_.victim_index, v);
      for (std::int64_t v : scratch2_) count(long_.preemptors, long_.preemptor_index, r_.preempted_by[v]);
    }
  }
  if (!res.attempted.empty()) explain(res.attempted);
  if (!long_.active) return true;
  long_.run += res.cycles;
  if (res.stable) {
    end_long_instant(true);
    return true;
  }
  return false;
}

void SimLoop::end_long_instant(bool stable) {
  cycles += long_.run;
  if (!stable) {
    ++unsettled;
    if (unsettled_kept_.size() < p_.unsettled_kept) {
      SimUnsettled u;
      u.t_ns = long_.t;
      u.cycles = long_.run;
      u.admissions = long_.admissions;
      u.preemptions = long_.preemptions;
      u.pairs = long_.pairs;
      u.victims = most_common(long_.victims, p_.named);
      for (const auto& pc : most_common(long_.preemptors, p_.named + 1)) {
        if (pc.first >= 0 && u.preemptors.size() < p_.named) u.preemptors.push_back(pc);
      }
      unsettled_kept_.push_back(std::move(u));
    }
  }
  long_ = LongInstant{};
}

// The engine's view of an admitted workload: its ClusterQueue (-1 when it
// holds no quota) and usage per flavor-resource (admitted_usage).
void SimLoop::engine_usage(std::int64_t wid, std::int64_t* row, std::int64_t& cq) const {
  std::fill(row, row + n_fr_, 0);
  const auto& w = e_.workloads();
  const bool held = w.status[static_cast<std::size_t>(wid)] == STATUS_ADMITTED && w.admitted_cq[static_cast<std::size_t>(wid)] >= 0;
  cq = held ? w.admitted_cq[static_cast<std::size_t>(wid)] : -1;
  if (held) e_.for_each_fr_usage(static_cast<int>(wid), [&](int fr, Amount v) { row[fr] = v; });
}

// run_state.py admitted(): quota reserved, the job starts at once.
void SimLoop::admitted(std::int64_t t, const std::vector<std::int64_t>& wids) {
  const std::size_t n = wids.size();
  std::vector<std::int64_t> cqs(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t w = wids[k];
    std::int64_t* row = r_.usage + w * n_fr_;
    std::int64_t c;
    engine_usage(w, row, c);
    // admitted and evicted again within this instant (quota released at the
    // end of its cycle): to its own ClusterQueue
    if (c < 0) c = r_.queue_cq[w];
    cqs[k] = c;
    r_.state[w] = SIM_RUNNING;
    const std::int64_t j = r_.n_adm[w];
    if (j < kSimTimesKept) {
      r_.adm_at[w * kSimTimesKept + j] = t;
    } else {  // pending counts come from the records, beyond them from here
      op(OP_PENDING_DOWN, t);
      row_key_only(r_.queue_cq[w]);
    }
    r_.n_adm[w] = j + 1;
    r_.wait[w] += t - r_.enq[w];
    r_.last_adm[w] = t;
    r_.adm_cq[w] = c;
    ++r_.epoch[w];
    // job_started(): it runs its duration from now
    r_.ever_admitted[w] = 1;
    if (r_.dur[w] != kSimNever) {
      finish_heap_.push_back({t + r_.dur[w], w, r_.epoch[w]});
      std::push_heap(finish_heap_.begin(), finish_heap_.end(), kFinishLater);
    }
  }
  op(OP_USAGE_ADD, t);
  for (std::size_t k = 0; k < n; ++k) row(cqs[k], r_.usage + wids[k] * n_fr_);
  running += static_cast<std::int64_t>(n);
  admissions += static_cast<std::int64_t>(n);
}

// run_state.py evicted(): victims lose the work they had done; their quota
// is released once their pods have stopped (or at once).
void SimLoop::evicted(std::int64_t t, const std::vector<std::int64_t>& victims, bool detail) {
  std::vector<std::int64_t> wids;
  wids.reserve(victims.size());
  for (std::int64_t w : victims) {
    if (r_.state[w] != SIM_EVICTING) wids.push_back(w);
  }
  if (wids.empty()) return;
  const auto& store = e_.workloads();
  op(OP_EVICTIONS, t);
  for (std::int64_t w : wids) row_key_only(e_.eviction_reason_code(static_cast<int>(w)));
  std::int64_t was_running_n = 0;
  for (std::int64_t w : wids) {
    const std::int64_t reason = e_.eviction_reason_code(static_cast<int>(w));
    const std::int64_t p = store.preempted_by[static_cast<std::size_t>(w)];
    const bool was_running = r_.state[w] == SIM_RUNNING;
    was_running_n += was_running ? 1 : 0;
    r_.state[w] = SIM_EVICTING;
    const std::int64_t j = r_.n_evi[w];
    if (j < kSimTimesKept) r_.evi_at[w * kSimTimesKept + j] = t;
    r_.n_evi[w] = j + 1;
    r_.last_evi[w] = t;
    ++r_.epoch[w];
    const std::int64_t c = r_.adm_cq[w];
    ++r_.pre_per_cq[c];
    const std::int64_t ran = was_running ? t - r_.last_adm[w] : 0;
    r_.lost[w] += ran;
    // Python's ran / NS: the quotient correctly rounded (exact operands below 2^53 ns, 104 days)
    r_.lost_per_cq[c] += static_cast<double>(ran) / static_cast<double>(kSimNs);
    r_.preempted_by[w] = p;
    if (p >= 0) ++r_.preempting[p];
    const std::array<std::int64_t, 3> key{p >= 0 ? r_.queue_cq[p] : -1, c, reason};
    count_pair(pairs_, pair_index_, key);
    if (detail) count_pair(long_.pairs, long_.pair_index, key);
  }
  running -= was_running_n;
  preemptions += static_cast<std::int64_t>(wids.size());
  // _drop_stale_finishes(): the heap's order is total, compaction only saves room
  stale_ += static_cast<std::int64_t>(wids.size());
  if (stale_ > 1024 && 2 * stale_ > static_cast<std::int64_t>(finish_heap_.size())) {
    std::size_t out = 0;
    for (const Finish& f : finish_heap_) {
      if (r_.epoch[f[1]] == f[2]) finish_heap_[out++] = f;
    }
    finish_heap_.resize(out);
    std::make_heap(finish_heap_.begin(), finish_heap_.end(), kFinishLater);
    stale_ = 0;
  }
  if (p_.termination_delay_ns > 0) {
    for (std::int64_t w : wids) releases_.emplace_back(t + p_.termination_delay_ns, w);
    op(OP_STOPPING_ADD, t);  // stopping_changed(+1)
    for (std::int64_t w : wids) row(r_.adm_cq[w], r_.usage + w * n_fr_);
  } else {
    op(OP_USAGE_REMOVE, t);  // quota_released_by_cycle()
    for (std::int64_t w : wids) row(r_.adm_cq[w], r_.usage + w * n_fr_);
    requeued(t, wids);
  }
}

// event_loop.py finishes(): finishes at t (skipping those of workloads evicted since).
void SimLoop::finishes(std::int64_t t) {
  scratch_.clear();
  while (!finish_heap_.empty() && finish_heap_.front()[0] == t) {
    std::pop_heap(finish_heap_.begin(), finish_heap_.end(), kFinishLater);
    const Finish f = finish_heap_.back();
    finish_heap_.pop_back();
    if (r_.epoch[f[1]] == f[2]) {
      scratch_.push_back(f[1]);
    } else {
      --stale_;
    }
  }
  if (scratch_.empty()) return;
  for (std::int64_t w : scratch_) {
    r_.state[w] = SIM_FINISHED;
    r_.fin_at[w] = t;
  }
  running -= static_cast<std::int64_t>(scratch_.size());
  quota_released(t, scratch_);
  e_.remove_workloads(scratch_.data(), scratch_.size());
}

// event_loop.py jobs_stopped(): evicted workloads whose jobs have stopped at t:
// quota free, back to their queues.
void SimLoop::jobs_stopped(std::int64_t t) {
  scratch_.clear();
  while (release_head_ < releases_.size() && releases_[release_head_].first == t) {
    scratch_.push_back(releases_[release_head_++].second);
  }
  if (release_head_ > 4096 && 2 * release_head_ > releases_.size()) {
    releases_.erase(releases_.begin(), releases_.begin() + static_cast<std::ptrdiff_t>(release_head_));
    release_head_ = 0;
  }
  if (scratch_.empty()) return;
  op(OP_STOPPING_REMOVE, t);  // stopping_changed(-1)
  for (std::int64_t w : scratch_) row(r_.adm_cq[w], r_.usage + w * n_fr_);
  quota_released(t, scratch_);
  requeued(t, scratch_);
  for (std::int64_t w : scratch_) e_.release_eviction(static_cast<int>(w));
}

// run_state.py quota_released(): their quota is free; the engine still holds it.
void SimLoop::quota_released(std::int64_t t, const std::vector<std::int64_t>& wids) {
  op(OP_USAGE_REMOVE, t);
  if (wids.size() == 1) {  // the usual case: the usage its admission recorded
    row(r_.adm_cq[wids[0]], r_.usage + wids[0] * n_fr_);
    return;
  }
  for (std::int64_t w : wids) {
    std::int64_t c;
    engine_usage(w, usage_row_.data(), c);
    row(c, usage_row_.data());
  }
}

// run_state.py requeued()
void SimLoop::requeued(std::int64_t t, const std::vector<std::int64_t>& wids) {
  for (std::int64_t w : wids) {
    r_.state[w] = SIM_PENDING;
    r_.enq[w] = t;
    if (r_.n_evi[w] > kSimTimesKept) {  // pending counts come from the records, beyond them from here
      op(OP_PENDING_UP, t);
      row_key_only(r_.queue_cq[w]);
    }
  }
}

// run_state.py explain(): the engine's pending message of each workload tried
// and left pending the first time.
void SimLoop::explain(const std::vector<std::int32_t>& wids) {
  for (std::int32_t w : wids) {
    std::string msg = e_.message(w);
    if (msg.empty()) continue;
    auto [it, added] = message_ids_.try_emplace(msg, static_cast<std::int32_t>(log_.messages.size()));
    if (added) log_.messages.push_back(std::move(msg));
    log_.explained_wid.push_back(w);
    log_.explained_msg.push_back(it->second);
  }
}

void SimLoop::count_pair(std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>>& pairs,
                         std::unordered_map<std::uint64_t, std::size_t>& index, const std::array<std::int64_t, 3>& key) {
  // a hash of the key, chained by linear probing on collision
  std::uint64_t h = pair_hash(key);
  for (;;) {
    auto [it, added] = index.try_emplace(h, pairs.size());
    if (added) {
      pairs.emplace_back(key, 1);
      return;
    }
    if (pairs[it->second].first == key) {
      ++pairs[it->second].second;
      return;
    }
    ++h;
  }
}

}  // namespace kueue_fast
