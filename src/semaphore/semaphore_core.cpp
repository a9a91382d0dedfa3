// SemaphoreCore: the acquisitions in flight - started, waited for (acquire), handed over
// (async_acquire), cancelled, ended by ~Semaphore - and listing the leases. What one acquisition
// does on the server is LeaseRequest's (lease_request.cpp, lease_request_steps.cpp).
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

// A request that asked for one attempt (a deadline already past, try_acquire) still gets its
// round trips: up to the session timeout.
LeaseRequest::Params params_for(const SessionCore& session, int count,
                                std::optional<std::chrono::steady_clock::time_point> deadline,
                                bool try_once, bool requeue_after_loss) {
  LeaseRequest::Params p;
  p.count = count;
  const auto now = std::chrono::steady_clock::now();
  p.try_once = try_once || (deadline && *deadline <= now);
  p.deadline = p.try_once ? std::optional(now + session.negotiated_timeout()) : deadline;
  p.requeue_after_loss = requeue_after_loss;
  return p;
}

// A LockRequest's view of an asynchronous acquisition: it does not keep the request alive.
class RequestHandle final : public PendingRequest {
 public:
  explicit RequestHandle(const std::shared_ptr<LeaseRequest>& request) : request_(request) {}
  void cancel() noexcept override {
    if (auto request = request_.lock()) request->end(Errc::cancelled, {});
  }
  bool pending() const noexcept override {
    auto request = request_.lock();
    return request && request->pending();
  }

 private:
  std::weak_ptr<LeaseRequest> request_;
};

// Leases on their way to a handler: released if the handler never gets them (an executor that
// drops its work) - nothing is left held by nobody.
struct LeasesInTransit {
  LeaseRequest::Leases leases;
  ~LeasesInTransit() {
    for (const auto& lease : leases) lease->release();
  }
};

}  // namespace

SemaphoreCore::SemaphoreCore(std::shared_ptr<SessionCore> session, std::string path, int max_leases,
                             SemaphoreOptions options)
    : session_(std::move(session)),
      path_(std::move(path)),
      leases_path_(path_ + "/leases"),
      max_leases_(max_leases),
      options_(std::move(options)),
      node_data_(holder_identity(options_.description,
                                 static_cast<bool>(options_.on_revocation_requested))),
      lock_(std::make_shared<MutexCore>(session_, path_ + "/locks", internal_lock_options(options_),
                                        /*read_write=*/false, /*recorded=*/false)),
      meter_(session_->lock_meter(Recipe::kSemaphore, path_)),
      revocation_{options_.on_revocation_requested, std::make_shared<CallbackGate>(),
                  std::make_shared<const std::string>(node_data_)} {}

SemaphoreCore::~SemaphoreCore() = default;

std::string SemaphoreCore::context() const { return "zklock::Semaphore(\"" + path_ + "\")"; }

void SemaphoreCore::attach() {
  lock_->attach();
  session_->add_observer(shared_from_this());
}

std::vector<std::shared_ptr<LeaseRequest>> SemaphoreCore::in_flight(bool blocking_only) const {
  std::vector<std::shared_ptr<LeaseRequest>> alive;
  std::lock_guard lock(mutex_);
  for (const auto& r : requests_) {
    if (blocking_only && !r.blocking) continue;
    alive.push_back(r.request);
  }
  return alive;
}

void SemaphoreCore::on_session_change() {
  for (const auto& request : in_flight(false)) request->on_session_change();
}

void SemaphoreCore::finished(const LeaseRequest& request, Errc code, bool contended,
                             SteadyClock::time_point started, const Leases& leases) {
  if (meter_) {
    // One acquisition in the figures per call, however many leases it takes.
    meter_->acquire_ended(path_, MutexCore::outcome_of(code), SteadyClock::now() - started,
                          contended, leases.empty() ? 0 : leases.front()->acquisition().sequence);
  }
  std::shared_ptr<LeaseRequest> ended;  // let go of after mutex_: it may be the last reference
  std::lock_guard lock(mutex_);
  const auto it = std::find_if(requests_.begin(), requests_.end(),
                               [&](const InFlight& r) { return r.request.get() == &request; });
  if (it != requests_.end()) {
    ended = std::move(it->request);
    requests_.erase(it);
  }
  cv_.notify_all();
}

