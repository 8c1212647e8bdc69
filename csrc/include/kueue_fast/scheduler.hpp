// The Engine: Kueue's scheduling cycle over a Topology, workloads in
// structure-of-arrays form. The C++ twin of kueue_fast/engine/reference/scheduler.py
// (kueue pkg/scheduler/scheduler.go schedule, nominate, processEntry,
// requeueAndUpdate); it must make byte-identical decisions.
//
// One cycle:
//   1. heads: one workload from the heap of every active ClusterQueue;
//   2. snapshot: the working quota tree itself (changes that only live for the
//      cycle are recorded and undone at the end: no copies);
//   3. nominate: flavor assignment and, when needed, preemption targets;
//   4. order the entries (classical, or the fair-sharing tournament);
//   5. process entries in that order against the filling snapshot (an
//      admission adds its usage to it, not the workload: no later entry of
//      the cycle can pick it as a victim);
//   6. requeue every head that was not admitted;
//   7. (offline mode) evictions issued in the cycle take effect.
// With admission fair sharing the LocalQueues' usage ledger is kept around
// the cycle as the reference keeps it: sampled before step 1, entry
// penalties pushed on admission in step 5, settled before step 7.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <kueue_fast/admission_fair_sharing.hpp>
#include <kueue_fast/amount.hpp>
#include <kueue_fast/fair_sharing.hpp>
#include <kueue_fast/flavor_assigner.hpp>
#include <kueue_fast/preemption.hpp>
#include <kueue_fast/queues.hpp>
#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/topology.hpp>
#include <kueue_fast/types.hpp>
#include <kueue_fast/workloads.hpp>

