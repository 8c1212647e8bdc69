// format_quantity: how Kueue prints an int64 amount in messages.
// The C++ twin of kueue_fast/api/quantity.py format_quantity (same algorithm,
// same output; see the comment block there).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kueue_fast {

enum class QuantityFormat : std::uint8_t { DecimalMilli, BinaryPreferred, Decimal };

// Which format a resource name uses (cpu: milli; memory, ephemeral-storage,
// hugepages-*: BinarySI when exact; anything else: DecimalSI).
QuantityFormat quantity_format_of(std::string_view resource) noexcept;

// Appends the text of `value` to `out`.
void append_quantity(std::string& out, QuantityFormat fmt, std::int64_t value);

std::string format_quantity(std::string_view resource, std::int64_t value);

// A quota amount (ResourceFormatter.AmountQuantityString, api/quantity.py
// format_amount): Unlimited (INT64_MAX) is "<unlimited>".
void append_amount(std::string& out, QuantityFormat fmt, std::int64_t value);

}  // namespace kueue_fast
