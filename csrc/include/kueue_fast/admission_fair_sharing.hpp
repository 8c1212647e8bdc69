// Admission fair sharing (AFS): the per-LocalQueue usage ledger. The C++ twin
// of kueue_fast/engine/reference/admission_fair_sharing.py (kueue
// pkg/cache/queue/afs/usage_ledger.go, pkg/util/admissionfairsharing,
// localqueue_controller.go reconcileConsumedUsage, workload_controller.go
// updateAfsConsumedUsage, scheduler.go updateEntryPenalty).
//
// Amounts are exact integers in nanos of the base unit (1 cpu = 10^9, 1 byte
// = 10^9), as the reference's Python ints (Kueue's resource.Quantity at nano
// scale). They are kept in 128-bit integers: any amount a workload or a
// LocalQueue status can hold (an int64 quantity times 10^9) and sums of
// millions of them fit. Every step that could leave the 128-bit range checks
// and throws AfsRangeError (an input error: the reference's unbounded ints
// would go on) instead of wrapping.
//
// Floats appear only where the reference uses floats, in the same order of
// operations: the alpha rate (Go's math.Pow(0.5, y) step by step), the
// elapsed seconds, and the usage sum that orders LocalQueues.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kueue_fast {

__extension__ typedef __int128 Nanos;
__extension__ typedef unsigned __int128 UNanos;

// An amount leaves the 128-bit range (or a factor is not finite).
class AfsRangeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One resource's amount; Amounts are sorted by resource id, one entry per
// resource present (a present zero is not an absent key: the reference's
// dicts keep keys, and the ledger state shows them).
struct NanoAmount {
  std::int32_t resource;
  Nanos value;
};
using Amounts = std::vector<NanoAmount>;

// --- arithmetic (admission_fair_sharing.py module functions) ------------------------------

// Go's math.Pow(0.5, y) as pkg math/pow.go computes it: the fractional part
// through Exp(yf*Log(0.5)), the integer part exactly (ldexp).
double go_pow_half(double y) noexcept;
// admissionfairsharing.calculateAlphaRate: 1 - 0.5^(sampling/halfLife); 0
// without half-life.
double alpha_rate(double sampling_s, double half_life_s) noexcept;
// time.Duration.Seconds(): whole seconds plus the remainder / 1e9.
double go_seconds(Nanos ns) noexcept;

// A double as digits x 10^exp10, with the digits of its shortest round-trip
// decimal spelling (Python's repr, Go's strconv 'g' -1). Throws AfsRangeError
// for inf and nan.
struct ShortestDecimal {
  bool negative = false;
  std::uint64_t digits = 0;
  int exp10 = 0;
};
ShortestDecimal shortest_decimal(double f);

// resource.MulByFloat: the exact product of v and f's shortest decimal,
// truncated towards zero to an integer number of nanos.
Nanos mul_by_float(Nanos v, const ShortestDecimal& f);
Amounts mul_by_float(const Amounts& a, double f);
// resource.MergeResourceListKeepSum (keys of both, values added).
Amounts merge_sum(const Amounts& a, const Amounts& b);
// Checked a + b.
Nanos add_nanos(Nanos a, Nanos b);
// float(v) in Python: correctly rounded (to nearest, ties to even).
double nanos_to_double(Nanos v) noexcept;
// Decimal text, and back (throws AfsRangeError outside the 128-bit range).
std::string nanos_to_string(Nanos v);
Nanos nanos_from_string(const std::string& s);

// --- the ledger ------------------------------------------------------------------------------

// Configuration.admissionFairSharing (engine.inputs.AdmissionFairSharingSpec).
struct AfsConfig {
  double usage_half_life_s = 0.0;         // usageHalfLifeTime (0: no history kept)
  double usage_sampling_interval_s = 0.0; // usageSamplingInterval
  std::vector<double> resource_weights;   // per resource id
};

// afs.UsageLedgerEntry.
struct LedgerEntry {
  Amounts resources;                 // the decayed consumed history
  std::int64_t last_update_ns = 0;   // anchors the decay clock
  // Pending entry penalties, one per workload id, in push order.
  std::vector<std::pair<std::int32_t, Amounts>> penalties;
  Amounts pending_penalty() const;
};