namespace kueue_fast {

// Bad input to the engine API (the bindings raise kueue_fast.api.errors.EngineError).
class EngineInputError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// An engine invariant broke (debug checks); a bug, not an input problem.
class EngineInvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// One workload, as engine.inputs.WorkloadSpec has it.
struct WorkloadInput {
  struct PodSet {
    std::string name;
    std::int64_t count = 0;
    std::int64_t min_count = -1;  // -1: none
    std::int64_t flavor_class = 0;
    std::vector<std::pair<std::int64_t, Amount>> requests;  // (resource, per-pod amount)
    // Topology Aware Scheduling: what it asks of the topology (has_tas) and
    // its per-pod requests per TAS resource (-1: not asked; empty: none)
    bool has_tas = false;
    TasRequest tas;
    std::vector<Amount> tas_requests;
  };
  struct AdmittedPodSet {
    std::int64_t count = 0;
    std::vector<std::tuple<std::int64_t, std::int64_t, Amount>> use;  // (resource, flavor or -1, total)
    // Topology Aware Scheduling: its placement's usage, (TAS flavor, leaf or -1, hostname or -1, pods)
    std::vector<std::array<std::int64_t, 4>> tas_uses;
  };
  std::string ns, name, uid;
  std::string job_uid;  // "" when the workload has no kueue.x-k8s.io/job-uid label
  std::int64_t cluster_queue = -1;
  std::int64_t priority = 0;
  std::int64_t queue_ts = 0;
  std::uint64_t scheduling_hash = 0;
  std::int64_t block = BLOCK_NONE;
  std::string block_message;
  std::int64_t local_queue = -1;  // its LocalQueue (topology id), -1 none
  std::string queue_name;         // spec.queueName as written
  std::vector<PodSet> pod_sets;
  bool has_admission = false;
  std::int64_t admission_cq = -1;
  std::int64_t admission_time = 0;
  std::vector<AdmittedPodSet> admission;
};

// Many pending workloads as flat arrays (CSR for pod sets and requests).
// Raw pointers into caller-owned memory; validated before anything changes.
struct BulkWorkloads {
  std::size_t n = 0;
  const std::int64_t* cluster_queue = nullptr;
  const std::int64_t* priority = nullptr;
  const std::int64_t* queue_ts = nullptr;
  const std::uint64_t* scheduling_hash = nullptr;
  const std::int64_t* ps_offsets = nullptr;  // n + 1
  std::size_t n_ps = 0;
  const std::int64_t* ps_count = nullptr;
  const std::int64_t* ps_min_count = nullptr;  // -1: none
  const std::int64_t* ps_flavor_class = nullptr;
  const std::int64_t* ps_name = nullptr;  // index into pod_set_names, or nullptr: "main"
  std::vector<std::string> pod_set_names;
  const std::int64_t* req_offsets = nullptr;  // n_ps + 1
  std::size_t n_req = 0;
  const std::int64_t* req_resource = nullptr;
  const std::int64_t* req_amount = nullptr;
  std::vector<std::string> namespaces, names, uids;  // uids may be empty: "namespace/name"
  // Optional (nullptr: none blocked): per workload a BLOCK_* code and an
  // index into block_messages (-1 or any value where the code is BLOCK_NONE).
  const std::int64_t* block = nullptr;
  const std::int64_t* block_message = nullptr;
  std::vector<std::string> block_messages;
  // Per workload its LocalQueue (topology id, -1 none), or nullptr: none. The
  // queue name is that LocalQueue's name.
  const std::int64_t* local_queue = nullptr;
};

// Work counters since the engine was built (for profiles and benchmarks).
struct EngineStats {
  std::int64_t heads = 0;
  std::int64_t assignments = 0;   // FlavorAssigner::assign calls (partial admission included)
  std::int64_t quota_checks = 0;  // fitsResourceQuota calls
  std::int64_t oracle_calls = 0;  // single-fr preemption simulations
  std::int64_t target_searches = 0;  // searches run (not those answered "no candidate possible" up front)
};

// What run_until_stable did: the admissions and evictions of its cycles,
// in order, each with the offset (0-based, within the call) of its cycle.
struct StableRun {
  std::int64_t cycles = 0;
  bool stable = true;
  std::int64_t heads = 0;
  std::vector<std::int32_t> admitted, admitted_cycle, preempted, preempted_cycle;
};

// What run_until_settled did: run_until_stable's fields, the heads tried and
// left pending, and how many of the cycles were run (the others were replays
// of settled cohort trees, skipped: see Engine::run_until_settled).
struct SettledRun {
  std::int64_t cycles = 0;
  bool stable = true;
  std::int64_t heads = 0;
  std::vector<std::int32_t> admitted, admitted_cycle, preempted, preempted_cycle, attempted;
  std::int64_t run = 0;
};

// What run_cycles did: per cycle its heads and newly parked count; the
// admissions, preemptions (with when the admission each ended began), the
// heads tried and left pending and those parked, each with the offset
// (0-based, within the call) of its cycle, in cycle order.
struct CyclesRun {
  std::int64_t cycles = 0;
  bool stable = false;
  std::vector<std::int64_t> heads, newly_parked;
  std::vector<std::int32_t> admitted, admitted_cycle;
  std::vector<std::int32_t> preempted, preempted_cycle;
  std::vector<std::int64_t> preempted_admission_ns;
  std::vector<std::int32_t> attempted, attempted_cycle;
  std::vector<std::int32_t> parked, parked_cycle;
};

struct CycleReport {
  std::int64_t cycle = 0;
  std::vector<std::int32_t> admitted;
  std::vector<std::int32_t> preempted;  // victims whose eviction was issued
  std::vector<std::int32_t> attempted;  // heads tried and left pending, by wid
  std::vector<std::int32_t> parked;     // heads parked as inadmissible (equivalents parked with them: in newly_parked only)
  std::int64_t newly_parked = 0;
  std::int64_t heads = 0;
};

// ENTRY_WAITING: not processed, the scheduler was blocked before it (waitForPodsReady).
enum EntryStatus : std::uint8_t { ENTRY_NONE = 0, ENTRY_SKIPPED = 1, ENTRY_ASSUMED = 2, ENTRY_WAITING = 3 };

struct Entry {
  std::int32_t wid = -1, cq = -1;
  std::int32_t assignment = -1;
  std::uint32_t t_first = 0, t_n = 0;  // targets, in Engine::targets_
  EntryStatus status = ENTRY_NONE;
  PendingReason reason = REASON_NONE;
  RequeueReason requeue_reason = REQUEUE_GENERIC;
  bool deferred = false;
  bool is_preemptor = false;  // waiting for its preemptions (PrioritizePreemptorWorkloads)
  bool scan_pending = false;  // its assignment's scan state is to be stored when the cycle ends
  MessageKind msg_kind = MSG_NONE;
  std::int32_t msg_arg = 0;
  // For settled trees (run_until_settled): the flavor scan resumed after an
  // earlier one, the queue's sticky and preemptor workloads before the pop,
  // and, once requeued, whether a replay of the attempt would repeat it.
  bool resumed = false;
  bool settled = false;
  std::int32_t sticky_before = -1, preemptor_before = -1;
};

class Engine {
 public:
  Engine(TopologySpec topology, bool release_evictions);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- configuration -------------------------------------------------------------
  const Topology& topology() const noexcept { return topo_; }
  const QuotaTree& tree() const noexcept { return tree_; }
  int add_flavor_class(const std::vector<std::optional<std::string>>& row) { return topo_.add_flavor_class(row); }
  // Topology Aware Scheduling: the leaves a flavor class may use, per TAS
  // flavor (one call per flavor class, in their order).
  void add_tas_class(std::vector<TasClassFlavor> per_flavor);
  const TasState* tas() const noexcept { return tas_.get(); }
  // Debug/test hook: snapshot the quota tree before and after every target
  // search and throw EngineInvariantError unless they are byte-identical.
  void set_debug_checks(bool on) noexcept { debug_checks_ = on; }
  bool debug_checks() const noexcept { return debug_checks_; }
  // Test hook: with false, run_until_settled runs every cycle in full (no
  // tree settles), to check that skipping settled trees changes nothing.
  void set_skip_settled(bool on) noexcept {
    skip_settled_ = on;
    std::fill(tree_dirty_.begin(), tree_dirty_.end(), 1);
  }
  bool skip_settled() const noexcept { return skip_settled_; }

