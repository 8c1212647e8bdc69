// The engine's workload inputs read from Python: one workload (add_workload's
// arguments) and the bulk workload arrays (kueue_fast.engine.native.WorkloadArrays),
// each checked. The topology comes typed (register_topology.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"

namespace kueue_fast_bindings {

kueue_fast::WorkloadInput workload_from(py::handle ns, py::handle name, py::handle uid, py::handle cq,
                                        py::handle priority, py::handle queue_ts, py::handle hash, py::handle block,
                                        py::handle block_message, py::handle pod_sets, py::handle admission);

// Bulk workload arrays, checked and copied: what add_workloads adds at once
// and stage_workloads keeps for add_staged (the simulator adds each arrival
// instant's rows without building and converting array slices per call).
struct StagedWorkloads {
  std::vector<std::int64_t> cq, prio, ts, hash, pso, psc, psm, psf, rqo, rqr, rqa, psn, blk, blk_msg, lq;
  std::vector<std::string> namespaces, names, uids, pod_set_names, block_messages;
  bool has_psn = false, has_block = false;
  std::size_t n = 0;
};

// The rows of an arrays object: anything with WorkloadArrays' attributes
// (the optional ones may be missing or None).
StagedWorkloads workload_rows(py::handle arrays);

// Engine::add_workloads of rows [lo, hi) of `st` (bounds checked by the caller).
int add_workload_rows(kueue_fast::Engine& engine, const StagedWorkloads& st, std::int64_t lo, std::int64_t hi);

}  // namespace kueue_fast_bindings
