#include <pybind11/pybind11.h>
#include <kueue_fast/version.hpp>
namespace py = pybind11;
PYBIND11_MODULE(_core, m) {
  m.doc() = "kueue-fast native engine";
  m.def("version", &kueue_fast::version);
}
