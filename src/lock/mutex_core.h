// MutexCore: the lock recipe as a state machine driven by ZooKeeper completions (internal).
//
// No thread per waiter: a waiting lock() sleeps on a condition variable while the C client's
// completion thread moves its Attempt along:
//
//   Creating --(create + getChildren pipelined: one round trip)--> Listing
//   Listing  --first--> Held
//            --not first--> Watching (getData+watch on the direct predecessor; when it was first
//                           in line, also getData+watch on our own node, for the fast path)
//   Watching --predecessor deleted, it was first, our node watched on this same connection--> Held
//            --any other notification, or predecessor already gone--> Listing
//   Held     --unlock()--> Cleaning --delete answered--> Done
//   any waiting phase --timeout / cancel / error / try_lock lost--> Cleaning --> Done
//
// A create whose reply is lost is found again by its uuid prefix, after a sync, and adopted only
// if its ephemeralOwner is our current session. A new session generation restarts every waiting
// attempt (new uuid, new node: the place in line is lost); nodes of the old session are never
// adopted. Each step bumps Attempt::step, so answers to abandoned steps are ignored.
//
// Threads: acquire() runs on the caller's thread; the steps run on the C client's completion
// thread and the session's monitor thread; user callbacks run on the session's events thread,
// behind a gate that ~Mutex closes (none starts after the destructor returned).
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lock/callback_gate.h"
#include "lock/lock_node_name.h"
#include "lock/queue_view.h"
#include "session/session_core.h"
#include "zklock/acquisition.h"
#include "zklock/contender.h"
#include "zklock/fenced_write.h"
#include "zklock/hold.h"
#include "zklock/lock_request.h"
#include "zklock/lock_state.h"
#include "zklock/mutex_options.h"

namespace zklock::detail {

class MutexCore final : public SessionObserver, public std::enable_shared_from_this<MutexCore> {
 public:
  using SteadyClock = std::chrono::steady_clock;

  /// `read_write`: the recipe of a SharedMutex (readers and writers), else of a Mutex.
  /// `recorded`: its acquisitions and holds count in the session's figures (not for the internal
  /// lock of another recipe, which counts its own).
  MutexCore(std::shared_ptr<SessionCore> session, std::string path, MutexOptions options,
            bool read_write = false, bool recorded = true);
  ~MutexCore() override;

  /// Registers with the session (needs shared_from_this, so not in the constructor).
  void attach();
  /// Cancels waiters, waits for them to leave, releases a held lock, closes the callback gate and
  /// unregisters. After it returns no user callback of this lock starts.
  void shutdown() noexcept;

  /// Blocks until held as `kind` (kRead shares with other readers; kWrite and kExclusive wait
  /// for everyone ahead), or until `deadline` (none: for ever); `try_once`: one attempt only.
  /// Returns: true if acquired; false on timeout, on cancel() when `throw_on_cancel` is false, or
  ///   when `try_once` found the lock taken.
  /// Throws: Error(would_deadlock), CancelledError (cancel() with `throw_on_cancel`, or the Mutex
  ///   destroyed), ClosedError, NotAuthorizedError, Error.
  /// `cancel_epoch` (cancel_epoch()'s value, read earlier): cancels since then count, as if the
  /// call had begun then (none: from the call on).
  bool acquire(ContenderKind kind, std::optional<SteadyClock::time_point> deadline, bool try_once,
               bool throw_on_cancel, std::optional<std::uint64_t> cancel_epoch = std::nullopt);
  /// How many cancel() calls there have been.
  std::uint64_t cancel_epoch() const noexcept;
  /// Releases the held lock, if it is held as one of `kinds` (or as anything, with no kinds).
  void release(std::initializer_list<ContenderKind> kinds = {}) noexcept;
  /// As release(), then waits as a lock() that gave up does: until the delete is answered, the
  /// connection is down (the node goes with the session, or its delete is sent again on
  /// reconnect) or a third of the session timeout has passed.
  void release_and_wait(std::initializer_list<ContenderKind> kinds = {}) noexcept;
  /// Turns a held write lock into a read lock without letting a writer in between: a read node
  /// queued behind our write node is held at once if no other writer is between them; then the
  /// write node goes. Returns: false (still held for writing) if a writer queued in between, or
  /// the lock is not surely held (Suspended, Lost). Throws: Error(not_held) if no write lock is
  /// held; as acquire().
  bool downgrade();
  void cancel() noexcept;

