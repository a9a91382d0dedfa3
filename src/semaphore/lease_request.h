// LeaseRequest: one acquisition of a Semaphore's leases, as a state machine driven by ZooKeeper
// completions (internal). Semaphore::acquire() waits for one on its thread; async_acquire() hands
// its outcome to a handler; no thread waits in either case while the request moves:
//
//   Count        read (and, the first time, store) the lease count in <path>
//   InternalLock an asynchronous contender on <path>/locks (MutexCore, delivered on the monitor)
//   Create       our EPHEMERAL_SEQUENTIAL node under <path>/leases (creating <path>/leases first
//                if it is missing); a lost reply goes to Recover
//   Recover      sync + list; our uuid adopted only if the current session owns the node
//   List         list the leases (the second and later listings set a children watch)
//     at most N  the lease is ours: the next lease of the call (Create), or done - release the
//                internal lock, hand the leases over
//     more       Wait for the watch (still holding the internal lock: only its holder ever
//                watches the leases, so a release wakes one contender), then List again
//   Ending       every other exit: remove our watches, delete our node and the leases taken so far
//                (all or none), release the internal lock; the outcome is handed over once they
//                are answered (or the connection is down, or a third of the session timeout
//                has passed)
//
// Every answer carries the step it was sent in; answers of abandoned steps are ignored. A step
// that failed on a lost connection waits for the same session's next connection
// (on_session_change); a Lost session ends a blocking call's round (it queues again in the next
// session) and an asynchronous request (session_lost), as Mutex's do.
//
// Threads: answers and watches on the C client's completion thread; the internal lock's outcome,
// scheduled steps (the deadline, backoffs) and session changes on the monitor; `done` on either,
// with no zklock lock held. Lock order: SemaphoreCore::mutex_ (never held while calling in here
// from the core, except for registering) -> mutex_ -> LeaseCore::mutex_, the internal
// MutexCore::mutex_ -> SessionCore -> ClientConnection.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "session/session_core.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"

namespace zklock::detail {

class SemaphoreCore;
class LeaseCore;
class ClientConnection;

class LeaseRequest final : public std::enable_shared_from_this<LeaseRequest> {
 public:
  using SteadyClock = std::chrono::steady_clock;
  using Leases = std::vector<std::shared_ptr<LeaseCore>>;
  /// The outcome, exactly once: ok with `count` leases, or an error code, a phrase for its
  /// message (may be empty) and no lease.
  using Done = std::function<void(Errc code, const std::string& detail, Leases leases)>;

  struct Params {
    int count = 1;
    /// None: no limit. Past: one attempt (`try_once`).
    std::optional<SteadyClock::time_point> deadline;
    /// The internal lock only if it is free, and leases only if enough are free now.
    bool try_once = false;
    /// A session Lost during the request: queue again in the next one (blocking calls) - or
    /// end with session_lost (asynchronous requests, as Mutex::async_lock).
    bool requeue_after_loss = true;
  };

  LeaseRequest(std::shared_ptr<SemaphoreCore> core, Params params, Done done);
  ~LeaseRequest();
  LeaseRequest(const LeaseRequest&) = delete;
  LeaseRequest& operator=(const LeaseRequest&) = delete;

  /// Effects: schedules the deadline and sends the first step.
  void start();
  /// Effects: ends the request with `code` (cancelled, closed) and `detail`, unless its outcome
  ///   is decided already. Never throws; may be called from any thread without zklock locks.
  void end(Errc code, const std::string& detail) noexcept;
  /// Returns: true until the outcome is decided.
  bool pending() const noexcept;
  /// The session changed (SemaphoreCore forwards its observer calls): resumes a step that waits
  /// for a connection, notices a Lost session or a closed one.
  void on_session_change();

 private:
  enum class Phase { kCount, kInternalLock, kCreate, kRecover, kList, kWait, kEnding, kDone };
  using Later = std::vector<std::function<void()>>;

