#include <pybind11/pybind11.h>

#include <kueue_fast/version.hpp>

#include "common.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "kueue-fast native engine";
  m.def("version", &kueue_fast::version);
  kueue_fast_bindings::register_errors(m);
  kueue_fast_bindings::register_quantity(m);
  kueue_fast_bindings::register_engine(m);
  kueue_fast_bindings::register_afs(m);
}
