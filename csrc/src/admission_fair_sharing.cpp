// Same rules as kueue_fast/engine/reference/admission_fair_sharing.py.
#include <kueue_fast/admission_fair_sharing.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace kueue_fast {

namespace {

constexpr std::int64_t NS_PER_S = 1000000000;
constexpr UNanos NANOS_MAGNITUDE_MAX = ~UNanos{0} >> 1;  // 2^127 - 1

[[noreturn]] void out_of_range(const char* what) {
  throw AfsRangeError(std::string("admission fair sharing: ") + what +
                      " beyond the 128-bit range of the usage ledger (2^127 nanos)");
}

// log(0.5) computed at run time by the C library, as Python's math.log does
// (a constant folded by the compiler could round differently).
double log_half() noexcept {
  volatile double half = 0.5;
  return std::log(half);
}

// A 256-bit unsigned integer, little-endian 64-bit words: room for a 127-bit
// amount times a 57-bit decimal significand, and for the scaling steps.
struct U256 {
  std::uint64_t w[4] = {0, 0, 0, 0};

  bool is_zero() const noexcept { return (w[0] | w[1] | w[2] | w[3]) == 0; }
  // *= m; false on overflow past 256 bits.
  bool mul(std::uint64_t m) noexcept {
    UNanos carry = 0;
    for (auto& x : w) {
      UNanos p = static_cast<UNanos>(x) * m + carry;
      x = static_cast<std::uint64_t>(p);
      carry = p >> 64;
    }
    return carry == 0;
  }
  // /= d (truncating).
  void div(std::uint64_t d) noexcept {
    UNanos rem = 0;
    for (int i = 3; i >= 0; --i) {
      UNanos cur = (rem << 64) | w[i];
      w[i] = static_cast<std::uint64_t>(cur / d);
      rem = cur % d;
    }
  }
};

constexpr std::uint64_t pow10_u64(int k) noexcept {
  std::uint64_t p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

// float(x) for x < 2^128, correctly rounded (ties to even): the top 64 bits
// with a sticky bit below the rounding position, converted once, scaled.
double u128_to_double(UNanos x) noexcept {
  const std::uint64_t hi = static_cast<std::uint64_t>(x >> 64);
  if (hi == 0) return static_cast<double>(static_cast<std::uint64_t>(x));
  const int shift = 64 - __builtin_clzll(hi);  // bits below the top 64
  std::uint64_t top = static_cast<std::uint64_t>(x >> shift);
  const UNanos below = x & ((UNanos{1} << shift) - 1);
  if (below != 0) top |= 1;  // bit 0 is below the 53-bit rounding point: a pure sticky bit
  return std::ldexp(static_cast<double>(top), shift);
}

}  // namespace

// --- arithmetic ------------------------------------------------------------------------------

double go_pow_half(double y) noexcept {
  if (y == 0) return 1.0;
  if (y == 1) return 0.5;
  if (y == 0.5) return std::sqrt(0.5);
  double yi = 0.0;
  double yf = std::modf(y, &yi);
  if (yf > 0.5) {
    yf -= 1;
    yi += 1;
  }
  const double a1 = yf != 0 ? std::exp(yf * log_half()) : 1.0;
  // ldexp(a1, -int(yi)); beyond +-1e6 the result is 0 or inf either way.
  const double e = std::max(-1e6, std::min(1e6, -yi));
  return std::ldexp(a1, static_cast<int>(e));
}

double alpha_rate(double sampling_s, double half_life_s) noexcept {
  if (half_life_s == 0) return 0.0;
  return 1.0 - go_pow_half(sampling_s / half_life_s);
}

double go_seconds(Nanos ns) noexcept {
  // Truncating division: the remainder has the sign of ns, as Go's (and the reference's).
  const Nanos sec = ns / NS_PER_S;
  const Nanos nsec = ns % NS_PER_S;
  return nanos_to_double(sec) + static_cast<double>(static_cast<std::int64_t>(nsec)) / 1e9;
}

ShortestDecimal shortest_decimal(double f) {
  if (!std::isfinite(f)) out_of_range("a non-finite factor");
  char buf[64];
  // The shortest spelling that reads back as f (ties to the closest): the
  // digits of Python's repr. Scientific notation keeps them to at most 17
  // (the fixed form of a large value pads with zeros).
  const auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  const char* p = buf;
  const char* end = res.ptr;
  ShortestDecimal d;
  if (p < end && *p == '-') {
    d.negative = true;
    ++p;
  }
  int frac_digits = 0;
  bool in_frac = false;
  for (; p < end && *p != 'e'; ++p) {
    if (*p == '.') {
      in_frac = true;
      continue;
    }
    d.digits = d.digits * 10 + static_cast<std::uint64_t>(*p - '0');
    if (in_frac) ++frac_digits;
  }
  int exp = 0;
  if (p < end && *p == 'e') {
    ++p;
    bool neg = false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    for (; p < end; ++p) exp = exp * 10 + (*p - '0');
    if (neg) exp = -exp;
  }
  d.exp10 = exp - frac_digits;
  return d;
}

Nanos mul_by_float(Nanos v, const ShortestDecimal& f) {
  if (v == 0 || f.digits == 0) return 0;
  const bool negative = (v < 0) != f.negative;
  const UNanos mag = v < 0 ? UNanos{0} - static_cast<UNanos>(v) : static_cast<UNanos>(v);
  U256 x;
  x.w[0] = static_cast<std::uint64_t>(mag);
  x.w[1] = static_cast<std::uint64_t>(mag >> 64);
  x.mul(f.digits);  // < 2^128 * 2^64: cannot overflow
  constexpr int CHUNK = 19;  // 10^19 < 2^64
  if (f.exp10 >= 0) {
    for (int k = f.exp10; k > 0; k -= CHUNK) {
      if (!x.mul(pow10_u64(std::min(k, CHUNK)))) out_of_range("a product");
    }
  } else {
    for (int k = -f.exp10; k > 0 && !x.is_zero(); k -= CHUNK) x.div(pow10_u64(std::min(k, CHUNK)));
  }
  if (x.w[2] != 0 || x.w[3] != 0) out_of_range("a product");
  const UNanos r = (static_cast<UNanos>(x.w[1]) << 64) | x.w[0];
  if (r > NANOS_MAGNITUDE_MAX) out_of_range("a product");
  return negative ? -static_cast<Nanos>(r) : static_cast<Nanos>(r);
}

Amounts mul_by_float(const Amounts& a, double f) {
  const ShortestDecimal d = shortest_decimal(f);
  Amounts out;
  out.reserve(a.size());
  for (const NanoAmount& x : a) out.push_back({x.resource, mul_by_float(x.value, d)});
  return out;
}

Nanos add_nanos(Nanos a, Nanos b) {
  Nanos r;
  if (__builtin_add_overflow(a, b, &r)) out_of_range("a sum");
  return r;
}

Amounts merge_sum(const Amounts& a, const Amounts& b) {
  Amounts out;
  out.reserve(a.size() + b.size());
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].resource < b[j].resource)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].resource < a[i].resource) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].resource, add_nanos(a[i].value, b[j].value)});
      ++i;
      ++j;
    }
  }
  return out;
}

