// kueue_fast._core.SimLoop: the simulator's native event loop
// (csrc sim_loop.hpp) over a kueue_fast._core.Engine, writing the
// simulator's record arrays in place (kueue_fast/simulate/native_event_loop.py
// drives it).
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <kueue_fast/sim_loop.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

namespace {

using kueue_fast::SimLoop;

// The loop, the engine it drives and the arrays it writes (kept alive).
struct PySimLoop {
  py::object engine_obj;
  PyEngine* engine = nullptr;
  std::vector<py::buffer> arrays;
  std::unique_ptr<SimLoop> loop;
};

// A buffer of `n` items of `itemsize` bytes, contiguous (and writeable when
// asked): its first item.
template <class T>
T* items(PySimLoop& self, const py::dict& arrays, const char* name, std::size_t n, bool writeable) {
  if (!arrays.contains(name)) bad(std::string("SimLoop: missing array ") + name);
  py::buffer buf = py::reinterpret_borrow<py::buffer>(arrays[name]);
  py::buffer_info info = buf.request(writeable);
  if (info.itemsize != static_cast<py::ssize_t>(sizeof(T)) || info.ndim < 1 ||
      info.size != static_cast<py::ssize_t>(n) || info.strides.back() != info.itemsize) {
    bad(std::string("SimLoop: ") + name + ": expected " + std::to_string(n) + " contiguous items of " +
        std::to_string(sizeof(T)) + " bytes");
  }
  if (info.ndim == 2 && info.strides[0] != info.shape[1] * info.itemsize) {
    bad(std::string("SimLoop: ") + name + ": expected a C-contiguous array");
  }
  self.arrays.push_back(buf);
  return static_cast<T*>(info.ptr);
}

std::int64_t param(const py::dict& d, const char* name) {
  if (!d.contains(name)) bad(std::string("SimLoop: missing parameter ") + name);
  return d[name].cast<std::int64_t>();
}

}  // namespace