  // --- workloads in and out ---------------------------------------------------------
  int add_workload(const WorkloadInput& in);
  // Returns the first new wid; the new ids are [first, first + n).
  int add_workloads(const BulkWorkloads& in);
  void remove_workload(int wid);
  // remove_workload for many: the same end state, with one requeue of each
  // cohort tree that got quota back instead of one per workload.
  void remove_workloads(const std::int64_t* wids, std::size_t n);
  void release_eviction(int wid);
  // waitForPodsReady: the PodsReady condition of the workload's current admission.
  void set_pods_ready(int wid, bool ready);
  // A pending workload leaves its queue until until_ns (its requeueAt), then
  // queues by queue_ts.
  void hold(int wid, std::int64_t until_ns, std::int64_t queue_ts);
  // Held workloads whose time came queue again (also at every cycle's start).
  void end_holds(std::int64_t now_ns);
  void evict(int wid, const std::string& reason, const std::string& message);
  // An eviction a controller issued after the cycle just run (an admission
  // check's Retry or Rejected): it belongs to that cycle. queue_ts_ns >= 0:
  // the workload queues by it until admitted again; requeue false: it is
  // deactivated and never queues again.
  void evict_after_cycle(int wid, const std::string& reason, const std::string& message,
                         std::int64_t queue_ts_ns, bool requeue);

