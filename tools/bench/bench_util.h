// tools/bench/bench_util.h: small pieces shared by zklock-bench's workloads: the JSON line, the
// latency summary, the start gate and the first-error box.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace zklock::bench {

using Clock = std::chrono::steady_clock;

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

/// Polls, every `interval`, until `done` holds, or throws std::runtime_error(`what`) once `limit`
/// has passed (the drain mode's queue and watches; the fleet's start gate, with a 1 ms interval so
/// that the processes of a fleet start within a millisecond or two of each other).
template <class Done>
void poll_until(Done done, std::chrono::seconds limit, const char* what,
                std::chrono::milliseconds interval = std::chrono::milliseconds(20)) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) throw std::runtime_error(what);
    std::this_thread::sleep_for(interval);
  }
}

/// One JSON object on one line, keys in insertion order.
class JsonLine {
 public:
  JsonLine& str(const char* key, const std::string& value) {
    std::string escaped;
    for (char c : value) {
      if (c == '"' || c == '\\') {
        escaped += '\\';
        escaped += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        escaped += buf;
      } else {
        escaped += c;
      }
    }
    return raw(key, "\"" + escaped + "\"");
  }
  JsonLine& integer(const char* key, std::int64_t value) { return raw(key, std::to_string(value)); }
  JsonLine& number(const char* key, double value, int decimals = 1) {
    if (!std::isfinite(value)) return null(key);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return raw(key, buf);
  }
  JsonLine& number(const char* key, std::optional<double> value, int decimals = 1) {
    return value ? number(key, *value, decimals) : null(key);
  }
  JsonLine& null(const char* key) { return raw(key, "null"); }
  std::string text() const { return "{" + body_ + "}"; }

 private:
  JsonLine& raw(const char* key, const std::string& value) {
    if (!body_.empty()) body_ += ", ";
    body_ += "\"";
    body_ += key;
    body_ += "\": ";
    body_ += value;
    return *this;
  }
  std::string body_;
};

/// Percentiles of nanosecond samples, in microseconds, indexed as the peer programs do
/// (sorted[n/2] and sorted[int(n*0.99)]).
struct Summary {
  std::optional<double> p50_us, p99_us;
  std::size_t count = 0;
};
inline Summary summarize(std::vector<std::int64_t> ns) {
  Summary s;
  s.count = ns.size();
  if (ns.empty()) return s;
  std::sort(ns.begin(), ns.end());
  s.p50_us = static_cast<double>(ns[ns.size() / 2]) / 1e3;
  s.p99_us =
      static_cast<double>(ns[static_cast<std::size_t>(static_cast<double>(ns.size()) * 0.99)]) /
      1e3;
  return s;
}

/// Workers arrive (their sessions connected); the main thread waits for all of them, takes its
/// "before" readings, then opens the gate so that they all start together.
/// Two condition variables: an arrival wakes only the main thread, never the workers already
/// waiting (with one shared variable, N arrivals cost O(N^2) wakeups - which, in the queue mode,
/// happen while the queue drains and slow it down).
class StartGate {
 public:
  void arrive_and_wait() {
    std::unique_lock lock(mutex_);
    ++ready_;
    ready_cv_.notify_one();
    open_cv_.wait(lock, [&] { return open_; });
  }
  void wait_ready(int n) {
    std::unique_lock lock(mutex_);
    ready_cv_.wait(lock, [&] { return ready_ >= n; });
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    open_cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_cv_;  // the main thread waits here
  std::condition_variable open_cv_;   // the workers wait here
  int ready_ = 0;
  bool open_ = false;
};

// A queue of `n` waiters draining (the async and drain modes): everyone who acquired records the
// handoff (the previous release to this acquisition) and releases; counts who is inside at once.
class Drain {
 public:
  explicit Drain(int n) : n_(n) {}
  void acquired() {
    const std::int64_t now = now_ns();
    if (inside_.fetch_add(1) != 0) overlaps_.fetch_add(1);
    std::lock_guard lock(mutex_);
    handoff_.push_back(now - last_release_ns_);
  }
  void releasing() {
    inside_.fetch_sub(1);
    std::lock_guard lock(mutex_);
    last_release_ns_ = now_ns();
    if (++done_ == n_) all_done_.notify_all();
  }
  // A waiter that never acquired: counted as done, nothing else.
  void failed() {
    std::lock_guard lock(mutex_);
    if (++done_ == n_) all_done_.notify_all();
  }
  void start(std::int64_t release_ns) {
    std::lock_guard lock(mutex_);
    last_release_ns_ = release_ns;
  }
  void wait_all(std::chrono::seconds limit) {
    std::unique_lock lock(mutex_);
    if (!all_done_.wait_for(lock, limit, [&] { return done_ == n_; })) {
      throw std::runtime_error("the queue did not drain in time");
    }
  }
  std::int64_t overlaps() const { return overlaps_.load(); }
  std::vector<std::int64_t> handoffs() {
    std::lock_guard lock(mutex_);
    return handoff_;
  }

 private:
  const int n_;
  std::atomic<int> inside_{0};
  std::atomic<std::int64_t> overlaps_{0};
  std::mutex mutex_;
  std::condition_variable all_done_;
  int done_ = 0;
  std::int64_t last_release_ns_ = 0;
  std::vector<std::int64_t> handoff_;
};

/// Keeps the first error any thread reports.
class FirstError {
 public:
  void set(const std::string& what) {
    std::lock_guard lock(mutex_);
    if (what_.empty()) what_ = what.empty() ? "unknown error" : what;
  }
  std::string get() const {
    std::lock_guard lock(mutex_);
    return what_;
  }
  bool any() const { return !get().empty(); }

 private:
  mutable std::mutex mutex_;
  std::string what_;
};

/// Queues `n` asynchronous lock requests on `waiters` (a zklock::Mutex; the async and drain
/// modes): each releases as soon as it acquires, and is counted by `drain`; a request that fails
/// is counted done, its error kept in `failure`.
template <class Mutex>
void queue_releasing_waiters(Mutex& waiters, int n, Drain& drain, FirstError& failure) {
  for (int i = 0; i < n; ++i) {
    waiters.async_lock([&drain, &failure](std::error_code error, auto hold) {
      if (error) {
        failure.set("async_lock: " + error.message());
        drain.failed();
        return;
      }
      drain.acquired();
      drain.releasing();
      hold.unlock();
    });
  }
}

}  // namespace zklock::bench
