// zklock/lock_request.h: asynchronous acquisition - its options, its handler, and LockRequest,
// the handle that cancels it.
//
// Mutex::async_lock (and SharedMutex::async_lock / async_lock_shared) queue a contender without a
// thread waiting for it: ZooKeeper's completions move it along, and when it ends the handler is
// called exactly once, with either an empty error code and the Hold that owns the lock, or an
// error and an empty Hold:
//   Errc::timed_out  - the deadline passed first;
//   Errc::cancelled  - LockRequest::cancel(), or the Mutex was destroyed while it waited;
//   Errc::session_lost - the session was lost while it waited (it does not re-queue by itself:
//                      an event loop decides whether to try again);
//   Errc::closed     - the Session was closed;
//   Errc::no_auth, Errc::incompatible_lock, ... - as the blocking lock() would throw.
// Whatever the error, no node and no watch of the request is left on the server when the handler
// runs (while the session is connected; otherwise they go with the session).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <system_error>
#include <utility>

#include "zklock/hold.h"

namespace zklock {

namespace detail {
/// What a LockRequest cancels: one request of a Mutex, or a LockSet's.
class PendingRequest {
 public:
  virtual ~PendingRequest() = default;
  virtual void cancel() noexcept = 0;
  virtual bool pending() const noexcept = 0;
};
}  // namespace detail

/// Runs the work it is given, later, somewhere (e.g. asio::post onto an io_context). It must not
/// run it inline. Called on the session's event thread.
using Executor = std::function<void(std::function<void()> work)>;

/// The completion handler of an asynchronous acquisition: called exactly once.
using LockHandler = std::function<void(std::error_code error, Hold hold)>;

struct AsyncLockOptions {
  /// Give up when this passes (Errc::timed_out); none: wait until acquired or cancelled. A
  /// deadline already past makes one attempt, as try_lock() does.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// Where the handler runs; empty: on the session's event thread (where Session listeners and
  /// on_state_change run), which must then not block for long.
  Executor executor;

  /// Returns: options with deadline now + `timeout`.
  template <class Rep, class Period>
  static AsyncLockOptions within(const std::chrono::duration<Rep, Period>& timeout) {
    AsyncLockOptions options;
    options.deadline = std::chrono::steady_clock::now() +
                       std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
    return options;
  }
};

/// A pending asynchronous acquisition. Copyable; dropping it does not cancel the request.
class LockRequest {
 public:
  LockRequest() noexcept = default;
  /// (zklock's recipes make requests; applications get them from async_lock.)
  explicit LockRequest(std::shared_ptr<detail::PendingRequest> request) noexcept
      : request_(std::move(request)) {}
  /// Effects: ends the request if it has not completed yet: its node and watch are removed and
  ///   the handler is called with Errc::cancelled. If it already acquired the lock (the handler
  ///   is on its way with the Hold), nothing happens: the Hold owns the lock. Thread-safe, never
  ///   throws, may be called any number of times.
  void cancel() const noexcept {
    if (request_) request_->cancel();
  }
  /// Returns: true until the request's outcome is decided (the handler may still be on its way).
  bool pending() const noexcept { return request_ && request_->pending(); }

 private:
  std::shared_ptr<detail::PendingRequest> request_;
};

}  // namespace zklock
