// LeaseRequest's steps on the server: the lease count stored with the path, our lease node
// (found again after a lost create reply), and counting the leases with the children watch that
// only the internal lock's holder sets. Every function here runs with LeaseRequest::mutex_ held.
#include <algorithm>
#include <charconv>
#include <utility>

#include "base/paths.h"
#include "base/random_uuid.h"
#include "base/retry_rules.h"
#include "lock/lock_node_name.h"
#include "semaphore/lease_request.h"
#include "semaphore/semaphore_core.h"

namespace zklock::detail {
namespace {

constexpr int kMaxRaces = 16;    // the count node changed under us again and again: give up
constexpr int kMaxCreates = 16;  // our node vanishing again and again: give up, do not spin

std::string name_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// What the path's data says when it is not our count, for LeaseCountMismatchError.
std::string mismatch(const std::string& stored, int ours) {
  int count = 0;
  const char* end = stored.data() + stored.size();
  const auto [p, ec] = std::from_chars(stored.data(), end, count);
  std::string what =
      ec == std::errc() && p == end
          ? "the path stores a lease count of " + std::to_string(count)
          : "the path's data is not a lease count (\"" + stored.substr(0, 40) + "\")";
  return what + ", this Semaphore was given " + std::to_string(ours);
}

}  // namespace

// ---- the lease count --------------------------------------------------------------------------

void LeaseRequest::count_locked() {
  phase_ = Phase::kCount;
  auto c = connection_locked(false);
  if (!c) {
    await_connection_locked([this] { count_locked(); });
    return;
  }
  c->get_data(core_->path_, {}, answer_locked(&LeaseRequest::on_count_read_locked));
}

void LeaseRequest::on_count_read_locked(OpResult&& r) {
  const std::string ours = std::to_string(core_->max_leases_);
  const auto again = [this] {
    if (++races_ > kMaxRaces) {
      end_locked(Errc::runtime_inconsistency, core_->path_ +
                                                  " keeps changing; the lease count "
                                                  "could not be checked");
      return;
    }
    count_locked();
  };
  auto c = connection_locked(false);
  if (r.rc == Errc::ok && r.value == ours) {
    take_internal_lock_locked();
    return;
  }
  if (r.rc == Errc::ok && !r.value.empty()) {
    end_locked(Errc::lease_count_mismatch, mismatch(r.value, core_->max_leases_));
    return;
  }
  if (!c && (r.rc == Errc::ok || r.rc == Errc::no_node)) {
    await_connection_locked(again);
    return;
  }
  if (r.rc == Errc::ok) {
    // Empty: created by Curator (which stores no count), kazoo's ensure_path or an operator. Set
    // it only if nobody else did meanwhile (the version), then look again.
    c->set(core_->path_, ours, r.stat.version,
           answer_locked([again](LeaseRequest& self, OpResult&& set) {
             if (set.rc == Errc::ok) {
               self.take_internal_lock_locked();
             } else if (set.rc == Errc::bad_version || set.rc == Errc::no_node) {
               again();
             } else {
               self.step_failed_locked(set.rc, "storing the lease count", again);
             }
           }));
    return;
  }
  if (r.rc == Errc::no_node) {
    const NodeMode mode =
        core_->options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
    c->create(core_->path_, ours, mode, session_->node_acl(),
              answer_locked([again](LeaseRequest& self, OpResult&& made) {
                if (made.rc == Errc::ok || made.rc == Errc::node_exists) {
                  again();  // look (again) at what is there
                } else if (made.rc == Errc::no_node) {
                  self.create_ancestors_locked(parent_path(self.core_->path_), again);
                } else {
                  // Created or not: the next look tells.
                  self.step_failed_locked(made.rc, "storing the lease count", again);
                }
              }));
    return;
  }
  step_failed_locked(r.rc, "reading the lease count", again);
}

// The missing ancestors of `path` (and `path`), top down: one round trip finds them (every exists
// pipelined), then they are created in order. Only what is missing is created: the server checks
// CREATE permission on the parent before it looks whether a node exists. `then` runs after the
// last answer, whatever the answers (the step it retries looks again).
void LeaseRequest::create_ancestors_locked(const std::string& path, std::function<void()> then) {
  auto c = connection_locked(false);
  if (path == "/" || !c) {
    then();
    return;
  }
  std::vector<std::string> chain;
  for (std::size_t slash = path.find('/', 1); slash != std::string::npos;
       slash = path.find('/', slash + 1)) {
    chain.push_back(path.substr(0, slash));
  }
  chain.push_back(path);
  struct Found {
    std::vector<std::string> chain;
    std::vector<bool> missing;
    std::size_t remaining = 0;
  };
  auto found = std::make_shared<Found>();
  found->missing.assign(chain.size(), false);
  found->remaining = chain.size();
  found->chain = std::move(chain);
  const NodeMode mode =
      core_->options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
  const unsigned step = next_step_locked();
  for (std::size_t i = 0; i < found->chain.size(); ++i) {
    c->exists(found->chain[i],
              [self = shared_from_this(), step, found, i, mode, then](OpResult&& r) {
                self->run([&] {
                  found->missing[i] = r.rc == Errc::no_node;
                  if (--found->remaining != 0 || self->step_ != step || self->decided_) return;
                  auto conn = self->connection_locked(false);
                  std::vector<std::string> missing;
                  for (std::size_t k = 0; k < found->chain.size(); ++k) {
                    if (found->missing[k]) missing.push_back(found->chain[k]);
                  }
                  if (!conn || missing.empty()) {
                    then();
                    return;
                  }
                  // Pipelined, in order: the server applies one session's requests in order.
                  const unsigned created = self->next_step_locked();
                  for (std::size_t k = 0; k < missing.size(); ++k) {
                    const bool last = k + 1 == missing.size();
                    conn->create(missing[k], {}, mode, self->session_->node_acl(),
                                 [self, created, last, then](OpResult&&) {
                                   if (!last) return;
                                   self->run([&] {
                                     if (self->step_ == created && !self->decided_) then();
                                   });
                                 });
                  }
                });
              });
  }
}

// ---- our lease node ---------------------------------------------------------------------------

void LeaseRequest::create_locked() {
  phase_ = Phase::kCreate;
  if (++creates_ > kMaxCreates) {
    end_locked(Errc::no_node, "creating the lease node (it kept vanishing)");
    return;
  }
  auto c = connection_locked(true);
  if (!c) {
    await_connection_locked([this] { create_locked(); });
    return;
  }
  if (uuid_.empty()) uuid_ = random_uuid();
  ++round_;
  fired_ = false;
  c->create(core_->leases_path_ + "/_c_" + uuid_ + std::string(kLeaseMarker), core_->node_data_,
            NodeMode::kEphemeralSequential, session_->node_acl(),
            answer_locked(&LeaseRequest::on_created_locked));
}

void LeaseRequest::on_created_locked(OpResult&& r) {
  if (r.rc == Errc::ok) {
    node_path_ = r.value;
    sequence_ = lease_sequence(name_of(r.value));
    czxid_ = r.stat.czxid;
    owner_ = r.stat.ephemeral_owner;
    list_locked(false);
    return;
  }
  if (r.rc == Errc::no_node) {  // no leases node yet (or no semaphore node): create them
    auto c = connection_locked(true);
    if (!c) {
      await_connection_locked([this] { create_locked(); });
      return;
    }
    const NodeMode mode =
        core_->options_.container_parents ? NodeMode::kContainer : NodeMode::kPersistent;
    c->create(core_->leases_path_, {}, mode, session_->node_acl(),
              answer_locked([](LeaseRequest& self, OpResult&& made) {
                if (made.rc == Errc::no_node) {
                  self.create_ancestors_locked(self.core_->path_,
                                               [&self] { self.create_locked(); });
                } else {
                  self.create_locked();  // made, or there, or the create tells what is wrong
                }
              }));
    return;
  }
  if (cured_by_reconnecting(r.rc)) {
    // The create may have happened: never create blindly again (that would leave an orphan).
    phase_ = Phase::kRecover;
    await_connection_locked([this] { recover_locked(); });
    return;
  }
  step_failed_locked(r.rc, "creating the lease node", [this] { create_locked(); });
}

// After a lost create reply: is our node there? A sync first (the server we reach now may not
// have applied our create yet), then our uuid among the leases; adopted only if the current
// session owns it - never an old session's node.
void LeaseRequest::recover_locked() {
  phase_ = Phase::kRecover;
  auto c = connection_locked(true);
  if (!c) {
    await_connection_locked([this] { recover_locked(); });
    return;
  }
  c->sync(core_->leases_path_, [](OpResult&&) {});  // its failure shows in the listing's
  c->get_children(core_->leases_path_, answer_locked(&LeaseRequest::on_recovery_listing_locked));
}

void LeaseRequest::on_recovery_listing_locked(OpResult&& r) {
  if (r.rc == Errc::no_node) {
    create_locked();  // it never happened
    return;
  }
  if (r.rc != Errc::ok) {
    step_failed_locked(r.rc, "finding a lease node whose create reply was lost",
                       [this] { recover_locked(); });
    return;
  }
  const std::string mark = "_c_" + uuid_ + "-";
  std::vector<std::string> ours;
  for (auto& name : r.children) {
    if (name.compare(0, mark.size(), mark) == 0) ours.push_back(std::move(name));
  }
  if (ours.empty()) {
    create_locked();
    return;
  }
  std::sort(ours.begin(), ours.end(), [](const std::string& a, const std::string& b) {
    return lease_sequence(a) < lease_sequence(b);
  });
  auto c = connection_locked(true);
  if (!c) {
    await_connection_locked([this] { recover_locked(); });
    return;
  }
  for (std::size_t i = 1; i < ours.size(); ++i) {  // duplicates of ours: delete them
    c->remove(core_->leases_path_ + "/" + ours[i], -1, [](OpResult&&) {});
  }
  const std::string name = ours.front();
  c->get_data(core_->leases_path_ + "/" + name, {},
              answer_locked([name](LeaseRequest& self, OpResult&& read) {
                self.on_recovery_read_locked(name, std::move(read));
              }));
}

void LeaseRequest::on_recovery_read_locked(const std::string& name, OpResult&& r) {
  auto c = connection_locked(true);
  const std::int64_t session_id = c ? c->session_id() : 0;
  if (r.rc == Errc::ok && session_id != 0 && r.stat.ephemeral_owner == session_id) {
    node_path_ = core_->leases_path_ + "/" + name;
    sequence_ = lease_sequence(name);
    czxid_ = r.stat.czxid;
    owner_ = session_id;
    list_locked(false);
    return;
  }
  if (r.rc == Errc::ok || r.rc == Errc::no_node) {
    uuid_ = random_uuid();  // not ours, or gone: create afresh under a new uuid
    create_locked();
    return;
  }
  step_failed_locked(r.rc, "reading a lease node whose create reply was lost",
                     [this] { recover_locked(); });
}

// ---- counting the leases ----------------------------------------------------------------------

void LeaseRequest::list_locked(bool watched) {
  phase_ = Phase::kList;
  session_->cancel_scheduled(std::exchange(timer_, {}));
  if (internal_.state() == LockState::kLost) {
    requeue_locked(/*session_lost=*/false);  // someone else may hold the internal lock now
    return;
  }
  auto c = connection_locked(true);
  if (!c) {
    await_connection_locked([this, watched] { list_locked(watched); });
    return;
  }
  auto on_listing = answer_locked([watched](LeaseRequest& self, OpResult&& r) {
    self.on_listing_locked(watched, std::move(r));
  });
  if (!watched) {
    c->get_children(core_->leases_path_, std::move(on_listing));
    return;
  }
  fired_ = false;
  std::weak_ptr<LeaseRequest> weak = shared_from_this();
  const std::uint64_t round = round_;
  const std::uint64_t ours = ++watch_numbers_;
  const std::uint64_t id = c->get_children_watched(
      core_->leases_path_,
      [weak, round, ours](WatchEventType) {
        if (auto self = weak.lock()) self->run([&] { self->on_watch_locked(round, ours); });
      },
      std::move(on_listing));
  if (id != 0) watches_.emplace(ours, id);
}

void LeaseRequest::on_listing_locked(bool watched, OpResult&& r) {
  if (r.rc == Errc::no_node) {  // the leases node is gone, and our node with it
    requeue_locked(/*session_lost=*/false);
    return;
  }
  if (r.rc != Errc::ok) {
    step_failed_locked(r.rc, "listing the leases", [this, watched] { list_locked(watched); });
    return;
  }
  const std::string ours = name_of(node_path_);
  if (std::find(r.children.begin(), r.children.end(), ours) == r.children.end()) {
    node_path_.clear();  // vanished (an operator, or its session ended): queue again
    requeue_locked(/*session_lost=*/false);
    return;
  }
  if (r.children.size() <= static_cast<std::size_t>(core_->max_leases_)) {
    lease_taken_locked();
    return;
  }
  if (params_.try_once) {
    end_locked(Errc::timed_out, {});
    return;
  }
  if (!watched || fired_) {
    contended_ = true;
    list_locked(true);  // look again, this time with the watch that tells us of a release
    return;
  }
  // Wait for the watch, still holding the internal lock: nobody else is woken.
  phase_ = Phase::kWait;
  recheck_while_waiting_locked();
}

void LeaseRequest::on_watch_locked(std::uint64_t round, std::uint64_t ours) {
  watches_.erase(ours);  // used up
  if (round != round_ || decided_) return;
  fired_ = true;
  if (phase_ == Phase::kWait) list_locked(true);
}

// The internal lock's node deleted under us shows only in its state: look now and then.
void LeaseRequest::recheck_while_waiting_locked() {
  std::weak_ptr<LeaseRequest> weak = shared_from_this();
  const unsigned step = step_;
  timer_ = session_->schedule(std::chrono::seconds(1), [weak, step] {
    auto self = weak.lock();
    if (!self) return;
    self->run([&] {
      if (self->step_ != step || self->phase_ != Phase::kWait || self->decided_) return;
      if (self->internal_.state() == LockState::kLost) {
        self->requeue_locked(/*session_lost=*/false);
      } else {
        self->recheck_while_waiting_locked();
      }
    });
  });
}

void LeaseRequest::lease_taken_locked() {
  remove_watches_locked();
  const SessionState s = session_->state_of(generation_);
  if (s != SessionState::kConnected && s != SessionState::kSuspended) {
    requeue_locked(/*session_lost=*/true);  // never hand out a lease that is already lost
    return;
  }
  auto lease = std::make_shared<LeaseCore>(
      session_, Acquisition{core_->path_, node_path_, sequence_, czxid_, owner_, generation_,
                            SteadyClock::now(), false});
  lease->attach(core_->revocation_);
  lease->count_hold();
  taken_.push_back(std::move(lease));
  node_path_.clear();
  if (taken_.size() < static_cast<std::size_t>(params_.count)) {
    // The next lease of the call, under the same hold of the internal lock: no other zklock
    // contender takes a lease in between (all or none without waiting on each other).
    uuid_.clear();
    creates_ = 0;
    create_locked();
    return;
  }
  succeed_locked();
}

void LeaseRequest::remove_watches_locked() {
  ++round_;  // the watches of this round fire into nothing from now on
  if (watches_.empty()) return;
  auto c = session_->connection();
  if (c && c->generation() == generation_) {
    for (const auto& [ours, id] : watches_) {
      c->remove_watch(core_->leases_path_, id, [](OpResult&&) {});
    }
  }  // else they went with their session
  watches_.clear();
}

}  // namespace zklock::detail
