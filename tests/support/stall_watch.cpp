// tests/support/stall_watch.cpp: see stall_watch.h.
#include "support/stall_watch.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace zklock::testing {
namespace {

constexpr std::int64_t kTickNs = 10'000'000;    // the watch's sleep
constexpr std::int64_t kStallNs = 100'000'000;  // a wake-up later than this is a stall

class StallWatch {
 public:
  StallWatch() {
    std::thread([this] { run(); }).detach();  // the watch lives as long as the process
  }
  std::int64_t longest(std::int64_t from_ns, std::int64_t to_ns) {
    std::lock_guard lock(mutex_);
    std::int64_t longest = 0;
    for (const auto& [begin, end] : stalls_) {
      if (end >= from_ns && begin <= to_ns) longest = std::max(longest, end - begin);
    }
    return longest;
  }

 private:
  void run() {
    std::int64_t last = monotonic_clock_ns();
    while (true) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(kTickNs));
      const std::int64_t now = monotonic_clock_ns();
      if (now - last > kTickNs + kStallNs) {
        std::lock_guard lock(mutex_);
        stalls_.emplace_back(last + kTickNs, now);
      }
      last = now;
    }
  }

  std::mutex mutex_;
  std::vector<std::pair<std::int64_t, std::int64_t>> stalls_;  // [begin, end] of each stall
};

StallWatch& watch() {
  static auto* const instance = new StallWatch();  // never destroyed: its thread never ends
  return *instance;
}

}  // namespace

std::int64_t monotonic_clock_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void start_stall_watch() { (void)watch(); }

std::int64_t longest_stall_ns(std::int64_t from_ns, std::int64_t to_ns) {
  return watch().longest(from_ns, to_ns);
}

}  // namespace zklock::testing
