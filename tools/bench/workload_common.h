// tools/bench/workload_common.h: what zklock-bench's workloads share - their sessions (and the
// --count-requests hook), lock paths, the server-side window of figures, the worker threads and
// the in-process exclusion check - and the common keys of the JSON line.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench_util.h"
#include "server_stats.h"
#include "workloads.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock::bench {

// --count-requests: every request zklock sends passes through the Session's FaultHook (the test
// seam of zklock/testing/fault_hook.h); this one lets everything pass and counts by operation.
class CountingHook final : public zklock::testing::FaultHook {
 public:
  static constexpr int kOps = 9;
  zklock::testing::FaultDecision on_request(zklock::testing::Operation op,
                                            std::string_view) override {
    const auto i = static_cast<std::size_t>(op);
    if (i < kOps) counts_[i].fetch_add(1, std::memory_order_relaxed);
    return zklock::testing::FaultDecision::pass();
  }
  std::array<std::int64_t, kOps> snapshot() const {
    std::array<std::int64_t, kOps> out{};
    for (int i = 0; i < kOps; ++i)
      out[static_cast<std::size_t>(i)] = counts_[static_cast<std::size_t>(i)].load();
    return out;
  }

 private:
  std::array<std::atomic<std::int64_t>, kOps> counts_{};
};
// The hook --count-requests installs in every session (null without it).
std::shared_ptr<CountingHook>& counting_hook();

// The options of every session of a run: timeouts and a quiet console.
zklock::SessionOptions session_options(const BenchOptions& o);

// A session with those options; with --count-requests, its requests pass the counting hook.
std::unique_ptr<zklock::Session> open_session(const BenchOptions& o);

// --path, else a fresh /bench/zklock-<mode>-<pid>-<random>.
std::string lock_path(const BenchOptions& o);

// Creates `path` (and its parents) as persistent nodes. Returns true if this call created it.
bool ensure_path(zklock::Session& s, const std::string& path);

// Removes `path`, ignoring every failure (cleanup at the end of a run).
void remove_quietly(zklock::Session& s, const std::string& path);

// Seconds between two now_ns() readings.
double seconds(std::int64_t from_ns, std::int64_t to_ns);
/// This process's CPU time so far (user + system, getrusage), in microseconds: a workload's CPU
/// per acquisition is the difference over its loop divided by its acquisitions (whole process:
/// every zklock and C client thread).
double process_cpu_us();

// Server-side figures over a window: zk_packets_received and watch notifications between two
// mntr readings, minus what the benchmark itself sent (its mntr reads, polls and sync reads).
struct ServerWindow {
  explicit ServerWindow(const std::string& connect) : stats(connect) {}
  void begin() {
    if (counting_hook()) hook_before = counting_hook()->snapshot();
    before = stats.read();
  }
  // An extra mntr read inside the window (its own packet is subtracted).
  ServerCounters read_inside() {
    ++inside_reads;
    return stats.read();
  }
  void end() {
    if (counting_hook()) hook_after = counting_hook()->snapshot();
    after = stats.read();
  }
  // Client-side requests per acquisition by operation (--count-requests), including the bench's
  // own sync reads (get_data) and polls (get_children) when it sends them through a Session.
  void put_client_requests(JsonLine& out, double n) const {
    if (!counting_hook() || n <= 0) return;
    static const char* const names[CountingHook::kOps] = {
        "req_create_per_acq",   "req_delete_per_acq",         "req_get_data_per_acq",
        "req_set_data_per_acq", "req_get_children_per_acq",   "req_exists_per_acq",
        "req_multi_per_acq",    "req_remove_watches_per_acq", "req_sync_per_acq"};
    for (std::size_t i = 0; i < CountingHook::kOps; ++i) {
      out.number(names[i], static_cast<double>(hook_after[i] - hook_before[i]) / n, 3);
    }
  }
  bool ok() const { return before.ok && after.ok; }
  std::optional<double> requests_per(double n, std::int64_t own_requests) const {
    if (!ok() || n <= 0) return std::nullopt;
    const std::int64_t packets = after.packets_received - before.packets_received -
                                 stats.cost_per_read() * (1 + inside_reads) - own_requests;
    return static_cast<double>(packets) / n;
  }
  std::optional<double> notifications_per(double n) const {
    if (!ok() || n <= 0) return std::nullopt;
    return static_cast<double>(after.watch_notifications - before.watch_notifications) / n;
  }

  ServerStats stats;
  ServerCounters before, after;
  std::array<std::int64_t, CountingHook::kOps> hook_before{}, hook_after{};
  int inside_reads = 0;
};

