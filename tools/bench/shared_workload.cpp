// tools/bench/shared_workload.cpp: the shared mode - zklock::SharedMutex. Who wakes when a lock is
// released, measured on the server (watch notifications, mntr), and the throughput of shared
// acquisitions.
//
// Each of kRounds rounds: the main thread's writer W1 holds; the n readers (a session each) queue
// behind it, then one more writer W2 behind them. Window A: W1 releases; it ends once every reader
// holds (they share). Window B: the readers release one at a time - in queue order in even
// rounds, in reverse order in odd ones - and it ends once W2 holds. A reader waits only for the
// nearest writer ahead of it, so W1's release should notify exactly the n readers; W2 watches its
// direct predecessor, so released in queue order the group notifies W2 once (its last release),
// released in reverse order once per reader (each time W2's predecessor goes).
// Then the throughput phase: the n readers each take and release the shared lock `iterations`
// times, all at once (no writer): ops_per_s, p50_us and p99_us are of these.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
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

constexpr int kRounds = 4;  // two in queue order, two in reverse

// What one round measured.
struct SharedRound {
  bool reverse = false;
  bool server_ok = false;
  std::int64_t writer_release_notifications = 0;  // window A
  std::int64_t group_release_notifications = 0;   // window B, the readers' own nodes' watches out
  std::int64_t self_watches = 0;                  // those: readers watching their own node
  std::int64_t packets = 0;                       // both windows, our own reads taken out
  std::int64_t release_to_readers_ns = 0;         // W1's release -> the last reader holds
};

// n_ (--clients, 8 by default) is the number of readers; iterations_ (--iterations, 50) each
// reader's shared acquisitions in the throughput phase.
class SharedRun : ModeRun {
 public:
  explicit SharedRun(const BenchOptions& o)
      : ModeRun(o, 8, 50),
        writer_(main_session_, path_),
        stats_(o.connect),
        workers_(static_cast<std::size_t>(n_) + 1),
        acquired_ns_(static_cast<std::size_t>(n_), 0),
        node_(static_cast<std::size_t>(n_)) {}

  ~SharedRun() {
    // After a failure: wake any lock call still waiting (it fails with CancelledError), then quit.
    {
      std::lock_guard lock(progress_mutex_);
      if (opened_ == static_cast<int>(workers_.size())) {
        for (auto& w : workers_) {
          if (w.mutex) w.mutex->cancel();
        }
      }
    }
    for (auto& w : workers_) post(w, {});  // quit
    for (auto& w : workers_) {
      if (w.thread.joinable()) w.thread.join();
    }
  }
  SharedRun(const SharedRun&) = delete;
  SharedRun& operator=(const SharedRun&) = delete;

  void run(JsonLine& out) {
    for (auto& w : workers_) w.thread = std::thread([this, &w] { work(w); });
    wait_for([&] { return opened_ == static_cast<int>(workers_.size()); }, "sessions");
    std::vector<SharedRound> rounds;
    rounds.reserve(kRounds);
    for (int r = 0; r < kRounds; ++r) rounds.push_back(run_round(r % 2 == 1));
    const auto [secs, lat] = run_throughput();
    write_figures(out, rounds, secs, lat);
  }

 private:
  struct Worker {
    std::unique_ptr<zklock::Session> session;
    std::unique_ptr<zklock::SharedMutex> mutex;
    std::thread thread;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void(Worker&)>> tasks;  // an empty one: quit
  };

  static void post(Worker& w, std::function<void(Worker&)> task) {
    {
      std::lock_guard lock(w.m);
      w.tasks.push_back(std::move(task));
    }
    w.cv.notify_one();
  }

  void work(Worker& w) {
    try {
      w.session = open_session(o_);
      w.mutex = std::make_unique<zklock::SharedMutex>(*w.session, path_);
    } catch (const std::exception& e) {
      error_.set(std::string("session: ") + e.what());
    }
    progress([&] { ++opened_; });
    for (;;) {
      std::function<void(Worker&)> task;
      {
        std::unique_lock lock(w.m);
        w.cv.wait(lock, [&] { return !w.tasks.empty(); });
        task = std::move(w.tasks.front());
        w.tasks.pop_front();
      }
      if (!task) return;
      if (!w.mutex) continue;  // no session: the run has failed already (error_)
      try {
        task(w);
      } catch (const std::exception& e) {
        error_.set(e.what());
        progress([] {});
      }
    }
  }

