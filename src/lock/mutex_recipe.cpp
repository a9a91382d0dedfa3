// The lock recipe's queue: listing, watching the predecessor, holding, queueing again, and the
// handling of failed steps - MutexCore's state machine, driven by ZooKeeper completions (see the
// diagram in mutex_core.h). Creating our node is in mutex_create.cpp, deleting it in
// mutex_cleanup.cpp. Every function here runs with MutexCore::mutex_ held.
#include <algorithm>
#include <utility>

#include "base/random_uuid.h"
#include "base/retry_rules.h"
#include "lock/lock_node_name.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {
namespace {

constexpr int kMaxRequeues = 16;  // our node vanishing again and again: fail, do not spin
// While the connection is down, how often a cleanup looks whether it is back (sends nothing).
constexpr std::chrono::milliseconds kCleaningPoll{100};

}  // namespace

void MutexCore::list_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  a->phase = Attempt::Phase::kListing;
  const unsigned step = ++a->step;
  if (walks_queue()) {
    join_or_send_listing_locked(a, step, *c);  // queue_walk.cpp
    return;
  }
  read_mark_with_listing_locked(a, *c, step);  // with a lock-delay, after a wait behind someone
  auto self = shared_from_this();
  c->get_children(path_, [self, a, step](OpResult&& r) { self->on_listed(a, step, std::move(r)); });
}

void MutexCore::on_listed(const AttemptPtr& a, unsigned step, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->step != step || a->phase != Attempt::Phase::kListing) return;
  auto self = shared_from_this();
  if (r.rc == Errc::no_node) {  // the lock path itself is gone, and our node with it
    vanished_locked(a);
    return;
  }
  if (r.rc != Errc::ok) {
    if (step_failed_locked(a, r.rc, [self, a] { self->list_locked(a); })) return;
    fail_locked(a, r.rc);
    return;
  }
  if (a->delay) {  // lock_delay.cpp: whether a node came and went since the read before our create
    a->delay->listed_cversion = r.stat.cversion;
    a->delay->listed_children = r.children.size();
  }
  // Every child parsed once; the checks, the order and the evaluation use what was parsed.
  std::vector<ListedContender> queue = parse_listing(std::move(r.children));
  if (!read_write_ && std::any_of(queue.begin(), queue.end(), [](const ListedContender& c) {
        return c.parsed.kind != ContenderKind::kExclusive;
      })) {
    // Another library's read/write lock lives here: its readers would not see us. Refuse (our
    // node is deleted on the way out) rather than hold the lock beside them.
    fail_locked(a, Errc::incompatible_lock);
    return;
  }
  if (!orphans_.empty()) {
    // Our own nodes that could not be deleted are not in our way: they go with our session.
    queue.erase(
        std::remove_if(queue.begin(), queue.end(),
                       [&](const ListedContender& c) { return orphans_.count(c.name) != 0; }),
        queue.end());
  }
  if (!sequence_order_reliable(queue)) {
    order_by_czxid_locked(a, std::move(queue));
    return;
  }
  sort_by_sequence(queue);
  evaluate_locked(a, queue, /*by_sequence=*/true);
}

void MutexCore::order_by_czxid_locked(const AttemptPtr& a, std::vector<ListedContender> listed) {
  // Near the top of the sequence range the numbers stop ordering the queue (3.8.0 saturates at
  // 2147483647, other versions wrap to negative). Creation order is czxid order: read each
  // contender's czxid - all reads pipelined, one round trip - and sort by it.
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  struct Gathered {
    std::size_t remaining = 0;
    Errc error = Errc::ok;
    std::vector<std::pair<std::int64_t, ListedContender>> by_czxid;
  };
  auto gathered = std::make_shared<Gathered>();
  if (listed.empty()) {
    vanished_locked(a);
    return;
  }
  gathered->remaining = listed.size();
  const unsigned step = a->step;
  auto self = shared_from_this();
  for (auto& contender : listed) {
    const std::string path = path_ + "/" + contender.name;
    c->exists(path, [self, a, step, gathered, contender = std::move(contender)](OpResult&& r) {
      std::lock_guard lock(self->mutex_);
      if (r.rc == Errc::ok) {
        gathered->by_czxid.emplace_back(r.stat.czxid, contender);
      } else if (r.rc != Errc::no_node && gathered->error == Errc::ok) {  // gone: not in line
        gathered->error = r.rc;
      }
      if (--gathered->remaining != 0) return;
      if (a->step != step || a->phase != Attempt::Phase::kListing) return;
      if (gathered->error != Errc::ok) {
        if (self->step_failed_locked(a, gathered->error, [self, a] { self->list_locked(a); }))
          return;
        self->fail_locked(a, gathered->error);
        return;
      }
      std::sort(gathered->by_czxid.begin(), gathered->by_czxid.end(),
                [](const auto& x, const auto& y) { return x.first < y.first; });
      std::vector<ListedContender> queue;
      queue.reserve(gathered->by_czxid.size());
      for (auto& entry : gathered->by_czxid) queue.push_back(std::move(entry.second));
      self->evaluate_locked(a, queue, /*by_sequence=*/false);
    });
  }
}

