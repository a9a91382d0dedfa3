// tools/bench/workloads.cpp: the uncontended, contended and many modes (the queue mode is
// queue_workload.cpp).
#include "workloads.h"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <functional>
#include <memory>
#include <stdexcept>
#include <thread>
#include <vector>

#include "workload_common.h"
#include "zklock/zklock.h"

namespace zklock::bench {
namespace {

std::int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  long long size = 0, resident = 0;
  statm >> size >> resident;
  return static_cast<std::int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

// Bytes malloc has handed out and not taken back: the arena's blocks in use and the blocks it
// mapped on their own (large allocations - a vector of a hundred thousand entries is one).
std::int64_t heap_in_use() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const auto info = mallinfo2();
  return static_cast<std::int64_t>(info.uordblks + info.hblkhd);
#else
  const auto info = mallinfo();
  return static_cast<std::int64_t>(static_cast<unsigned>(info.uordblks)) +
         static_cast<std::int64_t>(static_cast<unsigned>(info.hblkhd));
#endif
}

}  // namespace

// ------------------------------------------------------------------------------------------------

void run_uncontended(const BenchOptions& o, JsonLine& out) {
  const int iters = o.iterations > 0 ? o.iterations : 2000;
  RunPath run(o);
  std::vector<std::int64_t> lat;
  lat.reserve(static_cast<std::size_t>(iters));
  LockTurns turns;
  ServerWindow w(o.connect);
  {
    zklock::Mutex mutex(run.session(), run.path());
    w.begin();
    const double cpu0 = process_cpu_us();
    const std::int64_t t0 = now_ns();
    for (int i = 0; i < iters; ++i) {
      const LockTurns::Turn turn = turns.take(mutex);
      lat.push_back(turn.acquired_ns - turn.called_ns);
    }
    const std::int64_t t1 = now_ns();
    const double cpu1 = process_cpu_us();
    (void)run.session().get(run.path());  // sync: the last delete has reached the server
    w.end();
    const double secs = seconds(t0, t1);
    put_common(out, o, 1, iters, secs, iters / secs, summarize(lat), turns.overlaps());
    out.number("cpu_us_per_acq", (cpu1 - cpu0) / iters, 1);
    put_server(out, w, w.requests_per(iters, 1), w.notifications_per(iters),
               w.notifications_per(iters));
    w.put_client_requests(out, iters);
  }
}

// ------------------------------------------------------------------------------------------------

