// Election (zklock/election.h): a Mutex whose holder leads, the leader's value in its node data,
// and the reads and watches that tell who leads.
#include "zklock/election.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <utility>

#include "election/leader_watch.h"
#include "lock/hold_access.h"
#include "lock/mutex_core.h"
#include "session/session_core.h"
#include "zklock/errors.h"

namespace zklock {

namespace detail {

// The changes of an observe() without a callback, waiting to be taken by next_for().
struct LeaderChangeQueue {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<LeaderChange> changes;
  bool stopped = false;
};

}  // namespace detail

LeaderObservation::LeaderObservation(std::shared_ptr<detail::LeaderWatch> watch,
                                     std::shared_ptr<detail::LeaderChangeQueue> queue) noexcept
    : watch_(std::move(watch)), queue_(std::move(queue)) {}

LeaderObservation& LeaderObservation::operator=(LeaderObservation&& other) noexcept {
  if (this != &other) {
    stop();
    watch_ = std::move(other.watch_);
    queue_ = std::move(other.queue_);
  }
  return *this;
}

void LeaderObservation::stop() noexcept {
  if (watch_) watch_->stop();
  watch_.reset();
  if (queue_) {
    {
      std::lock_guard lock(queue_->mutex);
      queue_->stopped = true;
    }
    queue_->changed.notify_all();
  }
}

bool LeaderObservation::active() const noexcept { return watch_ && watch_->active(); }

std::optional<LeaderChange> LeaderObservation::next_for(std::chrono::milliseconds timeout) {
  if (!queue_) {
    throw InvalidArgumentError(
        "zklock::LeaderObservation::next_for: this observation delivers to a callback");
  }
  std::unique_lock lock(queue_->mutex);
  queue_->changed.wait_for(lock, timeout,
                           [&] { return !queue_->changes.empty() || queue_->stopped; });
  if (queue_->changes.empty()) return std::nullopt;
  LeaderChange next = std::move(queue_->changes.front());
  queue_->changes.pop_front();
  return next;
}

MutexOptions Election::mutex_options(const ElectionOptions& options) {
  MutexOptions m;
  m.description = options.value;
  m.container_parents = options.container_parents;
  m.on_state_change = options.on_state_change;
  m.on_revocation_requested = options.on_revocation_requested;
  // Leader::since - but not beside Curator's LeaderLatch: it watches its predecessor for a
  // deletion only, and a write to our node would use up its watch (it would wait for ever).
  m.stamp_held_since = !options.curator_latch_names;
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

void Election::refuse_proclaim_beside_leader_latch() const {
  if (options_.curator_latch_names) {
    throw InvalidArgumentError("zklock::Election(\"" + path() +
                               "\")::proclaim: not with curator_latch_names - Curator's "
                               "LeaderLatch waits only for its predecessor's deletion, and a "
                               "write to our node would use up its watch");
  }
}

void Election::proclaim(const std::string& value) {
  refuse_proclaim_beside_leader_latch();
  const auto a = mutex_.acquisition();
  if (!a) throw LockLostError("zklock::Election(\"" + path() + "\")::proclaim: not leading");
  FencedWrite write;
  write.set(a->node_path, detail::MutexAccess::core(mutex_).proclaimed_data(a->node_path, value));
  mutex_.commit_fenced(write);
}

void Election::proclaim(const Hold& leadership, const std::string& value) const {
  refuse_proclaim_beside_leader_latch();
  if (!leadership.owns_lock()) {
    throw LockLostError("zklock::Election(\"" + path() + "\")::proclaim: not leading");
  }
  const std::string& node_path = leadership.acquisition().node_path;
  FencedWrite write;
  write.set(node_path, detail::MutexAccess::core(mutex_).proclaimed_data(node_path, value));
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
  return {std::move(watch), nullptr};
}

LeaderObservation Election::observe() const {
  auto queue = std::make_shared<detail::LeaderChangeQueue>();
  auto watch = std::make_shared<detail::LeaderWatch>(detail::SessionAccess::core(session_), path(),
                                                     [queue](const LeaderChange& change) {
                                                       {
                                                         std::lock_guard lock(queue->mutex);
                                                         queue->changes.push_back(change);
                                                       }
                                                       queue->changed.notify_all();
                                                     });
  watch->start();
  return {std::move(watch), std::move(queue)};
}

}  // namespace zklock