double nanos_to_double(Nanos v) noexcept {
  if (v < 0) return -u128_to_double(UNanos{0} - static_cast<UNanos>(v));
  return u128_to_double(static_cast<UNanos>(v));
}

std::string nanos_to_string(Nanos v) {
  if (v == 0) return "0";
  const bool negative = v < 0;
  UNanos mag = negative ? UNanos{0} - static_cast<UNanos>(v) : static_cast<UNanos>(v);
  std::string out;
  while (mag != 0) {
    out.push_back(static_cast<char>('0' + static_cast<int>(mag % 10)));
    mag /= 10;
  }
  if (negative) out.push_back('-');
  std::reverse(out.begin(), out.end());
  return out;
}

Nanos nanos_from_string(const std::string& s) {
  std::size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  if (i == s.size()) throw AfsRangeError("admission fair sharing: not an integer: " + s);
  const UNanos limit = negative ? NANOS_MAGNITUDE_MAX + 1 : NANOS_MAGNITUDE_MAX;
  UNanos mag = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') throw AfsRangeError("admission fair sharing: not an integer: " + s);
    const auto digit = static_cast<unsigned>(s[i] - '0');
    if (mag > (limit - digit) / 10) out_of_range("an amount");
    mag = mag * 10 + digit;
  }
  return negative ? static_cast<Nanos>(UNanos{0} - mag) : static_cast<Nanos>(mag);
}

// --- the ledger --------------------------------------------------------------------------------

Amounts LedgerEntry::pending_penalty() const {
  Amounts out;
  for (const auto& p : penalties) out = merge_sum(out, p.second);
  return out;
}

UsageLedger::UsageLedger(AfsConfig cfg, std::vector<std::int64_t> nanos_per_unit, int n_local_queues)
    : cfg_(std::move(cfg)), nanos_per_unit_(std::move(nanos_per_unit)) {
  slot_.assign(static_cast<std::size_t>(n_local_queues) + 1, -1);
}

