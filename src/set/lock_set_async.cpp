// LockSet's asynchronous form - a request per member, one after the other in canonical order - and
// HoldSet, what it hands over.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "set/lock_set_member.h"
#include "set/member_state.h"
#include "zklock/errors.h"
#include "zklock/lock_set.h"

namespace zklock {

// ---- HoldSet ---------------------------------------------------------------------------------

LockState HoldSet::state() const noexcept {
  if (holds_.empty() && leases_.empty()) return LockState::kNotHeld;
  LockState s = LockState::kHeld;
  for (const auto& h : holds_) s = detail::worst(s, h.state());
  for (const auto& l : leases_) s = detail::worst(s, l.state());
  return s;
}

std::vector<Acquisition> HoldSet::acquisitions() const {
  std::vector<Acquisition> out;
  for (const auto& h : holds_) {
    if (h.state() != LockState::kNotHeld) out.push_back(h.acquisition());
  }
  for (const auto& l : leases_) {
    if (l) out.push_back(l.acquisition());
  }
  // Canonical order; a semaphore's leases keep the order they were taken in.
  std::stable_sort(out.begin(), out.end(), [](const Acquisition& a, const Acquisition& b) {
    return a.lock_path < b.lock_path;
  });
  return out;
}

void HoldSet::unlock() noexcept {
  // The last taken first: by lock path, descending (a semaphore's leases, the last first).
  struct Release {
    std::string path;
    Hold* hold;
    Lease* lease;
  };
  std::vector<Release> order;
  try {
    for (auto& h : holds_) {
      if (h.state() != LockState::kNotHeld)
        order.push_back({h.acquisition().lock_path, &h, nullptr});
    }
    for (auto& l : leases_) {
      if (l) order.push_back({l.acquisition().lock_path, nullptr, &l});
    }
    std::stable_sort(order.begin(), order.end(),
                     [](const Release& a, const Release& b) { return a.path < b.path; });
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (it->hold) it->hold->unlock();
      if (it->lease) it->lease->release();
    }
  } catch (...) {  // out of memory: released in any order
  }
  holds_.clear();  // releases what is left
  leases_.clear();
}

// ---- LockSet::async_lock ---------------------------------------------------------------------

// One asynchronous run over the members: a request per member, one after the other in canonical
// order; what was taken so far is released on any failure.
struct LockSet::AsyncRun final : detail::PendingRequest, std::enable_shared_from_this<AsyncRun> {
  std::vector<std::shared_ptr<Member>> members;
  AsyncLockOptions options;
  LockSetHandler handler;

  mutable std::mutex mutex;
  std::vector<MemberTaken> taken;
  LockRequest current;    // the member request in flight (to cancel)
  unsigned started = 0;   // member requests started so far
  unsigned answered = 0;  // the last of them that has answered
  bool cancelled = false;
  bool settled = false;

  void cancel() noexcept override {
    LockRequest to_cancel;
    {
      const std::lock_guard lock(mutex);
      if (settled) return;
      cancelled = true;
      to_cancel = current;
    }
    to_cancel.cancel();
  }
  bool pending() const noexcept override {
    const std::lock_guard lock(mutex);
    return !settled;
  }

  void start_next(std::size_t index) {
    AsyncLockOptions member_options;
    member_options.deadline = options.deadline;  // one deadline for the whole set
    unsigned step = 0;
    {
      const std::lock_guard lock(mutex);
      step = ++started;
    }
    auto self = shared_from_this();
    LockRequest request = members[index]->async_take(
        [self, step](std::error_code error, MemberTaken got) {
          self->on_member(step, error, std::move(got));
        },
        member_options);
    bool cancel_now = false;
    {
      const std::lock_guard lock(mutex);
      // Its handler may have run already (and started the next member): keep only a request
      // that is still in flight.
      if (answered != step) current = request;
      cancel_now = cancelled && answered != step;
    }
    if (cancel_now) request.cancel();
  }

  void on_member(unsigned step, std::error_code error, MemberTaken got) {
    std::unique_lock lock(mutex);
    answered = step;
    current = LockRequest();
    if (!error && cancelled) error = make_error_code(Errc::cancelled);
    if (error) {
      std::vector<MemberTaken> all = std::move(taken);
      all.push_back(std::move(got));
      lock.unlock();
      give_back_then_finish(std::move(all), error);
      return;
    }
    taken.push_back(std::move(got));
    if (taken.size() < members.size()) {
      const std::size_t next = taken.size();
      lock.unlock();
      start_next(next);
      return;
    }
    HoldSet all = gathered();
    lock.unlock();
    if (all.state() == LockState::kLost) {
      // A member was lost while the later ones were taken: release and take them again.
      all.unlock();
      start_next(0);
      return;
    }
    finish({}, std::move(all));
  }

  // With mutex held: what was taken, as a HoldSet.
  HoldSet gathered() {
    std::vector<Hold> holds;
    std::vector<Lease> leases;
    for (auto& t : taken) {
      if (t.leases.empty()) holds.push_back(std::move(t.hold));
      for (auto& l : t.leases) leases.push_back(std::move(l));
    }
    taken.clear();
    return HoldSet(std::move(holds), std::move(leases));
  }

  // Releases everything taken, then reports: the handler runs once every member's node is gone
  // (or the connection is down), the last taken released first.
  void give_back_then_finish(std::vector<MemberTaken> all, std::error_code error) {
    std::size_t count = 0;
    for (const auto& t : all) count += 1 + t.leases.size();
    auto remaining = std::make_shared<std::atomic<std::size_t>>(count);
    auto self = shared_from_this();
    const auto one_released = [self, remaining, error] {
      if (--*remaining == 0) self->finish(error, HoldSet());
    };
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      for (auto lease = it->leases.rbegin(); lease != it->leases.rend(); ++lease) {
        detail::SemaphoreAccess::release_then(*lease, one_released);
      }
      detail::HoldAccess::release_then(it->hold, one_released);
    }
  }

  void finish(std::error_code error, HoldSet result) {
    {
      const std::lock_guard lock(mutex);
      settled = true;
      current = LockRequest();
    }
    auto shared_result = std::make_shared<HoldSet>(std::move(result));
    std::function<void()> deliver = [handler = std::move(handler), error, shared_result] {
      handler(error, std::move(*shared_result));
    };
    if (options.executor) {
      options.executor(std::move(deliver));
    } else {
      deliver();  // on the event thread of the session that answered last
    }
  }
};

LockRequest LockSet::async_lock(LockSetHandler handler, AsyncLockOptions options) {
  if (!handler) throw InvalidArgumentError("zklock::LockSet::async_lock: empty handler");
  if (members_.empty()) throw InvalidArgumentError("zklock::LockSet::async_lock: no member");
  auto run = std::make_shared<AsyncRun>();
  run->members = members_;
  run->options = std::move(options);
  run->handler = std::move(handler);
  run->start_next(0);
  return LockRequest(run);
}

}  // namespace zklock
