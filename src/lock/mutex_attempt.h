// MutexCore::Attempt: one contender's way through the recipe, from create to delete (internal).
// Every field is guarded by MutexCore::mutex_.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lock/mutex_core.h"

namespace zklock::detail {

struct MutexCore::Attempt {
  enum class Phase {
    kCreating,
    kRecovering,
    kListing,
    kWatching,
    kAwaitGeneration,
    kDelaying,  // first in line; the lock-delay is being decided or waited out (lock_delay.cpp)
    kHeld,
    kCleaning,
    kDone,
  };
  enum class Result { kPending, kAcquired, kFailed, kNotAcquired };

  // Ordered by size (no padding to speak of): one of these lives per contender.
  std::string uuid;
  std::string node_path;  // empty until our create is known to have happened
  std::string node_name;
  // A downgrade's read attempt: our own write node, which it does not wait behind.
  std::string exempt_writer;
  std::string pred_path;
  std::string pred_watch_path;  // where pred_watch is: the predecessor, or the lock path itself
  std::function<void()> retry;
  std::int64_t czxid = 0;
  std::int64_t session_id = 0;  // the node's ephemeralOwner
  std::uint64_t pred_watch = 0;
  std::uint64_t self_watch = 0;        // our data watch on our own node (0: none)
  std::uint64_t self_watch_epoch = 0;  // connection epoch it was set on (0: not set)
  std::uint64_t probe = 0;             // SessionCore heartbeat probe on our node while held
  // What our node says beyond the create's data (holder_data.cpp): when it became the holder
  // (ms since the Unix epoch; 0: not stamped) and a value an Election's leader proclaimed.
  std::int64_t held_since_ms = 0;
  std::unique_ptr<std::string> proclaimed;
  std::size_t reported_ahead = static_cast<std::size_t>(-1);
  Phase phase = Phase::kCreating;
  Result result = Result::kPending;
  Errc error = Errc::ok;
  ContenderKind kind = ContenderKind::kExclusive;  // what the node queues for
  unsigned generation = 0;
  unsigned step = 0;        // bumped by every new step: answers to older steps are ignored
  unsigned create_seq = 0;  // the step of the create in flight
  std::int32_t sequence = 0;
  int requeues = 0;
  int retry_attempts = 0;  // retries after a pause (throttled), for the backoff
  bool try_once = false;
  bool create_in_flight = false;
  bool pred_was_first = false;
  bool pred_gone = false;  // in this step, the predecessor read said NoNode
  bool awaiting_self_read = false;
  bool self_deleted = false;
  bool retry_pending = false;
  bool revocation_pending = false;  // asked to let go before it held (revocation.cpp)
  // queue_walk.cpp: its create's listing is asked for once the create is answered (another
  // create was in flight: it shares a listing); it waits behind a node the QueueView chose, and
  // walks the view when that node goes.
  bool listing_deferred = false;
  bool walks_view = false;
  std::int32_t pred_sequence = 0;
  // The figures' marks (mutex_figures.cpp) in one byte, which fits beside the flags above (a
  // held lock costs no more for them): it waited behind someone; its queue length is counted; a
  // hold began whose end is not counted yet (timed from its Acquisition's acquired_at).
  static constexpr std::uint8_t kContended = 1, kQueued = 2, kHoldOpen = 4;
  std::uint8_t marks = 0;
  bool marked(std::uint8_t m) const noexcept { return (marks & m) != 0; }
  void mark(std::uint8_t m, bool on = true) noexcept {
    marks = static_cast<std::uint8_t>(on ? marks | m : marks & ~m);
  }

  // An asynchronous acquisition (Mutex::async_lock): no thread waits for it. Its outcome is
  // settled once, through `handler`; once acquired, a Hold owns it.
  struct Async {
    LockHandler handler;
    Executor executor;
    bool settled = false;   // the outcome is decided: the handler is on its way, or ran
    bool released = false;  // its Hold released it, or the Mutex was destroyed
    bool internal = false;  // another recipe's: delivered on the monitor (async_acquire)
    LockState reported_state = LockState::kNotHeld;
    std::optional<Acquisition> acquisition;
    SessionCore::ScheduledId deadline_task;         // cancelled once settled
    std::function<void()> on_released;              // release_hold_then()
    std::chrono::steady_clock::time_point started;  // the call (the wait's figure)
  };
  std::unique_ptr<Async> async;  // null for a blocking lock()

  // A Mutex with a lock-delay (MutexOptions::lock_delay, lock_delay.cpp): how the holder before
  // us ended, as far as we can tell from the lock path's release mark.
  struct LockDelay {
    std::string waited_behind;  // the node we last waited behind (empty: none in this queueing)
    std::string mark;           // the lock path's data, read pipelined with a listing...
    unsigned mark_step = 0;     // ...of this step (0: none)
    // Read before our create: the lock path had no child and no child change since the last
    // mark (or did not exist); its cversion then (0 if it did not exist).
    bool quiet_before_create = false;
    std::int32_t cversion_before_create = 0;
    // The last listing: the lock path's cversion and number of children it showed.
    std::int32_t listed_cversion = 0;
    std::size_t listed_children = 0;
    std::uint64_t mark_watch = 0;        // data watch on the lock path, while behind the head
    std::uint64_t mark_watch_epoch = 0;  // connection epoch it was set on
    bool mark_changed = false;           // it fired: a release mark was written meanwhile
    bool served = false;                 // no delay is due any more (waited out, or clean)
    bool mark_release = false;           // this cleanup is a release: write the mark
  };
  std::unique_ptr<LockDelay> delay;  // null without a lock-delay
};

}  // namespace zklock::detail