  LockState state() const noexcept;
  std::optional<Acquisition> acquisition() const;
  bool wait_lost_until(std::optional<SteadyClock::time_point> deadline) const;
  std::vector<Contender> contenders() const;
  const std::string& path() const noexcept { return path_; }
  /// "zklock::Mutex(\"<path>\")" or "zklock::SharedMutex(\"<path>\")", for messages.
  std::string context() const;
  SessionCore& session() const noexcept { return *session_; }
  /// Names exclusive nodes as Curator's LeaderLatch does ("_c_<uuid>-latch-N"; Election with
  /// ElectionOptions::curator_latch_names). Before the first request only: the completion
  /// threads read it without the lock.
  void use_latch_names() noexcept { latch_names_ = true; }

  /// Election::proclaim: our node's data with `value` in it, for the held node `node_path`. The
  /// value is remembered, so that the data put back after a revocation request keeps it.
  /// Throws: LockLostError if `node_path` is not held.
  std::string proclaimed_data(const std::string& node_path, const std::string& value);

  void on_session_change() override;
  std::size_t nodes_on_server() const override;

  /// The figures' outcome of an acquisition that ended with `code` (also the Semaphore's).
  static AcquireOutcome outcome_of(Errc code) noexcept;

  // Asynchronous acquisition (mutex_async.cpp). `attempt` is the opaque record a Hold or a
  // LockRequest carries.
  /// Queues a contender of `kind` whose outcome goes to `handler` (exactly once).
  /// `internal`: for another recipe's internal lock (a Semaphore's) - the handler and
  /// release_hold_then()'s `released` run on the session's monitor thread (SessionCore::defer)
  /// instead of the events thread, so that the recipe never waits on user code; options.executor
  /// is ignored.
  LockRequest async_acquire(ContenderKind kind, AsyncLockOptions options, LockHandler handler,
                            bool internal = false);
  void cancel_request(const std::shared_ptr<void>& attempt) noexcept;
  bool request_pending(const std::shared_ptr<void>& attempt) const noexcept;
  void release_hold(const std::shared_ptr<void>& attempt) noexcept;
  /// As release_hold(), then posts `released` to the events thread once the node is deleted or
  /// the connection is down (at once if there was nothing to release).
  void release_hold_then(const std::shared_ptr<void>& attempt,
                         std::function<void()> released) noexcept;
  LockState hold_state(const std::shared_ptr<void>& attempt) const noexcept;
  bool wait_hold_lost_until(const std::shared_ptr<void>& attempt,
                            std::optional<SteadyClock::time_point> deadline) const;

 private:
  struct Attempt;
  using AttemptPtr = std::shared_ptr<Attempt>;
  using Lock = std::unique_lock<std::mutex>;
  // A thread inside acquire() or downgrade(), counted while it is (shutdown() waits for none to
  // be left). Made and destroyed with mutex_ held.
  class Caller {
   public:
    explicit Caller(MutexCore& core) : core_(core) { ++core_.callers_; }
    ~Caller() {
      --core_.callers_;
      core_.cv_.notify_all();
    }
    Caller(const Caller&) = delete;
    Caller& operator=(const Caller&) = delete;

   private:
    MutexCore& core_;
  };

  // Application-facing pieces of acquire() (mutex_core.cpp).
  bool take_local_turn(Lock& lock, std::optional<SteadyClock::time_point> deadline,
                       std::uint64_t cancel_epoch);
  void await_attempt(Lock& lock, const AttemptPtr& a,
                     std::optional<SteadyClock::time_point> deadline, std::uint64_t cancel_epoch);
  void await_cleanup(Lock& lock, const AttemptPtr& a);
  bool cancelled_since(std::uint64_t cancel_epoch) const {
    return cancel_epoch_ != cancel_epoch || shut_down_;
  }
  void post_callback_locked(std::function<void()> callback);

