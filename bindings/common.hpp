// Shared declarations of the binding modules (pybind11 lives only here).
#pragma once

#include <pybind11/pybind11.h>

namespace kueue_fast_bindings {
namespace py = pybind11;

void register_errors(py::module_& m);
void register_quantity(py::module_& m);
void register_topology(py::module_& m);
void register_afs(py::module_& m);
void register_sim(py::module_& m);

// kueue_fast.api.errors.EngineError (imported once).
py::object engine_error();

}  // namespace kueue_fast_bindings
