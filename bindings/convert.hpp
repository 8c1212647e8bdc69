// Python objects <-> the core's values: checked conversions that raise
// EngineInputError (kueue_fast.api.errors.EngineError) with the field named.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <pybind11/numpy.h>

#include <kueue_fast/admission_fair_sharing.hpp>
#include <kueue_fast/quota_tree.hpp>
#include <kueue_fast/types.hpp>

#include "common.hpp"

namespace kueue_fast_bindings {

[[noreturn]] void bad(const std::string& what);

// An integer (int or anything with __index__, not float) as int64 / uint64.
std::int64_t to_i64(py::handle h, const char* what);
std::uint64_t to_u64(py::handle h, const char* what);
std::string to_str(py::handle h, const char* what);
// True or False (Python's or numpy's), nothing else
bool to_bool(py::handle h, const char* what);
// Any sequence but str and bytes.
py::sequence to_seq(py::handle h, const char* what);

// Python int <-> the usage ledger's 128-bit nanos.
kueue_fast::Nanos to_nanos(py::handle h, const char* what);
py::int_ from_nanos(kueue_fast::Nanos v);
// [(resource id, nanos)] by increasing resource id.
kueue_fast::Amounts amounts_from(py::handle seq, const char* what);
py::list amounts_to(const kueue_fast::Amounts& a);

using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;

// A 1-D integer array as C-contiguous int64 (no copy when it already is one);
// `expect` >= 0: its required length. Floats, bools, strings and objects are
// rejected: integers given as floats are an error, not a silent cast.
I64Array int_array(py::handle obj, const char* what, py::ssize_t expect = -1);
// A sequence of exactly `expect` str.
std::vector<std::string> str_list(py::handle obj, const char* what, std::size_t expect);

// A read-only, zero-copy (n_nodes, n_fr) view of one of the tree's tables;
// `owner` (the Python engine) is its base and keeps the memory alive.
py::array tree_view(py::handle owner, kueue_fast::QuotaTree::Table t, int n_nodes, int n_fr);

const char* state_name(kueue_fast::ViewState s);

template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
  return a;
}

}  // namespace kueue_fast_bindings
