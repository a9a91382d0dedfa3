// MutexCore, the application-facing half: taking turns, waiting, releasing, reporting state.
// The recipe's steps are in mutex_recipe.cpp.
#include "lock/mutex_core.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "lock/holder_identity.h"
#include "lock/mutex_attempt.h"

namespace zklock::detail {

MutexCore::MutexCore(std::shared_ptr<SessionCore> session, std::string path, MutexOptions options,
                     bool read_write, bool recorded)
    : session_(std::move(session)),
      path_(std::move(path)),
      options_(std::move(options)),
      read_write_(read_write),
      node_data_(holder_identity(options_.description,
                                 static_cast<bool>(options_.on_revocation_requested))),
      exclusive_meter_(recorded && !read_write ? session_->lock_meter(Recipe::kMutex, path_)
                                               : nullptr),
      read_meter_(recorded && read_write ? session_->lock_meter(Recipe::kSharedRead, path_)
                                         : nullptr),
      write_meter_(recorded && read_write ? session_->lock_meter(Recipe::kSharedWrite, path_)
                                          : nullptr) {}

std::string MutexCore::context() const {
  return std::string(read_write_ ? "zklock::SharedMutex" : "zklock::Mutex") + "(\"" + path_ + "\")";
}

MutexCore::~MutexCore() = default;

void MutexCore::attach() { session_->add_observer(shared_from_this()); }

std::shared_ptr<ClientConnection> MutexCore::connection_for_locked(const AttemptPtr& a) const {
  auto c = session_->connection();
  if (!c || c->generation() != a->generation) return nullptr;
  return c;
}

void MutexCore::post_callback_locked(std::function<void()> callback) {
  session_->post_event(
      [gate = callbacks_, callback = std::move(callback)] { gate->run(callback); });
}

// ---------------------------------------------------------------------------------------------
// Session changes (monitor thread)

void MutexCore::on_session_change() {
  std::lock_guard lock(mutex_);
  const bool closed = session_->closed();
  const unsigned generation = session_->generation();
  if (generation != orphans_generation_) {
    orphans_.clear();  // they went with their session
    orphans_generation_ = generation;
  }
  const std::vector<AttemptPtr> attempts = attempts_;
  for (const auto& a : attempts) {
    switch (a->phase) {
      case Attempt::Phase::kDone:
      case Attempt::Phase::kHeld:
        break;
      case Attempt::Phase::kCleaning:
        if (closed || a->generation != generation) {
          finish_cleanup_locked(a);  // closing deleted it, or it went with its session
          break;
        }
        if (a->async && !session_->connected()) {
          // Do not keep the handler waiting for a reconnect: the node goes with the session if
          // it comes to that, and the delete is sent again when the connection is back.
          if (!a->async->settled) settle_async_locked(a, a->error);
          fire_released_locked(a);
        }
        if (a->retry_pending && session_->connected()) {
          a->retry_pending = false;
          auto retry = std::move(a->retry);
          retry();
        }
        break;
      default:  // waiting
        if (closed) {
          fail_locked(a, Errc::closed);
        } else if (a->generation != generation) {
          restart_locked(a);  // Lost while waiting: re-queue in the new session
        } else if (a->retry_pending && session_->connected()) {
          a->retry_pending = false;
          auto retry = std::move(a->retry);
          retry();
        }
    }
  }
  report_state_locked();
  cv_.notify_all();
}

LockState MutexCore::state_locked() const {
  if (!held_) return LockState::kNotHeld;
  return attempt_state_locked(held_);
}

LockState MutexCore::attempt_state_locked(const AttemptPtr& a) const {
  if (a->self_deleted) return LockState::kLost;
  return session_->lock_state_of(a->generation);
}

void MutexCore::report_state_locked() {
  report_async_states_locked();
  const LockState now = state_locked();
  if (now == LockState::kLost && held_) end_hold_locked(held_);
  if (now == reported_state_) return;
  const LockState before = reported_state_;
  reported_state_ = now;
  if (!options_.on_state_change || !acquisition_ || now == LockState::kNotHeld ||
      before == LockState::kLost) {
    return;
  }
  post_callback_locked([callback = options_.on_state_change, now, acquisition = *acquisition_] {
    callback(now, acquisition);
  });
}

// ---------------------------------------------------------------------------------------------
// Application-facing

std::uint64_t MutexCore::cancel_epoch() const noexcept {
  std::lock_guard lock(mutex_);
  return cancel_epoch_;
}

bool MutexCore::acquire(ContenderKind kind, std::optional<SteadyClock::time_point> deadline,
                        bool try_once, bool throw_on_cancel,
                        std::optional<std::uint64_t> cancel_epoch) {
  const std::string context = this->context();
  Lock lock(mutex_);
  if (held_ && owner_ == std::this_thread::get_id()) {
    if (held_->kind == ContenderKind::kRead && kind != ContenderKind::kRead) {
      throw Error(Errc::would_deadlock,
                  context +
                      "::lock: this thread holds the shared lock; upgrading it to the "
                      "exclusive lock is not supported (it would wait for itself): "
                      "unlock_shared() first");
    }
    throw Error(Errc::would_deadlock, context + "::lock");
  }
  if (session_->closed() || shut_down_) throw ClosedError(Errc::closed, context);
  const Caller caller(*this);
  const std::uint64_t epoch = cancel_epoch ? *cancel_epoch : cancel_epoch_;
  auto a = std::make_shared<Attempt>();
  a->kind = kind;
  const auto started = SteadyClock::now();
  auto give_up = [&]() -> bool {  // after a cancel, a timeout or the end of the Mutex
    if (session_->closed()) {
      record_acquire_locked(a, AcquireOutcome::kSessionLost, started);
      throw ClosedError(Errc::closed, context);
    }
    const bool cancelled = shut_down_ || cancelled_since(epoch);
    record_acquire_locked(a, cancelled ? AcquireOutcome::kCancelled : AcquireOutcome::kTimedOut,
                          started);
    if (shut_down_) throw CancelledError(context + "::lock: the Mutex was destroyed while waiting");
    if (cancelled_since(epoch) && throw_on_cancel)
      throw CancelledError(context + "::lock: cancelled");
    return false;
  };

  // Another thread of ours goes first.
  a->mark(Attempt::kContended, busy_ || !local_queue_.empty());
  if (!take_local_turn(lock, deadline, epoch)) return give_up();
  busy_ = true;

  a->try_once = try_once || (deadline && *deadline <= SteadyClock::now());
  // One attempt still needs its round trip: allow it up to the session timeout.
  const auto attempt_deadline =
      a->try_once ? std::optional(SteadyClock::now() + session_->negotiated_timeout()) : deadline;
  attempts_.push_back(a);
  start_create_locked(a);
  await_attempt(lock, a, attempt_deadline, epoch);

  if (a->result == Attempt::Result::kAcquired) {
    owner_ = std::this_thread::get_id();
    record_acquire_locked(a, AcquireOutcome::kAcquired, started);
    take_acquisition_locked(a);
    return true;
  }
  if (a->result == Attempt::Result::kPending) cleanup_locked(a);
  await_cleanup(lock, a);
  busy_ = false;
  cv_.notify_all();
  if (a->result == Attempt::Result::kFailed) {
    record_acquire_locked(a, outcome_of(a->error), started);
    throw_error(a->error, context + "::lock");
  }
  if (a->result == Attempt::Result::kNotAcquired) {
    record_acquire_locked(a, AcquireOutcome::kTimedOut, started);  // try_lock() found it taken
    return false;
  }
  return give_up();
}

Acquisition MutexCore::acquisition_of_locked(const AttemptPtr& a) const {
  return Acquisition{
      path_,         a->node_path,  a->sequence,        a->czxid,
      a->session_id, a->generation, SteadyClock::now(), a->kind == ContenderKind::kRead};
}

void MutexCore::take_acquisition_locked(const AttemptPtr& a) {
  held_ = a;
  acquisition_ = acquisition_of_locked(a);
  reported_state_ = LockState::kNotHeld;
  report_state_locked();
}

bool MutexCore::downgrade() {
  const std::string context = this->context() + "::try_downgrade";
  Lock lock(mutex_);
  if (!held_ || held_->kind != ContenderKind::kWrite) {
    throw Error(Errc::not_held, context + ": the exclusive lock is not held");
  }
  if (state_locked() != LockState::kHeld) return false;  // not sure we hold it: nothing to keep
  const Caller caller(*this);
  const AttemptPtr writer = held_;
  auto reader = std::make_shared<Attempt>();
  reader->kind = ContenderKind::kRead;
  reader->try_once = true;  // held at once, or not at all
  reader->exempt_writer = writer->node_name;
  attempts_.push_back(reader);
  start_create_locked(reader);
  await_attempt(lock, reader, SteadyClock::now() + session_->negotiated_timeout(), cancel_epoch_);
  if (reader->result == Attempt::Result::kAcquired && held_ == writer &&
      reader->generation == writer->generation && still_held_locked(writer)) {
    // Both nodes are ours and nobody can be between them but readers: the write node can go.
    end_hold_locked(writer);
    take_acquisition_locked(reader);
    cleanup_locked(writer);
    cv_.notify_all();
    return true;
  }
  // A writer queued between our nodes (or the write lock was lost meanwhile): keep what we hold.
  if (reader->result == Attempt::Result::kPending || reader->result == Attempt::Result::kAcquired)
    cleanup_locked(reader);
  await_cleanup(lock, reader);
  if (reader->result == Attempt::Result::kFailed) throw_error(reader->error, context);
  return false;
}

// Threads sharing this object take turns here first, in arrival order.
bool MutexCore::take_local_turn(Lock& lock, std::optional<SteadyClock::time_point> deadline,
                                std::uint64_t cancel_epoch) {
  const std::uint64_t ticket = next_ticket_++;
  local_queue_.push_back(ticket);
  const auto turn = [&] {
    return (local_queue_.front() == ticket && !busy_) || cancelled_since(cancel_epoch) ||
           session_->closed();
  };
  bool my_turn = true;
  if (deadline) {
    my_turn = cv_.wait_until(lock, *deadline, turn);
  } else {
    cv_.wait(lock, turn);
  }
  local_queue_.erase(std::find(local_queue_.begin(), local_queue_.end(), ticket));
  cv_.notify_all();
  return my_turn && !cancelled_since(cancel_epoch) && !session_->closed();
}

// Waits for the attempt to end. An acquisition that turns out to be lost by the time this thread
// looks at it (its session ended, or its node was deleted - e.g. replayed after a reconnect) is
// never handed out: the attempt queues again.
void MutexCore::await_attempt(Lock& lock, const AttemptPtr& a,
                              std::optional<SteadyClock::time_point> deadline,
                              std::uint64_t cancel_epoch) {
  const auto done = [&] {
    return a->result != Attempt::Result::kPending || cancelled_since(cancel_epoch);
  };
  while (true) {
    if (deadline) {
      if (!cv_.wait_until(lock, *deadline, done)) return;
    } else {
      cv_.wait(lock, done);
    }
    if (a->result != Attempt::Result::kAcquired || still_held_locked(a)) return;
    a->result = Attempt::Result::kPending;
    a->mark(Attempt::kHoldOpen, false);  // never handed out: no hold to count
    vanished_locked(a);
  }
}

// Leave nothing behind: wait for our delete while the connection is up (one round trip), but never
// for a reconnect - the node goes with the session if it comes to that.
void MutexCore::await_cleanup(Lock& lock, const AttemptPtr& a) {
  const auto until = SteadyClock::now() + session_->negotiated_timeout() / 3;
  cv_.wait_until(lock, until, [&] {
    return a->phase == Attempt::Phase::kDone || !session_->connected() || session_->closed();
  });
}

MutexCore::AttemptPtr MutexCore::release_locked(std::initializer_list<ContenderKind> kinds) {
  if (!held_) return nullptr;
  if (kinds.size() != 0 && std::find(kinds.begin(), kinds.end(), held_->kind) == kinds.end()) {
    return nullptr;  // unlock() of a SharedMutex held shared, or unlock_shared() of one held
                     // exclusively
  }
  end_hold_locked(held_);  // while its Acquisition is still there
  AttemptPtr a = std::move(held_);
  held_.reset();
  acquisition_.reset();
  owner_ = std::thread::id();
  reported_state_ = LockState::kNotHeld;
  busy_ = false;
  cleanup_locked(a);  // delete, retried in the background on connection loss
  cv_.notify_all();
  return a;
}

void MutexCore::release(std::initializer_list<ContenderKind> kinds) noexcept {
  std::lock_guard lock(mutex_);
  release_locked(kinds);
}

void MutexCore::release_and_wait(std::initializer_list<ContenderKind> kinds) noexcept {
  Lock lock(mutex_);
  if (const AttemptPtr a = release_locked(kinds)) await_cleanup(lock, a);
}

void MutexCore::cancel() noexcept {
  std::lock_guard lock(mutex_);
  ++cancel_epoch_;
  cv_.notify_all();
}

void MutexCore::shutdown() noexcept {
  {
    Lock lock(mutex_);
    shut_down_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return callers_ == 0; });
    end_all_async_locked();  // pending requests: cancelled; Holds: released
  }
  release();
  callbacks_->close();
  session_->remove_observer(this);
}

