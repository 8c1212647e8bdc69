// Same cycle as kueue_fast/engine/reference/scheduler.py (kueue
// pkg/scheduler/scheduler.go).
#include <kueue_fast/scheduler.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>

#include "engine_checks.hpp"

namespace kueue_fast {

namespace {

// Python's floor division for b > 0.
std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

}  // namespace

namespace {

std::unique_ptr<TasState> make_tas(const Topology& topo) {
  if (!topo.spec().has_tas) return nullptr;
  if (topo.spec().tas.flavor_of.size() != static_cast<std::size_t>(topo.n_flavors())) {
    throw std::invalid_argument("tas: flavor_of must have one entry per flavor");
  }
  return std::make_unique<TasState>(topo.spec().tas);
}

}  // namespace

Engine::Engine(TopologySpec topology, bool release_evictions)
    : topo_(std::move(topology)),
      tas_(make_tas(topo_)),
      tree_(topo_),
      shares_(topo_, tree_),
      release_evictions_(release_evictions),
      assigner_({topo_, tree_, w_, arena_, stats_, *this, tas_.get()}),
      preemptor_({topo_, tree_, w_, shares_, cq_admitted_, cq_front_, cohort_fronts_, afs_, debug_checks_, stats_, *this,
                  tas_.get()}),
      tournament_({topo_, tree_, w_, shares_, entries_, arena_}) {
  // Admission fair sharing applies with the configuration and a usage-based
  // ClusterQueue (scheduler.py: UsageLedger only then).
  bool any_afs = false;
  for (int c = 0; c < topo_.n_cq(); ++c) any_afs = any_afs || topo_.cq(c).admission_fair_sharing;
  const bool afs_on = topo_.spec().has_admission_fair_sharing && any_afs;
  for (int c = 0; c < topo_.n_cq(); ++c) {
    queues_.emplace_back(topo_.cq(c).strategy, topo_.gates().scheduling_equivalence_hashing,
                         /*fixed_keys=*/topo_.gates().priority_sorting_within_cohort,
                         afs_on && topo_.cq(c).admission_fair_sharing);
  }
  if (afs_on) init_admission_fair_sharing();
  cq_admitted_.resize(static_cast<std::size_t>(topo_.n_cq()));
  cq_front_.resize(static_cast<std::size_t>(topo_.n_cq()));
  cohort_fronts_ = CohortFronts(static_cast<std::size_t>(tree_.n_nodes()));
  for (int c = 0; c < topo_.n_cq(); ++c) cq_active_.push_back(topo_.cq(c).active ? 1 : 0);
  cq_generation_.assign(static_cast<std::size_t>(topo_.n_cq()), 1);
  snapshot_generation_ = cq_generation_;
  tree_dirty_.assign(static_cast<std::size_t>(tree_.n_nodes()), 1);
  tree_unsettled_.assign(static_cast<std::size_t>(tree_.n_nodes()), 0);
  for (int c = 0; c < topo_.n_cq(); ++c) {
    const int root = tree_.root_of(c);
    if (std::find(tree_roots_.begin(), tree_roots_.end(), root) == tree_roots_.end()) tree_roots_.push_back(root);
  }
}

std::size_t Engine::memory_bytes() const noexcept {
  auto vb = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  const WorkloadStore& w = w_;
  std::size_t n = 0;
  n += vb(w.cq) + vb(w.priority) + vb(w.queue_ts) + vb(w.hash) + vb(w.block) + vb(w.block_message);
  n += vb(w.pod_sets_of) + vb(w.key_off) + vb(w.ns_len) + vb(w.name_len) + vb(w.uid_off);
  n += vb(w.uid_len) + vb(w.key_prefix) + w.text.capacity();
  n += vb(w.pod_sets) + vb(w.requests);
  n += vb(w.status) + vb(w.evicting) + vb(w.admitted_cq) + vb(w.admission_time) + vb(w.adm) + vb(w.adm_pool);
  n += vb(w.reason) + vb(w.msg_kind) + vb(w.msg_arg) + vb(w.msg) + vb(w.msg_pool);
  n += vb(w.ls_valid) + vb(w.ls_generation) + vb(w.ls_cycle) + vb(w.ls_off) + vb(w.ls_pool);
  n += vb(w.evicted_cycle) + vb(w.evict_kind) + vb(w.evict_reason) + vb(w.preempted_by) + vb(w.evict_victim_cq);
  n += vb(w.evict_custom_reason) + vb(w.evict_custom_message) + vb(w.queue_active) + vb(w.inadmissible);
  for (const auto& [wid, job_uid] : w.job_uids) n += sizeof(wid) + sizeof(job_uid) + job_uid.capacity() + 16;
  for (const auto& q : queues_) n += q.heap_entries() * 24;
  for (const auto& l : cq_admitted_) n += vb(l);
  return n;
}

// --- workloads in and out ---------------------------------------------------------------------

void Engine::check_wid(std::int64_t wid) const {
  if (wid < 0 || wid >= w_.size()) bad("unknown workload id " + std::to_string(wid));
}

void Engine::validate(const WorkloadInput& in) const {
  check_range(in.cluster_queue, -1, topo_.n_cq() - 1, "cluster_queue");
  check_range(in.priority, INT32_LO, INT32_HI, "priority");
  check_range(in.block, 0, 2, "block");
  check_range(in.local_queue, -1, topo_.n_local_queues() - 1, "local_queue");
  if (in.ns.find('\0') != std::string::npos) bad("namespace contains a NUL character");
  if (in.pod_sets.size() > 0xffff) bad("too many pod sets");
  for (const auto& ps : in.pod_sets) {
    check_range(ps.count, 0, INT32_HI, "pod set count");
    check_range(ps.min_count, -1, INT32_HI, "pod set min_count");
    check_range(ps.flavor_class, 0, topo_.n_classes() - 1, "flavor class");
    for (const auto& [r, v] : ps.requests) {
      (void)v;
      check_range(r, 0, topo_.n_resources() - 1, "resource id");
    }
  }
  for (const auto& ps : in.pod_sets) {
    if (!ps.has_tas && ps.tas_requests.empty()) continue;
    if (!tas_) bad("a pod set asks for TAS but the topology has no TAS flavor");
    if (!ps.tas_requests.empty() && ps.tas_requests.size() != static_cast<std::size_t>(tas_->n_resources())) {
      bad("pod set tas_requests: one amount per TAS resource");
    }
    if (ps.has_tas) {
      const auto n_levels = static_cast<std::int64_t>(tas_->spec().level_names.size());
      check_range(ps.tas.level, TAS_LEVEL_LOWEST, n_levels - 1, "pod set TAS level");
      check_range(ps.tas.slice_level, TAS_LEVEL_LOWEST, n_levels - 1, "pod set TAS slice level");
      check_range(ps.tas.slice_size, 1, INT32_HI, "pod set TAS slice size");
      if (ps.tas_requests.empty()) bad("a pod set asking for TAS needs tas_requests");
    }
  }
  if (in.has_admission) {
    check_range(in.admission_cq, -1, topo_.n_cq() - 1, "admission cluster_queue");
    for (const auto& ps : in.admission) {
      for (const auto& u : ps.tas_uses) {
        if (!tas_) bad("an admission with TAS usage but the topology has no TAS flavor");
        check_range(u[0], 0, static_cast<std::int64_t>(tas_->spec().flavors.size()) - 1, "TAS use flavor");
        const TasFlavorSpec& fl = tas_->spec().flavors[static_cast<std::size_t>(u[0])];
        check_range(u[1], -1, fl.n_leaves() - 1, "TAS use leaf");
        check_range(u[2], -1, tas_->spec().n_hosts - 1, "TAS use hostname");
        check_range(u[3], 0, INT32_HI, "TAS use count");
        if (u[1] < 0 && u[2] < 0) bad("TAS use: a leaf or a hostname");
      }
      check_range(ps.count, INT32_LO, INT32_HI, "admitted count");
      for (const auto& [r, f, v] : ps.use) {
        (void)v;
        check_range(r, 0, topo_.n_resources() - 1, "admitted resource id");
        check_range(f, -1, topo_.n_flavors() - 1, "admitted flavor id");
        if (f >= 0 && topo_.fr_id(static_cast<int>(f), static_cast<int>(r)) < 0) bad("admitted flavor-resource pair has no fr id");
      }
    }
  }
}

void Engine::add_tas_class(std::vector<TasClassFlavor> per_flavor) {
  if (!tas_) bad("add_tas_class: the topology has no TAS flavor");
  if (tas_->n_classes() >= topo_.n_classes()) bad("add_tas_class: add the flavor class first");
  tas_->add_class(std::move(per_flavor));
}

int Engine::append_workload_spec(const WorkloadInput& in) {
  WorkloadStore& w = w_;
  int wid = w.size();
  w.cq.push_back(static_cast<std::int32_t>(in.cluster_queue));
  w.priority.push_back(static_cast<std::int32_t>(in.priority));
  w.queue_ts.push_back(in.queue_ts);
  w.hash.push_back(in.scheduling_hash);
  w.block.push_back(static_cast<std::uint8_t>(in.block));
  w.block_message.push_back(in.block != BLOCK_NONE ? w.add_string(in.block_message) : -1);
  w.pod_sets_of.push_back({static_cast<std::uint32_t>(w.pod_sets.size()), static_cast<std::uint32_t>(in.pod_sets.size())});
  w.local_queue.push_back(static_cast<std::int32_t>(in.local_queue));
  w.queue_name.push_back(afs_ ? w.intern_queue_name(in.queue_name) : -1);
  w.set_names(in.ns, in.name, in.uid);
  if (!in.job_uid.empty()) w.job_uids.emplace(wid, in.job_uid);
  for (const auto& ps : in.pod_sets) {
    PodSetRow row{static_cast<std::int32_t>(ps.count), static_cast<std::int32_t>(ps.min_count),
                  static_cast<std::int32_t>(ps.flavor_class), w.intern_pod_set_name(ps.name),
                  {static_cast<std::uint32_t>(w.requests.size()), static_cast<std::uint32_t>(ps.requests.size())}};
    if (tas_ && (ps.has_tas || !ps.tas_requests.empty())) {
      tas_->set_pod_set(static_cast<int>(w.pod_sets.size()), ps.has_tas, ps.tas, ps.tas_requests);
    }
    w.pod_sets.push_back(row);
    for (const auto& [r, v] : ps.requests) w.requests.push_back({static_cast<std::int32_t>(r), v});
  }
  w.grow_status();
  return wid;
}

int Engine::add_workload(const WorkloadInput& input) {
  validate(input);
  // Requests by resource id (engine.workloads.WorkloadCompiler sorts them); a repeated
  // resource keeps the last amount, as the reference's dict does.
  WorkloadInput in = input;
  for (auto& ps : in.pod_sets) {
    std::stable_sort(ps.requests.begin(), ps.requests.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<std::int64_t, Amount>> dedup;
    for (const auto& rq : ps.requests) {
      if (!dedup.empty() && dedup.back().first == rq.first) {
        dedup.back().second = rq.second;
      } else {
        dedup.push_back(rq);
      }
    }
    ps.requests.swap(dedup);
  }
  int wid = append_workload_spec(in);
  // The admission record (the view's pod sets and usage) is kept even for a
  // ClusterQueue that does not exist; only an existing one is charged.
  if (in.has_admission) {
    std::uint32_t words = 1;
    for (const auto& ps : in.admission) words += 2 + 2 * static_cast<std::uint32_t>(ps.use.size());
    std::int64_t* p = w_.admission_block(wid, words);
    *p++ = static_cast<std::int64_t>(in.admission.size());
    for (const auto& ps : in.admission) {
      *p++ = ps.count;
      *p++ = static_cast<std::int64_t>(ps.use.size());
      for (const auto& [r, f, v] : ps.use) {
        std::int32_t fr = f >= 0 ? topo_.fr_id(static_cast<int>(f), static_cast<int>(r)) : -1;
        *p++ = admission_word(static_cast<std::int32_t>(r), fr);
        *p++ = v;
      }
    }
  }
  if (in.has_admission && in.admission_cq >= 0) {
    if (tas_) {  // its placements' usage, charged with its quota
      std::vector<TasUse>& uses = tas_->uses_of(wid);
      uses.clear();
      for (std::size_t i = 0; i < in.admission.size() && i < in.pod_sets.size(); ++i) {
        const auto row = static_cast<std::int32_t>(w_.pod_sets_of[wid].first + i);
        for (const auto& u : in.admission[i].tas_uses) {
          uses.push_back({static_cast<std::int32_t>(u[0]), static_cast<std::int32_t>(u[1]),
                          static_cast<std::int32_t>(u[2]), static_cast<std::int32_t>(u[3]), row});
        }
      }
      tas_->set_placed_by_engine(wid, false);
    }
    admit(wid, static_cast<int>(in.admission_cq), in.admission_time);
  } else if (in.has_admission) {
    // Admitted to a ClusterQueue that does not exist: it holds nothing.
    w_.status[wid] = STATUS_ADMITTED;
  } else if (in.cluster_queue >= 0) {
    queues_[in.cluster_queue].push(w_, wid);
    touch_head(static_cast<int>(in.cluster_queue), wid);
  }
  return wid;
}

// Over 80 lines: the whole batch is checked before anything changes, then
// appended in one pass (all or nothing, as the API promises).
int Engine::add_workloads(const BulkWorkloads& in) {
  // 1. validate everything before changing anything
  if (in.namespaces.size() != in.n || in.names.size() != in.n) bad("namespaces and names need one entry per workload");
  if (!in.uids.empty() && in.uids.size() != in.n) bad("uids need one entry per workload (or none)");
  if (in.ps_offsets[0] != 0 || in.ps_offsets[in.n] != static_cast<std::int64_t>(in.n_ps)) {
    bad("pod_set_offsets must start at 0 and end at the number of pod sets");
  }
  if (in.req_offsets[0] != 0 || in.req_offsets[in.n_ps] != static_cast<std::int64_t>(in.n_req)) {
    bad("request_offsets must start at 0 and end at the number of requests");
  }
  for (std::size_t i = 0; i < in.n; ++i) {
    if (in.ps_offsets[i + 1] < in.ps_offsets[i]) bad("pod_set_offsets must not decrease");
    check_range(in.cluster_queue[i], -1, topo_.n_cq() - 1, "cluster_queue");
    check_range(in.priority[i], INT32_LO, INT32_HI, "priority");
    if (in.local_queue != nullptr) check_range(in.local_queue[i], -1, topo_.n_local_queues() - 1, "local_queue");
    if (in.namespaces[i].find('\0') != std::string::npos) bad("namespace contains a NUL character");
    if (in.block != nullptr) {
      check_range(in.block[i], 0, 2, "block");
      if (in.block[i] != BLOCK_NONE) {
        check_range(in.block_message[i], 0, static_cast<std::int64_t>(in.block_messages.size()) - 1,
                    "block message index");
      }
    }
  }
  for (std::size_t p = 0; p < in.n_ps; ++p) {
    if (in.req_offsets[p + 1] < in.req_offsets[p]) bad("request_offsets must not decrease");
    check_range(in.ps_count[p], 0, INT32_HI, "pod set count");
    check_range(in.ps_min_count[p], -1, INT32_HI, "pod set min_count");
    check_range(in.ps_flavor_class[p], 0, topo_.n_classes() - 1, "flavor class");
    if (in.ps_name != nullptr) {
      check_range(in.ps_name[p], 0, static_cast<std::int64_t>(in.pod_set_names.size()) - 1, "pod set name index");
    }
    for (std::int64_t k = in.req_offsets[p]; k < in.req_offsets[p + 1]; ++k) {
      check_range(in.req_resource[k], 0, topo_.n_resources() - 1, "resource id");
      if (k > in.req_offsets[p] && in.req_resource[k] <= in.req_resource[k - 1]) {
        bad("requests of a pod set must have strictly increasing resource ids");
      }
    }
  }
  // 2. append
  WorkloadStore& w = w_;
  const int first = w.size();
  {
    std::size_t text = 0;
    for (std::size_t i = 0; i < in.n; ++i) {
      text += in.namespaces[i].size() + 1 + in.names[i].size();
      text += in.uids.empty() ? in.namespaces[i].size() + 1 + in.names[i].size() : in.uids[i].size();
    }
    w.reserve_more(in.n, in.n_ps, in.n_req, text);
    // The blocks the cycles give each pending workload: its scan state and
    // admission record (admit_entry's room: every request plus pods).
    std::size_t ls = 0;
    for (std::size_t i = 0; i < in.n; ++i) {
      if (in.cluster_queue[i] < 0) continue;
      const auto n_ps = static_cast<std::size_t>(in.ps_offsets[i + 1] - in.ps_offsets[i]);
      ls += n_ps * static_cast<std::size_t>(topo_.n_groups(static_cast<int>(in.cluster_queue[i])));
    }
    w.reserve_pools(in.n + 4 * in.n_ps + 2 * in.n_req, ls);
  }
  std::vector<int> names;
  names.reserve(in.pod_set_names.size());
  for (const auto& n : in.pod_set_names) names.push_back(w.intern_pod_set_name(n));
  const int main_name = in.ps_name == nullptr ? w.intern_pod_set_name("main") : -1;
  std::string uid;
  std::vector<std::int32_t> message_ids(in.block_messages.size(), -1);
  for (std::size_t i = 0; i < in.n; ++i) {
    int wid = w.size();
    w.cq.push_back(static_cast<std::int32_t>(in.cluster_queue[i]));
    w.priority.push_back(static_cast<std::int32_t>(in.priority[i]));
    w.queue_ts.push_back(in.queue_ts[i]);
    w.hash.push_back(in.scheduling_hash[i]);
    const std::int64_t block = in.block != nullptr ? in.block[i] : std::int64_t{BLOCK_NONE};
    w.block.push_back(static_cast<std::uint8_t>(block));
    if (block != BLOCK_NONE) {
      // one string per distinct message of the call, not per workload
      const auto m = static_cast<std::size_t>(in.block_message[i]);
      if (message_ids[m] < 0) message_ids[m] = w.add_string(in.block_messages[m]);
      w.block_message.push_back(message_ids[m]);
    } else {
      w.block_message.push_back(-1);
    }
    w.pod_sets_of.push_back({static_cast<std::uint32_t>(w.pod_sets.size()),
                             static_cast<std::uint32_t>(in.ps_offsets[i + 1] - in.ps_offsets[i])});
    const std::int32_t lq = in.local_queue != nullptr ? static_cast<std::int32_t>(in.local_queue[i]) : -1;
    w.local_queue.push_back(lq);
    w.queue_name.push_back(!afs_ ? -1 : lq >= 0 ? lq_queue_name_[static_cast<std::size_t>(lq)] : w.intern_queue_name(""));
    if (in.uids.empty()) {
      uid.assign(in.namespaces[i]);
      uid.push_back('/');
      uid.append(in.names[i]);
      w.set_names(in.namespaces[i], in.names[i], uid);
    } else {
      w.set_names(in.namespaces[i], in.names[i], in.uids[i]);
    }
    for (std::int64_t p = in.ps_offsets[i]; p < in.ps_offsets[i + 1]; ++p) {
      PodSetRow row{static_cast<std::int32_t>(in.ps_count[p]), static_cast<std::int32_t>(in.ps_min_count[p]),
                    static_cast<std::int32_t>(in.ps_flavor_class[p]),
                    in.ps_name != nullptr ? names[static_cast<std::size_t>(in.ps_name[p])] : main_name,
                    {static_cast<std::uint32_t>(w.requests.size()),
                     static_cast<std::uint32_t>(in.req_offsets[p + 1] - in.req_offsets[p])}};
      w.pod_sets.push_back(row);
      for (std::int64_t k = in.req_offsets[p]; k < in.req_offsets[p + 1]; ++k) {
        w.requests.push_back({static_cast<std::int32_t>(in.req_resource[k]), in.req_amount[k]});
      }
    }
    w.grow_status();
    if (in.cluster_queue[i] >= 0) {
      queues_[in.cluster_queue[i]].push(w, wid);
      touch_head(static_cast<int>(in.cluster_queue[i]), wid);
    }
  }
  return first;
}

// Kueue's ordering of a ClusterQueue's admitted workloads as preemption
// candidates, without the "other ClusterQueue first" part (constant here).
bool Engine::admitted_before(const AdmittedEntry& a, const AdmittedEntry& b) const noexcept {
  if (a.evicting != b.evicting) return a.evicting > b.evicting;
  if (a.priority != b.priority) return a.priority < b.priority;
  if (a.admission_time != b.admission_time) return a.admission_time > b.admission_time;
  if (a.wid == b.wid) return false;
  int c = w_.compare_names(a.wid, b.wid);
  if (c != 0) return c < 0;
  return a.wid < b.wid;
}

// The lists are stored in reverse candidate order (the first candidate is
// the last element): a new admission, the most recent, then mostly goes to
// the end of the vector instead of shifting it.
bool Engine::in_cq_admitted(int wid) const noexcept {
  int cq = w_.admitted_cq[wid];
  if (cq < 0) return false;
  const auto& l = cq_admitted_[cq];
  if (!l.empty() && l.back().wid == wid) return true;  // the first candidate (a wid is listed once)
  const AdmittedEntry key = admitted_entry(wid);
  auto it = admitted_position(l, key);
  return it != l.end() && it->wid == wid;
}

// std::lower_bound of key in a list (later candidates first), reading names
// only where they decide: the entries that come before key on evicting,
// priority and admission time alone are skipped by those fields; key then
// mostly goes right there (a ClusterQueue admits the workloads of one
// priority and cycle in queue order, mostly name order), else names decide
// further on.
std::vector<AdmittedEntry>::const_iterator Engine::admitted_position(const std::vector<AdmittedEntry>& l,
                                                                     const AdmittedEntry& key) const noexcept {
  auto later_on_fields = [&](const AdmittedEntry& x) {  // admitted_before(key, x) decided without names
    if (x.evicting != key.evicting) return key.evicting > x.evicting;
    if (x.priority != key.priority) return key.priority < x.priority;
    return key.admission_time > x.admission_time;
  };
  auto it = std::partition_point(l.begin(), l.end(), later_on_fields);
  if (it == l.end() || !admitted_before(key, *it)) return it;
  return std::lower_bound(it + 1, l.end(), key,
                          [&](const AdmittedEntry& x, const AdmittedEntry& y) { return admitted_before(y, x); });
}

void Engine::cq_admitted_insert(int wid) {
  const int cq = w_.admitted_cq[wid];
  auto& l = cq_admitted_[cq];
  const AdmittedEntry key = admitted_entry(wid);
  // Heads are popped by priority, then age: a new admission is mostly the new
  // first candidate (lowest priority, most recent), the end of the list.
  if (l.empty() || admitted_before(key, l.back())) {
    l.push_back(key);
    update_front(cq);
    return;
  }
  auto it = admitted_position(l, key);
  if (it != l.end() && it->wid == wid) return;
  const bool first_candidate = it == l.end();
  l.insert(it, key);
  if (first_candidate) update_front(cq);
}

void Engine::cq_admitted_erase(int wid) {
  const int cq = w_.admitted_cq[wid];
  auto& l = cq_admitted_[cq];
  if (!l.empty() && l.back().wid == wid) {  // the first candidate, e.g. a victim
    l.pop_back();
    update_front(cq);
    return;
  }
  const AdmittedEntry key = admitted_entry(wid);
  auto it = admitted_position(l, key);
  if (it != l.end() && it->wid == wid) {
    const bool first_candidate = it + 1 == l.end();
    l.erase(it);
    if (first_candidate) update_front(cq);
  }
}

// A workload's usage per fr (for_each_fr_usage) applied to the tree.
// `commit`: the workload holds (or gives back) its quota for good, in Kueue's
// cache as well as in the cycle's snapshot; else a simulation (snapshot only).
void Engine::charge(int wid, int sign, bool commit) noexcept {
  if (tas_) [[unlikely]] {
    const std::vector<TasUse>& uses = tas_->uses(wid);
    if (!uses.empty()) {
      if (commit) {
        tas_->charge(uses.data(), uses.size(), sign);
      } else {
        tas_->snapshot(uses.data(), uses.size(), sign);
      }
    }
  }
  const int cq = w_.admitted_cq[wid];
  for_each_fr_usage(wid, [&](int fr, Amount v) {
    if (commit) {
      if (sign > 0) {
        tree_.commit_add_usage(cq, fr, v);
      } else {
        tree_.commit_remove_usage(cq, fr, v);
      }
    } else if (sign > 0) {
      tree_.add_usage(cq, fr, v);
    } else {
      tree_.remove_usage(cq, fr, v);
    }
  });
}

void Engine::admit(int wid, int cq, std::int64_t time_ns, bool listed) {
  w_.status[wid] = STATUS_ADMITTED;
  w_.admitted_cq[wid] = cq;
  w_.admission_time[wid] = time_ns;
  w_.ls_valid[wid] = 0;
  // The admission turns the Preempted condition False (workload.go
  // SetQuotaReservation): the creation time orders the workload again.
  if (!queue_ts_before_preemption_.empty()) {
    auto it = queue_ts_before_preemption_.find(wid);
    if (it != queue_ts_before_preemption_.end()) {
      w_.queue_ts[wid] = it->second;
      queue_ts_before_preemption_.erase(it);
    }
  }
  charge(wid, +1, true);
  if (listed) cq_admitted_insert(wid);
  lq_admitted_add(wid, cq, +1);
  touch_tree(cq);
}

// Take an admitted workload's usage out of its ClusterQueue.
void Engine::release(int wid) {
  int cq = w_.admitted_cq[wid];
  if (cq >= 0 && in_cq_admitted(wid)) {
    charge(wid, -1, true);
    if (tas_) tas_->uses_of(wid).clear();
    cq_admitted_erase(wid);
    lq_admitted_add(wid, cq, -1);
    ++cq_generation_[cq];
    touch_tree(cq);
  }
  w_.admitted_cq[wid] = -1;
  w_.evicting[wid] = 0;
}

// Eviction issued; the quota stays until release_eviction. Kueue's workload
// controller re-adds the workload (Evicted=True) to the cache at once, which
// moves its ClusterQueue's generation (clusterqueue.go deleteWorkload).
void Engine::set_evicting(int wid) {
  bool listed = in_cq_admitted(wid);
  if (listed) cq_admitted_erase(wid);
  w_.evicting[wid] = 1;
  if (listed) cq_admitted_insert(wid);
  if (w_.admitted_cq[wid] >= 0) ++cq_generation_[w_.admitted_cq[wid]];
  touch_tree(w_.admitted_cq[wid]);
}

void Engine::remove_workload(int wid) {
  check_wid(wid);
  if (!queue_ts_before_preemption_.empty()) queue_ts_before_preemption_.erase(wid);
  if (!deactivated_.empty()) deactivated_.erase(wid);
  if (w_.status[wid] == STATUS_ADMITTED) {
    release(wid);
  } else if (w_.cq[wid] >= 0) {
    queues_[w_.cq[wid]].remove(w_, wid);
  }
  w_.status[wid] = STATUS_FINISHED;
  requeue_tree(w_.cq[wid]);  // (touches the tree)
}

void Engine::remove_workloads(const std::int64_t* wids, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) check_wid(wids[i]);
  requeue_roots_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const int wid = static_cast<int>(wids[i]);
    if (!queue_ts_before_preemption_.empty()) queue_ts_before_preemption_.erase(wid);
    if (!deactivated_.empty()) deactivated_.erase(wid);
    if (w_.status[wid] == STATUS_ADMITTED) {
      release(wid);
    } else if (w_.cq[wid] >= 0) {
      queues_[w_.cq[wid]].remove(w_, wid);
    }
    w_.status[wid] = STATUS_FINISHED;
    touch_tree(w_.cq[wid]);
    if (w_.cq[wid] >= 0) requeue_roots_.push_back(w_.cq[wid]);
  }
  // requeue_tree(cq) moves every parked workload of cq's tree back to its
  // heap; once per tree is the same as once per removed workload (nothing
  // parks in between, and a second pass finds nothing new to move).
  for (std::int32_t& cq : requeue_roots_) {
    const int root = tree_.root_of(cq);
    if (root != cq) cq = root;
  }
  std::sort(requeue_roots_.begin(), requeue_roots_.end());
  requeue_roots_.erase(std::unique(requeue_roots_.begin(), requeue_roots_.end()), requeue_roots_.end());
  for (std::int32_t node : requeue_roots_) {
    if (node < topo_.n_cq()) {
      requeue_tree(node);  // a ClusterQueue outside any cohort
    } else {
      for (int c : tree_.subtree_cqs(node)) queues_[c].queue_inadmissible(w_);
    }
  }
}