  // --- the cycle -------------------------------------------------------------------
  const CycleReport& run_cycle(std::int64_t now_ns);
  // Would a cycle pop any head (an active ClusterQueue with an active workload)?
  bool has_heads() const noexcept;
  // Cycles at now_ns until one admits, preempts and newly parks nothing
  // (Cluster.run_until_stable's rule), at most max_cycles (stable false when
  // that ends it). No cycle at all when no ClusterQueue has a head to pop: it
  // would change nothing (the reference adapter skips it too).
  const StableRun& run_until_stable(std::int64_t now_ns, std::int64_t max_cycles);
  // run_until_stable for victims that keep their quota until
  // release_eviction: only victims a cycle of this call evicted count as a
  // change. attempted_mask as run_cycles'. Cohort trees that settled are not
  // run again until something touches them (see tree_dirty_): the cycles
  // counted are those run_until_stable would run, `run` those run.
  const SettledRun& run_until_settled(std::int64_t now_ns, std::int64_t max_cycles, std::uint8_t* attempted_mask,
                                      std::size_t n_mask);
  // Cluster.run_cycle's cycles without a return to the caller between them:
  // cycle k (1, 2, ...) at start_ns + k * step_ns, at most max_cycles; with
  // until_stable, up to and including the first cycle that admits, preempts
  // and newly parks nothing (stable then), even when there is no head to pop.
  // attempted_mask (uint8 per wid, n_mask of them) or nullptr: then only the
  // heads whose flag is set are reported as attempted, and their flag cleared.
  const CyclesRun& run_cycles(std::int64_t start_ns, std::int64_t step_ns, std::int64_t max_cycles,
                              bool until_stable, std::uint8_t* attempted_mask, std::size_t n_mask);
  std::int64_t cycle() const noexcept { return cycle_; }
  std::int64_t evaluations() const noexcept { return preemptor_.evaluations; }
  const EngineStats& stats() const noexcept { return stats_; }

  // --- admission fair sharing ---------------------------------------------------------
  // Nullptr unless the topology has admissionFairSharing and a usage-based ClusterQueue.
  const UsageLedger* afs_ledger() const noexcept { return afs_.get(); }
  // workload.Info.ComputeLocalQueueFSUsage now (a missing LocalQueue, -1, has weight 1).
  double local_queue_usage(int lq) const;
  // restore_afs_ledger: seed an entry (history and LastUpdate) carried over a rebuild.
  void restore_afs_entry(int lq, Amounts consumed, std::int64_t last_update_ns);

  // --- reading decisions -----------------------------------------------------------
  int n_workloads() const noexcept { return w_.size(); }
  ViewState state(int wid) const noexcept;
  std::string message(int wid) const;
  const char* reason(int wid) const noexcept { return pending_reason_name(static_cast<PendingReason>(w_.reason[wid])); }
  std::string eviction_reason(int wid) const;
  // eviction_reason as a PreemptionReason code, 4 for any other reason (or none).
  std::int8_t eviction_reason_code(int wid) const;
  std::string eviction_message(int wid) const;
  const WorkloadStore& workloads() const noexcept { return w_; }
  const ClusterQueueQueue& queue(int cq) const noexcept { return queues_[cq]; }
  // Validates a wid from the API (throws EngineInputError).
  void check_wid(std::int64_t wid) const;
  std::size_t memory_bytes() const noexcept;

  // Admission record entries (resource | fr << 32, amount) of an admitted workload.
  template <class F>
  void for_each_usage(int wid, F&& f) const noexcept;
  // The same per fr, summed over pod sets (Amount arithmetic): the usage
  // Kueue charges (workload.Info's per flavor-resource usage).
  template <class F>
  void for_each_fr_usage(int wid, F&& f) const noexcept;

  // --- called back by the collaborators (FlavorAssigner, Preemptor) ----------------
  // The fr usage charged by an admitted workload (flavored entries), applied
  // to the tree: for good (commit: cache and snapshot) or simulated.
  // Preemptor::remove/restore simulate with commit false.
  void charge(int wid, int sign, bool commit = false) noexcept;
  // The oracle of the flavor assigner: targets for one fr? (preemption mode, borrow)
  GranularMode oracle(int wid, int cq, int fr, Amount quantity);
  // Preemption candidates of the same ClusterQueue from LocalQueues of
  // different names: the busier LocalQueue first (CandidatesOrdering).
  bool afs_candidate_before(int a, int b, int preemptor_cq) const;