void SemaphoreCore::shutdown() noexcept {
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
  }
  // Every request ends: those waiting for the internal lock leave it, those in the lease phase
  // remove their nodes and watches.
  for (const auto& request : in_flight(false)) request->end(Errc::cancelled, {});
  {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return callers_ == 0; });
  }
  lock_->shutdown();
  revocation_.gate->close();
  session_->remove_observer(this);
}

void SemaphoreCore::cancel() noexcept {
  // The blocking calls inside now; later ones are not affected.
  for (const auto& request : in_flight(true)) request->end(Errc::cancelled, {});
}

SemaphoreCore::Leases SemaphoreCore::acquire(std::optional<SteadyClock::time_point> deadline,
                                             bool try_once, bool throw_on_cancel, int count) {
  const std::string context = this->context() + "::acquire";
  struct Outcome {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
    Errc code = Errc::ok;
    std::string detail;
    Leases leases;
  };
  auto outcome = std::make_shared<Outcome>();
  auto request = std::make_shared<LeaseRequest>(
      shared_from_this(), params_for(*session_, count, deadline, try_once, true),
      [outcome](Errc code, const std::string& detail, Leases leases) {
        std::lock_guard lock(outcome->mutex);
        outcome->code = code;
        outcome->detail = detail;
        outcome->leases = std::move(leases);
        outcome->done = true;
        outcome->cv.notify_all();
      });
  {
    std::lock_guard lock(mutex_);
    if (session_->closed()) throw ClosedError(Errc::closed, context);
    if (shut_down_) throw CancelledError(context + ": the Semaphore was destroyed");
    ++callers_;
    requests_.push_back({request, true});
  }
  struct Leave {
    SemaphoreCore* core;
    ~Leave() {
      std::lock_guard lock(core->mutex_);
      --core->callers_;
      core->cv_.notify_all();
    }
  } leave{this};
  request->start();
  std::unique_lock wait(outcome->mutex);
  outcome->cv.wait(wait, [&] { return outcome->done; });
  switch (outcome->code) {
    case Errc::ok:
      return std::move(outcome->leases);
    case Errc::timed_out:
      return {};
    case Errc::cancelled: {
      std::lock_guard lock(mutex_);
      if (shut_down_) throw CancelledError(context + ": the Semaphore was destroyed while waiting");
      if (throw_on_cancel) throw CancelledError(context + ": cancelled");
      return {};
    }
    default:
      throw_error(outcome->code,
                  outcome->detail.empty() ? context : context + ": " + outcome->detail);
  }
}

LockRequest SemaphoreCore::async_acquire(int count, AsyncLockOptions options,
                                         LeasesHandler handler) {
  const auto session = session_;
  auto request = std::make_shared<LeaseRequest>(
      shared_from_this(), params_for(*session_, count, options.deadline, false, false),
      [session, handler = std::move(handler), executor = std::move(options.executor)](
          Errc code, const std::string&, Leases leases) {
        auto transit = std::make_shared<LeasesInTransit>();
        transit->leases = std::move(leases);
        std::function<void()> deliver = [handler, code, transit] {
          handler(make_error_code(code), std::exchange(transit->leases, {}));
        };
        session->post_event_or_detach([executor, deliver = std::move(deliver)]() mutable {
          if (executor) {
            executor(std::move(deliver));
          } else {
            deliver();
          }
        });
      });
  LockRequest handle(std::make_shared<RequestHandle>(request));
  bool refused = false;
  {
    std::lock_guard lock(mutex_);
    refused = shut_down_;
    if (!refused) requests_.push_back({request, false});
  }
  if (refused) {
    request->end(Errc::cancelled, {});  // the Semaphore is being destroyed
  } else {
    request->start();  // a closed session ends it at once (Errc::closed)
  }
  return handle;
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

}  // namespace zklock::detail
