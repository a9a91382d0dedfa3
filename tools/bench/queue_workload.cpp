// tools/bench/queue_workload.cpp: the queue mode. `n` waiters (worker threads, a session each)
// queue behind a lock the main thread holds, which then releases it: the queue drains, each
// waiter acquiring once. `rounds` rounds with the same sessions; drain_seconds is the median round.
#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "workload_common.h"
#include "workloads.h"
#include "zklock/zklock.h"

namespace zklock::bench {
namespace {

using namespace std::chrono_literals;

// What the main thread measured in one round.
struct Round {
  double build_seconds = 0;   // gate opened -> everyone queued and watching
  double drain_seconds = 0;   // main thread's release -> the last waiter's release
  double window_seconds = 0;  // the server window: gate opened -> after the drain
  bool server_ok = false;     // both mntr readings answered
  std::int64_t packets = 0;   // requests the server received for the locks (ours taken out)
  std::int64_t notifications = 0;
  std::optional<std::int64_t> self_watches;  // notifications to a releasing session itself
  std::array<std::int64_t, CountingHook::kOps> client_requests{};
};

// iterations_ (--iterations, 1 by default) is the number of rounds; n_ (--clients, 16) the waiters.
class QueueRun : ModeRun {
 public:
  explicit QueueRun(const BenchOptions& o)
      : ModeRun(o, 16, 1),
        main_mutex_(main_session_, path_),
        slots_(static_cast<std::size_t>(n_) * static_cast<std::size_t>(iterations_)),
        lat_(slots_, 0),
        handoff_(slots_, 0),
        end_ns_(slots_, 0),
        workers_(n_),
        window_(o.connect) {
    for (int r = 0; r < iterations_; ++r) gates_.push_back(std::make_unique<StartGate>());
  }

  void run(JsonLine& out) {
    for (int i = 0; i < n_; ++i) workers_.threads.emplace_back([this, i] { wait_in_queue(i); });
    gates_[0]->wait_ready(n_);
    if (workers_.error.any()) abort_rounds(0, workers_.error.get());
    const std::optional<double> idle = idle_packets_per_second();
    std::vector<Round> rounds;
    for (int r = 0; r < iterations_; ++r) rounds.push_back(run_round(r));
    workers_.join();
    workers_.sessions.clear();
    write_figures(out, rounds, idle);
  }

 private:
  // Worker `i`: one acquisition per round, once the round's gate opens.
  void wait_in_queue(int i) {
    zklock::Session* session = workers_.open_session(i, o_);
    std::unique_ptr<zklock::Mutex> mutex;
    if (session != nullptr) mutex = std::make_unique<zklock::Mutex>(*session, path_);
    for (int r = 0; r < iterations_; ++r) {
      gates_[static_cast<std::size_t>(r)]->arrive_and_wait();
      const std::size_t slot =
          static_cast<std::size_t>(r) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(i);
      if (mutex && !workers_.error.any()) {
        try {
          const LockTurns::Turn turn = turns_.take(*mutex);
          lat_[slot] = turn.acquired_ns - turn.called_ns;
          handoff_[slot] = turn.acquired_ns - turn.previous_release_ns;  // everyone was waiting
        } catch (const std::exception& e) {
          workers_.error.set(std::string("lock: ") + e.what());
        }
      }
      end_ns_[slot] = now_ns();
      std::lock_guard lock(done_mutex_);
      ++done_;
      done_cv_.notify_all();
    }
  }

  // Lets the waiters of rounds from `from_round` on through (they see the error and skip their
  // turn), joins them and throws.
  [[noreturn]] void abort_rounds(int from_round, const std::string& why) {
    workers_.error.set(why);
    for (int r = from_round; r < iterations_; ++r) gates_[static_cast<std::size_t>(r)]->open();
    workers_.join();
    throw std::runtime_error(workers_.error.get());
  }

  // Background traffic of the n+1 idle sessions (heartbeats, pings), to tell it apart.
  std::optional<double> idle_packets_per_second() {
    const ServerCounters a = window_.stats.read();
    std::this_thread::sleep_for(1s);
    const ServerCounters b = window_.stats.read();
    if (!a.ok || !b.ok) return std::nullopt;
    return static_cast<double>(b.packets_received - a.packets_received -
                               window_.stats.cost_per_read());
  }

  Round run_round(int r) {
    Round round;
    main_mutex_.lock();
    gates_[static_cast<std::size_t>(r)]->wait_ready(n_);
    window_.inside_reads = 0;
    window_.begin();
    const std::int64_t q0 = now_ns();
    gates_[static_cast<std::size_t>(r)]->open();
    const auto deadline = Clock::now() + std::chrono::seconds(60 + n_ / 4);
    const std::int64_t polls = wait_until_queued(r, deadline);
    wait_until_watching(deadline);
    // The first waiter behind a holder also watches its own node (zklock's fast handoff); that
    // watch fires when it releases, at itself. Counted here, taken out of the waiters' wakeups.
    if (window_.before.ok) {
      round.self_watches = window_.stats.self_watches(path_ + "/");
      window_.inside_reads += 2;  // wchc + dump
    }
    const std::int64_t t_release = now_ns();
    round.build_seconds = seconds(q0, t_release);
    turns_.released_at(t_release);
    main_mutex_.unlock();
    wait_drained(r);
    std::int64_t t_end = t_release;
    for (int i = 0; i < n_; ++i) {
      t_end = std::max(t_end, end_ns_[static_cast<std::size_t>(r * n_ + i)]);
    }
    round.drain_seconds = seconds(t_release, t_end);
    const std::int64_t syncs = workers_.sync_all(path_) + 1;
    (void)main_session_.get(path_);
    window_.end();
    round.window_seconds = seconds(q0, now_ns());
    round.server_ok = window_.ok();
    if (window_.ok()) {
      round.packets = window_.after.packets_received - window_.before.packets_received -
                      window_.stats.cost_per_read() * (1 + window_.inside_reads) - polls - syncs;
      round.notifications = window_.after.watch_notifications - window_.before.watch_notifications;
    }
    for (std::size_t k = 0; k < round.client_requests.size(); ++k) {
      round.client_requests[k] = window_.hook_after[k] - window_.hook_before[k];
    }
    return round;
  }