// The per-LocalQueue ledger and the rules of its three writers (the
// LocalQueue reconciler, the scheduler, the workload controller). LocalQueue
// ids are those of the topology; -1 (a workload without LocalQueue) is a key
// like any other. Entries are kept in creation order (the reference's dict).
class UsageLedger {
 public:
  // nanos_per_unit: per resource id, nanos of one canonical engine unit
  // (10^6 for cpu, which the engine counts in milli-units; 10^9 otherwise).
  UsageLedger(AfsConfig cfg, std::vector<std::int64_t> nanos_per_unit, int n_local_queues);

  const AfsConfig& config() const noexcept { return cfg_; }
  // Canonical engine units -> nanos, per resource (to_nanos).
  Nanos to_nanos(int resource, Nanos v) const;

  // --- LocalQueue reconciler ---
  bool seeded(int lq) const noexcept { return slot_[static_cast<std::size_t>(lq + 1)] >= 0; }
  // initializeAfsIfNeeded: a new entry from the persisted status, stamped now
  // (an existing entry is replaced in place, keeping its position).
  void seed(int lq, Amounts persisted, std::int64_t now_ns);
  // Sample when the interval has passed since LastUpdate, or a penalty is pending.
  bool due(int lq, std::int64_t now_ns) const;
  // reconcileConsumedUsage: decay towards the admitted usage over the elapsed
  // time (clamped at 0; LastUpdate never goes back), or reset with no half-life.
  void sample(int lq, const Amounts& admitted, std::int64_t now_ns);

  // --- scheduler ---
  // CalculateEntryPenalty: the requests times the alpha rate of one interval.
  Amounts entry_penalty(const Amounts& total_requests) const;
  // PushPenalty: the workload's record replaces an earlier one; a push
  // creating the entry starts its decay clock.
  void push_penalty(int lq, std::int32_t wid, Amounts penalty, std::int64_t now_ns);

  // --- workload controller ---
  // updateAfsConsumedUsage on the transition into Admitted.
  void settle(int lq, std::int32_t wid, const Amounts& admitted, std::int64_t now_ns);

  // --- readers ---
  // CalculateUsage over history and pending penalties, / the LocalQueue weight
  // (+inf for a weight <= 0).
  double usage(int lq, double weight) const;
  const LedgerEntry* entry(int lq) const noexcept {
    const std::int32_t s = slot_[static_cast<std::size_t>(lq + 1)];
    return s < 0 ? nullptr : &entries_[static_cast<std::size_t>(s)];
  }
  // LocalQueue ids with an entry, in creation order.
  const std::vector<std::int32_t>& order() const noexcept { return order_; }

 private:
  LedgerEntry& entry_or_create(int lq, std::int64_t now_ns);

  AfsConfig cfg_;
  std::vector<std::int64_t> nanos_per_unit_;
  std::vector<std::int32_t> slot_;  // per LocalQueue id + 1: index into entries_, -1 none
  std::vector<LedgerEntry> entries_;
  std::vector<std::int32_t> order_;
};

// Stable top-down merge sort, the same splits and merges as the reference's
// merge_sort (kueue_fast/engine/reference/preemption.py): with a comparator that is
// not a strict weak order the result is still the reference's, where
// std::sort would be undefined. `scratch` is resized as needed.
template <class T, class Before>
void merge_sort(T* first, std::size_t n, Before&& before, std::vector<T>& scratch) {
  if (n <= 1) return;
  const std::size_t mid = n / 2;
  merge_sort(first, mid, before, scratch);
  merge_sort(first + mid, n - mid, before, scratch);
  scratch.assign(first, first + n);
  std::size_t i = 0, j = mid, out = 0;
  while (i < mid && j < n) {
    if (before(scratch[j], scratch[i])) {
      first[out++] = scratch[j++];
    } else {
      first[out++] = scratch[i++];
    }
  }
  while (i < mid) first[out++] = scratch[i++];
  while (j < n) first[out++] = scratch[j++];
}

}  // namespace kueue_fast
