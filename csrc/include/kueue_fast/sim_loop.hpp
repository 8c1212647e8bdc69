// The simulator's clock over the native engine: the C++ twin of the event
// loop of kueue_fast/simulate/event_loop.py and the record keeping of
// simulate/run_state.py, for runs whose events are arrivals, finishes and
// the release of evicted workloads' quota (no admission check model, no
// waitForPodsReady: those stay with the Python loop). It must keep every
// record exactly as the Python loop does; tests/test_simulate_native_loop.py
// runs both on the same inputs and compares everything.
//
// Per instant, in the Python loop's order: the trace rows arriving at t are
// added, the workloads finishing at t removed, those whose pods stopped at t
// release their quota and queue again, and the engine runs its cycles at t
// until they settle (run_until_settled); admissions start their run (a
// finish at admission + run time), evictions lose theirs. The per-workload
// records are the caller's arrays, written in place; what the Python side
// keeps as time series (usage, usage of stopping workloads, pending counts
// beyond the kept times, evictions by reason) is handed over as a log of the
// calls the Python loop would have made, in its order, with their times.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast {

// The caller's per-workload arrays (manifest workloads first, then the
// trace's rows); written in place. simulate/run_state.py names each.
struct SimRecords {
  std::size_t total = 0;
  std::int64_t manifest = 0;  // workloads before the trace's rows
  std::int8_t* state = nullptr;
  std::int64_t *adm_cq = nullptr, *n_adm = nullptr, *n_evi = nullptr;
  std::int64_t *adm_at = nullptr, *evi_at = nullptr;  // total x kSimTimesKept
  std::int64_t *last_adm = nullptr, *last_evi = nullptr, *fin_at = nullptr, *wait = nullptr, *enq = nullptr;
  std::int64_t *epoch = nullptr, *preempted_by = nullptr, *preempting = nullptr, *lost = nullptr;
  std::int8_t* ever_admitted = nullptr;
  std::int64_t* usage = nullptr;  // total x n_fr: the usage of each workload's last admission
  std::uint8_t* unexplained = nullptr;  // tried and left pending not yet (the engine's attempted mask)
  std::int64_t* pre_per_cq = nullptr;   // per ClusterQueue
  double* lost_per_cq = nullptr;        // per ClusterQueue, seconds
  const std::int64_t* queue_cq = nullptr;
  const std::int64_t* dur = nullptr;      // run time (ns), kSimNever: runs for ever
  const std::int64_t* arrival = nullptr;  // the trace rows' arrival times, sorted (row r is wid manifest + r)
  std::size_t n_rows = 0;
};

// Workload states (simulate/result.py).
enum SimState : std::int8_t { SIM_PENDING = 0, SIM_RUNNING = 1, SIM_EVICTING = 2, SIM_FINISHED = 3 };
constexpr int kSimTimesKept = 4;  // records.py TIMES_KEPT
constexpr std::int64_t kSimNever = INT64_MAX;
constexpr std::int64_t kSimNs = 1000000000;

struct SimParams {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = kSimNever;      // the clock stops after this instant (kSimNever: none)
  std::int64_t drain_stop = kSimNever;  // --drain gives up past this time
  std::int64_t termination_delay_ns = 0;  // <= 0: quota released at the end of the cycle
  std::int64_t max_cycles = 10000;      // per instant
  std::int64_t instant_slice = 500;     // cycles between two looks at the clock within one instant
  bool start_instant = false;           // an instant at start_ns even without events (manifest workloads)
  std::size_t unsettled_kept = 10;      // unsettled instants described in full
  std::size_t named = 10;               // workloads named per unsettled instant
};

// The series calls of the Python loop, in order: usage (+/-) and usage of
// stopping workloads (+/-) blocks of rows (key: ClusterQueue, a usage row
// each), a pending count step (one key), evictions by reason (rows: reason
// codes).
enum SimOp : std::int8_t {
  OP_USAGE_ADD = 0,
  OP_USAGE_REMOVE = 1,
  OP_STOPPING_ADD = 2,
  OP_STOPPING_REMOVE = 3,
  OP_PENDING_UP = 4,
  OP_PENDING_DOWN = 5,
  OP_EVICTIONS = 6,
};

struct SimLog {
  std::vector<std::int8_t> op;
  std::vector<std::int64_t> t;
  std::vector<std::int32_t> rows;     // per op: its rows
  std::vector<std::int64_t> key;      // per row
  std::vector<std::int64_t> usage;    // n_fr per row of the usage and stopping ops
  // workloads tried and left pending the first time, with their message (an index into messages)
  std::vector<std::int64_t> explained_wid;
  std::vector<std::int32_t> explained_msg;
  std::vector<std::string> messages;  // distinct, in first-seen order (since the log was taken)
  void clear();
  std::size_t size() const noexcept { return key.size() + explained_wid.size(); }
};

