// The Python object of the native engine (kueue_fast._core.Engine), shared
// by the registrations that drive it (register_engine.cpp, register_sim.cpp).
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

}  // namespace kueue_fast_bindings
