#include "zklock/semaphore.h"

#include <future>

#include "base/paths.h"
#include "base/promise_outcome.h"
#include "semaphore/semaphore_access.h"
#include "semaphore/semaphore_core.h"
#include "zklock/errors.h"

namespace zklock {

// As in Mutex: every member works on a copy of core_ taken on entry, so a thread still inside an
// acquire call when another destroys the Semaphore touches nothing of it on the way out.

Semaphore::Semaphore(Session& session, std::string path, int max_leases, SemaphoreOptions options) {
  detail::validate_lock_path(path);
  if (max_leases < 1) {
    throw InvalidArgumentError("zklock::Semaphore(\"" + path +
                               "\"): max_leases must be at least 1, not " +
                               std::to_string(max_leases));
  }
  core_ = std::make_shared<detail::SemaphoreCore>(detail::SessionAccess::core(session),
                                                  std::move(path), max_leases, std::move(options));
  core_->attach();
}

Semaphore::~Semaphore() { core_->shutdown(); }

std::vector<Lease> Semaphore::wrapped(std::vector<std::shared_ptr<detail::LeaseCore>> cores) {
  std::vector<Lease> leases;
  leases.reserve(cores.size());
  for (auto& core : cores) leases.push_back(Lease(std::move(core)));
  return leases;
}

void Semaphore::check_lease_count(int count, const char* call) const {
  if (count < 1 || count > core_->max_leases()) {
    throw InvalidArgumentError(core_->context() + "::" + call + ": count must be 1 to " +
                               std::to_string(core_->max_leases()) + ", not " +
                               std::to_string(count));
  }
}

Lease Semaphore::acquire() { return std::move(acquire(1).front()); }

std::vector<Lease> Semaphore::acquire(int count) {
  check_lease_count(count, "acquire");
  const std::shared_ptr<detail::SemaphoreCore> core = core_;
  auto leases = core->acquire(std::nullopt, false, true, count);
  if (leases.empty()) {
    throw Error(Errc::operation_timeout, core->context() + "::acquire: not acquired");
  }
  return wrapped(std::move(leases));
}

std::optional<Lease> Semaphore::try_acquire() {
  const std::shared_ptr<detail::SemaphoreCore> core = core_;
  auto leases = core->acquire(std::chrono::steady_clock::now(), true, false);
  if (leases.empty()) return std::nullopt;
  return Lease(std::move(leases.front()));
}

std::optional<Lease> Semaphore::try_acquire_until_steady(
    std::optional<std::chrono::steady_clock::time_point> deadline) {
  auto leases = try_acquire_until_steady(1, deadline);
  if (!leases) return std::nullopt;
  return std::move(leases->front());
}

std::optional<std::vector<Lease>> Semaphore::try_acquire_until_steady(
    int count, std::optional<std::chrono::steady_clock::time_point> deadline) {
  check_lease_count(count, "try_acquire_for");
  const std::shared_ptr<detail::SemaphoreCore> core = core_;
  auto leases = core->acquire(deadline, false, false, count);
  if (leases.empty()) return std::nullopt;
  return wrapped(std::move(leases));
}

LockRequest Semaphore::async_acquire(LeaseHandler handler, AsyncLockOptions options) {
  if (!handler) throw InvalidArgumentError(core_->context() + "::async_acquire: empty handler");
  return async_acquire(
      1,
      [handler = std::move(handler)](std::error_code error, std::vector<Lease> leases) {
        handler(error, leases.empty() ? Lease() : std::move(leases.front()));
      },
      std::move(options));
}

LockRequest Semaphore::async_acquire(int count, LeasesHandler handler, AsyncLockOptions options) {
  if (!handler) throw InvalidArgumentError(core_->context() + "::async_acquire: empty handler");
  check_lease_count(count, "async_acquire");
  return core_->async_acquire(
      count, std::move(options),
      [handler = std::move(handler)](std::error_code error,
                                     std::vector<std::shared_ptr<detail::LeaseCore>> cores) {
        handler(error, wrapped(std::move(cores)));
      });
}

std::future<Lease> Semaphore::acquire_future(AsyncLockOptions options) {
  auto promise = std::make_shared<std::promise<Lease>>();
  auto future = promise->get_future();
  async_acquire(
      [promise, context = core_->context() + "::acquire_future"](std::error_code error,
                                                                 Lease lease) mutable {
        detail::fulfil(promise, context, error, std::move(lease));
      },
      std::move(options));
  return future;
}

std::future<std::vector<Lease>> Semaphore::acquire_future(int count, AsyncLockOptions options) {
  auto promise = std::make_shared<std::promise<std::vector<Lease>>>();
  auto future = promise->get_future();
  async_acquire(
      count,
      [promise, context = core_->context() + "::acquire_future"](
          std::error_code error, std::vector<Lease> leases) mutable {
        detail::fulfil(promise, context, error, std::move(leases));
      },
      std::move(options));
  return future;
}

void Semaphore::cancel() noexcept { core_->cancel(); }
std::vector<std::string> Semaphore::leases() const { return core_->leases(); }
int Semaphore::max_leases() const noexcept { return core_->max_leases(); }
const std::string& Semaphore::path() const noexcept { return core_->path(); }

// ---------------------------------------------------------------------------------------------
// Lease

Lease::~Lease() { release(); }

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    core_ = std::move(other.core_);
  }
  return *this;
}

void Lease::release() noexcept {
  if (!core_) return;
  core_->release();
  core_.reset();
}

LockState Lease::state() const noexcept { return core_ ? core_->state() : LockState::kNotHeld; }

bool Lease::owns_lease() const noexcept {
  const LockState s = state();
  return s == LockState::kHeld || s == LockState::kSuspended;
}

Acquisition Lease::acquisition() const {
  if (!core_) throw Error(Errc::not_held, "zklock::Lease::acquisition: no lease held");
  return core_->acquisition();
}

bool Lease::wait_lost_for(std::chrono::milliseconds timeout) const {
  if (!core_) return true;
  const std::shared_ptr<detail::LeaseCore> core = core_;
  return core->wait_lost_until(detail::deadline_after(timeout));
}

}  // namespace zklock

namespace zklock::detail {

void SemaphoreAccess::release_then(Lease& lease, std::function<void()> released) noexcept {
  const std::shared_ptr<LeaseCore> core = std::move(lease.core_);
  if (!core) {
    released();
    return;
  }
  core->release_then([session = core->session(), released]() mutable {
    session->post_event_or_detach(std::move(released));
  });
}

void SemaphoreAccess::release_and_wait(Lease& lease) noexcept {
  const std::shared_ptr<LeaseCore> core = lease.core_;
  if (!core) return;
  try {
    auto done = std::make_shared<std::promise<void>>();
    auto released = done->get_future();
    release_then(lease, [done] { done->set_value(); });
    released.wait_for(core->session()->negotiated_timeout() / 3);
  } catch (...) {  // out of memory: released without waiting
    lease.release();
  }
}

}  // namespace zklock::detail
