// The lock-delay (MutexOptions::lock_delay): a Mutex is not handed on at once when the holder
// before us ended without a clean release. Every function here runs with MutexCore::mutex_ held.
//
// The mark of a clean release: the holder deletes its node in one multi that first sets the lock
// path's data to "zklock-released <its node name>". ZooKeeper applies the multi as one
// transaction, so the lock path's mzxid and pzxid are then both that transaction's zxid, and the
// data-watch event on the lock path reaches a watcher before the node's NodeDeleted (the ops'
// watches fire in op order, on one connection in order). Nothing else zklock does writes the lock
// path's data. How a contender tells, when it reaches the head of the line:
// - it waited behind P (the node last ahead of it): clean iff the mark names P, read after P was
//   gone. Only a holder writes marks and nobody holds between P and us, so a mark naming P means
//   P released cleanly and was the last holder. The read is pipelined with the listing that finds
//   us first (no extra round trip); on the fast path (P was first and is deleted) the data watch
//   set beside the predecessor watch tells instead: it fired before P's deletion on this same
//   connection;
// - it was first at once: clean iff the read pipelined before our create saw no child and
//   pzxid == mzxid (no node created or gone since the last mark; a missing lock path counts as
//   clean: nobody ever held there), and no node went between that read and the listing that
//   finds us first: the lock path's cversion counts every child created and every child gone, so
//   it grew by exactly the number of children listed (each created after the read, ours among
//   them). Other sessions' writes may fall between our pipelined requests: without that check a
//   contender that took the lock and ended uncleanly in between would go unseen. (Our node's
//   sequence is no measure of this: after one create and one release multi a read showed
//   cversion 2 and the server numbered the next child 1);
// - anything else - a mark naming someone else, no mark, a failed read - is an unclean end: the
//   delay is waited out from the moment we saw it (after the end itself: never shorter).
#include <utility>

#include "lock/lock_node_name.h"
#include "lock/mutex_attempt.h"
#include "lock/mutex_core.h"