LockState MutexCore::state() const noexcept {
  std::lock_guard lock(mutex_);
  return state_locked();
}

std::optional<Acquisition> MutexCore::acquisition() const {
  std::lock_guard lock(mutex_);
  return acquisition_;
}

bool MutexCore::wait_lost_until(std::optional<SteadyClock::time_point> deadline) const {
  return wait_lost_until([this] { return state_locked(); }, deadline);
}

bool MutexCore::wait_lost_until(const std::function<LockState()>& state,
                                std::optional<SteadyClock::time_point> deadline) const {
  Lock lock(mutex_);
  while (true) {
    const LockState s = state();
    if (s == LockState::kLost || s == LockState::kNotHeld) return true;
    const auto now = SteadyClock::now();
    if (deadline && now >= *deadline) return false;
    cv_.wait_until(lock, session_->lost_wait_until(deadline));
  }
}

std::vector<Contender> MutexCore::contenders() const {
  return read_contenders(*session_, path_, context() + "::contenders");
}

std::vector<Contender> read_contenders(SessionCore& session, const std::string& path,
                                       const std::string& context) {
  const auto timeout = session.negotiated_timeout();
  auto listing = session.call(
      [&](ClientConnection& c, Completion done) { c.get_children(path, std::move(done)); },
      timeout);
  if (listing.rc == Errc::no_node) return {};
  if (listing.rc != Errc::ok) throw_error(listing.rc, context);
  // Every node's data and stat, all reads pipelined: one round trip, not one per contender.
  const std::vector<std::string> names = queue_order(std::move(listing.children));
  struct Reads {
    explicit Reads(std::size_t n) : remaining(n), results(n) {}
    std::atomic<std::size_t> remaining;  // answers may come on the completion or monitor thread
    std::vector<OpResult> results;       // slot i written once, before its decrement
  };
  auto reads = std::make_shared<Reads>(names.size());
  const auto all = session.call(
      [&](ClientConnection& c, Completion done) {
        if (names.empty()) return done(OpResult{});
        auto finish = std::make_shared<Completion>(std::move(done));
        for (std::size_t i = 0; i < names.size(); ++i) {
          c.get_data(path + "/" + names[i], {}, [reads, finish, i](OpResult&& r) {
            reads->results[i] = std::move(r);
            if (--reads->remaining == 0) (*finish)(OpResult{});
          });
        }
      },
      timeout);
  if (all.rc != Errc::ok) throw_error(all.rc, context);
  // Contenders we may not read (another application's nodes without READ for us): their stat,
  // which needs no permission, in one more round trip; their data stays unknown (empty).
  std::vector<std::size_t> unreadable;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (reads->results[i].rc == Errc::no_auth) unreadable.push_back(i);
  }
  if (!unreadable.empty()) {
    auto stats = std::make_shared<Reads>(unreadable.size());
    const auto looked = session.call(
        [&](ClientConnection& c, Completion done) {
          auto finish = std::make_shared<Completion>(std::move(done));
          for (std::size_t k = 0; k < unreadable.size(); ++k) {
            c.exists(path + "/" + names[unreadable[k]], [stats, finish, k](OpResult&& r) {
              stats->results[k] = std::move(r);
              if (--stats->remaining == 0) (*finish)(OpResult{});
            });
          }
        },
        timeout);
    if (looked.rc != Errc::ok) throw_error(looked.rc, context);
    for (std::size_t k = 0; k < unreadable.size(); ++k) {
      reads->results[unreadable[k]] = std::move(stats->results[k]);
    }
  }
  std::vector<Contender> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    OpResult& r = reads->results[i];
    if (r.rc == Errc::no_node) continue;  // left the queue meanwhile
    if (r.rc != Errc::ok) throw_error(r.rc, context);
    const auto parsed = parse_contender_name(names[i]);
    Contender c;
    c.name = names[i];
    c.sequence = parsed->sequence;
    c.naming = parsed->naming;
    c.kind = parsed->kind;
    c.czxid = r.stat.czxid;
    c.ephemeral_owner = r.stat.ephemeral_owner;
    c.data = std::move(r.value);
    out.push_back(std::move(c));
  }
  // Creation order, which the sequence numbers stop giving near the top of their range.
  std::stable_sort(out.begin(), out.end(),
                   [](const Contender& x, const Contender& y) { return x.czxid < y.czxid; });
  return out;
}

}  // namespace zklock::detail