void Engine::release_eviction(int wid) {
  check_wid(wid);
  if (w_.status[wid] != STATUS_ADMITTED || !w_.evicting[wid]) return;
  release(wid);
  w_.status[wid] = STATUS_PENDING;
  requeue_tree(w_.cq[wid]);  // (touches the tree)
  if (w_.cq[wid] >= 0 && !deactivated_.count(wid)) queues_[w_.cq[wid]].push(w_, wid);
}

void Engine::evict(int wid, const std::string& reason, const std::string& message) {
  check_wid(wid);
  if (w_.status[wid] != STATUS_ADMITTED || w_.evicting[wid]) return;
  set_evicting(wid);
  w_.evicted_cycle[wid] = cycle_ + 1;  // called before the cycle it belongs to
  w_.evict_kind[wid] = EVICT_CUSTOM;
  w_.evict_custom_reason[wid] = w_.add_string(reason);
  w_.evict_custom_message[wid] = w_.add_string(message);
  w_.preempted_by[wid] = -1;
  if (release_evictions_) release_eviction(wid);
}

void Engine::evict_after_cycle(int wid, const std::string& reason, const std::string& message,
                               std::int64_t queue_ts_ns, bool requeue) {
  check_wid(wid);
  if (w_.status[wid] != STATUS_ADMITTED || w_.evicting[wid]) return;
  if (!requeue) deactivated_.insert(wid);
  if (queue_ts_ns >= 0) {
    // Evicted by an admission check: Kueue orders the workload by the
    // eviction time until admitted again (workload.go GetQueueOrderTimestamp).
    queue_ts_before_preemption_.emplace(wid, w_.queue_ts[wid]);
    w_.queue_ts[wid] = queue_ts_ns;
  }
  set_evicting(wid);
  w_.evicted_cycle[wid] = cycle_;
  w_.evict_kind[wid] = EVICT_CUSTOM;
  w_.evict_custom_reason[wid] = w_.add_string(reason);
  w_.evict_custom_message[wid] = w_.add_string(message);
  w_.preempted_by[wid] = -1;
  if (release_evictions_) release_eviction(wid);
}

