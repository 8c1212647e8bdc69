// Codes shared with kueue_fast/engine/inputs.py (POLICY_CODES, FUNGIBILITY_CODES,
// PREFERENCE_CODES, STRATEGY_CODES, FAIR_STRATEGY_CODES, BLOCK_*) and the
// engine's own enumerations (modes, requeue reasons, states).
#pragma once

#include <cstdint>

namespace kueue_fast {

// --- configuration codes (engine/inputs.py) --------------------------------------
enum Policy : std::uint8_t { NEVER = 0, LOWER_PRIORITY = 1, LOWER_OR_NEWER_EQUAL = 2, ANY = 3 };
enum Fungibility : std::uint8_t { MAY_STOP_SEARCH = 0, TRY_NEXT_FLAVOR = 1 };
enum Preference : std::uint8_t {
  PREFERENCE_UNSET = 0,
  BORROWING_OVER_PREEMPTION = 1,
  PREEMPTION_OVER_BORROWING = 2
};
enum QueueingStrategy : std::uint8_t { STRICT_FIFO = 0, BEST_EFFORT_FIFO = 1 };
enum FairStrategy : std::uint8_t {
  LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = 0,
  LESS_THAN_INITIAL_SHARE = 1
};
enum Block : std::uint8_t {
  BLOCK_NONE = 0,
  BLOCK_NAMESPACE_MISMATCH = 1,
  BLOCK_RESOURCES_INVALID = 2
};

// --- flavor assignment --------------------------------------------------------
// FlavorAssignmentMode, worst to best (flavor_assigner.py NO_FIT..FIT).
enum Mode : std::uint8_t { NO_FIT = 0, PREEMPT = 1, DEFERRED_FIT = 2, FIT = 3 };
// The finer preemption mode used inside the assigner, worst to best.
enum PreemptionMode : std::uint8_t {
  PM_NO_FIT = 0,
  PM_NO_CANDIDATES = 1,
  PM_PREEMPT = 2,
  PM_RECLAIM = 3,
  PM_FIT = 4
};
inline Mode mode_of(PreemptionMode pm) noexcept {
  switch (pm) {
    case PM_NO_FIT: return NO_FIT;
    case PM_FIT: return FIT;
    default: return PREEMPT;
  }
}
// Borrowing level of "no flavor yet" (flavor_assigner.py BORROW_UNLIMITED).
inline constexpr std::int64_t BORROW_UNLIMITED = std::int64_t{1} << 62;

// --- queues (kueue RequeueReason) ---------------------------------------------
enum RequeueReason : std::uint8_t {
  REQUEUE_GENERIC = 0,
  REQUEUE_FAILED_AFTER_NOMINATION = 1,
  REQUEUE_NAMESPACE_MISMATCH = 2,
  REQUEUE_PENDING_PREEMPTION = 3,
  REQUEUE_PREEMPTION_FAILED = 4,
  REQUEUE_NO_FIT = 5,
  REQUEUE_PREEMPTION_NO_CANDIDATES = 6
};

// --- workloads -----------------------------------------------------------------
enum WorkloadStatus : std::uint8_t { STATUS_PENDING = 0, STATUS_ADMITTED = 1, STATUS_FINISHED = 2 };
// What workload_view calls "state" (also the bulk decision code).
enum ViewState : std::int8_t {
  STATE_PENDING = 0,
  STATE_ADMITTED = 1,
  STATE_EVICTED = 2,
  STATE_FINISHED = 3
};

// QuotaReserved=False reasons (scheduler.py).
enum PendingReason : std::uint8_t {
  REASON_NONE = 0,
  WAITING_FOR_QUOTA = 1,
  WAITING_FOR_PREEMPTED = 2,
  NO_MATCHING_FLAVOR = 3,
  EXCEEDS_MAX_QUOTA = 4,
  MISCONFIGURED = 5,
  SUSPENDED = 6,
  TOPOLOGY_PLACEMENT_FAILED = 7,
  WAITING_FOR_PODS_READY = 20
};
const char* pending_reason_name(PendingReason r) noexcept;

// Preempted condition reasons (preemption.py).
enum PreemptionReason : std::uint8_t {
  IN_CLUSTER_QUEUE = 0,
  IN_COHORT_RECLAMATION = 1,
  IN_COHORT_FAIR_SHARING = 2,
  IN_COHORT_RECLAIM_WHILE_BORROWING = 3
};
const char* preemption_reason_name(PreemptionReason r) noexcept;
const char* preemption_reason_human(PreemptionReason r) noexcept;

}  // namespace kueue_fast
