// Workloads in structure-of-arrays form, indexed by dense workload id (wid).
// The C++ form of scheduler.py WorkloadRecord plus engine.inputs.WorkloadSpec.
//
// Per-workload fixed fields are parallel vectors. Variable-length data lives
// in shared pools addressed by (offset, length): pod sets, requests, the
// admission record, the last flavor scan and the last attempt's reasons.
// Nothing is allocated per workload in the scheduling loop: pools grow
// amortised, and a workload's blocks are reused across attempts.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/types.hpp>

namespace kueue_fast {

// The last scheduling attempt's message, as a structured record formatted
// lazily (workload_view) into exactly the reference's text.
enum MessageKind : std::uint8_t {
  MSG_NONE = 0,
  MSG_ASSIGNMENT = 1,          // Assignment.message() from the stored reasons
  MSG_ASSIGNMENT_PENDING = 2,  // ... + ". Pending the preemption of {arg} workload(s)"
  MSG_OVERLAP = 3,
  MSG_NO_LONGER_FITS = 4,
  MSG_DEFERRED = 5,
  MSG_INACTIVE = 6,  // the ClusterQueue's inactive message
  MSG_BLOCK = 7,     // the workload's block message
  MSG_WAITING_FOR_PODS_READY = 20,
};

enum EvictionKind : std::uint8_t { EVICT_NONE = 0, EVICT_PREEMPTED = 1, EVICT_CUSTOM = 2 };

// [first, first + n) rows of a table.
struct Span {
  std::uint32_t first = 0;
  std::uint32_t n = 0;
};

struct PodSetRow {
  std::int32_t count;
  std::int32_t min_count;  // -1: none
  std::int32_t flavor_class;
  std::int32_t name;       // index into pod_set_names
  Span requests;
};

struct RequestRow {
  std::int32_t resource;
  Amount amount;  // per pod
};

// One entry of an admission record: the resource, its flavor-resource (-1:
// a resource without flavor, carried but not charged) and the amount.
struct AdmissionUse {
  std::int32_t resource;
  std::int32_t fr;
  Amount amount;
};

// An admission record entry is two words: (resource | fr << 32, amount).
inline std::int64_t admission_word(std::int32_t resource, std::int32_t fr) noexcept {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(static_cast<std::uint32_t>(resource)) |
                                   (static_cast<std::uint64_t>(static_cast<std::uint32_t>(fr)) << 32));
}
inline std::int32_t admission_word_fr(std::int64_t word) noexcept {
  return static_cast<std::int32_t>(static_cast<std::uint64_t>(word) >> 32);
}
inline AdmissionUse decode_admission_use(const std::int64_t* entry) noexcept {
  const auto word = static_cast<std::uint64_t>(entry[0]);
  return {static_cast<std::int32_t>(static_cast<std::uint32_t>(word & 0xffffffffu)), admission_word_fr(entry[0]),
          static_cast<Amount>(entry[1])};
}

// A pool slot: where a workload's variable block lives.
struct Slot {
  std::uint32_t offset = 0;
  std::uint32_t size = 0;
  std::uint32_t capacity = 0;
};

struct WorkloadStore {
  // --- spec (immutable once added) -------------------------------------------
  std::vector<std::int32_t> cq;        // where it queues when pending, -1 nowhere
  std::vector<std::int32_t> priority;
  std::vector<std::int64_t> queue_ts;  // queue-order timestamp (ns)
  std::vector<std::uint64_t> hash;     // scheduling equivalence hash
  std::vector<std::uint8_t> block;
  std::vector<std::int32_t> block_message;  // index into `strings`, -1 none
  std::vector<Span> pod_sets_of;            // the workload's pod sets (global rows)
  // Admission fair sharing: its LocalQueue (topology id, -1 none) and the
  // interned spec.queueName (-1 when the engine has no admission fair sharing).
  std::vector<std::int32_t> local_queue, queue_name;
  // Tie-break key "namespace\0name" in `text`, with its first 8 bytes
  // big-endian for fast comparisons; uid after it.
  std::vector<std::uint32_t> key_off, ns_len, name_len, uid_off, uid_len;
  std::vector<std::uint64_t> key_prefix;
  std::string text;
  std::vector<std::string> strings;  // block messages, custom eviction reasons/messages
  // The kueue.x-k8s.io/job-uid label of the few workloads that have one (the
  // controller's; bulk ingestion has none): sparse, to keep rows small.
  std::unordered_map<std::int32_t, std::string> job_uids;

  // Pod sets and their per-pod requests as compact rows, a workload's rows
  // contiguous (one or two cache lines to read a workload's shape).
  std::vector<PodSetRow> pod_sets;
  std::vector<RequestRow> requests;        // by resource id ascending within a pod set
  std::vector<std::string> pod_set_names;  // interned

  // --- status ---------------------------------------------------------------------
  std::vector<std::uint8_t> status;  // WorkloadStatus
  std::vector<std::uint8_t> evicting;
  std::vector<std::int32_t> admitted_cq;
  std::vector<std::int64_t> admission_time;
  // Admission record (view's pod_sets/resource_usage, and the usage charged):
  // words [n_ps, then per pod set: count, n, then n x (rid | fr << 32, amount)];
  // fr = -1 for a resource without flavor (carried, not charged). Read it
  // with for_each_admitted / admitted_pod_sets, not word by word.
  std::vector<Slot> adm;
  std::vector<std::int64_t> adm_pool;