// A workload of a LocalQueue of cq finished, was deleted (pending or not) or
// gave its quota back: the parked workloads of cq's cohort tree may fit now.
// Kueue's workload controller finds cq through the workload's LocalQueue, not
// its admission (manager.go QueueAssociatedInadmissibleWorkloadsAfter): a
// workload in no queue (its LocalQueue stopped or missing, cq -1) requeues nothing.
void Engine::requeue_tree(int cq) {
  if (cq < 0) return;
  touch_tree(cq);
  const int root = tree_.root_of(cq);
  if (root != cq) {
    for (int c : tree_.subtree_cqs(root)) queues_[c].queue_inadmissible(w_);
  } else {
    queues_[cq].queue_inadmissible(w_);
  }
}

// --- reading decisions ---------------------------------------------------------------------------

ViewState Engine::state(int wid) const noexcept {
  if (w_.status[wid] == STATUS_FINISHED) return STATE_FINISHED;
  if (w_.evicting[wid] || (w_.status[wid] == STATUS_PENDING && w_.evicted_cycle[wid] == cycle_ && cycle_ > 0)) {
    return STATE_EVICTED;
  }
  if (w_.status[wid] == STATUS_ADMITTED) return STATE_ADMITTED;
  return STATE_PENDING;
}

std::string Engine::message(int wid) const {
  switch (static_cast<MessageKind>(w_.msg_kind[wid])) {
    case MSG_NONE: return "";
    case MSG_OVERLAP: return "Workload has overlapping preemption targets with another workload";
    case MSG_NO_LONGER_FITS: return "Workload no longer fits after processing another workload";
    case MSG_DEFERRED:
      return "Workload has overlapping preemption targets with another workload, "
             "but will fit after these preemptions complete";
    case MSG_INACTIVE: return topo_.cq(w_.msg_arg[wid]).inactive_message;
    case MSG_BLOCK: return w_.strings[w_.block_message[wid]];
    case MSG_WAITING_FOR_PODS_READY: return "waiting for all admitted workloads to be in PodsReady condition";
    case MSG_ASSIGNMENT:
    case MSG_ASSIGNMENT_PENDING: break;
  }
  // Assignment.message(): per pod set with reasons, the sorted reason texts.
  std::string out;
  const Slot& s = w_.msg[wid];
  const std::uint64_t* p = w_.msg_pool.data() + s.offset;
  const std::uint64_t n_parts = s.size == 0 ? 0 : *p++;
  std::vector<std::string> texts;
  for (std::uint64_t part = 0; part < n_parts; ++part) {
    std::uint64_t header = *p++;
    std::uint32_t ps_index = static_cast<std::uint32_t>(header & 0xffffffffu);
    std::uint32_t n = static_cast<std::uint32_t>(header >> 32);
    texts.clear();
    const std::string& ps_name = w_.pod_set_names[w_.pod_sets[w_.pod_sets_of[wid].first + ps_index].name];
    for (std::uint32_t k = 0; k < n; ++k) {
      texts.emplace_back();
      const ReasonKind kind = reason_kind(*p);
      if (is_tas_reason(kind)) {
        tas_->append_reason(texts.back(), p);
      } else {
        append_reason_text(texts.back(), topo_, p);
      }
      if (kind == RK_TAS_ERROR) {  // a Status error: Kueue's message is that alone
        return "failed to assign flavors to pod set " + ps_name + ": " + texts.back();
      }
      p += reason_words_of(*p);
    }
    std::sort(texts.begin(), texts.end());  // byte order = Python's code point order
    if (part > 0) out += "; ";
    out += "couldn't assign flavors to pod set ";
    out += ps_name;
    out += ": ";
    for (std::size_t k = 0; k < texts.size(); ++k) {
      if (k > 0) out += ", ";
      out += texts[k];
    }
  }
  if (w_.msg_kind[wid] == MSG_ASSIGNMENT_PENDING) {
    out += ". Pending the preemption of ";
    out += std::to_string(w_.msg_arg[wid]);
    out += " workload(s)";
  }
  return out;
}