namespace zklock::detail {
namespace {

std::string release_mark(const std::string& node_name) { return "zklock-released " + node_name; }

}  // namespace

void MutexCore::prepare_lock_delay_locked(const AttemptPtr& a, ClientConnection& c, unsigned step) {
  if (!a->delay) a->delay = std::make_unique<Attempt::LockDelay>();
  Attempt::LockDelay& d = *a->delay;
  // A watch of this generation was removed on the way here (vanished_locked); one of an older
  // generation went with its connection.
  d.mark_watch = 0;
  d.mark_watch_epoch = 0;
  d.waited_behind.clear();  // a new place in line: nothing seen yet
  d.served = false;
  d.quiet_before_create = false;
  d.mark_step = 0;
  auto self = shared_from_this();
  // Pipelined before the create, on the same connection: answered before it.
  c.get_data(path_, {}, [self, a, step](OpResult&& r) {
    std::lock_guard lock(self->mutex_);
    if (a->step != step || !a->delay) return;
    Attempt::LockDelay& delay = *a->delay;
    if (r.rc == Errc::no_node) {  // the create makes the path: our node will be its first child
      delay.quiet_before_create = true;
      delay.cversion_before_create = 0;
    } else if (r.rc == Errc::ok) {
      delay.quiet_before_create = r.stat.num_children == 0 && r.stat.pzxid == r.stat.mzxid;
      delay.cversion_before_create = r.stat.cversion;
    }
  });
}

void MutexCore::read_mark_with_listing_locked(const AttemptPtr& a, ClientConnection& c,
                                              unsigned step) {
  if (!a->delay || a->delay->waited_behind.empty()) return;
  auto self = shared_from_this();
  c.get_data(path_, {}, [self, a, step](OpResult&& r) {
    std::lock_guard lock(self->mutex_);
    if (a->step != step || !a->delay || r.rc != Errc::ok) return;
    a->delay->mark = std::move(r.value);
    a->delay->mark_step = step;
  });
}

void MutexCore::waiting_behind_locked(const AttemptPtr& a, const std::string& node_name) {
  if (!a->delay) return;
  if (a->delay->waited_behind != node_name) drop_mark_watch_locked(a);
  a->delay->waited_behind = node_name;
}

void MutexCore::watch_mark_locked(const AttemptPtr& a, ClientConnection& c, unsigned step) {
  if (!a->delay) return;
  Attempt::LockDelay& d = *a->delay;
  if (d.mark_watch != 0 && d.mark_watch_epoch == c.epoch()) return;  // still set
  drop_mark_watch_locked(a);
  d.mark_changed = false;
  auto self = shared_from_this();
  const std::uint64_t epoch = c.epoch();
  d.mark_watch_epoch = epoch;
  d.mark_watch = c.get_data(
      path_,
      [self, a, epoch](WatchEventType type) {
        std::lock_guard lock(self->mutex_);
        if (!a->delay || a->delay->mark_watch_epoch != epoch) return;
        a->delay->mark_watch = 0;
        if (type == WatchEventType::kChanged) a->delay->mark_changed = true;
      },
      [self, a, step](OpResult&& r) {
        std::lock_guard lock(self->mutex_);
        if (!a->delay) return;
        if (r.rc != Errc::ok) {
          a->delay->mark_watch = 0;  // none was left (a missing lock path: our node is gone too)
          return;
        }
        // The mark as it was when the watch was set: if our predecessor is gone already when its
        // own read answers, this tells (same step).
        if (a->step != step) return;
        a->delay->mark = std::move(r.value);
        a->delay->mark_step = step;
      });
}

void MutexCore::drop_mark_watch_locked(const AttemptPtr& a) {
  if (!a->delay || a->delay->mark_watch == 0) return;
  if (auto c = connection_for_locked(a)) {
    c->remove_watch(path_, a->delay->mark_watch, [](OpResult&&) {});
  }
  a->delay->mark_watch = 0;
  a->delay->mark_watch_epoch = 0;
}

bool MutexCore::held_back_by_lock_delay_locked(const AttemptPtr& a) {
  if (!a->delay || a->delay->served) return false;
  Attempt::LockDelay& d = *a->delay;
  const auto c = connection_for_locked(a);
  bool clean = false;
  if (d.waited_behind.empty()) {
    const auto changes = static_cast<std::int64_t>(d.listed_cversion) - d.cversion_before_create;
    clean = d.quiet_before_create && changes == static_cast<std::int64_t>(d.listed_children);
  } else if ((d.mark_step == a->step && d.mark == release_mark(d.waited_behind)) ||
             (d.mark_changed && c && d.mark_watch_epoch == c->epoch())) {
    clean = true;  // the mark read with our listing names it, or its watch fired before its end
  } else if (c) {
    // The fast path without the watch's word (set after the mark, or on an older connection):
    // read the mark - a round trip, only here.
    a->phase = Attempt::Phase::kDelaying;
    const unsigned step = ++a->step;
    auto self = shared_from_this();
    c->get_data(path_, {}, [self, a, step](OpResult&& r) {
      std::lock_guard lock(self->mutex_);
      if (a->step != step || a->phase != Attempt::Phase::kDelaying) return;
      if (r.rc == Errc::ok && r.value == release_mark(a->delay->waited_behind)) {
        a->delay->served = true;
        self->acquired_locked(a);
        return;
      }
      self->wait_out_lock_delay_locked(a);  // unclean, or not known: the safe side
    });
    return true;
  }
  drop_mark_watch_locked(a);
  if (clean) {
    d.served = true;
    return false;
  }
  wait_out_lock_delay_locked(a);
  return true;
}

void MutexCore::wait_out_lock_delay_locked(const AttemptPtr& a) {
  drop_mark_watch_locked(a);
  a->phase = Attempt::Phase::kDelaying;
  const unsigned step = ++a->step;
  std::weak_ptr<MutexCore> weak = shared_from_this();
  // Our node stays first in line meanwhile: nobody can pass it. A deadline, a cancel or the end
  // of the session ends the wait as they end any other (the step moves on).
  session_->schedule(options_.lock_delay, [weak, a, step] {
    auto self = weak.lock();
    if (!self) return;
    std::lock_guard lock(self->mutex_);
    if (a->step != step || a->phase != Attempt::Phase::kDelaying) return;
    a->delay->served = true;
    self->acquired_locked(a);
  });
}

void MutexCore::delete_with_mark_locked(const AttemptPtr& a, ClientConnection& c) {
  const unsigned step = ++a->step;
  auto self = shared_from_this();
  // The mark first: its watch event reaches a waiter before the node's deletion does.
  std::vector<MultiOp> ops;
  ops.push_back(
      {MultiOp::Kind::kSet, path_, release_mark(a->node_name), -1, NodeMode::kPersistent});
  ops.push_back({MultiOp::Kind::kDelete, a->node_path, {}, -1, NodeMode::kPersistent});
  c.multi(std::move(ops), {}, [self, a, step](OpResult&& r) {
    std::lock_guard lock(self->mutex_);
    if (a->step != step || a->phase != Attempt::Phase::kCleaning) return;
    const bool node_gone = r.multi_results.size() == 2 && r.multi_results[1] == Errc::no_node;
    if (r.rc == Errc::ok || node_gone) {
      self->finish_cleanup_locked(a);
      return;
    }
    if (r.rc != Errc::no_node && r.rc != Errc::no_auth && r.rc != Errc::bad_version) {
      // Not refused: a plain delete's handling (retries, orphans, the report) applies as is; a
      // retry sends the multi again (one applied already fails on the delete: node gone).
      self->deleted_locked(a, r.rc);
      return;
    }
    // The mark was refused (no WRITE on the lock path for us): delete without it - the next
    // holder waits the delay, the safe side.
    a->delay->mark_release = false;
    self->delete_node_locked(a);
  });
}

}  // namespace zklock::detail
