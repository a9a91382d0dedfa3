// tools/bench/fleet_workload.cpp: the fleet mode - one process of many taking the same locks.
// `clients` sessions, a thread each, loop for `seconds`: pick one of `locks` lock paths at random,
// lock(), unlock(). Every process of a fleet is given the same --path, so the sessions of all of
// them contend on the same L locks (scripts/bench_fleet.sh runs P such processes against a
// three-node ensemble and adds their lines up, with the servers' figures around them).
//
// The processes of a fleet must loop over the same window, not one after the other: with --gate
// DIR each process connects its sessions, writes DIR/ready-<pid>, and starts when DIR/go appears
// (the script creates it once every process is ready). The line gives this process's acquisitions,
// waits (lock() called -> returned) and CPU; with --latency-file, every wait, so that the script
// takes the fleet's percentiles over all of them rather than a median of per-process ones.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "workload_common.h"
#include "workloads.h"
#include "zklock/zklock.h"

namespace zklock::bench {
namespace {

bool file_exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// --gate DIR: tells the fleet's driver this process is ready, then waits for its go. Returns how
// long this process waited (the spread of the fleet's start-up, for the line).
double pass_gate(const std::string& dir) {
  if (dir.empty()) return 0;
  const std::string ready = dir + "/ready-" + std::to_string(getpid());
  if (!std::ofstream(ready)) throw std::runtime_error("cannot write " + ready);
  const std::int64_t t0 = now_ns();
  poll_until([&] { return file_exists(dir + "/go"); }, std::chrono::seconds(600),
             "no go from the fleet's driver in 600 s", std::chrono::milliseconds(1));
  return seconds(t0, now_ns());
}

}  // namespace

void run_fleet(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 10;
  const int locks = o.locks > 0 ? o.locks : 20;
  const int duration_s = o.seconds > 0 ? o.seconds : 10;
  const std::string base = lock_path(o);
  std::vector<std::string> paths;
  {
    // Untimed, on a session of its own that is closed before the window: the window measures
    // acquisitions, not the first process creating the lock paths, and the servers see the
    // fleet's sessions only (an idle extra session per process would add its heartbeats).
    const auto setup = open_session(o);
    for (int k = 0; k < locks; ++k) {
      const std::string number = std::to_string(k);
      std::string path = base;
      path.append("/lock-").append(number.size() < 3 ? 3 - number.size() : 0, '0').append(number);
      ensure_path(*setup, path);
      paths.push_back(std::move(path));
    }
  }

  // Exclusion checked per lock among this process's sessions (the other processes' holders are
  // out of sight: overlaps is a lower bound).
  std::vector<LockTurns> turns(static_cast<std::size_t>(locks));
  std::vector<std::vector<std::int64_t>> lat(static_cast<std::size_t>(n));
  std::vector<std::int64_t> end_ns(static_cast<std::size_t>(n), 0);
  std::atomic<std::int64_t> deadline_ns{0};
  std::atomic<int> lock_errors{0};
  FirstError first_lock_error;
  Workers workers(n);
  for (int i = 0; i < n; ++i) {
    workers.threads.emplace_back([&, i] {
      zklock::Session* session = workers.open_session(i, o);
      // One Mutex per lock path per session, made before the window starts.
      std::vector<std::unique_ptr<zklock::Mutex>> mutexes;
      try {
        if (session != nullptr) {
          for (const auto& p : paths)
            mutexes.push_back(std::make_unique<zklock::Mutex>(*session, p));
        }
      } catch (const std::exception& e) {
        workers.error.set(std::string("mutex: ") + e.what());
      }
      workers.gate.arrive_and_wait();
      if (session == nullptr || workers.error.any()) return;
      // A seed per process and session: the fleet's sessions pick different sequences of locks.
      std::mt19937 pick(static_cast<unsigned>(getpid()) * 7919U + static_cast<unsigned>(i));
      std::uniform_int_distribution<int> which(0, locks - 1);
      auto& mine = lat[static_cast<std::size_t>(i)];
      mine.reserve(4096);
      // A lock() that throws (the session lost its server for too long, under the fleet's load)
      // ends this session's loop and is counted, not fatal: the other sessions' figures stand,
      // and the line says how many sessions dropped out (errors, first_error).
      try {
        const std::int64_t deadline = deadline_ns.load();
        while (now_ns() < deadline && !workers.error.any()) {
          const auto k = static_cast<std::size_t>(which(pick));
          const LockTurns::Turn turn = turns[k].take(*mutexes[k]);
          mine.push_back(turn.acquired_ns - turn.called_ns);
        }
      } catch (const std::exception& e) {
        lock_errors.fetch_add(1);
        first_lock_error.set(std::string("lock: ") + e.what());
      }
      end_ns[static_cast<std::size_t>(i)] = now_ns();
    });
  }
  workers.gate.wait_ready(n);
  double gate_wait_s = 0;
  try {
    gate_wait_s = pass_gate(o.gate_dir);
  } catch (const std::exception& e) {
    workers.error.set(e.what());
  }
  // --count-requests: this process's requests by operation over its window (the hook's counts;
  // the mntr readings that come with the window are taken only then: the fleet's driver reads the
  // servers itself).
  std::optional<ServerWindow> w;
  if (o.count_requests) w.emplace(o.connect);
  if (w) w->begin();
  const double cpu0 = process_cpu_us();
  const std::int64_t t0 = now_ns();
  deadline_ns.store(t0 + static_cast<std::int64_t>(duration_s) * 1000000000);
  workers.gate.open();
  workers.join();
  const double cpu1 = process_cpu_us();
  if (w) w->end();
  if (workers.error.any()) throw std::runtime_error(workers.error.get());
  std::int64_t t1 = t0;
  for (auto e : end_ns) t1 = std::max(t1, e);

  std::vector<std::int64_t> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  if (!o.latency_file.empty()) {
    std::ofstream f(o.latency_file, std::ios::trunc);
    for (auto ns : all) f << ns / 1000 << '\n';
    if (!f) throw std::runtime_error("cannot write " + o.latency_file);
  }
  // The lock paths are shared with the fleet's other processes, which may still be using them:
  // only a run on its own fresh path (no --path) removes them.
  if (o.path.empty() && o.cleanup) {
    zklock::Session& s = *workers.sessions.front();
    for (const auto& p : paths) remove_quietly(s, p);
    remove_quietly(s, base);
  }
  workers.sessions.clear();

  const auto acquisitions = static_cast<std::int64_t>(all.size());
  std::int64_t overlaps = 0;
  for (const auto& t : turns) overlaps += t.overlaps();
  const double secs = seconds(t0, t1);
  put_common(out, o, n, static_cast<int>(acquisitions / n), secs,
             static_cast<double>(acquisitions) / secs, summarize(all), overlaps);
  out.integer("locks", locks)
      .integer("acquisitions", acquisitions)
      .number("cpu_us", cpu1 - cpu0, 0)
      .number("cpu_us_per_acq",
              acquisitions > 0 ? (cpu1 - cpu0) / static_cast<double>(acquisitions) : 0.0, 1)
      .number("gate_wait_s", gate_wait_s, 3)
      .integer("errors", lock_errors.load());
  if (first_lock_error.any()) out.str("first_error", first_lock_error.get());
  if (w) w->put_client_requests(out, static_cast<double>(acquisitions));
}

}  // namespace zklock::bench
