#include "workloads.h"

#include <malloc.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cinttypes>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "server_stats.h"
#include "zklock/testing/fault_hook.h"
#include "zklock/zklock.h"

namespace zklock_bench {
namespace {

using namespace std::chrono_literals;

// --count-requests: every request zklock sends passes through the Session's FaultHook (the test
// seam of zklock/testing/fault_hook.h); this one lets everything pass and counts by operation.
class CountingHook final : public zklock::testing::FaultHook {
 public:
  static constexpr int kOps = 9;
  zklock::testing::FaultDecision on_request(zklock::testing::Operation op, std::string_view) override {
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
std::shared_ptr<CountingHook> g_counting_hook;

zklock::SessionOptions session_options(const BenchOptions& o) {
  zklock::SessionOptions so;
  so.connect = o.connect;
  so.session_timeout = std::chrono::milliseconds(o.session_timeout_ms);
  so.connect_timeout = 15s;
  // stdout carries the one JSON line; stderr stays quiet unless --verbose.
  so.log_level = o.verbose ? zklock::LogLevel::kWarn : zklock::LogLevel::kError;
  const bool verbose = o.verbose;
  so.log_sink = [verbose](zklock::LogLevel, std::string_view line) {
    if (verbose) std::fprintf(stderr, "zklock: %.*s\n", static_cast<int>(line.size()), line.data());
  };
  return so;
}

// A Session with the options above; with --count-requests, its requests pass the counting hook.
std::unique_ptr<zklock::Session> open_session(const BenchOptions& o) {
  if (!o.count_requests) return std::make_unique<zklock::Session>(session_options(o));
  if (!g_counting_hook) g_counting_hook = std::make_shared<CountingHook>();
  return zklock::testing::open_session(session_options(o), g_counting_hook);
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

double seconds(std::int64_t from_ns, std::int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e9;
}

// Server-side figures over a window: zk_packets_received and watch notifications between two
// mntr readings, minus what the benchmark itself sent (its mntr reads, polls and sync reads).
struct ServerWindow {
  explicit ServerWindow(const std::string& connect) : stats(connect) {}
  void begin() {
    if (g_counting_hook) hook_before = g_counting_hook->snapshot();
    before = stats.read();
  }
  // An extra mntr read inside the window (its own packet is subtracted).
  ServerCounters read_inside() {
    ++inside_reads;
    return stats.read();
  }
  void end() {
    if (g_counting_hook) hook_after = g_counting_hook->snapshot();
    after = stats.read();
  }
  // Client-side requests per acquisition by operation (--count-requests), including the bench's
  // own sync reads (get_data) and polls (get_children) when it sends them through a Session.
  void put_client_requests(JsonLine& out, double n) const {
    if (!g_counting_hook || n <= 0) return;
    static const char* const names[CountingHook::kOps] = {
        "req_create_per_acq",   "req_delete_per_acq",        "req_get_data_per_acq",
        "req_set_data_per_acq", "req_get_children_per_acq",  "req_exists_per_acq",
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

// wakeups_per_release: watch notifications delivered to waiting contenders per release.
// watch_notifications_per_release: every watch notification the server sent, per release (also
// those to a releasing session watching its own node). Equal unless the mode can tell them apart.
void put_server(JsonLine& out, const ServerWindow& w, std::optional<double> requests_per_acq,
                std::optional<double> wakeups_per_release,
                std::optional<double> notifications_per_release) {
  out.number("server_requests_per_acq", requests_per_acq, 2)
      .number("wakeups_per_release", wakeups_per_release, 3)
      .number("watch_notifications_per_release", notifications_per_release, 3)
      .str("server_counters", w.ok() ? "mntr" : "unavailable");
}

// Sessions opened in parallel by worker threads, kept open by the main thread until the "after"
// readings are taken.
struct Workers {
  explicit Workers(int n) : sessions(static_cast<std::size_t>(n)) {}
  std::vector<std::unique_ptr<zklock::Session>> sessions;
  std::vector<std::thread> threads;
  StartGate gate;
  FirstError error;

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

std::int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<std::int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

std::int64_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  return static_cast<std::int64_t>(mallinfo2().uordblks);
#else
  return static_cast<std::int64_t>(static_cast<unsigned>(mallinfo().uordblks));
#endif
}

}  // namespace

// ------------------------------------------------------------------------------------------------

void run_uncontended(const BenchOptions& o, JsonLine& out) {
  const int iters = o.iterations > 0 ? o.iterations : 2000;
  const std::string path = lock_path(o);
  const auto session_owner = open_session(o);
  zklock::Session& session = *session_owner;
  const bool created = ensure_path(session, path);
  std::vector<std::int64_t> lat;
  lat.reserve(static_cast<std::size_t>(iters));
  std::atomic<int> inside{0};
  std::int64_t overlaps = 0;
  ServerWindow w(o.connect);
  {
    zklock::Mutex mutex(session, path);
    w.begin();
    const std::int64_t t0 = now_ns();
    for (int i = 0; i < iters; ++i) {
      const std::int64_t a = now_ns();
      mutex.lock();
      lat.push_back(now_ns() - a);
      if (inside.fetch_add(1) != 0) ++overlaps;
      inside.fetch_sub(1);
      mutex.unlock();
    }
    const std::int64_t t1 = now_ns();
    (void)session.get(path);  // sync: the last delete has reached the server
    w.end();
    const double secs = seconds(t0, t1);
    put_common(out, o, 1, iters, secs, iters / secs, summarize(lat), overlaps);
    put_server(out, w, w.requests_per(iters, 1), w.notifications_per(iters),
               w.notifications_per(iters));
    w.put_client_requests(out, iters);
  }
  if (o.cleanup && created) remove_quietly(session, path);
}

// ------------------------------------------------------------------------------------------------

void run_contended(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 16;
  const int iters = o.iterations > 0 ? o.iterations : 60;
  const std::string path = lock_path(o);
  const auto admin_owner = open_session(o);
  zklock::Session& admin = *admin_owner;
  const bool created = ensure_path(admin, path);

  std::atomic<int> inside{0};
  std::atomic<std::int64_t> overlaps{0};
  std::atomic<std::int64_t> last_unlock_ns{0};
  std::vector<std::vector<std::int64_t>> lat(static_cast<std::size_t>(n)),
      handoff(static_cast<std::size_t>(n));
  std::vector<std::int64_t> end_ns(static_cast<std::size_t>(n), 0);
  Workers workers(n);
  for (int i = 0; i < n; ++i) {
    workers.threads.emplace_back([&, i] {
      auto& session = workers.sessions[static_cast<std::size_t>(i)];
      try {
        session = open_session(o);
      } catch (const std::exception& e) {
        workers.error.set(std::string("session: ") + e.what());
      }
      workers.gate.arrive_and_wait();
      if (!session || workers.error.any()) return;
      auto& my_lat = lat[static_cast<std::size_t>(i)];
      auto& my_handoff = handoff[static_cast<std::size_t>(i)];
      my_lat.reserve(static_cast<std::size_t>(iters));
      my_handoff.reserve(static_cast<std::size_t>(iters));
      try {
        zklock::Mutex mutex(*session, path);
        for (int k = 0; k < iters; ++k) {
          const std::int64_t call = now_ns();
          mutex.lock();
          const std::int64_t ret = now_ns();
          my_lat.push_back(ret - call);
          // A handoff: the previous holder's unlock() started while we were already waiting.
          const std::int64_t released = last_unlock_ns.load();
          if (released != 0 && call < released) my_handoff.push_back(ret - released);
          if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
          inside.fetch_sub(1);
          last_unlock_ns.store(now_ns());
          mutex.unlock();
        }
      } catch (const std::exception& e) {
        workers.error.set(std::string("lock: ") + e.what());
      }
      end_ns[static_cast<std::size_t>(i)] = now_ns();
    });
  }
  workers.gate.wait_ready(n);
  ServerWindow w(o.connect);
  w.begin();
  const std::int64_t t0 = now_ns();
  workers.gate.open();
  workers.join();
  if (workers.error.any()) throw std::runtime_error(workers.error.get());
  std::int64_t t1 = t0;
  for (auto e : end_ns) t1 = std::max(t1, e);
  const std::int64_t syncs = workers.sync_all(path);
  w.end();
  workers.sessions.clear();

  std::vector<std::int64_t> all_lat, all_handoff;
  for (auto& v : lat) all_lat.insert(all_lat.end(), v.begin(), v.end());
  for (auto& v : handoff) all_handoff.insert(all_handoff.end(), v.begin(), v.end());
  const double acquisitions = static_cast<double>(n) * iters;
  const double secs = seconds(t0, t1);
  const Summary h = summarize(all_handoff);
  put_common(out, o, n, iters, secs, acquisitions / secs, summarize(all_lat), overlaps.load());
  out.number("handoff_p50_us", h.p50_us, 1)
      .number("handoff_p99_us", h.p99_us, 1)
      .integer("handoffs", static_cast<std::int64_t>(h.count));
  put_server(out, w, w.requests_per(acquisitions, syncs), w.notifications_per(acquisitions),
             w.notifications_per(acquisitions));
  w.put_client_requests(out, acquisitions);
  if (o.cleanup && created) remove_quietly(admin, path);
}

// ------------------------------------------------------------------------------------------------

void run_queue(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 16;
  const int rounds = o.iterations > 0 ? o.iterations : 1;
  const std::string path = lock_path(o);
  const auto main_session_owner = open_session(o);
  zklock::Session& main_session = *main_session_owner;
  const bool created = ensure_path(main_session, path);
  zklock::Mutex main_mutex(main_session, path);

  std::atomic<int> inside{0};
  std::atomic<std::int64_t> overlaps{0};
  std::atomic<std::int64_t> last_unlock_ns{0};
  const auto slots = static_cast<std::size_t>(n) * static_cast<std::size_t>(rounds);
  std::vector<std::int64_t> lat(slots, 0), handoff(slots, 0), end_ns(slots, 0);
  // One start gate per round; a round ends when every waiter has released.
  std::vector<std::unique_ptr<StartGate>> gates;
  for (int r = 0; r < rounds; ++r) gates.push_back(std::make_unique<StartGate>());
  std::mutex done_mutex;
  std::condition_variable done_cv;
  int done = 0;
  Workers workers(n);
  for (int i = 0; i < n; ++i) {
    workers.threads.emplace_back([&, i] {
      auto& session = workers.sessions[static_cast<std::size_t>(i)];
      try {
        session = open_session(o);
      } catch (const std::exception& e) {
        workers.error.set(std::string("session: ") + e.what());
      }
      std::unique_ptr<zklock::Mutex> mutex;
      if (session) mutex = std::make_unique<zklock::Mutex>(*session, path);
      for (int r = 0; r < rounds; ++r) {
        gates[static_cast<std::size_t>(r)]->arrive_and_wait();
        const std::size_t slot =
            static_cast<std::size_t>(r) * static_cast<std::size_t>(n) + static_cast<std::size_t>(i);
        if (mutex && !workers.error.any()) {
          try {
            const std::int64_t call = now_ns();
            mutex->lock();
            const std::int64_t ret = now_ns();
            lat[slot] = ret - call;
            handoff[slot] = ret - last_unlock_ns.load();  // everyone was waiting
            if (inside.fetch_add(1) != 0) overlaps.fetch_add(1);
            inside.fetch_sub(1);
            last_unlock_ns.store(now_ns());
            mutex->unlock();
          } catch (const std::exception& e) {
            workers.error.set(std::string("lock: ") + e.what());
          }
        }
        end_ns[slot] = now_ns();
        std::lock_guard lock(done_mutex);
        ++done;
        done_cv.notify_all();
      }
    });
  }
  auto abort_rounds = [&](int from_round, const std::string& why) {
    workers.error.set(why);
    for (int r = from_round; r < rounds; ++r) gates[static_cast<std::size_t>(r)]->open();
    workers.join();
    throw std::runtime_error(workers.error.get());
  };
  gates[0]->wait_ready(n);
  if (workers.error.any()) abort_rounds(0, workers.error.get());

  ServerWindow w(o.connect);
  // Background traffic of the n+1 idle sessions (heartbeats, pings), to tell it apart.
  std::optional<double> idle_packets_per_s;
  {
    const ServerCounters a = w.stats.read();
    std::this_thread::sleep_for(1s);
    const ServerCounters b = w.stats.read();
    if (a.ok && b.ok)
      idle_packets_per_s =
          static_cast<double>(b.packets_received - a.packets_received - w.stats.cost_per_read());
  }

  std::vector<double> drains, builds;
  std::int64_t packets = 0, notifications = 0, self_watches = 0;
  double window_secs = 0;
  bool server_ok = true, self_ok = true;
  std::array<std::int64_t, CountingHook::kOps> hook_total{};
  for (int r = 0; r < rounds; ++r) {
    main_mutex.lock();
    gates[static_cast<std::size_t>(r)]->wait_ready(n);
    w.inside_reads = 0;
    w.begin();
    const std::int64_t q0 = now_ns();
    gates[static_cast<std::size_t>(r)]->open();
    // Queued = all n nodes exist and all n waiters have their predecessor watch set.
    std::int64_t polls = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(60 + n / 4);
    for (;;) {
      ++polls;
      const auto kids = main_session.children(path);
      if (kids && kids->size() >= static_cast<std::size_t>(n) + 1) break;
      if (workers.error.any() || Clock::now() > deadline) {
        main_mutex.unlock();
        abort_rounds(r + 1,
                     workers.error.any() ? workers.error.get() : "queue did not build in time");
      }
      std::this_thread::sleep_for(10ms);
    }
    if (w.before.ok) {
      while (Clock::now() < deadline) {
        const ServerCounters c = w.read_inside();
        if (!c.ok || c.watch_count - w.before.watch_count >= n) break;
        std::this_thread::sleep_for(10ms);
      }
    } else {
      std::this_thread::sleep_for(200ms);
    }
    // The first waiter behind a holder also watches its own node (zklock's fast handoff); that
    // watch fires when it releases, at itself. Counted here, taken out of the waiters' wakeups.
    std::optional<std::int64_t> self;
    if (w.before.ok) {
      self = w.stats.self_watches(path + "/");
      w.inside_reads += 2;  // wchc + dump
    }
    const std::int64_t t_release = now_ns();
    builds.push_back(seconds(q0, t_release));
    last_unlock_ns.store(t_release);
    main_mutex.unlock();
    {
      std::unique_lock lock(done_mutex);
      done_cv.wait(lock, [&] { return done >= n * (r + 1); });
    }
    if (workers.error.any()) abort_rounds(r + 1, workers.error.get());
    std::int64_t t_end = t_release;
    for (int i = 0; i < n; ++i)
      t_end = std::max(t_end, end_ns[static_cast<std::size_t>(r * n + i)]);
    drains.push_back(seconds(t_release, t_end));
    const std::int64_t syncs = workers.sync_all(path) + 1;
    (void)main_session.get(path);
    w.end();
    window_secs += seconds(q0, now_ns());
    server_ok = server_ok && w.ok();
    self_ok = self_ok && self.has_value();
    if (w.ok()) {
      packets += w.after.packets_received - w.before.packets_received -
                 w.stats.cost_per_read() * (1 + w.inside_reads) - polls - syncs;
      notifications += w.after.watch_notifications - w.before.watch_notifications;
    }
    if (self) self_watches += *self;
    for (std::size_t k = 0; k < hook_total.size(); ++k)
      hook_total[k] += w.hook_after[k] - w.hook_before[k];
  }
  workers.join();
  workers.sessions.clear();

  std::vector<double> sorted = drains;
  std::sort(sorted.begin(), sorted.end());
  const double drain = sorted[sorted.size() / 2];
  std::sort(builds.begin(), builds.end());
  put_common(out, o, n, rounds, drain, n / drain, summarize(lat), overlaps.load());
  const Summary h = summarize(handoff);
  out.number("drain_seconds", drain, 4)
      .number("drain_seconds_min", sorted.front(), 4)
      .number("drain_seconds_max", sorted.back(), 4)
      .number("queue_build_seconds", builds[builds.size() / 2], 4)
      .number("handoff_p50_us", h.p50_us, 1)
      .number("handoff_p99_us", h.p99_us, 1);
  // Per round, n handoffs (main -> first waiter -> ... -> last waiter); the last release wakes
  // nobody.
  const double acquisitions = static_cast<double>(n) * rounds;
  std::optional<double> requests, all_notifications, wakeups;
  if (server_ok) {
    requests = static_cast<double>(packets) / acquisitions;
    all_notifications = static_cast<double>(notifications) / acquisitions;
    wakeups = self_ok ? static_cast<double>(notifications - self_watches) / acquisitions
                      : *all_notifications;
  }
  put_server(out, w, requests, wakeups, all_notifications);
  if (g_counting_hook) {
    w.hook_before = {};
    w.hook_after = hook_total;
    w.put_client_requests(out, acquisitions);
  }
  if (self_ok) {
    out.integer("self_watch_notifications", self_watches);
  } else {
    out.null("self_watch_notifications");
  }
  out.number("idle_packets_per_s", idle_packets_per_s, 1);
  std::optional<double> net;
  if (requests && idle_packets_per_s)
    net = *requests - *idle_packets_per_s * window_secs / acquisitions;
  out.number("server_requests_per_acq_excl_idle", net, 2);
  if (o.cleanup && created) remove_quietly(main_session, path);
}

// ------------------------------------------------------------------------------------------------

void run_many(const BenchOptions& o, JsonLine& out) {
  // All threads in the main arena, so that mallinfo2() sees the C client's allocations too.
  mallopt(M_ARENA_MAX, 1);
  const int n = o.clients > 0 ? o.clients : 1000;
  const std::string base = lock_path(o);
  const auto session_owner = open_session(o);
  zklock::Session& session = *session_owner;
  const bool created = ensure_path(session, base);
  std::vector<std::string> paths;
  paths.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "/lock-%06d", i);
    paths.push_back(base + buf);
  }
  // The lock paths exist beforehand (untimed): the run measures acquisitions, not parent creation.
  auto for_all_paths = [&](const std::function<void(const std::string&)>& fn) {
    FirstError error;
    std::vector<std::thread> threads;
    const int parts = 8;
    for (int t = 0; t < parts; ++t) {
      threads.emplace_back([&, t] {
        try {
          for (int i = t; i < n; i += parts) fn(paths[static_cast<std::size_t>(i)]);
        } catch (const std::exception& e) {
          error.set(e.what());
        }
      });
    }
    for (auto& th : threads) th.join();
    if (error.any()) throw std::runtime_error(error.get());
  };
  std::atomic<int> created_paths{0};
  for_all_paths([&](const std::string& p) {
    try {
      session.create(p);
      created_paths.fetch_add(1);
    } catch (const zklock::Error& e) {
      if (e.errc() != zklock::Errc::node_exists) throw;
    }
  });

  std::vector<std::unique_ptr<zklock::Mutex>> mutexes;
  mutexes.reserve(static_cast<std::size_t>(n));
  std::vector<std::int64_t> lat;
  lat.reserve(static_cast<std::size_t>(n));
  ServerWindow w(o.connect);
  w.begin();
  const std::int64_t heap0 = heap_in_use();
  const std::int64_t rss0 = rss_bytes();
  const std::int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) {
    mutexes.push_back(std::make_unique<zklock::Mutex>(session, paths[static_cast<std::size_t>(i)]));
    const std::int64_t a = now_ns();
    mutexes.back()->lock();
    lat.push_back(now_ns() - a);
  }
  const std::int64_t t1 = now_ns();
  const std::int64_t heap1 = heap_in_use();
  const std::int64_t rss1 = rss_bytes();
  std::int64_t held = 0;
  for (auto& m : mutexes) held += m->owns_lock() ? 1 : 0;
  (void)session.get(base);
  w.end();
  const std::int64_t r0 = now_ns();
  for (auto& m : mutexes) m->unlock();
  const std::int64_t r1 = now_ns();
  mutexes.clear();

  const double secs = seconds(t0, t1);
  put_common(out, o, n, 1, secs, n / secs, summarize(lat), 0);
  out.number("acquisitions_per_s", n / secs, 1)
      .integer("held", held)
      .number("bytes_per_lock", static_cast<double>(heap1 - heap0) / n, 0)
      .number("rss_bytes_per_lock", static_cast<double>(rss1 - rss0) / n, 0)
      .str("memory_method", "mallinfo2().uordblks delta, M_ARENA_MAX=1 (rss from /proc/self/statm)")
      .number("unlock_all_us", static_cast<double>(r1 - r0) / 1e3, 1);
  put_server(out, w, w.requests_per(n, 1), w.notifications_per(n), w.notifications_per(n));
  w.put_client_requests(out, n);
  if (o.cleanup) {
    (void)session.get(base);  // the deletes of the released nodes are through
    if (created_paths.load() > 0)
      for_all_paths([&](const std::string& p) { remove_quietly(session, p); });
    if (created) remove_quietly(session, base);
  }
}

}  // namespace zklock_bench