Nanos UsageLedger::to_nanos(int resource, Nanos v) const {
  Nanos r;
  if (__builtin_mul_overflow(v, static_cast<Nanos>(nanos_per_unit_[static_cast<std::size_t>(resource)]), &r)) {
    out_of_range("an amount");
  }
  return r;
}

LedgerEntry& UsageLedger::entry_or_create(int lq, std::int64_t now_ns) {
  std::int32_t& s = slot_[static_cast<std::size_t>(lq + 1)];
  if (s < 0) {
    s = static_cast<std::int32_t>(entries_.size());
    entries_.emplace_back();
    entries_.back().last_update_ns = now_ns;
    order_.push_back(lq);
  }
  return entries_[static_cast<std::size_t>(s)];
}

void UsageLedger::seed(int lq, Amounts persisted, std::int64_t now_ns) {
  LedgerEntry& e = entry_or_create(lq, now_ns);
  e.resources = std::move(persisted);
  e.last_update_ns = now_ns;
  e.penalties.clear();
}

bool UsageLedger::due(int lq, std::int64_t now_ns) const {
  const LedgerEntry& e = *entry(lq);
  if (!e.penalties.empty()) return true;
  // round(interval * 1e9): Python's round() of a float, ties to even.
  const double interval = std::nearbyint(cfg_.usage_sampling_interval_s * static_cast<double>(NS_PER_S));
  const Nanos elapsed = static_cast<Nanos>(now_ns) - static_cast<Nanos>(e.last_update_ns);
  if (!(interval < 0x1p126)) return false;  // beyond any elapsed time
  return elapsed >= static_cast<Nanos>(interval);
}

namespace {

// CalculateDecayedConsumed: old*(1-a) + new*a with a the alpha rate of the elapsed time.
Amounts decayed(const Amounts& old, const Amounts& now, double elapsed_s, double half_life_s) {
  const double a = alpha_rate(elapsed_s, half_life_s);
  return merge_sum(mul_by_float(old, 1 - a), mul_by_float(now, a));
}

}  // namespace

void UsageLedger::sample(int lq, const Amounts& admitted, std::int64_t now_ns) {
  LedgerEntry& e = entry_or_create(lq, now_ns);
  if (cfg_.usage_half_life_s == 0) {
    e.resources.clear();
  } else {
    const Nanos elapsed_ns = std::max<Nanos>(0, static_cast<Nanos>(now_ns) - e.last_update_ns);
    e.resources = decayed(e.resources, admitted, go_seconds(elapsed_ns), cfg_.usage_half_life_s);
  }
  e.last_update_ns = std::max(e.last_update_ns, now_ns);
}

Amounts UsageLedger::entry_penalty(const Amounts& total_requests) const {
  return mul_by_float(total_requests, alpha_rate(cfg_.usage_sampling_interval_s, cfg_.usage_half_life_s));
}

void UsageLedger::push_penalty(int lq, std::int32_t wid, Amounts penalty, std::int64_t now_ns) {
  LedgerEntry& e = entry_or_create(lq, now_ns);
  for (auto& p : e.penalties) {
    if (p.first == wid) {
      p.second = std::move(penalty);
      return;
    }
  }
  e.penalties.emplace_back(wid, std::move(penalty));
}

void UsageLedger::settle(int lq, std::int32_t wid, const Amounts& admitted, std::int64_t now_ns) {
  LedgerEntry& e = entry_or_create(lq, now_ns);
  const Nanos elapsed_ns = static_cast<Nanos>(now_ns) - e.last_update_ns;
  e.resources = decayed(e.resources, admitted, go_seconds(elapsed_ns), cfg_.usage_half_life_s);
  for (auto it = e.penalties.begin(); it != e.penalties.end(); ++it) {
    if (it->first == wid) {
      e.resources = merge_sum(e.resources, it->second);
      e.penalties.erase(it);
      break;
    }
  }
  e.last_update_ns = now_ns;
}

double UsageLedger::usage(int lq, double weight) const {
  double u = 0.0;
  if (const LedgerEntry* e = entry(lq)) {
    Amounts merged;
    if (!e->penalties.empty()) merged = merge_sum(e->resources, e->pending_penalty());
    const Amounts& total = e->penalties.empty() ? e->resources : merged;
    for (const NanoAmount& x : total) {  // by resource id, as Kueue sums in name order
      u += cfg_.resource_weights[static_cast<std::size_t>(x.resource)] * (nanos_to_double(x.value) * 1e-9);
    }
  }
  if (weight <= 0) return std::numeric_limits<double>::infinity();
  return u / weight;
}

}  // namespace kueue_fast