// An instant whose cycles kept changing something until the limit (records.py UnsettledInstant).
struct SimUnsettled {
  std::int64_t t_ns = 0, cycles = 0, admissions = 0, preemptions = 0;
  std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>> pairs;  // first-seen order
  std::vector<std::pair<std::int64_t, std::int64_t>> victims, preemptors;   // most common first
};

class SimLoop {
 public:
  // add_rows(lo, hi): the engine adds the trace rows [lo, hi) (their wids are manifest + lo ...).
  using AddRows = std::function<void(std::int64_t lo, std::int64_t hi)>;
  enum Status { DONE = 0, PROGRESS = 1, LOG_FULL = 2 };

  SimLoop(Engine& engine, SimRecords records, SimParams params, AddRows add_rows);

  // The state the Python side set up before handing over: trace rows added
  // so far, finishes scheduled (time, wid, epoch), counters.
  void resume_from(std::int64_t arrived, const std::vector<std::array<std::int64_t, 3>>& finishes,
                   std::int64_t running, std::int64_t admissions, std::int64_t preemptions);

  // Runs instants until the end (DONE), for about budget_s seconds
  // (PROGRESS: between instants, or in a long instant between two slices of
  // cycles) or until the log holds about log_rows rows (LOG_FULL).
  Status advance(double budget_s, std::size_t log_rows);

  SimLog& log() noexcept { return log_; }
  // (preemptor's ClusterQueue or -1, victim's ClusterQueue, reason) -> evictions, first-seen order
  const std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>>& pairs() const noexcept { return pairs_; }
  std::vector<SimUnsettled>& unsettled_kept() noexcept { return unsettled_kept_; }

  // counters (event_loop.py names)
  std::int64_t arrived = 0, running = 0, admissions = 0, preemptions = 0;
  std::int64_t instants = 0, cycles = 0, cycles_run = 0, unsettled = 0;
  std::int64_t last_t = 0, final_t = 0, now = 0, instant_cycles = 0;
  bool drain_limited = false;
  double schedule_s = 0.0;

 private:
  Engine& e_;
  SimRecords r_;
  SimParams p_;
  AddRows add_rows_;
  int n_fr_;
  SimLog log_;
  std::unordered_map<std::string, std::int32_t> message_ids_;
  // (finish time, wid, epoch), a min-heap; entries of evicted workloads go stale
  std::vector<std::array<std::int64_t, 3>> finish_heap_;
  std::int64_t stale_ = 0;
  // (when the victims' jobs have stopped, victim), in eviction order
  std::vector<std::pair<std::int64_t, std::int64_t>> releases_;
  std::size_t release_head_ = 0;
  std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>> pairs_;
  std::unordered_map<std::uint64_t, std::size_t> pair_index_;
  std::vector<SimUnsettled> unsettled_kept_;
  // an instant whose cycles did not settle in one slice, under way
  struct LongInstant {
    bool active = false;
    std::int64_t t = 0, run = 0, admissions = 0, preemptions = 0;
    std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>> pairs;
    std::unordered_map<std::uint64_t, std::size_t> pair_index;
    std::vector<std::pair<std::int64_t, std::int64_t>> victims, preemptors;  // first-seen order
    std::unordered_map<std::int64_t, std::size_t> victim_index, preemptor_index;
  } long_;
  std::vector<std::int64_t> scratch_, scratch2_;
  std::vector<std::int64_t> usage_row_;

  bool instant(std::int64_t t, double deadline_s);
  void finishes(std::int64_t t);
  void jobs_stopped(std::int64_t t);
  // the cycles of one slice; true when the instant is done
  bool settle_slice(std::int64_t t, std::int64_t max_cycles, bool long_instant);
  void end_long_instant(bool stable);
  void admitted(std::int64_t t, const std::vector<std::int64_t>& wids);
  void evicted(std::int64_t t, const std::vector<std::int64_t>& wids, bool detail);
  void quota_released(std::int64_t t, const std::vector<std::int64_t>& wids);
  void requeued(std::int64_t t, const std::vector<std::int64_t>& wids);
  void explain(const std::vector<std::int32_t>& wids);
  void engine_usage(std::int64_t wid, std::int64_t* row, std::int64_t& cq) const;
  void op(SimOp kind, std::int64_t t) {
    log_.op.push_back(kind);
    log_.t.push_back(t);
    log_.rows.push_back(0);
  }
  void row(std::int64_t key, const std::int64_t* usage) {
    log_.key.push_back(key);
    log_.usage.insert(log_.usage.end(), usage, usage + n_fr_);
    ++log_.rows.back();
  }
  void row_key_only(std::int64_t key) {
    log_.key.push_back(key);
    ++log_.rows.back();
  }
  void count_pair(std::vector<std::pair<std::array<std::int64_t, 3>, std::int64_t>>& pairs,
                  std::unordered_map<std::uint64_t, std::size_t>& index, const std::array<std::int64_t, 3>& key);
  double now_s() const;
};

}  // namespace kueue_fast