void MutexCore::evaluate_locked(const AttemptPtr& a, const std::vector<ListedContender>& queue,
                                bool by_sequence) {
  // By sequence in O(log n): one listing may serve thousands of waiters (queue_walk.cpp).
  const auto it = by_sequence ? find_in_sorted(queue, a->sequence, a->node_name)
                              : std::find_if(queue.begin(), queue.end(),
                                             [&](const auto& c) { return c.name == a->node_name; });
  if (it == queue.end()) {
    vanished_locked(a);
    return;
  }
  const auto position = static_cast<std::size_t>(it - queue.begin());
  if (!a->marked(Attempt::kQueued)) {
    a->mark(Attempt::kQueued);
    if (LockMeter* meter = meter_of(a->kind)) meter->queued(position + 1);
  }
  // Whom we wait behind: a reader, the nearest earlier contender that excludes readers (every
  // other kind does; readers between it and us hold beside us later); everyone else, the direct
  // predecessor. Only later nodes can join, so nothing ahead of the one we watch can appear.
  std::size_t ahead = position;  // contenders up to and including the one we wait behind
  if (a->kind == ContenderKind::kRead) {
    ahead = 0;
    for (std::size_t i = position; i-- > 0;) {
      if (queue[i].name == a->exempt_writer) continue;  // a downgrade's own write node
      if (excludes_readers(queue[i].parsed.kind)) {
        ahead = i + 1;
        break;
      }
    }
  }
  if (ahead != a->reported_ahead && options_.on_queue_position) {
    a->reported_ahead = ahead;
    post_callback_locked([callback = options_.on_queue_position, ahead] { callback(ahead); });
  }
  if (ahead == 0) {
    acquired_locked(a);
    return;
  }
  if (a->try_once) {
    a->result = Attempt::Result::kNotAcquired;
    cleanup_locked(a);
    return;
  }
  a->mark(Attempt::kContended);
  a->pred_path = path_ + "/" + queue[ahead - 1].name;
  a->pred_sequence = queue[ahead - 1].parsed.sequence;
  // When it goes, the QueueView (merged from this listing by the caller) tells whom next.
  a->walks_view = by_sequence && walks_queue() && view_.generation() == a->generation;
  if (a->walks_view) view_.claim(a->sequence, a);  // for the attempt ahead (prepare_successor)
  waiting_behind_locked(a, queue[ahead - 1].name);
  // When a first-in-line node we wait behind goes, nothing excluding us is ahead any more.
  a->pred_was_first = ahead == 1;
  watch_locked(a);
}

void MutexCore::watch_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  a->phase = Attempt::Phase::kWatching;
  const unsigned step = ++a->step;
  a->pred_gone = false;
  // Set before the predecessor's watch, so that its release mark cannot slip between the two.
  if (a->pred_was_first) watch_mark_locked(a, *c, step);
  auto self = shared_from_this();
  // getData, not exists: on a node already gone it leaves no watch behind, and it sets the watch
  // in the same call as the check (no window where a delete goes unseen).
  a->pred_watch_path = a->pred_path;
  a->pred_watch = c->get_data(
      a->pred_path, [self, a, step](WatchEventType t) { self->on_pred_event(a, step, t); },
      [self, a, step](OpResult&& r) { self->on_pred_read(a, step, std::move(r)); });
  if (a->pred_was_first && a->self_watch == 0) {
    // Fast path: when a first-in-line predecessor goes, we are first (nobody can join ahead of us)
    // - provided our own node is still there, which this watch tells us.
    a->awaiting_self_read = true;
    const std::uint64_t epoch = c->epoch();
    a->self_watch = c->get_data(
        a->node_path, [self, a](WatchEventType t) { self->on_self_event(a, t); },
        [self, a, step, epoch](OpResult&& r) { self->on_self_read(a, step, epoch, std::move(r)); });
  } else {
    a->awaiting_self_read = false;
  }
}

