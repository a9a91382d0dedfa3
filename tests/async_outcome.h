// tests/async_outcome.h: AsyncOutcome, what one asynchronous acquisition's handler was called
// with - Mutex::async_lock (a Hold), Semaphore::async_acquire (a Lease), ... - and how often.
//
// What it guarantees: handler() records every call (the count, the error, the value it got);
// completed_with() and acquired() poll with a deadline for the first call's outcome. The value is
// kept until the test drops it (value, under `mutex`).
#pragma once

#include <chrono>
#include <mutex>
#include <system_error>
#include <utility>

#include "support/wait.h"
#include "zklock/errors.h"

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

}  // namespace zklock::testing
