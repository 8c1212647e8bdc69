// The Python object of the native engine (kueue_fast._core.Engine), shared
// by the registrations that drive it: register_engine.cpp makes the class,
// the other register_*.cpp add its methods by domain (module.cpp calls each),
// register_sim.cpp runs the simulator's loop over it.
#pragma once

#include <mutex>

#include <kueue_fast/scheduler.hpp>

#include "parse_inputs.hpp"

namespace kueue_fast_bindings {

// The engine and the lock that serialises every call into it. run_cycle
// releases the GIL while it holds the lock; the other methods take the lock
// with the GIL held. No call needs the GIL while holding the lock, so the two
// never wait on each other in opposite orders.
struct PyEngine {
  std::mutex mutex;
  kueue_fast::Engine engine;
  StagedWorkloads staged;
  PyEngine(kueue_fast::TopologySpec spec, bool release_evictions) : engine(std::move(spec), release_evictions) {}
};

using EngineClass = py::class_<PyEngine>;

// The named results (collections.namedtuple, also _core attributes): the
// callers' tuple unpacking keeps working and every field has a name. Made
// once at import (register_engine) and kept for the life of the process.
struct ResultTypes {
  py::handle cycle, stable_run, cycles_run, settled_run, admitted_shapes, admitted_usage, workload_spec,
      ledger_entry, queue_state, decisions;
};
ResultTypes& result_types();

// The class with its construction, configuration and counters.
EngineClass register_engine(py::module_& m);
// Workloads in and out: add, stage, remove, hold, evict.
void register_workloads(EngineClass& cls);
// The scheduling cycles: one, many, until stable or settled.
void register_cycles(EngineClass& cls);
// What the cycles decided, per workload and per ClusterQueue.
void register_decisions(EngineClass& cls);
// Zero-copy views of the quota tree.
void register_quota_tree(EngineClass& cls);
// Admission fair sharing's usage ledger (register_afs.cpp).
void register_afs_ledger(EngineClass& cls);

}  // namespace kueue_fast_bindings