  // Changes the progress counters under their mutex and wakes the main thread.
  template <class F>
  void progress(F&& change) {
    {
      std::lock_guard lock(progress_mutex_);
      change();
    }
    progress_cv_.notify_all();
  }
  // Waits until `done` (called under the progress mutex); throws on a worker's error or after a
  // minute.
  template <class F>
  void wait_for(F&& done, const char* what) {
    std::unique_lock lock(progress_mutex_);
    if (!progress_cv_.wait_for(lock, 60s, [&] { return done() || error_.any(); }))
      throw std::runtime_error(std::string("timed out waiting for ") + what);
    if (error_.any()) throw std::runtime_error(error_.get());
  }

  // The in-process exclusion check: a writer beside anyone is an overlap.
  void enter(bool reader) {
    std::lock_guard lock(inside_mutex_);
    if (writer_inside_ || (!reader && readers_inside_ > 0)) ++overlaps_;
    if (reader) {
      max_readers_ = std::max(max_readers_, ++readers_inside_);
    } else {
      writer_inside_ = true;
    }
  }
  void leave(bool reader) {
    std::lock_guard lock(inside_mutex_);
    if (reader) {
      --readers_inside_;
    } else {
      writer_inside_ = false;
    }
  }

  // The queue, in order, once it has `n` nodes.
  std::vector<std::string> wait_children(std::size_t n) {
    const auto deadline = Clock::now() + 60s;
    for (;;) {
      auto kids = main_session_.children(path_).value_or(std::vector<std::string>{});
      if (kids.size() >= n) return zklock::queue_order(std::move(kids));
      if (error_.any()) throw std::runtime_error(error_.get());
      if (Clock::now() > deadline) throw std::runtime_error("the queue did not build in time");
      std::this_thread::sleep_for(5ms);
    }
  }
  // Until `n` sessions that `counts` watch the node `name` (without wchp: a fixed moment).
  // Returns the 4lw reads it took.
  std::int64_t wait_watchers(const std::string& name, std::int64_t n,
                             const std::function<bool(std::int64_t)>& counts) {
    const auto deadline = Clock::now() + 60s;
    for (std::int64_t reads = 1;; ++reads) {
      const auto watching = stats_.watchers(path_ + "/" + name);
      if (!watching) {
        std::this_thread::sleep_for(200ms);
        return reads;
      }
      if (std::count_if(watching->begin(), watching->end(), counts) >= n) {
        return reads;
      }
      if (Clock::now() > deadline) throw std::runtime_error("the waiters' watches were not set");
      std::this_thread::sleep_for(1ms);
    }
  }