void MutexCore::on_pred_read(const AttemptPtr& a, unsigned step, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->step != step || a->phase != Attempt::Phase::kWatching) return;
  auto self = shared_from_this();
  if (r.rc == Errc::ok) return;  // watching; the event will come
  a->pred_watch = 0;
  if (r.rc == Errc::no_node) {
    if (a->walks_view) view_.erase(a->pred_sequence);
    if (a->pred_was_first && a->awaiting_self_read) {
      a->pred_gone = true;  // decided when our own read answers
    } else if (a->pred_was_first && a->self_watch_epoch != 0 && !a->self_deleted) {
      acquired_locked(a);
    } else {
      // Gone before we could watch it: look again at once. (Not a walk of the view: the view may
      // hold more nodes that went unseen - other sessions' - and a listing forgets them all in
      // one round trip, where the walk would spend one on each.)
      list_locked(a);
    }
    return;
  }
  if (r.rc == Errc::no_auth) {
    // A contender we may not read (another application's node, created without READ for us):
    // watch it with exists, which needs no permission.
    watch_unreadable_locked(a);
    return;
  }
  if (step_failed_locked(a, r.rc, [self, a] { self->watch_locked(a); })) return;
  fail_locked(a, r.rc);
}

// A predecessor we may not read: ZooKeeper neither answers our getData nor delivers a watch event
// for it. We watch the lock path's children instead - any change wakes us (a small herd, only
// while such a contender is ahead of us) - and look again.
void MutexCore::watch_unreadable_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  a->pred_watch_path = path_;
  a->pred_watch = c->get_children_watched(
      path_, [self, a, step](WatchEventType t) { self->on_pred_event(a, step, t); },
      [self, a, step](OpResult&& r) {
        std::lock_guard lock(self->mutex_);
        if (a->step != step || a->phase != Attempt::Phase::kWatching) return;
        const std::string pred = node_name_of(a->pred_path);
        if (r.rc == Errc::ok &&
            std::find(r.children.begin(), r.children.end(), pred) != r.children.end()) {
          return;  // still ahead of us: watching
        }
        if (auto conn = self->connection_for_locked(a); conn && a->pred_watch != 0) {
          conn->remove_watch(a->pred_watch_path, a->pred_watch, [](OpResult&&) {});
        }
        a->pred_watch = 0;
        if (r.rc == Errc::ok || r.rc == Errc::no_node) {
          self->list_locked(a);  // gone meanwhile: look again
          return;
        }
        if (self->step_failed_locked(a, r.rc, [self, a] { self->watch_unreadable_locked(a); }))
          return;
        self->fail_locked(a, r.rc);
      });
}

void MutexCore::on_self_read(const AttemptPtr& a, unsigned step, std::uint64_t epoch,
                             OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (r.rc == Errc::ok) {
    a->self_watch_epoch = epoch;
    own_data_read_locked(a, r.value, r.stat.version);
  } else {
    a->self_watch = 0;
  }
  if (a->step != step) return;
  a->awaiting_self_read = false;
  if (a->phase != Attempt::Phase::kWatching) return;
  if (r.rc == Errc::no_node) {
    vanished_locked(a);
    return;
  }
  if (r.rc != Errc::ok) return;  // the predecessor read reports the same failure and retries
  if (a->pred_gone) acquired_locked(a);
}

void MutexCore::on_pred_event(const AttemptPtr& a, unsigned step, WatchEventType type) {
  std::lock_guard lock(mutex_);
  if (a->step != step || a->phase != Attempt::Phase::kWatching) return;
  a->pred_watch = 0;
  auto c = connection_for_locked(a);
  // The fast path trusts our own watch only if it was set on this very connection: after a
  // reconnect the server replays what happened meanwhile in an order of its own, and our node's
  // deletion may come after the predecessor's.
  const bool self_watch_current =
      c && a->self_watch != 0 && a->self_watch_epoch != 0 && a->self_watch_epoch == c->epoch();
  if (type == WatchEventType::kDeleted && a->walks_view) view_.erase(a->pred_sequence);
  if (type == WatchEventType::kDeleted && a->pred_was_first && self_watch_current &&
      !a->self_deleted) {
    acquired_locked(a);
    return;
  }
  if (a->walks_view && type == WatchEventType::kDeleted) {
    walk_on_locked(a);  // queue_walk.cpp: whom next, from what the view knows
    return;
  }
  if (a->walks_view && type == WatchEventType::kChanged) {
    watch_locked(a);  // its data changed (a stamp, a revocation request): it is still there
    return;
  }
  list_locked(a);  // a notification never means "you are first" on its own
}

