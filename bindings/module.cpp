#include <pybind11/pybind11.h>

#include <kueue_fast/version.hpp>

#include "common.hpp"
#include "py_engine.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "kueue-fast native engine";
  m.def("version", &kueue_fast::version);
  // The interface the Python package calls (kueue_fast/_compiled.py
  // INTERFACES): bump both when a binding's arguments or results change,
  // so that a core from another build is refused by name, not met as a
  // TypeError inside a cycle.
  m.attr("INTERFACE") = 5;
  kueue_fast_bindings::register_errors(m);
  kueue_fast_bindings::register_quantity(m);
  kueue_fast_bindings::register_topology(m);
  kueue_fast_bindings::EngineClass engine = kueue_fast_bindings::register_engine(m);
  kueue_fast_bindings::register_workloads(engine);
  kueue_fast_bindings::register_cycles(engine);
  kueue_fast_bindings::register_decisions(engine);
  kueue_fast_bindings::register_quota_tree(engine);
  kueue_fast_bindings::register_afs_ledger(engine);
  kueue_fast_bindings::register_afs(m);
  kueue_fast_bindings::register_sim(m);
}
