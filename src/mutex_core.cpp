#include "mutex_core.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <utility>

#include "holder_identity.h"
#include "mutex_attempt.h"

namespace zklock::detail {


MutexCore::MutexCore(std::shared_ptr<SessionCore> session, std::string path, MutexOptions options)
    : session_(std::move(session)),
      path_(std::move(path)),
      options_(std::move(options)),
      node_data_(holder_identity(options_.description)) {}

MutexCore::~MutexCore() = default;

void MutexCore::attach() { session_->add_observer(shared_from_this()); }

std::string MutexCore::new_uuid() {
  // One generator per thread (not per Mutex: it is 2.5 KB), seeded from the OS.
  thread_local std::mt19937_64 random{std::random_device{}()};
  const std::uint64_t hi = (random() & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  const std::uint64_t lo = (random() & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffULL));
  return buf;
}

std::shared_ptr<Handle> MutexCore::handle_for_locked(const AttemptPtr& a) const {
  auto h = session_->handle();
  if (!h || h->generation() != a->generation) return nullptr;
  return h;
}

// ---------------------------------------------------------------------------------------------
// Session changes (monitor thread)

void MutexCore::on_session_change() {
  std::lock_guard lock(mutex_);
  const bool closed = session_->closed();
  const unsigned generation = session_->generation();
  const std::vector<AttemptPtr> attempts = attempts_;
  for (const auto& a : attempts) {
    switch (a->phase) {
      case Attempt::Phase::kDone:
      case Attempt::Phase::kHeld:
        break;
      case Attempt::Phase::kCleaning:
        if (closed || a->generation != generation) {
          finish_cleanup_locked(a);  // closing deleted it, or it went with its session
        } else if (a->retry_pending && session_->c_connected()) {
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
        } else if (a->retry_pending && session_->c_connected()) {
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
  if (held_->self_deleted) return LockState::kLost;
  switch (session_->state_of(held_->generation)) {
    case SessionState::kConnected: return LockState::kHeld;
    case SessionState::kSuspended: return LockState::kSuspended;
    default: return LockState::kLost;
  }
}

void MutexCore::report_state_locked() {
  const LockState now = state_locked();
  if (now == reported_state_) return;
  const LockState before = reported_state_;
  reported_state_ = now;
  if (!options_.on_state_change || !acquisition_ || now == LockState::kNotHeld ||
      before == LockState::kLost) {
    return;
  }
  auto callback = options_.on_state_change;
  const Acquisition acquisition = *acquisition_;
  session_->post_event([callback, now, acquisition] { callback(now, acquisition); });
}

// ---------------------------------------------------------------------------------------------
// Application-facing

MutexCore::Outcome MutexCore::acquire(std::optional<Clock::time_point> deadline, bool try_once) {
  std::unique_lock lock(mutex_);
  if (held_ && owner_ == std::this_thread::get_id()) {
    throw Error(Errc::would_deadlock, "zklock::Mutex(\"" + path_ + "\")::lock");
  }
  if (session_->closed() || shut_down_) throw ClosedError(Errc::closed, "zklock::Mutex(\"" + path_ + "\")");
  ++callers_;
  struct Leave {
    MutexCore* core;
    ~Leave() {
      --core->callers_;
      core->cv_.notify_all();
    }
  } leave{this};
  const std::uint64_t epoch = cancel_epoch_;
  auto cancelled = [&] { return cancel_epoch_ != epoch || shut_down_; };
  auto wait = [&](auto&& done) {
    if (deadline) return cv_.wait_until(lock, *deadline, done);
    cv_.wait(lock, done);
    return true;
  };

  // Threads sharing this object take turns here first, in arrival order.
  const std::uint64_t ticket = next_ticket_++;
  local_queue_.push_back(ticket);
  const bool my_turn = wait([&] {
    return (local_queue_.front() == ticket && !busy_) || cancelled() || session_->closed();
  });
  local_queue_.erase(std::find(local_queue_.begin(), local_queue_.end(), ticket));
  if (!my_turn || cancelled() || session_->closed()) {
    cv_.notify_all();
    if (session_->closed()) throw ClosedError(Errc::closed, "zklock::Mutex(\"" + path_ + "\")");
    return cancelled() ? Outcome::kCancelled : Outcome::kTimedOut;
  }
  busy_ = true;

  auto a = std::make_shared<Attempt>();
  a->try_once = try_once || (deadline && *deadline <= Clock::now());
  if (a->try_once) {
    // One attempt still needs its round trip: allow it up to the session timeout.
    deadline = Clock::now() + session_->negotiated_timeout();
  }
  attempts_.push_back(a);
  start_create_locked(a);
  wait([&] { return a->result != Attempt::Result::kPending || cancelled(); });

  if (a->result == Attempt::Result::kAcquired) {
    held_ = a;
    owner_ = std::this_thread::get_id();
    acquisition_ = Acquisition{path_,      a->node_path,  a->sequence,      a->czxid,
                               session_->session_id(), a->generation, Clock::now()};
    reported_state_ = LockState::kNotHeld;
    report_state_locked();
    return Outcome::kAcquired;
  }
  Outcome outcome = a->result == Attempt::Result::kNotAcquired ? Outcome::kNotAcquired
                    : cancelled()                              ? Outcome::kCancelled
                                                               : Outcome::kTimedOut;
  if (a->result == Attempt::Result::kPending) cleanup_locked(a);
  // Leave nothing behind: wait for our delete while the connection is up (one round trip), but
  // never for a reconnect - the node goes with the session if it comes to that.
  const Clock::time_point cleanup_deadline = Clock::now() + session_->negotiated_timeout() / 3;
  cv_.wait_until(lock, cleanup_deadline, [&] {
    return a->phase == Attempt::Phase::kDone || !session_->c_connected() || session_->closed();
  });
  busy_ = false;
  cv_.notify_all();
  if (a->result == Attempt::Result::kFailed) {
    throw_error(a->error, "zklock::Mutex(\"" + path_ + "\")::lock");
  }
  return outcome;
}

void MutexCore::release() noexcept {
  std::lock_guard lock(mutex_);
  if (!held_) return;
  AttemptPtr a = std::move(held_);
  held_.reset();
  acquisition_.reset();
  owner_ = std::thread::id();
  reported_state_ = LockState::kNotHeld;
  busy_ = false;
  cleanup_locked(a);  // delete, retried in the background on connection loss
  cv_.notify_all();
}

void MutexCore::cancel() noexcept {
  std::lock_guard lock(mutex_);
  ++cancel_epoch_;
  cv_.notify_all();
}

void MutexCore::shutdown() noexcept {
  {
    std::unique_lock lock(mutex_);
    shut_down_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return callers_ == 0; });
  }
  release();
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

bool MutexCore::wait_lost_until(Clock::time_point deadline) const {
  std::unique_lock lock(mutex_);
  while (true) {
    const LockState s = state_locked();
    if (s == LockState::kLost || s == LockState::kNotHeld) return true;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) return false;
    // Wake at the Lost deadline too: the clock decides Lost even if no event comes.
    const Clock::time_point lost_at = session_->lost_deadline();
    cv_.wait_until(lock, std::min(deadline, lost_at > now ? lost_at : now + std::chrono::milliseconds(1)));
  }
}

std::vector<Contender> MutexCore::contenders() const {
  auto listing = session_->call(
      [&](Handle& h, Completion done) { h.get_children(path_, std::move(done)); },
      session_->negotiated_timeout());
  if (listing.rc == Errc::no_node) return {};
  if (listing.rc != Errc::ok) {
    throw_error(listing.rc, "zklock::Mutex(\"" + path_ + "\")::contenders");
  }
  // Every node's data and stat, all reads pipelined: one round trip, not one per contender.
  const std::vector<std::string> names = queue_order(std::move(listing.children));
  struct Reads {
    explicit Reads(std::size_t n) : remaining(n), results(n) {}
    std::atomic<std::size_t> remaining;  // answers may come on the completion or monitor thread
    std::vector<OpResult> results;       // slot i written once, before its decrement
  };
  auto reads = std::make_shared<Reads>(names.size());
  const auto all = session_->call(
      [&](Handle& h, Completion done) {
        if (names.empty()) return done(OpResult{});
        auto finish = std::make_shared<Completion>(std::move(done));
        for (std::size_t i = 0; i < names.size(); ++i) {
          h.get_data(path_ + "/" + names[i], {}, [reads, finish, i](OpResult&& r) {
            reads->results[i] = std::move(r);
            if (--reads->remaining == 0) (*finish)(OpResult{});
          });
        }
      },
      session_->negotiated_timeout());
  if (all.rc != Errc::ok) throw_error(all.rc, "zklock::Mutex(\"" + path_ + "\")::contenders");
  std::vector<Contender> out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    OpResult& r = reads->results[i];
    if (r.rc == Errc::no_node) continue;  // left the queue meanwhile
    if (r.rc != Errc::ok) throw_error(r.rc, "zklock::Mutex(\"" + path_ + "\")::contenders");
    const auto parsed = parse_contender_name(names[i]);
    Contender c;
    c.name = names[i];
    c.sequence = parsed->sequence;
    c.naming = parsed->naming;
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
