// tests/run_with_deadline.h: runs a piece of a test on a thread of its own with a deadline, so that
// a hang (a deadlock under test) fails the test run instead of hanging it until ctest's timeout.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <thread>

namespace zklock::testing {

/// Runs `body` on a new thread and returns its result. If it has not returned within `deadline`
/// the thread is deadlocked and cannot be joined: the test is failed, the failure is printed, and
/// the test binary exits at once with status 1 (its child servers die with it: PDEATHSIG).
inline bool run_with_deadline(const std::function<bool()>& body, std::chrono::milliseconds deadline,
                              const char* what) {
  auto task = std::make_shared<std::packaged_task<bool()>>(body);
  std::future<bool> result = task->get_future();
  std::thread thread([task] { (*task)(); });
  if (result.wait_for(deadline) != std::future_status::ready) {
    ADD_FAILURE() << what << ": still running after " << deadline.count() << " ms (a hang)";
    std::fprintf(stderr, "run_with_deadline: %s hung; exiting the test binary\n", what);
    std::fflush(nullptr);
    std::_Exit(1);
  }
  thread.join();
  return result.get();
}

}  // namespace zklock::testing
