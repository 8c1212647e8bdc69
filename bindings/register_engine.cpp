// kueue_fast._core.Engine: the native engine (kueue_fast/engine/native.py wraps it
// with the reference engine's Python interface). Registration only: the
// conversions live in convert.cpp, the input parsers in parse_inputs.cpp.
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "parse_inputs.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

using kueue_fast::Amount;
using kueue_fast::CycleReport;
using kueue_fast::Engine;
using kueue_fast::TopologySpec;
using kueue_fast::WorkloadInput;

namespace {

// f(engine, wid) for each wid of `wids` (all checked first, under the lock):
// a numpy array of T, or with T = py::str a list.
template <class T, class F>
auto per_wid(PyEngine& self, py::handle wids, F f) {
  I64Array a = int_array(wids, "wids");
  std::lock_guard<std::mutex> lock(self.mutex);
  const Engine& e = self.engine;
  const py::ssize_t n = a.size();
  for (py::ssize_t i = 0; i < n; ++i) e.check_wid(a.data()[i]);
  if constexpr (std::is_same_v<T, py::str>) {
    py::list out(n);
    for (py::ssize_t i = 0; i < n; ++i) out[i] = py::str(f(e, static_cast<int>(a.data()[i])));
    return out;
  } else {
    py::array_t<T> out(n);
    auto* o = out.mutable_data();
    for (py::ssize_t i = 0; i < n; ++i) o[i] = f(e, static_cast<int>(a.data()[i]));
    return out;
  }
}


// A hash of admitted_shapes' keys (FNV-1a over the values): an unordered_map
// groups 100k admissions in about a third of the time of a std::map.
struct I64VectorHash {
  std::size_t operator()(const std::vector<std::int64_t>& v) const noexcept {
    std::uint64_t h = 1469598103934665603ULL;
    for (const std::int64_t x : v) {
      h ^= static_cast<std::uint64_t>(x);
      h *= 1099511628211ULL;
    }
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// The named results (collections.namedtuple, also _core attributes): the
// callers' tuple unpacking keeps working and every field has a name. Made
// once at import and kept for the life of the process.
struct ResultTypes {
  py::handle cycle, stable_run, cycles_run, settled_run, admitted_shapes, admitted_usage, workload_spec,
      ledger_entry, queue_state, decisions;
};

ResultTypes& result_types() {
  static ResultTypes types;
  return types;
}

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

// Over 80 lines: one pybind11 class chain of short per-method lambdas.
void register_engine(py::module_& m) {
  register_result_types(m);
  py::class_<PyEngine>(m, "Engine", "The native engine over one topology (see kueue_fast.engine.native.NativeEngine).")
      .def(py::init([](const py::dict& topology, bool release_evictions) {
             return std::make_unique<PyEngine>(topology_from(topology), release_evictions);
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
      .def(
          "add_workload",
          [](PyEngine& self, py::handle ns, py::handle name, py::handle uid, py::handle cq, py::handle priority,
             py::handle queue_ts, py::handle hash, py::handle block, py::handle block_message, py::handle pod_sets,
             py::handle admission, py::handle job_uid, py::handle local_queue, py::handle queue_name) {
            WorkloadInput in =
                workload_from(ns, name, uid, cq, priority, queue_ts, hash, block, block_message, pod_sets, admission);
            in.job_uid = to_str(job_uid, "job_uid");
            in.local_queue = to_i64(local_queue, "local_queue");
            in.queue_name = to_str(queue_name, "queue_name");
            std::lock_guard<std::mutex> lock(self.mutex);
            return self.engine.add_workload(in);
          },
          py::arg("namespace"), py::arg("name"), py::arg("uid"), py::arg("cluster_queue"), py::arg("priority"),
          py::arg("queue_ts"), py::arg("scheduling_hash"), py::arg("block"), py::arg("block_message"),
          py::arg("pod_sets"), py::arg("admission"), py::arg("job_uid") = "", py::arg("local_queue") = -1,
          py::arg("queue_name") = "")
      .def(
          "add_workloads",
          [](PyEngine& self, py::handle arrays) {
            StagedWorkloads rows = workload_rows(arrays);
            std::lock_guard<std::mutex> lock(self.mutex);
            return add_workload_rows(self.engine, rows, 0, static_cast<std::int64_t>(rows.n));
          },
          py::arg("arrays"),
          "Many pending workloads from one arrays object (kueue_fast.engine.native.WorkloadArrays' attributes); "
          "returns the first new wid.")
      .def(
          "stage_workloads",
          [](PyEngine& self, py::handle arrays) {
            StagedWorkloads rows = workload_rows(arrays);
            std::lock_guard<std::mutex> lock(self.mutex);
            self.staged = std::move(rows);
          },
          py::arg("arrays"), "Keep workload arrays (add_workloads' argument) for add_staged; replaces any staged before.")
      .def(
          "add_staged",
          [](PyEngine& self, py::handle lo_obj, py::handle hi_obj) {
            const std::int64_t lo = to_i64(lo_obj, "lo"), hi = to_i64(hi_obj, "hi");
            std::lock_guard<std::mutex> lock(self.mutex);
            const StagedWorkloads& st = self.staged;
            if (lo < 0 || hi < lo || hi > static_cast<std::int64_t>(st.n)) {
              bad("add_staged: rows [" + std::to_string(lo) + ", " + std::to_string(hi) + ") outside the " +
                  std::to_string(st.n) + " staged workloads");
            }
            return add_workload_rows(self.engine, st, lo, hi);
          },
          py::arg("lo"), py::arg("hi"), "add_workloads of the staged rows [lo, hi); returns the first new wid.")
      .def(
          "clear_staged",
          [](PyEngine& self) {
            std::lock_guard<std::mutex> lock(self.mutex);
            self.staged = StagedWorkloads{};
          },
          "Free the staged rows (~170 B per row with the default trace's shapes).")
      .def(
          "remove_workloads",
          [](PyEngine& self, py::handle wids) {
            I64Array a = int_array(wids, "wids");
            std::lock_guard<std::mutex> lock(self.mutex);
            self.engine.remove_workloads(a.data(), static_cast<std::size_t>(a.size()));
          },
          py::arg("wids"), "remove_workload for many (one requeue per cohort tree).")
      .def(
          "run_until_stable",
          [](PyEngine& self, py::handle now_obj, py::handle max_obj) {
            const std::int64_t now_ns = to_i64(now_obj, "now_ns"), max_cycles = to_i64(max_obj, "max_cycles");
            kueue_fast::StableRun r;
            {
              // Without the GIL, as run_cycle (see there).
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mutex);
              const kueue_fast::StableRun& run = self.engine.run_until_stable(now_ns, max_cycles);
              r.cycles = run.cycles;
              r.stable = run.stable;
              r.heads = run.heads;
              if (!run.admitted.empty() || !run.preempted.empty()) r = run;
            }
            return result_types().stable_run(r.cycles, r.stable, r.heads, to_numpy(r.admitted), to_numpy(r.admitted_cycle),
                                  to_numpy(r.preempted), to_numpy(r.preempted_cycle));
          },
          py::arg("now_ns"), py::arg("max_cycles"),
          "(cycles, stable, heads, admitted, admitted cycle offset, preempted, preempted cycle offset).")
      .def(
          "run_cycles",
          [](PyEngine& self, py::handle start_obj, py::handle step_obj, py::handle max_obj, py::handle until_obj,
             py::object attempted_mask_obj) {
            const std::int64_t start_ns = to_i64(start_obj, "start_ns"), step_ns = to_i64(step_obj, "step_ns");
            const std::int64_t max_cycles = to_i64(max_obj, "max_cycles");
            const bool until_stable = to_bool(until_obj, "until_stable");
            std::uint8_t* mask = nullptr;
            std::size_t n_mask = 0;
            py::array_t<std::uint8_t> mask_array;
            if (!attempted_mask_obj.is_none()) {
              if (!py::isinstance<py::array_t<std::uint8_t>>(attempted_mask_obj)) {
                bad("attempted_mask: expected a uint8 array");
              }
              mask_array = attempted_mask_obj.cast<py::array_t<std::uint8_t>>();
              if (mask_array.ndim() != 1 || !(mask_array.flags() & py::array::c_style) || !mask_array.writeable()) {
                bad("attempted_mask: expected a writeable, contiguous 1-D uint8 array");
              }
              mask = mask_array.mutable_data();
              n_mask = static_cast<std::size_t>(mask_array.size());
            }
            kueue_fast::CyclesRun r;
            {
              // Without the GIL, as run_cycle (see there); the mask is only read
              // and written here, under the engine's lock.
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mutex);
              r = self.engine.run_cycles(start_ns, step_ns, max_cycles, until_stable, mask, n_mask);
            }
            return result_types().cycles_run(r.cycles, r.stable, to_numpy(r.heads), to_numpy(r.newly_parked),
                                  to_numpy(r.admitted), to_numpy(r.admitted_cycle), to_numpy(r.preempted),
                                  to_numpy(r.preempted_cycle), to_numpy(r.preempted_admission_ns),
                                  to_numpy(r.attempted), to_numpy(r.attempted_cycle), to_numpy(r.parked),
                                  to_numpy(r.parked_cycle));
          },
          py::arg("start_ns"), py::arg("step_ns"), py::arg("max_cycles"), py::arg("until_stable"),
          py::arg("attempted_mask") = py::none(),
          "Cycle k (1, 2, ...) at start_ns + k * step_ns, at most max_cycles; with until_stable up to the "
          "first that admits, preempts and newly parks nothing: (cycles, stable, heads per cycle, newly "
          "parked per cycle, admitted, cycle offset, preempted, cycle offset, admission time each ended, "
          "attempted, cycle offset, parked, cycle offset). attempted_mask: only the wids whose flag is "
          "set are reported attempted, and their flag is cleared.")
      .def(
          "run_until_settled",
          [](PyEngine& self, py::handle now_obj, py::handle max_obj, py::object unexplained_obj) {
            const std::int64_t now_ns = to_i64(now_obj, "now_ns"), max_cycles = to_i64(max_obj, "max_cycles");
            std::uint8_t* unexplained = nullptr;
            std::size_t n_unexplained = 0;
            py::array_t<std::uint8_t> mask;
            if (!unexplained_obj.is_none()) {
              if (!py::isinstance<py::array_t<std::uint8_t>>(unexplained_obj)) bad("unexplained: expected a uint8 array");
              mask = unexplained_obj.cast<py::array_t<std::uint8_t>>();
              if (mask.ndim() != 1 || !(mask.flags() & py::array::c_style) || !mask.writeable()) {
                bad("unexplained: expected a writeable, contiguous 1-D uint8 array");
              }
              unexplained = mask.mutable_data();
              n_unexplained = static_cast<std::size_t>(mask.size());
            }
            kueue_fast::SettledRun r;
            {
              // Without the GIL, as run_cycle (see there); the mask is only read
              // and written by the engine, under its lock.
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mutex);
              r = self.engine.run_until_settled(now_ns, max_cycles, unexplained, n_unexplained);
            }
            return result_types().settled_run(r.cycles, r.stable, r.heads, to_numpy(r.admitted),
                                              to_numpy(r.admitted_cycle), to_numpy(r.preempted),
                                              to_numpy(r.preempted_cycle), to_numpy(r.attempted), r.run);
          },
          py::arg("now_ns"), py::arg("max_cycles"), py::arg("unexplained") = py::none(),
          "Cycles at now_ns until one admits nothing, evicts nothing new and newly parks nothing: "
          "(cycles, stable, heads, admitted, admitted cycle offset, newly evicted, their cycle offset, "
          "attempted, run). attempted: the wids the cycles tried and left pending; with unexplained (a "
          "uint8 array by wid), only those whose flag was set, and their flag is cleared. Cohort trees "
          "that settled are not run again until something changes them: cycles counts them, run "
          "the cycles run.")
      .def(
          "preempted_by",
          [](PyEngine& self, py::handle wids) {
            return per_wid<std::int32_t>(self, wids, [](const Engine& e, int w) {
              return e.workloads().preempted_by[static_cast<std::size_t>(w)];
            });
          },
          py::arg("wids"), "Per wid: the workload whose preemption last evicted it (-1: none).")
      .def(
          "messages",
          [](PyEngine& self, py::handle wids) {
            return per_wid<py::str>(self, wids, [](const Engine& e, int w) { return e.message(w); });
          },
          py::arg("wids"), "Per wid: its pending message (workload_view's \"message\").")
      .def(
          "reasons",
          [](PyEngine& self, py::handle wids) {
            return per_wid<py::str>(self, wids, [](const Engine& e, int w) { return e.reason(w); });
          },
          py::arg("wids"), "Per wid: its pending reason (workload_view's \"reason\").")
      .def(
          "queues",
          [](PyEngine& self, py::handle wids) {
            return per_wid<std::int32_t>(self, wids, [](const Engine& e, int w) {
              return e.workloads().cq[static_cast<std::size_t>(w)];
            });
          },
          py::arg("wids"), "Per wid: the ClusterQueue it queues in when pending (-1: none), as workload_spec's.")
      .def(
          "admitted_shapes",
          [](PyEngine& self, py::handle wids) {
            // The admissions of many workloads without a dict per workload: the
            // distinct (admitted ClusterQueue, pod sets) among them, each once.
            I64Array a = int_array(wids, "wids");
            std::lock_guard<std::mutex> lock(self.mutex);
            const Engine& e = self.engine;
            const py::ssize_t n = a.size();
            for (py::ssize_t i = 0; i < n; ++i) e.check_wid(a.data()[i]);
            const auto& w = e.workloads();
            py::array_t<std::int32_t> shape(n);
            auto* out = shape.mutable_data();
            std::unordered_map<std::vector<std::int64_t>, std::int32_t, I64VectorHash> ids;
            ids.reserve(1024);
            std::vector<const std::vector<std::int64_t>*> order;
            std::vector<std::int64_t> key;
            for (py::ssize_t i = 0; i < n; ++i) {
              const int wid = static_cast<int>(a.data()[i]);
              out[i] = -1;
              const std::int64_t n_ps = w.admitted_pod_sets(wid);
              if (w.status[wid] != kueue_fast::STATUS_ADMITTED || w.admitted_cq[wid] < 0 || n_ps == 0) continue;
              if (n_ps != static_cast<std::int64_t>(w.pod_sets_of[wid].n)) continue;
              // [cq, then per pod set: name, count, n, n x (resource, flavor)] (resources without flavor left out)
              key.assign(1, w.admitted_cq[wid]);
              std::uint32_t k = 0;
              std::size_t n_at = 0;
              w.for_each_admitted(
                  wid,
                  [&](std::int64_t count, std::int64_t) {
                    key.push_back(w.pod_sets[w.pod_sets_of[wid].first + k++].name);
                    key.push_back(count);
                    n_at = key.size();
                    key.push_back(0);
                  },
                  [&](const kueue_fast::AdmissionUse& u) {
                    if (u.fr < 0) return;
                    key.push_back(u.resource);
                    key.push_back(e.topology().fr_flavor(u.fr));
                    ++key[n_at];
                  });
              auto [it, added] = ids.try_emplace(key, static_cast<std::int32_t>(order.size()));
              if (added) order.push_back(&it->first);
              out[i] = it->second;
            }
            py::list shapes;
            for (const auto* k : order) {
              const std::int64_t* p = k->data();
              const std::int64_t cq = *p++;
              py::list pod_sets;
              while (p < k->data() + k->size()) {
                const std::string& name = w.pod_set_names[static_cast<std::size_t>(*p++)];
                const std::int64_t count = *p++;
                const std::int64_t n_res = *p++;
                py::list flavors;
                for (std::int64_t j = 0; j < n_res; ++j, p += 2) flavors.append(py::make_tuple(p[0], p[1]));
                pod_sets.append(py::make_tuple(name, count, flavors));
              }
              shapes.append(py::make_tuple(cq, pod_sets));
            }
            return result_types().admitted_shapes(shape, shapes);
          },
          py::arg("wids"),
          "(shape per wid, -1: not admitted to a ClusterQueue; shapes: [(admitted ClusterQueue, "
          "[(pod set name, count, [(resource id, flavor id)])])]), the flavors as workload_view's.")
      .def(
          "admitted_usage",
          [](PyEngine& self, py::handle wids) {
            I64Array a = int_array(wids, "wids");
            std::lock_guard<std::mutex> lock(self.mutex);
            const Engine& e = self.engine;
            const py::ssize_t n = a.size();
            const py::ssize_t n_fr = e.tree().n_fr();
            for (py::ssize_t i = 0; i < n; ++i) e.check_wid(a.data()[i]);
            py::array_t<std::int32_t> cq(n);
            py::array_t<std::int64_t> usage({n, n_fr});
            auto* c = cq.mutable_data();
            auto* u = usage.mutable_data();
            if (n * n_fr > 0) std::memset(u, 0, static_cast<std::size_t>(n * n_fr) * sizeof(std::int64_t));
            const auto& w = e.workloads();
            for (py::ssize_t i = 0; i < n; ++i) {
              const int wid = static_cast<int>(a.data()[i]);
              // The reference's record: ClusterQueue and usage while admitted, else -1 and nothing.
              const bool held = w.status[wid] == kueue_fast::STATUS_ADMITTED && w.admitted_cq[wid] >= 0;
              c[i] = held ? w.admitted_cq[wid] : -1;
              if (held) e.for_each_fr_usage(wid, [&](int fr, Amount v) { u[i * n_fr + fr] = v; });
            }
            return result_types().admitted_usage(cq, usage);
          },
          py::arg("wids"), "(admitted ClusterQueue or -1, usage per flavor-resource) of each wid.")
      .def(
          "eviction_reasons",
          [](PyEngine& self, py::handle wids) {
            return per_wid<std::int8_t>(self, wids,
                                        [](const Engine& e, int w) { return e.eviction_reason_code(w); });
          },
          py::arg("wids"),
          "Per wid: 0 InClusterQueue, 1 InCohortReclamation, 2 InCohortFairSharing, "
          "3 InCohortReclaimWhileBorrowing, 4 any other reason (or none).")
      .def("remove_workload",
           [](PyEngine& self, py::handle wid) {
             std::int64_t w = to_i64(wid, "workload id");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.remove_workload(static_cast<int>(w));
           })
      .def("release_eviction",
           [](PyEngine& self, py::handle wid) {
             std::int64_t w = to_i64(wid, "workload id");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.release_eviction(static_cast<int>(w));
           })
      .def("hold",
           [](PyEngine& self, py::handle wid, py::handle until_obj, py::handle queue_ts_obj) {
             std::int64_t w = to_i64(wid, "workload id");
             const std::int64_t until_ns = to_i64(until_obj, "until_ns"), queue_ts = to_i64(queue_ts_obj, "queue_ts");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.hold(static_cast<int>(w), until_ns, queue_ts);
           })
      .def("end_holds",
           [](PyEngine& self, py::handle now_obj) {
             const std::int64_t now_ns = to_i64(now_obj, "now_ns");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.end_holds(now_ns);
           })
      .def("set_pods_ready",
           [](PyEngine& self, py::handle wid, py::handle ready_obj) {
             std::int64_t w = to_i64(wid, "workload id");
             const bool ready = to_bool(ready_obj, "ready");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.set_pods_ready(static_cast<int>(w), ready);
           })
      .def("evict",
           [](PyEngine& self, py::handle wid, py::handle reason, py::handle message) {
             std::int64_t w = to_i64(wid, "workload id");
             std::string r = to_str(reason, "reason"), msg = to_str(message, "message");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.evict(static_cast<int>(w), r, msg);
           })
      .def("evict_after_cycle",
           [](PyEngine& self, py::handle wid, py::handle reason, py::handle message, py::handle queue_ts_obj,
              py::handle requeue_obj) {
             std::int64_t w = to_i64(wid, "workload id");
             std::string r = to_str(reason, "reason"), msg = to_str(message, "message");
             const std::int64_t queue_ts_ns = to_i64(queue_ts_obj, "queue_ts_ns");
             const bool requeue = to_bool(requeue_obj, "requeue");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.evict_after_cycle(static_cast<int>(w), r, msg, queue_ts_ns, requeue);
           })
      .def(
          "run_cycle",
          [](PyEngine& self, py::handle now_obj) {
            const std::int64_t now_ns = to_i64(now_obj, "now_ns");
            CycleReport r;
            {
              // Safe without the GIL: the engine touches no Python object, the
              // lock keeps other threads out of the engine, and the numpy views
              // only read memory that is never reallocated (a reader on another
              // thread during the cycle sees numbers mid-update, as with any
              // shared array).
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mutex);
              r = self.engine.run_cycle(now_ns);
            }
            return result_types().cycle(r.cycle, to_numpy(r.admitted), to_numpy(r.preempted), r.newly_parked, r.heads,
                                  to_numpy(r.attempted), to_numpy(r.parked));
          },
          py::arg("now_ns"))
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
           })
      .def("workload_view",
           [](PyEngine& self, py::handle wid_obj) {
             std::int64_t wid64 = to_i64(wid_obj, "workload id");
             std::lock_guard<std::mutex> lock(self.mutex);
             const Engine& e = self.engine;
             e.check_wid(wid64);
             const int wid = static_cast<int>(wid64);
             const auto& w = e.workloads();
             py::list pod_sets, resource_usage;
             py::dict flavors, usage;
             e.workloads().for_each_admitted(
                 wid,
                 [&](std::int64_t count, std::int64_t) {
                   flavors = py::dict();
                   usage = py::dict();
                   pod_sets.append(py::make_tuple(count, flavors));
                   resource_usage.append(usage);
                 },
                 [&](const kueue_fast::AdmissionUse& u) {
                   if (u.fr >= 0) flavors[py::int_(u.resource)] = py::int_(e.topology().fr_flavor(u.fr));
                   usage[py::int_(u.resource)] = py::int_(u.amount);
                 });
             py::dict d;
             d["state"] = state_name(e.state(wid));
             d["admitted_cq"] = w.admitted_cq[wid];
             d["admission_time"] = w.admission_time[wid];
             d["pod_sets"] = pod_sets;
             d["resource_usage"] = resource_usage;
             d["reason"] = e.reason(wid);
             d["message"] = e.message(wid);
             d["eviction_reason"] = e.eviction_reason(wid);
             d["eviction_message"] = e.eviction_message(wid);
             d["preempted_by"] = w.preempted_by[wid];
             d["holds_quota"] = w.status[wid] == kueue_fast::STATUS_ADMITTED;
             // Topology Aware Scheduling: the engine's placements per admitted pod set (None: the input's)
             const kueue_fast::TasState* tas = e.tas();
             if (tas != nullptr && tas->placed_by_engine(wid)) {
               py::list topology;
               const auto first = static_cast<std::int32_t>(w.pod_sets_of[wid].first);
               for (py::ssize_t i = 0; i < py::len(pod_sets); ++i) {
                 py::list leaves;
                 std::int32_t flavor = -1;
                 for (const kueue_fast::TasUse& u : tas->uses(wid)) {
                   if (u.row - first != i) continue;
                   flavor = u.flavor;
                   if (u.leaf >= 0) leaves.append(py::make_tuple(u.leaf, u.count));  // (-1: no pods placed)
                 }
                 topology.append(flavor < 0 ? py::object(py::none()) : py::object(py::make_tuple(flavor, leaves)));
               }
               d["topology"] = topology;
             } else {
               d["topology"] = py::none();
             }
             return d;
           })
      .def("workload_spec",
           [](PyEngine& self, py::handle wid_obj) {
             std::int64_t wid64 = to_i64(wid_obj, "workload id");
             std::lock_guard<std::mutex> lock(self.mutex);
             const Engine& e = self.engine;
             e.check_wid(wid64);
             const int wid = static_cast<int>(wid64);
             const auto& w = e.workloads();
             py::list pod_sets;
             for (std::uint32_t i = 0; i < w.pod_sets_of[wid].n; ++i) {
               std::uint32_t g = w.pod_sets_of[wid].first + i;
               const auto& row = w.pod_sets[g];
               py::list reqs;
               for (std::uint32_t k = 0; k < row.requests.n; ++k) {
                 const auto& rq = w.requests[row.requests.first + k];
                 reqs.append(py::make_tuple(rq.resource, rq.amount));
               }
               py::object min_count = row.min_count < 0 ? py::object(py::none()) : py::object(py::int_(row.min_count));
               pod_sets.append(py::make_tuple(w.pod_set_names[row.name], row.count, reqs, min_count, row.flavor_class));
             }
             std::string block_message = w.block_message[wid] >= 0 ? w.strings[w.block_message[wid]] : "";
             return result_types().workload_spec(std::string(w.ns(wid)), std::string(w.name(wid)), std::string(w.uid(wid)), w.cq[wid],
                                   w.priority[wid], w.queue_ts[wid], w.hash[wid], pod_sets, w.block[wid], block_message,
                                   w.local_queue[wid]);
           })
      .def("afs_ledger_state",
           [](PyEngine& self) {
             std::lock_guard<std::mutex> lock(self.mutex);
             const Engine& e = self.engine;
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
           "Seed ledger entries (history and LastUpdate), as the reference's restore_afs_ledger.")
      .def("queue_state",
           [](PyEngine& self, py::handle cq_obj) {
             std::int64_t cq = to_i64(cq_obj, "cluster_queue");
             std::lock_guard<std::mutex> lock(self.mutex);
             const Engine& e = self.engine;
             if (cq < 0 || cq >= e.topology().n_cq()) bad("unknown cluster_queue " + std::to_string(cq));
             const auto& w = e.workloads();
             py::list active, parked;
             for (int wid = 0; wid < e.n_workloads(); ++wid) {
               if (w.cq[wid] != cq) continue;
               if (w.queue_active[wid]) active.append(wid);
               if (w.inadmissible[wid]) parked.append(wid);
             }
             const auto& q = e.queue(static_cast<int>(cq));
             return result_types().queue_state(active, parked, q.sticky(), q.pop_cycle(), q.queue_inadmissible_cycle());
           },
           "(active wids, inadmissible wids, sticky, pop cycle, requeue cycle) of a ClusterQueue (for tests).")
      .def("decisions",
           [](PyEngine& self) {
             std::lock_guard<std::mutex> lock(self.mutex);
             const Engine& e = self.engine;
             const auto& w = e.workloads();
             const py::ssize_t n = e.n_workloads();
             py::array_t<std::int8_t> state(n);
             py::array_t<std::int32_t> cq(n);
             py::array_t<std::int64_t> time(n);
             auto* s = state.mutable_data();
             for (py::ssize_t i = 0; i < n; ++i) s[i] = e.state(static_cast<int>(i));
             if (n > 0) {
               std::memcpy(cq.mutable_data(), w.admitted_cq.data(), static_cast<std::size_t>(n) * sizeof(std::int32_t));
               std::memcpy(time.mutable_data(), w.admission_time.data(), static_cast<std::size_t>(n) * sizeof(std::int64_t));
             }
             return result_types().decisions(state, cq, time);
           })
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
      .def_property_readonly("lending_limit", [](py::object self_obj) {
        PyEngine& self = self_obj.cast<PyEngine&>();
        const auto& t = self.engine.tree();
        return tree_view(self_obj, t.lending_limit_table(), t.n_nodes(), t.n_fr());
      });
}

}  // namespace kueue_fast_bindings
