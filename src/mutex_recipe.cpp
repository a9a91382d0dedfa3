// The lock recipe's steps: MutexCore's state machine, driven by ZooKeeper completions (see the
// diagram in mutex_core.h). Every function here runs with MutexCore::mutex_ held.
#include <algorithm>
#include <utility>

#include "mutex_attempt.h"
#include "mutex_core.h"
#include "lock_node_name.h"
#include "random_uuid.h"

namespace zklock::detail {
namespace {

constexpr int kMaxRequeues = 16;  // our node vanishing again and again: fail, do not spin
constexpr std::chrono::milliseconds kFirstRetryDelay{50};
constexpr std::chrono::milliseconds kMaxRetryDelay{2000};

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

bool is_session_gone(Errc rc) {
  return rc == Errc::session_lost || rc == Errc::session_expired || rc == Errc::invalid_state ||
         rc == Errc::closing;
}

// Failures the server may not repeat: worth sending again after a pause.
bool worth_retrying_later(Errc rc) { return rc == Errc::throttled; }

// Failures that mean "this connection is stale", cured by the next one.
bool cured_by_reconnecting(Errc rc) {
  return rc == Errc::connection_loss || rc == Errc::operation_timeout || rc == Errc::session_moved;
}

std::chrono::milliseconds backoff(int attempt) {
  auto d = kFirstRetryDelay * (1 << std::min(attempt, 6));
  return std::min(d, kMaxRetryDelay);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Acquire steps

void MutexCore::start_create_locked(const AttemptPtr& a) {
  auto c = session_->connection();
  if (!c) {
    if (session_->closed()) {
      fail_locked(a, Errc::closed);
      return;
    }
    // Between generations: on_session_change starts it again once the next one is open (no
    // generation is 0, so it always counts as changed).
    a->generation = 0;
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  a->generation = c->generation();
  if (a->uuid.empty()) a->uuid = random_uuid();
  a->phase = Attempt::Phase::kCreating;
  a->create_seq = ++a->step;
  a->create_in_flight = true;
  a->node_path.clear();
  a->pred_watch = 0;
  a->self_watch = 0;
  a->self_watch_epoch = 0;
  a->self_deleted = false;
  const unsigned step = a->step;
  auto self = shared_from_this();
  // Curator's protected name, so Curator contenders queue with us on one path.
  c->create(path_ + "/" + lock_node_prefix(a->uuid), node_data_, NodeMode::kEphemeralSequential,
            session_->node_acl(), [self, a, step](OpResult&& r) { self->on_created(a, step, std::move(r)); });
  // Pipelined: the server answers one session's requests in order, so this listing sees the create.
  c->get_children(path_, [self, a, step](OpResult&& r) { self->on_listed(a, step, std::move(r)); });
}

// The lock path (or one of its ancestors) is missing. Only what is missing is created: ZooKeeper
// checks CREATE permission on the parent before it looks whether a node exists, so creating an
// existing ancestor fails with NOAUTH for an application that owns /app but not "/". One round trip
// finds the missing ones (every exists pipelined), one more creates them, top down.
void MutexCore::ensure_parents_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    restart_locked(a);
    return;
  }
  std::vector<std::string> chain;  // "/a", "/a/b", ..., path_
  for (std::size_t slash = path_.find('/', 1); slash != std::string::npos;
       slash = path_.find('/', slash + 1)) {
    chain.push_back(path_.substr(0, slash));
  }
  chain.push_back(path_);
  a->phase = Attempt::Phase::kCreating;
  const unsigned step = ++a->step;
  struct Found {
    std::size_t remaining;
    std::vector<bool> missing;
    Errc error = Errc::ok;
  };
  auto found = std::make_shared<Found>(Found{chain.size(), std::vector<bool>(chain.size()), Errc::ok});
  auto self = shared_from_this();
  for (std::size_t i = 0; i < chain.size(); ++i) {
    c->exists(chain[i], [self, a, step, found, chain, i](OpResult&& r) {
      std::lock_guard lock(self->mutex_);
      if (r.rc == Errc::no_node) {
        found->missing[i] = true;
      } else if (r.rc != Errc::ok && found->error == Errc::ok) {
        found->error = r.rc;
      }
      if (--found->remaining != 0) return;
      if (a->step != step || a->phase != Attempt::Phase::kCreating) return;
      if (found->error != Errc::ok) {
        if (self->step_failed_locked(a, found->error, [self, a] { self->ensure_parents_locked(a); })) return;
        self->fail_locked(a, found->error);
        return;
      }
      std::vector<std::string> missing;
      for (std::size_t k = 0; k < chain.size(); ++k) {
        if (found->missing[k]) missing.push_back(chain[k]);
      }
      self->create_missing_parents_locked(a, std::move(missing));
    });
  }
}

void MutexCore::create_missing_parents_locked(const AttemptPtr& a, std::vector<std::string> missing) {
  auto c = connection_for_locked(a);
  if (!c) {
    restart_locked(a);
    return;
  }
  if (missing.empty()) {  // created by someone else meanwhile
    start_create_locked(a);
    return;
  }
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  const NodeMode mode = options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    const bool last = i + 1 == missing.size();
    c->create(missing[i], {}, mode, session_->node_acl(), [self, a, step, last](OpResult&& r) {
      std::lock_guard lock(self->mutex_);
      if (a->step != step || a->phase != Attempt::Phase::kCreating) return;
      if (r.rc != Errc::ok && r.rc != Errc::node_exists) {
        ++a->step;  // the later creates of this round are void
        if (self->step_failed_locked(a, r.rc, [self, a] { self->ensure_parents_locked(a); })) return;
        self->fail_locked(a, r.rc);
        return;
      }
      if (last) self->start_create_locked(a);
    });
  }
}

void MutexCore::on_created(const AttemptPtr& a, unsigned create_seq, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->create_seq != create_seq || !a->create_in_flight) return;
  a->create_in_flight = false;
  if (a->phase == Attempt::Phase::kCleaning) {
    if (r.rc == Errc::ok) {
      a->node_path = r.value;
      delete_node_locked(a);
    } else if (r.rc == Errc::connection_loss || r.rc == Errc::operation_timeout) {
      recover_locked(a);  // it may exist: find it by its uuid and delete it
    } else {
      finish_cleanup_locked(a);
    }
    return;
  }
  if (a->phase != Attempt::Phase::kCreating) return;
  switch (r.rc) {
    case Errc::ok:
      a->node_path = r.value;
      a->node_name = base_name(r.value);
      a->czxid = r.stat.czxid;
      a->session_id = r.stat.ephemeral_owner;
      if (auto parsed = parse_contender_name(a->node_name)) a->sequence = parsed->sequence;
      a->phase = Attempt::Phase::kListing;  // the pipelined listing comes next
      return;
    case Errc::no_node:
      ensure_parents_locked(a);
      return;
    case Errc::connection_loss:
    case Errc::operation_timeout:
      // The create may have happened: never create blindly again (that leaves an orphan).
      a->phase = Attempt::Phase::kRecovering;
      recover_locked(a);
      return;
    default:
      if (step_failed_locked(a, r.rc, nullptr)) return;
      fail_locked(a, r.rc);
  }
}

