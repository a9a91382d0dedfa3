#include "client/client_log_filter.h"

#include <array>
#include <cctype>

namespace zklock::detail {
namespace {

// Fragments of the C client's routine connection lines (zookeeper.c, 3.8): a connect that failed
// or timed out, a connection dropped, the pause after trying every server, a late I/O loop.
constexpr std::array<std::string_view, 11> kRoutine = {
    "failed while receiving a server response",
    "failed while flushing send queue",
    "connect() call failed",
    "server refused to accept the client",
    "timed out (exceeded timeout by",
    "unexpected server response",
    "Delaying connection after exhaustively trying all servers",
    "Exceeded deadline by",
    "failed to send PING request",
    "initiated connection to server",
    "session establishment complete",
};

}  // namespace

LogLevel ClientLogFilter::level_written_in(std::string_view line) {
  if (line.find("ZOO_ERROR@") != std::string_view::npos) return LogLevel::kError;
  if (line.find("ZOO_WARN@") != std::string_view::npos) return LogLevel::kWarn;
  return LogLevel::kInfo;
}

bool ClientLogFilter::is_routine(std::string_view line) {
  for (const auto fragment : kRoutine) {
    if (line.find(fragment) != std::string_view::npos) return true;
  }
  return false;
}

std::string ClientLogFilter::shape_of(std::string_view line) {
  if (const auto at = line.find("ZOO_"); at != std::string_view::npos) line.remove_prefix(at);
  std::string shape;
  shape.reserve(line.size());
  for (std::size_t i = 0; i < line.size();) {
    const bool hex = line.compare(i, 2, "0x") == 0;
    if (hex || std::isdigit(static_cast<unsigned char>(line[i]))) {
      i += hex ? 2 : 0;
      while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
      shape += '#';
    } else {
      shape += line[i++];
    }
  }
  return shape;
}

ClientLogFilter::Verdict ClientLogFilter::filter(std::string_view line, LogLevel session_level,
                                                 Clock::time_point now) {
  Verdict v;
  v.level = level_written_in(line);
  if (session_level >= LogLevel::kDebug) {
    v.show = true;
    v.text = std::string(line);
    return v;
  }
  if (is_routine(line)) v.level = LogLevel::kInfo;
  if (v.level > session_level) return v;
  auto [it, first] = seen_.try_emplace(shape_of(line), Seen{now, 0});
  Seen& seen = it->second;
  if (!first && now - seen.shown_at < kWindow) {
    ++seen.held_back;
    return v;
  }
  v.show = true;
  v.text = std::string(line);
  if (seen.held_back > 0) v.text += " (and " + std::to_string(seen.held_back) + " more like it)";
  seen = Seen{now, 0};
  return v;
}

}  // namespace zklock::detail
