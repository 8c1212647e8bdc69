// A tiny test harness (no external framework): TEST(name) { ... } registers a
// case; CHECK(cond) and CHECK_EQ(got, want) record failures with the values
// and keep going; main() runs every case and returns non-zero on failure.
#pragma once

#include <cstdint>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace kf_test {

struct Case {
  const char* name;
  std::function<void()> fn;
};

inline std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

inline int& failures() {
  static int n = 0;
  return n;
}

struct Register {
  Register(const char* name, std::function<void()> fn) { registry().push_back({name, std::move(fn)}); }
};

template <class T>
std::string show(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
inline std::string show(const std::string& v) { return "\"" + v + "\""; }
inline std::string show(const char* v) { return "\"" + std::string(v) + "\""; }

inline void fail(const char* file, int line, const std::string& what) {
  ++failures();
  std::cerr << file << ":" << line << ": FAILED: " << what << "\n";
}

inline int run_all() {
  int failed_cases = 0;
  for (const auto& c : registry()) {
    int before = failures();
    c.fn();
    if (failures() != before) {
      ++failed_cases;
      std::cerr << "  in case: " << c.name << "\n";
    }
  }
  std::cout << registry().size() - static_cast<std::size_t>(failed_cases) << "/" << registry().size()
            << " cases passed, " << failures() << " failed checks\n";
  return failed_cases == 0 ? 0 : 1;
}

}  // namespace kf_test

#define KF_CONCAT2(a, b) a##b
#define KF_CONCAT(a, b) KF_CONCAT2(a, b)
#define TEST(name)                                                                   \
  static void KF_CONCAT(kf_test_fn_, name)();                                        \
  static const kf_test::Register KF_CONCAT(kf_test_reg_, name)(#name, &KF_CONCAT(kf_test_fn_, name)); \
  static void KF_CONCAT(kf_test_fn_, name)()

#define CHECK(cond)                                           \
  do {                                                        \
    if (!(cond)) kf_test::fail(__FILE__, __LINE__, #cond);    \
  } while (0)

#define CHECK_EQ(got, want)                                                                          \
  do {                                                                                               \
    const auto& kf_got_ = (got);                                                                     \
    const auto& kf_want_ = (want);                                                                   \
    if (!(kf_got_ == kf_want_)) {                                                                    \
      kf_test::fail(__FILE__, __LINE__,                                                              \
                    std::string(#got) + " == " #want ": want " + kf_test::show(kf_want_) + ", got " + \
                        kf_test::show(kf_got_));                                                     \
    }                                                                                                \
  } while (0)