// After a lost create reply: is our node there? A sync first, pipelined with the listing: the
// server we reach now may not have applied our create yet (it may have come through another one),
// and a listing without it would make us create a second node - an orphan in our own session.
void MutexCore::recover_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    if (a->phase == Attempt::Phase::kCleaning) {
      finish_cleanup_locked(a);  // whatever was created died with that session
    } else {
      a->phase = Attempt::Phase::kAwaitGeneration;
    }
    return;
  }
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  c->sync(path_, [](OpResult&&) {});  // its failure shows in the listing's, answered after it
  c->get_children(path_, [self, a, step](OpResult&& r) {
    self->on_recovery_listing(a, step, std::move(r));
  });
}

void MutexCore::on_recovery_listing(const AttemptPtr& a, unsigned step, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->step != step) return;
  const bool cleaning = a->phase == Attempt::Phase::kCleaning;
  if (!cleaning && a->phase != Attempt::Phase::kRecovering) return;
  auto self = shared_from_this();
  if (r.rc == Errc::no_node) {  // no parent: nothing was created
    cleaning ? finish_cleanup_locked(a) : start_create_locked(a);
    return;
  }
  if (r.rc != Errc::ok) {
    if (step_failed_locked(a, r.rc, [self, a] { self->recover_locked(a); })) return;
    cleaning ? finish_cleanup_locked(a) : fail_locked(a, r.rc);
    return;
  }
  std::vector<std::string> ours = own_nodes(r.children, a->uuid);
  if (ours.empty()) {  // the create never happened
    cleaning ? finish_cleanup_locked(a) : start_create_locked(a);
    return;
  }
  adopt_recovered_locked(a, std::move(ours));
}

