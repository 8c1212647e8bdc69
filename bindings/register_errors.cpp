// C++ exceptions of the core -> Python: input problems become
// kueue_fast.api.errors.EngineError (typed, never a crash); broken invariants
// (debug checks) become RuntimeError.
#include <exception>
#include <stdexcept>

#include <pybind11/gil_safe_call_once.h>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"

namespace kueue_fast_bindings {

py::object engine_error() {
  PYBIND11_CONSTINIT static py::gil_safe_call_once_and_store<py::object> storage;
  return storage
      .call_once_and_store_result([]() { return py::module_::import("kueue_fast.api.errors").attr("EngineError"); })
      .get_stored();
}

void register_errors(py::module_& m) {
  (void)m;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kueue_fast::EngineInvariantError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::invalid_argument& e) {  // EngineInputError and topology errors
      PyErr_SetString(engine_error().ptr(), e.what());
    }
  });
}

}  // namespace kueue_fast_bindings
