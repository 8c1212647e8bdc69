// kueue_fast._core.Engine: the native engine (kueue_fast/_native.py wraps it
// with the reference engine's Python interface).
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <kueue_fast/scheduler.hpp>

#include "common.hpp"

namespace kueue_fast_bindings {

using kueue_fast::Amount;
using kueue_fast::CycleReport;
using kueue_fast::Engine;
using kueue_fast::EngineInputError;
using kueue_fast::TopologySpec;
using kueue_fast::WorkloadInput;

namespace {

// The engine and the lock that serialises every call into it. run_cycle
// releases the GIL while it holds the lock; the other methods take the lock
// with the GIL held. No call needs the GIL while holding the lock, so the two
// never wait on each other in opposite orders.
// Workload arrays handed over once (stage_workloads), added later by row
// ranges (add_staged): the simulator adds each arrival instant's rows
// without building and converting a dozen array slices per call.
struct StagedWorkloads {
  std::vector<std::int64_t> cq, prio, ts, hash, pso, psc, psm, psf, rqo, rqr, rqa, psn, blk, blk_msg, lq;
  std::vector<std::string> namespaces, names, uids, pod_set_names, block_messages;
  bool has_psn = false, has_block = false;
  std::size_t n = 0;
};

struct PyEngine {
  std::mutex mutex;
  Engine engine;
  StagedWorkloads staged;
  PyEngine(TopologySpec spec, bool release_evictions) : engine(std::move(spec), release_evictions) {}
};

[[noreturn]] void bad(const std::string& what) { throw EngineInputError(what); }

// An integer (int or anything with __index__, not float) as int64.
std::int64_t to_i64(py::handle h, const char* what) {
  if (h.is_none() || PyFloat_Check(h.ptr())) bad(std::string(what) + ": expected an integer");
  PyObject* idx = PyNumber_Index(h.ptr());
  if (idx == nullptr) {
    PyErr_Clear();
    bad(std::string(what) + ": expected an integer");
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
  Py_DECREF(idx);
  if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    bad(std::string(what) + ": integer out of the int64 range");
  }
  return static_cast<std::int64_t>(v);
}

std::uint64_t to_u64(py::handle h, const char* what) {
  if (h.is_none() || PyFloat_Check(h.ptr())) bad(std::string(what) + ": expected an integer");
  PyObject* idx = PyNumber_Index(h.ptr());
  if (idx == nullptr) {
    PyErr_Clear();
    bad(std::string(what) + ": expected an integer");
  }
  unsigned long long v = PyLong_AsUnsignedLongLong(idx);
  Py_DECREF(idx);
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    bad(std::string(what) + ": integer out of the uint64 range");
  }
  return static_cast<std::uint64_t>(v);
}

std::string to_str(py::handle h, const char* what) {
  if (!PyUnicode_Check(h.ptr())) bad(std::string(what) + ": expected a str");
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(h.ptr(), &n);
  if (s == nullptr) {
    PyErr_Clear();
    bad(std::string(what) + ": not encodable as UTF-8");
  }
  return std::string(s, static_cast<std::size_t>(n));
}

py::sequence to_seq(py::handle h, const char* what) {
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr())) {
    bad(std::string(what) + ": expected a sequence");
  }
  return py::reinterpret_borrow<py::sequence>(h);
}

py::object item(const py::dict& d, const char* key) {
  if (!d.contains(key)) bad(std::string("topology: missing ") + key);
  return d[key];
}

}  // namespace

// A Python int (not float) of the ledger's 128-bit range (nanos).
kueue_fast::Nanos to_nanos(py::handle h, const char* what) {
  if (h.is_none() || PyFloat_Check(h.ptr()) || PyBool_Check(h.ptr())) bad(std::string(what) + ": expected an integer");
  PyObject* idx = PyNumber_Index(h.ptr());
  if (idx == nullptr) {
    PyErr_Clear();
    bad(std::string(what) + ": expected an integer");
  }
  py::str text = py::reinterpret_steal<py::str>(PyObject_Str(idx));
  Py_DECREF(idx);
  return kueue_fast::nanos_from_string(text.cast<std::string>());
}

py::int_ from_nanos(kueue_fast::Nanos v) {
  const std::string text = kueue_fast::nanos_to_string(v);
  return py::reinterpret_steal<py::int_>(PyLong_FromString(text.c_str(), nullptr, 10));
}

