// kueue_fast._core.Engine: the native engine (kueue_fast/engine/native.py wraps it
// with the reference engine's Python interface). This file makes the class,
// its construction, configuration and counters; the methods of each domain
// are added by register_workloads.cpp, register_cycles.cpp,
// register_decisions.cpp, register_quota_tree.cpp and register_afs.cpp
// (module.cpp calls each). Registration only: the conversions live in
// convert.cpp, the workload parsers in parse_inputs.cpp, the topology's
// classes in register_topology.cpp.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

namespace {

py::handle named_tuple(py::module_& m, const char* name, const char* fields) {
  py::object t = py::module_::import("collections").attr("namedtuple")(name, fields, py::arg("module") = m.attr("__name__"));
  m.attr(name) = t;
  return t.release();
}

void register_result_types(py::module_& m) {
  ResultTypes& t = result_types();
  t.cycle = named_tuple(m, "CycleResult", "cycle admitted preempted newly_parked heads attempted parked");
  t.stable_run = named_tuple(m, "StableRun", "cycles stable heads admitted admitted_cycle preempted preempted_cycle");
  t.cycles_run = named_tuple(m, "CyclesRun",
                             "cycles stable heads newly_parked admitted admitted_cycle preempted preempted_cycle "
                             "preempted_admission_ns attempted attempted_cycle parked parked_cycle");
  t.settled_run = named_tuple(m, "SettledRun",
                              "cycles stable heads admitted admitted_cycle preempted preempted_cycle attempted run");
  t.admitted_shapes = named_tuple(m, "AdmittedShapes", "shape shapes");
  t.admitted_usage = named_tuple(m, "AdmittedUsage", "cluster_queue usage");
  t.workload_spec = named_tuple(m, "WorkloadSpecRow",
                                "namespace name uid cluster_queue priority queue_ts scheduling_hash pod_sets block "
                                "block_message local_queue");
  t.ledger_entry = named_tuple(m, "LedgerEntry", "local_queue consumed pending_penalty last_update_ns usage");
  t.queue_state = named_tuple(m, "QueueState", "active parked sticky pop_cycle requeue_cycle");
  t.decisions = named_tuple(m, "Decisions", "state admitted_cq admission_time");
}

}  // namespace

ResultTypes& result_types() {
  static ResultTypes types;
  return types;
}

// Over 80 lines: one pybind11 class chain of short per-method lambdas.
EngineClass register_engine(py::module_& m) {
  register_result_types(m);
  EngineClass cls(m, "Engine", "The native engine over one topology (see kueue_fast.engine.native.NativeEngine).");
  cls.def(py::init([](const kueue_fast::TopologySpec& topology, bool release_evictions) {
            return std::make_unique<PyEngine>(topology, release_evictions);
          }),
          py::arg("topology"), py::arg("release_evictions") = true)
      .def("add_flavor_class",
           [](PyEngine& self, const py::handle& row) {
             std::vector<std::optional<std::string>> r;
             for (auto x : to_seq(row, "flavor class")) {
               if (x.is_none()) {
                 r.emplace_back();
               } else {
                 r.emplace_back(to_str(x, "flavor class entry"));
               }
             }
             std::lock_guard<std::mutex> lock(self.mutex);
             return self.engine.add_flavor_class(r);
           })
      .def("add_tas_class",
           [](PyEngine& self, const py::handle& per_flavor) {
             std::vector<kueue_fast::TasClassFlavor> row;
             for (auto x : to_seq(per_flavor, "tas class")) {
               py::sequence c = to_seq(x, "tas class flavor");
               if (c.size() != 3) bad("tas class flavor: expected (eligible or None, total_nodes, static_reasons)");
               kueue_fast::TasClassFlavor cf;
               if (!c[0].is_none()) {
                 for (auto b : to_seq(c[0], "eligible")) cf.eligible.push_back(to_i64(b, "eligible") != 0 ? 1 : 0);
               }
               cf.total_nodes = static_cast<std::int32_t>(to_i64(c[1], "total_nodes"));
               for (auto r : to_seq(c[2], "static_reasons")) cf.static_reasons.push_back(to_str(r, "static reason"));
               row.push_back(std::move(cf));
             }
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.add_tas_class(std::move(row));
           })
      .def_property_readonly("n_tas_classes",
                             [](PyEngine& self) {
                               std::lock_guard<std::mutex> lock(self.mutex);
                               return self.engine.tas() != nullptr ? self.engine.tas()->n_classes() : 0;
                             })
      .def_property_readonly("n_classes",
                             [](PyEngine& self) {
                               std::lock_guard<std::mutex> lock(self.mutex);
                               return self.engine.topology().n_classes();
                             })
      .def_property_readonly("cycle",
                             [](PyEngine& self) {
                               std::lock_guard<std::mutex> lock(self.mutex);
                               return self.engine.cycle();
                             })
      .def_property_readonly("evaluations",
                             [](PyEngine& self) {
                               std::lock_guard<std::mutex> lock(self.mutex);
                               return self.engine.evaluations();
                             })
      .def_property_readonly("n_workloads",
                             [](PyEngine& self) {
                               std::lock_guard<std::mutex> lock(self.mutex);
                               return self.engine.n_workloads();
                             })
      .def_property(
          "debug_checks",
          [](PyEngine& self) {
            std::lock_guard<std::mutex> lock(self.mutex);
            return self.engine.debug_checks();
          },
          [](PyEngine& self, bool on) {
            std::lock_guard<std::mutex> lock(self.mutex);
            self.engine.set_debug_checks(on);
          })
      .def_property(
          "skip_settled",
          [](PyEngine& self) {
            std::lock_guard<std::mutex> lock(self.mutex);
            return self.engine.skip_settled();
          },
          [](PyEngine& self, bool on) {
            std::lock_guard<std::mutex> lock(self.mutex);
            self.engine.set_skip_settled(on);
          })
      .def("stats",
           [](PyEngine& self) {
             std::lock_guard<std::mutex> lock(self.mutex);
             const auto& s = self.engine.stats();
             py::dict d;
             d["heads"] = s.heads;
             d["assignments"] = s.assignments;
             d["quota_checks"] = s.quota_checks;
             d["oracle_calls"] = s.oracle_calls;
             d["target_searches"] = s.target_searches;
             d["candidate_evaluations"] = self.engine.evaluations();
             return d;
           },
           "Work counters since the engine was built.")
      .def("memory_bytes",
           [](PyEngine& self) {
             std::lock_guard<std::mutex> lock(self.mutex);
             return self.engine.memory_bytes();
           });
  return cls;
}

}  // namespace kueue_fast_bindings