  // Queued = all n nodes exist (behind the main thread's). Returns the polls it took (requests
  // of ours inside the window).
  std::int64_t wait_until_queued(int r, Clock::time_point deadline) {
    std::int64_t polls = 0;
    for (;;) {
      ++polls;
      const auto kids = main_session_.children(path_);
      if (kids && kids->size() >= static_cast<std::size_t>(n_) + 1) return polls;
      if (workers_.error.any() || Clock::now() > deadline) {
        main_mutex_.unlock();
        abort_rounds(r + 1,
                     workers_.error.any() ? workers_.error.get() : "queue did not build in time");
      }
      std::this_thread::sleep_for(10ms);
    }
  }

  // ... and all n waiters have their predecessor watch set (mntr's watch count), as far as the
  // server tells; without mntr, a fixed moment.
  void wait_until_watching(Clock::time_point deadline) {
    if (!window_.before.ok) {
      std::this_thread::sleep_for(200ms);
      return;
    }
    while (Clock::now() < deadline) {
      const ServerCounters c = window_.read_inside();
      if (!c.ok || c.watch_count - window_.before.watch_count >= n_) return;
      std::this_thread::sleep_for(10ms);
    }
  }

  // Until every waiter of round `r` has taken and released the lock.
  void wait_drained(int r) {
    {
      std::unique_lock lock(done_mutex_);
      done_cv_.wait(lock, [&] { return done_ >= n_ * (r + 1); });
    }
    if (workers_.error.any()) abort_rounds(r + 1, workers_.error.get());
  }

  void write_figures(JsonLine& out, const std::vector<Round>& rounds,
                     const std::optional<double>& idle_packets_per_s) {
    std::vector<double> drains, builds;
    std::int64_t packets = 0, notifications = 0, self_watches = 0;
    double window_secs = 0;
    bool server_ok = true, self_ok = true;
    std::array<std::int64_t, CountingHook::kOps> client_requests{};
    for (const Round& round : rounds) {
      drains.push_back(round.drain_seconds);
      builds.push_back(round.build_seconds);
      window_secs += round.window_seconds;
      server_ok = server_ok && round.server_ok;
      self_ok = self_ok && round.self_watches.has_value();
      packets += round.packets;
      notifications += round.notifications;
      self_watches += round.self_watches.value_or(0);
      for (std::size_t k = 0; k < client_requests.size(); ++k) {
        client_requests[k] += round.client_requests[k];
      }
    }
    std::sort(drains.begin(), drains.end());
    const double drain = drains[drains.size() / 2];
    std::sort(builds.begin(), builds.end());
    put_common(out, o_, n_, iterations_, drain, n_ / drain, summarize(lat_), turns_.overlaps());
    const Summary h = summarize(handoff_);
    out.number("drain_seconds", drain, 4)
        .number("drain_seconds_min", drains.front(), 4)
        .number("drain_seconds_max", drains.back(), 4)
        .number("queue_build_seconds", builds[builds.size() / 2], 4)
        .number("handoff_p50_us", h.p50_us, 1)
        .number("handoff_p99_us", h.p99_us, 1);
    // Per round, n handoffs (main -> first waiter -> ... -> last waiter); the last release wakes
    // nobody.
    const double acquisitions = static_cast<double>(n_) * iterations_;
    std::optional<double> requests, all_notifications, wakeups;
    if (server_ok) {
      requests = static_cast<double>(packets) / acquisitions;
      all_notifications = static_cast<double>(notifications) / acquisitions;
      wakeups = self_ok ? static_cast<double>(notifications - self_watches) / acquisitions
                        : *all_notifications;
    }
    put_server(out, window_, requests, wakeups, all_notifications);
    if (counting_hook()) {
      window_.hook_before = {};
      window_.hook_after = client_requests;
      window_.put_client_requests(out, acquisitions);
    }
    if (self_ok) {
      out.integer("self_watch_notifications", self_watches);
    } else {
      out.null("self_watch_notifications");
    }
    out.number("idle_packets_per_s", idle_packets_per_s, 1);
    std::optional<double> net;
    if (requests && idle_packets_per_s) {
      net = *requests - *idle_packets_per_s * window_secs / acquisitions;
    }
    out.number("server_requests_per_acq_excl_idle", net, 2);
  }

  zklock::Mutex main_mutex_;
  const std::size_t slots_;
  LockTurns turns_;
  std::vector<std::int64_t> lat_, handoff_, end_ns_;  // by slot: round * n + waiter
  std::vector<std::unique_ptr<StartGate>> gates_;     // one per round
  std::mutex done_mutex_;
  std::condition_variable done_cv_;
  int done_ = 0;  // waiters' turns finished, over all rounds
  Workers workers_;
  ServerWindow window_;
};

}  // namespace

void run_queue(const BenchOptions& o, JsonLine& out) { QueueRun(o).run(out); }

}  // namespace zklock::bench