void MutexCore::on_self_event(const AttemptPtr& a, WatchEventType type) {
  std::lock_guard lock(mutex_);
  a->self_watch = 0;
  a->self_watch_epoch = 0;
  if (type != WatchEventType::kDeleted) {
    // The data changed (anyone may set it): the watch is used up. Set it again, or a deletion
    // after this would go unseen.
    if (a->phase == Attempt::Phase::kHeld || a->phase == Attempt::Phase::kWatching) {
      rearm_self_watch_locked(a);
    }
    return;
  }
  a->self_deleted = true;
  switch (a->phase) {
    case Attempt::Phase::kHeld:
      report_state_locked();  // deleted under us (an operator, or a bug elsewhere): Lost
      cv_.notify_all();
      return;
    case Attempt::Phase::kListing:
    case Attempt::Phase::kWatching:
    case Attempt::Phase::kDelaying:
      vanished_locked(a);
      return;
    default:
      return;  // our own delete (release / cleanup)
  }
}

void MutexCore::rearm_self_watch_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c || a->node_path.empty()) return;
  auto self = shared_from_this();
  const std::uint64_t epoch = c->epoch();
  a->self_watch = c->get_data(
      a->node_path, [self, a](WatchEventType t) { self->on_self_event(a, t); },
      [self, a, epoch](OpResult&& r) {
        std::lock_guard lock(self->mutex_);
        if (r.rc == Errc::ok) {
          a->self_watch_epoch = epoch;
          self->own_data_read_locked(a, r.value, r.stat.version);
          return;
        }
        a->self_watch = 0;
        if (r.rc == Errc::no_node && a->phase == Attempt::Phase::kHeld && !a->self_deleted) {
          a->self_deleted = true;  // deleted before the watch was back
          self->report_state_locked();
          self->cv_.notify_all();
        } else if (r.rc != Errc::no_node && a->phase == Attempt::Phase::kHeld && a->probe == 0) {
          // No watch: the session's heartbeats look at the node instead.
          std::weak_ptr<MutexCore> weak = self;
          a->probe = self->session_->add_probe(a->node_path, [weak, a] {
            if (auto core = weak.lock()) core->on_held_node_missing(a);
          });
        }
      });
}

bool MutexCore::still_held_locked(const AttemptPtr& a) const {
  if (a->self_deleted) return false;
  const SessionState s = session_->state_of(a->generation);
  return s == SessionState::kConnected || s == SessionState::kSuspended;
}

void MutexCore::acquired_locked(const AttemptPtr& a) {
  if (!still_held_locked(a)) {
    vanished_locked(a);  // never hand out a lock that is already lost
    return;
  }
  if (held_back_by_lock_delay_locked(a)) return;
  a->phase = Attempt::Phase::kHeld;
  a->result = Attempt::Result::kAcquired;
  if (walks_queue()) prepare_successor_locked(a);  // queue_walk.cpp
  begin_hold_locked(a);
  if (options_.stamp_held_since) stamp_held_since_locked(a);
  if (a->async) settle_async_locked(a, Errc::ok);
  if (!watch_for_revocation_locked(a)) {
    // No watch on our own node (we were first at once, not revocable): the session's heartbeats
    // read it instead, so a node deleted under us (an operator) still turns the lock Lost - at no
    // cost per acquire.
    std::weak_ptr<MutexCore> weak = shared_from_this();
    a->probe = session_->add_probe(a->node_path, [weak, a] {
      if (auto self = weak.lock()) self->on_held_node_missing(a);
    });
  }
  cv_.notify_all();
}

void MutexCore::on_held_node_missing(const AttemptPtr& a) {
  std::lock_guard lock(mutex_);
  if (a->phase != Attempt::Phase::kHeld || a->self_deleted) return;
  a->self_deleted = true;
  report_state_locked();
  cv_.notify_all();
}

