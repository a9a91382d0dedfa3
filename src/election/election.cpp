// Election (zklock/election.h): a Mutex whose holder leads, the leader's value in its node data,
// and the reads and watches that tell who leads.
#include "zklock/election.h"

#include <utility>

#include "election/leader_watch.h"
#include "lock/hold_access.h"
#include "lock/holder_identity.h"
#include "lock/mutex_core.h"
#include "session/session_core.h"

namespace zklock {

LeaderObservation& LeaderObservation::operator=(LeaderObservation&& other) noexcept {
  if (this != &other) {
    stop();
    watch_ = std::move(other.watch_);
  }
  return *this;
}

void LeaderObservation::stop() noexcept {
  if (watch_) watch_->stop();
  watch_.reset();
}

bool LeaderObservation::active() const noexcept { return watch_ && watch_->active(); }

MutexOptions Election::mutex_options(const ElectionOptions& options) {
  MutexOptions m;
  m.description = options.value;
  m.container_parents = options.container_parents;
  m.on_state_change = options.on_state_change;
  m.on_revocation_requested = options.on_revocation_requested;
  return m;
}

Election::Election(Session& session, std::string path, ElectionOptions options)
    : session_(session),
      options_(std::move(options)),
      mutex_(session, std::move(path), mutex_options(options_)) {
  if (options_.curator_latch_names) detail::MutexAccess::core(mutex_).use_latch_names();
}

Election::~Election() = default;

void Election::campaign() { mutex_.lock(); }

LockRequest Election::async_campaign(LockHandler handler, AsyncLockOptions options) {
  return mutex_.async_lock(std::move(handler), std::move(options));
}

std::future<Hold> Election::campaign_future(AsyncLockOptions options) {
  return mutex_.lock_future(std::move(options));
}

void Election::cancel() noexcept { mutex_.cancel(); }
void Election::resign() noexcept { mutex_.unlock(); }
LockState Election::state() const noexcept { return mutex_.state(); }
bool Election::is_leader() const noexcept { return mutex_.owns_lock(); }
std::optional<Acquisition> Election::leadership() const { return mutex_.acquisition(); }

FencingToken Election::term() const {
  const auto a = mutex_.acquisition();
  if (!a) throw Error(Errc::not_held, "zklock::Election(\"" + path() + "\")::term: not leading");
  return a->token();
}

bool Election::wait_lost_for(std::chrono::milliseconds timeout) const {
  return mutex_.wait_lost_for(timeout);
}

void Election::proclaim(const std::string& value) {
  const auto a = mutex_.acquisition();
  if (!a) throw LockLostError("zklock::Election(\"" + path() + "\")::proclaim: not leading");
  FencedWrite write;
  write.set(a->node_path,
            detail::holder_identity(value, static_cast<bool>(options_.on_revocation_requested)));
  mutex_.commit_fenced(write);
}

void Election::proclaim(const Hold& leadership, const std::string& value) const {
  if (!leadership.owns_lock()) {
    throw LockLostError("zklock::Election(\"" + path() + "\")::proclaim: not leading");
  }
  FencedWrite write;
  write.set(leadership.acquisition().node_path,
            detail::holder_identity(value, static_cast<bool>(options_.on_revocation_requested)));
  leadership.commit_fenced(write);
}

std::optional<Leader> Election::leader() const {
  return detail::read_leader(*detail::SessionAccess::core(session_), path(),
                             "zklock::Election(\"" + path() + "\")::leader");
}

LeaderObservation Election::observe(
    std::function<void(const LeaderChange& change)> on_change) const {
  if (!on_change) {
    throw InvalidArgumentError("zklock::Election(\"" + path() + "\")::observe: empty callback");
  }
  auto watch = std::make_shared<detail::LeaderWatch>(detail::SessionAccess::core(session_), path(),
                                                     std::move(on_change));
  watch->start();
  return LeaderObservation(std::move(watch));
}

}  // namespace zklock
