// Same algorithm as kueue_fast/api/quantity.py format_quantity (kueue
// pkg/resources/requests.go ResourceQuantity + apimachinery Quantity.String).
#include <kueue_fast/quantity_format.hpp>

#include <limits>

namespace kueue_fast {

namespace {

const char* decimal_suffix(int exponent) {
  switch (exponent) {
    case -9: return "n";
    case -6: return "u";
    case -3: return "m";
    case 0: return "";
    case 3: return "k";
    case 6: return "M";
    case 9: return "G";
    case 12: return "T";
    case 15: return "P";
    case 18: return "E";
    default: return "?";  // unreachable for int64 values
  }
}

const char* const BINARY_SUFFIXES[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

// DecimalSI with the given scale: strip factors of ten, then lower the
// exponent to a multiple of three. Never overflows: the mantissa only gets
// back at most the factors of ten just stripped.
void append_decimal_si(std::string& out, std::int64_t value, int scale) {
  if (value == 0) {
    out += '0';
    return;
  }
  std::int64_t mantissa = value;
  int times = 0;
  while (mantissa % 10 == 0) {
    mantissa /= 10;  // exact: divisible
    ++times;
  }
  int exponent = scale + times;
  int r = ((exponent % 3) + 3) % 3;  // floor modulo, as Python's %
  for (int i = 0; i < r; ++i) mantissa *= 10;
  exponent -= r;
  out += std::to_string(mantissa);
  out += decimal_suffix(exponent);
}

void append_binary_preferred(std::string& out, std::int64_t value) {
  if ((value > -1024 && value < 1024) || value == std::numeric_limits<std::int64_t>::min()) {
    append_decimal_si(out, value, 0);
    return;
  }
  std::int64_t mantissa = value;
  int times = 0;
  while (mantissa % 1024 == 0) {
    mantissa /= 1024;
    ++times;
  }
  if (times == 0) {
    append_decimal_si(out, value, 0);
    return;
  }
  out += std::to_string(mantissa);
  out += BINARY_SUFFIXES[times];
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

QuantityFormat quantity_format_of(std::string_view resource) noexcept {
  if (resource == "cpu") return QuantityFormat::DecimalMilli;
  if (resource == "memory" || resource == "ephemeral-storage" || starts_with(resource, "hugepages-")) {
    return QuantityFormat::BinaryPreferred;
  }
  return QuantityFormat::Decimal;
}

void append_quantity(std::string& out, QuantityFormat fmt, std::int64_t value) {
  switch (fmt) {
    case QuantityFormat::DecimalMilli: append_decimal_si(out, value, -3); return;
    case QuantityFormat::BinaryPreferred: append_binary_preferred(out, value); return;
    case QuantityFormat::Decimal: append_decimal_si(out, value, 0); return;
  }
}

void append_amount(std::string& out, QuantityFormat fmt, std::int64_t value) {
  if (value == std::numeric_limits<std::int64_t>::max()) {
    out += "<unlimited>";
  } else {
    append_quantity(out, fmt, value);
  }
}

std::string format_quantity(std::string_view resource, std::int64_t value) {
  std::string out;
  append_quantity(out, quantity_format_of(resource), value);
  return out;
}

}  // namespace kueue_fast
