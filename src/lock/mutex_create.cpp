// The lock recipe's first steps: creating our node (and only the missing parents of the lock
// path), and finding it again after a lost create reply. Every function here runs with
// MutexCore::mutex_ held.
#include <utility>

#include "base/random_uuid.h"
#include "lock/lock_node_name.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {

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
  a->walks_view = false;
  const unsigned step = a->step;
  if (lock_delay_on()) prepare_lock_delay_locked(a, *c, step);
  auto self = shared_from_this();
  // While another create of ours is in flight (many requests queueing at once), this one does
  // not pipeline a listing of its own: once answered it shares one with the others
  // (queue_walk.cpp) - a queue of n built with a few listings, not n of them.
  const bool counted = walks_queue();
  const std::uint64_t epoch = c->epoch();
  if (counted && creates_epoch_ != epoch) {
    creates_epoch_ = epoch;
    creates_in_flight_ = 0;  // the creates of an earlier connection have failed or will
  }
  a->listing_deferred = counted && creates_in_flight_ > 0;
  if (counted) ++creates_in_flight_;
  // Curator's protected name, so Curator contenders queue with us on one path.
  c->create(path_ + "/" + lock_node_prefix(a->uuid, a->kind, latch_names_), node_data_,
            NodeMode::kEphemeralSequential, session_->node_acl(),
            [self, a, step, epoch, counted](OpResult&& r) {
              self->on_created(a, step, epoch, counted, std::move(r));
            });
  if (a->listing_deferred) return;
  // Pipelined: the server answers one session's requests in order, so this listing sees the create.
  if (counted) {
    send_shared_listing_locked(a, step, *c);
  } else {
    c->get_children(path_,
                    [self, a, step](OpResult&& r) { self->on_listed(a, step, std::move(r)); });
  }
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
  auto found =
      std::make_shared<Found>(Found{chain.size(), std::vector<bool>(chain.size()), Errc::ok});
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
        if (self->step_failed_locked(a, found->error,
                                     [self, a] { self->ensure_parents_locked(a); }))
          return;
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

void MutexCore::create_missing_parents_locked(const AttemptPtr& a,
                                              std::vector<std::string> missing) {
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
        if (self->step_failed_locked(a, r.rc, [self, a] { self->ensure_parents_locked(a); }))
          return;
        self->fail_locked(a, r.rc);
        return;
      }
      if (last) self->start_create_locked(a);
    });
  }
}

void MutexCore::on_created(const AttemptPtr& a, unsigned create_seq, std::uint64_t epoch,
                           bool counted, OpResult&& r) {
  std::lock_guard lock(mutex_);
  if (counted && epoch == creates_epoch_ && creates_in_flight_ > 0) --creates_in_flight_;
  if (a->create_seq != create_seq || !a->create_in_flight) return;
  a->create_in_flight = false;
  const bool listing_deferred = std::exchange(a->listing_deferred, false);
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
      a->node_name = node_name_of(r.value);
      a->czxid = r.stat.czxid;
      a->session_id = r.stat.ephemeral_owner;
      if (auto parsed = parse_contender_name(a->node_name)) a->sequence = parsed->sequence;
      if (listing_deferred) {
        list_locked(a);  // a listing in flight now was sent after this create: shared
        return;
      }
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
    default: {
      // A throttled create was never applied (the server drops it before processing it): send
      // it again after a pause. Any other refusal is final.
      std::function<void()> retry;
      if (r.rc == Errc::throttled) {
        auto self = shared_from_this();
        retry = [self, a] { self->start_create_locked(a); };
      }
      if (step_failed_locked(a, r.rc, std::move(retry))) return;
      fail_locked(a, r.rc);
    }
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
  c->get_children(
      path_, [self, a, step](OpResult&& r) { self->on_recovery_listing(a, step, std::move(r)); });
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
  std::vector<std::string> ours = own_nodes(r.children, a->uuid, a->kind, latch_names_);
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
      a->node_name = node_name_of(candidate);
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

}  // namespace zklock::detail
