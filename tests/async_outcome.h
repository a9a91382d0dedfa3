// tests/async_outcome.h: AsyncOutcome, what one asynchronous acquisition's handler was called
// with - Mutex::async_lock (a Hold), Semaphore::async_acquire (a Lease), ... - and how often.
//
// What it guarantees: handler() records every call (the count, the error, the value it got);
// completed_with() and acquired() poll with a deadline for the first call's outcome. The value is
// kept until the test drops it (value, under `mutex`). expect_close_ends_requests(): what a
// Session::close() does to a pending request and to one made after it.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <system_error>
#include <utility>

#include "support/wait.h"
#include "zklock/errors.h"
#include "zklock/session.h"

namespace zklock::testing {

template <class Value>
struct AsyncOutcome {
  std::mutex mutex;
  int calls = 0;
  std::error_code error;
  Value value;

  // A handler for the request (it outlives none of this object's uses: the test keeps it).
  auto handler() {
    return [this](std::error_code e, Value v) {
      std::lock_guard lock(mutex);
      ++calls;
      error = e;
      value = std::move(v);
    };
  }
  int count() {
    std::lock_guard lock(mutex);
    return calls;
  }
  bool completed_with(Errc code, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return wait_until(
        [&] {
          std::lock_guard lock(mutex);
          return calls > 0 && error == make_error_code(code);
        },
        timeout);
  }
  // The first call brought a value that holds (owns_lock() for a Hold, owns_lease() for a Lease).
  template <class Holds>
  bool acquired_as(Holds holds, std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
    return wait_until(
        [&] {
          std::lock_guard lock(mutex);
          return calls > 0 && !error && holds(value);
        },
        timeout);
  }
};

// Closes `session` while `waiting` (one of its requests) is pending, then makes one more request
// with `request_after`, recorded by `after`: both must end, once each, with Errc::closed.
template <class Outcome, class Request>
void expect_close_ends_requests(Session& session, Outcome& waiting, Outcome& after,
                                Request request_after) {
  session.close();
  EXPECT_TRUE(waiting.completed_with(Errc::closed));
  request_after();
  EXPECT_TRUE(after.completed_with(Errc::closed));
  EXPECT_EQ(waiting.count(), 1);
  EXPECT_EQ(after.count(), 1);
}

}  // namespace zklock::testing
