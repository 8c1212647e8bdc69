// Shared declarations of the binding modules (pybind11 lives only here).
#pragma once

#include <pybind11/pybind11.h>

#include <kueue_fast/admission_fair_sharing.hpp>

namespace kueue_fast_bindings {
namespace py = pybind11;

void register_errors(py::module_& m);
void register_quantity(py::module_& m);
void register_engine(py::module_& m);
void register_afs(py::module_& m);

// Python int <-> the usage ledger's 128-bit nanos (register_engine.cpp).
kueue_fast::Nanos to_nanos(py::handle h, const char* what);
py::int_ from_nanos(kueue_fast::Nanos v);

// kueue_fast.errors.EngineError (imported once).
py::object engine_error();

}  // namespace kueue_fast_bindings