std::string Engine::eviction_reason(int wid) const {
  switch (w_.evict_kind[wid]) {
    case EVICT_PREEMPTED: return preemption_reason_name(static_cast<PreemptionReason>(w_.evict_reason[wid]));
    case EVICT_CUSTOM: return w_.strings[w_.evict_custom_reason[wid]];
    default: return "";
  }
}

std::int8_t Engine::eviction_reason_code(int wid) const {
  if (w_.evict_kind[wid] == EVICT_PREEMPTED) return static_cast<std::int8_t>(w_.evict_reason[wid]);
  if (w_.evict_kind[wid] == EVICT_CUSTOM) {
    // a custom reason spelled like a preemption reason counts as one (the reference maps names)
    const std::string& r = w_.strings[w_.evict_custom_reason[wid]];
    for (std::uint8_t k = 0; k < 4; ++k) {
      if (r == preemption_reason_name(static_cast<PreemptionReason>(k))) return static_cast<std::int8_t>(k);
    }
  }
  return 4;
}

void Engine::append_cq_path(std::string& out, int cq) const {
  IdRange anc = tree_.ancestors(cq);
  for (std::size_t k = anc.size(); k > 0; --k) {
    out += '/';
    out += topo_.node_name(anc[k - 1]);
  }
  out += '/';
  out += topo_.node_name(cq);
}

std::string Engine::eviction_message(int wid) const {
  switch (w_.evict_kind[wid]) {
    case EVICT_PREEMPTED: {
      int by = w_.preempted_by[wid];
      std::string out = "Preempted to accommodate a workload (UID: ";
      out += w_.uid(by);
      out += ", JobUID: ";
      std::string_view job_uid = w_.job_uid(by);
      out += job_uid.empty() ? std::string_view{"UNKNOWN"} : job_uid;
      out += ") due to ";
      out += preemption_reason_human(static_cast<PreemptionReason>(w_.evict_reason[wid]));
      out += "; preemptor path: ";
      append_cq_path(out, w_.cq[by]);
      out += "; preemptee path: ";
      append_cq_path(out, w_.evict_victim_cq[wid]);
      return out;
    }
    case EVICT_CUSTOM: return w_.strings[w_.evict_custom_message[wid]];
    default: return "";
  }
}

// --- nomination ------------------------------------------------------------------------------------

// The recorded flavor scan, unless outdated (FlavorFungibilityPreserveScanProgress).
bool Engine::scan_state_usable(int wid, int cq) const noexcept {
  if (!w_.ls_valid[wid]) return false;
  if (topo_.gates().flavor_fungibility_preserve_scan_progress && cycle_ - w_.ls_cycle[wid] <= 1) return true;
  return !(snapshot_generation_[cq] > w_.ls_generation[wid]);
}

// The oracle: for this fr and total, are there targets, in the ClusterQueue
// itself (PM_PREEMPT) or only elsewhere (PM_RECLAIM), and at which borrowing
// height would the workload be once they are gone.
GranularMode Engine::oracle(int wid, int cq, int fr, Amount quantity) {
  ++stats_.oracle_calls;
  PreemptionCtx& ctx = oracle_ctx_;  // not ctx_: the oracle runs inside an assignment
  ctx.clear();
  ctx.preemptor = wid;
  ctx.cq = cq;
  ctx.frs_need_preemption.push_back(fr);
  ctx.usage.push_back({fr, quantity});
  const std::vector<Target>& targets = preemptor_.get_targets(ctx);
  if (targets.empty()) return {PM_NO_CANDIDATES, tree_.lowest_subtree_that_fits(cq, fr, quantity).first};
  for (const Target& t : targets) preemptor_.remove(t.wid);
  int borrow = tree_.lowest_subtree_that_fits(cq, fr, quantity).first;
  for (const Target& t : targets) preemptor_.restore(t.wid);
  for (const Target& t : targets) {
    if (w_.admitted_cq[t.wid] == cq) return {PM_PREEMPT, borrow};
  }
  return {PM_RECLAIM, borrow};
}

// Kueue buildContext: the workload's own requests (TotalRequestsFor: no
// `pods`, no zero amounts) and the flavor-resources needing preemption.
void Engine::build_ctx(int wid, int cq, int assignment, PreemptionCtx& ctx) {
  ctx.clear();
  ctx.preemptor = wid;
  ctx.cq = cq;
  const AssignmentRec& a = arena_[assignment];
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    const std::uint32_t gps = w_.pod_sets_of[wid].first + i;
    const PodSetRow& row = w_.pod_sets[gps];
    for (std::uint32_t k = 0; k < row.requests.n; ++k) {
      const RequestRow& rq = w_.requests[row.requests.first + k];
      Amount q = sat_mul(rq.amount, ps.count);
      if (q == 0) continue;
      int r = rq.resource;
      const FlavorRec* fa = nullptr;
      for (std::uint32_t f = 0; f < ps.fl_n; ++f) {
        if (arena_.flavors[ps.fl_first + f].resource == r) {
          fa = &arena_.flavors[ps.fl_first + f];
          break;
        }
      }
      if (fa == nullptr) continue;
      auto it = std::find_if(ctx.usage.begin(), ctx.usage.end(), [&](const FrAmount& u) { return u.fr == fa->fr; });
      if (it == ctx.usage.end()) {
        ctx.usage.push_back({fa->fr, q});
      } else {
        it->amount = amount_add(it->amount, q);
      }
    }
    for (std::uint32_t f = 0; f < ps.fl_n; ++f) {
      const FlavorRec& fa = arena_.flavors[ps.fl_first + f];
      if (fa.mode != PREEMPT) continue;
      auto& need = ctx.frs_need_preemption;
      if (std::find(need.begin(), need.end(), fa.fr) == need.end()) need.push_back(fa.fr);
    }
  }
  if (tas_) tas_asks(*tas_, w_, arena_, assignment, ctx.tas_asks, nullptr);
}

std::uint32_t Engine::find_targets(const PreemptionCtx& ctx, std::uint32_t& t_first) {
  const std::vector<Target>& t = preemptor_.get_targets(ctx);
  t_first = static_cast<std::uint32_t>(targets_.size());
  targets_.insert(targets_.end(), t.begin(), t.end());
  return static_cast<std::uint32_t>(t.size());
}

// kueue updateAssignmentForTAS: a TAS workload that needs preemption gets the
// placement it would have once its targets are gone, or, with none, on the
// empty topology (what it reserves while it waits).
void Engine::update_assignment_for_tas(int wid, int cq, int assignment, std::uint32_t t_first, std::uint32_t t_n) {
  (void)cq;
  if (arena_[assignment].mode != PREEMPT) return;
  bool any = false;
  for (std::uint32_t i = 0; i < w_.pod_sets_of[wid].n && !any; ++i) {
    any = tas_->asks(static_cast<int>(w_.pod_sets_of[wid].first + i));
  }
  if (!any) return;
  tas_asks(*tas_, w_, arena_, assignment, tas_scratch_, nullptr);
  if (t_n > 0) {
    for (std::uint32_t k = 0; k < t_n; ++k) preemptor_.remove(targets_[t_first + k].wid);
    tas_->find_for_workload(tas_scratch_, false);
    for (std::uint32_t k = 0; k < t_n; ++k) preemptor_.restore(targets_[t_first + k].wid);
  } else {
    tas_->find_for_workload(tas_scratch_, true);
  }
  update_for_tas_result(*tas_, arena_, assignment, tas_scratch_);
}

// Kueue getAssignments: getInitialAssignments (full assignment, its targets,
// else partial admission), then updateAssignmentForTAS (a Preempt assignment only).
void Engine::get_assignments(int wid, int cq, bool use_last, const std::int32_t* nomination,
                             std::size_t nomination_ps, int& assignment, std::uint32_t& t_first,
                             std::uint32_t& t_n) {
  int full = assigner_.assign(wid, cq, use_last, nomination, nomination_ps, nullptr);
  assignment = full;
  t_first = 0;
  t_n = 0;
  Mode mode = arena_[full].mode;
  if (mode == FIT) return;
  if (mode == PREEMPT) {
    build_ctx(wid, cq, full, ctx_);
    std::uint32_t first = 0;
    std::uint32_t n = find_targets(ctx_, first);
    if (n > 0) {
      t_first = first;
      t_n = n;
      if (tas_) update_assignment_for_tas(wid, cq, assignment, t_first, t_n);
      return;
    }
  }
  std::int64_t total = 0;
  const std::uint32_t n_ps = w_.pod_sets_of[wid].n;
  deltas_.clear();
  for (std::uint32_t i = 0; i < n_ps; ++i) {
    const std::uint32_t gps = w_.pod_sets_of[wid].first + i;
    std::int64_t count = w_.pod_sets[gps].count;
    std::int64_t min_count = w_.pod_sets[gps].min_count >= 0 ? w_.pod_sets[gps].min_count : count;
    deltas_.push_back(count - min_count);
    total += count - min_count;
  }
  if (total > 0 && topo_.gates().partial_admission) {
    int a2;
    std::uint32_t f2, n2;
    if (partial_search(wid, cq, use_last, nomination, nomination_ps, a2, f2, n2)) {
      assignment = a2;
      t_first = f2;
      t_n = n2;
    }
  }
  if (tas_) update_assignment_for_tas(wid, cq, assignment, t_first, t_n);
}

