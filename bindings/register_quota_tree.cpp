// kueue_fast._core.Engine's quota tree: read-only, zero-copy (n_nodes, n_fr)
// int64 views whose base is the engine (convert.hpp tree_view).
#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

void register_quota_tree(EngineClass& cls) {
  cls
      .def_property_readonly("usage",
                             [](py::object self_obj) {
                               PyEngine& self = self_obj.cast<PyEngine&>();
                               const auto& t = self.engine.tree();
                               return tree_view(self_obj, t.usage_table(), t.n_nodes(), t.n_fr());
                             })
      .def_property_readonly("subtree_quota",
                             [](py::object self_obj) {
                               PyEngine& self = self_obj.cast<PyEngine&>();
                               const auto& t = self.engine.tree();
                               return tree_view(self_obj, t.subtree_quota_table(), t.n_nodes(), t.n_fr());
                             })
      .def_property_readonly("nominal",
                             [](py::object self_obj) {
                               PyEngine& self = self_obj.cast<PyEngine&>();
                               const auto& t = self.engine.tree();
                               return tree_view(self_obj, t.nominal_table(), t.n_nodes(), t.n_fr());
                             })
      .def_property_readonly("borrowing_limit",
                             [](py::object self_obj) {
                               PyEngine& self = self_obj.cast<PyEngine&>();
                               const auto& t = self.engine.tree();
                               return tree_view(self_obj, t.borrowing_limit_table(), t.n_nodes(), t.n_fr());
                             })
      .def_property_readonly("lending_limit",
                             [](py::object self_obj) {
                               PyEngine& self = self_obj.cast<PyEngine&>();
                               const auto& t = self.engine.tree();
                               return tree_view(self_obj, t.lending_limit_table(), t.n_nodes(), t.n_fr());
                             });
}

}  // namespace kueue_fast_bindings
