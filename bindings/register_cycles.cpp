// kueue_fast._core.Engine's scheduling cycles: run_cycle, run_until_stable,
// run_cycles and run_until_settled, each without the GIL under the engine's
// lock (py_engine.hpp).
#include <cstdint>
#include <mutex>

#include <pybind11/numpy.h>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"
#include "convert.hpp"
#include "py_engine.hpp"

namespace kueue_fast_bindings {

using kueue_fast::CycleReport;

// Over 80 lines: one pybind11 class chain of short per-method lambdas.
void register_cycles(EngineClass& cls) {
  cls
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
          "the cycles run.");
}

}  // namespace kueue_fast_bindings