 private:
  // ===== state: the collaborators see it through their View (built in the constructor) ======
  Topology topo_;
  std::unique_ptr<TasState> tas_;  // Topology Aware Scheduling (nullptr: no TAS flavor)
  QuotaTree tree_;
  WorkloadStore w_;
  FairShares shares_;
  std::vector<ClusterQueueQueue> queues_;
  // Per ClusterQueue: admitted workloads in reverse candidate order (the
  // first candidate - evicting first, then lower priority, most recently
  // admitted, namespace/name, wid - is the last element).
  std::vector<std::vector<AdmittedEntry>> cq_admitted_;
  std::vector<AdmittedFront> cq_front_;  // cq_admitted_[cq].front(), compact
  CohortFronts cohort_fronts_;
  void update_front(int cq) noexcept {
    const auto& l = cq_admitted_[cq];
    cq_front_[cq] = l.empty() ? AdmittedFront{} : AdmittedFront{l.back().priority, l.back().evicting, 0};
    cohort_fronts_.mark(tree_.root_of(cq));
  }
  std::vector<std::int64_t> cq_generation_, snapshot_generation_;
  // Queue-order timestamps moved by a preemption (reclaim while borrowing,
  // without PrioritySortingWithinCohort), to restore on admission.
  std::unordered_map<std::int32_t, std::int64_t> queue_ts_before_preemption_;
  // Workloads deactivated while holding quota: their release queues nothing.
  std::unordered_set<std::int32_t> deactivated_;
  std::vector<std::uint8_t> cq_active_;
  std::int64_t cycle_ = 0;
  bool release_evictions_;
  bool debug_checks_ = false;
  EngineStats stats_;
  AssignmentArena arena_;
  std::vector<Target> targets_;  // the cycle's targets (Entry::t_first/t_n)
  std::vector<Entry> entries_;

  bool admitted_before(const AdmittedEntry& a, const AdmittedEntry& b) const noexcept;
  // Where key goes in a ClusterQueue's admitted list (its lower bound).
  std::vector<AdmittedEntry>::const_iterator admitted_position(const std::vector<AdmittedEntry>& l,
                                                               const AdmittedEntry& key) const noexcept;
  AdmittedEntry admitted_entry(int wid) const noexcept {
    std::uint64_t mask = 0;
    for_each_usage_key(wid, [&](int fr) { mask |= std::uint64_t{1} << (fr & 63); });
    return {w_.admission_time[wid], mask, w_.priority[wid], wid, w_.evicting[wid]};
  }
  template <class F>
  void for_each_usage_key(int wid, F&& f) const noexcept;
  bool in_cq_admitted(int wid) const noexcept;
  void cq_admitted_insert(int wid);
  void cq_admitted_erase(int wid);

  // --- admission fair sharing (all no-ops without afs_) ---
  std::unique_ptr<UsageLedger> afs_;
  std::vector<std::int32_t> afs_lqs_;      // LocalQueues of usage-based ClusterQueues, by id
  std::vector<std::uint8_t> lq_is_afs_;    // per LocalQueue id
  std::vector<std::int32_t> lq_queue_name_;  // per LocalQueue id: its interned name (bulk workloads)
  // Per LocalQueue id + 1 (-1 included): its usage as the cycle's pops and
  // preemption orderings read it (the snapshot taken after sampling).
  std::vector<double> lq_usage_;
  bool lq_usage_valid_ = false;
  // Per LocalQueue x resource: what its workloads admitted to its
  // ClusterQueue use, in canonical units, and how many usage entries there
  // are (a resource is a key of the admitted usage while any is counted).
  std::vector<Nanos> lq_adm_sum_;
  std::vector<std::int32_t> lq_adm_count_;
  // workload.Info.LocalQueueFSUsage of an admitted workload: false unless its
  // ClusterQueue is usage-based.
  bool lq_fs_usage(int wid, double& usage) const;

