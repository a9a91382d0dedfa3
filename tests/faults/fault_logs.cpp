// tests/faults/fault_logs.cpp: see fault_logs.h.
#include "fault_logs.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "support/files.h"

namespace zklock::testing::faults {
namespace {

bool parse_i64(const std::string& text, std::int64_t& out) {
  if (text.empty()) return false;
  std::size_t i = text[0] == '-' ? 1 : 0;
  if (i == text.size()) return false;
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  out = text[0] == '-' ? -v : v;
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Parsing

std::string LogEvent::get(const std::string& key) const {
  auto it = fields.find(key);
  return it == fields.end() ? std::string() : it->second;
}

std::int64_t LogEvent::num(const std::string& key, std::int64_t fallback) const {
  std::int64_t v = 0;
  return parse_i64(get(key), v) ? v : fallback;
}

std::vector<LogEvent> HolderLog::of(const std::string& kind) const {
  std::vector<LogEvent> out;
  for (const auto& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

std::size_t HolderLog::acquisitions() const { return of("acquired").size(); }

std::optional<std::int64_t> HolderLog::first_at(const std::string& kind,
                                                const std::map<std::string, std::string>& match,
                                                std::int64_t after) const {
  for (const auto& e : events) {
    if (e.kind != kind || e.at_ns < after) continue;
    const bool matches = std::all_of(match.begin(), match.end(), [&](const auto& field) {
      return e.get(field.first) == field.second;
    });
    if (matches) return e.at_ns;
  }
  return std::nullopt;
}

std::optional<std::int64_t> HolderLog::learned_lost(std::int64_t after) const {
  std::optional<std::int64_t> first;
  for (const auto& t : {first_at("lock_state", {{"state", "Lost"}}, after),
                        first_at("gave_up", {{"state", "Lost"}}, after),
                        first_at("released", {{"state", "Lost"}}, after)}) {
    if (t && (!first || *t < *first)) first = t;
  }
  return first;
}

std::optional<LogEvent> HolderLog::late_write_result() const {
  for (const auto& attempt : of("write_attempt")) {
    if (attempt.get("late") != "1") continue;
    for (const auto& result : of("write_result")) {
      if (result.get("n") == attempt.get("n")) return result;
    }
  }
  return std::nullopt;
}

std::vector<LogEvent> parse_log(const std::string& text) {
  std::vector<LogEvent> out;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (lines.eof() && !text.empty() && text.back() != '\n') break;  // a half-written last line
    std::istringstream words(line);
    std::string at_text;
    LogEvent e;
    if (!(words >> at_text >> e.kind) || !parse_i64(at_text, e.at_ns)) continue;
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      e.fields[w.substr(0, eq)] = w.substr(eq + 1);
    }
    out.push_back(std::move(e));
  }
  return out;
}

HolderLog read_holder_log(const std::string& path) {
  HolderLog log;
  log.path = path;
  log.events = parse_log(read_file(path));
  for (const auto& e : log.events) {
    if (e.kind == "start") {
      log.id = e.get("id");
      break;
    }
  }
  if (log.id.empty()) log.id = path.substr(path.rfind('/') + 1);
  return log;
}

std::vector<StoreRecord> read_store_log(const std::string& path) {
  std::vector<StoreRecord> out;
  std::istringstream lines(read_file(path));
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    StoreRecord r;
    bool ok = true;
    int seen = 0;
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq == std::string::npos) continue;
      const std::string k = w.substr(0, eq), v = w.substr(eq + 1);
      ++seen;
      if (k == "t")
        ok &= parse_i64(v, r.at_ns);
      else if (k == "writer")
        r.writer = v;
      else if (k == "token")
        ok &= parse_i64(v, r.token);
      else if (k == "n")
        ok &= parse_i64(v, r.write_no);
      else if (k == "result")
        r.accepted = v == "accepted";
      else if (k == "newest")
        ok &= parse_i64(v, r.newest);
    }
    if (ok && seen == 6) out.push_back(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// FaultLog

FaultLog::FaultLog(std::string path) : path_(std::move(path)) {}

void FaultLog::record(const std::string& kind, const std::string& target,
                      const std::string& detail) {
  FaultRecord r{monotonic_ns(), kind, target, detail};
  std::lock_guard lock(mutex_);
  records_.push_back(r);
  if (!path_.empty()) {
    std::ofstream out(path_, std::ios::app);
    out << r.at_ns << " " << kind << " target=" << (target.empty() ? "-" : target)
        << " detail=" << (detail.empty() ? "-" : detail) << "\n";
  }
}

std::vector<FaultRecord> FaultLog::records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

std::size_t FaultLog::injected() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& r : records_) {
    if (r.kind == "thaw" || r.kind == "heal" || r.kind.rfind("end-", 0) == 0 ||
        r.kind.rfind("restart", 0) == 0) {
      continue;
    }
    ++n;
  }
  return n;
}

}  // namespace zklock::testing::faults
