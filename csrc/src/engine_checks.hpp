// Input checks shared by the Engine's source files (not part of the API).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include <kueue_fast/scheduler.hpp>

namespace kueue_fast {
namespace {

constexpr std::int64_t INT32_LO = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t INT32_HI = std::numeric_limits<std::int32_t>::max();

[[noreturn]] inline void bad(const std::string& what) { throw EngineInputError(what); }

inline void check_range(std::int64_t v, std::int64_t lo, std::int64_t hi, const char* what) {
  if (v < lo || v > hi) {
    bad(std::string(what) + " " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " +
        std::to_string(hi) + "]");
  }
}

}  // namespace
}  // namespace kueue_fast