  // The recipe's steps (mutex_recipe.cpp), all with mutex_ held.
  void start_create_locked(const AttemptPtr& a);
  void ensure_parents_locked(const AttemptPtr& a);
  void create_missing_parents_locked(const AttemptPtr& a, std::vector<std::string> missing);
  void recover_locked(const AttemptPtr& a);
  void adopt_recovered_locked(const AttemptPtr& a, std::vector<std::string> ours);
  void list_locked(const AttemptPtr& a);
  void watch_locked(const AttemptPtr& a);
  void watch_unreadable_locked(const AttemptPtr& a);
  void acquired_locked(const AttemptPtr& a);
  void vanished_locked(const AttemptPtr& a);
  void fail_locked(const AttemptPtr& a, Errc code);
  void cleanup_locked(const AttemptPtr& a);
  void delete_node_locked(const AttemptPtr& a);
  void finish_cleanup_locked(const AttemptPtr& a);
  void restart_locked(const AttemptPtr& a);
  /// Common handling of a failed step. Returns true if it was handled (retry scheduled, waiting for
  /// the next generation, or failed); false for codes the caller must handle.
  bool step_failed_locked(const AttemptPtr& a, Errc rc, std::function<void()> retry);
  void retry_when_connected_locked(const AttemptPtr& a, std::function<void()> retry);
  void retry_later_locked(const AttemptPtr& a, std::function<void()> retry);
  void retry_cleaning_locked(const AttemptPtr& a, std::function<void()> retry);
  void rearm_self_watch_locked(const AttemptPtr& a);
  bool still_held_locked(const AttemptPtr& a) const;

  void on_created(const AttemptPtr& a, unsigned create_seq, std::uint64_t epoch, bool counted,
                  OpResult&& r);
  void on_listed(const AttemptPtr& a, unsigned step, OpResult&& r);
  void order_by_czxid_locked(const AttemptPtr& a, std::vector<ListedContender> listed);
  /// Where `a` stands in `queue` (sorted by sequence when `by_sequence`, else in creation
  /// order): first - it holds; or behind someone - it watches them.
  void evaluate_locked(const AttemptPtr& a, const std::vector<ListedContender>& queue,
                       bool by_sequence);

  // Waiters sharing listings and walking the QueueView (queue_walk.cpp), with mutex_ held. Only
  // for a Mutex without a lock-delay (walks_queue()): a SharedMutex's readers and a lock-delay's
  // marks keep a listing per step.
  bool walks_queue() const noexcept { return !read_write_ && !lock_delay_on(); }
  /// A listing for `a` at `step`: the one in flight if it was sent after `a`'s create was
  /// answered, else a new one.
  void join_or_send_listing_locked(const AttemptPtr& a, unsigned step, ClientConnection& c);
  void send_shared_listing_locked(const AttemptPtr& a, unsigned step, ClientConnection& c);
  struct SharedListing;
  void on_shared_listing(const std::shared_ptr<SharedListing>& listing, OpResult&& r);
  /// `a`'s predecessor is gone (and forgotten by the view): wait behind the next one the view
  /// knows, or - none left - hold once our own node is known to be there.
  void walk_on_locked(const AttemptPtr& a);
  void first_in_line_locked(const AttemptPtr& a);
  /// `a` now holds: the attempt of ours waiting right behind it (if any) learns that its
  /// predecessor is first, and watches its own node, so that it holds as soon as `a` is deleted.
  void prepare_successor_locked(const AttemptPtr& a);
  void on_recovery_listing(const AttemptPtr& a, unsigned step, OpResult&& r);
  void on_pred_read(const AttemptPtr& a, unsigned step, OpResult&& r);
  void on_self_read(const AttemptPtr& a, unsigned step, std::uint64_t epoch, OpResult&& r);
  void on_pred_event(const AttemptPtr& a, unsigned step, WatchEventType type);
  void on_self_event(const AttemptPtr& a, WatchEventType type);
  void on_deleted(const AttemptPtr& a, unsigned step, OpResult&& r);
  /// A read of our own node answered `data` at `version` (revocation.cpp): a revocation request
  /// is reported if the application asked for them (at once while held, else once acquired), and
  /// our node's data is put back.
  void own_data_read_locked(const AttemptPtr& a, const std::string& data, std::int32_t version);
  void report_revocation_locked(const AttemptPtr& a);
  // What our node says (holder_data.cpp), with mutex_ held.
  /// The data our node holds for `a`: the create's, with its stamp and proclaimed value.
  std::string node_data_locked(const AttemptPtr& a) const;
  /// MutexOptions::stamp_held_since: writes the time `a` became the holder into its node.
  void stamp_held_since_locked(const AttemptPtr& a);
  /// Writes node_data_locked(a) over a revocation request read at `version`.
  void restore_node_data_locked(const AttemptPtr& a, std::int32_t version);
  /// Acquired: a request that came while waiting is reported; a holder first at once watches its
  /// node for the next. Returns: true if that watch was set (no heartbeat probe needed).
  bool watch_for_revocation_locked(const AttemptPtr& a);
  /// The delete of our node answered `rc`: done, retried, or refused for good.
  void deleted_locked(const AttemptPtr& a, Errc rc);
  void on_held_node_missing(const AttemptPtr& a);

