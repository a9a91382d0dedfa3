// The semaphore's lease phase, run by the holder of the internal lock (internal): create our lease
// node (finding it again after a lost create reply), count the leases, and while there are more
// than N wait for the leases' children watch - the only such watch anywhere, since only the
// internal lock's holder sets it - then look again. Every exit other than success deletes our node
// and removes our watches.
#include <algorithm>
#include <utility>

#include "base/random_uuid.h"
#include "base/retry_rules.h"
#include "lock/lock_node_name.h"
#include "semaphore/semaphore_core.h"

namespace zklock::detail {
namespace {

constexpr int kMaxCreates = 16;  // our node vanishing again and again: give up, do not spin

std::string node_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

SemaphoreCore::Outcome SemaphoreCore::lease_phase(Round& round,
                                                  std::optional<SteadyClock::time_point> deadline,
                                                  bool try_once, std::uint64_t epoch) {
  const std::string context = this->context() + "::acquire";
  const auto held = lock_->acquisition();
  if (!held) return Outcome::kRequeue;
  round.generation = held->generation;
  round.connection = await_connection(round.generation, deadline, epoch);
  if (!round.connection) {
    if (session_->closed()) throw ClosedError(Errc::closed, context);
    return gave_up_waiting(deadline, epoch);
  }
  round.uuid = random_uuid();
  const Errc created = create_lease_node(round);
  if (created == Errc::closed || session_->closed()) throw ClosedError(Errc::closed, context);
  if (created == Errc::session_lost) return Outcome::kRequeue;  // our node went with the session
  if (created != Errc::ok) throw_error(created, context + ": creating the lease node");

  const auto cleanup = [&] {
    remove_watches(round);
    auto node = std::make_shared<LeaseCore>(
        session_, Acquisition{path_, round.node_path, round.sequence, round.czxid, round.session_id,
                              round.generation, SteadyClock::now(), false});
    node->release();
    node->await_released(session_->negotiated_timeout() / 3);
  };
  bool watched = false;
  while (true) {
    bool cancelled = false;
    {
      std::lock_guard lock(mutex_);
      cancelled = cancelled_since(epoch);
    }
    if (cancelled) {
      cleanup();
      return Outcome::kCancelled;
    }
    if (session_->closed()) {
      cleanup();
      throw ClosedError(Errc::closed, context);
    }
    if (session_->state_of(round.generation) == SessionState::kLost ||
        lock_->state() == LockState::kLost) {
      cleanup();  // the internal lock is lost: someone else may take it - queue again
      return Outcome::kRequeue;
    }
    std::vector<std::string> children;
    const Errc rc = count_leases(round, watched, children);
    if (rc == Errc::ok) {
      if (std::find(children.begin(), children.end(), round.node_name) == children.end()) {
        cleanup();  // our node vanished (an operator, or its session ended): queue again
        return Outcome::kRequeue;
      }
      if (children.size() <= static_cast<std::size_t>(max_leases_)) {
        remove_watches(round);
        const SessionState s = session_->state_of(round.generation);
        if (s != SessionState::kConnected && s != SessionState::kSuspended) {
          cleanup();  // never hand out a lease that is already lost
          return Outcome::kRequeue;
        }
        round.lease = std::make_shared<LeaseCore>(
            session_, Acquisition{path_, round.node_path, round.sequence, round.czxid,
                                  round.session_id, round.generation, SteadyClock::now(), false});
        round.lease->attach();
        round.lease->count_hold();
        return Outcome::kAcquired;
      }
      if (try_once) {
        cleanup();
        return Outcome::kNotAcquired;
      }
      if (!watched) {
        watched = true;  // look again, this time with the watch that tells us of a release
        round.contended = true;
        continue;
      }
      // Wait for the watch, still holding the internal lock: nobody else is woken.
      std::unique_lock lock(mutex_);
      bool timed_out = false;
      while (round.watches->fired.empty() && !cancelled_since(epoch) && !session_->closed() &&
             session_->state_of(round.generation) != SessionState::kLost) {
        const auto now = SteadyClock::now();
        if (deadline && now >= *deadline) {
          timed_out = true;
          break;
        }
        lock.unlock();
        const bool lock_lost = lock_->state() == LockState::kLost;
        lock.lock();
        if (lock_lost) break;
        // Wake now and then: the internal lock's node deleted under us shows only in its state.
        auto wake = now + std::chrono::seconds(1);
        if (deadline) wake = std::min(wake, *deadline);
        cv_.wait_until(lock, wake);
      }
      round.watches->fired.clear();
      lock.unlock();
      if (timed_out) {
        cleanup();
        return Outcome::kTimedOut;
      }
      continue;  // the loop's top looks at cancel, close and loss; then we list again
    }
    if (rc == Errc::no_node) {  // the leases node is gone, and our node with it
      cleanup();
      return Outcome::kRequeue;
    }
    if (rc == Errc::closed) {
      cleanup();
      throw ClosedError(Errc::closed, context);
    }
    if (is_session_gone(rc)) {
      cleanup();
      return Outcome::kRequeue;
    }
    if (cured_by_reconnecting(rc) || worth_retrying_later(rc)) {
      round.connection = await_connection(round.generation, deadline, epoch);
      if (!round.connection) {
        cleanup();
        if (session_->closed()) throw ClosedError(Errc::closed, context);
        return gave_up_waiting(deadline, epoch);
      }
      continue;
    }
    cleanup();
    throw_error(rc, context + ": listing the leases");
  }
}

// Why await_connection() gave up: cancelled, the deadline, or else the generation ended.
SemaphoreCore::Outcome SemaphoreCore::gave_up_waiting(
    std::optional<SteadyClock::time_point> deadline, std::uint64_t epoch) const {
  {
    std::lock_guard lock(mutex_);
    if (cancelled_since(epoch)) return Outcome::kCancelled;
  }
  return deadline && SteadyClock::now() >= *deadline ? Outcome::kTimedOut : Outcome::kRequeue;
}

Errc SemaphoreCore::count_leases(Round& round, bool watched, std::vector<std::string>& children) {
  const auto watches = round.watches;
  unsigned ours = 0;
  std::uint64_t id = 0;
  std::weak_ptr<SemaphoreCore> weak = shared_from_this();
  if (watched) {
    std::lock_guard lock(mutex_);
    ours = watches->next++;
  }
  OpResult r = call(round.connection, [&](ClientConnection& c, Completion done) {
    if (!watched) {
      c.get_children(leases_path_, std::move(done));
      return;
    }
    id = c.get_children_watched(
        leases_path_,
        [weak, watches, ours](WatchEventType) {
          auto self = weak.lock();
          if (!self) return;
          std::lock_guard lock(self->mutex_);
          watches->fired.insert(ours);
          watches->set.erase(ours);
          self->cv_.notify_all();
        },
        std::move(done));
    std::lock_guard lock(mutex_);
    if (id != 0 && watches->fired.count(ours) == 0) watches->set.emplace(ours, id);
  });
  if (r.rc != Errc::ok) return r.rc;
  children = std::move(r.children);
  return Errc::ok;
}

void SemaphoreCore::remove_watches(Round& round) {
  std::map<unsigned, std::uint64_t> set;
  {
    std::lock_guard lock(mutex_);
    set.swap(round.watches->set);
    round.watches->fired.clear();
  }
  if (set.empty()) return;
  auto c = session_->connection();
  if (!c || c->generation() != round.generation) return;  // they went with their session
  for (const auto& [ours, id] : set) c->remove_watch(leases_path_, id, [](OpResult&&) {});
}

Errc SemaphoreCore::create_lease_node(Round& round) {
  const NodeMode parents =
      options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
  for (int attempt = 0; attempt < kMaxCreates; ++attempt) {
    const std::string prefix = leases_path_ + "/_c_" + round.uuid + std::string(kLeaseMarker);
    OpResult r = call(round.connection, [&](ClientConnection& c, Completion done) {
      c.create(prefix, node_data_, NodeMode::kEphemeralSequential, session_->node_acl(),
               std::move(done));
    });
    if (r.rc == Errc::ok) {
      round.node_path = r.value;
      round.node_name = node_name(r.value);
      round.sequence = lease_sequence(round.node_name);
      round.czxid = r.stat.czxid;
      round.session_id = r.stat.ephemeral_owner;
      return Errc::ok;
    }
    if (r.rc == Errc::no_node) {  // no leases node yet (or no semaphore node): create them
      const OpResult made = call(round.connection, [&](ClientConnection& c, Completion done) {
        c.create(leases_path_, {}, parents, session_->node_acl(), std::move(done));
      });
      if (made.rc == Errc::no_node) create_ancestors(path_);
      continue;
    }
    if (is_session_gone(r.rc)) return Errc::session_lost;
    if (worth_retrying_later(r.rc)) continue;
    if (!cured_by_reconnecting(r.rc)) return r.rc;
    // The create may have happened: never create blindly again (that would leave an orphan).
    while (true) {
      round.connection = await_connection(round.generation, std::nullopt);
      if (!round.connection) return session_->closed() ? Errc::closed : Errc::session_lost;
      bool found = false;
      const Errc rc = find_lost_create(round, found);
      if (rc == Errc::ok && found) return Errc::ok;
      if (rc == Errc::ok) break;  // it never happened: create (again)
      if (is_session_gone(rc)) return Errc::session_lost;
      if (!cured_by_reconnecting(rc) && !worth_retrying_later(rc)) return rc;
    }
  }
  return Errc::no_node;
}

// After a lost create reply: is our node there? A sync first (the server we reach now may not
// have applied our create yet), then our uuid among the leases; adopted only if the current
// session owns it - never an old session's node.
Errc SemaphoreCore::find_lost_create(Round& round, bool& found) {
  found = false;
  const auto& c = round.connection;
  OpResult listing = call(c, [&](ClientConnection& conn, Completion done) {
    conn.sync(leases_path_, [](OpResult&&) {});  // its failure shows in the listing's
    conn.get_children(leases_path_, std::move(done));
  });
  if (listing.rc == Errc::no_node) return Errc::ok;
  if (listing.rc != Errc::ok) return listing.rc;
  const std::string mark = "_c_" + round.uuid + "-";
  std::vector<std::string> ours;
  for (auto& name : listing.children) {
    if (name.compare(0, mark.size(), mark) == 0) ours.push_back(std::move(name));
  }
  if (ours.empty()) return Errc::ok;
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) {
    return lease_sequence(a) < lease_sequence(b);
  });
  for (std::size_t i = 1; i < ours.size(); ++i) {  // duplicates of ours: delete them
    c->remove(leases_path_ + "/" + ours[i], -1, [](OpResult&&) {});
  }
  const std::string candidate = leases_path_ + "/" + ours.front();
  const OpResult read = call(c, [&](ClientConnection& conn, Completion done) {
    conn.get_data(candidate, {}, std::move(done));
  });
  const std::int64_t session_id = c->session_id();
  if (read.rc == Errc::ok && session_id != 0 && read.stat.ephemeral_owner == session_id) {
    round.node_path = candidate;
    round.node_name = ours.front();
    round.sequence = lease_sequence(round.node_name);
    round.czxid = read.stat.czxid;
    round.session_id = session_id;
    found = true;
    return Errc::ok;
  }
  if (read.rc == Errc::ok || read.rc == Errc::no_node) {
    round.uuid = random_uuid();  // not ours or gone: create afresh under a new uuid
    return Errc::ok;
  }
  return read.rc;
}

}  // namespace zklock::detail
