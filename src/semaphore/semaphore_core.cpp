// SemaphoreCore, the application-facing half: acquire's loop over rounds (internal lock, lease
// phase), cancellation, shutdown, listing the leases. The lease phase is in
// semaphore_lease_phase.cpp, the stored lease count in semaphore_count.cpp.
#include "semaphore/semaphore_core.h"

#include <algorithm>
#include <utility>

#include "lock/holder_identity.h"
#include "lock/lock_node_name.h"

namespace zklock::detail {
namespace {

MutexOptions internal_lock_options(const SemaphoreOptions& options) {
  MutexOptions o;
  o.description = options.description;
  o.container_parents = options.container_parents;
  return o;
}

}  // namespace

SemaphoreCore::SemaphoreCore(std::shared_ptr<SessionCore> session, std::string path, int max_leases,
                             SemaphoreOptions options)
    : session_(std::move(session)),
      path_(std::move(path)),
      leases_path_(path_ + "/leases"),
      max_leases_(max_leases),
      options_(std::move(options)),
      node_data_(holder_identity(options_.description, /*revocable=*/false)),
      lock_(std::make_shared<MutexCore>(session_, path_ + "/locks", internal_lock_options(options_),
                                        /*read_write=*/false, /*recorded=*/false)),
      meter_(session_->lock_meter(Recipe::kSemaphore, path_)) {}

SemaphoreCore::~SemaphoreCore() = default;

std::string SemaphoreCore::context() const { return "zklock::Semaphore(\"" + path_ + "\")"; }

void SemaphoreCore::attach() {
  lock_->attach();
  session_->add_observer(shared_from_this());
}

void SemaphoreCore::on_session_change() {
  std::lock_guard lock(mutex_);
  cv_.notify_all();
}

void SemaphoreCore::shutdown() noexcept {
  {
    Lock lock(mutex_);
    shut_down_ = true;
  }
  // Wakes every waiter: those waiting for the internal lock leave it, those in the lease phase
  // remove their nodes and watches; all of them throw CancelledError (or return nullopt).
  cancel();
  {
    Lock lock(mutex_);
    cv_.wait(lock, [&] { return callers_ == 0; });
  }
  lock_->shutdown();
  session_->remove_observer(this);
}

void SemaphoreCore::cancel() noexcept {
  // Both epochs move under mutex_ (lock order: this mutex_, then the internal lock's): a thread
  // that read them before is cancelled at once, one that reads them after is not cancelled at all.
  std::lock_guard lock(mutex_);
  ++cancel_epoch_;
  cv_.notify_all();
  lock_->cancel();
}

bool SemaphoreCore::take_internal_lock(std::optional<SteadyClock::time_point> deadline,
                                       bool try_once, std::uint64_t epoch) {
  std::uint64_t lock_epoch = 0;
  {
    // The internal lock's cancel epoch, read with ours: a cancel() after this check reaches the
    // internal lock's acquire() however late this thread gets there.
    std::lock_guard lock(mutex_);
    if (cancelled_since(epoch)) return false;
    lock_epoch = lock_->cancel_epoch();
  }
  bool got = false;
  try {
    got = lock_->acquire(ContenderKind::kExclusive, try_once ? SteadyClock::now() : deadline,
                         try_once, false, lock_epoch);
  } catch (const ClosedError&) {
    if (session_->closed()) throw;
    return false;  // the internal lock was shut down: ~Semaphore
  }
  if (!got) return false;
  bool cancelled = false;
  {
    std::lock_guard lock(mutex_);
    cancelled = cancelled_since(epoch);
  }
  if (!cancelled) return true;
  lock_->release();
  return false;
}

std::vector<std::shared_ptr<LeaseCore>> SemaphoreCore::acquire(
    std::optional<SteadyClock::time_point> deadline, bool try_once, bool throw_on_cancel,
    int count) {
  const auto started = SteadyClock::now();
  std::uint64_t epoch = 0;
  {
    std::lock_guard lock(mutex_);
    epoch = cancel_epoch_;
  }
  bool contended = false;
  // One acquisition in the figures per call, however many leases it takes.
  const auto record = [&](AcquireOutcome outcome, const std::shared_ptr<LeaseCore>& lease) {
    if (!meter_) return;
    meter_->acquire_ended(path_, outcome, SteadyClock::now() - started, contended,
                          lease ? lease->acquisition().sequence : 0);
  };
  std::vector<std::shared_ptr<LeaseCore>> leases;
  try {
    leases = take_leases(deadline, try_once, throw_on_cancel, count, contended);
  } catch (const CancelledError&) {
    record(AcquireOutcome::kCancelled, nullptr);
    throw;
  } catch (const ClosedError&) {
    record(AcquireOutcome::kSessionLost, nullptr);
    throw;
  } catch (const SessionLostError&) {
    record(AcquireOutcome::kSessionLost, nullptr);
    throw;
  } catch (...) {
    record(AcquireOutcome::kError, nullptr);
    throw;
  }
  if (!leases.empty()) {
    record(AcquireOutcome::kAcquired, leases.front());
  } else {
    bool cancelled = false;
    {
      std::lock_guard lock(mutex_);
      cancelled = cancelled_since(epoch);
    }
    record(cancelled ? AcquireOutcome::kCancelled : AcquireOutcome::kTimedOut, nullptr);
  }
  return leases;
}

namespace {

// Gives back leases taken for a call that cannot have them all (all or none).
void give_back(std::vector<std::shared_ptr<LeaseCore>>& leases,
               std::chrono::milliseconds wait_each) {
  for (const auto& lease : leases) lease->release();
  for (const auto& lease : leases) lease->await_released(wait_each);
  leases.clear();
}

}  // namespace

SemaphoreCore::Outcome SemaphoreCore::lease_phases(int count,
                                                   std::optional<SteadyClock::time_point> deadline,
                                                   bool try_once, std::uint64_t epoch,
                                                   std::vector<std::shared_ptr<LeaseCore>>& taken,
                                                   bool& contended) {
  Outcome outcome = Outcome::kAcquired;
  while (outcome == Outcome::kAcquired && taken.size() < static_cast<std::size_t>(count)) {
    Round round;
    outcome = lease_phase(round, deadline, try_once, epoch);
    contended = contended || round.contended;
    if (outcome == Outcome::kAcquired) taken.push_back(std::move(round.lease));
  }
  return outcome;
}

std::vector<std::shared_ptr<LeaseCore>> SemaphoreCore::take_leases(
    std::optional<SteadyClock::time_point> deadline, bool try_once, bool throw_on_cancel, int count,
    bool& contended) {
  const std::string context = this->context() + "::acquire";
  std::uint64_t epoch = 0;
  {
    std::lock_guard lock(mutex_);
    if (session_->closed()) throw ClosedError(Errc::closed, context);
    if (shut_down_) throw CancelledError(context + ": the Semaphore was destroyed");
    ++callers_;
    epoch = cancel_epoch_;
  }
  struct Leave {
    SemaphoreCore* core;
    ~Leave() {
      std::lock_guard lock(core->mutex_);
      --core->callers_;
      core->cv_.notify_all();
    }
  } leave{this};
  const auto give_up = [&]() -> std::vector<std::shared_ptr<LeaseCore>> {
    std::lock_guard lock(mutex_);
    if (session_->closed()) throw ClosedError(Errc::closed, context);
    if (shut_down_) throw CancelledError(context + ": the Semaphore was destroyed while waiting");
    if (cancelled_since(epoch) && throw_on_cancel) throw CancelledError(context + ": cancelled");
    return {};
  };
  if (deadline && *deadline <= SteadyClock::now()) try_once = true;

  if (!check_count(try_once ? std::optional(SteadyClock::now() + session_->negotiated_timeout())
                            : deadline)) {
    return {};
  }
  const auto wait_each = session_->negotiated_timeout() / 3;
  while (true) {
    if (!take_internal_lock(deadline, try_once, epoch)) return give_up();
    // Every lease of this call is taken under one hold of the internal lock: no other zklock
    // contender takes a lease in between, so two calls that want more than half of N each
    // never hold part and wait for the rest of each other (Curator's acquire(qty) releases the
    // internal lock between its leases, and such calls wait on each other until they time out).
    std::vector<std::shared_ptr<LeaseCore>> taken;
    Outcome outcome = Outcome::kRequeue;
    try {
      outcome = lease_phases(count, deadline, try_once, epoch, taken, contended);
    } catch (...) {
      give_back(taken, wait_each);
      lock_->release();
      throw;
    }
    if (outcome != Outcome::kAcquired) give_back(taken, wait_each);  // all or none
    lock_->release();  // the next contender may take a lease now
    switch (outcome) {
      case Outcome::kAcquired:
        return taken;
      case Outcome::kNotAcquired:
      case Outcome::kTimedOut:
        return {};
      case Outcome::kCancelled:
        return give_up();
      case Outcome::kRequeue:
        if (session_->closed()) throw ClosedError(Errc::closed, context);
        if (try_once || (deadline && SteadyClock::now() >= *deadline)) return {};
        break;
    }
  }
}

std::vector<std::string> SemaphoreCore::leases() const {
  const std::string context = this->context() + "::leases";
  auto listing = session_->call(
      [&](ClientConnection& c, Completion done) { c.get_children(leases_path_, std::move(done)); },
      session_->negotiated_timeout());
  if (listing.rc == Errc::no_node) return {};
  if (listing.rc != Errc::ok) throw_error(listing.rc, context);
  return leases_in_order(std::move(listing.children));
}

OpResult SemaphoreCore::call(const std::shared_ptr<ClientConnection>& connection,
                             const std::function<void(ClientConnection&, Completion)>& op) const {
  return SessionCore::call_on(*connection, op, session_->negotiated_timeout());
}

std::shared_ptr<ClientConnection> SemaphoreCore::await_connection(
    std::optional<unsigned> generation, std::optional<SteadyClock::time_point> deadline,
    std::optional<std::uint64_t> epoch) const {
  while (true) {
    const std::uint64_t seen = session_->changes();
    if (session_->closed()) return nullptr;
    if (epoch) {
      std::lock_guard lock(mutex_);
      if (cancelled_since(*epoch)) return nullptr;
    }
    auto c = session_->connection();
    if (generation && session_->state_of(*generation) == SessionState::kLost) return nullptr;
    if (c && session_->connected() && (!generation || c->generation() == *generation)) return c;
    const auto now = SteadyClock::now();
    if (deadline && now >= *deadline) return nullptr;
    auto wake = now + std::chrono::milliseconds(100);
    if (deadline) wake = std::min(wake, *deadline);
    session_->wait_change(seen, wake);
  }
}

}  // namespace zklock::detail
