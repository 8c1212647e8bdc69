// Checked conversions between Python objects and the core's values (convert.hpp).
#include "convert.hpp"

#include <limits>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast_bindings {

void bad(const std::string& what) { throw kueue_fast::EngineInputError(what); }

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

bool to_bool(py::handle h, const char* what) {
  py::detail::make_caster<bool> caster;
  if (!caster.load(h, /*convert=*/false)) bad(std::string(what) + ": expected a bool");
  return static_cast<bool>(caster);
}

py::sequence to_seq(py::handle h, const char* what) {
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr())) {
    bad(std::string(what) + ": expected a sequence");
  }
  return py::reinterpret_borrow<py::sequence>(h);
}


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

// A 1-D integer array as C-contiguous int64 (no copy when it already is one).
// Floats, bools, strings and objects are rejected: integers given as floats
// are an error, not a silent cast.
I64Array int_array(py::handle obj, const char* what, py::ssize_t expect) {
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

}  // namespace kueue_fast_bindings
