#include "watch_view.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <ctime>

#include "contender_view.h"
#include "duration.h"

namespace zklock::cli {
namespace {

// Longer data would make a row wrap over several screen lines at every refresh (a foreign node's
// data can be up to 1 MiB); the one-shot `zklock status` prints it whole.
constexpr std::size_t kMaxDescriptionBytes = 200;
constexpr std::size_t kMaxDataBytes = 60;

constexpr const char* kColumnSeparator = "  ";

// `text` quoted as a JSON string, cut to `max_bytes` first ("..." after the quote says so).
std::string quoted_shortened(const std::string& text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return quoted(text);
  // A cut through a UTF-8 sequence leaves an invalid tail, which quoted() replaces.
  return quoted(text.substr(0, max_bytes)) + "...";
}

std::string local_time(std::chrono::system_clock::time_point now) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm parts{};
  localtime_r(&seconds, &parts);
  char text[32];
  if (std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &parts) == 0) return "?";
  return text;
}

std::int64_t epoch_ms(std::chrono::system_clock::time_point when) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(when.time_since_epoch()).count();
}

constexpr std::size_t kColumns = 7;
using Row = std::array<std::string, kColumns>;

Row row_of(std::size_t position, bool holder, const Contender& contender, std::string age) {
  const Identity identity = identity_of(contender.data);
  Row row;
  row[0] = std::to_string(position);
  row[1] = holder ? "holder" : "waiting";
  row[2] = kind_name(contender.kind);
  row[3] = std::move(age);
  row[4] = identity.host.is_string() ? terminal_safe(identity.host.get<std::string>()) : "-";
  row[5] = identity.pid.is_null() ? "-" : identity.pid.dump();
  if (!identity.ours) {
    row[6] = "data=" + terminal_safe(quoted_shortened(contender.data, kMaxDataBytes));
  } else if (identity.description.is_string()) {
    row[6] = terminal_safe(
        quoted_shortened(identity.description.get<std::string>(), kMaxDescriptionBytes));
  } else {
    row[6] = "-";
  }
  return row;
}

// The rows as a table: each column as wide as its widest cell (bytes: hosts are ASCII names),
// the last one not padded.
std::string table(const std::vector<Row>& rows) {
  std::array<std::size_t, kColumns> widths{};
  for (const Row& row : rows) {
    for (std::size_t c = 0; c < kColumns; ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (const Row& row : rows) {
    for (std::size_t c = 0; c + 1 < kColumns; ++c) {
      out += row[c];
      out.append(widths[c] - row[c].size(), ' ');
      out += kColumnSeparator;
    }
    out += row[kColumns - 1];
    out += '\n';
  }
  return out;
}

}  // namespace

std::string terminal_safe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    char escape[8];
    if (byte < 0x20 || byte == 0x7f) {
      std::snprintf(escape, sizeof escape, "\\x%02x", byte);
      out += escape;
    } else if (byte == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      // U+0080..U+009F: C1 controls (U+009B is CSI), which some terminals obey.
      std::snprintf(escape, sizeof escape, "\\u00%02x", static_cast<unsigned char>(text[i + 1]));
      out += escape;
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string render_watch_view(const WatchHeader& header, const QueueSnapshot& snapshot) {
  std::string out = terminal_safe(header.path) + kColumnSeparator + local_time(header.now) +
                    kColumnSeparator + "session " + std::string(to_string(header.session_state)) +
                    kColumnSeparator + "every " + format_duration(header.interval) + '\n';
  switch (snapshot.outcome) {
    case QueueSnapshot::Outcome::kPathMissing:
      return out + "path does not exist\n";
    case QueueSnapshot::Outcome::kFailed:
      return out + "could not read the queue: " + terminal_safe(snapshot.failure) + '\n';
    case QueueSnapshot::Outcome::kRead:
      break;
  }
  if (snapshot.contenders.empty()) return out + "no contenders (the lock is free)\n";

  const std::vector<bool> holding = holders(snapshot.contenders);
  const std::int64_t now_ms = epoch_ms(header.now);
  std::vector<Row> rows = {{"POS", "ROLE", "KIND", "AGE", "HOST", "PID", "DESCRIPTION"}};
  for (std::size_t i = 0; i < snapshot.contenders.size(); ++i) {
    // The age as a string here, not an optional passed on: GCC 12 at -O2 takes the optional's
    // value for maybe-uninitialized once inlined (a false positive, an error with -Werror).
    std::string age = "-";
    if (i < snapshot.created_ms.size() && snapshot.created_ms[i].has_value()) {
      age = format_age(std::chrono::milliseconds(now_ms - snapshot.created_ms[i].value()));
    }
    rows.push_back(row_of(i, holding[i], snapshot.contenders[i], std::move(age)));
  }
  return out + table(rows);
}

}  // namespace zklock::cli
