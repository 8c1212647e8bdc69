#include <string>

#include <kueue_fast/quantity_format.hpp>

#include "common.hpp"

namespace kueue_fast_bindings {

void register_quantity(py::module_& m) {
  m.def(
      "format_quantity",
      [](const std::string& resource, std::int64_t value) { return kueue_fast::format_quantity(resource, value); },
      py::arg("resource"), py::arg("value"),
      "The string Kueue prints for `value` canonical units of `resource` (C++ twin of quantity.format_quantity).");
}

}  // namespace kueue_fast_bindings
