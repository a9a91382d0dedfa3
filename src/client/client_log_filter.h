// ClientLogFilter: what a Session shows of the ZooKeeper C client's log (internal; pure).
//
// The C client logs every failed connect attempt and every dropped connection as an error - on a
// healthy start-up (a first attempt before the server is up, an address that does not answer) and
// many times a second while a server is unreachable. zklock says what matters in its own words
// (one line when the session is Suspended, one when it answers again, one when it is Lost), so:
//   * below LogLevel::kDebug, the C client's routine connection lines count as kInfo (shown from
//     LogLevel::kInfo on), other lines keep their level;
//   * below LogLevel::kDebug, a line like one shown in the last `window` is held back; the next one
//     shown says how many were held back ("(and N more like it)"). Lines are alike when they differ
//     only in numbers (times, ports, addresses, ids);
//   * at LogLevel::kDebug everything passes, unchanged.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>

#include "zklock/log.h"

namespace zklock::detail {

class ClientLogFilter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kWindow{10};

  struct Verdict {
    bool show = false;
    LogLevel level = LogLevel::kInfo;
    std::string text;  // the line, with the count of lines held back appended when there were any
  };

  /// The C client's level for `line` ("ZOO_ERROR@...", "ZOO_WARN@..."; anything else is kInfo).
  static LogLevel level_written_in(std::string_view line);
  /// True for the C client's routine lines about connecting, disconnecting and reconnecting.
  static bool is_routine(std::string_view line);
  /// `line` with the C client's time/thread prefix dropped and every run of digits (and hex after
  /// "0x") replaced by '#': the key under which alike lines are counted.
  static std::string shape_of(std::string_view line);

  /// Decides about one line for a Session at `session_level`, at time `now`.
  Verdict filter(std::string_view line, LogLevel session_level, Clock::time_point now);

 private:
  struct Seen {
    Clock::time_point shown_at;
    int held_back = 0;
  };
  std::unordered_map<std::string, Seen> seen_;
};

}  // namespace zklock::detail