// Adopts the first of our nodes found by uuid, if the current session owns it (CURATOR-498: never
// an old session's node), and deletes any later duplicate.
void MutexCore::adopt_recovered_locked(const AttemptPtr& a, std::vector<std::string> ours) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase == Attempt::Phase::kCleaning ? finish_cleanup_locked(a) : restart_locked(a);
    return;
  }
  const std::int64_t session_id = session_->session_id();
  const std::string candidate = path_ + "/" + ours.front();
  for (std::size_t i = 1; i < ours.size(); ++i) {
    c->remove(path_ + "/" + ours[i], -1, [](OpResult&&) {});  // a duplicate of ours, if owned by us
  }
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  c->get_data(candidate, {}, [self, a, step, candidate, session_id](OpResult&& r) {
    std::lock_guard lock(self->mutex_);
    if (a->step != step) return;
    const bool cleaning = a->phase == Attempt::Phase::kCleaning;
    if (r.rc == Errc::ok && r.stat.ephemeral_owner == session_id && session_id != 0) {
      a->node_path = candidate;
      a->node_name = base_name(candidate);
      a->czxid = r.stat.czxid;
      a->session_id = session_id;
      if (auto parsed = parse_contender_name(a->node_name)) a->sequence = parsed->sequence;
      cleaning ? self->delete_node_locked(a) : self->list_locked(a);
      return;
    }
    if (r.rc == Errc::ok || r.rc == Errc::no_node) {
      // Not ours (an old session's, going away with it) or gone: create afresh, under a new uuid.
      a->uuid = random_uuid();
      cleaning ? self->finish_cleanup_locked(a) : self->start_create_locked(a);
      return;
    }
    if (self->step_failed_locked(a, r.rc, [self, a] { self->recover_locked(a); })) return;
    cleaning ? self->finish_cleanup_locked(a) : self->fail_locked(a, r.rc);
  });
}

void MutexCore::list_locked(const AttemptPtr& a) {
  auto c = connection_for_locked(a);
  if (!c) {
    a->phase = Attempt::Phase::kAwaitGeneration;
    return;
  }
  a->phase = Attempt::Phase::kListing;
  const unsigned step = ++a->step;
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
  if (!orphans_.empty()) {
    // Our own nodes that could not be deleted are not in our way: they go with our session.
    auto& kids = r.children;
    kids.erase(std::remove_if(kids.begin(), kids.end(),
                              [&](const std::string& name) { return orphans_.count(name) != 0; }),
               kids.end());
  }
  if (!sequence_order_reliable(r.children)) {
    order_by_czxid_locked(a, std::move(r.children));
    return;
  }
  evaluate_locked(a, queue_order(std::move(r.children)));
}

void MutexCore::order_by_czxid_locked(const AttemptPtr& a, std::vector<std::string> children) {
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
    std::vector<std::pair<std::int64_t, std::string>> by_czxid;
  };
  auto gathered = std::make_shared<Gathered>();
  std::vector<std::string> names;
  for (auto& name : children) {
    if (parse_contender_name(name)) names.push_back(std::move(name));
  }
  if (names.empty()) {
    vanished_locked(a);
    return;
  }
  gathered->remaining = names.size();
  const unsigned step = a->step;
  auto self = shared_from_this();
  for (const auto& name : names) {
    c->exists(path_ + "/" + name, [self, a, step, gathered, name](OpResult&& r) {
      std::lock_guard lock(self->mutex_);
      if (r.rc == Errc::ok) {
        gathered->by_czxid.emplace_back(r.stat.czxid, name);
      } else if (r.rc != Errc::no_node && gathered->error == Errc::ok) {  // gone: not in line
        gathered->error = r.rc;
      }
      if (--gathered->remaining != 0) return;
      if (a->step != step || a->phase != Attempt::Phase::kListing) return;
      if (gathered->error != Errc::ok) {
        if (self->step_failed_locked(a, gathered->error, [self, a] { self->list_locked(a); })) return;
        self->fail_locked(a, gathered->error);
        return;
      }
      std::sort(gathered->by_czxid.begin(), gathered->by_czxid.end());
      std::vector<std::string> queue;
      queue.reserve(gathered->by_czxid.size());
      for (auto& entry : gathered->by_czxid) queue.push_back(std::move(entry.second));
      self->evaluate_locked(a, std::move(queue));
    });
  }
}

