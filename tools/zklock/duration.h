// Durations on the command line: "500ms", "10s", "1.5m", "2h".
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <variant>

namespace zklock::cli {

/// The longest duration accepted (about 11 years): far beyond any sensible timeout, and small
/// enough that steady_clock::now() + it cannot overflow.
inline constexpr std::chrono::hours kMaxDuration{100'000};

/// Parses an integer or decimal number followed by a unit - ms, s, m (minutes) or h - with
/// nothing else around it (no sign, no spaces, no exponent). The value must be a whole number of
/// milliseconds and at most kMaxDuration.
/// Returns: the duration, or an error message explaining what is accepted.
std::variant<std::chrono::milliseconds, std::string> parse_duration(std::string_view text);

/// Returns: `d` in the largest unit that shows it exactly ("1500ms", "10s", "2m", "1h").
std::string format_duration(std::chrono::milliseconds d);

/// Returns: how long something has lasted, for people to read at a glance (not to parse back),
/// truncated, never rounded up: "0.0s" to "59.9s", then "1m00s" to "59m59s", "1h00m" to "23h59m",
/// then "1d00h" and on. A negative age (another machine's clock ahead of ours) shows as "0.0s".
std::string format_age(std::chrono::milliseconds age);

}  // namespace zklock::cli
