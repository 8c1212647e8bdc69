// kueue_fast._core.Engine's workloads in and out: one (add_workload), many
// from arrays (add_workloads, stage_workloads / add_staged), removed, held,
// evicted (py_engine.hpp).
#include <cstdint>
#include <mutex>
#include <string>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

using kueue_fast::WorkloadInput;

// Over 80 lines: one pybind11 class chain of short per-method lambdas.
void register_workloads(EngineClass& cls) {
  cls
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
           });
}

}  // namespace kueue_fast_bindings
