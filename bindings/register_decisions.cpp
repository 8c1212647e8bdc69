// kueue_fast._core.Engine's decisions: per wid (states, reasons, messages,
// admitted shapes and usage, eviction reasons), one workload's view and spec,
// one ClusterQueue's queue (py_engine.hpp).
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <pybind11/numpy.h>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

using kueue_fast::Amount;
using kueue_fast::Engine;

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

}  // namespace

// Over 80 lines: one pybind11 class chain of short per-method lambdas.
void register_decisions(EngineClass& cls) {
  cls
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
           });
}

}  // namespace kueue_fast_bindings