  // --- the last scheduling attempt ----------------------------------------------
  std::vector<std::uint8_t> reason;    // PendingReason
  std::vector<std::uint8_t> msg_kind;  // MessageKind
  std::vector<std::int32_t> msg_arg;
  std::vector<Slot> msg;               // encoded reasons, see flavor_assigner.hpp
  std::vector<std::uint64_t> msg_pool;
  std::uint64_t msg_garbage = 0;
  // Flavor scan state (LastState): per pod set x resource group of its
  // ClusterQueue, the last flavor index tried (-1 scan ended, TRIED_ABSENT).
  std::vector<std::uint8_t> ls_valid;
  std::vector<std::int64_t> ls_generation, ls_cycle;
  std::vector<std::uint32_t> ls_off;  // UINT32_MAX: no block yet
  std::vector<std::int16_t> ls_pool;

  // --- the last eviction ----------------------------------------------------------
  std::vector<std::int64_t> evicted_cycle;
  std::vector<std::uint8_t> evict_kind, evict_reason;  // EvictionKind, PreemptionReason
  std::vector<std::int32_t> preempted_by, evict_victim_cq, evict_custom_reason, evict_custom_message;

  // --- queue bookkeeping ----------------------------------------------------------
  std::vector<std::uint8_t> queue_active;   // in its ClusterQueue's active set (the heap)
  std::vector<std::uint8_t> inadmissible;   // in its ClusterQueue's inadmissible set

  int size() const noexcept { return static_cast<int>(cq.size()); }

  std::string_view ns(int w) const noexcept { return {text.data() + key_off[w], ns_len[w]}; }
  std::string_view name(int w) const noexcept { return {text.data() + key_off[w] + ns_len[w] + 1, name_len[w]}; }
  std::string_view uid(int w) const noexcept { return {text.data() + uid_off[w], uid_len[w]}; }
  std::string_view job_uid(int w) const noexcept {
    auto it = job_uids.find(w);
    return it == job_uids.end() ? std::string_view{} : std::string_view{it->second};
  }

  // Order of (namespace, name), as Python compares the tuples: code points,
  // which is UTF-8 byte order. The key "ns\0name" compares the same way as
  // long as the namespace has no NUL (checked at ingestion).
  int compare_names(int a, int b) const noexcept {
    if (key_prefix[a] != key_prefix[b]) return key_prefix[a] < key_prefix[b] ? -1 : 1;
    std::string_view ka(text.data() + key_off[a], ns_len[a] + 1 + name_len[a]);
    std::string_view kb(text.data() + key_off[b], ns_len[b] + 1 + name_len[b]);
    int c = ka.compare(kb);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }

  // Appends the per-workload defaults for a new wid (spec fields set by the caller).
  void grow_status();
  // Room for `n` more workloads with `pod_sets` pod sets, `requests` requests
  // and `text` bytes of names; grows geometrically (many small calls stay linear).
  void reserve_more(std::size_t n, std::size_t pod_sets, std::size_t requests, std::size_t text);
  // Room for `adm_words` more admission words and `ls_entries` more scan
  // state entries, so that the cycles append blocks without copying the pools.
  void reserve_pools(std::size_t adm_words, std::size_t ls_entries);
  // Adds "ns\0name" and the uid to the text arena for the newest wid.
  void set_names(std::string_view ns, std::string_view name, std::string_view uid);
  int intern_pod_set_name(std::string_view name);
  int intern_queue_name(std::string_view name);
  std::unordered_map<std::string, std::int32_t> queue_names;  // interned spec.queueName
  std::int32_t add_string(std::string s);

  // The admission record of w, in order: on_pod_set(count, n) for each pod
  // set, then on_use(AdmissionUse) for its n entries. Nothing without one.
  template <class PodSetF, class UseF>
  void for_each_admitted(int w, PodSetF&& on_pod_set, UseF&& on_use) const noexcept {
    const Slot& s = adm[static_cast<std::size_t>(w)];
    if (s.size == 0) return;
    const std::int64_t* p = adm_pool.data() + s.offset;
    const std::int64_t n_ps = *p++;
    for (std::int64_t i = 0; i < n_ps; ++i) {
      const std::int64_t count = *p++;
      const std::int64_t n = *p++;
      on_pod_set(count, n);
      for (std::int64_t k = 0; k < n; ++k, p += 2) on_use(decode_admission_use(p));
    }
  }
  // How many pod sets the admission record of w has (0: none).
  std::int64_t admitted_pod_sets(int w) const noexcept {
    const Slot& s = adm[static_cast<std::size_t>(w)];
    return s.size == 0 ? 0 : adm_pool[s.offset];
  }

  // Reserve (or reuse) a block of `words` in the admission pool.
  std::int64_t* admission_block(int w, std::uint32_t words);
  // Store the encoded reasons of the last attempt.
  std::uint64_t* message_block(int w, std::uint32_t words);
};

inline constexpr std::int16_t TRIED_ABSENT = -2;

}  // namespace kueue_fast
