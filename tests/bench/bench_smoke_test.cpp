// tests/bench/bench_smoke_test.cpp: zklock-bench runs every mode on small numbers against the
// test server and prints one well-formed JSON line with the agreed keys, the right counts, and no
// overlapping holders. Nothing here asserts speed.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/files.h"
#include "support/process.h"
#include "support/temp_dir.h"
#include "support/unique_name.h"
#include "support/wait.h"
#include "support/zk_server.h"

namespace zklock::testing {
namespace {

using namespace std::chrono_literals;

// A flat JSON object (what zklock-bench prints): key -> raw value text ("12.5", "\"zklock\"",
// "null"). Returns false on anything else.
bool parse_flat_json(const std::string& text, std::map<std::string, std::string>& out) {
  std::size_t i = 0;
  auto ws = [&] {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  };
  auto string_at = [&](std::string& s) {
    if (i >= text.size() || text[i] != '"') return false;
    ++i;
    s.clear();
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\') ++i;
      if (i < text.size()) s += text[i++];
    }
    if (i >= text.size()) return false;
    ++i;
    return true;
  };
  ws();
  if (i >= text.size() || text[i++] != '{') return false;
  for (;;) {
    ws();
    std::string key;
    if (!string_at(key)) return false;
    ws();
    if (i >= text.size() || text[i++] != ':') return false;
    ws();
    std::string value;
    if (i < text.size() && text[i] == '"') {
      std::string s;
      if (!string_at(s)) return false;
      value = "\"" + s + "\"";
    } else {
      while (i < text.size() && text[i] != ',' && text[i] != '}') value += text[i++];
      while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back())))
        value.pop_back();
      if (value.empty()) return false;
      if (value != "null" && value != "true" && value != "false") {
        char* end = nullptr;
        std::strtod(value.c_str(), &end);
        if (end != value.c_str() + value.size()) return false;
      }
    }
    if (out.count(key)) return false;  // duplicate key
    out[key] = value;
    ws();
    if (i >= text.size()) return false;
    if (text[i] == ',') {
      ++i;
      continue;
    }
    if (text[i] != '}') return false;
    ++i;
    ws();
    return i == text.size();
  }
}

struct BenchRun {
  int status = -1;
  std::string output;  // stdout + stderr
  std::map<std::string, std::string> json;
  bool parsed = false;
};