// Kueue PodSetReducer.Search: the smallest reduction k in [0, D] whose counts
// count_i - floor(delta_i * k / D) fit, by binary search.
bool Engine::partial_search(int wid, int cq, bool use_last, const std::int32_t* nomination,
                            std::size_t nomination_ps, int& assignment, std::uint32_t& t_first,
                            std::uint32_t& t_n) {
  const std::uint32_t n_ps = w_.pod_sets_of[wid].n;
  std::int64_t total = 0;
  for (std::int64_t d : deltas_) total += d;
  const std::vector<std::int64_t>& deltas = deltas_;  // untouched by assign and build_ctx
  int last_good_a = -1;
  std::uint32_t last_good_first = 0, last_good_n = 0;
  std::int64_t last_good_k = -1;
  auto fits = [&](std::int64_t k) {
    counts_.resize(n_ps);
    for (std::uint32_t i = 0; i < n_ps; ++i) {
      counts_[i] =
          static_cast<std::int32_t>(w_.pod_sets[w_.pod_sets_of[wid].first + i].count - floor_div(deltas[i] * k, total));
    }
    int a = assigner_.assign(wid, cq, use_last, nomination, nomination_ps, counts_.data());
    Mode m = arena_[a].mode;
    bool ok = false;
    std::uint32_t first = 0, n = 0;
    if (m == FIT) {
      ok = true;
    } else if (m == PREEMPT) {
      build_ctx(wid, cq, a, ctx_);
      n = find_targets(ctx_, first);
      ok = n > 0;
    }
    if (ok) {
      last_good_a = a;
      last_good_first = first;
      last_good_n = n;
      last_good_k = k;
    }
    return ok;
  };
  std::int64_t lo = 0, hi = total + 1;
  while (lo < hi) {
    std::int64_t mid = (lo + hi) >> 1;
    if (!fits(mid)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo != last_good_k) return false;
  assignment = last_good_a;
  t_first = last_good_first;
  t_n = last_good_n;
  return true;
}

void Engine::record(Entry& e, int assignment, std::uint32_t t_first, std::uint32_t t_n) {
  e.assignment = assignment;
  e.t_first = t_first;
  e.t_n = t_n;
  e.msg_kind = MSG_ASSIGNMENT;
  e.scan_pending = true;  // LastState: written when the cycle ends (store_scan_state), if still kept
}

// LastState(a.last_tried, snapshot generation, cycle) of the entry's
// assignment. Nothing reads a head's scan state during the cycle that
// records it (a recomputed assignment starts from the first flavor), so it
// is written at the cycle's end, and only for the heads that keep it: most
// heads are admitted, which drops it.
void Engine::store_scan_state(const Entry& e) {
  const int wid = e.wid;
  const int ng = topo_.n_groups(e.cq);
  const std::uint32_t n_ps = w_.pod_sets_of[wid].n;
  const std::uint32_t size = n_ps * static_cast<std::uint32_t>(ng);
  if (w_.ls_off[wid] == std::numeric_limits<std::uint32_t>::max()) {
    w_.ls_off[wid] = static_cast<std::uint32_t>(w_.ls_pool.size());
    w_.ls_pool.resize(w_.ls_pool.size() + size);
  }
  std::int16_t* block = w_.ls_pool.data() + w_.ls_off[wid];
  std::fill(block, block + size, TRIED_ABSENT);
  const AssignmentRec& a = arena_[e.assignment];
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    std::copy_n(arena_.tried.data() + ps.tried_first, ng, block + i * static_cast<std::uint32_t>(ng));
  }
  w_.ls_valid[wid] = 1;
  w_.ls_generation[wid] = snapshot_generation_[e.cq];
  w_.ls_cycle[wid] = cycle_;
}

void Engine::drop_scan_state(Entry& e) noexcept {
  e.scan_pending = false;
  w_.ls_valid[e.wid] = 0;
}

// The heads' data is spread over the workload arrays. While nominating head
// i, ask for the data of the heads a little ahead, in stages (each stage's
// addresses come from the previous one), so that the cache misses overlap
// with work instead of stalling every head.
void Engine::prefetch_head(std::size_t i) const noexcept {
  const WorkloadStore& w = w_;
  const std::size_t n = entries_.size();
  if (i + 12 < n) {
    const int wid = entries_[i + 12].wid;
    __builtin_prefetch(&w.pod_sets_of[wid]);
    __builtin_prefetch(&w.ls_valid[wid]);
    __builtin_prefetch(&w.ls_off[wid]);
    __builtin_prefetch(&w.ls_cycle[wid]);
    __builtin_prefetch(&w.ls_generation[wid]);
    __builtin_prefetch(&w.priority[wid]);
    __builtin_prefetch(&w.block[wid]);
  }
  if (i + 8 < n) {
    const int wid = entries_[i + 8].wid;
    const Span ps = w.pod_sets_of[wid];
    if (ps.n > 0) __builtin_prefetch(&w.pod_sets[ps.first]);
    if (w.ls_off[wid] != std::numeric_limits<std::uint32_t>::max()) __builtin_prefetch(&w.ls_pool[w.ls_off[wid]]);
    const ClusterQueueSpec& spec = topo_.cq(entries_[i + 8].cq);
    if (!spec.groups.empty()) __builtin_prefetch(spec.groups.data());
  }
  if (i + 4 < n) {
    tree_.prefetch_row(entries_[i + 4].cq);
    tree_.prefetch_quota_rows(entries_[i + 4].cq);
    const ClusterQueueSpec& spec = topo_.cq(entries_[i + 4].cq);
    if (!spec.groups.empty()) __builtin_prefetch(spec.groups.front().flavors.data());
    const Span ps = w.pod_sets_of[entries_[i + 4].wid];
    if (ps.n > 0) __builtin_prefetch(&w.requests[w.pod_sets[ps.first].requests.first]);
  }
}

// The entries are processed in the order of their workloads, not of their
// ClusterQueues: what entry order_[k] will read is spread over the tree and
// the workload arrays. Ask for it a few entries ahead, in two stages (the
// entry itself first, then what it points to).
void Engine::prefetch_entry(std::size_t k) const noexcept {
  const std::size_t n = order_.size();
  if (k + 12 < n) __builtin_prefetch(&entries_[static_cast<std::size_t>(order_[k + 12])]);
  if (k + 8 < n) {
    const auto wid = static_cast<std::size_t>(entries_[static_cast<std::size_t>(order_[k + 8])].wid);
    __builtin_prefetch(&w_.pod_sets_of[wid]);
    __builtin_prefetch(&w_.ls_valid[wid]);
    __builtin_prefetch(&w_.reason[wid]);
    __builtin_prefetch(&w_.msg_kind[wid]);
  }
  if (k + 4 < n) {
    const Entry& e = entries_[static_cast<std::size_t>(order_[k + 4])];
    const Span ps = w_.pod_sets_of[static_cast<std::size_t>(e.wid)];
    if (ps.n > 0) __builtin_prefetch(&w_.pod_sets[ps.first]);
    tree_.prefetch_row(e.cq);
    const int root = tree_.root_of(e.cq);
    if (root != e.cq) tree_.prefetch_row(root);
    tree_.prefetch_cache_row(e.cq);
    __builtin_prefetch(&arena_.assignments[static_cast<std::size_t>(e.assignment)]);
    __builtin_prefetch(&w_.adm[static_cast<std::size_t>(e.wid)]);
    __builtin_prefetch(&w_.status[static_cast<std::size_t>(e.wid)]);
    __builtin_prefetch(&w_.admitted_cq[static_cast<std::size_t>(e.wid)]);
    __builtin_prefetch(&w_.admission_time[static_cast<std::size_t>(e.wid)]);
    __builtin_prefetch(&queues_[static_cast<std::size_t>(e.cq)]);
  }
}

// (entry, nominated?) for a head. Not nominated: inadmissible for a reason.
bool Engine::nominate(Entry& e) {
  const int wid = e.wid, cq = e.cq;
  const ClusterQueueSpec& spec = topo_.cq(cq);
  if (!spec.active) {
    e.msg_kind = MSG_INACTIVE;
    e.msg_arg = cq;
    e.reason = SUSPENDED;
    return false;
  }
  if (w_.block[wid] != BLOCK_NONE) {
    e.msg_kind = MSG_BLOCK;
    e.reason = MISCONFIGURED;
    if (w_.block[wid] == BLOCK_NAMESPACE_MISMATCH) e.requeue_reason = REQUEUE_NAMESPACE_MISMATCH;
    return false;
  }
  int a;
  std::uint32_t tf, tn;
  const bool use_last = scan_state_usable(wid, cq);
  e.resumed = use_last && scan_resumes(wid, cq);
  get_assignments(wid, cq, use_last, nullptr, 0, a, tf, tn);
  record(e, a, tf, tn);
  return true;
}

// --- processing ----------------------------------------------------------------------------------------