void run_contended(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 16;
  const int iters = o.iterations > 0 ? o.iterations : 60;
  RunPath run(o);
  const std::string& path = run.path();

  LockTurns turns;
  std::vector<std::vector<std::int64_t>> lat(static_cast<std::size_t>(n)),
      handoff(static_cast<std::size_t>(n));
  std::vector<std::int64_t> end_ns(static_cast<std::size_t>(n), 0);
  Workers workers(n);
  for (int i = 0; i < n; ++i) {
    workers.threads.emplace_back([&, i] {
      zklock::Session* session = workers.open_session(i, o);
      workers.gate.arrive_and_wait();
      if (session == nullptr || workers.error.any()) return;
      auto& my_lat = lat[static_cast<std::size_t>(i)];
      auto& my_handoff = handoff[static_cast<std::size_t>(i)];
      my_lat.reserve(static_cast<std::size_t>(iters));
      my_handoff.reserve(static_cast<std::size_t>(iters));
      try {
        zklock::Mutex mutex(*session, path);
        for (int k = 0; k < iters; ++k) {
          const LockTurns::Turn turn = turns.take(mutex);
          my_lat.push_back(turn.acquired_ns - turn.called_ns);
          // A handoff: the previous holder's unlock() started while we were already waiting.
          if (turn.previous_release_ns != 0 && turn.called_ns < turn.previous_release_ns) {
            my_handoff.push_back(turn.acquired_ns - turn.previous_release_ns);
          }
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
  const double cpu0 = process_cpu_us();
  const std::int64_t t0 = now_ns();
  workers.gate.open();
  workers.join();
  const double cpu1 = process_cpu_us();
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
  put_common(out, o, n, iters, secs, acquisitions / secs, summarize(all_lat), turns.overlaps());
  out.number("cpu_us_per_acq", (cpu1 - cpu0) / acquisitions, 1)
      .number("handoff_p50_us", h.p50_us, 1)
      .number("handoff_p99_us", h.p99_us, 1)
      .integer("handoffs", static_cast<std::int64_t>(h.count));
  put_server(out, w, w.requests_per(acquisitions, syncs), w.notifications_per(acquisitions),
             w.notifications_per(acquisitions));
  w.put_client_requests(out, acquisitions);
}

// ------------------------------------------------------------------------------------------------

void run_many(const BenchOptions& o, JsonLine& out) {
  // All threads in the main arena, so that mallinfo2() sees the C client's allocations too.
  mallopt(M_ARENA_MAX, 1);
  const int n = o.clients > 0 ? o.clients : 1000;
  RunPath run(o);
  zklock::Session& session = run.session();
  const std::string& base = run.path();
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
  std::vector<std::int64_t> lat, done_at;  // reserved before the heap is read: not counted
  lat.reserve(static_cast<std::size_t>(n));
  done_at.reserve(static_cast<std::size_t>(n));
  ServerWindow w(o.connect);
  w.begin();
  const std::int64_t heap0 = heap_in_use();
  const std::int64_t rss0 = rss_bytes();
  // Checkpoints at 1,000, 10,000 and 100,000 held (those up to n): the rate of the last thousand
  // acquisitions before each, and the heap per held lock there - flat when nothing per
  // acquisition grows with the number held.
  struct Checkpoint {
    int held;
    double acquisitions_per_s;
    double bytes_per_lock;
  };
  std::vector<Checkpoint> checkpoints;
  const std::int64_t t0 = now_ns();
  for (int i = 0; i < n; ++i) {
    mutexes.push_back(std::make_unique<zklock::Mutex>(session, paths[static_cast<std::size_t>(i)]));
    const std::int64_t a = now_ns();
    mutexes.back()->lock();
    done_at.push_back(now_ns());
    lat.push_back(done_at.back() - a);
    const int held = i + 1;
    if (held == 1000 || held == 10000 || held == 100000) {
      const std::int64_t from = held == 1000 ? t0 : done_at[static_cast<std::size_t>(held - 1001)];
      checkpoints.push_back({held, 1000 / seconds(from, done_at.back()),
                             static_cast<double>(heap_in_use() - heap0) / held});
    }
  }
  const std::int64_t t1 = now_ns();
  const std::int64_t heap1 = heap_in_use();
  const std::int64_t rss1 = rss_bytes();
  const ServerCounters server_held = w.read_inside();
  std::int64_t held = 0;
  for (auto& m : mutexes) held += m->owns_lock() ? 1 : 0;
  (void)session.get(base);
  w.end();
  const std::int64_t r0 = now_ns();
  for (auto& m : mutexes) m->unlock();
  const std::int64_t r1 = now_ns();
  const std::int64_t d0 = now_ns();
  mutexes.clear();
  const std::int64_t d1 = now_ns();
  (void)session.get(base);  // the deletes of the released nodes are through
  const ServerCounters server_released = w.stats.read();

  const double secs = seconds(t0, t1);
  put_common(out, o, n, 1, secs, n / secs, summarize(lat), 0);
  out.number("acquisitions_per_s", n / secs, 1)
      .integer("held", held)
      .number("bytes_per_lock", static_cast<double>(heap1 - heap0) / n, 0)
      .number("rss_bytes_per_lock", static_cast<double>(rss1 - rss0) / n, 0)
      .str("memory_method",
           "mallinfo2() uordblks + hblkhd delta, M_ARENA_MAX=1 (rss from /proc/self/statm)")
      .number("unlock_all_us", static_cast<double>(r1 - r0) / 1e3, 1)
      .number("unlock_us_per_lock", static_cast<double>(r1 - r0) / 1e3 / n, 2)
      .number("destroy_all_us", static_cast<double>(d1 - d0) / 1e3, 1);
  for (const Checkpoint& c : checkpoints) {
    const std::string at = "_at_" + std::to_string(c.held);
    out.number(("acquisitions_per_s" + at).c_str(), c.acquisitions_per_s, 1)
        .number(("bytes_per_lock" + at).c_str(), c.bytes_per_lock, 0);
  }
  // On the server, per held lock: what holding them added, seen against what releasing them
  // took away (other sessions' nodes and watches cancel out).
  if (server_held.ok && server_released.ok) {
    out.number("server_ephemerals_per_lock",
               static_cast<double>(server_held.ephemerals - server_released.ephemerals) / n, 3)
        .number("server_watches_per_lock",
                static_cast<double>(server_held.watch_count - server_released.watch_count) / n, 3)
        .number("server_data_bytes_per_lock",
                static_cast<double>(server_held.approximate_data_size -
                                    server_released.approximate_data_size) /
                    n,
                1);
  }
  put_server(out, w, w.requests_per(n, 1), w.notifications_per(n), w.notifications_per(n));
  w.put_client_requests(out, n);
  if (o.cleanup) {
    if (created_paths.load() > 0)
      for_all_paths([&](const std::string& p) { remove_quietly(session, p); });
  }
}

}  // namespace zklock::bench