// The lock path of a run (lock_path) and the run's own session on it: the path is created, with
// its parents, when missing; with --cleanup, the run removes it at the end if it created it.
class RunPath {
 public:
  explicit RunPath(const BenchOptions& o)
      : cleanup_(o.cleanup),
        session_(open_session(o)),
        path_(lock_path(o)),
        created_(ensure_path(*session_, path_)) {}
  ~RunPath() {
    if (cleanup_ && created_) remove_quietly(*session_, path_);
  }
  RunPath(const RunPath&) = delete;
  RunPath& operator=(const RunPath&) = delete;

  zklock::Session& session() { return *session_; }
  const std::string& path() const { return path_; }

 private:
  const bool cleanup_;
  std::unique_ptr<zklock::Session> session_;
  const std::string path_;
  const bool created_;
};

// Where a mode's run class starts (the queue and shared modes derive from it): its options, its
// number of clients and of iterations - the options', else the mode's defaults - and its lock path
// with the run's own session on it (RunPath).
class ModeRun {
 protected:
  ModeRun(const BenchOptions& o, int default_clients, int default_iterations)
      : o_(o),
        n_(o.clients > 0 ? o.clients : default_clients),
        iterations_(o.iterations > 0 ? o.iterations : default_iterations),
        run_path_(o),
        path_(run_path_.path()),
        main_session_(run_path_.session()) {}

  const BenchOptions& o_;
  const int n_;
  const int iterations_;
  RunPath run_path_;
  const std::string& path_;        // run_path_'s
  zklock::Session& main_session_;  // run_path_'s
};

// The keys every mode prints.
void put_common(JsonLine& out, const BenchOptions& o, int clients, int iters, double secs,
                double ops_per_s, const Summary& lat, std::int64_t overlaps);

// wakeups_per_release: watch notifications delivered to waiting contenders per release.
// watch_notifications_per_release: every watch notification the server sent, per release (also
// those to a releasing session watching its own node). Equal unless the mode can tell them apart.
void put_server(JsonLine& out, const ServerWindow& w, std::optional<double> requests_per_acq,
                std::optional<double> wakeups_per_release,
                std::optional<double> notifications_per_release);

// Sessions opened in parallel by worker threads, kept open by the main thread until the "after"
// readings are taken.
struct Workers {
  explicit Workers(int n) : sessions(static_cast<std::size_t>(n)) {}
  std::vector<std::unique_ptr<zklock::Session>> sessions;
  std::vector<std::thread> threads;
  StartGate gate;
  FirstError error;

  // Opens session `i` (on the calling worker thread, so that they connect in parallel).
  // Returns it, or nullptr after recording the failure in `error`.
  zklock::Session* open_session(int i, const BenchOptions& o) {
    auto& session = sessions[static_cast<std::size_t>(i)];
    try {
      session = bench::open_session(o);
    } catch (const std::exception& e) {
      error.set(std::string("session: ") + e.what());
    }
    return session.get();
  }
  void join() {
    for (auto& t : threads) t.join();
    threads.clear();
  }
  // One read per session: answered after everything that session sent before (its last delete).
  std::int64_t sync_all(const std::string& path) {
    std::int64_t sent = 0;
    for (auto& s : sessions) {
      if (!s) continue;
      try {
        ++sent;
        (void)s->get(path);
      } catch (const std::exception&) {
      }
    }
    return sent;
  }
};

// Takes and releases a lock, checking exclusion in-process (a second thread inside counts as an
// overlap), and records when each holder released, so the next one can measure its handoff.
class LockTurns {
 public:
  struct Turn {
    std::int64_t called_ns;            // lock() called
    std::int64_t acquired_ns;          // lock() returned
    std::int64_t previous_release_ns;  // when the holder before started its unlock(); 0: none
  };

  Turn take(zklock::Mutex& mutex) {
    const std::int64_t called = now_ns();
    mutex.lock();
    const std::int64_t acquired = now_ns();
    const std::int64_t previous_release = last_release_ns_.load();
    if (inside_.fetch_add(1) != 0) overlaps_.fetch_add(1);
    inside_.fetch_sub(1);
    last_release_ns_.store(now_ns());
    mutex.unlock();
    return {called, acquired, previous_release};
  }
  // For a release outside take() (the queue mode's main thread).
  void released_at(std::int64_t ns) { last_release_ns_.store(ns); }
  std::int64_t overlaps() const { return overlaps_.load(); }

 private:
  std::atomic<int> inside_{0};
  std::atomic<std::int64_t> overlaps_{0};
  std::atomic<std::int64_t> last_release_ns_{0};
};

}  // namespace zklock::bench
