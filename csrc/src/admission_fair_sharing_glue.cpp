// The Engine's admission fair sharing glue: the LocalQueues' usage ledger
// kept around the cycle as kueue_fast/engine/reference/scheduler.py keeps it
// (sampled before the heads are popped, entry penalties pushed on admission,
// settled when the cycle ends) and the usage the pops and preemption
// orderings read. The ledger arithmetic itself is admission_fair_sharing.cpp.
#include <kueue_fast/scheduler.hpp>

#include "engine_checks.hpp"

namespace kueue_fast {

// The ledger and the per-LocalQueue tables (the constructor, when the
// topology has admissionFairSharing and a usage-based ClusterQueue).
void Engine::init_admission_fair_sharing() {
  const int n_lq = topo_.n_local_queues();
  std::vector<std::int64_t> nanos_per_unit;
  for (int r = 0; r < topo_.n_resources(); ++r) {
    nanos_per_unit.push_back(topo_.resource_name(r) == "cpu" ? 1000000 : 1000000000);  // milli-cpu
  }
  afs_ = std::make_unique<UsageLedger>(topo_.spec().admission_fair_sharing, std::move(nanos_per_unit), n_lq);
  lq_is_afs_.assign(static_cast<std::size_t>(n_lq), 0);
  for (int lq = 0; lq < n_lq; ++lq) {
    const LocalQueueSpec& spec = topo_.local_queue(lq);
    if (spec.cluster_queue >= 0 && topo_.cq(spec.cluster_queue).admission_fair_sharing) {
      afs_lqs_.push_back(lq);
      lq_is_afs_[static_cast<std::size_t>(lq)] = 1;
    }
    const std::size_t slash = spec.name.find('/');
    lq_queue_name_.push_back(
        w_.intern_queue_name(slash == std::string::npos ? spec.name : spec.name.substr(slash + 1)));
  }
  lq_usage_.assign(static_cast<std::size_t>(n_lq) + 1, 0.0);
  const std::size_t cells = static_cast<std::size_t>(n_lq) * static_cast<std::size_t>(topo_.n_resources());
  lq_adm_sum_.assign(cells, 0);
  lq_adm_count_.assign(cells, 0);
}

// What the workload's usage adds to (or, sign -1, takes from) its LocalQueue's
// admitted usage: scheduler.py _lq_admitted_usage sums the usage of the
// LocalQueue's workloads admitted to the LocalQueue's ClusterQueue.
void Engine::lq_admitted_add(int wid, int cq, int sign) {
  if (!afs_) return;
  const int lq = w_.local_queue[wid];
  if (lq < 0 || topo_.local_queue(lq).cluster_queue != cq) return;
  const std::size_t base = static_cast<std::size_t>(lq) * static_cast<std::size_t>(topo_.n_resources());
  for_each_fr_usage(wid, [&](int fr, Amount v) {
    const std::size_t k = base + static_cast<std::size_t>(topo_.fr_resource(fr));
    lq_adm_sum_[k] += sign > 0 ? static_cast<Nanos>(v) : -static_cast<Nanos>(v);  // |sum| < 2^64 * entries
    lq_adm_count_[k] += sign;
  });
}

// The LocalQueue's admitted usage per resource, flavors summed, in nanos
// (the scheduler cache's LocalQueue.GetAdmittedUsage).
Amounts Engine::lq_admitted_usage(int lq) const {
  Amounts out;
  const int n_res = topo_.n_resources();
  const std::size_t base = static_cast<std::size_t>(lq) * static_cast<std::size_t>(n_res);
  for (int r = 0; r < n_res; ++r) {
    if (lq_adm_count_[base + static_cast<std::size_t>(r)] > 0) {
      out.push_back({r, afs_->to_nanos(r, lq_adm_sum_[base + static_cast<std::size_t>(r)])});
    }
  }
  return out;
}

// workload.Info.SumTotalRequests: per-pod requests times counts, summed over
// pod sets, in nanos (no `pods`: only the flavor assigner adds it).
Amounts Engine::total_requests(int wid) const {
  Amounts out;
  const Span ps = w_.pod_sets_of[wid];
  for (std::uint32_t i = 0; i < ps.n; ++i) {
    const PodSetRow& row = w_.pod_sets[ps.first + i];
    Amounts one;
    for (std::uint32_t k = 0; k < row.requests.n; ++k) {
      const RequestRow& rq = w_.requests[row.requests.first + k];
      one.push_back({rq.resource, static_cast<Nanos>(sat_mul(rq.amount, row.count))});
    }
    out = merge_sum(out, one);
  }
  for (NanoAmount& x : out) x.value = afs_->to_nanos(x.resource, x.value);
  return out;
}

double Engine::local_queue_usage(int lq) const {
  if (!afs_) return 0.0;
  return afs_->usage(lq, lq < 0 ? 1.0 : topo_.local_queue(lq).fair_weight);
}

// scheduler.py _queued_lq_usage: the cycle's snapshot for the LocalQueues
// it is taken for, the ledger as it is now for the others.
double Engine::queued_lq_usage(int lq) const {
  if (lq >= 0 && lq_usage_valid_ && lq_is_afs_[static_cast<std::size_t>(lq)]) {
    return lq_usage_[static_cast<std::size_t>(lq) + 1];
  }
  return local_queue_usage(lq);
}

bool Engine::lq_fs_usage(int wid, double& usage) const {
  const int cq = w_.admitted_cq[wid];
  if (!afs_ || cq < 0 || !topo_.cq(cq).admission_fair_sharing) return false;
  usage = queued_lq_usage(w_.local_queue[wid]);
  return true;
}

// preemption.py candidate_cmp(a, b) < 0.
bool Engine::afs_candidate_before(int a, int b, int preemptor_cq) const {
  const WorkloadStore& w = w_;
  const int ea = w.evicting[a] ? 0 : 1, eb = w.evicting[b] ? 0 : 1;
  if (ea != eb) return ea < eb;
  const int sa = w.admitted_cq[a] == preemptor_cq ? 1 : 0, sb = w.admitted_cq[b] == preemptor_cq ? 1 : 0;
  if (sa != sb) return sa < sb;
  if (w.admitted_cq[a] == w.admitted_cq[b] && w.queue_name[a] != w.queue_name[b]) {
    double ua = 0.0, ub = 0.0;
    if (lq_fs_usage(a, ua) && lq_fs_usage(b, ub) && ua != ub) return ua > ub;
  }
  if (w.priority[a] != w.priority[b]) return w.priority[a] < w.priority[b];
  if (w.admission_time[a] != w.admission_time[b]) return w.admission_time[a] > w.admission_time[b];
  const int c = w.compare_names(a, b);
  if (c != 0) return c < 0;
  return a < b;
}

// The LocalQueue reconciler (scheduler.py _sample_local_queues): at the start
// of every cycle each LocalQueue of a usage-based ClusterQueue is seeded from
// its persisted status when it has no entry, else sampled when due; stopped
// LocalQueues and those of inactive ClusterQueues are left alone. Then the
// usages the cycle orders by are taken.
void Engine::sample_local_queues(std::int64_t now_ns) {
  for (std::int32_t lq : afs_lqs_) {
    const LocalQueueSpec& spec = topo_.local_queue(lq);
    if (spec.stopped || !topo_.cq(spec.cluster_queue).active) continue;
    if (!afs_->seeded(lq)) {
      afs_->seed(lq, spec.consumed, now_ns);
    } else if (!afs_->due(lq, now_ns)) {
      continue;
    }
    afs_->sample(lq, lq_admitted_usage(lq), now_ns);
  }
  // Every LocalQueue's usage as of now (pops happen before anything else
  // changes the ledger, so this is also the live value for the others).
  for (int lq = -1; lq < topo_.n_local_queues(); ++lq) {
    lq_usage_[static_cast<std::size_t>(lq + 1)] = local_queue_usage(lq);
  }
  lq_usage_valid_ = true;
}

// Scheduler.updateEntryPenalty on assume, for usage-based ClusterQueues.
void Engine::push_entry_penalty(int wid, int cq, std::int64_t now_ns) {
  if (!afs_ || !topo_.cq(cq).admission_fair_sharing) return;
  afs_->push_penalty(w_.local_queue[wid], wid, afs_->entry_penalty(total_requests(wid)), now_ns);
}

// The workload controller sees the cycle's admissions (updateAfsConsumedUsage).
void Engine::settle_entry_penalties(std::int64_t now_ns) {
  for (std::int32_t wid : report_.admitted) {
    const int cq = w_.admitted_cq[wid];
    if (w_.status[wid] != STATUS_ADMITTED || cq < 0 || !topo_.cq(cq).admission_fair_sharing) continue;
    const int lq = w_.local_queue[wid];
    afs_->settle(lq, wid, lq >= 0 ? lq_admitted_usage(lq) : Amounts{}, now_ns);
  }
}

void Engine::restore_afs_entry(int lq, Amounts consumed, std::int64_t last_update_ns) {
  if (!afs_) return;
  check_range(lq, 0, topo_.n_local_queues() - 1, "local queue");
  std::int32_t prev = -1;
  for (const NanoAmount& x : consumed) {
    check_range(x.resource, 0, topo_.n_resources() - 1, "resource id");
    if (x.resource <= prev) bad("restored consumed resources must be by increasing id");
    prev = x.resource;
  }
  afs_->seed(lq, std::move(consumed), last_update_ns);
}

}  // namespace kueue_fast