void MutexCore::evaluate_locked(const AttemptPtr& a, std::vector<std::string> queue) {
  const auto it = std::find(queue.begin(), queue.end(), a->node_name);
  if (it == queue.end()) {
    vanished_locked(a);
    return;
  }
  const auto ahead = static_cast<std::size_t>(it - queue.begin());
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
  a->pred_path = path_ + "/" + *(it - 1);
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
  auto self = shared_from_this();
  // getData, not exists: on a node already gone it leaves no watch behind, and it sets the watch
  // in the same call as the check (no window where a delete goes unseen).
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
    if (a->pred_was_first && a->awaiting_self_read) {
      a->pred_gone = true;  // decided when our own read answers
    } else if (a->pred_was_first && a->self_watch_epoch != 0 && !a->self_deleted) {
      acquired_locked(a);
    } else {
      list_locked(a);  // gone before we could watch it: look again at once
    }
    return;
  }
  if (step_failed_locked(a, r.rc, [self, a] { self->watch_locked(a); })) return;
  fail_locked(a, r.rc);
}

void MutexCore::on_self_read(const AttemptPtr& a, unsigned step, std::uint64_t epoch, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (r.rc == Errc::ok) {
    a->self_watch_epoch = epoch;
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
  if (type == WatchEventType::kDeleted && a->pred_was_first && self_watch_current && !a->self_deleted) {
    acquired_locked(a);
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
  a->phase = Attempt::Phase::kHeld;
  a->result = Attempt::Result::kAcquired;
  if (a->self_watch == 0) {
    // No watch on our own node (we were first at once): the session's heartbeats read it instead,
    // so a node deleted under us (an operator) still turns the lock Lost - at no cost per acquire.
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
    c->remove_watch(a->pred_path, a->pred_watch, [](OpResult&&) {});
  }
  a->pred_watch = 0;
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
  if (is_session_gone(rc) || a->generation != session_->generation()) {
    // on_session_change restarts (or, when cleaning, finishes) once the next generation is there.
    if (a->phase == Attempt::Phase::kCleaning) {
      if (a->generation != session_->generation()) finish_cleanup_locked(a);
      return true;
    }
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

void MutexCore::retry_later_locked(const AttemptPtr& a, std::function<void()> retry) {
  const auto delay = backoff(a->retry_attempts++);
  const unsigned step = a->step;
  std::weak_ptr<MutexCore> weak = shared_from_this();
  session_->schedule(delay, [weak, a, step, retry = std::move(retry)] {
    auto self = weak.lock();
    if (!self) return;
    std::lock_guard lock(self->mutex_);
    if (a->step == step) retry();
  });
}

// ---------------------------------------------------------------------------------------------
// Cleanup: every exit that does not hold the lock deletes our node (and our predecessor watch).

void MutexCore::cleanup_locked(const AttemptPtr& a) {
  const bool was_watching = a->phase == Attempt::Phase::kWatching;
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
    c->remove_watch(a->pred_path, a->pred_watch, [](OpResult&&) {});
  }
  a->pred_watch = 0;
  if (a->node_path.empty()) {
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
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  c->remove(a->node_path, -1, [self, a, step](OpResult&& r) { self->on_deleted(a, step, std::move(r)); });
}

void MutexCore::on_deleted(const AttemptPtr& a, unsigned step, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (a->step != step || a->phase != Attempt::Phase::kCleaning) return;
  if (r.rc == Errc::ok || r.rc == Errc::no_node) {
    finish_cleanup_locked(a);
    return;
  }
  auto self = shared_from_this();
  if (step_failed_locked(a, r.rc, [self, a] { self->delete_node_locked(a); })) return;
  // Refused for good (not authorized, ...): the node stays until the session ends. Say so, and do
  // not let our own next attempt queue behind it.
  if (a->generation == session_->generation()) {
    if (orphans_generation_ != a->generation) {
      orphans_.clear();
      orphans_generation_ = a->generation;
    }
    orphans_.insert(base_name(a->node_path));
  }
  if (options_.on_release_error) {
    post_callback_locked([callback = options_.on_release_error, node = a->node_path,
                          ec = make_error_code(r.rc)] { callback(node, ec); });
  }
  finish_cleanup_locked(a);
}

void MutexCore::finish_cleanup_locked(const AttemptPtr& a) {
  a->phase = Attempt::Phase::kDone;
  ++a->step;
  a->retry_pending = false;
  a->retry = nullptr;
  attempts_.erase(std::remove(attempts_.begin(), attempts_.end(), a), attempts_.end());
  cv_.notify_all();
}

}  // namespace zklock::detail
