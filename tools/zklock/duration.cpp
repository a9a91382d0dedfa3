#include "duration.h"

#include <cstdint>
#include <cstdio>

namespace zklock::cli {
namespace {

constexpr std::string_view kAccepted =
    "expected a number with a unit ms, s, m or h, e.g. 500ms, 10s, 1.5m, 2h";

std::string invalid(std::string_view text, std::string_view why) {
  return "invalid duration '" + std::string(text) + "': " + std::string(why);
}

}  // namespace

std::variant<std::chrono::milliseconds, std::string> parse_duration(std::string_view text) {
  // Split into number and unit: the unit is the trailing run of letters.
  std::size_t unit_at = text.size();
  auto is_letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  while (unit_at > 0 && is_letter(text[unit_at - 1])) --unit_at;
  const std::string_view number = text.substr(0, unit_at);
  const std::string_view unit = text.substr(unit_at);

  std::int64_t unit_ms = 0;
  if (unit == "ms") {
    unit_ms = 1;
  } else if (unit == "s") {
    unit_ms = 1000;
  } else if (unit == "m") {
    unit_ms = 60 * 1000;
  } else if (unit == "h") {
    unit_ms = 60 * 60 * 1000;
  } else if (unit.empty()) {
    return invalid(text, "missing unit; " + std::string(kAccepted));
  } else {
    return invalid(text, "unknown unit '" + std::string(unit) + "'; " + std::string(kAccepted));
  }

  // number = digits [ "." digits ]. Keep it as mantissa / 10^fraction_digits, exactly.
  const std::size_t dot = number.find('.');
  const std::string_view whole = number.substr(0, dot);
  const std::string_view fraction =
      dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
  auto all_digits = [](std::string_view s) {
    for (const char c : s) {
      if (c < '0' || c > '9') return false;
    }
    return true;
  };
  if (whole.empty() || !all_digits(whole) || !all_digits(fraction) ||
      (dot != std::string_view::npos && fraction.empty())) {
    return invalid(text, kAccepted);
  }
  // No acceptable value needs more than 15 digits (kMaxDuration is 3.6e11 ms); the limit keeps the
  // arithmetic below from overflowing.
  if (whole.size() + fraction.size() > 15) return invalid(text, "too large or too precise");

  std::int64_t mantissa = 0;
  for (const char c : whole) mantissa = mantissa * 10 + (c - '0');
  std::int64_t scale = 1;
  for (const char c : fraction) {
    mantissa = mantissa * 10 + (c - '0');
    scale *= 10;
  }
  // Exact arithmetic: mantissa < 10^15 and unit_ms <= 3.6e6, so the product needs 128 bits.
  __extension__ using Wide = __int128;
  const Wide scaled = static_cast<Wide>(mantissa) * unit_ms;
  if (scaled % scale != 0) return invalid(text, "finer than a millisecond");
  const Wide ms = scaled / scale;
  const auto max_ms = std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDuration).count();
  if (ms > max_ms)
    return invalid(text, "too large (at most " + format_duration(kMaxDuration) + ")");
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

std::string format_duration(std::chrono::milliseconds d) {
  const std::int64_t ms = d.count();
  if (ms == 0) return "0s";
  if (ms % (60 * 60 * 1000) == 0) return std::to_string(ms / (60 * 60 * 1000)) + "h";
  if (ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

std::string format_age(std::chrono::milliseconds age) {
  constexpr std::int64_t kMinute = 60;
  constexpr std::int64_t kHour = 60 * kMinute;
  constexpr std::int64_t kDay = 24 * kHour;
  const std::int64_t ms = age.count() < 0 ? 0 : age.count();
  const std::int64_t s = ms / 1000;
  char text[32];
  if (s < kMinute) {
    std::snprintf(text, sizeof text, "%lld.%llds", static_cast<long long>(s),
                  static_cast<long long>(ms % 1000 / 100));
  } else if (s < kHour) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / kMinute),
                  static_cast<long long>(s % kMinute));
  } else if (s < kDay) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / kHour),
                  static_cast<long long>(s % kHour / kMinute));
  } else {
    std::snprintf(text, sizeof text, "%lldd%02lldh", static_cast<long long>(s / kDay),
                  static_cast<long long>(s % kDay / kHour));
  }
  return text;
}

}  // namespace zklock::cli