namespace {

// [(resource id, nanos)] by increasing resource id.
kueue_fast::Amounts amounts_from(py::handle seq, const char* what) {
  kueue_fast::Amounts out;
  for (auto x : to_seq(seq, what)) {
    py::sequence p = to_seq(x, what);
    if (p.size() != 2) bad(std::string(what) + ": expected (resource, nanos)");
    out.push_back({static_cast<std::int32_t>(to_i64(p[0], what)), to_nanos(p[1], what)});
  }
  return out;
}

py::list amounts_to(const kueue_fast::Amounts& a) {
  py::list out;
  for (const auto& x : a) out.append(py::make_tuple(x.resource, from_nanos(x.value)));
  return out;
}

TopologySpec topology_from(const py::dict& d) {
  TopologySpec t;
  for (auto x : to_seq(item(d, "resource_names"), "resource_names")) t.resource_names.push_back(to_str(x, "resource name"));
  for (auto x : to_seq(item(d, "flavor_names"), "flavor_names")) t.flavor_names.push_back(to_str(x, "flavor name"));
  for (auto x : to_seq(item(d, "node_names"), "node_names")) t.node_names.push_back(to_str(x, "node name"));
  for (auto x : to_seq(item(d, "fr_pairs"), "fr_pairs")) {
    py::sequence p = to_seq(x, "fr pair");
    if (p.size() != 2) bad("fr pair: expected (flavor, resource)");
    t.fr_pairs.emplace_back(static_cast<std::int32_t>(to_i64(p[0], "fr flavor")),
                            static_cast<std::int32_t>(to_i64(p[1], "fr resource")));
  }
  t.n_cq = static_cast<std::int32_t>(to_i64(item(d, "n_cq"), "n_cq"));
  for (auto x : to_seq(item(d, "node_parent"), "node_parent")) t.node_parent.push_back(static_cast<std::int32_t>(to_i64(x, "parent")));
  for (auto row : to_seq(item(d, "quotas"), "quotas")) {
    std::vector<kueue_fast::QuotaEntry> entries;
    for (auto q : to_seq(row, "quota row")) {
      py::sequence e = to_seq(q, "quota entry");
      if (e.size() != 4) bad("quota entry: expected (fr, nominal, borrowing_limit, lending_limit)");
      entries.push_back({static_cast<std::int32_t>(to_i64(e[0], "quota fr")), to_i64(e[1], "nominal"),
                         to_i64(e[2], "borrowing_limit"), to_i64(e[3], "lending_limit")});
    }
    t.quotas.push_back(std::move(entries));
  }
  for (auto x : to_seq(item(d, "fair_weight"), "fair_weight")) t.fair_weight.push_back(x.cast<double>());
  for (auto x : to_seq(item(d, "cluster_queues"), "cluster_queues")) {
    py::dict c = py::reinterpret_borrow<py::dict>(x);
    kueue_fast::ClusterQueueSpec s;
    s.name = to_str(item(c, "name"), "name");
    for (auto g : to_seq(item(c, "groups"), "groups")) {
      py::sequence gs = to_seq(g, "group");
      if (gs.size() != 2) bad("group: expected (resources, flavors)");
      kueue_fast::ResourceGroupSpec rg;
      for (auto r : to_seq(gs[0], "group resources")) rg.resources.push_back(static_cast<std::int32_t>(to_i64(r, "resource")));
      for (auto f : to_seq(gs[1], "group flavors")) rg.flavors.push_back(static_cast<std::int32_t>(to_i64(f, "flavor")));
      s.groups.push_back(std::move(rg));
    }
    auto code = [&](const char* key) { return static_cast<std::uint8_t>(to_i64(item(c, key), key)); };
    s.strategy = code("strategy");
    s.within_cluster_queue = code("within_cluster_queue");
    s.reclaim_within_cohort = code("reclaim_within_cohort");
    s.borrow_within_cohort = code("borrow_within_cohort");
    py::object thr = item(c, "max_priority_threshold");
    s.has_max_priority_threshold = !thr.is_none();
    s.max_priority_threshold = thr.is_none() ? 0 : to_i64(thr, "max_priority_threshold");
    s.when_can_borrow = code("when_can_borrow");
    s.when_can_preempt = code("when_can_preempt");
    s.preference = code("preference");
    s.active = item(c, "active").cast<bool>();
    s.inactive_message = to_str(item(c, "inactive_message"), "inactive_message");
    s.fair_weight = item(c, "fair_weight").cast<double>();
    if (c.contains("admission_fair_sharing")) s.admission_fair_sharing = c["admission_fair_sharing"].cast<bool>();
    t.cluster_queues.push_back(std::move(s));
  }
  // Admission fair sharing (optional keys: a topology without them has none).
  if (d.contains("local_queues")) {
    for (auto x : to_seq(d["local_queues"], "local_queues")) {
      py::sequence q = to_seq(x, "local queue");
      if (q.size() != 5) bad("local queue: expected (name, cluster_queue, fair_weight, stopped, consumed)");
      kueue_fast::LocalQueueSpec lq;
      lq.name = to_str(q[0], "local queue name");
      lq.cluster_queue = static_cast<std::int32_t>(to_i64(q[1], "local queue cluster_queue"));
      lq.fair_weight = q[2].cast<double>();
      lq.stopped = q[3].cast<bool>();
      lq.consumed = amounts_from(q[4], "local queue consumed");
      t.local_queues.push_back(std::move(lq));
    }
  }
  if (d.contains("admission_fair_sharing") && !d["admission_fair_sharing"].is_none()) {
    py::dict a = py::reinterpret_borrow<py::dict>(d["admission_fair_sharing"]);
    t.has_admission_fair_sharing = true;
    t.admission_fair_sharing.usage_half_life_s = item(a, "usage_half_life_s").cast<double>();
    t.admission_fair_sharing.usage_sampling_interval_s = item(a, "usage_sampling_interval_s").cast<double>();
    for (auto x : to_seq(item(a, "resource_weights"), "resource_weights")) {
      t.admission_fair_sharing.resource_weights.push_back(x.cast<double>());
    }
  }
  t.fair_sharing = item(d, "fair_sharing").cast<bool>();
  for (auto x : to_seq(item(d, "fair_strategies"), "fair_strategies")) {
    t.fair_strategies.push_back(static_cast<std::uint8_t>(to_i64(x, "fair strategy")));
  }
  if (d.contains("block_admission_for_pods_ready")) {
    t.block_admission_for_pods_ready = item(d, "block_admission_for_pods_ready").cast<bool>();
  }
  if (d.contains("gates")) {  // kueue_fast.features.FeatureGates, by attribute name
    py::dict g = py::reinterpret_borrow<py::dict>(d["gates"]);
    auto gate = [&](const char* key, bool& out) {
      if (g.contains(key)) out = g[key].cast<bool>();
    };
    kueue_fast::FeatureGates& f = t.gates;
    gate("partial_admission", f.partial_admission);
    gate("flavor_fungibility", f.flavor_fungibility);
    gate("flavor_fungibility_preserve_scan_progress", f.flavor_fungibility_preserve_scan_progress);
    gate("priority_sorting_within_cohort", f.priority_sorting_within_cohort);
    gate("fair_sharing_preempt_within_nominal", f.fair_sharing_preempt_within_nominal);
    gate("fair_sharing_prioritize_non_borrowing", f.fair_sharing_prioritize_non_borrowing);
    gate("fair_sharing_reevaluate_preemption_candidates", f.fair_sharing_reevaluate_preemption_candidates);
    gate("recompute_assignment_upon_preemption_targets_overlap",
         f.recompute_assignment_upon_preemption_targets_overlap);
    gate("scheduling_equivalence_hashing", f.scheduling_equivalence_hashing);
    gate("prioritize_preemptor_workloads", f.prioritize_preemptor_workloads);
  }
  return t;
}

WorkloadInput workload_from(py::handle ns, py::handle name, py::handle uid, py::handle cq, py::handle priority,
                            py::handle queue_ts, py::handle hash, py::handle block, py::handle block_message,
                            py::handle pod_sets, py::handle admission) {
  WorkloadInput in;
  in.ns = to_str(ns, "namespace");
  in.name = to_str(name, "name");
  in.uid = to_str(uid, "uid");
  in.cluster_queue = to_i64(cq, "cluster_queue");
  in.priority = to_i64(priority, "priority");
  in.queue_ts = to_i64(queue_ts, "queue_ts");
  in.scheduling_hash = to_u64(hash, "scheduling_hash");
  in.block = to_i64(block, "block");
  in.block_message = to_str(block_message, "block_message");
  for (auto ps : to_seq(pod_sets, "pod_sets")) {
    py::sequence p = to_seq(ps, "pod set");
    if (p.size() != 5) bad("pod set: expected (name, count, min_count, flavor_class, requests)");
    WorkloadInput::PodSet s;
    s.name = to_str(p[0], "pod set name");
    s.count = to_i64(p[1], "pod set count");
    s.min_count = p[2].is_none() ? -1 : to_i64(p[2], "pod set min_count");
    if (!p[2].is_none() && s.min_count < 0) bad("pod set min_count must be >= 0");
    s.flavor_class = to_i64(p[3], "flavor_class");
    for (auto rq : to_seq(p[4], "requests")) {
      py::sequence r = to_seq(rq, "request");
      if (r.size() != 2) bad("request: expected (resource, amount)");
      s.requests.emplace_back(to_i64(r[0], "request resource"), to_i64(r[1], "request amount"));
    }
    in.pod_sets.push_back(std::move(s));
  }
  if (!admission.is_none()) {
    py::sequence a = to_seq(admission, "admission");
    if (a.size() != 3) bad("admission: expected (cluster_queue, time_ns, pod_sets)");
    in.has_admission = true;
    in.admission_cq = to_i64(a[0], "admission cluster_queue");
    in.admission_time = to_i64(a[1], "admission time");
    for (auto ps : to_seq(a[2], "admission pod sets")) {
      py::sequence p = to_seq(ps, "admitted pod set");
      if (p.size() != 2) bad("admitted pod set: expected (count, use)");
      WorkloadInput::AdmittedPodSet s;
      s.count = to_i64(p[0], "admitted count");
      for (auto u : to_seq(p[1], "admitted use")) {
        py::sequence e = to_seq(u, "admitted use entry");
        if (e.size() != 3) bad("admitted use entry: expected (resource, flavor, amount)");
        s.use.emplace_back(to_i64(e[0], "admitted resource"), to_i64(e[1], "admitted flavor"),
                           to_i64(e[2], "admitted amount"));
      }
      in.admission.push_back(std::move(s));
    }
  }
  return in;
}

using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// A 1-D integer array as C-contiguous int64 (no copy when it already is one).
// Floats, bools, strings and objects are rejected: integers given as floats
// are an error, not a silent cast.
I64Array int_array(py::handle obj, const char* what, py::ssize_t expect = -1) {
  if (obj.is_none()) bad(std::string(what) + ": missing");
  py::array a = py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    bad(std::string(what) + ": not an array");
  }
  if (a.ndim() != 1) bad(std::string(what) + ": expected a 1-D array, got " + std::to_string(a.ndim()) + " dimensions");
  char kind = a.dtype().kind();
  if (a.size() > 0 && kind != 'i' && kind != 'u') {
    bad(std::string(what) + ": expected integers, got dtype " + py::str(a.dtype()).cast<std::string>());
  }
  if (kind == 'u' && a.itemsize() == 8 && a.size() > 0) {
    auto u = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(a);
    const std::uint64_t* p = u.data();
    for (py::ssize_t i = 0; i < u.size(); ++i) {
      if (p[i] > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        bad(std::string(what) + ": value above the int64 range");
      }
    }
  }
  I64Array r = a.size() == 0 ? I64Array(0) : I64Array::ensure(a);
  if (!r) {
    PyErr_Clear();
    bad(std::string(what) + ": cannot be read as int64");
  }
  if (expect >= 0 && r.size() != expect) {
    bad(std::string(what) + ": expected " + std::to_string(expect) + " entries, got " + std::to_string(r.size()));
  }
  return r;
}

