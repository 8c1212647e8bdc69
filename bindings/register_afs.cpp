// The admission fair sharing arithmetic of the core, for tests that hold it
// against the reference's (kueue_fast/engine/reference/admission_fair_sharing.py).
#include <kueue_fast/admission_fair_sharing.hpp>

#include "common.hpp"
#include "convert.hpp"

namespace kueue_fast_bindings {

void register_afs(py::module_& m) {
  m.def(
      "afs_mul_by_float",
      [](py::handle v, double f) { return from_nanos(kueue_fast::mul_by_float(to_nanos(v, "v"), kueue_fast::shortest_decimal(f))); },
      py::arg("v"), py::arg("f"), "resource.MulByFloat on one amount of nanos (admission_fair_sharing.mul_by_float).");
  m.def("afs_go_pow_half", &kueue_fast::go_pow_half, py::arg("y"), "Go's math.Pow(0.5, y).");
  m.def("afs_alpha_rate", &kueue_fast::alpha_rate, py::arg("sampling_s"), py::arg("half_life_s"));
  m.def(
      "afs_go_seconds", [](py::handle ns) { return kueue_fast::go_seconds(to_nanos(ns, "ns")); }, py::arg("ns"),
      "time.Duration.Seconds().");
  m.def(
      "afs_nanos_to_float", [](py::handle v) { return kueue_fast::nanos_to_double(to_nanos(v, "v")); }, py::arg("v"),
      "float(v), correctly rounded.");
}

}  // namespace kueue_fast_bindings