  LockState state_locked() const;
  void report_state_locked();
  std::shared_ptr<ClientConnection> connection_for_locked(const AttemptPtr& a) const;

  void take_acquisition_locked(const AttemptPtr& a);
  /// release()'s work; returns the attempt being cleaned up (null if nothing was released).
  AttemptPtr release_locked(std::initializer_list<ContenderKind> kinds);
  void fire_released_locked(const AttemptPtr& a);
  Acquisition acquisition_of_locked(const AttemptPtr& a) const;
  LockState attempt_state_locked(const AttemptPtr& a) const;
  bool wait_lost_until(const std::function<LockState()>& state,
                       std::optional<SteadyClock::time_point> deadline) const;

  // The lock-delay (lock_delay.cpp), with mutex_ held. Off for a SharedMutex.
  bool lock_delay_on() const noexcept { return !read_write_ && options_.lock_delay.count() > 0; }
  /// A new place in line: forgets what the last one saw, and pipelines (before the create of
  /// `step`) the read that tells whether the lock path changed since the last clean release.
  void prepare_lock_delay_locked(const AttemptPtr& a, ClientConnection& c, unsigned step);
  /// Pipelines (before the listing of `step`) the read of the release mark.
  void read_mark_with_listing_locked(const AttemptPtr& a, ClientConnection& c, unsigned step);
  /// The attempt waits behind `node_name` now.
  void waiting_behind_locked(const AttemptPtr& a, const std::string& node_name);
  /// Behind the head: a data watch on the lock path tells of the head's release mark.
  void watch_mark_locked(const AttemptPtr& a, ClientConnection& c, unsigned step);
  void drop_mark_watch_locked(const AttemptPtr& a);
  /// At the head of the line: true if a delay is due, or being decided (acquired_locked() is
  /// called again once it is served); false to hand the lock out now.
  bool held_back_by_lock_delay_locked(const AttemptPtr& a);
  void wait_out_lock_delay_locked(const AttemptPtr& a);
  /// A release: the mark and the delete of our node in one multi.
  void delete_with_mark_locked(const AttemptPtr& a, ClientConnection& c);

  // The figures (mutex_figures.cpp), with mutex_ held.
  LockMeter* meter_of(ContenderKind kind) const noexcept;
  /// An acquisition called at `started` ended with `outcome`.
  void record_acquire_locked(const AttemptPtr& a, AcquireOutcome outcome,
                             SteadyClock::time_point started);
  /// A hold began (acquired) / ended (released, or seen Lost); each hold ends once. The hold is
  /// timed from its Acquisition (acquired_at), so that a held lock carries nothing more.
  void begin_hold_locked(const AttemptPtr& a);
  void end_hold_locked(const AttemptPtr& a);

