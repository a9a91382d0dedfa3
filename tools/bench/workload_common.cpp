// tools/bench/workload_common.cpp: see workload_common.h.
#include "workload_common.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <random>

namespace zklock::bench {

using namespace std::chrono_literals;

std::shared_ptr<CountingHook>& counting_hook() {
  static std::shared_ptr<CountingHook> hook;
  return hook;
}

zklock::SessionOptions session_options(const BenchOptions& o) {
  zklock::SessionOptions so;
  so.connect = o.connect;
  so.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
  so.heartbeat_interval = std::chrono::milliseconds(o.heartbeat_ms);
  so.connect_timeout = 15s;
  so.metrics = o.metrics;
  // stdout carries the one JSON line; stderr stays quiet unless --verbose.
  so.log_level = o.verbose ? zklock::LogLevel::kWarn : zklock::LogLevel::kError;
  const bool verbose = o.verbose;
  so.log_sink = [verbose](zklock::LogLevel, std::string_view line) {
    if (verbose) std::fprintf(stderr, "zklock: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  return so;
}

std::unique_ptr<zklock::Session> open_session(const BenchOptions& o) {
  if (!o.count_requests) return std::make_unique<zklock::Session>(session_options(o));
  if (!counting_hook()) counting_hook() = std::make_shared<CountingHook>();
  return zklock::testing::open_session(session_options(o), counting_hook());
}

std::string lock_path(const BenchOptions& o) {
  if (!o.path.empty()) return o.path;
  std::random_device rd;
  char buf[96];
  std::snprintf(buf, sizeof buf, "/bench/zklock-%s-%d-%08x", o.mode.c_str(),
                static_cast<int>(getpid()), rd());
  return buf;
}

// Creates `path` (and its parents) as persistent nodes. Returns true if this call created it.
bool ensure_path(zklock::Session& s, const std::string& path) {
  try {
    s.create(path, {}, zklock::CreateMode::kPersistent, /*make_parents=*/true);
    return true;
  } catch (const zklock::Error& e) {
    if (e.errc() == zklock::Errc::node_exists) return false;
    throw;
  }
}

void remove_quietly(zklock::Session& s, const std::string& path) {
  try {
    s.remove(path);
  } catch (const std::exception&) {
  }
}

double process_cpu_us() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto us = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_usec);
  };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

double seconds(std::int64_t from_ns, std::int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

void put_common(JsonLine& out, const BenchOptions& o, int clients, int iters, double secs,
                double ops_per_s, const Summary& lat, std::int64_t overlaps) {
  out.str("impl", "zklock")
      .str("mode", o.mode)
      .integer("clients", clients)
      .integer("iters", iters)
      .number("seconds", secs, 4)
      .number("ops_per_s", ops_per_s, 1)
      .number("p50_us", lat.p50_us, 1)
      .number("p99_us", lat.p99_us, 1)
      .integer("overlaps", overlaps);
}

void put_server(JsonLine& out, const ServerWindow& w, std::optional<double> requests_per_acq,
                std::optional<double> wakeups_per_release,
                std::optional<double> notifications_per_release) {
  out.number("server_requests_per_acq", requests_per_acq, 2)
      .number("wakeups_per_release", wakeups_per_release, 3)
      .number("watch_notifications_per_release", notifications_per_release, 3)
      .str("server_counters", w.ok() ? "mntr" : "unavailable");
}

}  // namespace zklock::bench