  SharedRound run_round(bool reverse) {
    SharedRound round;
    round.reverse = reverse;
    const auto n = static_cast<std::size_t>(n_);
    writer_.lock();
    enter(false);
    int acquired_before = 0, released_before = 0;
    {
      std::lock_guard lock(progress_mutex_);
      acquired_before = acquired_;
      released_before = released_;
    }
    for (std::size_t i = 0; i < n; ++i) {
      post(workers_[i], [this, i](Worker& w) {
        w.mutex->lock_shared();
        const std::int64_t at = now_ns();
        enter(true);
        const auto acquisition = w.mutex->acquisition();
        progress([&] {
          acquired_ns_[i] = at;
          node_[i] = acquisition ? acquisition->node_path.substr(path_.size() + 1) : "";
          ++acquired_;
        });
      });
    }
    wait_children(n + 1);
    post(workers_[n], [this](Worker& w) {
      w.mutex->lock();
      enter(false);
      progress([&] { ++acquired_; });
    });
    const std::vector<std::string> queue = wait_children(n + 2);
    // Every reader watches W1; W2 its predecessor, the last reader. (Readers first in line behind
    // W1 also watch their own node: counted separately below.)
    const std::int64_t w1_session = main_session_.session_id();
    const std::int64_t w2_session = workers_[n].session->session_id();
    wait_watchers(queue.front(), n_, [&](std::int64_t s) { return s != w1_session; });
    wait_watchers(queue[n], 1, [&](std::int64_t s) { return s == w2_session; });

    // Window A: W1's release.
    const ServerCounters a0 = stats_.read();
    const std::int64_t released_at = now_ns();
    leave(false);
    writer_.unlock();
    wait_for([&] { return acquired_ >= acquired_before + n_; }, "the readers");
    // The server adds a delete's notifications to mntr after sending them: a reader can hold
    // before they are counted. A read on W1's session is answered only after the delete's
    // processing has finished (the readers' releases below each have one on their own session).
    (void)main_session_.get(path_);
    const ServerCounters a1 = stats_.read();
    round.release_to_readers_ns =
        *std::max_element(acquired_ns_.begin(), acquired_ns_.end()) - released_at;

    // Watches the readers hold on their own nodes fire when they release: not wakeups.
    const std::optional<std::int64_t> self = stats_.self_watches(path_ + "/");

    // Window B: the readers' releases, one at a time (each followed by a read on its session, so
    // that its delete has reached the server before the next one is sent).
    std::vector<std::size_t> by_queue(n);  // the readers in queue order (by their node's name)
    for (std::size_t i = 0; i < n; ++i) by_queue[i] = i;
    std::sort(by_queue.begin(), by_queue.end(), [&](std::size_t x, std::size_t y) {
      return std::find(queue.begin(), queue.end(), node_[x]) <
             std::find(queue.begin(), queue.end(), node_[y]);
    });
    std::vector<std::size_t> order = by_queue;
    if (reverse) std::reverse(order.begin(), order.end());
    std::vector<bool> gone(n, false);
    const ServerCounters b0 = stats_.read();
    std::int64_t inside_reads = 0;
    int released = released_before;
    for (std::size_t k = 0; k < n; ++k) {
      post(workers_[order[k]], [this](Worker& w) {
        leave(true);
        w.mutex->unlock_shared();
        (void)w.session->get(path_);
        progress([&] { ++released_; });
      });
      ++released;
      wait_for([&] { return released_ >= released; }, "a reader's release");
      gone[order[k]] = true;
      if (k + 1 < n && b0.ok) {
        // If the release woke W2, W2 re-lists and watches its new predecessor, the last reader
        // left. Wait for that watch: otherwise the next release could come before it, and the
        // wakeup it would have caused would go uncounted.
        std::size_t last = 0;
        for (const std::size_t i : by_queue) {
          if (!gone[i]) last = i;
        }
        inside_reads +=
            wait_watchers(node_[last], 1, [&](std::int64_t s) { return s == w2_session; });
      }
    }
    wait_for([&] { return acquired_ >= acquired_before + n_ + 1; }, "the second writer");
    const ServerCounters b1 = stats_.read();
    post(workers_[n], [this](Worker& w) {
      leave(false);
      w.mutex->unlock();
      (void)w.session->get(path_);
      progress([&] { ++released_; });
    });
    wait_for([&] { return released_ >= released + 1; }, "the second writer's release");

    round.server_ok = a0.ok && a1.ok && b0.ok && b1.ok && self.has_value();
    if (round.server_ok) {
      round.self_watches = *self;
      round.writer_release_notifications = a1.watch_notifications - a0.watch_notifications;
      round.group_release_notifications = b1.watch_notifications - b0.watch_notifications - *self;
      // Each window's closing mntr read is counted in it, and our reads: one in window A, the n
      // readers' in window B, and the 4lw reads waiting for W2's watches.
      round.packets = (a1.packets_received - a0.packets_received) +
                      (b1.packets_received - b0.packets_received) -
                      (2 + inside_reads) * stats_.cost_per_read() - 1 - n_;
    }
    return round;
  }