  // Asynchronous attempts (mutex_async.cpp), with mutex_ held.
  /// Decides an asynchronous attempt's outcome (once) and sends its handler on its way.
  void settle_async_locked(const AttemptPtr& a, Errc code);
  /// Gives up a pending asynchronous attempt with `code`: cleanup, then the handler.
  void end_async_locked(const AttemptPtr& a, Errc code);
  void end_all_async_locked();
  void report_async_states_locked();
  void report_async_state_locked(const AttemptPtr& a);

  const std::shared_ptr<SessionCore> session_;
  const std::string path_;
  const MutexOptions options_;
  const bool read_write_;
  const std::string node_data_;
  bool latch_names_ = false;  // use_latch_names(): set once, before any request
  // Where its acquisitions count (null: nowhere), by kind: a Mutex's exclusive, a SharedMutex's
  // read and write sides.
  LockMeter* const exclusive_meter_;
  LockMeter* const read_meter_;
  LockMeter* const write_meter_;
  const std::shared_ptr<CallbackGate> callbacks_ = std::make_shared<CallbackGate>();

  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::vector<AttemptPtr> attempts_;  // waiting, held, or still cleaning up
  AttemptPtr held_;
  std::optional<Acquisition> acquisition_;
  std::thread::id owner_;
  LockState reported_state_ = LockState::kNotHeld;
  // Threads of this process sharing this Mutex take turns locally first (FIFO tickets).
  // A vector, not a deque: libstdc++'s deque allocates ~600 bytes as it is made, for every Mutex
  // (a hundred thousand held locks: 60 MB); the threads queueing here are few.
  std::vector<std::uint64_t> local_queue_;
  std::uint64_t next_ticket_ = 0;
  bool busy_ = false;  // an attempt is in progress or the lock is held
  std::uint64_t cancel_epoch_ = 0;
  int callers_ = 0;  // threads inside acquire()
  bool shut_down_ = false;
  // Nodes of ours in the current generation that could not be deleted (refused for good): our own
  // attempts do not queue behind them; they go with the session.
  unsigned orphans_generation_ = 0;
  std::set<std::string> orphans_;
  // What the waiters know of the queue, and the listing in flight they may share
  // (queue_walk.cpp). Creates in flight on the connection of epoch `creates_epoch_`: while one
  // is, a new create does not pipeline a listing of its own but shares one once answered.
  QueueView view_;
  std::shared_ptr<SharedListing> listing_in_flight_;
  std::uint64_t creates_epoch_ = 0;
  unsigned creates_in_flight_ = 0;
};

/// Mutex::commit_fenced and SharedMutex::commit_fenced: `writes` in one multi with a check that
/// the held lock's node still exists. Throws: as Mutex::commit_fenced.
void commit_fenced(const std::shared_ptr<MutexCore>& core, const FencedWrite& writes);

/// Mutex::async_lock and the like: checks the handler, then core.async_acquire().
LockRequest async_lock(const std::shared_ptr<MutexCore>& core, ContenderKind kind,
                       LockHandler handler, AsyncLockOptions options);
/// Mutex::lock_future and the like.
std::future<Hold> lock_future(const std::shared_ptr<MutexCore>& core, ContenderKind kind,
                              AsyncLockOptions options);
/// The same, fenced on `acquisition` (a Hold's).
void commit_fenced(MutexCore& core, const Acquisition& acquisition, const FencedWrite& writes);

/// Returns: every contender on lock path `path` in queue order (creation order: czxid), with
/// its data - zklock's, Curator's and kazoo's; one listing, then every node's data in one
/// pipelined round trip. Throws: as Session's basic operations, with `context` in the message.
std::vector<Contender> read_contenders(SessionCore& session, const std::string& path,
                                       const std::string& context);

}  // namespace zklock::detail
