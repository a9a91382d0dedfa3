// zklock/election.h: leader election - one participant leads, the others stand by and take over
// when it goes, told Lost before anyone else can lead.
//
//   zklock::ElectionOptions o;
//   o.value = "scheduler@" + host;             // what leader() and observers see
//   zklock::Election election(session, "/services/scheduler", o);
//   election.campaign();                       // blocks until this participant leads
//   while (election.state() == zklock::LockState::kHeld) run_one_step(election.term());
//   election.resign();
//
// An Election is a Mutex on its path whose holder is the leader: the participants queue as lock
// contenders (EPHEMERAL_SEQUENTIAL children, each watching only its predecessor), and the
// leadership has everything a held lock has - Held / Suspended / Lost, on_state_change, the Lost
// promise (the leader is told Lost before the server can let another participant lead), a term
// token (the FencingToken of its node, czxid first) for the resources it writes. Interop: Curator's
// LeaderSelector is an InterProcessMutex and queues with us on one path, as kazoo's Election (a
// Lock) does when given extra_lock_patterns=["-lock-"]; Curator's LeaderLatch does with
// ElectionOptions::curator_latch_names (docs/recipe.md).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "zklock/acquisition.h"
#include "zklock/contender.h"
#include "zklock/fencing_token.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/lock_state.h"
#include "zklock/mutex.h"
#include "zklock/session.h"

namespace zklock {

namespace detail {
class LeaderWatch;
struct LeaderChangeQueue;
}  // namespace detail

struct ElectionOptions {
  /// This participant's value (etcd's campaign value): stored in its node while it campaigns and
  /// leads; leader() and observers report it. proclaim() changes it for the current term.
  std::string value;
  /// Create missing parents of the path as CONTAINER nodes (see MutexOptions::container_parents).
  bool container_parents = false;
  /// Name this participant's node as Apache Curator's LeaderLatch names its own
  /// ("_c_<uuid>-latch-N") instead of as a lock ("_c_<uuid>-lock-N"). LeaderLatch orders only
  /// "latch-" nodes correctly: a path shared with LeaderLatch participants needs it. zklock
  /// orders both namings, so zklock participants may mix them; Curator's LeaderSelector (a lock)
  /// orders only "lock-" nodes: a path it shares must not use it. LeaderLatch waits for its
  /// predecessor's deletion only, and any write to that node uses its watch up (it would wait for
  /// ever), so with this set nothing writes to our node once it exists: leader() has no `since`
  /// for us, proclaim() is refused, and a revocation request is left in place.
  bool curator_latch_names = false;
  /// Called when the leadership changes state (Held -> Suspended -> Held | Lost), on the Session's
  /// event thread (see MutexOptions::on_state_change).
  std::function<void(LockState state, const Acquisition& leadership)> on_state_change;
  /// Revocation: another client asks the leader to step down (zklock::request_revocation(),
  /// `zklock revoke`); reported here and the application decides. Unset: not revocable.
  std::function<void(const Acquisition& leadership)> on_revocation_requested;
};

/// Who leads an election path.
struct Leader {
  std::string node_path;        // the leader's node
  std::string value;            // zklock: its ElectionOptions::value (or proclaimed value);
                                // a Curator or kazoo participant: its node's data
  std::int64_t session_id = 0;  // the ZooKeeper session that owns the node
  FencingToken term;            // the leader's term token: its node's czxid and sequence
  NodeNaming naming = NodeNaming::kProtected;  // whose naming (zklock and Curator: protected)
  // Who it is, as a zklock participant's node says: its host name and process id (empty and 0
  // for a Curator or kazoo participant, whose nodes do not say).
  std::string host;
  std::int64_t pid = 0;
  /// Since when it leads, by the leader's own clock: a zklock leader stamps its node just after it
  /// takes office (MutexOptions::stamp_held_since). nullopt until that write has landed, and for
  /// a Curator or kazoo leader.
  std::optional<std::chrono::system_clock::time_point> since;

  friend bool operator==(const Leader& a, const Leader& b) {
    return a.node_path == b.node_path && a.value == b.value && a.session_id == b.session_id &&
           a.term == b.term && a.naming == b.naming && a.host == b.host && a.pid == b.pid &&
           a.since == b.since;
  }
  friend bool operator!=(const Leader& a, const Leader& b) { return !(a == b); }
};

/// One delivery of Election::observe().
struct LeaderChange {
  /// The leader now; nullopt when nobody leads (no participant left).
  std::optional<Leader> leader;
  /// True when another participant may have led between the previous delivery and this one: a
  /// participant that was ahead of this leader in the previous listing is gone (ZooKeeper's
  /// watches fire once; a term shorter than a round trip is seen only by its absence).
  bool may_have_missed_terms = false;
};

/// What observe() returns: the observation runs until this is destroyed or stop() is called.
class LeaderObservation {
 public:
  LeaderObservation() noexcept = default;
  LeaderObservation(LeaderObservation&&) noexcept = default;
  LeaderObservation& operator=(LeaderObservation&& other) noexcept;
  LeaderObservation(const LeaderObservation&) = delete;
  LeaderObservation& operator=(const LeaderObservation&) = delete;
  ~LeaderObservation() { stop(); }

  /// Effects: ends the observation: its watches are removed from the server, and no callback
  ///   starts after this returns (one running on another thread may still finish; called from
  ///   the callback itself, it returns at once). Never throws; idempotent.
  void stop() noexcept;
  /// Returns: true until stop() (or the Election's Session closed).
  bool active() const noexcept;