void MutexCore::vanished_locked(const AttemptPtr& a) {
  // Our node went away while we waited (deleted by an operator, or its session ended), or the lock
  // was lost before it could be handed out: queue again.
  if (a->probe != 0) {
    session_->remove_probe(a->probe);
    a->probe = 0;
  }
  if (auto c = connection_for_locked(a); c && a->pred_watch != 0) {
    c->remove_watch(a->pred_watch_path, a->pred_watch, [](OpResult&&) {});
  }
  a->pred_watch = 0;
  drop_mark_watch_locked(a);
  if (session_->state_of(a->generation) == SessionState::kLost) {
    // The session is over (by the clock, or ended): start again once the next one is open.
    a->phase = Attempt::Phase::kAwaitGeneration;
    if (a->generation != session_->generation()) restart_locked(a);
    return;
  }
  if (++a->requeues > kMaxRequeues) {
    a->node_path.clear();
    fail_locked(a, Errc::no_node);
    return;
  }
  a->uuid = random_uuid();
  start_create_locked(a);
}

void MutexCore::restart_locked(const AttemptPtr& a) {
  // A new session generation: nothing of the old one is ours any more (its node dies with it).
  if (a->async && a->generation != 0) {
    // An asynchronous request does not re-queue on its own: its handler hears of the loss.
    fail_locked(a, Errc::session_lost);
    return;
  }
  if (a->probe != 0) {
    session_->remove_probe(a->probe);
    a->probe = 0;
  }
  a->uuid = random_uuid();
  a->retry_pending = false;
  a->retry = nullptr;
  start_create_locked(a);
}

void MutexCore::fail_locked(const AttemptPtr& a, Errc code) {
  a->result = Attempt::Result::kFailed;
  a->error = code;
  cleanup_locked(a);
  cv_.notify_all();
}

bool MutexCore::step_failed_locked(const AttemptPtr& a, Errc rc, std::function<void()> retry) {
  if (rc == Errc::closed || session_->closed()) {
    if (a->phase == Attempt::Phase::kCleaning) {
      finish_cleanup_locked(a);
    } else {
      fail_locked(a, Errc::closed);
    }
    return true;
  }
  if (a->phase == Attempt::Phase::kCleaning) {
    if (a->generation != session_->generation()) {
      finish_cleanup_locked(a);  // the node (if any) went with its session
      return true;
    }
    if (is_session_gone(rc) || cured_by_reconnecting(rc) || worth_retrying_later(rc)) {
      retry_cleaning_locked(
          a, retry ? std::move(retry) : [] {});
      return true;
    }
    return false;
  }
  if (is_session_gone(rc) || a->generation != session_->generation()) {
    // on_session_change restarts once the next generation is there.
    a->phase = Attempt::Phase::kAwaitGeneration;
    if (a->generation != session_->generation()) restart_locked(a);
    return true;
  }
  if (cured_by_reconnecting(rc) && retry) {
    retry_when_connected_locked(a, std::move(retry));
    return true;
  }
  if (worth_retrying_later(rc) && retry) {
    retry_later_locked(a, std::move(retry));
    return true;
  }
  return false;
}

void MutexCore::retry_when_connected_locked(const AttemptPtr& a, std::function<void()> retry) {
  if (session_->connected()) {
    retry();  // queued behind the reconnect if the connection just dropped
    return;
  }
  a->retry_pending = true;
  a->retry = std::move(retry);
}

// A cleanup must finish even after its Mutex is gone (no observer hears of reconnects then): it is
// driven by the session's scheduler, and the task keeps this core alive until it is done.
void MutexCore::retry_cleaning_locked(const AttemptPtr& a, std::function<void()> retry) {
  const unsigned step = a->step;
  const auto delay = session_->connected() ? retry_backoff(a->retry_attempts++) : kCleaningPoll;
  auto self = shared_from_this();
  session_->schedule(delay, [self, a, step, retry = std::move(retry)]() mutable {
    std::lock_guard lock(self->mutex_);
    if (a->step != step || a->phase != Attempt::Phase::kCleaning) return;
    if (self->session_->closed() || a->generation != self->session_->generation()) {
      self->finish_cleanup_locked(a);  // closing deleted it, or it went with its session
      return;
    }
    if (!self->session_->connected()) {
      self->retry_cleaning_locked(a, std::move(retry));  // look again soon; nothing sent
      return;
    }
    retry();
  });
}

void MutexCore::retry_later_locked(const AttemptPtr& a, std::function<void()> retry) {
  const auto delay = retry_backoff(a->retry_attempts++);
  const unsigned step = a->step;
  std::weak_ptr<MutexCore> weak = shared_from_this();
  session_->schedule(delay, [weak, a, step, retry = std::move(retry)] {
    auto self = weak.lock();
    if (!self) return;
    std::lock_guard lock(self->mutex_);
    if (a->step == step) retry();
  });
}

}  // namespace zklock::detail
