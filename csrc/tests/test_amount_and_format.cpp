// Saturating arithmetic and format_quantity (the table of tests/test_quantity.py,
// Go's outputs).
#include <limits>

#include <kueue_fast/amount.hpp>
#include <kueue_fast/quantity_format.hpp>

#include "harness.hpp"

using namespace kueue_fast;

namespace {
constexpr std::int64_t MAX = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t MIN = std::numeric_limits<std::int64_t>::min();
}  // namespace

TEST(saturating_add_sub_mul) {
  CHECK_EQ(sat_add(1, 2), Amount{3});
  CHECK_EQ(sat_add(MAX, 1), MAX);
  CHECK_EQ(sat_add(MAX, MAX), MAX);
  CHECK_EQ(sat_add(MIN, -1), MIN);
  CHECK_EQ(sat_add(MAX, MIN), Amount{-1});
  CHECK_EQ(sat_sub(5, 7), Amount{-2});
  CHECK_EQ(sat_sub(MIN, 1), MIN);
  CHECK_EQ(sat_sub(MAX, -1), MAX);
  CHECK_EQ(sat_sub(0, MIN), MAX);
  CHECK_EQ(sat_mul(3, 4), Amount{12});
  CHECK_EQ(sat_mul(MAX / 2 + 1, 2), MAX);
  CHECK_EQ(sat_mul(MAX, MAX), MAX);
  CHECK_EQ(sat_mul(-MAX, 2), MIN);
  CHECK_EQ(sat_mul(0, MAX), Amount{0});
  CHECK_EQ(NO_LIMIT, MAX);
}

// Kueue pkg/resources/amount.go (ff69552e): Unlimited is sticky, bounded
// results saturate, and a saturated sum is Unlimited.
TEST(amount_arithmetic_is_kueue_amount) {
  CHECK_EQ(amount_add(2, 3), Amount{5});
  CHECK_EQ(amount_add(NO_LIMIT, 7), NO_LIMIT);
  CHECK_EQ(amount_add(NO_LIMIT, -7), NO_LIMIT);  // Add: Unlimited on either side
  CHECK_EQ(amount_add(-7, NO_LIMIT), NO_LIMIT);
  CHECK_EQ(amount_add(MAX - 1, 5), NO_LIMIT);    // saturates onto the sentinel
  CHECK_EQ(amount_add(MIN, -1), MIN);
  CHECK_EQ(amount_sub(9, 4), Amount{5});
  CHECK_EQ(amount_sub(NO_LIMIT, 5), NO_LIMIT);
  CHECK_EQ(amount_sub(NO_LIMIT, -5), NO_LIMIT);
  CHECK_EQ(amount_sub(NO_LIMIT, NO_LIMIT), Amount{0});
  CHECK_EQ(amount_sub(5, NO_LIMIT), MIN);
  CHECK_EQ(amount_sub(-5, MAX - 1), MIN);  // saturates
  CHECK_EQ(amount_sub(5, MIN), NO_LIMIT);  // saturates onto the sentinel
  std::string s;
  append_amount(s, QuantityFormat::DecimalMilli, MAX);
  CHECK_EQ(s, std::string("<unlimited>"));
  s.clear();
  append_amount(s, QuantityFormat::DecimalMilli, MAX - 1);
  CHECK_EQ(s, format_quantity("cpu", MAX - 1));
}

TEST(format_quantity_matches_go) {
  struct Row {
    const char* resource;
    std::int64_t value;
    const char* want;
  };
  const Row rows[] = {
      {"cpu", 2000, "2"},
      {"cpu", 1500, "1500m"},
      {"cpu", 1000000, "1k"},
      {"cpu", 100, "100m"},
      {"cpu", 10, "10m"},
      {"cpu", 1, "1m"},
      {"cpu", 0, "0"},
      {"cpu", 12000, "12"},
      {"cpu", 120000, "120"},
      {"cpu", -1500, "-1500m"},
      {"cpu", MAX, "9223372036854775807m"},
      {"cpu", 5000000000000000, "5T"},
      {"memory", 8589934592, "8Gi"},
      {"memory", 128000, "125Ki"},
      {"memory", 100000, "100k"},
      {"memory", 1500, "1500"},
      {"memory", 2000, "2k"},
      {"memory", 1000, "1k"},
      {"memory", 1023, "1023"},
      {"memory", 1024, "1Ki"},
      {"memory", 1536, "1536"},
      {"memory", 1024000, "1000Ki"},
      {"memory", std::int64_t{1} << 60, "1Ei"},
      {"memory", MAX, "9223372036854775807"},
      {"memory", -2048, "-2Ki"},
      {"memory", MIN, "-9223372036854775808"},
      {"ephemeral-storage", std::int64_t{10} << 30, "10Gi"},
      {"hugepages-2Mi", std::int64_t{4} << 20, "4Mi"},
      {"pods", 5, "5"},
      {"pods", 1000, "1k"},
      {"nvidia.com/gpu", 8, "8"},
      {"example.com/gpu-memory", std::int64_t{9984} * 1024 * 1024, "10468982784"},
      {"pods", 1000000000000000000, "1E"},
      {"pods", 1500000, "1500k"},
      {"cpu", 14500, "14500m"},
      {"cpu", -3000, "-3"},
      {"pods", MIN, "-9223372036854775808"},
      {"cpu", 999, "999m"},
      {"cpu", 10000, "10"},
      {"memory", 3 * 1024 * 1024 + 512 * 1024, "3584Ki"},
  };
  for (const Row& r : rows) CHECK_EQ(format_quantity(r.resource, r.value), std::string(r.want));
}