  /// For an observation made by observe() without a callback: waits for the next change, in
  /// order, none skipped (changes wait in the observation until they are taken).
  /// Returns: that change; nullopt if none came within `timeout`, or the observation has stopped
  ///   and every change it saw was taken.
  /// Throws: InvalidArgumentError for an observation that delivers to a callback.
  std::optional<LeaderChange> next_for(std::chrono::milliseconds timeout);

 private:
  friend class Election;
  LeaderObservation(std::shared_ptr<detail::LeaderWatch> watch,
                    std::shared_ptr<detail::LeaderChangeQueue> queue) noexcept;
  std::shared_ptr<detail::LeaderWatch> watch_;
  std::shared_ptr<detail::LeaderChangeQueue> queue_;  // observe() without a callback
};

class Election {
 public:
  /// Effects: a participant of the election at `path` (no request is sent yet).
  /// Throws: as Mutex's constructor (InvalidArgumentError for a bad path). A path that holds a
  ///   read/write lock is refused when campaigning, as Mutex::lock() refuses it. The Session must
  ///   outlive the Election and its observations.
  Election(Session& session, std::string path, ElectionOptions options = {});
  Election(const Election&) = delete;
  Election& operator=(const Election&) = delete;
  /// Effects: resigns if leading; cancels campaigns in progress.
  ~Election();

  /// Effects: campaigns and blocks until this participant leads (Mutex::lock()).
  /// Throws: as Mutex::lock() - ClosedError, NotAuthorizedError, CancelledError (cancel()), ...
  void campaign();
  /// Effects: campaigns until it leads or `timeout` passes; its node is removed on timeout.
  /// Returns: true if it leads.
  template <class Rep, class Period>
  [[nodiscard]] bool try_campaign_for(const std::chrono::duration<Rep, Period>& timeout) {
    return mutex_.try_lock_for(timeout);
  }
  /// Effects: as try_campaign_for(), with a deadline.
  template <class Clock, class Duration>
  [[nodiscard]] bool try_campaign_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return mutex_.try_lock_until(deadline);
  }
  /// Effects: campaigns without a thread waiting (Mutex::async_lock): `handler` gets the
  ///   leadership as a Hold (resign: unlock() it, or destroy it) or an error, exactly once.
  LockRequest async_campaign(LockHandler handler, AsyncLockOptions options = {});
  /// Effects: as async_campaign(), the outcome in a future (Mutex::lock_future()).
  std::future<Hold> campaign_future(AsyncLockOptions options = {});
  /// Effects: wakes the blocking campaigns of this object (they fail with CancelledError).
  void cancel() noexcept;

  /// Effects: gives up the leadership taken by campaign() (its node is deleted); the next
  ///   participant leads. Never throws; nothing if not leading.
  void resign() noexcept;
  /// Returns: the state of the leadership taken by campaign() (NotHeld if none).
  LockState state() const noexcept;
  /// Returns: true while leading (Held or Suspended).
  bool is_leader() const noexcept;
  /// Returns: the leadership taken by campaign(), or nullopt.
  std::optional<Acquisition> leadership() const;
  /// Returns: the term token of the leadership taken by campaign().
  /// Throws: Error(not_held) if not leading.
  FencingToken term() const;
  /// Effects: waits until the leadership is Lost (or resigned) or `timeout` passes.
  /// Returns: true if it is Lost or no longer held.
  bool wait_lost_for(std::chrono::milliseconds timeout) const;

  /// Effects: sets this leader's value (etcd's Proclaim) for the current term, without giving up
  ///   the leadership: one multi that writes our node only while it still exists (the term
  ///   fences it). Later campaigns store ElectionOptions::value again.
  /// Throws: LockLostError if not leading (nothing was written); InvalidArgumentError with
  ///   ElectionOptions::curator_latch_names; ConnectionLossError when the outcome is unknown; as
  ///   Mutex::commit_fenced().
  void proclaim(const std::string& value);
  /// Effects: as proclaim(value), for a leadership taken by async_campaign().
  void proclaim(const Hold& leadership, const std::string& value) const;

  /// Returns: who leads now (one listing and one read), or nullopt if nobody does.
  /// Throws: as Session's basic operations (ConnectionLossError, ...).
  std::optional<Leader> leader() const;

  /// Effects: calls `on_change` (on the Session's event thread, one call at a time, in the order
  ///   the changes were seen) with the leader now, at once, and then with every change of leader
  ///   or of what its node says (its value, and `since` once a zklock leader has stamped it: a
  ///   new zklock leader is usually delivered twice, without and then with `since`), watching
  ///   the path's children and the leader's node - no polling. While the session is down nothing
  ///   is delivered; once it is back (or a new session is opened) the leader of that moment is
  ///   delivered if it changed, with may_have_missed_terms if a term may have passed unseen.
  /// Returns: the observation; it ends when that is destroyed.
  /// Throws: InvalidArgumentError if `on_change` is empty.
  LeaderObservation observe(std::function<void(const LeaderChange& change)> on_change) const;
  /// Effects: as observe(on_change), the changes kept in the observation for its next_for().
  LeaderObservation observe() const;

  const std::string& path() const noexcept { return mutex_.path(); }

 private:
  static MutexOptions mutex_options(const ElectionOptions& options);
  void refuse_proclaim_beside_leader_latch() const;
  Session& session_;
  ElectionOptions options_;
  Mutex mutex_;
};

}  // namespace zklock