  void check_topology_for_engine() const;
  void validate(const WorkloadInput& in) const;
  int append_workload_spec(const WorkloadInput& in);
  // `listed`: the workload also joins cq's admitted list (the preemption
  // candidates); an admission in a cycle joins it when the cycle ends.
  void admit(int wid, int cq, std::int64_t time_ns, bool listed = true);
  void release(int wid);
  void requeue_tree(int cq);
  void set_evicting(int wid);

  // admission fair sharing (admission_fair_sharing_glue.cpp)
  void init_admission_fair_sharing();
  void lq_admitted_add(int wid, int cq, int sign);
  Amounts lq_admitted_usage(int lq) const;
  Amounts total_requests(int wid) const;
  double queued_lq_usage(int lq) const;
  void sample_local_queues(std::int64_t now_ns);
  void push_entry_penalty(int wid, int cq, std::int64_t now_ns);
  void settle_entry_penalties(std::int64_t now_ns);

  // nomination
  bool scan_state_usable(int wid, int cq) const noexcept;
  void get_assignments(int wid, int cq, bool use_last, const std::int32_t* nomination,
                       std::size_t nomination_ps, int& assignment, std::uint32_t& t_first, std::uint32_t& t_n);
  bool partial_search(int wid, int cq, bool use_last, const std::int32_t* nomination, std::size_t nomination_ps,
                      int& assignment, std::uint32_t& t_first, std::uint32_t& t_n);
  void build_ctx(int wid, int cq, int assignment, PreemptionCtx& ctx);
  std::uint32_t find_targets(const PreemptionCtx& ctx, std::uint32_t& t_first);
  void record(Entry& e, int assignment, std::uint32_t t_first, std::uint32_t t_n);
  void store_scan_state(const Entry& e);
  void drop_scan_state(Entry& e) noexcept;
  bool nominate(Entry& e);
  void prefetch_head(std::size_t i) const noexcept;
  void prefetch_entry(std::size_t k) const noexcept;

  // processing
  void classical_order(std::vector<std::int32_t>& order);
  std::size_t nominated_flavors(const Entry& e);
  void process(Entry& e, std::int64_t now_ns);
  void process_unless_blocked(Entry& e, std::int64_t now_ns);
  bool pods_ready_for_all_admitted() const noexcept;
  bool targets_overlap(const Entry& e) const noexcept;
  // Kueue fits (FitsCheck): 0 ok, 1 quota does not fit, 2 quota fits but a placement does not.
  int fits(int cq, int assignment, const Entry& e);
  void reserve(int cq, const FrAmount* first, const FrAmount* last, int assignment);
  // kueue updateAssignmentForTAS (getAssignments' end)
  void update_assignment_for_tas(int wid, int cq, int assignment, std::uint32_t t_first, std::uint32_t t_n);
  std::vector<TasAsk> tas_scratch_;
  void issue_preemptions(const Entry& e, std::int64_t now_ns);
  void skip(Entry& e, MessageKind message);
  void admit_entry(Entry& e, std::int64_t now_ns);
  void persist_attempt(const Entry& e);
  void append_cq_path(std::string& out, int cq) const;