// scheduler.py _classical_order: (preemptor first when gated, borrowing
// height, higher priority when gated, older timestamp, namespace, name);
// sorted() is stable, so ties keep the heads' order. Keys are gathered first
// so that the sort does not chase entries, assignments and workloads.
void Engine::classical_order(std::vector<std::int32_t>& order) {
  const FeatureGates& gates = topo_.gates();
  order_keys_.clear();
  // hi: bit 62 preemptor last, bits 32-61 borrowing height (a tree height:
  // far below 2^30), bits 0-31 the priority flipped so that higher sorts
  // first; lo: the timestamp with its sign bit flipped (unsigned order).
  for (std::int32_t x : order) {
    const Entry& e = entries_[x];
    const std::uint64_t preemptor_last = gates.prioritize_preemptor_workloads && e.is_preemptor ? 0 : 1;
    const std::uint64_t borrowing = static_cast<std::uint64_t>(arena_[e.assignment].borrowing);
    const std::uint64_t prio =
        gates.priority_sorting_within_cohort ? static_cast<std::uint64_t>(0x7fffffffLL - w_.priority[e.wid]) : 0;
    OrderKey k;
    k.hi = (preemptor_last << 62) | (borrowing << 32) | prio;
    k.lo = static_cast<std::uint64_t>(w_.queue_ts[e.wid]) ^ (std::uint64_t{1} << 63);
    k.wid = e.wid;
    k.entry = x;
    order_keys_.push_back(k);
  }
  const std::size_t n = order_keys_.size();
  if (n <= 16) {
    // A few heads (the usual cycle): an insertion sort on the same total
    // order, (hi, lo, namespace/name, entry), costs less than the radix
    // passes' 256-bucket counts.
    auto before = [&](const OrderKey& a, const OrderKey& b) {
      if (a.hi != b.hi) return a.hi < b.hi;
      if (a.lo != b.lo) return a.lo < b.lo;
      const int c = w_.compare_names(a.wid, b.wid);
      return c != 0 ? c < 0 : a.entry < b.entry;
    };
    for (std::size_t i = 1; i < n; ++i) {
      const OrderKey k = order_keys_[i];
      std::size_t j = i;
      for (; j > 0 && before(k, order_keys_[j - 1]); --j) order_keys_[j] = order_keys_[j - 1];
      order_keys_[j] = k;
    }
    for (std::size_t i = 0; i < n; ++i) order[i] = order_keys_[i].entry;
    return;
  }
  // An LSD radix sort on the bytes of (hi, lo) that differ among the keys,
  // then the rare runs of equal (hi, lo) by name: a cycle's heads come in no
  // particular order, and a comparison sort's steps were mispredicted
  // branches or (merging without branches) a chain of dependent loads.
  std::uint64_t hi_diff = 0, lo_diff = 0;
  for (const OrderKey& k : order_keys_) {
    hi_diff |= k.hi ^ order_keys_[0].hi;
    lo_diff |= k.lo ^ order_keys_[0].lo;
  }
  order_scratch_.resize(n);
  OrderKey* from = order_keys_.data();
  OrderKey* to = order_scratch_.data();
  for (int byte = 0; byte < 16; ++byte) {
    const bool in_hi = byte >= 8;
    const int shift = (byte & 7) * 8;
    if ((((in_hi ? hi_diff : lo_diff) >> shift) & 0xff) == 0) continue;
    auto digit = [&](const OrderKey& k) { return static_cast<std::size_t>(((in_hi ? k.hi : k.lo) >> shift) & 0xff); };
    std::uint32_t offset[256] = {};
    for (std::size_t i = 0; i < n; ++i) ++offset[digit(from[i])];
    std::uint32_t sum = 0;
    for (std::uint32_t& c : offset) {
      const std::uint32_t here = c;
      c = sum;
      sum += here;
    }
    for (std::size_t i = 0; i < n; ++i) to[offset[digit(from[i])]++] = from[i];
    std::swap(from, to);
  }
  if (from != order_keys_.data()) order_keys_.swap(order_scratch_);
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i + 1;
    while (j < n && order_keys_[j].hi == order_keys_[i].hi && order_keys_[j].lo == order_keys_[i].lo) ++j;
    if (j - i > 1) {
      std::sort(order_keys_.begin() + static_cast<std::ptrdiff_t>(i), order_keys_.begin() + static_cast<std::ptrdiff_t>(j),
                [&](const OrderKey& a, const OrderKey& b) {
                  const int c = w_.compare_names(a.wid, b.wid);
                  return c != 0 ? c < 0 : a.entry < b.entry;
                });
    }
    i = j;
  }
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = order_keys_[i].entry;
}

bool Engine::targets_overlap(const Entry& e) const noexcept {
  for (std::uint32_t k = 0; k < e.t_n; ++k) {
    if (is_victim_[targets_[e.t_first + k].wid]) return true;
  }
  return false;
}

int Engine::fits(int cq, int assignment, const Entry& e) {
  // Kueue fits: the cycle's victims and the entry's targets removed. Only
  // removals in cq's own tree change what available(cq) reads; the others
  // are skipped unless their round trip could leave a residue (saturated
  // amounts), which the reference's replay would keep, or a placement is
  // checked too (the TAS flavors are shared by every tree).
  const int root = tree_.root_of(cq);
  TasSpan placements;
  if (tas_) [[unlikely]] placements = arena_.tas_uses_of(assignment);
  const bool placed = placements.n > 0;
  const bool every_victim = tree_.may_saturate() || placed;
  removed_.clear();
  for (std::int32_t v : victims_) {
    if (every_victim || tree_.root_of(w_.admitted_cq[v]) == root) removed_.push_back(v);
  }
  const auto own_first = static_cast<std::ptrdiff_t>(removed_.size());
  for (std::uint32_t k = 0; k < e.t_n; ++k) {
    std::int32_t w = targets_[e.t_first + k].wid;
    if (!is_victim_[w] && std::find(removed_.begin() + own_first, removed_.end(), w) == removed_.end()) {
      removed_.push_back(w);
    }
  }
  for (std::int32_t w : removed_) preemptor_.remove(w);
  int check = 0;
  const AssignmentRec& a = arena_[assignment];
  for (std::uint32_t k = 0; k < a.usage_n; ++k) {
    const FrAmount& u = arena_.usage[a.usage_first + k];
    if (!(tree_.available(cq, u.fr) >= u.amount)) {
      check = 1;
      break;
    }
  }
  if (check == 0 && placed && !tas_->fits(arena_.tas_uses.data() + placements.first, placements.n)) check = 2;
  for (std::int32_t w : removed_) preemptor_.restore(w);
  return check;
}

// Usage that only lives in this cycle's snapshot (the assignment's placements too).
void Engine::reserve(int cq, const FrAmount* first, const FrAmount* last, int assignment) {
  tree_.add_usage(cq, first, last);
  if (const TasSpan placed = arena_.tas_uses_of(assignment); placed.n > 0) {
    tas_->snapshot(arena_.tas_uses.data() + placed.first, placed.n, +1);
  }
}

// Kueue markSkipped: the scan record is kept only with
// FlavorFungibilityPreserveScanProgress.
void Engine::skip(Entry& e, MessageKind message) {
  e.status = ENTRY_SKIPPED;
  e.msg_kind = message;
  e.reason = WAITING_FOR_QUOTA;
  if (!topo_.gates().flavor_fungibility_preserve_scan_progress) drop_scan_state(e);
}

void Engine::issue_preemptions(const Entry& e, std::int64_t now_ns) {
  for (std::uint32_t k = 0; k < e.t_n; ++k) {
    const Target& t = targets_[e.t_first + k];
    int v = t.wid;
    if (w_.evicting[v]) continue;  // eviction already under way
    set_evicting(v);
    w_.evicted_cycle[v] = cycle_;
    w_.preempted_by[v] = e.wid;
    w_.evict_kind[v] = EVICT_PREEMPTED;
    w_.evict_reason[v] = t.reason;
    w_.evict_victim_cq[v] = w_.admitted_cq[v];
    if (t.reason == IN_COHORT_RECLAIM_WHILE_BORROWING && !topo_.gates().priority_sorting_within_cohort) {
      // Kueue workload.Ordering: without PrioritySortingWithinCohort such a
      // victim queues as if it arrived just after its eviction, until it is
      // admitted again (admit).
      queue_ts_before_preemption_.emplace(v, w_.queue_ts[v]);
      w_.queue_ts[v] = now_ns + 1000000;
    }
  }
}

void Engine::admit_entry(Entry& e, std::int64_t now_ns) {
  const AssignmentRec& a = arena_[e.assignment];
  std::uint32_t words = 1;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) words += 2 + 2 * arena_.pod_sets[a.ps_first + i].fl_n;
  // Room for any later admission of this workload by the engine: every request plus pods.
  std::uint32_t room = 1;
  for (std::uint32_t i = 0; i < w_.pod_sets_of[e.wid].n; ++i) {
    room += 2 + 2 * (w_.pod_sets[w_.pod_sets_of[e.wid].first + i].requests.n + 1);
  }
  w_.admission_block(e.wid, std::max(words, room));
  w_.adm[e.wid].size = words;
  std::int64_t* p = w_.adm_pool.data() + w_.adm[e.wid].offset;
  *p++ = a.ps_n;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    *p++ = ps.count;
    *p++ = ps.fl_n;
    for (std::uint32_t f = 0; f < ps.fl_n; ++f) {
      const FlavorRec& fa = arena_.flavors[ps.fl_first + f];
      Amount req = 0;
      for (std::uint32_t q = 0; q < ps.req_n; ++q) {
        if (arena_.requests[ps.req_first + q].resource == fa.resource) {
          req = arena_.requests[ps.req_first + q].amount;
          break;
        }
      }
      *p++ = admission_word(fa.resource, fa.fr);
      *p++ = req;
    }
  }
  if (tas_) {  // its placements' usage, charged with its quota
    std::vector<TasUse>& uses = tas_->uses_of(e.wid);
    const TasSpan placed = arena_.tas_uses_of(e.assignment);
    uses.assign(arena_.tas_uses.begin() + placed.first, arena_.tas_uses.begin() + placed.first + placed.n);
    tas_->set_placed_by_engine(e.wid, true);
  }
  // Kueue's cycle snapshot gets only the admission's usage (scheduler.go
  // processEntry: cq.AddUsage), not the workload: it is no preemption
  // candidate for the rest of the cycle (preemption.go findCandidates). It
  // joins its ClusterQueue's admitted list when the cycle ends.
  admit(e.wid, e.cq, now_ns, /*listed=*/false);  // drops the scan state
  e.scan_pending = false;
  push_entry_penalty(e.wid, e.cq, now_ns);
  ++cq_generation_[e.cq];  // the admission's status update reaches the cache
  queues_[e.cq].clear_preemptor(e.wid);
  w_.reason[e.wid] = REASON_NONE;
  w_.msg_kind[e.wid] = MSG_NONE;
  e.status = ENTRY_ASSUMED;
  if (static_cast<std::size_t>(e.wid) < pods_ready_.size()) pods_ready_[e.wid] = 0;  // a new admission
}

void Engine::set_pods_ready(int wid, bool ready) {
  check_wid(wid);
  if (pods_ready_.size() <= static_cast<std::size_t>(wid)) pods_ready_.resize(static_cast<std::size_t>(wid) + 1, 0);
  pods_ready_[wid] = ready ? 1 : 0;
}

// cache.go PodsReadyForAllAdmittedWorkloads: every workload in the cache
// (holding quota in an existing ClusterQueue, evicting ones and this cycle's
// admissions included) is PodsReady.
bool Engine::pods_ready_for_all_admitted() const noexcept {
  for (int wid = 0; wid < w_.size(); ++wid) {
    if (w_.status[wid] != STATUS_ADMITTED || w_.admitted_cq[wid] < 0) continue;
    if (static_cast<std::size_t>(wid) >= pods_ready_.size() || !pods_ready_[wid]) return false;
  }
  return true;
}

void Engine::hold(int wid, std::int64_t until_ns, std::int64_t queue_ts) {
  check_wid(wid);
  if (w_.status[wid] != STATUS_PENDING) return;
  if (w_.cq[wid] >= 0) queues_[w_.cq[wid]].remove(w_, wid);
  touch_tree(w_.cq[wid]);
  // admitted again, it orders as before (Evicted=False: workload.go Ordering)
  queue_ts_before_preemption_.emplace(wid, w_.queue_ts[wid]);
  w_.queue_ts[wid] = queue_ts;
  holds_.emplace_back(until_ns, wid);
  std::push_heap(holds_.begin(), holds_.end(), std::greater<>());
}

void Engine::end_holds(std::int64_t now_ns) {
  while (!holds_.empty() && holds_.front().first <= now_ns) {
    std::pop_heap(holds_.begin(), holds_.end(), std::greater<>());
    const int wid = holds_.back().second;
    holds_.pop_back();
    if (w_.status[wid] == STATUS_PENDING && w_.cq[wid] >= 0) {
      queues_[w_.cq[wid]].push(w_, wid);
      touch_head(w_.cq[wid], wid);
    }
  }
}

