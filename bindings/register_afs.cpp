// Admission fair sharing: the engine's usage ledger (kueue_fast._core.Engine's
// afs_ledger_state and restore_afs_ledger), and the core's arithmetic for
// tests that hold it against the reference's
// (kueue_fast/engine/reference/admission_fair_sharing.py).
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <kueue_fast/admission_fair_sharing.hpp>
#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

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

void register_afs_ledger(EngineClass& cls) {
  cls
      .def("afs_ledger_state",
           [](PyEngine& self) {
             std::lock_guard<std::mutex> lock(self.mutex);
             const kueue_fast::Engine& e = self.engine;
             py::list out;
             const kueue_fast::UsageLedger* ledger = e.afs_ledger();
             if (ledger == nullptr) return out;
             for (std::int32_t lq : ledger->order()) {
               const kueue_fast::LedgerEntry& entry = *ledger->entry(lq);
               out.append(result_types().ledger_entry(lq, amounts_to(entry.resources), amounts_to(entry.pending_penalty()),
                                         entry.last_update_ns, e.local_queue_usage(lq)));
             }
             return out;
           },
           "[(local queue id (-1: none), consumed, pending penalty, last update ns, usage)] in creation order; "
           "amounts as [(resource id, nanos)]. Empty without admission fair sharing.")
      .def("restore_afs_ledger",
           [](PyEngine& self, py::handle entries) {
             std::vector<std::tuple<std::int64_t, kueue_fast::Amounts, std::int64_t>> in;
             for (auto x : to_seq(entries, "ledger entries")) {
               py::sequence t = to_seq(x, "ledger entry");
               if (t.size() != 3) bad("ledger entry: expected (local queue id, consumed, last update ns)");
               in.emplace_back(to_i64(t[0], "local queue id"), amounts_from(t[1], "consumed"),
                               to_i64(t[2], "last update ns"));
             }
             std::lock_guard<std::mutex> lock(self.mutex);
             for (auto& [lq, consumed, last] : in) {
               if (lq < 0 || lq > std::numeric_limits<int>::max()) bad("unknown local queue id " + std::to_string(lq));
               self.engine.restore_afs_entry(static_cast<int>(lq), std::move(consumed), last);
             }
           },
           "Seed ledger entries (history and LastUpdate), as the reference's restore_afs_ledger.");
}

}  // namespace kueue_fast_bindings