  // n readers, `iterations_` shared acquisitions each, all at once. Returns the seconds and the
  // latencies.
  std::pair<double, std::vector<std::int64_t>> run_throughput() {
    lat_.assign(static_cast<std::size_t>(n_), {});
    int finished_before = 0;
    {
      std::lock_guard lock(progress_mutex_);
      finished_before = finished_;
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(n_); ++i) {
      post(workers_[i], [this, i](Worker& w) {
        gate_.arrive_and_wait();
        for (int k = 0; k < iterations_; ++k) {
          const std::int64_t called = now_ns();
          w.mutex->lock_shared();
          lat_[i].push_back(now_ns() - called);
          enter(true);
          leave(true);
          w.mutex->unlock_shared();
        }
        progress([&] { ++finished_; });
      });
    }
    gate_.wait_ready(n_);
    const std::int64_t t0 = now_ns();
    gate_.open();
    wait_for([&] { return finished_ >= finished_before + n_; }, "the shared acquisitions");
    const std::int64_t t1 = now_ns();
    std::vector<std::int64_t> all;
    for (auto& l : lat_) all.insert(all.end(), l.begin(), l.end());
    return {seconds(t0, t1), all};
  }

  void write_figures(JsonLine& out, const std::vector<SharedRound>& rounds, double secs,
                     const std::vector<std::int64_t>& lat) {
    const double acquisitions = static_cast<double>(n_) * iterations_;
    put_common(out, o_, n_, iterations_, secs, acquisitions / secs, summarize(lat), overlaps_);
    bool ok = true;
    std::int64_t writer = 0, in_order = 0, reverse = 0, self = 0, packets = 0;
    int in_order_rounds = 0, reverse_rounds = 0;
    std::vector<std::int64_t> release_to_readers;
    for (const SharedRound& r : rounds) {
      ok = ok && r.server_ok;
      writer += r.writer_release_notifications;
      (r.reverse ? reverse : in_order) += r.group_release_notifications;
      ++(r.reverse ? reverse_rounds : in_order_rounds);
      self += r.self_watches;
      packets += r.packets;
      release_to_readers.push_back(r.release_to_readers_ns);
    }
    // Per round: W1's release and the n readers' releases; n + 1 acquisitions (readers, W2).
    const double releases = static_cast<double>(rounds.size()) * (n_ + 1);
    auto per = [&](std::int64_t v, double d) {
      return ok ? std::optional<double>(static_cast<double>(v) / d) : std::nullopt;
    };
    out.number("server_requests_per_acq", per(packets, releases), 2)
        .number("wakeups_per_release", per(writer + in_order + reverse, releases), 3)
        .number("watch_notifications_per_release",
                per(writer + in_order + reverse + self, releases), 3)
        .str("server_counters", ok ? "mntr" : "unavailable")
        .number("writer_release_wakeups", per(writer, static_cast<double>(rounds.size())), 2)
        .number("group_release_wakeups_in_order", per(in_order, in_order_rounds), 2)
        .number("group_release_wakeups_reverse", per(reverse, reverse_rounds), 2)
        .integer("self_watch_notifications", self)
        .integer("readers_inside_max", max_readers_)
        .number("writer_release_to_readers_p50_us", summarize(release_to_readers).p50_us, 1)
        .integer("rounds", static_cast<std::int64_t>(rounds.size()));
  }

  zklock::SharedMutex writer_;  // W1
  ServerStats stats_;
  FirstError error_;
  std::mutex progress_mutex_;
  std::condition_variable progress_cv_;
  int opened_ = 0, acquired_ = 0, released_ = 0, finished_ = 0;
  std::vector<Worker> workers_;  // n readers, then W2
  std::vector<std::int64_t> acquired_ns_;
  std::vector<std::string> node_;  // each reader's node name, while it holds
  std::mutex inside_mutex_;
  bool writer_inside_ = false;
  int readers_inside_ = 0;
  int max_readers_ = 0;
  std::int64_t overlaps_ = 0;
  StartGate gate_;                              // the throughput phase's start
  std::vector<std::vector<std::int64_t>> lat_;  // its latencies, by reader
};

}  // namespace

void run_shared(const BenchOptions& o, JsonLine& out) { SharedRun(o).run(out); }

}  // namespace zklock::bench