void Engine::process_unless_blocked(Entry& e, std::int64_t now_ns) {
  if (blocked_) {
    e.status = ENTRY_WAITING;  // the scheduler waits for PodsReady (waitForPodsReadyIfNeeded)
  } else {
    process(e, now_ns);
  }
}

// Kueue processEntry. Over 80 lines: its branches one to one, to keep the
// comparison with scheduler.go direct.
// The flavors of the entry's assignment, as the nomination a recomputation
// keeps to (nomination_, per pod set x resource group); its pod sets.
std::size_t Engine::nominated_flavors(const Entry& e) {
  const AssignmentRec& a = arena_[e.assignment];
  const int ng = topo_.n_groups(e.cq);
  nomination_.assign(static_cast<std::size_t>(a.ps_n) * static_cast<std::size_t>(ng), -1);
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    for (std::uint32_t f = 0; f < ps.fl_n; ++f) {
      const FlavorRec& fa = arena_.flavors[ps.fl_first + f];
      nomination_[i * static_cast<std::uint32_t>(ng) + static_cast<std::uint32_t>(topo_.group_of(e.cq, fa.resource))] = fa.flavor;
    }
  }
  return a.ps_n;
}

void Engine::process(Entry& e, std::int64_t now_ns) {
  const int cq = e.cq;
  int fit_check = -1;  // fits(), when already known
  // Targets taken by an earlier entry: recompute on the projected snapshot
  // (RecomputeAssignmentUponPreemptionTargetsOverlap, beta, on).
  if (topo_.gates().recompute_assignment_upon_preemption_targets_overlap && targets_overlap(e)) {
    const std::size_t nomination_ps = nominated_flavors(e);
    drop_scan_state(e);
    for (std::int32_t v : victims_) {  // _simulate_removal
      preemptor_.remove(v);
      cq_admitted_erase(v);
    }
    int a2;
    std::uint32_t tf, tn;
    get_assignments(e.wid, cq, false, nomination_.data(), nomination_ps, a2, tf, tn);
    for (std::int32_t v : victims_) {  // _undo_removal
      preemptor_.restore(v);
      cq_admitted_insert(v);
    }
    record(e, a2, tf, tn);
    if (arena_[a2].mode == FIT) e.deferred = true;
  } else if (tas_ && arena_.tas_uses_of(e.assignment).n > 0) [[unlikely]] {
    // A placement that no longer fits (an earlier entry of the cycle took its
    // room) is computed again on the snapshot as it is now
    // (TASRecomputeAssignmentWithinSchedulingCycle, beta, on).
    fit_check = fits(cq, e.assignment, e);
    if (fit_check == 2) {
      const std::size_t nomination_ps = nominated_flavors(e);
      drop_scan_state(e);
      int a2;
      std::uint32_t tf, tn;
      get_assignments(e.wid, cq, false, nomination_.data(), nomination_ps, a2, tf, tn);
      record(e, a2, tf, tn);
      fit_check = -1;
    }
  }
  const AssignmentRec& a = arena_[e.assignment];
  const FrAmount* u0 = arena_.usage.data() + a.usage_first;
  const FrAmount* u1 = u0 + a.usage_n;
  Mode mode = e.deferred ? DEFERRED_FIT : a.mode;
  if (mode == NO_FIT) {
    e.requeue_reason = REQUEUE_NO_FIT;
    e.reason = no_fit_reason(topo_, arena_, e.assignment);
    return;
  }
  if (mode == PREEMPT && e.t_n == 0) {
    e.requeue_reason = REQUEUE_PREEMPTION_NO_CANDIDATES;
    e.reason = WAITING_FOR_QUOTA;
    // Kueue reserveCapacityForUnreclaimablePreempt: unless the ClusterQueue
    // can always reclaim (reclaimWithinCohort: Any), or when the workload is
    // its preemptor (PrioritizePreemptorWorkloads).
    if (topo_.cq(cq).reclaim_within_cohort != ANY || (topo_.gates().prioritize_preemptor_workloads && e.is_preemptor)) {
      // Kueue quotaResourcesToReserve, computed before any of it is reserved.
      std::vector<FrAmount>& out = reserve_scratch_;
      out.clear();
      for (const FrAmount* u = u0; u != u1; ++u) {
        Amount nominal = tree_.nominal(cq, u->fr);
        Amount used = tree_.usage(cq, u->fr);
        Amount v;
        if (a.borrowing > 0) {
          Amount bl = tree_.borrowing_limit(cq, u->fr);
          v = bl == NO_LIMIT ? u->amount : amount_min(u->amount, amount_sub(amount_add(nominal, bl), used));
        } else {
          v = amount_max(0, amount_min(u->amount, amount_sub(nominal, used)));
        }
        out.push_back({u->fr, v});
      }
      reserve(cq, out.data(), out.data() + out.size(), e.assignment);
    }
    return;
  }
  if (mode == DEFERRED_FIT) {
    e.msg_kind = MSG_DEFERRED;
    e.reason = WAITING_FOR_PREEMPTED;
    e.requeue_reason = REQUEUE_PENDING_PREEMPTION;
    drop_scan_state(e);
    reserve(cq, u0, u1, e.assignment);
    return;
  }
  if (targets_overlap(e)) {
    skip(e, MSG_OVERLAP);
    return;
  }
  if ((fit_check >= 0 ? fit_check : fits(cq, e.assignment, e)) != 0) {
    skip(e, MSG_NO_LONGER_FITS);
    return;
  }
  for (std::uint32_t k = 0; k < e.t_n; ++k) {
    std::int32_t v = targets_[e.t_first + k].wid;
    if (!is_victim_[v]) {
      is_victim_[v] = 1;
      victims_.push_back(v);
    }
  }
  if (mode == PREEMPT) {
    reserve(cq, u0, u1, e.assignment);
    issue_preemptions(e, now_ns);
    for (std::uint32_t k = 0; k < e.t_n; ++k) report_.preempted.push_back(targets_[e.t_first + k].wid);
    drop_scan_state(e);
    e.reason = WAITING_FOR_PREEMPTED;
    if (e.t_n > 0) {
      e.msg_kind = MSG_ASSIGNMENT_PENDING;
      e.msg_arg = static_cast<std::int32_t>(e.t_n);
      e.requeue_reason = REQUEUE_PENDING_PREEMPTION;
    }
    return;
  }
  if (topo_.block_admission_for_pods_ready() && !pods_ready_for_all_admitted()) {
    // scheduler.go waitForPodsReadyIfNeeded: QuotaReserved=False and the
    // scheduler waits; offline the PodsReady conditions change only between
    // cycles, so the entry and those after it wait for the next.
    e.reason = WAITING_FOR_PODS_READY;
    e.msg_kind = MSG_WAITING_FOR_PODS_READY;
    e.requeue_reason = REQUEUE_FAILED_AFTER_NOMINATION;
    blocked_ = true;
    return;
  }
  admit_entry(e, now_ns);
  report_.admitted.push_back(e.wid);
}

// rec.reason, rec.message = e.reason, e.message (the message kept structured).
void Engine::persist_attempt(const Entry& e) {
  const int wid = e.wid;
  w_.reason[wid] = e.reason;
  w_.msg_kind[wid] = e.msg_kind;
  w_.msg_arg[wid] = e.msg_arg;
  if (e.msg_kind != MSG_ASSIGNMENT && e.msg_kind != MSG_ASSIGNMENT_PENDING) return;
  const AssignmentRec& a = arena_[e.assignment];
  // a pod set's TAS reason (PodSetTas.rs2_*, with TAS flavors only) is one more reason
  const PodSetTas* tas = arena_.tas_pod_sets.empty() ? nullptr : arena_.tas_pod_sets.data() + a.ps_first;
  std::uint32_t words = 1;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    const std::uint32_t extra = tas != nullptr ? tas[i].rs2_words : 0;
    if (ps.rs_n > 0 || extra > 0) words += 1 + ps.rs_words + extra;
  }
  std::uint64_t* p = w_.message_block(wid, words);
  std::uint64_t* count = p++;
  *count = 0;
  for (std::uint32_t i = 0; i < a.ps_n; ++i) {
    const PodSetRec& ps = arena_.pod_sets[a.ps_first + i];
    const std::uint32_t extra = tas != nullptr ? tas[i].rs2_words : 0;
    const std::uint32_t extra_first = tas != nullptr ? tas[i].rs2_first : 0;
    if (ps.rs_n == 0 && extra == 0) continue;
    ++*count;
    const std::uint32_t n = ps.rs_n + (extra > 0 ? 1u : 0u);
    *p++ = static_cast<std::uint64_t>(i) | (static_cast<std::uint64_t>(n) << 32);
    std::copy_n(arena_.reasons.data() + ps.rs_first, ps.rs_words, p);
    p += ps.rs_words;
    std::copy_n(arena_.reasons.data() + extra_first, extra, p);
    p += extra;
  }
}

// --- the cycle -------------------------------------------------------------------------------------------

bool Engine::has_heads() const noexcept {
  for (int cq = 0; cq < topo_.n_cq(); ++cq) {
    if (cq_active_[cq] && queues_[cq].has_active()) return true;
  }
  return false;
}

const StableRun& Engine::run_until_stable(std::int64_t now_ns, std::int64_t max_cycles) {
  StableRun& out = stable_run_;
  out.cycles = 0;
  out.stable = true;
  out.heads = 0;
  out.admitted.clear();
  out.admitted_cycle.clear();
  out.preempted.clear();
  out.preempted_cycle.clear();
  while (out.cycles < max_cycles) {
    if (!has_heads()) return out;
    const CycleReport& r = run_cycle(now_ns);
    const auto offset = static_cast<std::int32_t>(out.cycles);
    ++out.cycles;
    out.heads += r.heads;
    out.admitted.insert(out.admitted.end(), r.admitted.begin(), r.admitted.end());
    out.admitted_cycle.insert(out.admitted_cycle.end(), r.admitted.size(), offset);
    out.preempted.insert(out.preempted.end(), r.preempted.begin(), r.preempted.end());
    out.preempted_cycle.insert(out.preempted_cycle.end(), r.preempted.size(), offset);
    if (r.admitted.empty() && r.preempted.empty() && r.newly_parked == 0) return out;
  }
  out.stable = false;
  return out;
}

