#include <kueue_fast/workloads.hpp>

#include <algorithm>
#include <limits>

namespace kueue_fast {

void WorkloadStore::grow_status() {
  status.push_back(STATUS_PENDING);
  evicting.push_back(0);
  admitted_cq.push_back(-1);
  admission_time.push_back(0);
  adm.push_back({});
  reason.push_back(REASON_NONE);
  msg_kind.push_back(MSG_NONE);
  msg_arg.push_back(0);
  msg.push_back({});
  ls_valid.push_back(0);
  ls_generation.push_back(0);
  ls_cycle.push_back(0);
  ls_off.push_back(std::numeric_limits<std::uint32_t>::max());
  evicted_cycle.push_back(-1);
  evict_kind.push_back(EVICT_NONE);
  evict_reason.push_back(0);
  preempted_by.push_back(-1);
  evict_victim_cq.push_back(-1);
  evict_custom_reason.push_back(-1);
  evict_custom_message.push_back(-1);
  queue_active.push_back(0);
  inadmissible.push_back(0);
}

// Geometric growth: the simulator adds one or two workloads per call
// (100k calls); an exact-size reserve per call would copy every array each
// time (quadratic). Reserve only when the capacity is exceeded, to at least
// twice the current capacity.
template <class V>
static void grow_to(V& v, std::size_t needed) {
  if (v.capacity() < needed) v.reserve(std::max(needed, 2 * v.capacity()));
}

void WorkloadStore::reserve_more(std::size_t n, std::size_t n_ps, std::size_t n_req, std::size_t n_text) {
  const std::size_t total = cq.size() + n;
  auto more = [&](auto& v) { grow_to(v, total); };
  more(cq), more(priority), more(queue_ts), more(hash), more(block), more(block_message), more(pod_sets_of);
  more(local_queue), more(queue_name);
  more(key_off), more(ns_len), more(name_len), more(uid_off), more(uid_len), more(key_prefix);
  more(status), more(evicting), more(admitted_cq), more(admission_time), more(adm);
  more(reason), more(msg_kind), more(msg_arg), more(msg), more(ls_valid), more(ls_generation), more(ls_cycle);
  more(ls_off), more(evicted_cycle), more(evict_kind), more(evict_reason), more(preempted_by), more(evict_victim_cq);
  more(evict_custom_reason), more(evict_custom_message), more(queue_active), more(inadmissible);
  grow_to(pod_sets, pod_sets.size() + n_ps);
  grow_to(requests, requests.size() + n_req);
  grow_to(text, text.size() + n_text);
}

void WorkloadStore::reserve_pools(std::size_t adm_words, std::size_t ls_entries) {
  grow_to(adm_pool, adm_pool.size() + adm_words);
  grow_to(ls_pool, ls_pool.size() + ls_entries);
}

void WorkloadStore::set_names(std::string_view n, std::string_view nm, std::string_view u) {
  key_off.push_back(static_cast<std::uint32_t>(text.size()));
  ns_len.push_back(static_cast<std::uint32_t>(n.size()));
  name_len.push_back(static_cast<std::uint32_t>(nm.size()));
  std::size_t start = text.size();
  text.append(n);
  text.push_back('\0');
  text.append(nm);
  std::uint64_t prefix = 0;
  std::size_t len = text.size() - start;
  for (std::size_t i = 0; i < 8; ++i) {
    prefix <<= 8;
    if (i < len) prefix |= static_cast<unsigned char>(text[start + i]);
  }
  key_prefix.push_back(prefix);
  uid_off.push_back(static_cast<std::uint32_t>(text.size()));
  uid_len.push_back(static_cast<std::uint32_t>(u.size()));
  text.append(u);
}

int WorkloadStore::intern_pod_set_name(std::string_view n) {
  for (std::size_t i = 0; i < pod_set_names.size(); ++i) {
    if (pod_set_names[i] == n) return static_cast<int>(i);
  }
  pod_set_names.emplace_back(n);
  return static_cast<int>(pod_set_names.size() - 1);
}

int WorkloadStore::intern_queue_name(std::string_view n) {
  auto it = queue_names.find(std::string(n));
  if (it != queue_names.end()) return it->second;
  const auto id = static_cast<std::int32_t>(queue_names.size());
  queue_names.emplace(std::string(n), id);
  return id;
}

std::int32_t WorkloadStore::add_string(std::string s) {
  strings.push_back(std::move(s));
  return static_cast<std::int32_t>(strings.size() - 1);
}

std::int64_t* WorkloadStore::admission_block(int w, std::uint32_t words) {
  Slot& s = adm[w];
  if (s.capacity < words) {
    s.offset = static_cast<std::uint32_t>(adm_pool.size());
    s.capacity = words;
    adm_pool.resize(adm_pool.size() + words);
  }
  s.size = words;
  return adm_pool.data() + s.offset;
}

std::uint64_t* WorkloadStore::message_block(int w, std::uint32_t words) {
  Slot& s = msg[w];
  if (s.capacity < words) {
    msg_garbage += s.capacity;
    // Compact when more than half the pool is dead blocks.
    if (msg_garbage > 4096 && msg_garbage * 2 > msg_pool.size()) {
      std::vector<std::uint64_t> fresh;
      fresh.reserve(msg_pool.size() - msg_garbage + words);
      for (auto& other : msg) {
        if (&other == &s || other.capacity == 0) continue;
        std::uint32_t off = static_cast<std::uint32_t>(fresh.size());
        fresh.insert(fresh.end(), msg_pool.begin() + other.offset, msg_pool.begin() + other.offset + other.size);
        other.offset = off;
        other.capacity = other.size;
      }
      msg_pool.swap(fresh);
      msg_garbage = 0;
    }
    s.offset = static_cast<std::uint32_t>(msg_pool.size());
    s.capacity = words;
    msg_pool.resize(msg_pool.size() + words);
  }
  s.size = words;
  return msg_pool.data() + s.offset;
}

}  // namespace kueue_fast