  // Runs `step` with mutex_ held, then what it left for later (callbacks that must not run under
  // mutex_: the outcome, releases that take other recipes' locks).
  template <class Step>
  void run(Step&& step) {
    Later later;
    {
      std::lock_guard lock(mutex_);
      step();
      later.swap(later_);
    }
    for (auto& task : later) task();
  }
  // The completion of the request sent now (a new step): `on(*this, answer)` runs with mutex_
  // held, unless another step has begun or the outcome is decided meanwhile.
  template <class On>
  Completion answer_locked(On on) {
    return [self = shared_from_this(), step = next_step_locked(), on](OpResult&& r) mutable {
      self->run([&] {
        if (self->step_ == step && !self->decided_) std::invoke(on, *self, std::move(r));
      });
    };
  }
  std::shared_ptr<ClientConnection> connection_locked(bool pinned) const;
  // The step's connection is not up: `resume` runs once it is (on_session_change).
  void await_connection_locked(std::function<void()> resume);
  // A step failed with `rc`: retried (a pause, or the next connection), the round queued again,
  // or the request ended. `again` sends the same step again.
  void step_failed_locked(Errc rc, const char* what, const std::function<void()>& again);

  // The lease count (lease_request_steps.cpp).
  void count_locked();
  void on_count_read_locked(OpResult&& r);
  void create_ancestors_locked(const std::string& path, std::function<void()> then);
  // The internal lock.
  void take_internal_lock_locked();
  void on_internal_lock_locked(std::error_code error, Hold hold);
  // Releases `hold` (the internal lock, held or Lost) once mutex_ is released.
  void give_back_internal_locked(Hold hold);
  // The lease phase (lease_request_steps.cpp).
  void create_locked();
  void on_created_locked(OpResult&& r);
  void recover_locked();
  void on_recovery_listing_locked(OpResult&& r);
  void on_recovery_read_locked(const std::string& name, OpResult&& r);
  void list_locked(bool watched);
  void on_listing_locked(bool watched, OpResult&& r);
  void on_watch_locked(std::uint64_t round, std::uint64_t ours);
  void recheck_while_waiting_locked();
  void lease_taken_locked();
  void remove_watches_locked();

  // The round is over without a lease (the internal lock lost, our node gone, the session Lost):
  // everything of it is given back, and the request queues again for the internal lock (or ends
  // with session_lost for an asynchronous one after a Lost session).
  void requeue_locked(bool session_lost);
  void succeed_locked();
  void end_locked(Errc code, std::string detail);
  void one_released_locked();
  void deliver_locked();
  // A new step: answers to older ones are ignored.
  unsigned next_step_locked() { return ++step_; }

  const std::shared_ptr<SemaphoreCore> core_;
  const std::shared_ptr<SessionCore> session_;
  const Params params_;
  const SteadyClock::time_point started_ = SteadyClock::now();
  Done done_;

  mutable std::mutex mutex_;
  Later later_;  // run() runs these once mutex_ is released
  Phase phase_ = Phase::kCount;
  unsigned step_ = 0;
  int races_ = 0;    // the count node or the leases node changed under us
  int creates_ = 0;  // create attempts of this round
  bool contended_ = false;
  bool decided_ = false;  // the outcome is known (Ending or Done)
  Errc code_ = Errc::ok;
  std::string detail_;
  std::function<void()> resume_;  // a step waiting for the connection
  SessionCore::ScheduledId deadline_task_;
  SessionCore::ScheduledId timer_;  // a backoff, a recheck while waiting, the ending's bound

  // The internal lock: the pending request, then the Hold.
  LockRequest internal_request_;
  Hold internal_;
  bool internal_pending_ = false;
  unsigned generation_ = 0;  // the internal lock's: every lease step is pinned to it

  // This round's node (known once created or found again).
  std::string uuid_;
  std::string node_path_;
  std::int32_t sequence_ = 0;
  std::int64_t czxid_ = 0;
  std::int64_t owner_ = 0;
  std::uint64_t round_ = 0;          // numbers the rounds, for the watches' callbacks
  std::uint64_t watch_numbers_ = 0;  // numbers our watches, before the connection's id is known
  std::map<std::uint64_t, std::uint64_t> watches_;  // ours -> the connection's id: our children
                                                    // watches on <path>/leases not fired yet
  bool fired_ = false;  // a watch of this round fired since the last listing sent

  Leases taken_;
  int outstanding_ = 0;  // Ending: releases not answered yet
};

}  // namespace zklock::detail