const CyclesRun& Engine::run_cycles(std::int64_t start_ns, std::int64_t step_ns, std::int64_t max_cycles,
                                    bool until_stable, std::uint8_t* attempted_mask, std::size_t n_mask) {
  CyclesRun& out = cycles_run_;
  out = CyclesRun{};
  while (out.cycles < max_cycles) {
    const auto offset = static_cast<std::int32_t>(out.cycles);
    const CycleReport& r = run_cycle(start_ns + (out.cycles + 1) * step_ns);
    ++out.cycles;
    out.heads.push_back(r.heads);
    out.newly_parked.push_back(r.newly_parked);
    out.admitted.insert(out.admitted.end(), r.admitted.begin(), r.admitted.end());
    out.admitted_cycle.insert(out.admitted_cycle.end(), r.admitted.size(), offset);
    for (std::int32_t v : r.preempted) {
      out.preempted.push_back(v);
      out.preempted_cycle.push_back(offset);
      out.preempted_admission_ns.push_back(w_.admission_time[v]);  // kept after the release
    }
    for (std::int32_t a : r.attempted) {
      const auto k = static_cast<std::size_t>(a);
      if (attempted_mask != nullptr) {
        if (k >= n_mask || !attempted_mask[k]) continue;
        attempted_mask[k] = 0;
      }
      out.attempted.push_back(a);
      out.attempted_cycle.push_back(offset);
    }
    out.parked.insert(out.parked.end(), r.parked.begin(), r.parked.end());
    out.parked_cycle.insert(out.parked_cycle.end(), r.parked.size(), offset);
    if (until_stable && r.admitted.empty() && r.preempted.empty() && r.newly_parked == 0) {
      out.stable = true;
      break;
    }
  }
  return out;
}

const CycleReport& Engine::run_cycle(std::int64_t now_ns) { return run_cycle(now_ns, false); }

// Over 80 lines: the cycle's steps in order (scheduler.hpp lists them), read
// best in one place. dirty_only: heads only from the trees that have not
// settled (run_until_settled).
const CycleReport& Engine::run_cycle(std::int64_t now_ns, bool dirty_only) {
  if (!holds_.empty()) end_holds(now_ns);
  ++cycle_;
  report_.cycle = cycle_;
  report_.admitted.clear();
  report_.preempted.clear();
  report_.attempted.clear();
  report_.parked.clear();
  report_.newly_parked = 0;
  snapshot_generation_ = cq_generation_;
  arena_.clear();
  targets_.clear();
  entries_.clear();
  if (is_victim_.size() < static_cast<std::size_t>(w_.size())) is_victim_.resize(static_cast<std::size_t>(w_.size()), 0);
  if (tas_) tas_->take_snapshot();
  // 0. the LocalQueue reconciler (admission fair sharing)
  if (afs_) sample_local_queues(now_ns);

  // 1. heads
  const double* lq_usage = afs_ ? lq_usage_.data() : nullptr;
  for (int cq = 0; cq < topo_.n_cq(); ++cq) {
    if (cq + 8 < topo_.n_cq()) queues_[cq + 8].prefetch_top();
    if (cq + 4 < topo_.n_cq()) queues_[cq + 4].prefetch_top_workload(w_);
    if (cq_active_[cq] && queues_[cq].has_active() && (!dirty_only || tree_dirty_[tree_.root_of(cq)])) {
      Entry e;
      e.sticky_before = queues_[cq].sticky();
      e.preemptor_before = queues_[cq].preemptor();
      int wid = queues_[cq].pop(w_, lq_usage);
      if (wid >= 0) {
        e.wid = wid;
        e.cq = cq;
        entries_.push_back(e);
      }
    }
  }
  // the trees popped settle anew by the end of the cycle (note_settled_trees)
  const bool settling = trees_can_settle();
  for (int root : tree_roots_) {
    if (settling && (!dirty_only || tree_dirty_[root])) {
      tree_dirty_[root] = 0;
      tree_unsettled_[root] = 0;
    }
  }
  report_.heads = static_cast<std::int64_t>(entries_.size());
  stats_.heads += report_.heads;

  // 2-3. nominate against the snapshot as it is at the start of the cycle
  nominated_.clear();
  for (std::size_t i = 0; i < std::min<std::size_t>(12, entries_.size()); ++i) {
    const int wid = entries_[i].wid;
    __builtin_prefetch(&w_.pod_sets_of[wid]);
    __builtin_prefetch(&w_.ls_off[wid]);
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    prefetch_head(i);
    Entry& e = entries_[i];
    bool nominated = nominate(e);
    e.is_preemptor = queues_[e.cq].preemptor() == e.wid;
    if (nominated) nominated_.push_back(static_cast<std::int32_t>(i));
  }

  // 4-5. order and process
  victims_.clear();
  blocked_ = false;
  if (topo_.fair_sharing()) {
    tournament_.reset(nominated_);
    while (!tournament_.empty()) process_unless_blocked(entries_[tournament_.pop()], now_ns);
  } else {
    order_ = nominated_;
    classical_order(order_);
    for (std::size_t k = 0; k < order_.size(); ++k) {
      prefetch_entry(k);
      process_unless_blocked(entries_[order_[k]], now_ns);
    }
  }

  // 6. requeue the heads that were not admitted
  for (Entry& e : entries_) {
    if (e.scan_pending) store_scan_state(e);
    if (e.status == ENTRY_ASSUMED) continue;
    if (e.status == ENTRY_WAITING) {  // never processed: no status written, back in the queue as it was
      queues_[e.cq].requeue(w_, e.wid, REQUEUE_FAILED_AFTER_NOMINATION, false);
      continue;
    }
    persist_attempt(e);
    report_.attempted.push_back(e.wid);
    RequeueReason reason = e.requeue_reason;
    if (e.status == ENTRY_SKIPPED && reason == REQUEUE_GENERIC) reason = REQUEUE_FAILED_AFTER_NOMINATION;
    bool pending_flavors = false;
    if (w_.ls_valid[e.wid]) {
      const std::int16_t* block = w_.ls_pool.data() + w_.ls_off[e.wid];
      const std::uint32_t size = w_.pod_sets_of[e.wid].n * static_cast<std::uint32_t>(topo_.n_groups(e.cq));
      for (std::uint32_t k = 0; k < size; ++k) {
        if (block[k] != TRIED_ABSENT && block[k] != -1) {
          pending_flavors = true;
          break;
        }
      }
    }
    const int parked = queues_[e.cq].requeue(w_, e.wid, reason, pending_flavors);
    if (parked > 0) report_.parked.push_back(e.wid);  // the head is the first one parked
    report_.newly_parked += parked;
    // (its admission or new evictions touched the tree)
    e.settled = parked == 0 && !e.resumed && !(topo_.gates().flavor_fungibility && pending_flavors) &&
                queues_[e.cq].sticky() == e.sticky_before && queues_[e.cq].preemptor() == e.preemptor_before;
  }

  // the snapshot is gone (capacity reserved for this cycle only is free
  // again); the cycle's admissions join the admitted lists
  tree_.discard_snapshot();
  if (tas_) tas_->discard_snapshot();
  for (std::int32_t v : victims_) is_victim_[v] = 0;
  victims_.clear();
  for (std::int32_t wid : report_.admitted) cq_admitted_insert(wid);

  // the workload controller sees the cycle's admissions (admission fair sharing)
  if (afs_) settle_entry_penalties(now_ns);

  // 7. evictions take effect (offline)
  if (release_evictions_) {
    for (std::int32_t wid : report_.preempted) release_eviction(wid);
  }
  if (settling) note_settled_trees();
  return report_;
}

// --- settled cohort trees --------------------------------------------------------------------------------

bool Engine::trees_can_settle() const noexcept {
  return skip_settled_ && !afs_ && !tas_ && !topo_.block_admission_for_pods_ready() && !tree_.may_saturate();
}

// Would a run_until_settled cycle pop a head: an active ClusterQueue with an
// active workload in a tree that has not settled?
bool Engine::dirty_heads() const noexcept {
  for (int cq = 0; cq < topo_.n_cq(); ++cq) {
    if (cq_active_[cq] && queues_[cq].has_active() && tree_dirty_[tree_.root_of(cq)]) return true;
  }
  return false;
}

// Does the workload's recorded flavor scan (ls_pool) make its next
// assignment start past the first flavor of some resource group
// (FlavorAssigner::next_flavor)? Kept -1 (scan ended) or absent, it starts
// from the first, as without a record.
bool Engine::scan_resumes(int wid, int cq) const noexcept {
  if (!topo_.gates().flavor_fungibility || !w_.ls_valid[wid]) return false;
  const std::int16_t* block = w_.ls_pool.data() + w_.ls_off[wid];
  const std::uint32_t size = w_.pod_sets_of[wid].n * static_cast<std::uint32_t>(topo_.n_groups(cq));
  for (std::uint32_t k = 0; k < size; ++k) {
    if (block[k] != TRIED_ABSENT && block[k] != -1) return true;
  }
  return false;
}

// The trees popped this cycle stay settled unless one of their heads was
// admitted, evicted a workload, parked workloads, was not processed (blocked),
// or its attempt would not replay exactly (a resumed scan, a moved sticky or
// preemptor workload). Changes made during the cycle (touch_tree) stand.
void Engine::note_settled_trees() {
  for (const Entry& e : entries_) {
    if (!e.settled) tree_unsettled_[static_cast<std::size_t>(tree_.root_of(e.cq))] = 1;
  }
  for (int root : tree_roots_) {
    if (tree_unsettled_[root]) {
      tree_dirty_[root] = 1;
      tree_unsettled_[root] = 0;
    }
  }
}

const SettledRun& Engine::run_until_settled(std::int64_t now_ns, std::int64_t max_cycles,
                                            std::uint8_t* attempted_mask, std::size_t n_mask) {
  SettledRun& out = settled_run_;
  out.cycles = out.run = out.heads = 0;
  out.stable = false;
  out.admitted.clear();
  out.admitted_cycle.clear();
  out.preempted.clear();
  out.preempted_cycle.clear();
  out.attempted.clear();
  while (out.cycles < max_cycles) {
    if (!has_heads()) {
      out.stable = true;
      break;
    }
    if (!dirty_heads()) {
      // Every tree with a head settled: the cycle would replay each tree's
      // last attempts and change nothing. Counted (cycle numbers are read
      // by scan_state_usable), not run.
      ++cycle_;
      ++out.cycles;
      out.stable = true;
      break;
    }
    const CycleReport& r = run_cycle(now_ns, /*dirty_only=*/true);
    const auto offset = static_cast<std::int32_t>(out.cycles);
    ++out.cycles;
    ++out.run;
    out.heads += r.heads;
    out.admitted.insert(out.admitted.end(), r.admitted.begin(), r.admitted.end());
    out.admitted_cycle.insert(out.admitted_cycle.end(), r.admitted.size(), offset);
    // a preemptor waiting for its victims re-issues their (ongoing) eviction
    // every cycle, which changes nothing: only victims evicted by this cycle count
    std::size_t fresh = 0;
    for (std::int32_t v : r.preempted) {
      if (w_.evicted_cycle[static_cast<std::size_t>(v)] != r.cycle) continue;
      out.preempted.push_back(v);
      out.preempted_cycle.push_back(offset);
      ++fresh;
    }
    for (std::int32_t a : r.attempted) {
      const auto k = static_cast<std::size_t>(a);
      if (attempted_mask == nullptr) {
        out.attempted.push_back(a);
      } else if (k < n_mask && attempted_mask[k]) {
        attempted_mask[k] = 0;
        out.attempted.push_back(a);
      }
    }
    if (r.admitted.empty() && fresh == 0 && r.newly_parked == 0) {
      out.stable = true;
      break;
    }
  }
  return out;
}

}  // namespace kueue_fast