  // --- settled cohort trees (run_until_settled) ---
  // Per quota-tree root (a node id; a ClusterQueue outside any cohort is its
  // own root): 0 while the tree is settled, i.e. a cycle would replay its
  // last attempt of every head exactly: the heads are the same workloads,
  // nothing they read changed (queues, quota, admitted workloads, sticky and
  // preemptor workloads, cluster queue generations), that attempt changed
  // nothing (no admission, no new eviction, nothing newly parked) and
  // neither it nor its replay resumes a flavor scan. Any change to a tree's
  // queues, quota or admitted workloads sets its flag (touch_tree). Kueue's
  // queue manager likewise requeues inadmissible workloads only on an event
  // of their cohort (manager.go QueueAssociatedInadmissibleWorkloadsAfter).
  std::vector<std::uint8_t> tree_dirty_;
  std::vector<std::int32_t> tree_roots_;  // the distinct roots of the ClusterQueues
  std::vector<std::uint8_t> tree_unsettled_;  // per root, scratch of note_settled_trees
  bool skip_settled_ = true;
  // Whether a tree can settle at all: not when admission fair sharing (pops
  // follow usages that move with time), Topology Aware Scheduling (the
  // trees share the nodes' capacity), waitForPodsReady's blockAdmission
  // (one head can block the others of every tree) or saturated amounts (a
  // victim of any tree is removed in fits) tie the trees' attempts together.
  bool trees_can_settle() const noexcept;
  void touch_tree(int cq) noexcept {
    if (cq >= 0) tree_dirty_[static_cast<std::size_t>(tree_.root_of(cq))] = 1;
  }
  // A workload pushed into cq's queue: its tree is touched only if it may
  // be the head now (otherwise the next pop returns what it would have).
  void touch_head(int cq, int wid) noexcept {
    if (queues_[static_cast<std::size_t>(cq)].may_be_head(w_, wid)) touch_tree(cq);
  }
  bool dirty_heads() const noexcept;
  bool scan_resumes(int wid, int cq) const noexcept;
  void note_settled_trees();
  const CycleReport& run_cycle(std::int64_t now_ns, bool dirty_only);

  FlavorAssigner assigner_;
  Preemptor preemptor_;
  FairSharingTournament tournament_;
  CycleReport report_;
  StableRun stable_run_;
  SettledRun settled_run_;
  CyclesRun cycles_run_;
  std::vector<std::int32_t> requeue_roots_;
  PreemptionCtx ctx_, oracle_ctx_;
  std::vector<FrAmount> reserve_scratch_;
  std::vector<std::int32_t> heads_, nominated_, order_, nomination_, counts_;
  struct OrderKey {
    std::uint64_t hi;  // preemptor last (1 bit), borrowing height, priority descending
    std::uint64_t lo;  // queue-order timestamp, as unsigned order
    std::int32_t wid, entry;
  };
  std::vector<OrderKey> order_keys_, order_scratch_;
  std::vector<std::int64_t> deltas_;
  // victims of the cycle: insertion order + membership
  std::vector<std::int32_t> victims_;
  // waitForPodsReady: per wid, its current admission is PodsReady (grown on
  // demand); whether this cycle's scheduler is blocked waiting for them.
  std::vector<std::uint8_t> pods_ready_;
  bool blocked_ = false;
  std::vector<std::pair<std::int64_t, std::int32_t>> holds_;  // min-heap of (until_ns, wid)
  std::vector<std::uint8_t> is_victim_;
  std::vector<std::int32_t> removed_;
  // capacity reserved for this cycle only: (cq, fr, amount), undone at the end
};

template <class F>
void Engine::for_each_usage_key(int wid, F&& f) const noexcept {
  for_each_usage(wid, [&](int fr, Amount) { f(fr); });
}

template <class F>
void Engine::for_each_usage(int wid, F&& f) const noexcept {
  w_.for_each_admitted(
      wid, [](std::int64_t, std::int64_t) {},
      [&](const AdmissionUse& u) {
        if (u.fr >= 0) f(u.fr, u.amount);
      });
}

// Within a pod set every fr is distinct, so one pod set yields its entries
// as they are; with several, the first entry of each fr yields the sum.
template <class F>
void Engine::for_each_fr_usage(int wid, F&& f) const noexcept {
  const std::int64_t n_ps = w_.admitted_pod_sets(wid);
  if (n_ps == 0) return;
  if (n_ps == 1) {
    for_each_usage(wid, f);
    return;
  }
  int k = 0;  // index of the entry at hand
  for_each_usage(wid, [&](int fr, Amount) {
    int j = 0;
    bool first = true;
    Amount total = 0;
    for_each_usage(wid, [&](int other, Amount v) {
      if (other == fr) {
        first = first && j >= k;
        total = amount_add(total, v);
      }
      ++j;
    });
    if (first) f(fr, total);
    ++k;
  });
}

}  // namespace kueue_fast
