#include <pybind11/pybind11.h>

#include <kueue_fast/version.hpp>

#include "common.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "kueue-fast native engine";
  m.def("version", &kueue_fast::version);
  // The interface the Python package calls (kueue_fast/_compiled.py
  // INTERFACES): bump both when a binding's arguments or results change,
  // so that a core from another build is refused by name, not met as a
  // TypeError inside a cycle.
  m.attr("INTERFACE") = 4;
  kueue_fast_bindings::register_errors(m);
  kueue_fast_bindings::register_quantity(m);
  kueue_fast_bindings::register_engine(m);
  kueue_fast_bindings::register_afs(m);
  kueue_fast_bindings::register_sim(m);
}
