// tools/bench/drain_workload.cpp: the drain mode - how the cost of one waiter grows with the
// number of waiters. `n` asynchronous requests (Mutex::async_lock, no thread each) of ONE Mutex
// on ONE session queue behind the main thread's hold, every one of them watching its predecessor;
// then the hold is released and the queue drains, each waiter acquiring once and releasing. The
// figures per waiter (drain time, CPU) at n = 16 and n = 10,000 say whether a release costs the
// same however long the queue (scripts/bench_compare.sh runs the sweep). The session's own
// health is measured alongside: its state changes (a Suspended or Lost while draining means its
// heartbeat came late) and its heartbeats' round trips.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "workload_common.h"
#include "workloads.h"
#include "zklock/zklock.h"

namespace zklock::bench {
namespace {

// The largest upper bound among the buckets that counted something: a heartbeat took at most
// that long (the histogram keeps buckets, not samples).
double slowest_bucket_seconds(const zklock::Histogram& h) {
  double slowest = 0;
  for (std::size_t i = 0; i < h.counts.size() && i < h.bounds.size(); ++i) {
    if (h.counts[i] != 0) slowest = h.bounds[i];
  }
  if (h.counts.size() > h.bounds.size() && h.counts.back() != 0) slowest = -1;  // above all
  return slowest;
}

// One round: `n` waiters of one Mutex of `session` queue on `path` behind a hold, then drain.
struct Round {
  double build_seconds = 0, drain_seconds = 0;
  double cpu_build_us = 0, cpu_drain_us = 0;
  std::int64_t overlaps = 0;
  std::vector<std::int64_t> handoff_ns;  // the previous release -> this acquisition
};

Round drain_round(zklock::Session& session, zklock::Session& observer, const std::string& path,
                  int n, ServerWindow& window) {
  Round round;
  zklock::Mutex holder(session, path);
  zklock::Mutex waiters(session, path);
  holder.lock();
  Drain drain(n);
  FirstError failure;
  const std::int64_t watches_before = window.stats.read().watch_count;
  const double cpu_build0 = process_cpu_us();
  const std::int64_t build0 = now_ns();
  queue_releasing_waiters(waiters, n, drain, failure);
  // Queued: every node there (the parent's child count, not a listing of n names) and every
  // waiter's watch set on the server (each waiter watches its predecessor).
  poll_until(
      [&] {
        const auto stat = observer.get(path);
        return stat && stat->stat.num_children >= n + 1;
      },
      std::chrono::seconds(120 + n / 20), "the queue did not build in time");
  poll_until([&] { return window.stats.read().watch_count >= watches_before + n; },
             std::chrono::seconds(60 + n / 50), "the waiters' watches were not all set in time");
  round.build_seconds = seconds(build0, now_ns());
  round.cpu_build_us = process_cpu_us() - cpu_build0;

  window.begin();
  const double cpu0 = process_cpu_us();
  const std::int64_t t0 = now_ns();
  drain.start(t0);
  holder.unlock();
  drain.wait_all(std::chrono::seconds(300 + n / 10));
  if (failure.any()) throw std::runtime_error(failure.get());
  round.drain_seconds = seconds(t0, now_ns());
  round.cpu_drain_us = process_cpu_us() - cpu0;
  round.overlaps = drain.overlaps();
  round.handoff_ns = drain.handoffs();
  (void)session.get(path);  // answered after every delete the session sent
  window.end();
  return round;
}

}  // namespace

void run_drain(const BenchOptions& o, JsonLine& out) {
  const int n = o.clients > 0 ? o.clients : 10000;
  RunPath run_path(o);
  auto observer = open_session(o);
  auto session = open_session(o);  // the session timeout as given: no allowance for the queue
  std::atomic<int> suspended{0}, lost{0};
  session->add_listener([&](const zklock::SessionEvent& e) {
    if (e.state == zklock::SessionState::kSuspended) suspended.fetch_add(1);
    if (e.state == zklock::SessionState::kLost) lost.fetch_add(1);
  });
  // An untimed round first: the server's JIT and the code paths warm up, so that a small n is
  // not measured cold against a large one measured warm.
  ServerWindow warm_up(o.connect), window(o.connect);
  (void)drain_round(*session, *observer, run_path.path() + "/warm", std::min(n, 200), warm_up);
  const int suspended_before = suspended.load(), lost_before = lost.load();
  const auto heartbeat_before = session->metrics().heartbeat;
  const Round round = drain_round(*session, *observer, run_path.path() + "/drain", n, window);
  zklock::Histogram heartbeats = session->metrics().heartbeat;
  for (std::size_t i = 0; i < heartbeats.counts.size() && i < heartbeat_before.counts.size(); ++i) {
    heartbeats.counts[i] -= heartbeat_before.counts[i];
  }
  heartbeats.count -= heartbeat_before.count;
  const double drain = round.drain_seconds;
  put_common(out, o, n, 1, drain, n / drain, summarize(round.handoff_ns), round.overlaps);
  out.number("queue_build_seconds", round.build_seconds, 3)
      .number("drain_seconds", drain, 3)
      .number("drain_us_per_waiter", drain * 1e6 / n, 1)
      .number("cpu_us_per_waiter_drain", round.cpu_drain_us / n, 1)
      .number("cpu_us_per_waiter_build", round.cpu_build_us / n, 1)
      .integer("suspended", suspended.load() - suspended_before)
      .integer("lost", lost.load() - lost_before)
      .integer("heartbeats_while_draining", static_cast<std::int64_t>(heartbeats.count))
      .number("heartbeat_slowest_bucket_s", slowest_bucket_seconds(heartbeats), 3);
  put_server(out, window, window.requests_per(n, 1), window.notifications_per(n),
             window.notifications_per(n));
  window.put_client_requests(out, n);
  if (o.cleanup) {
    remove_quietly(*observer, run_path.path() + "/warm");
    remove_quietly(*observer, run_path.path() + "/drain");
  }
}

}  // namespace zklock::bench
