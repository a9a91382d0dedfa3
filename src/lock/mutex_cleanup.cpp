// The lock recipe's last steps: every exit that does not hold the lock - and every release -
// deletes our node (and our predecessor watch), retrying what can be retried. Every function here
// runs with MutexCore::mutex_ held.
#include <algorithm>
#include <utility>

#include "lock/lock_node_name.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {

void MutexCore::cleanup_locked(const AttemptPtr& a) {
  if (a->phase == Attempt::Phase::kHeld) end_hold_locked(a);  // released (or already Lost)
  // A release of a lock held to the end marks the lock path (lock_delay.cpp); giving up does not.
  if (a->delay) a->delay->mark_release = a->phase == Attempt::Phase::kHeld && !a->self_deleted;
  drop_mark_watch_locked(a);
  const bool was_watching = a->phase == Attempt::Phase::kWatching;
  // A lost create reply being recovered: our node may well exist, its path not known yet
  // (CURATOR-79). The recovery goes on, in cleaning mode: it deletes what it finds.
  const bool was_recovering = a->phase == Attempt::Phase::kRecovering;
  if (a->probe != 0) {
    session_->remove_probe(a->probe);
    a->probe = 0;
  }
  a->phase = Attempt::Phase::kCleaning;
  ++a->step;  // answers to the waiting steps are void now
  a->retry_pending = false;
  a->retry = nullptr;
  if (a->create_in_flight) return;  // on_created finishes the job
  auto c = connection_for_locked(a);
  if (!c) {
    finish_cleanup_locked(a);  // the node (if any) went with its session
    return;
  }
  if (was_watching && a->pred_watch != 0) {
    c->remove_watch(a->pred_watch_path, a->pred_watch, [](OpResult&&) {});
  }
  a->pred_watch = 0;
  if (a->node_path.empty()) {
    if (was_recovering) {
      recover_locked(a);
      return;
    }
    finish_cleanup_locked(a);
    return;
  }
  delete_node_locked(a);
}

void MutexCore::delete_node_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    finish_cleanup_locked(a);
    return;
  }
  a->phase = Attempt::Phase::kCleaning;
  if (a->delay && a->delay->mark_release) {
    delete_with_mark_locked(a, *c);
    return;
  }
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  c->remove(a->node_path, -1,
            [self, a, step](OpResult&& r) { self->on_deleted(a, step, std::move(r)); });
}

void MutexCore::on_deleted(const AttemptPtr& a, unsigned step, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->step != step || a->phase != Attempt::Phase::kCleaning) return;
  deleted_locked(a, r.rc);
}

void MutexCore::deleted_locked(const AttemptPtr& a, Errc rc) {
  if (rc == Errc::ok || rc == Errc::no_node) {
    if (a->generation == view_.generation()) view_.erase(a->sequence);  // a fact for the waiters
    finish_cleanup_locked(a);
    return;
  }
  auto self = shared_from_this();
  if (step_failed_locked(a, rc, [self, a] { self->delete_node_locked(a); })) return;
  // Refused for good (not authorized, ...): the node stays until the session ends. Say so, and do
  // not let our own next attempt queue behind it.
  if (a->generation == session_->generation()) {
    if (orphans_generation_ != a->generation) {
      orphans_.clear();
      orphans_generation_ = a->generation;
    }
    orphans_.insert(node_name_of(a->node_path));
    if (a->generation == view_.generation()) view_.erase(a->sequence);  // in nobody's way
  }
  if (options_.on_release_error) {
    post_callback_locked([callback = options_.on_release_error, node = a->node_path,
                          ec = make_error_code(rc)] { callback(node, ec); });
  }
  finish_cleanup_locked(a);
}

void MutexCore::finish_cleanup_locked(const AttemptPtr& a) {
  a->phase = Attempt::Phase::kDone;
  ++a->step;
  a->retry_pending = false;
  a->retry = nullptr;
  attempts_.erase(std::remove(attempts_.begin(), attempts_.end(), a), attempts_.end());
  // An asynchronous attempt that did not acquire is settled once nothing of it is left.
  if (a->async && a->result != Attempt::Result::kAcquired) settle_async_locked(a, a->error);
  fire_released_locked(a);
  cv_.notify_all();
}

}  // namespace zklock::detail