std::vector<std::string> str_list(py::handle obj, const char* what, std::size_t expect) {
  if (obj.is_none()) bad(std::string(what) + ": missing");
  py::sequence s = to_seq(obj, what);
  if (static_cast<std::size_t>(s.size()) != expect) {
    bad(std::string(what) + ": expected " + std::to_string(expect) + " entries, got " + std::to_string(s.size()));
  }
  std::vector<std::string> out;
  out.reserve(expect);
  for (auto x : s) out.push_back(to_str(x, what));
  return out;
}

// A read-only, zero-copy (n_nodes, n_fr) view of one of the tree's tables
// (strided when the table lives in the tree's cells); `owner` (the Python
// engine) is its base and keeps the memory alive. The tables are sized once
// at construction and never reallocated.
py::array tree_view(py::handle owner, kueue_fast::QuotaTree::Table t, int n_nodes, int n_fr) {
  std::vector<py::ssize_t> shape{n_nodes, n_fr};
  const auto stride = static_cast<py::ssize_t>(t.stride);
  std::vector<py::ssize_t> strides{static_cast<py::ssize_t>(n_fr) * stride, stride};
  py::array a(py::dtype::of<std::int64_t>(), shape, strides, t.data, owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

const char* state_name(kueue_fast::ViewState s) {
  switch (s) {
    case kueue_fast::STATE_ADMITTED: return "admitted";
    case kueue_fast::STATE_EVICTED: return "evicted";
    case kueue_fast::STATE_FINISHED: return "finished";
    default: return "pending";
  }
}

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

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

}  // namespace

namespace {

// add_workloads' arguments, checked and copied (add_workloads and stage_workloads).
StagedWorkloads workload_rows(py::handle cluster_queue, py::handle priority, py::handle queue_ts,
                          py::handle scheduling_hash, py::handle pod_set_offsets, py::handle pod_set_count,
                          py::handle pod_set_min_count, py::handle pod_set_flavor_class, py::handle request_offsets,
                          py::handle request_resource, py::handle request_amount, py::handle namespaces, py::handle names,
                          py::handle uids, py::handle pod_set_name, py::handle pod_set_names, py::handle block,
                          py::handle block_message, py::handle block_messages, py::handle local_queue) {
  auto vec = [](const I64Array& a) { return std::vector<std::int64_t>(a.data(), a.data() + a.size()); };
  StagedWorkloads st;
  I64Array cq = int_array(cluster_queue, "cluster_queue");
  const py::ssize_t n = cq.size();
  st.n = static_cast<std::size_t>(n);
  st.cq = vec(cq);
  st.prio = vec(int_array(priority, "priority", n));
  st.ts = vec(int_array(queue_ts, "queue_ts", n));
  st.hash = vec(int_array(scheduling_hash, "scheduling_hash", n));
  st.pso = vec(int_array(pod_set_offsets, "pod_set_offsets", n + 1));
  st.psc = vec(int_array(pod_set_count, "pod_set_count"));
  const py::ssize_t n_ps = static_cast<py::ssize_t>(st.psc.size());
  st.psm = vec(int_array(pod_set_min_count, "pod_set_min_count", n_ps));
  st.psf = vec(int_array(pod_set_flavor_class, "pod_set_flavor_class", n_ps));
  st.rqo = vec(int_array(request_offsets, "request_offsets", n_ps + 1));
  st.rqr = vec(int_array(request_resource, "request_resource"));
  st.rqa = vec(int_array(request_amount, "request_amount", static_cast<py::ssize_t>(st.rqr.size())));
  // The offsets decide where a slice of rows starts: check them here
  // (Engine::add_workloads checks everything else on each slice).
  auto offsets_ok = [](const std::vector<std::int64_t>& o, std::size_t end) {
    if (o.front() != 0 || o.back() != static_cast<std::int64_t>(end)) return false;
    for (std::size_t i = 1; i < o.size(); ++i) {
      if (o[i] < o[i - 1]) return false;
    }
    return true;
  };
  if (!offsets_ok(st.pso, st.psc.size())) bad("pod_set_offsets must start at 0, not decrease and end at the number of pod sets");
  if (!offsets_ok(st.rqo, st.rqr.size())) bad("request_offsets must start at 0, not decrease and end at the number of requests");
  st.namespaces = str_list(namespaces, "namespaces", st.n);
  st.names = str_list(names, "names", st.n);
  if (!uids.is_none()) st.uids = str_list(uids, "uids", st.n);
  if (!pod_set_name.is_none()) {
    st.has_psn = true;
    st.psn = vec(int_array(pod_set_name, "pod_set_name", n_ps));
    if (pod_set_names.is_none()) bad("pod_set_name needs pod_set_names");
    for (auto x : to_seq(pod_set_names, "pod_set_names")) st.pod_set_names.push_back(to_str(x, "pod set name"));
  }
  if (!block.is_none()) {
    st.has_block = true;
    st.blk = vec(int_array(block, "block", n));
    st.blk_msg = vec(int_array(block_message, "block_message", n));
    if (!block_messages.is_none()) {
      for (auto x : to_seq(block_messages, "block_messages")) st.block_messages.push_back(to_str(x, "block message"));
    }
  }
  if (!local_queue.is_none()) st.lq = vec(int_array(local_queue, "local_queue", n));
  return st;
}

// Engine::add_workloads of rows [lo, hi) of `st` (bounds checked by the caller).
int add_workload_rows(Engine& engine, const StagedWorkloads& st, std::int64_t lo, std::int64_t hi) {
  const auto l = static_cast<std::size_t>(lo), h = static_cast<std::size_t>(hi);
  const auto p0 = static_cast<std::size_t>(st.pso[l]), p1 = static_cast<std::size_t>(st.pso[h]);
  const auto r0 = static_cast<std::size_t>(st.rqo[p0]), r1 = static_cast<std::size_t>(st.rqo[p1]);
  // offsets of the slice, rebased to 0
  std::vector<std::int64_t> pso(st.pso.begin() + static_cast<std::ptrdiff_t>(l),
                                st.pso.begin() + static_cast<std::ptrdiff_t>(h) + 1);
  for (auto& x : pso) x -= static_cast<std::int64_t>(p0);
  std::vector<std::int64_t> rqo(st.rqo.begin() + static_cast<std::ptrdiff_t>(p0),
                                st.rqo.begin() + static_cast<std::ptrdiff_t>(p1) + 1);
  for (auto& x : rqo) x -= static_cast<std::int64_t>(r0);
  kueue_fast::BulkWorkloads b;
  b.n = h - l;
  b.cluster_queue = st.cq.data() + l;
  b.priority = st.prio.data() + l;
  b.queue_ts = st.ts.data() + l;
  b.scheduling_hash = reinterpret_cast<const std::uint64_t*>(st.hash.data() + l);
  b.ps_offsets = pso.data();
  b.n_ps = p1 - p0;
  b.ps_count = st.psc.data() + p0;
  b.ps_min_count = st.psm.data() + p0;
  b.ps_flavor_class = st.psf.data() + p0;
  b.req_offsets = rqo.data();
  b.n_req = r1 - r0;
  b.req_resource = st.rqr.data() + r0;
  b.req_amount = st.rqa.data() + r0;
  b.namespaces.assign(st.namespaces.begin() + static_cast<std::ptrdiff_t>(l),
                      st.namespaces.begin() + static_cast<std::ptrdiff_t>(h));
  b.names.assign(st.names.begin() + static_cast<std::ptrdiff_t>(l), st.names.begin() + static_cast<std::ptrdiff_t>(h));
  if (!st.uids.empty()) {
    b.uids.assign(st.uids.begin() + static_cast<std::ptrdiff_t>(l), st.uids.begin() + static_cast<std::ptrdiff_t>(h));
  }
  if (st.has_psn) {
    b.ps_name = st.psn.data() + p0;
    b.pod_set_names = st.pod_set_names;
  }
  if (st.has_block) {
    b.block = st.blk.data() + l;
    b.block_message = st.blk_msg.data() + l;
    b.block_messages = st.block_messages;
  }
  if (!st.lq.empty()) b.local_queue = st.lq.data() + l;
  return engine.add_workloads(b);
}

}  // namespace

void register_engine(py::module_& m) {
  py::class_<PyEngine>(m, "Engine", "The native engine over one topology (see kueue_fast._native.NativeEngine).")
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
          [](PyEngine& self, py::handle cluster_queue, py::handle priority, py::handle queue_ts,
             py::handle scheduling_hash, py::handle pod_set_offsets, py::handle pod_set_count,
             py::handle pod_set_min_count, py::handle pod_set_flavor_class, py::handle request_offsets,
             py::handle request_resource, py::handle request_amount, py::handle namespaces, py::handle names,
             py::handle uids, py::handle pod_set_name, py::handle pod_set_names, py::handle block,
             py::handle block_message, py::handle block_messages, py::handle local_queue) {
            StagedWorkloads rows = workload_rows(cluster_queue, priority, queue_ts, scheduling_hash, pod_set_offsets, pod_set_count,
                                             pod_set_min_count, pod_set_flavor_class, request_offsets, request_resource,
                                             request_amount, namespaces, names, uids, pod_set_name, pod_set_names, block,
                                             block_message, block_messages, local_queue);
            std::lock_guard<std::mutex> lock(self.mutex);
            return add_workload_rows(self.engine, rows, 0, static_cast<std::int64_t>(rows.n));
          },
          py::arg("cluster_queue"), py::arg("priority"), py::arg("queue_ts"), py::arg("scheduling_hash"),
          py::arg("pod_set_offsets"), py::arg("pod_set_count"), py::arg("pod_set_min_count"),
          py::arg("pod_set_flavor_class"), py::arg("request_offsets"), py::arg("request_resource"),
          py::arg("request_amount"), py::arg("namespaces"), py::arg("names"), py::arg("uids") = py::none(),
          py::arg("pod_set_name") = py::none(), py::arg("pod_set_names") = py::none(), py::arg("block") = py::none(),
          py::arg("block_message") = py::none(), py::arg("block_messages") = py::none(),
          py::arg("local_queue") = py::none())
      .def(
          "stage_workloads",
          [](PyEngine& self, py::handle cluster_queue, py::handle priority, py::handle queue_ts,
             py::handle scheduling_hash, py::handle pod_set_offsets, py::handle pod_set_count,
             py::handle pod_set_min_count, py::handle pod_set_flavor_class, py::handle request_offsets,
             py::handle request_resource, py::handle request_amount, py::handle namespaces, py::handle names,
             py::handle uids, py::handle pod_set_name, py::handle pod_set_names, py::handle block,
             py::handle block_message, py::handle block_messages, py::handle local_queue) {
            StagedWorkloads rows = workload_rows(cluster_queue, priority, queue_ts, scheduling_hash, pod_set_offsets, pod_set_count,
                                             pod_set_min_count, pod_set_flavor_class, request_offsets, request_resource,
                                             request_amount, namespaces, names, uids, pod_set_name, pod_set_names, block,
                                             block_message, block_messages, local_queue);
            std::lock_guard<std::mutex> lock(self.mutex);
            self.staged = std::move(rows);
          },
          py::arg("cluster_queue"), py::arg("priority"), py::arg("queue_ts"), py::arg("scheduling_hash"),
          py::arg("pod_set_offsets"), py::arg("pod_set_count"), py::arg("pod_set_min_count"),
          py::arg("pod_set_flavor_class"), py::arg("request_offsets"), py::arg("request_resource"),
          py::arg("request_amount"), py::arg("namespaces"), py::arg("names"), py::arg("uids") = py::none(),
          py::arg("pod_set_name") = py::none(), py::arg("pod_set_names") = py::none(), py::arg("block") = py::none(),
          py::arg("block_message") = py::none(), py::arg("block_messages") = py::none(),
          py::arg("local_queue") = py::none(),
          "Keep workload arrays (add_workloads' arguments) for add_staged; replaces any staged before.")
      .def(
          "add_staged",
          [](PyEngine& self, std::int64_t lo, std::int64_t hi) {
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
          [](PyEngine& self, std::int64_t now_ns, std::int64_t max_cycles) {
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
            return py::make_tuple(r.cycles, r.stable, r.heads, to_numpy(r.admitted), to_numpy(r.admitted_cycle),
                                  to_numpy(r.preempted), to_numpy(r.preempted_cycle));
          },
          py::arg("now_ns"), py::arg("max_cycles"),
          "(cycles, stable, heads, admitted, admitted cycle offset, preempted, preempted cycle offset).")
      .def(
          "run_cycles",
          [](PyEngine& self, std::int64_t start_ns, std::int64_t step_ns, std::int64_t max_cycles, bool until_stable,
             py::object attempted_mask_obj) {
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
            return py::make_tuple(r.cycles, r.stable, to_numpy(r.heads), to_numpy(r.newly_parked),
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
          [](PyEngine& self, std::int64_t now_ns, std::int64_t max_cycles, py::object unexplained_obj) {
            // run_until_stable for an engine whose victims keep their quota
            // (release_evictions false): a preemptor waiting for its victims
            // re-issues their (ongoing) eviction every cycle, which changes
            // nothing, so only victims evicted by this very cycle count.
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
            std::int64_t cycles = 0, heads = 0;
            bool stable = false;
            std::vector<std::int32_t> adm, adm_cycle, pre, pre_cycle, attempted;
            {
              // Without the GIL, as run_cycle (see there); the mask is only read
              // and written here, under the engine's lock.
              py::gil_scoped_release release;
              std::lock_guard<std::mutex> lock(self.mutex);
              Engine& e = self.engine;
              const auto& w = e.workloads();
              while (cycles < max_cycles) {
                if (!e.has_heads()) {
                  stable = true;
                  break;
                }
                const CycleReport& r = e.run_cycle(now_ns);
                const auto offset = static_cast<std::int32_t>(cycles);
                ++cycles;
                heads += r.heads;
                adm.insert(adm.end(), r.admitted.begin(), r.admitted.end());
                adm_cycle.insert(adm_cycle.end(), r.admitted.size(), offset);
                std::size_t fresh = 0;
                for (std::int32_t v : r.preempted) {
                  if (w.evicted_cycle[static_cast<std::size_t>(v)] != r.cycle) continue;
                  pre.push_back(v);
                  pre_cycle.push_back(offset);
                  ++fresh;
                }
                for (std::int32_t a : r.attempted) {
                  const auto k = static_cast<std::size_t>(a);
                  if (unexplained == nullptr) {
                    attempted.push_back(a);
                  } else if (k < n_unexplained && unexplained[k]) {
                    unexplained[k] = 0;
                    attempted.push_back(a);
                  }
                }
                if (r.admitted.empty() && fresh == 0 && r.newly_parked == 0) {
                  stable = true;
                  break;
                }
              }
            }
            return py::make_tuple(cycles, stable, heads, to_numpy(adm), to_numpy(adm_cycle), to_numpy(pre),
                                  to_numpy(pre_cycle), to_numpy(attempted));
          },
          py::arg("now_ns"), py::arg("max_cycles"), py::arg("unexplained") = py::none(),
          "Cycles at now_ns until one admits nothing, evicts nothing new and newly parks nothing: "
          "(cycles, stable, heads, admitted, admitted cycle offset, newly evicted, their cycle offset, "
          "attempted). attempted: the wids the cycles tried and left pending; with unexplained (a "
          "uint8 array by wid), only those whose flag was set, and their flag is cleared.")
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
            std::map<std::vector<std::int64_t>, std::int32_t> ids;
            std::vector<const std::vector<std::int64_t>*> order;
            std::vector<std::int64_t> key;
            for (py::ssize_t i = 0; i < n; ++i) {
              const int wid = static_cast<int>(a.data()[i]);
              const auto& slot = w.adm[wid];
              out[i] = -1;
              if (w.status[wid] != kueue_fast::STATUS_ADMITTED || w.admitted_cq[wid] < 0 || slot.size == 0) continue;
              const std::int64_t* p = w.adm_pool.data() + slot.offset;
              const std::int64_t n_ps = *p++;
              if (n_ps != static_cast<std::int64_t>(w.pod_sets_of[wid].n)) continue;
              // [cq, then per pod set: name, count, n, n x (resource, flavor)] (resources without flavor left out)
              key.assign(1, w.admitted_cq[wid]);
              for (std::int64_t k = 0; k < n_ps; ++k) {
                key.push_back(w.pod_sets[w.pod_sets_of[wid].first + static_cast<std::uint32_t>(k)].name);
                key.push_back(*p++);  // count
                const std::int64_t n_res = *p++;
                const std::size_t n_at = key.size();
                key.push_back(0);
                for (std::int64_t j = 0; j < n_res; ++j, p += 2) {
                  const std::uint64_t word = static_cast<std::uint64_t>(p[0]);
                  const int fr = static_cast<std::int32_t>(word >> 32);
                  if (fr < 0) continue;
                  key.push_back(static_cast<std::int64_t>(word & 0xffffffffu));
                  key.push_back(e.topology().fr_flavor(fr));
                  ++key[n_at];
                }
              }
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
            return py::make_tuple(shape, shapes);
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
            return py::make_tuple(cq, usage);
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
           [](PyEngine& self, py::handle wid, std::int64_t until_ns, std::int64_t queue_ts) {
             std::int64_t w = to_i64(wid, "workload id");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.hold(static_cast<int>(w), until_ns, queue_ts);
           })
      .def("end_holds",
           [](PyEngine& self, std::int64_t now_ns) {
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.end_holds(now_ns);
           })
      .def("set_pods_ready",
           [](PyEngine& self, py::handle wid, bool ready) {
             std::int64_t w = to_i64(wid, "workload id");
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
           [](PyEngine& self, py::handle wid, py::handle reason, py::handle message, std::int64_t queue_ts_ns,
              bool requeue) {
             std::int64_t w = to_i64(wid, "workload id");
             std::string r = to_str(reason, "reason"), msg = to_str(message, "message");
             std::lock_guard<std::mutex> lock(self.mutex);
             self.engine.check_wid(w);
             self.engine.evict_after_cycle(static_cast<int>(w), r, msg, queue_ts_ns, requeue);
           })
      .def(
          "run_cycle",
          [](PyEngine& self, std::int64_t now_ns) {
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
            return py::make_tuple(r.cycle, to_numpy(r.admitted), to_numpy(r.preempted), r.newly_parked, r.heads,
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
             const auto& slot = w.adm[wid];
             if (slot.size > 0) {
               const std::int64_t* p = w.adm_pool.data() + slot.offset;
               std::int64_t n_ps = *p++;
               for (std::int64_t i = 0; i < n_ps; ++i) {
                 std::int64_t count = *p++;
                 std::int64_t n = *p++;
                 py::dict flavors, usage;
                 for (std::int64_t k = 0; k < n; ++k, p += 2) {
                   std::uint64_t word = static_cast<std::uint64_t>(p[0]);
                   int r = static_cast<int>(static_cast<std::uint32_t>(word & 0xffffffffu));
                   int fr = static_cast<std::int32_t>(word >> 32);
                   if (fr >= 0) flavors[py::int_(r)] = py::int_(e.topology().fr_flavor(fr));
                   usage[py::int_(r)] = py::int_(p[1]);
                 }
                 pod_sets.append(py::make_tuple(count, flavors));
                 resource_usage.append(usage);
               }
             }
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
             return py::make_tuple(std::string(w.ns(wid)), std::string(w.name(wid)), std::string(w.uid(wid)), w.cq[wid],
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
               out.append(py::make_tuple(lq, amounts_to(entry.resources), amounts_to(entry.pending_penalty()),
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
             return py::make_tuple(active, parked, q.sticky(), q.pop_cycle(), q.queue_inadmissible_cycle());
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
             return py::make_tuple(state, cq, time);
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