void register_sim(py::module_& m) {
  py::class_<PySimLoop>(m, "SimLoop", "The simulator's event loop over a native engine (simulate/native_event_loop.py).")
      .def(py::init([](py::object engine_obj, const py::dict& arrays, const py::dict& params) {
             auto self = std::make_unique<PySimLoop>();
             self->engine_obj = engine_obj;
             self->engine = &engine_obj.cast<PyEngine&>();
             kueue_fast::Engine& engine = self->engine->engine;
             kueue_fast::SimRecords r;
             r.total = static_cast<std::size_t>(param(params, "total"));
             r.manifest = param(params, "manifest");
             r.n_rows = static_cast<std::size_t>(param(params, "rows"));
             if (r.manifest < 0 || r.manifest + static_cast<std::int64_t>(r.n_rows) != static_cast<std::int64_t>(r.total)) {
               bad("SimLoop: total must be manifest + rows");
             }
             if (static_cast<std::int64_t>(engine.n_workloads()) < r.manifest) bad("SimLoop: the manifest's workloads are not in the engine");
             const std::size_t n = r.total, n_fr = static_cast<std::size_t>(engine.tree().n_fr());
             const std::size_t n_cq = static_cast<std::size_t>(engine.topology().n_cq());
             PySimLoop& s = *self;
             r.state = items<std::int8_t>(s, arrays, "state", n, true);
             r.adm_cq = items<std::int64_t>(s, arrays, "adm_cq", n, true);
             r.n_adm = items<std::int64_t>(s, arrays, "n_adm", n, true);
             r.n_evi = items<std::int64_t>(s, arrays, "n_evi", n, true);
             r.adm_at = items<std::int64_t>(s, arrays, "adm_at", n * kueue_fast::kSimTimesKept, true);
             r.evi_at = items<std::int64_t>(s, arrays, "evi_at", n * kueue_fast::kSimTimesKept, true);
             r.last_adm = items<std::int64_t>(s, arrays, "last_adm", n, true);
             r.last_evi = items<std::int64_t>(s, arrays, "last_evi", n, true);
             r.fin_at = items<std::int64_t>(s, arrays, "fin_at", n, true);
             r.wait = items<std::int64_t>(s, arrays, "wait", n, true);
             r.enq = items<std::int64_t>(s, arrays, "enq", n, true);
             r.epoch = items<std::int64_t>(s, arrays, "epoch", n, true);
             r.preempted_by = items<std::int64_t>(s, arrays, "preempted_by", n, true);
             r.preempting = items<std::int64_t>(s, arrays, "preempting", n, true);
             r.lost = items<std::int64_t>(s, arrays, "lost", n, true);
             r.ever_admitted = items<std::int8_t>(s, arrays, "ever_admitted", n, true);
             r.usage = items<std::int64_t>(s, arrays, "usage", n * n_fr, true);
             r.unexplained = items<std::uint8_t>(s, arrays, "unexplained", n, true);
             r.pre_per_cq = items<std::int64_t>(s, arrays, "pre_per_cq", n_cq, true);
             r.lost_per_cq = items<double>(s, arrays, "lost_per_cq", n_cq, true);
             r.queue_cq = items<std::int64_t>(s, arrays, "queue_cq", n, false);
             r.dur = items<std::int64_t>(s, arrays, "dur", n, false);
             r.arrival = items<std::int64_t>(s, arrays, "arrival", r.n_rows, false);
             for (std::size_t w = 0; w < n; ++w) {
               if (r.queue_cq[w] < -1 || r.queue_cq[w] >= static_cast<std::int64_t>(n_cq)) bad("SimLoop: queue_cq out of range");
             }
             kueue_fast::SimParams p;
             p.start_ns = param(params, "start_ns");
             p.end_ns = param(params, "end_ns");
             p.drain_stop = param(params, "drain_stop");
             p.termination_delay_ns = param(params, "termination_delay_ns");
             p.max_cycles = param(params, "max_cycles");
             p.instant_slice = param(params, "instant_slice");
             p.start_instant = param(params, "start_instant") != 0;
             p.unsettled_kept = static_cast<std::size_t>(param(params, "unsettled_kept"));
             p.named = static_cast<std::size_t>(param(params, "named"));
             PyEngine* eng = self->engine;
             const std::int64_t first = r.manifest;
             auto add_rows = [eng, first](std::int64_t lo, std::int64_t hi) {
               if (hi > static_cast<std::int64_t>(eng->staged.n)) {
                 throw kueue_fast::EngineInputError("SimLoop: trace rows beyond the staged ones");
               }
               const int wid = add_workload_rows(eng->engine, eng->staged, lo, hi);
               if (wid != first + lo) throw kueue_fast::EngineInputError("SimLoop: the engine gave unexpected workload ids");
             };
             self->loop = std::make_unique<SimLoop>(engine, r, p, add_rows);
             return self;
           }),
           py::arg("engine"), py::arg("arrays"), py::arg("params"))
      .def(
          "resume_from",
          [](PySimLoop& self, std::int64_t arrived, const std::vector<std::array<std::int64_t, 3>>& finishes,
             std::int64_t running, std::int64_t admissions, std::int64_t preemptions) {
            std::lock_guard<std::mutex> lock(self.engine->mutex);
            self.loop->resume_from(arrived, finishes, running, admissions, preemptions);
          },
          py::arg("arrived"), py::arg("finishes"), py::arg("running"), py::arg("admissions"), py::arg("preemptions"))
      .def(
          "advance",
          [](PySimLoop& self, double budget_s, std::size_t log_rows) {
            int status;
            {
              // Without the GIL, as run_cycle: the engine and the loop's arrays
              // are only touched under the engine's lock.
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.engine->mutex);
              status = self.loop->advance(budget_s, log_rows);
            }
            return status;
          },
          py::arg("budget_s"), py::arg("log_rows"),
          "Run instants until the end (0), for about budget_s seconds (1) or until the log holds "
          "about log_rows rows (2).")
      .def("log",
           [](PySimLoop& self) {
             std::lock_guard<std::mutex> lock(self.engine->mutex);
             const kueue_fast::SimLog& l = self.loop->log();
             py::list messages;
             for (const std::string& s : l.messages) messages.append(py::str(s));
             return py::make_tuple(to_numpy(l.op), to_numpy(l.t), to_numpy(l.rows), to_numpy(l.key), to_numpy(l.usage),
                                   to_numpy(l.explained_wid), to_numpy(l.explained_msg), messages);
           },
           "(op, t, rows per op, key per row, usage rows, explained wids, their message, messages) of the last advance.")
      .def("pairs",
           [](PySimLoop& self) {
             std::lock_guard<std::mutex> lock(self.engine->mutex);
             py::list out;
             for (const auto& [k, c] : self.loop->pairs()) out.append(py::make_tuple(py::make_tuple(k[0], k[1], k[2]), c));
             return out;
           })
      .def("unsettled",
           [](PySimLoop& self) {
             std::lock_guard<std::mutex> lock(self.engine->mutex);
             py::list out;
             for (const auto& u : self.loop->unsettled_kept()) {
               py::list pairs;
               for (const auto& [k, c] : u.pairs) pairs.append(py::make_tuple(py::make_tuple(k[0], k[1], k[2]), c));
               out.append(py::make_tuple(u.t_ns, u.cycles, u.admissions, u.preemptions, pairs, u.victims, u.preemptors));
             }
             return out;
           })
      .def("counters", [](PySimLoop& self) {
        std::lock_guard<std::mutex> lock(self.engine->mutex);
        const SimLoop& l = *self.loop;
        py::dict d;
        d["arrived"] = l.arrived;
        d["running"] = l.running;
        d["admissions"] = l.admissions;
        d["preemptions"] = l.preemptions;
        d["instants"] = l.instants;
        d["cycles"] = l.cycles;
        d["cycles_run"] = l.cycles_run;
        d["unsettled"] = l.unsettled;
        d["last_t"] = l.last_t;
        d["final_t"] = l.final_t;
        d["now"] = l.now;
        d["instant_cycles"] = l.instant_cycles;
        d["drain_limited"] = l.drain_limited;
        d["schedule_s"] = l.schedule_s;
        return d;
      });
}

}  // namespace kueue_fast_bindings