// zklock-bench with `args`, its stdout and stderr going to `log_path`.
std::unique_ptr<ChildProcess> start_bench(const std::vector<std::string>& args,
                                          const std::string& log_path) {
  std::vector<std::string> argv{ZKLOCK_BENCH_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  SpawnOptions options;
  options.log_path = log_path;
  return std::make_unique<ChildProcess>(argv, options);
}

// Waits for a zklock-bench started by start_bench() and reads its output.
BenchRun finish_bench(ChildProcess& child) {
  BenchRun r;
  auto status = child.wait_exit(240s);
  EXPECT_TRUE(status.has_value()) << "zklock-bench did not finish in time";
  r.status = status ? *status : -1;
  r.output = read_file(child.log_path());
  std::string line = r.output;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  r.parsed = line.find('\n') == std::string::npos && parse_flat_json(line, r.json);
  return r;
}

BenchRun run_bench(const std::vector<std::string>& args) {
  const TempDir dir("zklock-bench-smoke-");
  const auto child = start_bench(args, dir.file("out.txt"));
  return finish_bench(*child);
}

// A lock path of the benchmark's own.
std::string unique_path(const std::string& mode) {
  return "/zklock-test/" + unique_name("bench-smoke-" + mode);
}

double number(const BenchRun& r, const std::string& key) {
  auto it = r.json.find(key);
  if (it == r.json.end() || it->second == "null" || it->second.front() == '"') return -1;
  return std::strtod(it->second.c_str(), nullptr);
}

// Runs one mode and checks what every mode must print. Returns the run for mode-specific checks.
BenchRun run_mode(const std::string& mode, int clients, int iterations,
                  const std::vector<std::string>& extra_keys) {
  const ServerRef server = shared_server();
  std::vector<std::string> args{"--connect", server.connect,          "--mode", mode,
                                "--clients", std::to_string(clients), "--path", unique_path(mode)};
  if (iterations > 0) {
    args.push_back("--iterations");
    args.push_back(std::to_string(iterations));
  }
  BenchRun r = run_bench(args);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
      << describe_wait_status(r.status) << "\n"
      << r.output;
  // Exactly one line, a flat JSON object: stdout is the JSON line, stderr stays quiet.
  EXPECT_TRUE(r.parsed) << "output is not exactly one JSON line:\n" << r.output;
  if (!r.parsed) return r;
  std::vector<std::string> keys{"impl",
                                "mode",
                                "clients",
                                "iters",
                                "seconds",
                                "ops_per_s",
                                "p50_us",
                                "p99_us",
                                "overlaps",
                                "server_requests_per_acq",
                                "wakeups_per_release"};
  keys.insert(keys.end(), extra_keys.begin(), extra_keys.end());
  for (const auto& k : keys)
    EXPECT_TRUE(r.json.count(k)) << "missing key " << k << " in " << r.output;
  EXPECT_EQ(r.json["impl"], "\"zklock\"");
  EXPECT_EQ(r.json["mode"], "\"" + mode + "\"");
  // The counts asked for are the counts reported.
  EXPECT_EQ(r.json["clients"], std::to_string(clients)) << r.output;
  if (iterations > 0) {
    EXPECT_EQ(r.json["iters"], std::to_string(iterations)) << r.output;
  }
  EXPECT_EQ(r.json["overlaps"], "0") << r.output;
  EXPECT_GT(number(r, "seconds"), 0) << r.output;
  EXPECT_GT(number(r, "ops_per_s"), 0) << r.output;
  EXPECT_GT(number(r, "p50_us"), 0) << r.output;
  EXPECT_GE(number(r, "p99_us"), number(r, "p50_us")) << r.output;
  // The test servers whitelist every 4lw, so the server-side figures are there.
  EXPECT_GT(number(r, "server_requests_per_acq"), 0) << r.output;
  EXPECT_GE(number(r, "wakeups_per_release"), 0) << r.output;
  return r;
}

TEST(BenchSmoke, Uncontended) {
  BenchRun r = run_mode("uncontended", 1, 50, {"cpu_us_per_acq"});
  // The whole process's CPU (getrusage) per acquisition: some, for 50 of them.
  EXPECT_GT(number(r, "cpu_us_per_acq"), 0) << r.output;
}

TEST(BenchSmoke, Contended) {
  BenchRun r = run_mode("contended", 4, 10, {"handoff_p50_us", "handoffs"});
  EXPECT_GE(number(r, "handoffs"), 0) << r.output;
}

TEST(BenchSmoke, Queue) {
  // Two rounds: the same eight sessions queue and drain twice.
  BenchRun r = run_mode("queue", 8, 2,
                        {"drain_seconds", "handoff_p50_us", "watch_notifications_per_release"});
  EXPECT_GT(number(r, "drain_seconds"), 0) << r.output;
  EXPECT_GT(number(r, "handoff_p50_us"), 0) << r.output;
  // Eight handoffs happened, each woke someone.
  EXPECT_GT(number(r, "wakeups_per_release"), 0) << r.output;
}

TEST(BenchSmoke, Shared) {
  // Four readers between two writers: a writer's release wakes exactly the readers behind it;
  // released in queue order, the readers wake the second writer once (their last release).
  BenchRun r = run_mode(
      "shared", 4, 5,
      {"writer_release_wakeups", "group_release_wakeups_in_order", "group_release_wakeups_reverse",
       "readers_inside_max", "watch_notifications_per_release"});
  EXPECT_EQ(r.json["readers_inside_max"], "4") << r.output;
  EXPECT_EQ(number(r, "writer_release_wakeups"), 4) << r.output;
  EXPECT_EQ(number(r, "group_release_wakeups_in_order"), 1) << r.output;
  // In reverse order each release is the second writer's predecessor's: one wakeup each.
  EXPECT_EQ(number(r, "group_release_wakeups_reverse"), 4) << r.output;
}

TEST(BenchSmoke, Many) {
  BenchRun r = run_mode(
      "many", 20, 0,
      {"acquisitions_per_s", "bytes_per_lock", "held", "unlock_us_per_lock", "destroy_all_us",
       "server_ephemerals_per_lock", "server_watches_per_lock", "server_data_bytes_per_lock"});
  EXPECT_EQ(r.json["held"], "20");
  EXPECT_GT(number(r, "acquisitions_per_s"), 0) << r.output;
  // On the server, a held lock is its node and nothing else: one ephemeral, no watch (each was
  // first at once, so no predecessor is watched), some bytes of holder data. (Near, not equal:
  // a server given by ZKLOCK_TEST_CONNECT may have other clients' nodes come and go meanwhile.)
  EXPECT_NEAR(number(r, "server_ephemerals_per_lock"), 1, 0.25) << r.output;
  EXPECT_NEAR(number(r, "server_watches_per_lock"), 0, 0.25) << r.output;
  EXPECT_GT(number(r, "server_data_bytes_per_lock"), 0) << r.output;
}

TEST(BenchSmoke, Async) {
  BenchRun r = run_mode("async", 30, 0,
                        {"threads_idle", "async_threads_waiting", "async_rss_kb_per_waiter",
                         "async_acq_per_s", "blocking_threads_waiting", "blocking_acq_per_s"});
  // Waiting requests cost no thread; the blocking form costs one each.
  EXPECT_EQ(number(r, "async_threads_waiting"), number(r, "threads_idle")) << r.output;
  EXPECT_GE(number(r, "blocking_threads_waiting"), number(r, "threads_idle") + 30) << r.output;
  EXPECT_GT(number(r, "async_acq_per_s"), 0) << r.output;
}

TEST(BenchSmoke, Drain) {
  // Forty asynchronous waiters of one Mutex on one session, each acquiring once.
  BenchRun r =
      run_mode("drain", 40, 0,
               {"queue_build_seconds", "drain_seconds", "drain_us_per_waiter",
                "cpu_us_per_waiter_drain", "suspended", "lost", "heartbeats_while_draining"});
  EXPECT_GT(number(r, "drain_us_per_waiter"), 0) << r.output;
  EXPECT_GE(number(r, "cpu_us_per_waiter_drain"), 0) << r.output;
  EXPECT_EQ(r.json["lost"], "0") << r.output;
  // One release per waiter, each waking its successor alone: no herd.
  EXPECT_LT(number(r, "wakeups_per_release"), 2) << r.output;
}

// The number of files in `dir` whose name starts with `prefix`.
int count_files(const std::string& dir, const std::string& prefix) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

TEST(BenchSmoke, Fleet) {
  // A fleet of two processes, two sessions each, on the same two locks for 2 s, started together
  // through the gate as scripts/bench_fleet.sh starts them: each connects, says it is ready, and
  // waits for the go; both then take locks, no holders overlap, and no session failed.
  const ServerRef server = shared_server();
  const TempDir dir("zklock-bench-fleet-");
  const std::string gate = dir.file("gate");
  std::filesystem::create_directories(gate);
  const std::string path = unique_path("fleet");
  std::vector<std::unique_ptr<ChildProcess>> fleet;
  fleet.reserve(2);
  for (int p = 0; p < 2; ++p) {
    fleet.push_back(start_bench({"--connect", server.connect, "--mode", "fleet", "--clients", "2",
                                 "--locks", "2", "--seconds", "2", "--path", path, "--gate", gate,
                                 "--latency-file", dir.file("lat." + std::to_string(p))},
                                dir.file("out." + std::to_string(p))));
  }
  ASSERT_TRUE(wait_until([&] { return count_files(gate, "ready-") == 2; }, 120s))
      << "the fleet's processes did not both get ready:\n"
      << read_file(dir.file("out.0")) << read_file(dir.file("out.1"));
  write_file(gate + "/go", "");
  for (int p = 0; p < 2; ++p) {
    BenchRun r = finish_bench(*fleet[static_cast<std::size_t>(p)]);
    EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0)
        << describe_wait_status(r.status) << "\n"
        << r.output;
    ASSERT_TRUE(r.parsed) << "output is not exactly one JSON line:\n" << r.output;
    EXPECT_EQ(r.json["mode"], "\"fleet\"");
    EXPECT_EQ(r.json["clients"], "2");
    EXPECT_EQ(r.json["locks"], "2");
    EXPECT_EQ(r.json["errors"], "0") << r.output;
    EXPECT_EQ(r.json["overlaps"], "0") << r.output;
    const double acquisitions = number(r, "acquisitions");
    EXPECT_GT(acquisitions, 0) << r.output;
    // The loop ran for --seconds from the go (give or take the last acquisition).
    EXPECT_GE(number(r, "seconds"), 2) << r.output;
    EXPECT_GT(number(r, "cpu_us_per_acq"), 0) << r.output;
    EXPECT_GE(number(r, "gate_wait_s"), 0) << r.output;
    EXPECT_GE(number(r, "p99_us"), number(r, "p50_us")) << r.output;
    // One wait per acquisition in the latency file, for the fleet's percentiles.
    EXPECT_EQ(static_cast<double>(lines_of(read_file(dir.file("lat." + std::to_string(p)))).size()),
              acquisitions);
  }
}

TEST(BenchSmoke, BadArgumentsExitWithTwo) {
  BenchRun r = run_bench({"--mode", "sideways"});
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << describe_wait_status(r.status);
  r = run_bench({"--clients", "zero"});
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << describe_wait_status(r.status);
  r = run_bench({"--mode", "fleet", "--locks", "0"});
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << describe_wait_status(r.status);
}

}  // namespace
}  // namespace zklock::testing
