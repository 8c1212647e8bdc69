// Reading the engine's workload inputs from Python (parse_inputs.hpp).
#include "parse_inputs.hpp"

#include "convert.hpp"

namespace kueue_fast_bindings {

kueue_fast::WorkloadInput workload_from(py::handle ns, py::handle name, py::handle uid, py::handle cq, py::handle priority,
                            py::handle queue_ts, py::handle hash, py::handle block, py::handle block_message,
                            py::handle pod_sets, py::handle admission) {
  kueue_fast::WorkloadInput in;
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
    if (p.size() != 5 && p.size() != 6) bad("pod set: expected (name, count, min_count, flavor_class, requests[, tas])");
    kueue_fast::WorkloadInput::PodSet s;
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
    // Topology Aware Scheduling: (request or None, tas_requests)
    if (p.size() == 6 && !p[5].is_none()) {
      py::sequence t = to_seq(p[5], "pod set tas");
      if (t.size() != 2) bad("pod set tas: expected (request, tas_requests)");
      if (!t[0].is_none()) {
        py::sequence q = to_seq(t[0], "tas request");
        if (q.size() != 5) bad("tas request: expected (level, required, unconstrained, slice_level, slice_size)");
        s.has_tas = true;
        s.tas.level = static_cast<std::int32_t>(to_i64(q[0], "tas level"));
        s.tas.required = q[1].cast<bool>();
        s.tas.unconstrained = q[2].cast<bool>();
        s.tas.slice_level = static_cast<std::int32_t>(to_i64(q[3], "tas slice level"));
        const std::int64_t size = to_i64(q[4], "tas slice size");
        if (size < 1 || size > INT32_MAX) bad("tas slice size must be in [1, 2^31)");
        s.tas.slice_size = static_cast<std::int32_t>(size);
      }
      for (auto v : to_seq(t[1], "tas_requests")) s.tas_requests.push_back(to_i64(v, "tas request amount"));
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
      if (p.size() != 2 && p.size() != 3) bad("admitted pod set: expected (count, use[, tas uses])");
      kueue_fast::WorkloadInput::AdmittedPodSet s;
      s.count = to_i64(p[0], "admitted count");
      for (auto u : to_seq(p[1], "admitted use")) {
        py::sequence e = to_seq(u, "admitted use entry");
        if (e.size() != 3) bad("admitted use entry: expected (resource, flavor, amount)");
        s.use.emplace_back(to_i64(e[0], "admitted resource"), to_i64(e[1], "admitted flavor"),
                           to_i64(e[2], "admitted amount"));
      }
      if (p.size() == 3) {
        for (auto u : to_seq(p[2], "admitted tas uses")) {
          py::sequence e = to_seq(u, "admitted tas use");
          if (e.size() != 4) bad("admitted tas use: expected (flavor, leaf, hostname, pods)");
          s.tas_uses.push_back({to_i64(e[0], "tas use flavor"), to_i64(e[1], "tas use leaf"),
                                to_i64(e[2], "tas use hostname"), to_i64(e[3], "tas use pods")});
        }
      }
      in.admission.push_back(std::move(s));
    }
  }
  return in;
}

StagedWorkloads workload_rows(py::handle arrays) {
  // A missing optional attribute reads as None; a missing required one is
  // reported by int_array / str_list as "missing".
  auto field = [&](const char* name) { return py::getattr(arrays, name, py::none()); };
  auto vec = [](const I64Array& a) { return std::vector<std::int64_t>(a.data(), a.data() + a.size()); };
  StagedWorkloads st;
  I64Array cq = int_array(field("cluster_queue"), "cluster_queue");
  const py::ssize_t n = cq.size();
  st.n = static_cast<std::size_t>(n);
  st.cq = vec(cq);
  st.prio = vec(int_array(field("priority"), "priority", n));
  st.ts = vec(int_array(field("queue_ts"), "queue_ts", n));
  st.hash = vec(int_array(field("scheduling_hash"), "scheduling_hash", n));
  st.pso = vec(int_array(field("pod_set_offsets"), "pod_set_offsets", n + 1));
  st.psc = vec(int_array(field("pod_set_count"), "pod_set_count"));
  const py::ssize_t n_ps = static_cast<py::ssize_t>(st.psc.size());
  st.psm = vec(int_array(field("pod_set_min_count"), "pod_set_min_count", n_ps));
  st.psf = vec(int_array(field("pod_set_flavor_class"), "pod_set_flavor_class", n_ps));
  st.rqo = vec(int_array(field("request_offsets"), "request_offsets", n_ps + 1));
  st.rqr = vec(int_array(field("request_resource"), "request_resource"));
  st.rqa = vec(int_array(field("request_amount"), "request_amount", static_cast<py::ssize_t>(st.rqr.size())));
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
  st.namespaces = str_list(field("namespaces"), "namespaces", st.n);
  st.names = str_list(field("names"), "names", st.n);
  const py::object uids = field("uids"), ps_name = field("pod_set_name"), block = field("block");
  const py::object local_queue = field("local_queue");
  if (!uids.is_none()) st.uids = str_list(uids, "uids", st.n);
  if (!ps_name.is_none()) {
    st.has_psn = true;
    st.psn = vec(int_array(ps_name, "pod_set_name", n_ps));
    const py::object names = field("pod_set_names");
    if (names.is_none()) bad("pod_set_name needs pod_set_names");
    for (auto x : to_seq(names, "pod_set_names")) st.pod_set_names.push_back(to_str(x, "pod set name"));
  }
  if (!block.is_none()) {
    st.has_block = true;
    st.blk = vec(int_array(block, "block", n));
    st.blk_msg = vec(int_array(field("block_message"), "block_message", n));
    const py::object messages = field("block_messages");
    if (!messages.is_none()) {
      for (auto x : to_seq(messages, "block_messages")) st.block_messages.push_back(to_str(x, "block message"));
    }
  }
  if (!local_queue.is_none()) st.lq = vec(int_array(local_queue, "local_queue", n));
  return st;
}

// Engine::add_workloads of rows [lo, hi) of `st` (bounds checked by the caller).
int add_workload_rows(kueue_fast::Engine& engine, const StagedWorkloads& st, std::int64_t lo, std::int64_t hi) {
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

}  // namespace kueue_fast_bindings
